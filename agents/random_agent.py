"""``random``: a uniformly random legal move."""

from __future__ import annotations

from agents.base import Agent, choose
from solver.position import Position


class RandomAgent(Agent):
    """Plays any empty cell with equal probability."""

    name = "random"

    def search(self, position: Position) -> int:
        return choose(self.rng, position.legal_moves())
