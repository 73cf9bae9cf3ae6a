"""The classes of a ply's X sets under the board's symmetries: how many, and which is which.

A class's representative is its X set of smallest rank; classes are numbered in the order of
their representatives' ranks (:mod:`solver.tablebase.index`). :func:`class_table` lists every
X set's class and a symmetry that maps it onto the representative, over every core;
:func:`class_count` counts the classes by Burnside's lemma, with no table made.
"""

from __future__ import annotations

from math import comb
from typing import NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.pieces import held, pieces
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.compiled import (
    binomials,
    smallest_image_cpu,
    symmetries_of,
    unrank_set_cpu,
)
from ttt_solve.solver.tablebase.index import class_count, stone_counts

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
    first: int,
    size: int,
    cells: int,
    symmetries: int,
    tables: NDArray[np.int64],
    binom: NDArray[np.int64],
    smallest: NDArray[np.int64],
    symmetry: NDArray[np.int64],
) -> None:
    """For the sets of ``size`` cells of ranks ``first`` on, as many as ``smallest`` holds:
    the smallest rank among each one's images and the first symmetry giving it."""
    for i in numba.prange(len(smallest)):
        stones = unrank_set_cpu(first + i, size, cells, binom)
        smallest[i], symmetry[i] = smallest_image_cpu(stones, symmetries, tables, binom)


@_compile
def _unrank_all(
    ranks: NDArray[np.int64], size: int, cells: int, binom: NDArray[np.int64]
) -> NDArray[np.int64]:
    out = np.empty(len(ranks), dtype=np.int64)
    for i in numba.prange(len(ranks)):
        out[i] = unrank_set_cpu(ranks[i], size, cells, binom)
    return out


def sets_of_ranks(ranks: NDArray[np.int64], size: int, cells: int) -> NDArray[np.int64]:
    """The sets of ``size`` cells (of ``cells``) of these ranks (a file's representatives)."""
    with held():
        found: NDArray[np.int64] = _unrank_all(ranks, size, cells, binomials())
    return found


def class_table(rules: Rules, x: int) -> ClassTable:
    """The classes of the sets of ``x`` cells of the board (a kernel over every core, in
    pieces: :mod:`solver.pieces`)."""
    binom = binomials()
    tables = symmetries_of(rules)
    count = comb(rules.cells, x)
    smallest = np.empty(count, dtype=np.int64)
    symmetries = np.empty(count, dtype=np.int64)
    for first, last in pieces(count):
        with held():
            _smallest_images(
                first,
                x,
                rules.cells,
                len(rules.symmetries),
                tables,
                binom,
                smallest[first:last],
                symmetries[first:last],
            )
    is_rep = smallest == np.arange(count, dtype=np.int64)
    rep_ranks = np.flatnonzero(is_rep).astype(np.int64)
    numbers = np.cumsum(is_rep, dtype=np.int64) - 1
    classes = numbers[smallest].astype(np.int32)
    with held():
        reps = _unrank_all(rep_ranks, x, rules.cells, binom)
    return ClassTable(classes, symmetries, rep_ranks, reps)


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
