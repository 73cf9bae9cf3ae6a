"""Game values: one integer score for machines, (outcome, remoteness) for people.

A **score** is side-to-move relative and distance-aware:

* a win in ``r`` plies scores ``WIN_SCORE - r`` (faster wins score higher),
* a loss in ``r`` plies scores ``-(WIN_SCORE - r)`` (slower losses score higher),
* a draw scores ``0``.

So the best move is simply the one with the highest move score, and the value of a position is
the maximum over its moves of ``child_to_move_score(child)``: see :func:`move_score`. A draw's
remoteness is not in the score: under these rules a drawn game always fills the board, so it is
the number of empty cells.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

WIN_SCORE = 1024
"""Larger than any remoteness (boards have at most 26*26 cells)."""


class Outcome(str, Enum):
    """Result for the side to move (or, for a move, for the player who makes it)."""

    WIN = "win"
    DRAW = "draw"
    LOSS = "loss"

    @property
    def sign(self) -> int:
        """+1, 0, -1: the value column of the book."""
        return {Outcome.WIN: 1, Outcome.DRAW: 0, Outcome.LOSS: -1}[self]

    @classmethod
    def from_sign(cls, sign: int) -> Outcome:
        return cls.WIN if sign > 0 else cls.LOSS if sign < 0 else cls.DRAW

    def __str__(self) -> str:
        return self.value


class Value(NamedTuple):
    """The value of a position for the side to move, or of a move for its mover.

    ``remoteness`` is the number of plies to the end of the game under perfect play.
    """

    outcome: Outcome
    remoteness: int

    @property
    def score(self) -> int:
        """The integer score (see the module docstring)."""
        if self.outcome is Outcome.WIN:
            return WIN_SCORE - self.remoteness
        if self.outcome is Outcome.LOSS:
            return -(WIN_SCORE - self.remoteness)
        return 0

    @classmethod
    def from_score(cls, score: int, empty_cells: int) -> Value:
        """The value of a score; ``empty_cells`` gives a draw's remoteness."""
        if score > 0:
            return cls(Outcome.WIN, WIN_SCORE - score)
        if score < 0:
            return cls(Outcome.LOSS, WIN_SCORE + score)
        return cls(Outcome.DRAW, empty_cells)

    def __str__(self) -> str:
        return f"{self.outcome.value} in {self.remoteness}"

    @property
    def sort_key(self) -> int:
        """Sorts best first: fast wins, then draws, then slow losses."""
        return -self.score


def move_score(child_score: int) -> int:
    """The score of a move for its mover, given the score of the child for the side to move.

    The child's outcome is negated and its remoteness grows by the one ply of the move.
    """
    if child_score > 0:
        return -child_score + 1
    if child_score < 0:
        return -child_score - 1
    return 0


def move_value(child_value: Value) -> Value:
    """The value of a move for its mover, from the value of the position it leads to."""
    flipped = {Outcome.WIN: Outcome.LOSS, Outcome.LOSS: Outcome.WIN, Outcome.DRAW: Outcome.DRAW}
    return Value(flipped[child_value.outcome], child_value.remoteness + 1)


class Grade(str, Enum):
    """How a move compares with perfect play (CONVENTIONS.md, "Grading a move")."""

    BEST = "best"
    SOUND = "sound"
    BLUNDER = "blunder"

    def __str__(self) -> str:
        return self.value


def grade(position_value: Value, move: Value) -> tuple[Grade, str | None]:
    """Grade a move's value against its position's value.

    Returns the grade and, for a blunder, its kind: ``"win->draw"``, ``"win->loss"`` or
    ``"draw->loss"``.

    >>> grade(Value(Outcome.WIN, 3), Value(Outcome.WIN, 5))
    (<Grade.SOUND: 'sound'>, None)
    """
    if move.outcome is not position_value.outcome:
        return Grade.BLUNDER, f"{position_value.outcome.value}->{move.outcome.value}"
    if move.score == position_value.score:
        return Grade.BEST, None
    return Grade.SOUND, None
