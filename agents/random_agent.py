"""``random``: a uniformly random legal move."""

from __future__ import annotations

from ttt_solve.agents.base import Agent, choose
from ttt_solve.solver.position import Position


class RandomAgent(Agent):
    """Plays any empty cell with equal probability."""

    name = "random"

    def search(self, position: Position) -> int:
        return choose(self.rng, position.legal_moves())
