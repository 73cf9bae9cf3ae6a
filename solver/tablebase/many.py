"""The probe's compiled kernels: many positions at once, and one position with its children.

* :func:`probe_arrays` (:meth:`Tablebase.probe_many
  <solver.tablebase.probe.Tablebase.probe_many>`): arrays of positions, any orientation, any
  mix of plies, numbered over every core, their records read from each ply's
  :class:`~solver.tablebase.probe.PlyRecords` in one gather a ply, and decoded through a
  table of the 256 records' values at that ply.
* :class:`CompiledIndex` (:meth:`Tablebase.compile
  <solver.tablebase.probe.Tablebase.compile>`): a position and its children numbered, read
  and checked in one call.

Positions are numbered by :func:`~solver.tablebase.lookup.number_by_ranks` (the class of an X
set by bisection over the representatives' ranks the ply's file holds: no class table to make)
and checked by :func:`~solver.tablebase.lookup.family_problem`: the one-position path's
formulas, compiled from the same source (:func:`~solver.tablebase.index.twins`).
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb
from typing import TYPE_CHECKING, Any, cast

import numba
import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.errors import InvalidPositionError
from ttt_solve.solver.tablebase import lookup
from ttt_solve.solver.tablebase.classes import ClassTable, class_table
from ttt_solve.solver.tablebase.compiled import (
    CPU,
    binomials,
    lines_of,
    popcount_cpu,
    symmetries_of,
)
from ttt_solve.solver.tablebase.index import stone_counts, twins
from ttt_solve.solver.tablebase.positions import indexes
from ttt_solve.solver.tablebase.probe import MappedRecords
from ttt_solve.solver.tablebase.record import DECIDED, DRAW, NONE

if TYPE_CHECKING:
    from ttt_solve.solver.tablebase.probe import Probes, Tablebase
    from ttt_solve.solver.value import Value

_TWINS = twins(lookup.FORMULAS, numba.njit(nogil=True, cache=True), CPU)
number_by_ranks_cpu = _TWINS["number_by_ranks"]
family_problem_cpu = _TWINS["family_problem"]
record_fault_cpu = _TWINS["record_fault"]

_FORBIDDEN = -2
"""The remoteness the decoding table gives a record the rules forbid at its ply."""


# -- many positions ---------------------------------------------------------------------------


@numba.njit(parallel=True, nogil=True, cache=True)
def _plies(x: NDArray[np.int64], o: NDArray[np.int64], full: int) -> NDArray[np.int64]:
    """Each position's ply, or -1 for stones off the board, on a cell twice, or in counts no
    game has (X one stone ahead of O at most, never behind)."""
    plies = np.empty(len(x), dtype=np.int64)
    for i in numba.prange(len(x)):
        xs, os_ = x[i], o[i]
        nx, no = popcount_cpu(xs), popcount_cpu(os_)
        sound = xs >= 0 and os_ >= 0 and not (xs & os_) and not ((xs | os_) & ~full)
        plies[i] = nx + no if sound and 0 <= nx - no <= 1 else -1
    return plies


@numba.njit(parallel=True, nogil=True, cache=True)
def _numbers(
    x: NDArray[np.int64],
    o: NDArray[np.int64],
    ranked: lookup.RankedPly,
    full: int,
    symmetries: int,
    tables: NDArray[np.int64],
    binom: NDArray[np.int64],
) -> NDArray[np.int64]:
    """The numbers of positions of one ply, from its representatives' ranks (-1 where no
    class holds the X set)."""
    numbers = np.empty(len(x), dtype=np.int64)
    for i in numba.prange(len(x)):
        numbers[i] = number_by_ranks_cpu(x[i], o[i], ranked, full, symmetries, tables, binom)
    return numbers


def guided(per_class: int, rep_ranks: NDArray[np.int64], sets: int) -> lookup.RankedPly:
    """The :class:`~solver.tablebase.lookup.RankedPly` of a ply's representatives' ranks
    (among ``sets`` sets of its X count), guided by between a half and one entry a rank."""
    shift = max(0, (sets // max(1, len(rep_ranks))).bit_length())
    starts = np.arange(((sets - 1) >> shift) + 2, dtype=np.int64) << shift
    guide = np.searchsorted(rep_ranks, starts).astype(np.int64)
    return lookup.RankedPly(per_class, rep_ranks, guide, shift)


@numba.njit(nogil=True, cache=True)
def _by_ply(plies: NDArray[np.int64], cells: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``(order, starts)``: the positions' indexes sorted by ply (a counting sort, stable),
    and where each ply's begin in that order (``starts[ply] .. starts[ply + 1]``)."""
    starts = np.zeros(cells + 2, dtype=np.int64)
    for ply in plies:
        starts[ply + 1] += 1
    for ply in range(cells + 1):
        starts[ply + 1] += starts[ply]
    order = np.empty(len(plies), dtype=np.int64)
    filled = starts[:-1].copy()
    for i in range(len(plies)):
        order[filled[plies[i]]] = i
        filled[plies[i]] += 1
    return order, starts


