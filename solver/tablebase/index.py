"""The tablebase's index: a number for every position of a ply, reduced by the X stones' symmetry.

A position of ply ``p`` has ``x = ceil(p/2)`` X stones and ``o = floor(p/2)`` O stones on
``N`` cells. Sets of cells are ranked by the combinatorial number system: the set
``{c_1 < c_2 < ... < c_m}`` has rank ``C(c_1, 1) + C(c_2, 2) + ... + C(c_m, m)``, its place
among the ``m``-sets in colex order (the order of the sets' bitmasks as integers).

The X sets of a ply fall into **classes** under the board's symmetries (8 on a square board,
4 on a rectangle). A class's representative is its X set of smallest rank, and classes are
numbered in the order of their representatives' ranks. A position stands in the index as its
image whose X set is the representative:

    index = class * C(N - x, o) + rank of the image's O set among the representative's free cells

So a ply holds ``classes * C(N - x, o)`` numbers, about an eighth (a quarter) of the dense
``C(N, x) * C(N - x, o)``, and a position is ranked without a search: the class of an X set
comes from a table of ``C(N, x)`` entries (:func:`class_table`, for the build) or from the
representatives' ranks by bisection (:class:`solver.tablebase.lookup.PlyIndex`, for one
position). Every number stands for a position; when a representative is symmetric itself, a
position may stand at several numbers (its images under the representative's own symmetries),
each holding its record.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb
from typing import NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.rules import KEY_CHUNK_BITS, KEY_CHUNK_MASK, Rules
from ttt_solve.solver.tablebase.lookup import expand_of, stone_counts

MAX_TABLE_CELLS = 25
"""Boards of more than 25 cells stay with the prover: 5x5 k=4 is the largest table made."""

_compile = numba.njit(parallel=True, nogil=True, cache=True)
_compile_serial = numba.njit(nogil=True, cache=True)
_compile_inline = numba.njit(nogil=True, cache=True, inline="always")


def binomials(cells: int) -> NDArray[np.int64]:
    """``C(n, m)`` for ``0 <= n, m <= cells + 1``, as the kernels take them."""
    return np.array(
        [[comb(n, m) for m in range(cells + 2)] for n in range(cells + 2)], dtype=np.int64
    )


def cell_tables(rules: Rules) -> NDArray[np.int64]:
    """``[symmetry, chunk, byte]``: the image of 8 bits of a cell set under each symmetry
    (:attr:`Rules.key_tables` cut to the cells' bits), as the kernels take them."""
    chunks = -(-rules.cells // KEY_CHUNK_BITS)
    return np.array([table[:chunks] for table in rules.key_tables], dtype=np.int64)


# -- the combinatorial number system, compiled -----------------------------------------------


@_compile_inline
def rank_set(stones: int, binom: NDArray[np.int64]) -> int:
    """The rank of a cell set among the sets of its size (colex order)."""
    rank = 0
    m = 1
    while stones:
        low = stones & -stones
        rank += binom[_bit_index(low), m]
        stones ^= low
        m += 1
    return rank


@_compile_serial
def unrank_set(rank: int, size: int, cells: int, binom: NDArray[np.int64]) -> int:
    """The cell set of ``size`` cells among ``cells`` with this rank (colex order)."""
    stones = 0
    rest = rank
    top = cells - 1
    for m in range(size, 0, -1):
        while binom[top, m] > rest:
            top -= 1
        rest -= binom[top, m]
        stones |= 1 << int(top)
        top -= 1
    return stones


@_compile_inline
def popcount(bits: int) -> int:
    """The number of set bits (of a non-negative int64), by the SWAR sum."""
    bits = bits - ((bits >> 1) & 0x5555555555555555)
    bits = (bits & 0x3333333333333333) + ((bits >> 2) & 0x3333333333333333)
    bits = (bits + (bits >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (bits * 0x0101010101010101) >> 56


@_compile_inline
def _bit_index(bit: int) -> int:
    """The index of a single set bit: the bits below it."""
    return popcount(bit - 1)


@_compile_inline
def permute_set(stones: int, tables: NDArray[np.int64], symmetry: int) -> int:
    """The image of a cell set under one symmetry: a table look-up per 8 cells."""
    image = 0
    chunk = 0
    while stones:
        image |= tables[symmetry, chunk, stones & KEY_CHUNK_MASK]
        stones >>= KEY_CHUNK_BITS
        chunk += 1
    return image


@_compile_inline
def compress(stones: int, free: int) -> int:
    """The stones as a set of positions among the ``free`` cells (bit ``i``: the ``i``-th
    free cell, counted from cell 0); every stone must be on a free cell."""
    out = 0
    position = 0
    while free:
        low = free & -free
        if stones & low:
            out |= 1 << int(position)
        free ^= low
        position += 1
    return out


expand = _compile_inline(expand_of)
"""The inverse of :func:`compress`, compiled: positions among the ``free`` cells back to cells."""


# -- the classes of X sets ---------------------------------------------------------------------


class ClassTable(NamedTuple):
    """The classes of the X sets of one size.

    * ``classes``: the class of each X set, by its rank (``int32``, ``C(N, x)`` entries),
    * ``symmetries``: a symmetry mapping each X set to its class's representative (``uint8``),
    * ``rep_ranks``: each class's representative's rank, ascending (``int64``),
    * ``reps``: each class's representative as a cell set (``int64``).
    """

    classes: NDArray[np.int32]
    symmetries: NDArray[np.uint8]
    rep_ranks: NDArray[np.int64]
    reps: NDArray[np.int64]


@_compile
def _smallest_images(
    size: int, cells: int, tables: NDArray[np.int64], binom: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.uint8]]:
    """For every set of ``size`` cells, by rank: the smallest rank among its images and the
    first symmetry giving it."""
    count = binom[cells, size]
    smallest = np.empty(count, dtype=np.int64)
    symmetry = np.empty(count, dtype=np.uint8)
    for i in numba.prange(count):
        rank = int(i)
        stones = unrank_set(rank, size, cells, binom)
        best, best_symmetry = rank, 0
        for s in range(1, tables.shape[0]):
            image = rank_set(permute_set(stones, tables, s), binom)
            if image < best:
                best, best_symmetry = image, s
        smallest[i] = best
        symmetry[i] = best_symmetry
    return smallest, symmetry


@_compile
def _unrank_all(
    ranks: NDArray[np.int64], size: int, cells: int, binom: NDArray[np.int64]
) -> NDArray[np.int64]:
    out = np.empty(len(ranks), dtype=np.int64)
    for i in numba.prange(len(ranks)):
        out[i] = unrank_set(ranks[i], size, cells, binom)
    return out


def class_table(rules: Rules, x: int) -> ClassTable:
    """The classes of the sets of ``x`` cells of the board (a kernel over every core)."""
    binom = binomials(rules.cells)
    smallest, symmetries = _smallest_images(x, rules.cells, cell_tables(rules), binom)
    is_rep = smallest == np.arange(len(smallest), dtype=np.int64)
    rep_ranks = np.flatnonzero(is_rep).astype(np.int64)
    numbers = np.cumsum(is_rep, dtype=np.int64) - 1
    classes = numbers[smallest].astype(np.int32)
    return ClassTable(classes, symmetries, rep_ranks, _unrank_all(rep_ranks, x, rules.cells, binom))


def class_count(rules: Rules, x: int) -> int:
    """How many classes the sets of ``x`` cells fall into, by Burnside's lemma (the average
    over the symmetries of the sets each leaves fixed): no table made."""
    total = 0
    for perm in rules.symmetries:
        cycles = _cycle_lengths(perm)
        total += _sets_of_cycles(cycles, x)
    return total // len(rules.symmetries)


def _cycle_lengths(perm: Sequence[int]) -> list[int]:
    seen = [False] * len(perm)
    lengths = []
    for start in range(len(perm)):
        length = 0
        cell = start
        while not seen[cell]:
            seen[cell] = True
            cell = perm[cell]
            length += 1
        if length:
            lengths.append(length)
    return lengths


def _sets_of_cycles(cycles: list[int], size: int) -> int:
    """How many sets of ``size`` cells are unions of whole cycles (a knapsack count)."""
    ways = [1] + [0] * size
    for length in cycles:
        for total in range(size, length - 1, -1):
            ways[total] += ways[total - length]
    return ways[size]


def ply_shape(rules: Rules, ply: int) -> tuple[int, int]:
    """``(classes, records per class)`` of a ply's index."""
    x, o = stone_counts(ply)
    return class_count(rules, x), comb(rules.cells - x, o)


def ply_records(rules: Rules, ply: int) -> int:
    """The numbers in a ply's index."""
    classes, per_class = ply_shape(rules, ply)
    return classes * per_class


@_compile_inline
def number_of(
    x: int,
    o: int,
    per_class: int,
    classes: NDArray[np.int32],
    symmetries: NDArray[np.uint8],
    reps: NDArray[np.int64],
    full: int,
    tables: NDArray[np.int64],
    binom: NDArray[np.int64],
) -> int:
    """The number of the position with these X and O cells in its ply's index, from the class
    table of the ply's X sets: the kernels' :meth:`PlyIndex.index`."""
    rank = rank_set(x, binom)
    number = int(classes[rank])
    image = permute_set(o, tables, symmetries[rank])
    found: int = number * per_class + rank_set(compress(image, full & ~reps[number]), binom)
    return found


@_compile
def _indexes(
    x: NDArray[np.int64],
    o: NDArray[np.int64],
    per_class: int,
    classes: NDArray[np.int32],
    symmetries: NDArray[np.uint8],
    reps: NDArray[np.int64],
    full: int,
    tables: NDArray[np.int64],
    binom: NDArray[np.int64],
) -> NDArray[np.int64]:
    out = np.empty(len(x), dtype=np.int64)
    for i in numba.prange(len(x)):
        out[i] = number_of(x[i], o[i], per_class, classes, symmetries, reps, full, tables, binom)
    return out


def indexes(
    rules: Rules, ply: int, table: ClassTable, x: NDArray[np.int64], o: NDArray[np.int64]
) -> NDArray[np.int64]:
    """The numbers of many positions of ``ply`` (X and O cell sets, aligned), given the class
    table of the ply's X sets."""
    xs, os_ = stone_counts(ply)
    out: NDArray[np.int64] = _indexes(
        np.ascontiguousarray(x, dtype=np.int64),
        np.ascontiguousarray(o, dtype=np.int64),
        comb(rules.cells - xs, os_),
        table.classes,
        table.symmetries,
        table.reps,
        rules.full,
        cell_tables(rules),
        binomials(rules.cells),
    )
    return out
