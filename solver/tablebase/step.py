"""The tablebase's ply step: every record of a ply from the records of the next, over ranks.

A number is classified where it stands, without a forward pass (:mod:`solver.tablebase.record`):
no position, lost in 0 (the last mover has won), a draw on a full board, or else backed up from
its children's records. :func:`back_up_range` does that for a range of numbers, over every
core, and counts the positions holding each record, canonical and reachable, as it goes.

The work is written once, in two plain formulas that the CPU kernel here and the GPU kernel
(:mod:`solver.tablebase.gpu`) both call, compiled from this source for each:

* :func:`land_class`: what the numbers of one class share: the symmetries that fix its
  representative, and where each child stands: the first number of the child's class, and
  where each O stone lands among the child's free cells (so that a child's number is a few
  additions, not a search: when O moves the class stays and the O set gains a stone; when X
  moves, the child's class and symmetry come from the class table);
* :func:`back_up_number`: one number's record, its counts, and its children that stand at
  no position.

Both take the ply as one structure, :class:`PlyStep` (the ply's shape and the class tables of
its X sets and of its children's).
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb
from typing import Any, NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.pieces import held, pieces
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.classes import ClassTable, class_tables
from ttt_solve.solver.tablebase.compiled import (
    CPU,
    binomials,
    expand_cpu,
    inline,
    lines_held_cpu,
    lines_of,
    next_set_cpu,
    symmetries_of,
)
from ttt_solve.solver.tablebase.index import (
    compress,
    permute_set,
    popcount,
    rank_set,
    stone_counts,
    twins,
    unrank_set,
)
from ttt_solve.solver.tablebase.record import (
    NO_SCORE,
    NONE,
    RECORD_SLOTS,
    RecordCounts,
    back_up,
    end_record,
    lines_held,
    record_of,
)

BLOCK = 1 << 13
"""Numbers one thread takes at once: each block starts by unranking its first number."""


class PlyStep(NamedTuple):
    """What the ply step reads of one ply, as numbers and arrays (Numba and CUDA take it
    whole): its shape, the representatives of its classes, and the class table of its
    children's X sets (empty for the last ply), with the rules' tables."""

    ply: int
    cells: int
    symmetries: int
    per_class: int
    child_per_class: int
    reps: NDArray[np.int64]
    child_classes: NDArray[np.int32]
    child_symmetries: NDArray[np.int64]
    child_reps: NDArray[np.int64]
    tables: NDArray[np.int64]
    lines: NDArray[np.int64]
    binom: NDArray[np.int64]

    @property
    def records(self) -> int:
        """The numbers of the ply."""
        return len(self.reps) * self.per_class


def ply_step(
    rules: Rules, ply: int, classes: ClassTable | None, child: ClassTable | None
) -> PlyStep:
    """The ply step of ``ply``, from the class table of its X sets (``None`` where only its
    children are looked up) and of its children's (``None`` for the last ply; the same table
    when O moves)."""
    x, o = stone_counts(ply)
    if child is None or ply == rules.cells:
        child = ClassTable.empty()
    child_x, child_o = stone_counts(ply + 1)
    return PlyStep(
        ply,
        rules.cells,
        len(rules.symmetries),
        comb(rules.cells - x, o),
        comb(rules.cells - child_x, child_o) if ply < rules.cells else 0,
        (classes or ClassTable.empty()).reps,
        child.classes,
        child.symmetries,
        child.reps,
        symmetries_of(rules),
        lines_of(rules),
        binomials(),
    )


# -- the formulas, shared with the GPU ------------------------------------------------------


def fixing_symmetries(rep: int, step: PlyStep, stabiliser: Any) -> int:
    """``fixing``, with ``stabiliser[:fixing]`` the symmetries other than the identity that
    fix the X set ``rep``."""
    fixing = 0
    for symmetry in range(1, step.symmetries):
        if permute_set(rep, step.tables, symmetry) == rep:
            stabiliser[fixing] = symmetry
            fixing += 1
    return fixing


def compressed_o(rank: int, step: PlyStep) -> int:
    """The O set of the ``rank``-th number of any class of the ply, as positions among the
    class's free cells (:func:`~solver.tablebase.index.compress`'s form)."""
    return unrank_set(rank, step.ply // 2, step.cells - (step.ply + 1) // 2, step.binom)


def own_number(
    o: int, compressed: int, free: int, fixing: int, stabiliser: Any, step: PlyStep
) -> int:
    """1 if the number of the position with O set ``o`` (``compressed`` among the ``free``
    cells of its X set, fixed by ``stabiliser[:fixing]``) is its position's own: the
    smallest O set among its images under those symmetries; else 0 (an image's number
    counts the position)."""
    for f in range(fixing):
        if compress(permute_set(o, step.tables, stabiliser[f]), free) < compressed:
            return 0
    return 1


def land_class(
    number: int,
    rep: int,
    step: PlyStep,
    child_base: Any,
    landing: Any,
    stabiliser: Any,
) -> int:
    """Fill in what the numbers of class ``number`` (of representative ``rep``) share:
    ``stabiliser[:fixing]``, the symmetries other than the identity that fix ``rep``;
    ``child_base[cell]``, the first number of the class of the child a move at ``cell`` makes;
    ``landing[cell, stone]``, the position among that child's free cells where the O stone on
    ``stone`` lands (X moves), or ``landing[0, cell]``, the position of ``cell`` among the
    class's free cells (O moves). Returns ``fixing``."""
    cells = step.cells
    full = (1 << cells) - 1
    free = full & ~rep
    fixing = fixing_symmetries(rep, step, stabiliser)
    if step.ply == cells:
        return fixing
    x_moves = step.ply % 2 == 0
    for cell in range(cells):
        if not (free >> cell) & 1:
            continue
        if x_moves:
            child_rank = rank_set(rep | (1 << cell), step.binom)
            child_number = step.child_classes[child_rank]
            symmetry = step.child_symmetries[child_rank]
            child_free = full & ~step.child_reps[child_number]
            child_base[cell] = child_number * step.child_per_class
            for stone in range(cells):
                if (free >> stone) & 1 and stone != cell:
                    image = permute_set(1 << stone, step.tables, symmetry)
                    landing[cell, stone] = popcount(child_free & (image - 1))
        else:
            child_base[cell] = number * step.child_per_class
            landing[0, cell] = popcount(free & ((1 << cell) - 1))
    return fixing


