"""What the grading builds an agent from, however the agent was given: a spec string, one of
the project's agents, an object with ``select_move``, or a function.

The grading pipeline (:mod:`ttt_solve.agents.grading`), a single game and the ladder all take a
*maker*: an object whose ``build(book)`` makes the agent. A spec string's maker
(:class:`~ttt_solve.agents.parallel.AgentMaker`) may build it again in another process; an
agent made in this process (a notebook's function, adapted to the board it reads) is handed
over as it is (:class:`InstanceMaker`): a function of a notebook cannot be sent to another
process.
"""

from __future__ import annotations

import random
from typing import Any

from ttt_solve.agents.adapters import Adapter, CallableAgent, describe
from ttt_solve.agents.base import Agent
from ttt_solve.agents.isolation import DEFAULT_MEMORY_MIB
from ttt_solve.agents.parallel import AgentMaker


class InstanceMaker:
    """An agent made in this process, handed to the grading as a maker: it builds that agent
    each time, in this process."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.spec = agent.spec

    def build(self, _book: Any = None) -> Agent:
        return self.agent


def agent_maker(
    agent: Any,
    *,
    db: str | None,
    board: str | None = None,
    symbols: Any = None,
    side: str | None = None,
    timeout: float | None = None,
    memory: float | None = DEFAULT_MEMORY_MIB,
    name: str | None = None,
) -> AgentMaker | InstanceMaker:
    """The maker of ``agent``: a spec string's :class:`AgentMaker` (which may run in other
    processes), or one of ours, an object with ``select_move`` or a function, adapted to the
    board it reads (:class:`~ttt_solve.agents.adapters.Adapter`: ``board``, ``symbols``,
    ``side``) and run with ``timeout`` seconds a move in a child process of its own where one
    is given, that process growing by at most ``memory`` MiB. A function given no ``board`` is
    handed the project's ``Position``; if it reads it as another board, that is an error
    naming ``board=``, not a failed move."""
    adapted = board is not None or symbols is not None or side is not None
    if isinstance(agent, str):
        if adapted or timeout is not None:
            raise ValueError(
                "board=, symbols=, side= and timeout= are for agents written in Python; "
                "a spec string says them itself (py:module:function,board=flat,timeout=2)"
            )
        return AgentMaker(agent, db)
    if isinstance(agent, Agent) and not adapted and timeout is None:
        return InstanceMaker(agent)
    move = getattr(agent, "select_move", agent)
    if not callable(move):
        raise TypeError(
            f"{type(agent).__name__} is no agent: give a spec string, an object with "
            f"select_move, or a function"
        )
    label = name or (describe(move) if move is agent else type(agent).__name__)
    return InstanceMaker(
        CallableAgent(
            random.Random(0),
            move,
            Adapter.make(board, symbols, side),
            spec=label,
            timeout=timeout,
            memory=memory,
            board_named=board is not None,
        )
    )
