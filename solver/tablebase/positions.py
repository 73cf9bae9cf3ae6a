"""The positions that numbers of a tablebase ply stand for: the index read backwards.

:mod:`solver.tablebase.index` gives a position its number; this module gives a number its
position, for many numbers at once, so that a table can be read ply by ply in the order of its
index (``ttt export`` and ``ttt verify`` on boards whose keys are too many to sort in memory).

A number ``class * per_class + rank`` stands for the position whose X set is the class's
representative and whose O set is the ``rank``-th set of the representative's free cells (colex
order). When the representative is symmetric itself, the position stands at several numbers
(its O set's images under the representative's own symmetries); the number of the smallest O
set is the position's **own** one, as the build counts it canonical, so that reading the own
numbers of a ply gives each canonical position once.

:func:`children_records` then looks up every child of many positions in the next ply's
records at once: the record the children give a position by negamax (what the table must hold
for it) and its best moves.
"""

from __future__ import annotations

import numba
import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.index import (
    ClassTable,
    binomials,
    cell_tables,
    expand,
    number_of,
    permute_set,
    unrank_set,
)
from ttt_solve.solver.tablebase.lookup import NONE, stone_counts
from ttt_solve.solver.tablebase.step import (
    _end_record,
    _lines_held,
    _move_score,
    _record,
    _score,
)
from ttt_solve.solver.value import WIN_SCORE


@numba.njit(parallel=True, nogil=True, cache=True)
def _stand_for(
    numbers: NDArray[np.int64],
    x_count: int,
    o_count: int,
    cells: int,
    per_class: int,
    rep_ranks: NDArray[np.int64],
    tables: NDArray[np.int64],
    binom: NDArray[np.int64],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_], NDArray[np.uint8]]:
    full = (1 << int(cells)) - 1
    symmetries = tables.shape[0]
    x_out = np.empty(len(numbers), dtype=np.int64)
    o_out = np.empty(len(numbers), dtype=np.int64)
    own = np.empty(len(numbers), dtype=np.bool_)
    images = np.empty(len(numbers), dtype=np.uint8)
    for i in numba.prange(len(numbers)):
        rep = unrank_set(rep_ranks[numbers[i] // per_class], x_count, cells, binom)
        free = full & ~rep
        o = expand(unrank_set(numbers[i] % per_class, o_count, cells - x_count, binom), free)
        smallest = True
        fixing = 1  # the symmetries that leave the position as it is, the identity first
        for s in range(1, symmetries):
            if permute_set(rep, tables, s) != rep:
                continue
            # An image of the O set under a symmetry fixing the X set stands at another number
            # of the same class; compressing keeps the order of sets, so compare the sets.
            image = permute_set(o, tables, s)
            if image < o:
                smallest = False
            elif image == o:
                fixing += 1
        x_out[i] = rep
        o_out[i] = o
        own[i] = smallest
        images[i] = symmetries // fixing
    return x_out, o_out, own, images


def stand_for(
    rules: Rules, ply: int, rep_ranks: NDArray[np.int64], numbers: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_], NDArray[np.uint8]]:
    """``(x, o, own, images)`` of each number of ``ply`` (``rep_ranks``: the ranks of the
    ply's representatives, ascending, as a table file holds them): the X and O cell sets of
    the position it stands for, whether it is the position's own number (each canonical
    position has one), and how many distinct positions its symmetries make. A number that
    stands for no position of a game (as the table records) is unranked all the same."""
    from math import comb

    x, o = stone_counts(ply)
    return _stand_for(
        np.ascontiguousarray(numbers, dtype=np.int64),
        x,
        o,
        rules.cells,
        comb(rules.cells - x, o),
        np.ascontiguousarray(rep_ranks, dtype=np.int64),
        cell_tables(rules),
        binomials(rules.cells),
    )


@numba.njit(parallel=True, nogil=True, cache=True)
def _children_records(
    ply: int,
    cells: int,
    x: NDArray[np.int64],
    o: NDArray[np.int64],
    records: NDArray[np.uint8],
    child_per_class: int,
    child_classes: NDArray[np.int32],
    child_symmetries: NDArray[np.uint8],
    child_reps: NDArray[np.int64],
    child_records: NDArray[np.uint8],
    tables: NDArray[np.int64],
    lines: NDArray[np.int64],
    binom: NDArray[np.int64],
) -> tuple[NDArray[np.uint8], NDArray[np.int64], NDArray[np.int64]]:
    full = (1 << int(cells)) - 1
    x_moves = ply % 2 == 0
    backed = np.empty(len(x), dtype=np.uint8)
    best = np.zeros(len(x), dtype=np.int64)
    missing = np.zeros(len(x), dtype=np.int64)
    for i in numba.prange(len(x)):
        last_mover = o[i] if x_moves else x[i]
        end = _end_record(_lines_held(last_mover, lines), ply, cells)
        if end != NONE:
            backed[i] = end
            continue
        own = _score(records[i]) if records[i] != NONE else 2 * WIN_SCORE
        top = -2 * WIN_SCORE
        empty = full & ~(x[i] | o[i])
        while empty:
            bit = empty & -empty
            empty ^= bit
            child_x = x[i] | bit if x_moves else x[i]
            child_o = o[i] if x_moves else o[i] | bit
            child = number_of(
                child_x,
                child_o,
                child_per_class,
                child_classes,
                child_symmetries,
                child_reps,
                full,
                tables,
                binom,
            )
            child_record = child_records[child]
            if child_record == NONE:
                missing[i] += 1
                continue
            score = _move_score(_score(child_record))
            top = max(top, score)
            if score == own:
                best[i] |= bit
        backed[i] = _record(top) if missing[i] == 0 else NONE
    return backed, best, missing


def children_records(
    rules: Rules,
    ply: int,
    x: NDArray[np.int64],
    o: NDArray[np.int64],
    records: NDArray[np.uint8],
    child: ClassTable | None,
    child_records: NDArray[np.uint8],
) -> tuple[NDArray[np.uint8], NDArray[np.int64], NDArray[np.int64]]:
    """``(backed, best, missing)`` for positions of ``ply`` (X and O cell sets in any
    orientation, with their ``records``), from the next ply's records (any ``uint8`` array: a
    memory map does) and the class table of its X sets (``child``; ``None`` for the last ply):

    * ``backed``: the record the position must hold: lost in 0 or a draw once the game is
      over, else the best of its children's for the side to move (negamax on the project's
      scores); :data:`~solver.tablebase.step.NONE` where a child stands at no position;
    * ``best``: its best moves as a bitmask of cells, in the given orientation: the moves whose
      child's value for its mover is the position's record's (none once the game is over);
    * ``missing``: how many of its children stand at no position (a damaged table).
    """
    from math import comb

    if child is None or ply == rules.cells:
        child = ClassTable(
            np.zeros(0, dtype=np.int32),
            np.zeros(0, dtype=np.uint8),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
        )
    child_x, child_o = stone_counts(ply + 1)
    return _children_records(
        ply,
        rules.cells,
        np.ascontiguousarray(x, dtype=np.int64),
        np.ascontiguousarray(o, dtype=np.int64),
        np.ascontiguousarray(records, dtype=np.uint8),
        comb(rules.cells - child_x, child_o),
        child.classes,
        child.symmetries,
        child.reps,
        child_records,
        cell_tables(rules),
        np.array(rules.lines, dtype=np.int64),
        binomials(rules.cells),
    )