def decoding(cells: int, ply: int) -> tuple[NDArray[np.int8], NDArray[np.int8]]:
    """``(values, remoteness)`` of each of the 256 records at ``ply``: the value for the side
    to move (1, 0, -1) and the remoteness; :data:`~solver.tablebase.probe.NO_POSITION` for
    :data:`~solver.tablebase.record.NONE`, and ``-2`` for a record the rules forbid there
    (a remoteness beyond the empty cells)."""
    empty = cells - ply
    values = np.zeros(256, dtype=np.int8)
    remoteness = np.full(256, _FORBIDDEN, dtype=np.int8)
    remoteness[NONE] = -1
    remoteness[DRAW] = empty
    for steps in range(empty + 1):
        values[DECIDED + steps] = 1 if steps % 2 else -1
        remoteness[DECIDED + steps] = steps
    return values, remoteness


def probe_arrays(tablebase: Tablebase, x: Any, o: Any) -> Probes:
    """:meth:`Tablebase.probe_many <solver.tablebase.probe.Tablebase.probe_many>`."""
    from ttt_solve.solver.tablebase.files import TableFileError
    from ttt_solve.solver.tablebase.probe import Probes, TableDamagedError

    rules = tablebase.rules
    xs = np.ascontiguousarray(x, dtype=np.int64).ravel()
    os_ = np.ascontiguousarray(o, dtype=np.int64).ravel()
    if xs.shape != os_.shape:
        raise ValueError(f"{len(xs):,} X sets and {len(os_):,} O sets: give one of each a position")
    kernels = _compiled(tablebase)
    plies = _plies(xs, os_, rules.full)
    if len(plies) and plies.min() < 0:
        first = int(np.flatnonzero(plies < 0)[0])
        raise InvalidPositionError(
            f"position {first} (x={int(xs[first]):#x}, o={int(os_[first]):#x}) is not a "
            f"position of {rules.name}: stones off the board, on a cell twice, or in counts "
            "no game has"
        )
    values = np.zeros(len(xs), dtype=np.int8)
    remoteness = np.zeros(len(xs), dtype=np.int8)
    order, starts = _by_ply(plies, rules.cells)
    for ply in range(rules.cells + 1):
        start, stop = int(starts[ply]), int(starts[ply + 1])
        if start == stop:
            continue
        chosen: Any = slice(None) if stop - start == len(xs) else order[start:stop]
        ply_file = tablebase.ply_file(ply)
        wanted = kernels.numbers(ply, xs[chosen], os_[chosen])
        if wanted.min() < 0:
            raise TableFileError(ply_file.path, "its index is damaged: an X set of no class")
        records = ply_file.source.records(wanted)
        value_of, remoteness_of = decoding(rules.cells, ply)
        found = remoteness_of[records]
        if (found == _FORBIDDEN).any():
            at = int(np.flatnonzero(found == _FORBIDDEN)[0])
            raise TableDamagedError(
                ply_file.path,
                int(wanted[at]),
                f"its record {int(records[at])} means no value at ply {ply} (a remoteness "
                f"beyond the {rules.cells - ply} empty cells)",
            )
        values[chosen] = value_of[records]
        remoteness[chosen] = found
    shape = np.shape(x)
    return Probes(values.reshape(shape), remoteness.reshape(shape))


def _compiled(tablebase: Tablebase) -> CompiledIndex:
    """The tablebase's compiled index, made on first need (without switching its one-position
    look-ups to it: :meth:`Tablebase.compile <solver.tablebase.probe.Tablebase.compile>`)."""
    if tablebase.kernels is None:
        tablebase.kernels = CompiledIndex(tablebase)
    found: CompiledIndex = tablebase.kernels
    return found


# -- one position and its children ------------------------------------------------------------


