"""A tablebase's index and records for one position at a time, in plain Python.

The path of a one-shot ``ttt query`` on a table: it numbers one position and its children and
reads one byte each, so it loads neither NumPy nor Numba (their import takes longer than the
whole look-up). It calls the index's formulas (:mod:`solver.tablebase.index`) and the records'
(:mod:`solver.tablebase.record`) as they are; the three of its own, written the same way in plain
integers, are compiled from this same source by :mod:`solver.tablebase.many` for a process
that probes many positions (:data:`FORMULAS`):

* :func:`number_by_ranks`: a position's number with its X set's class found by bisection over
  the representatives' ranks that the ply's file holds (no class table to make);
* :func:`record_fault`: whether a position's record is one the rules allow there (what every
  probe checks);
* :func:`family_problem`: whether a position's record and its children's are what a build
  writes (what :meth:`Tablebase.probe_moves <solver.tablebase.probe.Tablebase.probe_moves>`
  checks, at no extra reads).
"""

from __future__ import annotations

import functools
import mmap
import struct
import sys
from collections.abc import Callable, Iterator, Sequence
from math import comb
from typing import Any, NamedTuple

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.index import (
    Ints,
    binomial_table,
    number_in_class,
    o_at,
    permute_set,
    popcount,
    smallest_image,
    stone_counts,
    symmetry_table,
    unrank_set,
)
from ttt_solve.solver.tablebase.record import DECIDED, DRAW, NONE, lines_held, score_of_record
from ttt_solve.solver.value import WIN_SCORE, move_score

Buffer = bytes | bytearray | memoryview | mmap.mmap
"""What a file's bytes may be read from (``collections.abc.Buffer`` from Python 3.12)."""


class RankedPly(NamedTuple):
    """A ply's index as :func:`number_by_ranks` reads it: the numbers a class, the
    representatives' ranks (ascending), and a guide into them: ``guide[j]`` is the first
    whose rank is at least ``j << shift``, so the rank ``r`` is looked for only from
    ``guide[r >> shift]`` to ``guide[(r >> shift) + 1]`` (a bisection of a few steps where
    a whole one misses the cache at each). :func:`unguided` spans them all."""

    per_class: int
    rep_ranks: Ints
    guide: Ints
    shift: int


def unguided(per_class: int, rep_ranks: Ints) -> RankedPly:
    """A :class:`RankedPly` whose guide spans every rank (ranks stay below ``2**62``): for
    one look-up, where making a guide would read every rank."""
    return RankedPly(per_class, rep_ranks, (0, len(rep_ranks)), 62)


def class_by_ranks(rank: int, ranked: RankedPly) -> int:
    """The class whose representative has this rank, by bisection over the representatives'
    ranks within the guide's bounds; -1 when none has it."""
    _, rep_ranks, guide, shift = ranked
    low: int = guide[rank >> shift]
    high: int = guide[(rank >> shift) + 1]
    while low < high:
        middle = (low + high) // 2
        if rep_ranks[middle] < rank:
            low = middle + 1
        else:
            high = middle
    if low < len(rep_ranks) and rep_ranks[low] == rank:
        return low
    return -1


def number_by_ranks(
    x: int,
    o: int,
    ranked: RankedPly,
    full: int,
    symmetries: int,
    tables: Ints,
    binom: Ints,
) -> int:
    """The number of the position with these X and O cells in its ply's index, the class of
    its X set found among the representatives' ranks (:func:`class_by_ranks`); -1 when no
    class holds its smallest image (a damaged index)."""
    rank, symmetry = smallest_image(x, symmetries, tables, binom)
    klass = class_by_ranks(rank, ranked)
    if klass < 0:
        return -1
    rep = permute_set(x, tables, symmetry)
    image = permute_set(o, tables, symmetry)
    return number_in_class(klass, ranked[0], rep, image, full, binom)


