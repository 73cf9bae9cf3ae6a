"""A tablebase's index and records for one position at a time, in plain Python.

The path of a one-shot ``ttt query`` on a table: it ranks one position and reads one byte per
child, so it loads neither NumPy nor Numba (their import takes longer than the whole look-up).
The index is the one :mod:`solver.tablebase.index` builds with its kernels, and the records
those :mod:`solver.tablebase.step` writes; the definitions here are the same arithmetic for Python
ints, checked against the kernels in tests/test_tablelookup.py.
"""

from __future__ import annotations

import functools
from bisect import bisect_left
from collections.abc import Sequence
from math import comb
from typing import Protocol

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import WIN_SCORE, Value, score_of

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


def family_problem(
    mover: int,
    opponent: int,
    free: int,
    cells: int,
    record: int,
    child_records: Sequence[int],
    lines: Sequence[int],
    lines_through: Sequence[Sequence[int]],
) -> int:
    """Whether the records of an open position (the side to move's stones ``mover``, the
    other's ``opponent``, its empty cells ``free``, its own sound ``record``) and of its
    children (``child_records``, one a move to each empty cell in ascending order) are what
    a build writes: -1 if they are; else the index of the first child whose record the rules
    forbid (no position, a remoteness beyond its empty cells, a finished game recorded as
    anything but lost in 0, an open one as lost in 0, a win in 1 with no winning move), or
    the number of children when the position's record is not the best of its moves'.

    Self-contained integer arithmetic and loops, so that it runs as it is (a one-shot
    look-up) and compiled from this same source (``lines_through`` may then be padded with
    ``1 << cells``, a line no stones complete)."""
    stones_on = 0  # the position's stones, counted
    taken = mover | opponent
    while taken:
        taken &= taken - 1
        stones_on += 1
    limit = DECIDED + cells - stones_on - 1  # the largest record a child may hold
    best = -WIN_SCORE - 1
    child = 0
    for cell in range(cells):
        bit = 1 << cell
        if not free & bit:
            continue
        child_record = child_records[child]
        if child_record == NONE or child_record > limit:
            return child
        stones = mover | bit
        won = False
        for line in lines_through[cell]:
            if stones & line == line:
                won = True
        if won != (child_record == DECIDED):
            return child
        if child_record == DECIDED + 1:  # the opponent, now to move, must win at once
            wins = False
            for line in lines:
                rest = line & ~opponent
                if rest and not rest & stones and not rest & (rest - 1):
                    wins = True
            if not wins:
                return child
        move = 0  # the move's score for the mover: the child's, negated, one ply further
        if child_record != DRAW:
            steps = child_record - DECIDED
            move = steps + 1 - WIN_SCORE if steps % 2 else WIN_SCORE - steps - 1
        if move > best:
            best = move
        child += 1
    score = 0
    if record != DRAW:
        steps = record - DECIDED
        score = WIN_SCORE - steps if steps % 2 else steps - WIN_SCORE
    return child if best != score else -1


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


@functools.cache
def binomial_rows(cells: int) -> tuple[tuple[int, ...], ...]:
    """``C(n, m)`` for ``0 <= n, m <= cells + 1``, as rows of a tuple (``[n][m]``)."""
    return tuple(tuple(comb(n, m) for m in range(cells + 2)) for n in range(cells + 2))


def rank_among(stones: int, free: int, binom: Sequence[Sequence[int]]) -> int:
    """The rank of ``stones`` as a set of positions among the ``free`` cells (colex order):
    :func:`rank_of` of :func:`compress_of`, in one pass. With ``free`` every cell it is the
    rank of the cell set."""
    rank, m = 0, 1
    while stones:
        low = stones & -stones
        rank += binom[(free & (low - 1)).bit_count()][m]
        stones ^= low
        m += 1
    return rank


