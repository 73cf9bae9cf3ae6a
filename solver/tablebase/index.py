"""The tablebase's index: a number for every position of a ply, reduced by the X stones' symmetry.

A position of ply ``p`` has ``x = ceil(p/2)`` X stones and ``o = floor(p/2)`` O stones on
``N`` cells. Sets of cells are ranked by the combinatorial number system: the set
``{c_1 < c_2 < ... < c_m}`` has rank ``C(c_1, 1) + C(c_2, 2) + ... + C(c_m, m)``, its place
among the ``m``-sets in colex order (the order of the sets' bitmasks as integers).

The X sets of a ply fall into **classes** under the board's symmetries (8 on a square board,
4 on a rectangle). A class's representative is its X set of smallest rank, and classes are
numbered in the order of their representatives' ranks. A position stands in the index as its
image whose X set is the representative:

    number = class * C(N - x, o) + rank of the image's O set among the representative's free cells

So a ply holds ``classes * C(N - x, o)`` numbers, about an eighth (a quarter) of the dense
``C(N, x) * C(N - x, o)``, and a position is numbered without a search: the class of an X set
comes from a table of ``C(N, x)`` entries (:func:`number_of`, :mod:`solver.tablebase.classes`)
or from the representatives' ranks by bisection over :func:`smallest_image` (one position at a
time). Every number stands for a position; when a representative is symmetric itself, a
position may stand at several numbers (its images under the representative's own symmetries),
each holding its record.

**Each formula is written once, here, in plain integer Python** (and the records' in
:mod:`solver.tablebase.record`): the one-position path calls these functions as they are, with
lists for tables (:func:`binomial_table`, :func:`symmetry_table`), and loads neither NumPy nor
Numba; :func:`twins` compiles the same source for the CPU (:mod:`solver.tablebase.compiled`:
``rank_set_cpu``, ...) and for CUDA (:mod:`solver.tablebase.gpu`), each twin calling the others'
twins. So they use only what all three targets share: ints, their operators, loops, tuples and
indexing of flat tables.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from math import comb
from typing import Any, Protocol

from ttt_solve.solver.rules import KEY_CHUNK_BITS, Rules

MAX_TABLE_CELLS = 25
"""Boards of more than 25 cells stay with the prover: 5x5 k=4 is the largest table made."""

STRIDE_BITS = 5
"""The binomial table is flat, ``C(n, m)`` at ``n << STRIDE_BITS | m``: 32 a row, enough for
every board a table is made for."""

CHUNK_BITS = KEY_CHUNK_BITS
"""Cells a symmetry table permutes at one look-up (8: tables of 256 entries)."""

CHUNKS = 4
"""Look-ups a cell set of at most 32 cells takes: the symmetry table holds 4 a symmetry."""


class Ints(Protocol):
    """A table the formulas read: a tuple of ints in plain Python, an array in a kernel."""

    def __getitem__(self, index: int, /) -> Any: ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Any]: ...


# -- the tables the formulas read: flat, so that a list and an array serve alike -------------


@cache
def binomial_table() -> tuple[int, ...]:
    """``C(n, m)`` for ``0 <= n, m < 32``, flat: ``C(n, m)`` at ``n << 5 | m``."""
    size = 1 << STRIDE_BITS
    return tuple(comb(n, m) for n in range(size) for m in range(size))


def symmetry_table(rules: Rules) -> tuple[int, ...]:
    """The image of 8 cells under each symmetry, flat: the image of the cells ``byte`` of
    chunk ``c`` (cells ``8c .. 8c+7``) under symmetry ``s`` at ``s << 10 | c << 8 | byte``
    (from :attr:`Rules.key_tables`, cut to the cells)."""
    if rules.cells > CHUNKS * CHUNK_BITS:
        raise ValueError(f"{rules.name}: {rules.cells} cells; a table holds at most 32")
    out: list[int] = []
    for tables in rules.key_tables:
        for chunk in range(CHUNKS):
            out += tables[chunk] if chunk < len(tables) else [0] * (1 << CHUNK_BITS)
    return tuple(out)


def stone_counts(ply: int) -> tuple[int, int]:
    """``(x, o)``: the X and O stones on the board at ``ply`` (X moves first)."""
    return (ply + 1) // 2, ply // 2


# -- the shape of a ply: classes by Burnside's lemma -------------------------------------


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


# -- the formulas ---------------------------------------------------------------------------


def popcount(bits: int) -> int:
    """The number of set bits of a non-negative 64-bit int, by the SWAR sum (the last mask
    keeps Python's unbounded ints to the byte the 64-bit product leaves on top)."""
    bits = bits - ((bits >> 1) & 0x5555555555555555)
    bits = (bits & 0x3333333333333333) + ((bits >> 2) & 0x3333333333333333)
    bits = (bits + (bits >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((bits * 0x0101010101010101) >> 56) & 0xFF


def rank_set(stones: int, binom: Ints) -> int:
    """The rank of a cell set among the sets of its size (colex order)."""
    rank = 0
    m = 1
    while stones:
        low = stones & -stones
        rank += binom[(popcount(low - 1) << STRIDE_BITS) | m]
        stones ^= low
        m += 1
    return rank


def unrank_set(rank: int, size: int, cells: int, binom: Ints) -> int:
    """The set of ``size`` cells among ``cells`` with this rank (:func:`rank_set`'s inverse)."""
    stones = 0
    rest = rank
    top = cells - 1
    for m in range(size, 0, -1):
        while binom[(top << STRIDE_BITS) | m] > rest:
            top -= 1
        rest -= binom[(top << STRIDE_BITS) | m]
        stones |= 1 << top
        top -= 1
    return stones


def next_set(stones: int) -> int:
    """The set of as many cells that follows ``stones`` (not empty) in colex order: the set
    of the next rank, by Gosper's hack."""
    low = stones & -stones
    ripple = stones + low
    return (((ripple ^ stones) >> 2) // low) | ripple


def permute_set(stones: int, tables: Ints, symmetry: int) -> int:
    """The image of a cell set under one symmetry: a look-up per 8 cells."""
    image = 0
    at = int(symmetry) << (2 + CHUNK_BITS)
    while stones:
        image |= tables[at | (stones & 0xFF)]
        stones >>= CHUNK_BITS
        at += 1 << CHUNK_BITS
    return image


def compress(stones: int, free: int) -> int:
    """The stones as a set of positions among the ``free`` cells (bit ``i``: the ``i``-th
    free cell, counted from cell 0); every stone must be on a free cell."""
    out = 0
    position = 0
    while free:
        low = free & -free
        if stones & low:
            out |= 1 << position
        free ^= low
        position += 1
    return out


def expand(positions: int, free: int) -> int:
    """:func:`compress`'s inverse: positions among the ``free`` cells back to cells."""
    out = 0
    while free:
        low = free & -free
        if positions & 1:
            out |= low
        positions >>= 1
        free ^= low
    return out


def smallest_image(stones: int, symmetries: int, tables: Ints, binom: Ints) -> tuple[int, int]:
    """``(rank, symmetry)``: the smallest rank among a cell set's images, and the first
    symmetry giving it (the class's representative, and the symmetry that maps the set onto
    it, as the class table holds them)."""
    # Sets of one size rank in colex order, which is the order of their masks as integers:
    # the images are compared as masks and only the smallest is ranked.
    best = stones
    best_symmetry = 0
    for symmetry in range(1, symmetries):
        image = permute_set(stones, tables, symmetry)
        if image < best:
            best = image
            best_symmetry = symmetry
    return rank_set(best, binom), best_symmetry


def number_in_class(
    klass: int, per_class: int, rep: int, image: int, full: int, binom: Ints
) -> int:
    """The number of a position whose X set is in class ``klass`` (of representative
    ``rep``), given ``image``, its O set moved by the symmetry that maps its X set onto
    ``rep``."""
    return klass * per_class + rank_set(compress(image, full & ~rep), binom)


def number_of(
    x: int,
    o: int,
    per_class: int,
    classes: Ints,
    class_symmetries: Ints,
    reps: Ints,
    full: int,
    tables: Ints,
    binom: Ints,
) -> int:
    """The number of the position with these X and O cells, from the class table of its
    ply's X sets (:class:`solver.tablebase.classes.ClassTable`)."""
    rank = rank_set(x, binom)
    klass = int(classes[rank])
    image = permute_set(o, tables, class_symmetries[rank])
    return number_in_class(klass, per_class, reps[klass], image, full, binom)


def o_at(rank: int, rep: int, o_count: int, cells: int, binom: Ints) -> int:
    """The O set of the position at the ``rank``-th number of the class of representative
    ``rep`` (a number is ``class * per_class + rank``)."""
    full = (1 << cells) - 1
    return expand(unrank_set(rank, o_count, cells - popcount(rep), binom), full & ~rep)


FORMULAS: tuple[Callable[..., Any], ...] = (
    popcount,
    rank_set,
    unrank_set,
    next_set,
    permute_set,
    compress,
    expand,
    smallest_image,
    number_in_class,
    number_of,
    o_at,
)
"""The index's formulas, as :func:`twins` compiles them."""


def twins(
    formulas: Iterable[Callable[..., Any]],
    compile_one: Callable[[Callable[..., Any]], Any],
    given: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Each formula compiled by ``compile_one`` (``numba.njit(...)``, ``cuda.jit(device=True)``),
    by name: a copy of the function whose calls to the other formulas by name, and to those
    already compiled in ``given``, go to their twins. Compilers resolve a function's globals
    when they first compile it, so the copies' globals are filled in after."""
    made = dict(given or {})
    copies: dict[int, dict[str, Any]] = {}
    for formula in formulas:
        home = formula.__globals__
        scope = copies.setdefault(id(home), dict(home))
        function = types.FunctionType(
            formula.__code__, scope, formula.__name__, formula.__defaults__, formula.__closure__
        )
        function.__qualname__ = formula.__qualname__
        function.__doc__ = formula.__doc__
        function.__module__ = formula.__module__
        made[formula.__name__] = compile_one(function)
    for scope in copies.values():
        for name in scope.keys() & made.keys():
            scope[name] = made[name]
    return made
