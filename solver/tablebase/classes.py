"""The classes of a ply's X sets under the board's symmetries: how many, and which is which.

A class's representative is its X set of smallest rank; classes are numbered in the order of
their representatives' ranks (:mod:`solver.tablebase.index`). :func:`class_table` lists every
X set's class and a symmetry that maps it onto the representative, over every core;
:func:`class_count` counts the classes by Burnside's lemma, with no table made.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb
from typing import NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.compiled import (
    binomials,
    smallest_image_cpu,
    symmetries_of,
    unrank_set_cpu,
)
from ttt_solve.solver.tablebase.index import STRIDE_BITS, stone_counts

_compile = numba.njit(parallel=True, nogil=True, cache=True)


class ClassTable(NamedTuple):
    """The classes of the X sets of one size.

    * ``classes``: the class of each X set, by its rank (``int32``, ``C(N, x)`` entries),
    * ``symmetries``: a symmetry mapping each X set to its class's representative (``int64``,
      as the kernels do arithmetic on it: Numba keeps an unsigned byte unsigned),
    * ``rep_ranks``: each class's representative's rank, ascending (``int64``),
    * ``reps``: each class's representative as a cell set (``int64``).
    """

    classes: NDArray[np.int32]
    symmetries: NDArray[np.int64]
    rep_ranks: NDArray[np.int64]
    reps: NDArray[np.int64]

    @classmethod
    def empty(cls) -> ClassTable:
        """No class: the children's table of the last ply, which has no children."""
        return cls(
            np.zeros(0, dtype=np.int32),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
        )


@_compile
def _smallest_images(
    size: int, cells: int, symmetries: int, tables: NDArray[np.int64], binom: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """For every set of ``size`` cells, by rank: the smallest rank among its images and the
    first symmetry giving it."""
    count = binom[(cells << STRIDE_BITS) | size]
    smallest = np.empty(count, dtype=np.int64)
    symmetry = np.empty(count, dtype=np.int64)
    for i in numba.prange(count):
        stones = unrank_set_cpu(i, size, cells, binom)
        smallest[i], symmetry[i] = smallest_image_cpu(stones, symmetries, tables, binom)
    return smallest, symmetry


@_compile
def _unrank_all(
    ranks: NDArray[np.int64], size: int, cells: int, binom: NDArray[np.int64]
) -> NDArray[np.int64]:
    out = np.empty(len(ranks), dtype=np.int64)
    for i in numba.prange(len(ranks)):
        out[i] = unrank_set_cpu(ranks[i], size, cells, binom)
    return out


def class_table(rules: Rules, x: int) -> ClassTable:
    """The classes of the sets of ``x`` cells of the board (a kernel over every core)."""
    binom = binomials()
    smallest, symmetries = _smallest_images(
        x, rules.cells, len(rules.symmetries), symmetries_of(rules), binom
    )
    is_rep = smallest == np.arange(len(smallest), dtype=np.int64)
    rep_ranks = np.flatnonzero(is_rep).astype(np.int64)
    numbers = np.cumsum(is_rep, dtype=np.int64) - 1
    classes = numbers[smallest].astype(np.int32)
    return ClassTable(classes, symmetries, rep_ranks, _unrank_all(rep_ranks, x, rules.cells, binom))


def class_tables(
    rules: Rules, ply: int, cache: dict[int, ClassTable]
) -> tuple[ClassTable, ClassTable | None]:
    """The class tables of ``ply``'s X sets and of its children's (``None`` for the last
    ply), made once each in ``cache`` (by X count), which keeps only those two."""
    x, _ = stone_counts(ply)
    wanted = [x] if ply == rules.cells else [x, stone_counts(ply + 1)[0]]
    for size in list(cache):
        if size not in wanted:
            del cache[size]
    for size in wanted:
        if size not in cache:
            cache[size] = class_table(rules, size)
    return cache[x], None if ply == rules.cells else cache[wanted[1]]


def class_table_bytes(rules: Rules) -> int:
    """The memory of the class tables of the two largest X counts: 12 bytes per X set and
    16 per class."""
    sizes = sorted(
        comb(rules.cells, x) * 12 + class_count(rules, x) * 16 for x in range(rules.cells + 1)
    )
    return sum(sizes[-2:])


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
