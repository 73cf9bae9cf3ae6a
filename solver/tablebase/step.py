"""The tablebase's ply step: every record of a ply from the records of the next, over ranks.

A table gives each number of a ply's index (:mod:`solver.tablebase.index`) one byte, its
**record**:

* ``0``: no position: the number's stones cannot arise in a game;
* ``1``: a draw (its remoteness is the empty cells: a drawn game fills the board);
* ``2 + r``: won or lost in ``r`` plies, for the side to move; ``r`` odd is a win, even a
  loss (the side that moves last wins, so the parity says who).

A position with the right stone counts arises in a game exactly when the side to move has no
line and either the last mover has none either, or one stone of the last mover lies on all its
lines (taken back, it leaves a position with no line, which any order of moves reaches). So a
number is classified where it stands, without a forward pass: no position, lost in 0 (the last
mover has won), a draw on a full board, or else backed up from its children's records by
negamax on the project's scores (:mod:`solver.value`).

:func:`back_up_range` does that for a range of numbers, over every core, and counts the
records by outcome, terminal or not, canonical and reachable, as it goes.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.index import (
    ClassTable,
    binomials,
    cell_tables,
    compress,
    expand,
    permute_set,
    popcount,
    rank_set,
    unrank_set,
)
from ttt_solve.solver.tablebase.lookup import DECIDED, DRAW, NONE, stone_counts
from ttt_solve.solver.value import WIN_SCORE, move_score, remoteness_of, score_of

BLOCK = 1 << 13
"""Numbers one thread takes at once: each block starts by unranking its first number."""

_compile = numba.njit(parallel=True, nogil=True, cache=True)
_compile_inline = numba.njit(nogil=True, cache=True, inline="always")
_move_score = _compile_inline(move_score)
_score_of = _compile_inline(score_of)
_remoteness_of = _compile_inline(remoteness_of)


def record_of(score: int, empty_cells: int) -> int:
    """The record of a position's score (see the module docstring)."""
    return DRAW if score == 0 else DECIDED + int(remoteness_of(score, empty_cells))


@_compile_inline
def _score(record: int) -> int:
    if record == DRAW:
        return 0
    remoteness = record - DECIDED
    sign = 1 if remoteness & 1 else -1
    score: int = _score_of(sign, remoteness)
    return score


@_compile_inline
def _record(score: int) -> int:
    if score == 0:
        return DRAW
    remoteness: int = _remoteness_of(score, 0)
    return DECIDED + remoteness


@_compile_inline
def _end_record(last_mover_common: int, ply: int, cells: int) -> int:
    """The record of a reachable position whose game is over (lost in 0 when the last mover
    holds a line, a draw on a full board), or :data:`NONE` while it goes on."""
    if last_mover_common != -1:
        return DECIDED
    if ply == cells:
        return DRAW
    return NONE


@_compile_inline
def _outcome(record: int) -> int:
    """The outcome of a record, as :class:`RecordCounts` numbers it: 0 win, 1 draw, 2 loss."""
    if record == DRAW:
        return 1
    return 0 if (record - DECIDED) & 1 else 2


@_compile_inline
def _lines_held(stones: int, lines: NDArray[np.int64]) -> int:
    """The cells common to every line the stones hold; -1 when they hold none."""
    common = -1
    for line in lines:
        if stones & line == line:
            common &= line
    return common


class RecordCounts(NamedTuple):
    """How many records of each kind a range holds: ``counts[outcome, terminal, kind]`` with
    outcome 0 win, 1 draw, 2 loss (the order of :class:`~ttt_solve.solver.value.Outcome`),
    terminal 0 open, 1 game over, and kind 0 canonical positions (one per class of symmetric
    positions), 1 reachable positions (every image counted)."""

    counts: NDArray[np.int64]

    @classmethod
    def zero(cls) -> RecordCounts:
        return cls(np.zeros((3, 2, 2), dtype=np.int64))

    def __add__(self, other: object) -> RecordCounts:
        if not isinstance(other, RecordCounts):
            return NotImplemented
        return RecordCounts(self.counts + other.counts)

    @property
    def canonical(self) -> int:
        return int(self.counts[..., 0].sum())

    @property
    def reachable(self) -> int:
        return int(self.counts[..., 1].sum())


class PlyStep(NamedTuple):
    """What the ply step of one ply needs of the game, made once per ply (:func:`ply_step`)."""

    rules: Rules
    ply: int
    reps: NDArray[np.int64]
    per_class: int
    child_per_class: int
    child_classes: NDArray[np.int32]
    child_symmetries: NDArray[np.uint8]
    child_reps: NDArray[np.int64]


