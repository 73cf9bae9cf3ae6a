"""Agents that play (R, C, k) games, and the audit that grades them against the book.

Every agent answers ``select_move(position) -> cell`` and draws its randomness only from the
``random.Random`` it was built with. Agents are named by spec strings such as
``mcts:iterations=1000,c=1.4``; :func:`ttt_solve.agents.spec.make_agent` builds one.
"""

from ttt_solve.agents.base import Agent

__all__ = ["Agent"]
