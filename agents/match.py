"""Playing games between agents; the move list is returned so the audit can grade it."""

from __future__ import annotations

import hashlib
import operator
from typing import NamedTuple

from ttt_solve.agents.base import Agent
from ttt_solve.agents.engine import EngineFailure, FailureKind
from ttt_solve.solver.errors import IllegalMoveError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.vocabulary import Side


class GameRecord(NamedTuple):
    """A finished game: the moves (cells) in order and the result.

    ``failure`` is set when an agent failed a request and the game stopped there (see
    :func:`play_game`): the side that failed forfeited it, and ``winner`` is the other side.
    """

    rules: Rules
    moves: tuple[int, ...]
    winner: Side | None  # None: a draw
    failure: EngineFailure | None = None
    start: Position | None = None  # where the game started (None: the empty board)

    def _repr_svg_(self) -> str:
        """The last position, the last move shaded, as SVG (for notebooks)."""
        from ttt_solve.presentation import picture, svg

        last = self.moves[-1] if self.moves else None
        return svg.board(picture.board(self.positions()[-1], lastmove=last))

    def positions(self) -> list[Position]:
        """The position before each move, then the final one."""
        position = self.start if self.start is not None else Position.start(self.rules)
        out = [position]
        for cell in self.moves:
            position = position.play(cell)
            out.append(position)
        return out


def play_game(
    x_agent: Agent,
    o_agent: Agent,
    rules: Rules,
    start: Position | None = None,
    *,
    stop_on_failure: bool = False,
) -> GameRecord:
    """Let two agents play to the end from ``start`` (default: the empty board).

    An agent that answers an illegal cell raises :class:`IllegalMoveError` naming it, and one
    that fails a request raises :class:`EngineFailure`; with ``stop_on_failure``, either ends
    the game there instead: the record holds the moves so far and the failure (an ``illegal``
    one for an illegal cell), and the side that failed has forfeited the game.
    """
    position = start if start is not None else Position.start(rules)
    moves: list[int] = []
    while not position.is_terminal:
        agent = x_agent if position.x_to_move else o_agent
        try:
            cell = checked_move(agent.spec, position, agent.select_move(position))
        except EngineFailure as failure:
            if not stop_on_failure:
                raise
            return forfeited(rules, moves, failure, start)
        except IllegalMoveError as error:
            if not stop_on_failure:
                raise
            return forfeited(rules, moves, illegal(agent.spec, position, error), start)
        moves.append(cell)
        position = position.play(cell)
    return GameRecord(rules, tuple(moves), position.winner, None, start)


def illegal(spec: str, position: Position, error: IllegalMoveError) -> EngineFailure:
    """An in-process agent's illegal answer, as the ``illegal`` failure an engine's would be."""
    return EngineFailure(
        FailureKind.ILLEGAL, position.rules, position.x, position.o, str(error), spec
    )


def forfeited(
    rules: Rules, moves: list[int], failure: EngineFailure, start: Position | None
) -> GameRecord:
    """A game the side to move forfeited by failing ``failure``: the other side wins."""
    winner = failure.position.to_move.other
    return GameRecord(rules, tuple(moves), winner, failure, start)


def checked_move(spec: str, position: Position, cell: object) -> int:
    """``cell`` if it is a legal move in ``position``; otherwise :class:`IllegalMoveError`
    naming the agent ``spec`` (an answer of ``None``, a cell name or an occupied cell is an
    illegal move, never a missing one)."""
    try:
        index = operator.index(cell)  # type: ignore[arg-type]
    except TypeError:
        index = -1
    if (
        isinstance(cell, bool)
        or not 0 <= index < position.rules.cells
        or (position.occupied >> index) & 1
    ):
        raise IllegalMoveError(
            f"{spec} played {cell!r}, which is not a legal move in {position} "
            f"(select_move must return the index of an empty cell)"
        )
    return index


def derive_seed(seed: int, part: object, *parts: object) -> int:
    """A seed for one sub-task (a position, a game), the same in every process and run.

    Python's ``hash`` of strings changes per process, so this hashes the text with BLAKE2.
    """
    *shared, last = (part, *parts)
    return SeedDeriver(seed, *shared)(last)


class SeedDeriver:
    """``derive_seed(seed, *parts, last)`` as a function of ``last``, for many sub-tasks: the
    text they share is hashed once (a copy of the hash state goes on with each ``last``). It
    pickles as its seed and parts, for a worker process to derive the same seeds."""

    __slots__ = ("_given", "_shared")

    def __init__(self, seed: int, *parts: object) -> None:
        self._given = (seed, *parts)
        text = ":".join(str(p) for p in (*self._given, ""))
        self._shared = hashlib.blake2b(text.encode(), digest_size=8)

    def __call__(self, last: object) -> int:
        state = self._shared.copy()
        state.update(str(last).encode())
        return int.from_bytes(state.digest(), "big")

    def __reduce__(self) -> tuple[type[SeedDeriver], tuple[object, ...]]:
        return (SeedDeriver, self._given)