def ply_step(rules: Rules, ply: int, classes: ClassTable, child: ClassTable | None) -> PlyStep:
    """The ply step of ``ply``, from the class table of its X sets and of its children's
    (``None`` for the last ply; the same table when O moves)."""
    from math import comb

    x, o = stone_counts(ply)
    empty_i32 = np.zeros(0, dtype=np.int32)
    if child is None or ply == rules.cells:
        return PlyStep(
            rules,
            ply,
            classes.reps,
            comb(rules.cells - x, o),
            0,
            empty_i32,
            np.zeros(0, dtype=np.uint8),
            np.zeros(0, dtype=np.int64),
        )
    child_x, child_o = stone_counts(ply + 1)
    return PlyStep(
        rules,
        ply,
        classes.reps,
        comb(rules.cells - x, o),
        comb(rules.cells - child_x, child_o),
        child.classes,
        child.symmetries,
        child.reps,
    )


def back_up_range(
    step: PlyStep, start: int, stop: int, child_records: NDArray[np.uint8]
) -> tuple[NDArray[np.uint8], RecordCounts]:
    """The records of the numbers ``start .. stop-1`` of a ply, from the next ply's records
    (any array of ``uint8``: a memory map does), and their counts. Raises ``AssertionError``
    if a child stands at a number recorded as no position (a damaged next ply)."""
    rules = step.rules
    if not 0 <= start <= stop <= len(step.reps) * step.per_class:
        raise ValueError(
            f"numbers {start}..{stop} are not within ply {step.ply}'s "
            f"{len(step.reps) * step.per_class}"
        )
    records, counts, missing = _back_up(
        step.ply,
        rules.cells,
        start,
        stop,
        step.reps,
        step.per_class,
        step.child_per_class,
        step.child_classes,
        step.child_symmetries,
        step.child_reps,
        cell_tables(rules),
        np.array(rules.symmetries, dtype=np.int64),
        np.array(rules.lines, dtype=np.int64),
        binomials(rules.cells),
        child_records,
    )
    if missing:
        raise AssertionError(f"ply {step.ply}: {missing} children stand at no position")
    return records, RecordCounts(counts)