@numba.njit(nogil=True, cache=True)
def _family_numbers(
    x: int,
    o: int,
    children: int,
    ranked: lookup.RankedPly,
    child_ranked: lookup.RankedPly,
    full: int,
    symmetries: int,
    tables: NDArray[np.int64],
    binom: NDArray[np.int64],
    numbers: NDArray[np.int64],
) -> None:
    """Into ``numbers``: the number of a position, then those of its ``children`` (one a move
    to each empty cell, ascending; 0 for none); -1 where no class holds an X set."""
    empty = full & ~(x | o)
    if children and (popcount_cpu(empty) != children or children >= len(numbers)):
        raise ValueError("the array for the numbers does not fit the position's family")
    x_moves = popcount_cpu(x) == popcount_cpu(o)
    numbers[0] = number_by_ranks_cpu(x, o, ranked, full, symmetries, tables, binom)
    bits = empty
    for i in range(children):
        bit = bits & -bits
        bits ^= bit
        child_x, child_o = (x | bit, o) if x_moves else (x, o | bit)
        numbers[1 + i] = number_by_ranks_cpu(
            child_x, child_o, child_ranked, full, symmetries, tables, binom
        )


@numba.njit(nogil=True, cache=True)
def _probe_family(
    x: int,
    o: int,
    children: int,
    ranked: lookup.RankedPly,
    records: NDArray[np.uint8],
    child_ranked: lookup.RankedPly,
    child_records: NDArray[np.uint8],
    full: int,
    symmetries: int,
    tables: NDArray[np.int64],
    binom: NDArray[np.int64],
    lines: NDArray[np.int64],
    lines_through: NDArray[np.int64],
    through: int,
    numbers: NDArray[np.int64],
    found: NDArray[np.int64],
) -> int:
    """:func:`_family_numbers`, their records read into ``found`` from the two plies' arrays
    of records, and :func:`~solver.tablebase.lookup.family_problem` of them (-1: none, and
    always without children); -2 for a number the index or the records do not hold, or a
    record of the position the rules forbid there
    (:func:`~solver.tablebase.lookup.record_fault`): a damaged file, said in words by the
    plain path."""
    _family_numbers(x, o, children, ranked, child_ranked, full, symmetries, tables, binom, numbers)
    for i in range(1 + children):
        held = records if i == 0 else child_records
        if numbers[i] < 0 or numbers[i] >= len(held):
            return -2
        found[i] = held[numbers[i]]
    x_moves = popcount_cpu(x) == popcount_cpu(o)
    mover, opponent = (x, o) if x_moves else (o, x)
    if record_fault_cpu(mover, opponent, full & ~(x | o), int(found[0]), lines, children == 0):
        return -2
    if not children:
        return -1
    problem: int = family_problem_cpu(
        mover,
        opponent,
        full & ~(x | o),
        len(lines_through) // through,
        found[0],
        found[1 : 1 + children],
        lines,
        lines_through,
        through,
    )
    return problem


@numba.njit(nogil=True, cache=True)
def _probe_one(
    x: int,
    o: int,
    ranked: lookup.RankedPly,
    records: NDArray[np.uint8],
    full: int,
    symmetries: int,
    tables: NDArray[np.int64],
    binom: NDArray[np.int64],
    lines: NDArray[np.int64],
    check: bool,
) -> int:
    """:func:`_probe_family` of a position without its children, in a third of the
    arguments (a call's cost is mostly its arguments'): its number times 256 plus its record,
    or -1 for a number the index or the records do not hold, and with ``check`` for stones in
    counts no game has or a record the rules forbid there
    (:func:`~solver.tablebase.lookup.record_fault`)."""
    nx, no = popcount_cpu(x), popcount_cpu(o)
    if check and (x & o or (x | o) & ~full or not 0 <= nx - no <= 1):
        return -1
    number = number_by_ranks_cpu(x, o, ranked, full, symmetries, tables, binom)
    if number < 0 or number >= len(records):
        return -1
    record = int(records[number])
    if check:
        mover, last = (x, o) if nx == no else (o, x)
        if record_fault_cpu(mover, last, full & ~(x | o), record, lines, True):
            return -1
    found: int = number * 256 + record
    return found


_NUMBERS = cast("Callable[..., None]", _family_numbers)
"""The kernel, called with its per-ply arguments kept in a tuple (which Numba's type of a
dispatcher does not take)."""
_TYPE_OF = cast("Callable[[object], Any]", numba.typeof)