def back_up_number(
    o: int,
    compressed: int,
    rep: int,
    x_common: int,
    fixing: int,
    stabiliser: Any,
    child_base: Any,
    landing: Any,
    children: Any,
    step: PlyStep,
    child_records: Any,
) -> tuple[int, int, int]:
    """``(record, canonical, missing)`` of the position with X set ``rep`` (its
    lines' common cells ``x_common``) and O set ``o`` (``compressed`` among ``rep``'s free
    cells), from what :func:`land_class` filled in for its class: its record; 1 if it is its
    position's own number (the smallest O set among the images under ``rep``'s symmetries),
    else 0; how many of its children stand at no position.
    ``children``: room for a number a child."""
    cells = step.cells
    free = ((1 << cells) - 1) & ~rep
    x_moves = step.ply % 2 == 0
    o_common = lines_held(o, step.lines)
    mover_common = x_common if x_moves else o_common
    last_mover_common = o_common if x_moves else x_common
    if mover_common != -1 or last_mover_common == 0:
        return NONE, 0, 0
    canonical = own_number(o, compressed, free, fixing, stabiliser, step)
    record = end_record(last_mover_common, step.ply, cells)
    if record != NONE:
        return record, canonical, 0
    count = 0
    empty = free & ~o
    while empty:
        bit = empty & -empty
        empty ^= bit
        cell = popcount(bit - 1)
        if x_moves:
            positions = 0
            stones = o
            while stones:
                stone = stones & -stones
                stones ^= stone
                positions |= 1 << int(landing[cell, popcount(stone - 1)])
        else:
            positions = compressed | (1 << int(landing[0, cell]))
        children[count] = child_base[cell] + rank_set(positions, step.binom)
        count += 1
    top, _, missing = back_up(children, count, child_records, NO_SCORE)
    return record_of(top), canonical, missing