@_compile
def _back_up(
    ply: int,
    cells: int,
    start: int,
    stop: int,
    reps: NDArray[np.int64],
    per_class: int,
    child_per_class: int,
    child_classes: NDArray[np.int32],
    child_symmetries: NDArray[np.uint8],
    child_reps: NDArray[np.int64],
    tables: NDArray[np.int64],
    perms: NDArray[np.int64],
    lines: NDArray[np.int64],
    binom: NDArray[np.int64],
    child_records: NDArray[np.uint8],
) -> tuple[NDArray[np.uint8], NDArray[np.int64], int]:
    x_count = (ply + 1) // 2
    o_count = ply // 2
    x_moves = ply % 2 == 0
    full = (1 << int(cells)) - 1
    symmetries = perms.shape[0]
    total = stop - start
    blocks = (total + BLOCK - 1) // BLOCK
    out = np.empty(total, dtype=np.uint8)
    block_counts = np.zeros((blocks, 3, 2, 2), dtype=np.int64)
    block_missing = np.zeros(blocks, dtype=np.int64)
    for block in numba.prange(blocks):
        first = start + block * BLOCK
        last = min(stop, first + BLOCK)
        counts = block_counts[block]
        # the class in hand, and what its numbers share
        number = -1
        rank = first % per_class
        compressed = 0
        rep = 0
        free = 0
        x_common = -1
        weight = 0
        stabiliser = np.zeros(symmetries, dtype=np.int64)
        fixing = 0
        child_base = np.zeros(cells, dtype=np.int64)
        # where each O stone lands among the child's free cells, by move
        landing = np.zeros((cells, cells), dtype=np.int64)
        for index in range(first, last):
            if number < 0 or rank == per_class:
                number = index // per_class
                rank = index % per_class
                compressed = unrank_set(rank, o_count, cells - x_count, binom)
                rep = reps[number]
                free = full & ~rep
                x_common = _lines_held(rep, lines)
                fixing = 0
                for s in range(1, symmetries):
                    if permute_set(rep, tables, s) == rep:
                        stabiliser[fixing] = s
                        fixing += 1
                weight = symmetries // (fixing + 1)
                if ply < cells:
                    for cell in range(cells):
                        if not (free >> int(cell)) & 1:
                            continue
                        if x_moves:
                            child_x = rep | (1 << int(cell))
                            child_rank = rank_set(child_x, binom)
                            child_number = int(child_classes[child_rank])
                            symmetry = child_symmetries[child_rank]
                            child_free = full & ~child_reps[child_number]
                            child_base[cell] = child_number * child_per_class
                            for stone in range(cells):
                                below = (1 << perms[symmetry, stone]) - 1
                                landing[cell, stone] = popcount(child_free & below)
                        else:
                            below = (1 << int(cell)) - 1
                            child_base[cell] = number * child_per_class
                            landing[0, cell] = popcount(free & below)
            elif index != first:
                # Gosper's hack: the next set of as many positions, in colex order
                low = compressed & -compressed
                ripple = compressed + low
                compressed = (((ripple ^ compressed) >> 2) // low) | ripple
            rank += 1
            o = expand(compressed, free)
            x = rep
            mover = x if x_moves else o
            last_mover_common = _lines_held(o, lines) if x_moves else x_common
            if _lines_held(mover, lines) != -1 or last_mover_common == 0:
                out[index - start] = NONE
                continue
            canonical = 1
            for f in range(fixing):
                image = permute_set(o, tables, stabiliser[f])
                image_positions = compress(image, free)
                if image_positions < compressed:
                    canonical = 0
                    break
            record = _end_record(last_mover_common, ply, cells)
            terminal = 1
            if record == NONE:
                terminal = 0
                top = -2 * WIN_SCORE
                empty = free & ~o
                while empty:
                    bit = empty & -empty
                    empty ^= bit
                    cell = popcount(bit - 1)
                    if x_moves:
                        positions = 0
                        stones = o
                        while stones:
                            stone_bit = stones & -stones
                            stones ^= stone_bit
                            stone = popcount(stone_bit - 1)
                            positions |= 1 << landing[cell, stone]
                    else:
                        positions = compressed | (1 << landing[0, cell])
                    child = child_base[cell] + rank_set(positions, binom)
                    child_record = int(child_records[child])
                    if child_record == NONE:
                        block_missing[block] += 1
                        continue
                    score: int = _move_score(_score(child_record))
                    if score > top:
                        top = score
                record = _record(top)
            out[index - start] = np.uint8(record)
            outcome = _outcome(record)
            counts[outcome, terminal, 0] += canonical
            counts[outcome, terminal, 1] += weight
    return out, block_counts.sum(axis=0), int(block_missing.sum())


@_compile
def _histogram(records: NDArray[np.uint8], chunks: int) -> NDArray[np.int64]:
    counts = np.zeros((chunks, 256), dtype=np.int64)
    size = (len(records) + chunks - 1) // chunks
    for chunk in numba.prange(chunks):
        for i in range(chunk * size, min(len(records), (chunk + 1) * size)):
            counts[chunk, records[i]] += 1
    total: NDArray[np.int64] = counts.sum(axis=0)
    return total


def record_histogram(records: NDArray[np.uint8]) -> NDArray[np.int64]:
    """How many numbers hold each record (256 counts): a ply's remoteness table over its
    numbers, read over every core."""
    if len(records) == 0:
        return np.zeros(256, dtype=np.int64)
    return np.asarray(_histogram(records, 256), dtype=np.int64)


@numba.njit(nogil=True, cache=True)
def first_number(records: NDArray[np.uint8], record: int) -> int:
    """The first number holding ``record``, or -1."""
    for i in range(len(records)):
        if records[i] == record:
            return i
    return -1


def class_tables(
    rules: Rules, ply: int, cache: dict[int, ClassTable]
) -> tuple[ClassTable, ClassTable | None]:
    """The class tables of ``ply``'s X sets and of its children's, made once each in
    ``cache`` (by X count), which keeps only those two."""
    from ttt_solve.solver.tablebase.index import class_table

    x, _ = stone_counts(ply)
    wanted = [x] if ply == rules.cells else [x, stone_counts(ply + 1)[0]]
    for size in list(cache):
        if size not in wanted:
            del cache[size]
    for size in wanted:
        if size not in cache:
            cache[size] = class_table(rules, size)
    return cache[x], None if ply == rules.cells else cache[wanted[1]]


def solve_in_memory(rules: Rules) -> list[tuple[NDArray[np.uint8], RecordCounts]]:
    """Every ply's records and counts, ply 0 first, all in memory: for small boards (the
    tests, and the twin the files are checked against)."""
    cache: dict[int, ClassTable] = {}
    plies: list[tuple[NDArray[np.uint8], RecordCounts]] = []
    child_records = np.zeros(0, dtype=np.uint8)
    for ply in range(rules.cells, -1, -1):
        classes, child = class_tables(rules, ply, cache)
        step = ply_step(rules, ply, classes, child)
        records, counts = back_up_range(step, 0, len(step.reps) * step.per_class, child_records)
        plies.append((records, counts))
        child_records = records
    return plies[::-1]
