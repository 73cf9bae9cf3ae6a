"""``montecarlo``: pure Monte Carlo, ``playouts`` random games after each legal move.

A move that wins at once scores 1 without playouts; any other scores the mean result of its
playouts for the mover (+1 win, 0 draw, -1 loss). The best mean wins, ties broken at random.
"""

from __future__ import annotations

from ttt_solve.agents.base import Agent, choose
from ttt_solve.agents.rollout import random_playout
from ttt_solve.agents.tables import split, tables
from ttt_solve.solver.position import Position


class MonteCarloAgent(Agent):
    name = "montecarlo"

    def __init__(self, rng, *, playouts: int = 100, **kwargs) -> None:  # noqa: ANN001
        super().__init__(rng, **kwargs)
        if playouts < 1:
            raise ValueError(f"montecarlo playouts must be at least 1, got {playouts}")
        self.playouts = playouts

    def search(self, position: Position) -> int:
        t = tables(position.rules)
        me, opp = split(position)
        empty = [b for b in t.bits if not (me | opp) & b]
        random = self.rng.random
        means: dict[int, float] = {}
        for bit in empty:
            mine = me | bit
            if t.wins_with(mine, bit):
                means[bit] = 1.0
                continue
            rest = [b for b in empty if b != bit]
            if not rest:
                means[bit] = 0.0
                continue
            total = 0
            for _ in range(self.playouts):
                total -= random_playout(t, opp, mine, rest[:], len(rest), random)
            means[bit] = total / self.playouts
        top = max(means.values())
        return choose(self.rng, [b.bit_length() - 1 for b, m in means.items() if m == top])
