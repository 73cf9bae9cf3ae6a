"""Numbers and positions of a tablebase ply, many at once: the index both ways, in kernels.

:func:`indexes` gives positions their numbers (from the class table of the ply's X sets);
:func:`stand_for` gives numbers their positions, so that a table can be read ply by ply in the
order of its index (``ttt export`` and ``ttt verify`` on boards whose keys are too many to sort
in memory).

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

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.pieces import held, pieces
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.classes import ClassTable
from ttt_solve.solver.tablebase.compiled import (
    back_up_cpu,
    end_record_cpu,
    expand_cpu,
    lines_held_cpu,
    number_of_cpu,
    o_at_cpu,
    permute_set_cpu,
    record_of_cpu,
    score_of_record_cpu,
    unrank_set_cpu,
)
from ttt_solve.solver.tablebase.record import NO_SCORE, NONE
from ttt_solve.solver.tablebase.step import PlyStep, ply_step

_compile = numba.njit(parallel=True, nogil=True, cache=True)


@_compile
def _indexes(
    x: NDArray[np.int64], o: NDArray[np.int64], step: PlyStep, table: ClassTable
) -> NDArray[np.int64]:
    full = (1 << step.cells) - 1
    out = np.empty(len(x), dtype=np.int64)
    for i in numba.prange(len(x)):
        out[i] = number_of_cpu(
            x[i],
            o[i],
            step.per_class,
            table.classes,
            table.symmetries,
            table.reps,
            full,
            step.tables,
            step.binom,
        )
    return out


def indexes(
    rules: Rules, ply: int, table: ClassTable, x: NDArray[np.int64], o: NDArray[np.int64]
) -> NDArray[np.int64]:
    """The numbers of many positions of ``ply`` (X and O cell sets, aligned), given the class
    table of the ply's X sets."""
    (out,) = _pieced(
        _indexes,
        (np.ascontiguousarray(x, dtype=np.int64), np.ascontiguousarray(o, dtype=np.int64)),
        ply_step(rules, ply, table, None),
        table,
    )
    return out


@_compile
def _stand_for(
    numbers: NDArray[np.int64], rep_ranks: NDArray[np.int64], step: PlyStep
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_], NDArray[np.uint8]]:
    x_count = (step.ply + 1) // 2
    x_out = np.empty(len(numbers), dtype=np.int64)
    o_out = np.empty(len(numbers), dtype=np.int64)
    own = np.empty(len(numbers), dtype=np.bool_)
    images = np.empty(len(numbers), dtype=np.uint8)
    for i in numba.prange(len(numbers)):
        rep = unrank_set_cpu(
            rep_ranks[numbers[i] // step.per_class], x_count, step.cells, step.binom
        )
        o = o_at_cpu(numbers[i] % step.per_class, rep, step.ply // 2, step.cells, step.binom)
        smallest = True
        fixing = 1  # the symmetries that leave the position as it is, the identity first
        for s in range(1, step.symmetries):
            if permute_set_cpu(rep, step.tables, s) != rep:
                continue
            # An image of the O set under a symmetry fixing the X set stands at another number
            # of the same class; compressing keeps the order of sets, so compare the sets.
            image = permute_set_cpu(o, step.tables, s)
            if image < o:
                smallest = False
            elif image == o:
                fixing += 1
        x_out[i] = rep
        o_out[i] = o
        own[i] = smallest
        images[i] = step.symmetries // fixing
    return x_out, o_out, own, images


def stand_for(
    rules: Rules, ply: int, rep_ranks: NDArray[np.int64], numbers: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_], NDArray[np.uint8]]:
    """``(x, o, own, images)`` of each number of ``ply`` (``rep_ranks``: the ranks of the
    ply's representatives, ascending, as a table file holds them): the X and O cell sets of
    the position it stands for, whether it is the position's own number (each canonical
    position has one), and how many distinct positions its symmetries make. A number that
    stands for no position of a game (as the table records) is unranked all the same."""
    x, o, own, images = _pieced(
        _stand_for,
        (np.ascontiguousarray(numbers, dtype=np.int64),),
        np.ascontiguousarray(rep_ranks, dtype=np.int64),
        ply_step(rules, ply, None, None),
    )
    return x, o, own, images


@_compile
def _children_records(
    x: NDArray[np.int64],
    o: NDArray[np.int64],
    records: NDArray[np.uint8],
    step: PlyStep,
    child_records: NDArray[np.uint8],
) -> tuple[NDArray[np.uint8], NDArray[np.int64], NDArray[np.int64]]:
    cells = step.cells
    full = (1 << cells) - 1
    x_moves = step.ply % 2 == 0
    backed = np.empty(len(x), dtype=np.uint8)
    best = np.zeros(len(x), dtype=np.int64)
    missing = np.zeros(len(x), dtype=np.int64)
    for i in numba.prange(len(x)):
        last_mover = o[i] if x_moves else x[i]
        end = end_record_cpu(lines_held_cpu(last_mover, step.lines), step.ply, cells)
        if end != NONE:
            backed[i] = end
            continue
        own = score_of_record_cpu(records[i]) if records[i] != NONE else NO_SCORE
        children = np.empty(cells, dtype=np.int64)
        count = 0
        empty = full & ~(x[i] | o[i])
        stones = empty
        while stones:
            bit = stones & -stones
            stones ^= bit
            children[count] = number_of_cpu(
                x[i] | bit if x_moves else x[i],
                o[i] if x_moves else o[i] | bit,
                step.child_per_class,
                step.child_classes,
                step.child_symmetries,
                step.child_reps,
                full,
                step.tables,
                step.binom,
            )
            count += 1
        top, best_children, lost = back_up_cpu(children, count, child_records, own)
        missing[i] = lost
        best[i] = expand_cpu(best_children, empty)
        backed[i] = record_of_cpu(top) if lost == 0 else NONE
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
      scores); :data:`~solver.tablebase.record.NONE` where a child stands at no position;
    * ``best``: its best moves as a bitmask of cells, in the given orientation: the moves whose
      child's value for its mover is the position's record's (none once the game is over);
    * ``missing``: how many of its children stand at no position (a damaged table).
    """
    backed, best, missing = _pieced(
        _children_records,
        (
            np.ascontiguousarray(x, dtype=np.int64),
            np.ascontiguousarray(o, dtype=np.int64),
            np.ascontiguousarray(records, dtype=np.uint8),
        ),
        ply_step(rules, ply, None, child),
        child_records,
    )
    return backed, best, missing


def _pieced(
    kernel: Callable[..., Any], arrays: tuple[NDArray[Any], ...], *rest: Any
) -> tuple[NDArray[Any], ...]:
    """``kernel(*arrays, *rest)`` in pieces of the aligned ``arrays`` (:mod:`solver.pieces`),
    each piece's outputs joined."""
    outputs = []
    for first, last in pieces(len(arrays[0])):
        with held():
            out = kernel(*(array[first:last] for array in arrays), *rest)
        outputs.append(out if isinstance(out, tuple) else (out,))
    if not outputs:
        with held():
            out = kernel(*arrays, *rest)
        return out if isinstance(out, tuple) else (out,)
    return tuple(np.concatenate(parts) for parts in zip(*outputs, strict=True))
