"""``perfect``: the book's best move (fastest win, slowest loss), ties broken at random.

It needs a book that holds the game; a position the book does not hold (past an opening
book's depth) is an error, not a guess.
"""

from __future__ import annotations

import random

from ttt_solve.agents.base import Agent
from ttt_solve.book.errors import PositionNotFoundError
from ttt_solve.solver.position import Position


class PerfectAgent(Agent):
    name = "perfect"

    def __init__(self, rng: random.Random, **kwargs) -> None:
        super().__init__(rng, **kwargs)
        if self.book is None:
            raise ValueError("the perfect agent plays from the book: give it one (--db)")

    def search(self, position: Position) -> int:
        assert self.book is not None  # checked when the agent was made
        self.book.game(position.rules)  # a missing game says how to build it
        raise PositionNotFoundError(
            f"perfect: position {position} is not in {self.book.describe()} "
            f"({position.rules.name}); it plays only from the book"
        )
