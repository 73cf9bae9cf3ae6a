"""Helpers the test modules share."""

from __future__ import annotations

import random

from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules


def random_walk(rules: Rules, rng: random.Random, plies: int) -> Position:
    """The position after ``plies`` uniformly random moves from the empty board, or the end of
    the game if that comes first."""
    position = Position.start(rules)
    for _ in range(plies):
        if position.is_terminal:
            break
        position = position.play(rng.choice(position.legal_moves()))
    return position
