"""A finished game reviewed against the book: one player's moves graded, each with the best
moves of its position, numbered as that player counts them (their first move is 1).

The web explorer's play page grades the visitor's game with it; the audit pages count each
game's blunders of the agent with :func:`~ttt_solve.agents.audit.grade_game`, the same grading.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ttt_solve.agents.audit import Graded, Summary, Truth, grade_game, summarize
from ttt_solve.solver.rules import Rules


class ReviewedMove(NamedTuple):
    """One of the player's moves: its number for that player, its grade, the best moves."""

    number: int  # 1 for the player's first move, 2 for their second, ...
    graded: Graded
    best: tuple[int, ...]  # the best moves of the position it was played in


class Review(NamedTuple):
    """A player's moves in one game, graded, and their figures."""

    side: str  # "x" or "o"
    moves: tuple[ReviewedMove, ...]
    summary: Summary
    ungraded: int  # moves in positions the book does not hold


def player_number(ply: int) -> int:
    """The number a player gives the move they make at ``ply`` (X at plies 0, 2, 4 and O at
    1, 3, 5 both count 1, 2, 3)."""
    return ply // 2 + 1


def review_game(truth: Truth, rules: Rules, moves: Sequence[int], side: str) -> Review:
    """The moves ``side`` (``"x"`` or ``"o"``) made in the game ``moves``, graded as
    ``ttt play`` and the audit grade them."""
    records, ungraded = grade_game(truth, rules, moves, side)
    reviewed = tuple(
        ReviewedMove(player_number(r.ply), r, tuple(truth.best_moves(r.position))) for r in records
    )
    return Review(side, reviewed, summarize(records, ungraded), ungraded)
