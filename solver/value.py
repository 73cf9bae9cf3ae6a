"""Game values: one integer score for machines, (outcome, remoteness) for people.

A **score** is side-to-move relative and distance-aware:

* a win in ``r`` plies scores ``WIN_SCORE - r`` (faster wins score higher),
* a loss in ``r`` plies scores ``-(WIN_SCORE - r)`` (slower losses score higher),
* a draw scores ``0``.

So the best move is simply the one with the highest move score, and the value of a position is
the maximum over its moves of ``move_score(child's score)``: see :func:`move_score`. A draw's
remoteness is not in the score: under these rules a drawn game always fills the board, so it is
the number of empty cells.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, overload

from ttt_solve.solver.vocabulary import Word

if TYPE_CHECKING:  # NumPy is not imported at run time: reading a stored value must not pay for it
    import numpy as np
    from numpy.typing import NDArray

    ScoreArray = TypeVar("ScoreArray", NDArray[np.int16], NDArray[np.int32], NDArray[np.int64])
    """A NumPy array of scores; the score flips below keep its dtype."""

WIN_SCORE = 1024
"""Larger than any remoteness (boards have at most 26*26 cells)."""


class Outcome(Word):
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

    @property
    def letter(self) -> str:
        """``W``, ``D`` or ``L``: the value written short (``W3``: a win in 3 plies)."""
        return self.value[0].upper()


_BY_LETTER = {outcome.letter: outcome for outcome in Outcome}


class Value(NamedTuple):
    """The value of a position for the side to move, or of a move for its mover.

    ``remoteness`` is the number of plies to the end of the game under perfect play.
    """

    outcome: Outcome
    remoteness: int

    @property
    def score(self) -> int:
        """The integer score (see the module docstring)."""
        return int(score_of(self.outcome.sign, self.remoteness))

    @classmethod
    def from_score(cls, score: int, empty_cells: int) -> Value:
        """The value of a score; ``empty_cells`` gives a draw's remoteness."""
        return cls(Outcome.from_sign(score), int(remoteness_of(score, empty_cells)))

    def __str__(self) -> str:
        return f"{self.outcome.value} in {self.remoteness}"

    @property
    def label(self) -> str:
        """The value written short: ``W3`` a win in 3 plies, ``D6`` a draw, ``L2`` a loss in 2."""
        return f"{self.outcome.letter}{self.remoteness}"

    @classmethod
    def from_label(cls, label: str) -> Value:
        """The value a :attr:`label` writes; ``ValueError`` quoting it if it writes none."""
        digits = label[1:]
        if label[:1] not in _BY_LETTER or not digits.isdigit() or not digits.isascii():
            raise ValueError(f"{label!r} is no value label (W3, D6, L2)")
        return cls(_BY_LETTER[label[0]], int(digits))

    @property
    def sort_key(self) -> int:
        """Sorts best first: fast wins, then draws, then slow losses."""
        return -self.score


@overload
def move_score(child_score: int) -> int: ...
@overload
def move_score(child_score: ScoreArray) -> ScoreArray: ...
def move_score(child_score: Any) -> Any:
    """The score of a move for its mover, given the score of the child for the side to move.

    The child's outcome is negated and its remoteness grows by the one ply of the move. The
    arithmetic has no branch, so the one definition serves Python ints, NumPy arrays (whose
    dtype it keeps: ``-s`` comes first, and an integer array plus a boolean one stays integer)
    and ``numba.njit`` code alike.

    >>> move_score(WIN_SCORE - 3), move_score(-(WIN_SCORE - 2)), move_score(0)
    (-1020, 1021, 0)
    """
    return -child_score + (child_score > 0) - (child_score < 0)


@overload
def best_child_score(score: int) -> int: ...
@overload
def best_child_score(score: ScoreArray) -> ScoreArray: ...
def best_child_score(score: Any) -> Any:
    """The score a child must have for the move to it to be worth ``score`` to the mover.

    The inverse of :func:`move_score` on real scores (same arithmetic, same types). Since no
    move is worth more than its position, a move is best exactly when its child's score is at
    most this.

    >>> best_child_score(WIN_SCORE - 3), move_score(best_child_score(WIN_SCORE - 3))
    (-1022, 1021)
    """
    return -score - (score > 0) + (score < 0)


def remoteness_of(score: Any, empty_cells: Any) -> Any:
    """Plies to the end under perfect play, from a score and the empty cells (a draw's
    remoteness); branch-free, for Python ints and NumPy arrays alike."""
    return (
        (score > 0) * (WIN_SCORE - score)
        + (score < 0) * (WIN_SCORE + score)
        + (score == 0) * empty_cells
    )


def score_of(sign: Any, remoteness: Any) -> Any:
    """The score of a value sign (1 win, 0 draw, -1 loss) and a remoteness: the inverse of
    :func:`remoteness_of` with the sign; branch-free, for Python ints and NumPy arrays."""
    return sign * (WIN_SCORE - remoteness)


def move_value(child_value: Value) -> Value:
    """The value of a move for its mover, from the value of the position it leads to."""
    return Value.from_score(move_score(child_value.score), child_value.remoteness + 1)


class Grade(Word):
    """How a move compares with perfect play (a best move keeps the position's score, a sound
    one its outcome, a blunder changes the outcome)."""

    BEST = "best"
    SOUND = "sound"
    BLUNDER = "blunder"


class BlunderKind(Word):
    """The outcome a blunder threw away and the one it reached (a loss can be thrown away by no
    move, and a blunder always makes the outcome worse)."""

    WIN_DRAW = "win->draw"
    WIN_LOSS = "win->loss"
    DRAW_LOSS = "draw->loss"

    @classmethod
    def of(cls, before: Outcome, after: Outcome) -> BlunderKind:
        """The kind of a move from a position worth ``before`` to a move worth ``after``."""
        return cls(f"{before.value}->{after.value}")


def grade(position_value: Value, move: Value) -> tuple[Grade, BlunderKind | None]:
    """Grade a move's value against its position's value.

    Returns the grade and, for a blunder, its kind: ``"win->draw"``, ``"win->loss"`` or
    ``"draw->loss"``.

    >>> grade(Value(Outcome.WIN, 3), Value(Outcome.WIN, 5))
    (<Grade.SOUND: 'sound'>, None)
    """
    if move.outcome is not position_value.outcome:
        return Grade.BLUNDER, BlunderKind.of(position_value.outcome, move.outcome)
    if move.score == position_value.score:
        return Grade.BEST, None
    return Grade.SOUND, None