def wins_at_once(mine: int, theirs: int, lines: Ints) -> bool:
    """Whether the side with the stones ``mine`` completes one of ``lines`` with one move
    against ``theirs`` (what a record of a win in 1 needs)."""
    for line in lines:
        rest = line & ~mine
        if rest and not rest & theirs and not rest & (rest - 1):
            return True
    return False


NO_GAME = 1
""":func:`record_fault` of stones no game reaches."""
FORBIDDEN = 2
""":func:`record_fault` of a record the rules forbid at its position."""


def record_fault(
    mover: int, last: int, free: int, record: int, lines: Ints, win_in_one: bool
) -> int:
    """0 where ``record`` is one a build writes for the position of the side to move's stones
    ``mover`` and the last mover's ``last`` (empty cells ``free``; their counts a game's);
    :data:`NO_GAME` where no game reaches those stones (the side to move has a line, or the
    last mover lines that no one stone lies on); :data:`FORBIDDEN` where the rules forbid the
    record there: a finished game recorded as anything but lost in 0 (a line) or a draw (a
    full board), an open one as no position, lost in 0 or decided beyond its empty cells, and
    with ``win_in_one`` (where the moves' records are not checked against it) a win in 1 where
    no move wins at once."""
    if lines_held(mover, lines) != -1:
        return NO_GAME
    common = lines_held(last, lines)
    if common == 0:
        return NO_GAME
    if common != -1:
        return 0 if record == DECIDED else FORBIDDEN
    if not free:
        return 0 if record == DRAW else FORBIDDEN
    if record == NONE or record == DECIDED or record > DECIDED + popcount(free):
        return FORBIDDEN
    if win_in_one and record == DECIDED + 1 and not wins_at_once(mover, last, lines):
        return FORBIDDEN
    return 0


def family_problem(
    mover: int,
    opponent: int,
    free: int,
    cells: int,
    record: int,
    child_records: Ints,
    lines: Ints,
    lines_through: Ints,
    through: int,
) -> int:
    """Whether the records of an open position (the side to move's stones ``mover``, the
    other's ``opponent``, its empty cells ``free``, its own record, sound) and of its
    children (``child_records``, one a move to each empty cell in ascending order) are what
    a build writes: -1 if they are; else the index of the first child whose record the rules
    forbid (no position, a remoteness beyond its empty cells, a finished game recorded as
    anything but lost in 0, an open one as lost in 0, a win in 1 with no winning move), or
    the number of children when the position's record is not the best of its moves'.

    ``lines_through`` is flat: the lines through cell ``c`` at ``c * through ..``, padded
    with ``1 << cells`` (a line no stones complete)."""
    limit = DECIDED + cells - popcount(mover | opponent) - 1  # the largest record a child holds
    best = -2 * WIN_SCORE
    child = 0
    for cell in range(cells):
        bit = 1 << cell
        if not free & bit:
            continue
        child_record = int(child_records[child])
        if child_record == NONE or child_record > limit:
            return child
        stones = mover | bit
        won = False
        for j in range(cell * through, cell * through + through):
            if stones & lines_through[j] == lines_through[j]:
                won = True
        if won != (child_record == DECIDED):
            return child
        if child_record == DECIDED + 1 and not wins_at_once(opponent, stones, lines):
            return child  # the opponent, now to move, cannot win at once
        move = move_score(score_of_record(child_record))
        if move > best:
            best = move
        child += 1
    if best != score_of_record(record):
        return child
    return -1


FORMULAS: tuple[Callable[..., Any], ...] = (
    class_by_ranks,
    number_by_ranks,
    wins_at_once,
    record_fault,
    family_problem,
)
"""This module's formulas, as :func:`solver.tablebase.index.twins` compiles them."""