def _compiled_for(kernel: Any, given: tuple[Any, ...]) -> Callable[..., int]:
    """``kernel`` compiled (or loaded from Numba's cache) for the types of the arguments
    ``given``, to be called past Numba's dispatcher, which types every argument at each call:
    in an environment's step, where each call finds the processor's caches cold, that is most
    of a call's cost."""
    compiled: Callable[..., int] = kernel.compile(tuple(_TYPE_OF(value) for value in given))
    return compiled


class CompiledIndex:
    """A tablebase's look-ups in compiled kernels: a position and its children numbered, read
    and checked in one call (:meth:`family`), and every ply's representatives' ranks for
    :func:`probe_arrays`."""

    def __init__(self, tablebase: Tablebase) -> None:
        rules = tablebase.rules
        self.tablebase = tablebase
        self.full = rules.full
        self.cells = rules.cells
        self.symmetries = len(rules.symmetries)
        self.tables = symmetries_of(rules)
        self.binom = binomials()
        self.lines = lines_of(rules)
        through, width = lookup.lines_through_table(rules)
        self.lines_through = np.array(through, dtype=np.int64)
        self.through = width
        self._families: dict[tuple[int, bool], tuple[Callable[..., int] | None, tuple[Any, ...]]]
        self._families = {}
        self._classes: dict[int, ClassTable] = {}
        self._ranked: dict[int, tuple[Any, ...]] = {}
        self._single: dict[int, tuple[Callable[..., int] | None, tuple[Any, ...], Any]] = {}

    def _ply(self, ply: int) -> tuple[tuple[Any, ...], NDArray[np.uint8] | None]:
        """A ply's guided index (:meth:`_ranked_ply`) and records (an array over the map;
        ``None`` where they are read otherwise)."""
        source = self.tablebase.ply_file(ply).source
        records = source.array() if isinstance(source, MappedRecords) else None
        return self._ranked_ply(ply), records

    def _ranked_ply(self, ply: int) -> tuple[Any, ...]:
        """A ply's guided index, made once: a :class:`~solver.tablebase.lookup.RankedPly`'s
        fields (its representatives' ranks over the file's map where it can), kept as a plain
        tuple, which Numba types in C at each call (a named one in Python)."""
        ranked = self._ranked.get(ply)
        if ranked is None:
            ply_file = self.tablebase.ply_file(ply)
            sets = comb(self.cells, stone_counts(ply)[0])
            ranked = self._ranked[ply] = tuple(
                guided(ply_file.index.per_class, ply_file.rep_ranks(), sets)
            )
        return ranked

    def numbers(self, ply: int, x: NDArray[np.int64], o: NDArray[np.int64]) -> NDArray[np.int64]:
        """The numbers of many positions of ``ply`` (-1 where no class holds an X set): from
        the class table of the ply's X sets once as many positions ask as the table has
        entries (it is made then, and kept: a few look-ups a position), else by bisection
        over the representatives' ranks (no table to make)."""
        size = stone_counts(ply)[0]
        table = self._classes.get(size)
        if table is None and len(x) >= comb(self.cells, size):
            table = self._classes[size] = class_table(self.tablebase.rules, size)
        if table is not None:
            numbers: NDArray[np.int64] = indexes(self.tablebase.rules, ply, table, x, o)
            return numbers
        ranked = cast("lookup.RankedPly", self._ranked_ply(ply))
        return _numbers(x, o, ranked, self.full, self.symmetries, self.tables, self.binom)

    def family(
        self, ply: int, x: int, o: int, children: int
    ) -> tuple[NDArray[np.int64], list[int], int]:
        """``(numbers, records, problem)`` of the position ``(x, o)`` of ``ply`` and of its
        ``children`` children (its empty cells, or 0), one a move to each empty cell in
        ascending order, and :func:`~solver.tablebase.lookup.family_problem` of them (-1:
        none, and always without children; -2: a number the index or the records do not
        hold, or a record of the position the rules forbid there, a win in 1 included where
        no children are read)."""
        numbers = np.empty(1 + children, dtype=np.int64)  # each call its own: threads share
        found = np.empty(1 + children, dtype=np.int64)
        made = self._families.get((ply, children > 0))
        if made is None:
            arguments = self._arguments_of(ply, children)
            kernel = None
            if arguments[1] is not None and arguments[3] is not None:  # records over maps
                given = (x, o, children, *arguments, numbers, found)
                kernel = _compiled_for(_probe_family, given)
            made = self._families[(ply, children > 0)] = (kernel, arguments)
        kernel, arguments = made
        if kernel is not None:
            problem = kernel(x, o, children, *arguments, numbers, found)
            return numbers, found.tolist(), problem
        return self._family_read(ply, x, o, children, arguments, numbers)

    def one(self, ply: int, x: int, o: int) -> tuple[int, int]:
        """``(number, record)`` of the position ``(x, o)`` of ``ply``: :meth:`family` without
        children, cheaper a call; ``(-2, 0)`` where the number is none the index or the
        records hold."""
        kernel, arguments, _ = self._single.get(ply) or self._single_of(ply)
        if kernel is None:  # read through the ply's source
            numbers, read, problem = self.family(ply, x, o, 0)
            return (int(numbers[0]), read[0]) if problem != -2 else (-2, 0)
        found = kernel(x, o, *arguments, False)
        return (found >> 8, found & 255) if found >= 0 else (-2, 0)

    def value(self, x: int, o: int) -> Value | None:
        """The value of the position ``(x, o)`` for the side to move, its record checked as
        the probe checks one (:func:`~solver.tablebase.lookup.record_fault`, a win in 1
        included), in one call; ``None`` where the record is not sound, where the stones are
        in counts no game has, or where the ply's records are not an array over a map (the
        probe's plain path then says why, or reads them)."""
        ply = x.bit_count() + o.bit_count()
        single = self._single.get(ply)
        if single is None:
            if not 0 <= ply <= self.cells:
                return None
            single = self._single_of(ply)
        kernel, arguments, values = single
        if kernel is None:
            return None
        found = kernel(x, o, *arguments, True)
        return values[found & 255] if found >= 0 else None

    def _single_of(self, ply: int) -> tuple[Callable[..., int] | None, tuple[Any, ...], Any]:
        """:func:`_probe_one` compiled for a position of ``ply`` (``None`` where the ply's
        records are not an array over a map), its arguments but the position and ``check``,
        and the ply's values by record; made once."""
        arguments = self._arguments_of(ply, 0)
        single_arguments = (*arguments[0:2], *arguments[4:9])
        kernel = None
        if arguments[1] is not None:
            kernel = _compiled_for(_probe_one, (0, 0, *single_arguments, True))
        values = self.tablebase.ply_file(ply).values
        single = self._single[ply] = (kernel, single_arguments, values)
        return single

    def _family_read(
        self,
        ply: int,
        x: int,
        o: int,
        children: int,
        arguments: tuple[Any, ...],
        numbers: NDArray[np.int64],
    ) -> tuple[NDArray[np.int64], list[int], int]:
        """:meth:`family` for records that are not an array over a map (compressed): the
        numbers in a kernel, the records through each ply's source."""
        # the kernel's arguments but the records (at 1 and 3) and the lines (from 8)
        _NUMBERS(x, o, children, arguments[0], arguments[2], *arguments[4:8], numbers)
        if numbers.min() < 0:
            return numbers, [], -2
        read = [self.tablebase.ply_file(ply).source.record(int(numbers[0]))]
        mover, opponent = (x, o) if x.bit_count() == o.bit_count() else (o, x)
        free = self.full & ~(x | o)
        if record_fault_cpu(mover, opponent, free, read[0], self.lines, children == 0):
            return numbers, read, -2
        if not children:
            return numbers, read, -1
        read += self.tablebase.ply_file(ply + 1).source.records(numbers[1:]).tolist()
        problem: int = family_problem_cpu(
            mover,
            opponent,
            free,
            self.cells,
            read[0],
            np.array(read[1:], dtype=np.int64),
            self.lines,
            self.lines_through,
            self.through,
        )
        return numbers, read, problem

    def _arguments_of(self, ply: int, children: int) -> tuple[Any, ...]:
        """What :func:`_probe_family` is given for a position of ``ply`` (with or without
        its children), but the position and the arrays it fills (records ``None`` where a
        ply's are not an array over its map)."""
        ranked, records = self._ply(ply)
        child: tuple[Any, ...] = (ranked, np.zeros(0, dtype=np.uint8))
        if children:
            child = self._ply(ply + 1)
        shared = (self.full, self.symmetries, self.tables, self.binom, self.lines)
        return (ranked, records, *child, *shared, self.lines_through, self.through)

    def release(self) -> None:
        """Drop the views of the files' maps (before they are closed)."""
        self._families.clear()
        self._ranked.clear()
        self._single.clear()
