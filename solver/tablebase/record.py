"""The tablebase's record: a position's value and remoteness in one byte, and its back-up.

A table gives each number of a ply's index (:mod:`solver.tablebase.index`) one byte:

* :data:`NONE` (``0``): no position: the number's stones cannot arise in a game;
* :data:`DRAW` (``1``): a draw (its remoteness is the empty cells: a drawn game fills the
  board);
* ``DECIDED + r`` (``2 + r``): won or lost in ``r`` plies for the side to move; ``r`` odd is a
  win, even a loss (the side that moves last wins, so the parity says who).

A position with the right stone counts arises in a game exactly when the side to move has no
line and either the last mover has none either, or one stone of the last mover lies on all its
lines (:func:`lines_held`). Such a position's record is its end's (:func:`end_record`) or the
best of its children's (:func:`back_up`), by negamax on the project's scores
(:mod:`solver.value`).

As in :mod:`solver.tablebase.index`, the formulas are plain integer Python, compiled for the
CPU and CUDA from this one source (:data:`FORMULAS`); this module loads neither NumPy nor Numba
until an array is decoded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ttt_solve.solver.tablebase.index import Ints
from ttt_solve.solver.value import (
    WIN_SCORE,
    Value,
    move_score,
    remoteness_of,
    score_of,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

NONE = 0
"""The record of a number that stands for no position."""
DRAW = 1
"""The record of a draw."""
DECIDED = 2
"""A won or lost position's record is this plus its remoteness."""

NO_SCORE = 2 * WIN_SCORE
"""A score no move has: what :func:`back_up` is given when no move's score is sought."""


def score_of_record(record: int) -> int:
    """The score of a position's record (not :data:`NONE`) for the side to move."""
    if record == DRAW:
        return 0
    remoteness = record - DECIDED
    found: int = score_of(1 if remoteness & 1 else -1, remoteness)
    return found


def record_of(score: int) -> int:
    """The record of a position's score (a decided score carries its remoteness)."""
    if score == 0:
        return DRAW
    found: int = DECIDED + remoteness_of(score, 0)
    return found


def outcome_of_record(record: int) -> int:
    """The outcome of a record (not :data:`NONE`), as :class:`RecordCounts` numbers it: 0 win,
    1 draw, 2 loss."""
    if record == DRAW:
        return 1
    return 0 if (record - DECIDED) & 1 else 2


def lines_held(stones: int, lines: Ints) -> int:
    """The cells common to every line the stones hold; -1 when they hold none."""
    common = -1
    for line in lines:
        if stones & line == line:
            common &= line
    return common


def end_record(last_mover_common: int, ply: int, cells: int) -> int:
    """The record of a reachable position whose game is over (lost in 0 when the last mover
    holds a line: ``last_mover_common`` from :func:`lines_held`; a draw on a full board), or
    :data:`NONE` while it goes on."""
    if last_mover_common != -1:
        return DECIDED
    if ply == cells:
        return DRAW
    return NONE


def back_up(children: Ints, count: int, child_records: Ints, own: int) -> tuple[int, int, int]:
    """``(top, best, missing)`` over the records of a position's ``count`` children, at the
    numbers ``children[:count]`` of ``child_records``: the best score of a move for the side
    to move (the position's score, by negamax), the moves whose score is ``own`` (bit ``i``
    for ``children[i]``; pass :data:`NO_SCORE` for none), and how many children stand at no
    position (a damaged table)."""
    top = -NO_SCORE
    best = 0
    missing = 0
    for i in range(count):
        child_record = int(child_records[children[i]])
        if child_record == NONE:
            missing += 1
            continue
        score = move_score(score_of_record(child_record))
        if score > top:
            top = score
        if score == own:
            best |= 1 << i
    return top, best, missing


FORMULAS: tuple[Callable[..., Any], ...] = (
    move_score,
    remoteness_of,
    score_of,
    score_of_record,
    record_of,
    outcome_of_record,
    lines_held,
    end_record,
    back_up,
)
"""The records' formulas (with the scores' of :mod:`solver.value` they call), as
:func:`solver.tablebase.index.twins` compiles them."""


def value_of_record(record: int, empty_cells: int) -> Value:
    """The value for the side to move of a position's record (not :data:`NONE`), with
    ``empty_cells`` its empty cells (a draw's remoteness)."""
    return Value.from_score(score_of_record(record), empty_cells)


def decode_records(
    records: NDArray[np.uint8], empty_cells: int
) -> tuple[NDArray[np.int8], NDArray[np.int8]]:
    """The values (1, 0, -1 for the side to move) and remoteness of records (none
    :data:`NONE`) of positions with ``empty_cells`` empty cells: :func:`score_of_record` over
    an array."""
    import numpy as np

    draw = records == DRAW
    steps = records.astype(np.int8) - DECIDED
    remoteness = np.where(draw, np.int8(empty_cells), steps).astype(np.int8)
    values = np.where(draw, 0, np.where(steps % 2 == 1, 1, -1)).astype(np.int8)
    return values, remoteness


RECORD_SLOTS = 32
"""Records a count is kept for: 0 to 31 (a table's remoteness is at most 25: records to 27)."""


class RecordCounts(NamedTuple):
    """How many positions hold each record in a range, ``by_record[kind, record]``: kind 0
    canonical positions (one per class of symmetric positions), kind 1 reachable positions
    (every image counted); no position is counted at :data:`NONE`. ``full_board``: whether
    the range is of the last ply, whose draws are over (elsewhere only a loss in 0 is).

    What the figures of a game count (values, terminal positions, the remoteness table) all
    follow: :attr:`counts` gives them as ``counts[outcome, terminal, kind]``, outcome 0 win,
    1 draw, 2 loss (the order of :class:`~ttt_solve.solver.value.Outcome`), terminal 0 open,
    1 game over."""

    by_record: NDArray[np.int64]
    full_board: bool

    @classmethod
    def zero(cls, full_board: bool) -> RecordCounts:
        import numpy as np

        return cls(np.zeros((2, RECORD_SLOTS), dtype=np.int64), full_board)

    @classmethod
    def of(cls, flat: Sequence[int], full_board: bool) -> RecordCounts:
        """The counts as a file's header holds them: ``2 * RECORD_SLOTS`` ints, kind first."""
        import numpy as np

        return cls(np.array(flat, dtype=np.int64).reshape(2, RECORD_SLOTS), full_board)

    def flat(self) -> tuple[int, ...]:
        """The counts as a file's header holds them."""
        return tuple(int(count) for count in self.by_record.ravel())

    def __add__(self, other: object) -> RecordCounts:
        if not isinstance(other, RecordCounts):
            return NotImplemented
        return RecordCounts(self.by_record + other.by_record, self.full_board)

    @property
    def counts(self) -> NDArray[np.int64]:
        """``counts[outcome, terminal, kind]`` (see the class)."""
        import numpy as np

        counts = np.zeros((3, 2, 2), dtype=np.int64)
        for record in range(DRAW, RECORD_SLOTS):
            over = record == DECIDED or (record == DRAW and self.full_board)
            counts[outcome_of_record(record), int(over)] += self.by_record[:, record]
        return counts

    @property
    def canonical(self) -> int:
        return int(self.by_record[0].sum())

    @property
    def reachable(self) -> int:
        return int(self.by_record[1].sum())