class StoredRanks:
    """The representatives' ranks a file holds from byte ``at`` (``count`` little-endian
    unsigned ints of ``size`` bytes), read as a sequence: on a machine that is not
    little-endian (:func:`stored_ranks` reads them in place elsewhere)."""

    def __init__(self, data: Buffer, at: int, count: int, size: int) -> None:
        self.data = data
        self.at = at
        self.count = count
        self.size = size
        self.unpack = struct.Struct(_FORMATS[size]).unpack_from

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, number: int) -> int:
        if not 0 <= number < self.count:
            raise IndexError(number)
        value: int = self.unpack(self.data, self.at + self.size * number)[0]
        return value

    def __iter__(self) -> Iterator[int]:
        return (self[number] for number in range(self.count))


_FORMATS = {4: "<I", 8: "<Q"}


def stored_ranks(data: Buffer, at: int, count: int, size: int) -> tuple[Ints, memoryview | None]:
    """The ranks a file's bytes ``data`` hold from ``at`` (:class:`StoredRanks`), and the
    view they are read through in place on a little-endian machine (release it before the
    file's map is closed; ``None`` elsewhere)."""
    if sys.byteorder != "little":
        return StoredRanks(data, at, count, size), None
    view = memoryview(data)[at : at + size * count]
    cast = view.cast("I") if size == 4 else view.cast("Q")
    view.release()
    return cast, cast


@functools.cache
def lines_through_table(rules: Rules) -> tuple[tuple[int, ...], int]:
    """``(table, through)``: the lines through each cell, flat as :func:`family_problem`
    reads them, and how many a cell has room for."""
    through = max(len(lines) for lines in rules.lines_through)
    table: list[int] = []
    for lines in rules.lines_through:
        table += [*lines, *[1 << rules.cells] * (through - len(lines))]
    return tuple(table), through


@functools.cache
def _tables(rules: Rules) -> tuple[int, ...]:
    return symmetry_table(rules)


class PlyIndex:
    """The index of one ply, for positions one at a time, from its representatives' ranks
    (ascending: any sequence of ints, such as a memory-mapped file's)."""

    def __init__(self, rules: Rules, ply: int, rep_ranks: Ints) -> None:
        self.rules = rules
        self.ply = ply
        self.x, self.o = stone_counts(ply)
        self.per_class = comb(rules.cells - self.x, self.o)
        self.rep_ranks = rep_ranks
        self._ranked = unguided(self.per_class, rep_ranks)
        self._symmetries = len(rules.symmetries)
        self._tables = _tables(rules)
        self._binom = binomial_table()

    def __len__(self) -> int:
        return len(self.rep_ranks) * self.per_class

    def index(self, x: int, o: int) -> int:
        """The number of the position with these stones (of this ply's stone counts);
        :class:`ValueError` when no class holds its X set (a damaged index)."""
        number = number_by_ranks(
            x,
            o,
            self._ranked,
            self.rules.full,
            self._symmetries,
            self._tables,
            self._binom,
        )
        if number < 0:
            raise ValueError(f"no class of ply {self.ply} holds the X stones {x:#x}")
        return number

    def stones(self, number: int) -> tuple[int, int]:
        """``(x, o)``: the X and O cell sets of the position at ``number`` (:meth:`index`'s
        inverse for the image it ranks)."""
        if not 0 <= number < len(self):
            raise ValueError(f"number {number} is not within ply {self.ply}")
        cells, binom = self.rules.cells, self._binom
        x = unrank_set(self.rep_ranks[number // self.per_class], self.x, cells, binom)
        return x, o_at(number % self.per_class, x, self.o, cells, binom)

    def children(self, x: int, o: int, cells: Sequence[int]) -> list[int]:
        """The numbers in this ply of the children of the position ``(x, o)`` of the ply
        before, one for each move to a cell of ``cells``."""
        x_moves = self.x > self.o  # this ply's X stones outnumber O's: X moved into it
        return [
            self.index(x | 1 << cell, o) if x_moves else self.index(x, o | 1 << cell)
            for cell in cells
        ]