class PlyIndex:
    """The index of one ply, for positions one at a time, from its representatives' ranks
    (ascending: any sequence of ints, such as a memory-mapped file's).

    An X set's class is found from its images: colex order is the order of the sets'
    bitmasks, so the smallest image (the first symmetry giving it, as the build takes it) is
    the representative, and its rank is looked up among the representatives' by bisection.
    """

    def __init__(self, rules: Rules, ply: int, rep_ranks: Ranks) -> None:
        self.rules = rules
        self.ply = ply
        self.x, self.o = stone_counts(ply)
        self.per_class = comb(rules.cells - self.x, self.o)
        self.rep_ranks = rep_ranks
        self._binom = binomial_rows(rules.cells)
        chunks = -(-rules.cells // 8)
        self._tables = tuple(tables[:chunks] for tables in rules.key_tables)
        self._bit_images = rules.bit_images[: rules.cells]  # [cell][symmetry]: X's bits

    def __len__(self) -> int:
        return len(self.rep_ranks) * self.per_class

    def images(self, stones: int) -> list[int]:
        """The images of a cell set under each symmetry, in order."""
        images = []
        for tables in self._tables:
            image, bits = 0, stones
            for table in tables:
                if not bits:
                    break
                image |= table[bits & 0xFF]
                bits >>= 8
            images.append(image)
        return images

    def class_of(self, rep: int) -> int:
        """The class whose representative is the cell set ``rep`` (a smallest image)."""
        rank = rank_among(rep, self.rules.full, self._binom)
        number = bisect_left(self.rep_ranks, rank)
        if number == len(self.rep_ranks) or self.rep_ranks[number] != rank:
            raise ValueError(f"no class of ply {self.ply} has representative rank {rank}")
        return number

    def x_class(self, x: int) -> tuple[int, int, int]:
        """``(class, symmetry, representative)`` of an X set: the symmetry maps it onto the
        representative (the first symmetry giving the smallest rank, as the build takes it)."""
        images = self.images(x)
        rep = min(images)
        return self.class_of(rep), images.index(rep), rep

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
        image = self.images(o)[symmetry] if o else 0
        free = self.rules.full & ~rep
        return number * self.per_class + rank_among(image, free, self._binom)

    def children(self, x: int, o: int, cells: Sequence[int]) -> list[int]:
        """The numbers in this ply of the children of the position ``(x, o)`` of the ply
        before, one for each move to a cell of ``cells``.

        The parent's images are made once; a child's are theirs with the new stone's, and
        its ranks the parent's sets' ranks with that stone put in (or its cell taken from
        the free cells): :class:`_Insertions`, a few additions a child."""
        full, binom, per_class = self.rules.full, self._binom, self.per_class
        bit_images = self._bit_images
        if self.x == self.o:  # O moved: the X set and its class stay
            number, symmetry, rep = self.x_class(x)
            o_ranks = _Insertions(self.images(o)[symmetry], full & ~rep, binom)
            base = number * per_class
            return [base + o_ranks.insert(bit_images[cell][symmetry]) for cell in cells]
        x_images, o_images = self.images(x), self.images(o)
        by_symmetry: dict[int, tuple[_Insertions, _Insertions]] = {}
        numbers = []
        for cell in cells:
            bits = bit_images[cell]
            images = [image | bit for image, bit in zip(x_images, bits)]
            rep = min(images)
            symmetry = images.index(rep)
            ranks = by_symmetry.get(symmetry)
            if ranks is None:
                x_image = x_images[symmetry]
                ranks = by_symmetry[symmetry] = (
                    _Insertions(x_image, full, binom),
                    _Insertions(o_images[symmetry], full & ~x_image, binom),
                )
            bit = bits[symmetry]
            rank = ranks[0].insert(bit)
            number = bisect_left(self.rep_ranks, rank)
            if number == len(self.rep_ranks) or self.rep_ranks[number] != rank:
                raise ValueError(f"no class of ply {self.ply} has representative rank {rank}")
            numbers.append(number * per_class + ranks[1].remove(bit))
        return numbers


class _Insertions:
    """The rank of a set of stones among free cells (:func:`rank_among`) once one more free
    cell is a stone, or is no longer free, for any such cell: from sums over the stones made
    once, so each costs a few additions.

    With the stones at positions ``p_1 < ... < p_m`` among the free cells, the rank is the
    sum of ``C(p_j, j)``. A stone put at position ``t`` with ``i`` stones below it adds
    ``C(t, i + 1)`` and moves each stone above up one place in the order; a free cell taken
    away with ``i`` stones below it moves each stone above down one position."""

    def __init__(self, stones: int, free: int, binom: Sequence[Sequence[int]]) -> None:
        self.stones = stones
        positions = []
        while stones:
            low = stones & -stones
            positions.append((free & (low - 1)).bit_count())
            stones ^= low
        m = len(positions)
        below = [0] * (m + 1)  # below[i]: the first i stones' part of the rank
        raised = [0] * (m + 1)  # raised[i]: the other stones' part, one place higher
        lowered = [0] * (m + 1)  # lowered[i]: the other stones' part, one position lower
        for j, p in enumerate(positions, 1):
            below[j] = below[j - 1] + binom[p][j]
        for j in range(m, 0, -1):
            p = positions[j - 1]
            raised[j - 1] = raised[j] + binom[p][j + 1]
            # (a stone at position 0 has no free cell below it to take away)
            lowered[j - 1] = lowered[j] + (binom[p - 1][j] if p else 0)
        self.free = free
        self.binom = binom
        self.below, self.raised, self.lowered = below, raised, lowered

    def insert(self, bit: int) -> int:
        """The rank with a stone put on the free cell ``bit`` (a one-bit mask)."""
        i = (self.stones & (bit - 1)).bit_count()
        t = (self.free & (bit - 1)).bit_count()
        return self.below[i] + self.binom[t][i + 1] + self.raised[i]

    def remove(self, bit: int) -> int:
        """The rank once the free cell ``bit`` (holding no stone) is no longer free."""
        i = (self.stones & (bit - 1)).bit_count()
        return self.below[i] + self.lowered[i]