FORMULAS: tuple[Callable[..., Any], ...] = (
    compressed_o,
    fixing_symmetries,
    own_number,
    land_class,
    back_up_number,
)
"""The ply step's formulas, compiled for the CPU here and for CUDA in
:mod:`solver.tablebase.gpu`."""

_STEP_CPU = twins(FORMULAS, inline, CPU)
compressed_o_cpu = _STEP_CPU["compressed_o"]
fixing_symmetries_cpu = _STEP_CPU["fixing_symmetries"]
own_number_cpu = _STEP_CPU["own_number"]
land_class_cpu = _STEP_CPU["land_class"]
back_up_number_cpu = _STEP_CPU["back_up_number"]


# -- the CPU kernel -------------------------------------------------------------------------


def back_up_range(
    step: PlyStep, start: int, stop: int, child_records: NDArray[np.uint8]
) -> tuple[NDArray[np.uint8], RecordCounts]:
    """The records of the numbers ``start .. stop-1`` of a ply, from the next ply's records
    (any array of ``uint8``: a memory map does), and their counts. Raises ``AssertionError``
    if a child stands at a number recorded as no position (a damaged next ply)."""
    return in_pieces(step, start, stop, child_records, _back_up)


PieceKernel = Callable[
    [PlyStep, int, NDArray[np.uint8], NDArray[np.uint8]], tuple[NDArray[np.int64], int]
]
"""A ply step's kernel, called as ``kernel(step, start, child_records, out)``: it writes the
records of the numbers from ``start`` on into ``out`` (as many as ``out`` holds) and returns
their counts (:attr:`RecordCounts.by_record`) and how many children stand at no position."""


def in_pieces(
    step: PlyStep,
    start: int,
    stop: int,
    child_records: NDArray[np.uint8],
    kernel: PieceKernel,
) -> tuple[NDArray[np.uint8], RecordCounts]:
    """:func:`back_up_range` by ``kernel``, in pieces of a fraction of a second each, so that
    a stop is taken between two (:mod:`solver.pieces`)."""
    if not 0 <= start <= stop <= step.records:
        raise ValueError(f"numbers {start}..{stop} are not within ply {step.ply}'s {step.records}")
    out = np.empty(stop - start, dtype=np.uint8)
    counts = RecordCounts.zero(step.ply == step.cells)
    missing = 0
    for first, last in pieces(stop - start, BLOCK, BLOCK):
        with held():
            made, lost = kernel(step, start + first, child_records, out[first:last])
        counts = counts + RecordCounts(made, counts.full_board)
        missing += lost
    if missing:
        raise AssertionError(f"ply {step.ply}: {missing} children stand at no position")
    return out, counts


