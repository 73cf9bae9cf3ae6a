"""A tablebase's index and records for one position at a time, in plain Python.

The path of a one-shot ``ttt query`` on a table: it ranks one position and reads one byte per
child, so it loads neither NumPy nor Numba (their import takes longer than the whole look-up).
The index is the one :mod:`solver.tablebase.index` builds with its kernels, and the records
those :mod:`solver.tablebase.step` writes; the definitions here are the same arithmetic for Python
ints, checked against the kernels in tests/test_tablelookup.py.
"""

from __future__ import annotations

from bisect import bisect_left
from math import comb
from typing import Protocol

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Value, score_of

NONE = 0
"""The record of a number that stands for no position."""
DRAW = 1
"""The record of a draw."""
DECIDED = 2
"""A won or lost position's record is this plus its remoteness."""


def score_of_record(record: int) -> int:
    """The score of a position's record (``record`` must not be :data:`NONE`)."""
    if record == DRAW:
        return 0
    remoteness = record - DECIDED
    return int(score_of(1 if remoteness % 2 else -1, remoteness))


def value_of_record(record: int, empty_cells: int) -> Value:
    """The value for the side to move of a position's record (not :data:`NONE`), with
    ``empty_cells`` its empty cells (a draw's remoteness)."""
    return Value.from_score(score_of_record(record), empty_cells)


def stone_counts(ply: int) -> tuple[int, int]:
    """``(x, o)``: the X and O stones on the board at ``ply`` (X moves first)."""
    return (ply + 1) // 2, ply // 2


def rank_of(stones: int) -> int:
    """The rank of a cell set among the sets of its size (colex order)."""
    rank, m = 0, 1
    while stones:
        low = stones & -stones
        rank += comb(low.bit_length() - 1, m)
        stones ^= low
        m += 1
    return rank


def compress_of(stones: int, free: int) -> int:
    """The stones as a set of positions among the ``free`` cells (bit ``i``: the ``i``-th
    free cell, counted from cell 0)."""
    out, position = 0, 0
    while free:
        low = free & -free
        if stones & low:
            out |= 1 << position
        free ^= low
        position += 1
    return out


def unrank_of(rank: int, size: int) -> int:
    """The ``size``-set of cells of this rank (:func:`rank_of`'s inverse)."""
    stones = 0
    for m in range(size, 0, -1):
        cell = m - 1
        while comb(cell + 1, m) <= rank:
            cell += 1
        stones |= 1 << cell
        rank -= comb(cell, m)
    return stones


def expand_of(positions: int, free: int) -> int:
    """:func:`compress_of`'s inverse: positions among the ``free`` cells back to cells."""
    out = 0
    while free:
        low = free & -free
        if positions & 1:
            out |= low
        positions >>= 1
        free ^= low
    return out


class Ranks(Protocol):
    """The representatives' ranks of a ply, ascending: a list, or a file's bytes read as
    one."""

    def __len__(self) -> int: ...

    def __getitem__(self, number: int, /) -> int: ...


class PlyIndex:
    """The index of one ply, for positions one at a time, from its representatives' ranks
    (ascending: any sequence of ints, such as a memory-mapped file's)."""

    def __init__(self, rules: Rules, ply: int, rep_ranks: Ranks) -> None:
        self.rules = rules
        self.ply = ply
        self.x, self.o = stone_counts(ply)
        self.per_class = comb(rules.cells - self.x, self.o)
        self.rep_ranks = rep_ranks

    def __len__(self) -> int:
        return len(self.rep_ranks) * self.per_class

    def x_class(self, x: int) -> tuple[int, int, int]:
        """``(class, symmetry, representative)`` of an X set: the symmetry maps it onto the
        representative (the first symmetry giving the smallest rank, as the build takes it)."""
        rules = self.rules
        best_rank, best_symmetry, best_image = rank_of(x), 0, x
        for symmetry in range(1, len(rules.symmetries)):
            image = rules.permute(x, symmetry)
            rank = rank_of(image)
            if rank < best_rank:
                best_rank, best_symmetry, best_image = rank, symmetry, image
        number = bisect_left(self.rep_ranks, best_rank)
        if number == len(self.rep_ranks) or self.rep_ranks[number] != best_rank:
            raise ValueError(f"no class of ply {self.ply} has representative rank {best_rank}")
        return number, best_symmetry, best_image

    def stones(self, number: int) -> tuple[int, int]:
        """``(x, o)``: the X and O cell sets of the position at ``number`` (:meth:`index`'s
        inverse for the image it ranks)."""
        if not 0 <= number < len(self):
            raise ValueError(f"number {number} is not within ply {self.ply}")
        x = unrank_of(self.rep_ranks[number // self.per_class], self.x)
        o = expand_of(unrank_of(number % self.per_class, self.o), self.rules.full & ~x)
        return x, o

    def index(self, x: int, o: int) -> int:
        """The number of the position with these stones (of this ply's stone counts)."""
        number, symmetry, rep = self.x_class(x)
        image = self.rules.permute(o, symmetry)
        return number * self.per_class + rank_of(compress_of(image, self.rules.full & ~rep))