@numba.njit(parallel=True, nogil=True, cache=True)
def _back_up(
    step: PlyStep, start: int, child_records: NDArray[np.uint8], out: NDArray[np.uint8]
) -> tuple[NDArray[np.int64], int]:
    cells = step.cells
    full = (1 << cells) - 1
    stop = start + len(out)
    blocks = (len(out) + BLOCK - 1) // BLOCK
    block_counts = np.zeros((blocks, 2, RECORD_SLOTS), dtype=np.int64)
    block_missing = np.zeros(blocks, dtype=np.int64)
    for block in numba.prange(blocks):
        first = start + block * BLOCK
        last = min(stop, first + BLOCK)
        counts = block_counts[block]
        stabiliser = np.zeros(8, dtype=np.int64)
        child_base = np.zeros(cells, dtype=np.int64)
        landing = np.zeros((cells, cells), dtype=np.int64)
        children = np.zeros(cells, dtype=np.int64)
        for number in range(first // step.per_class, (last - 1) // step.per_class + 1):
            # the block's numbers of this class: the first unranked, the next ones stepped to
            begin = max(first, number * step.per_class)
            end = min(last, (number + 1) * step.per_class)
            rep = step.reps[number]
            x_common = lines_held_cpu(rep, step.lines)
            fixing = land_class_cpu(number, rep, step, child_base, landing, stabiliser)
            weight = step.symmetries // (fixing + 1)
            compressed = compressed_o_cpu(begin - number * step.per_class, step)
            for index in range(begin, end):
                if index > begin:
                    compressed = next_set_cpu(compressed)
                o = expand_cpu(compressed, full & ~rep)
                record, canonical, missing = back_up_number_cpu(
                    o,
                    compressed,
                    rep,
                    x_common,
                    fixing,
                    stabiliser,
                    child_base,
                    landing,
                    children,
                    step,
                    child_records,
                )
                out[index - start] = record
                if record != NONE:
                    block_missing[block] += missing
                    counts[0, record] += canonical
                    counts[1, record] += weight
    return block_counts.sum(axis=0), int(block_missing.sum())


def count_range(step: PlyStep, start: int, stop: int, records: NDArray[np.uint8]) -> RecordCounts:
    """The counts of the positions holding each record among the numbers ``start ..
    stop-1`` of a ply, whose records are ``records`` (a ply's records made already: what
    :func:`back_up_range` counts as it makes them), in pieces (:mod:`solver.pieces`).
    Raises ``ValueError`` for a record no table holds."""
    if not 0 <= start <= stop <= step.records or len(records) != stop - start:
        raise ValueError(f"numbers {start}..{stop} are not within ply {step.ply}'s {step.records}")
    counts = RecordCounts.zero(step.ply == step.cells)
    for first, last in pieces(stop - start, BLOCK, BLOCK):
        with held():
            made, strange = _count(step, start + first, start + last, records[first:last])
        if strange >= 0:
            raise ValueError(
                f"ply {step.ply}, number {start + first + strange}: no record "
                f"{records[first + strange]} is made"
            )
        counts = counts + RecordCounts(made, counts.full_board)
    return counts


@numba.njit(parallel=True, nogil=True, cache=True)
def _count(
    step: PlyStep, start: int, stop: int, records: NDArray[np.uint8]
) -> tuple[NDArray[np.int64], int]:
    full = (1 << step.cells) - 1
    blocks = (stop - start + BLOCK - 1) // BLOCK
    block_counts = np.zeros((blocks, 2, RECORD_SLOTS), dtype=np.int64)
    strange = np.full(blocks, -1, dtype=np.int64)
    for block in numba.prange(blocks):
        first = start + block * BLOCK
        last = min(stop, first + BLOCK)
        counts = block_counts[block]
        stabiliser = np.zeros(8, dtype=np.int64)
        for number in range(first // step.per_class, (last - 1) // step.per_class + 1):
            # the block's numbers of this class, as in _back_up
            begin = max(first, number * step.per_class)
            end = min(last, (number + 1) * step.per_class)
            rep = step.reps[number]
            fixing = fixing_symmetries_cpu(rep, step, stabiliser)
            weight = step.symmetries // (fixing + 1)
            compressed = 0
            if fixing:  # only a symmetric X set's numbers need their O sets
                compressed = compressed_o_cpu(begin - number * step.per_class, step)
            for index in range(begin, end):
                if fixing and index > begin:
                    compressed = next_set_cpu(compressed)
                record = records[index - start]
                if record == NONE:
                    continue
                if record >= RECORD_SLOTS:
                    if strange[block] < 0:
                        strange[block] = index - start
                    continue
                canonical = 1
                if fixing:
                    free = full & ~rep
                    o = expand_cpu(compressed, free)
                    canonical = own_number_cpu(o, compressed, free, fixing, stabiliser, step)
                counts[0, record] += canonical
                counts[1, record] += weight
    found = -1
    for block in range(blocks):
        if strange[block] >= 0:
            found = strange[block]
            break
    return block_counts.sum(axis=0), found


def solve_in_memory(rules: Rules) -> list[tuple[NDArray[np.uint8], RecordCounts]]:
    """Every ply's records and counts, ply 0 first, all in memory: for small boards (the
    tests, and the twin the files are checked against)."""
    cache: dict[int, ClassTable] = {}
    plies: list[tuple[NDArray[np.uint8], RecordCounts]] = []
    child_records = np.zeros(0, dtype=np.uint8)
    for ply in range(rules.cells, -1, -1):
        step = ply_step(rules, ply, *class_tables(rules, ply, cache))
        records, counts = back_up_range(step, 0, step.records, child_records)
        plies.append((records, counts))
        child_records = records
    return plies[::-1]
