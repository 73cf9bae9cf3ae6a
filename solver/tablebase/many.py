"""Many positions probed at once, arrays in and arrays out: what
:meth:`Tablebase.probe_many <solver.tablebase.probe.Tablebase.probe_many>` does.

The positions are sorted by ply in one kernel pass, each ply's are ranked by the build's
kernel (:func:`solver.tablebase.index.indexes`, from the class table of the ply's X sets,
made once per X count and kept by the tablebase), their records read from the ply's
:class:`~solver.tablebase.probe.PlyRecords` in one gather, and decoded through a table of
the 256 records' values at that ply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numba
import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.errors import InvalidPositionError
from ttt_solve.solver.tablebase.files import HEADER_SIZE
from ttt_solve.solver.tablebase.index import (
    binomials,
    cell_tables,
    class_table,
    compress,
    indexes,
    permute_set,
    popcount,
    rank_set,
)
from ttt_solve.solver.tablebase.lookup import DECIDED, DRAW, NONE, family_problem, stone_counts
from ttt_solve.solver.tablebase.probe import MappedRecords

if TYPE_CHECKING:
    from ttt_solve.solver.tablebase.probe import Probes, Tablebase

_FORBIDDEN = -2
"""The remoteness the decoding table gives a record the rules forbid at its ply."""


@numba.njit(parallel=True, nogil=True, cache=True)
def _plies(x: NDArray[np.int64], o: NDArray[np.int64], full: int) -> NDArray[np.int64]:
    """Each position's ply, or -1 for stones off the board, on a cell twice, or in counts
    no game has (X one stone ahead of O at most, never behind)."""
    out = np.empty(len(x), dtype=np.int64)
    for i in numba.prange(len(x)):
        xs, os_ = x[i], o[i]
        nx, no = popcount(xs), popcount(os_)
        sound = not (xs & os_) and not ((xs | os_) & ~full) and 0 <= nx - no <= 1
        out[i] = nx + no if sound and xs >= 0 and os_ >= 0 else -1
    return out


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
    :data:`~solver.tablebase.lookup.NONE`, and ``-2`` for a record the rules forbid there
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
    from ttt_solve.solver.tablebase.probe import Probes, TableDamagedError

    rules = tablebase.rules
    xs = np.ascontiguousarray(x, dtype=np.int64).ravel()
    os_ = np.ascontiguousarray(o, dtype=np.int64).ravel()
    if xs.shape != os_.shape:
        raise ValueError(f"{len(xs):,} X sets and {len(os_):,} O sets: give one of each a position")
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
    tables = tablebase.class_tables
    for ply in range(rules.cells + 1):
        start, stop = int(starts[ply]), int(starts[ply + 1])
        if start == stop:
            continue
        chosen: Any = slice(None) if stop - start == len(xs) else order[start:stop]
        size = stone_counts(ply)[0]
        if size not in tables:
            tables[size] = class_table(rules, size)
        numbers = indexes(rules, ply, tables[size], xs[chosen], os_[chosen])
        ply_file = tablebase.ply_file(ply)
        records = ply_file.source.records(numbers)
        value_of, remoteness_of = decoding(rules.cells, ply)
        found = remoteness_of[records]
        if (found == _FORBIDDEN).any():
            at = int(np.flatnonzero(found == _FORBIDDEN)[0])
            record, number = int(records[at]), int(numbers[at])
            raise TableDamagedError(
                ply_file.path,
                number,
                f"its record {record} means no value at ply {ply} (a remoteness beyond the "
                f"{rules.cells - ply} empty cells)",
            )
        values[chosen] = value_of[records]
        remoteness[chosen] = found
    shape = np.shape(x)
    return Probes(values.reshape(shape), remoteness.reshape(shape))


# -- one position and its children, compiled --------------------------------------------------


@numba.njit(nogil=True, cache=True)
def _number(
    x: int,
    o: int,
    per_class: int,
    rep_ranks: NDArray[np.int64],
    full: int,
    tables: NDArray[np.int64],
    binom: NDArray[np.int64],
) -> int:
    """The number of a position in its ply's index, its X set's class found by bisection
    over the representatives' ranks (as :meth:`PlyIndex.index
    <solver.tablebase.lookup.PlyIndex.index>`); -1 when no class has its smallest image."""
    rep, symmetry = x, 0
    for s in range(1, tables.shape[0]):
        image = permute_set(x, tables, s)
        if image < rep:
            rep, symmetry = image, s
    rank = rank_set(rep, binom)
    low, high = 0, len(rep_ranks)
    while low < high:
        middle = (low + high) // 2
        if rep_ranks[middle] < rank:
            low = middle + 1
        else:
            high = middle
    if low == len(rep_ranks) or rep_ranks[low] != rank:
        return -1
    image = permute_set(o, tables, symmetry)
    found: int = low * per_class + rank_set(compress(image, full & ~rep), binom)
    return found


@numba.njit(nogil=True, cache=True)
def _family(
    x: int,
    o: int,
    children: bool,
    per_class: int,
    rep_ranks: NDArray[np.int64],
    child_per_class: int,
    child_rep_ranks: NDArray[np.int64],
    full: int,
    tables: NDArray[np.int64],
    binom: NDArray[np.int64],
    out: NDArray[np.int64],
) -> int:
    """Into ``out``: the number of a position, then (with ``children``) those of its
    children in the next ply, one for each empty cell in ascending order; returns how many
    (an array made here would cost more to hand back than the ranking)."""
    empty = full & ~(x | o)
    count = popcount(empty) if children else 0
    if count >= len(out):
        raise ValueError("the array for the numbers is shorter than the position's family")
    out[0] = _number(x, o, per_class, rep_ranks, full, tables, binom)
    x_moves = popcount(x) == popcount(o)
    bits = empty
    for i in range(count):
        bit = bits & -bits
        bits ^= bit
        if x_moves:
            out[1 + i] = _number(x | bit, o, child_per_class, child_rep_ranks, full, tables, binom)
        else:
            out[1 + i] = _number(x, o | bit, child_per_class, child_rep_ranks, full, tables, binom)
    return 1 + count


_family_problem = numba.njit(nogil=True, cache=True)(family_problem)


@numba.njit(nogil=True, cache=True)
def _probe_family(
    x: int,
    o: int,
    children: bool,
    per_class: int,
    rep_ranks: NDArray[np.int64],
    records: NDArray[np.uint8],
    child_per_class: int,
    child_rep_ranks: NDArray[np.int64],
    child_records: NDArray[np.uint8],
    full: int,
    tables: NDArray[np.int64],
    binom: NDArray[np.int64],
    lines: NDArray[np.int64],
    lines_through: NDArray[np.int64],
    numbers: NDArray[np.int64],
    found: NDArray[np.int64],
) -> int:
    """:func:`_family`, the records of its numbers read into ``found``, and (with
    ``children``) :func:`~solver.tablebase.lookup.family_problem` of them, in one call;
    returns the problem (-1: none), or -2 for a number the index or the records do not
    hold (a damaged file, said in words by the plain index)."""
    count = _family(
        x,
        o,
        children,
        per_class,
        rep_ranks,
        child_per_class,
        child_rep_ranks,
        full,
        tables,
        binom,
        numbers,
    )
    for i in range(count):
        held = records if i == 0 else child_records
        if numbers[i] < 0 or numbers[i] >= len(held):
            return -2
        found[i] = held[numbers[i]]
    if not children:
        return -1
    x_moves = popcount(x) == popcount(o)
    mover, opponent = (x, o) if x_moves else (o, x)
    return _family_problem(
        mover,
        opponent,
        full & ~(x | o),
        lines_through.shape[0],
        found[0],
        found[1:count],
        lines,
        lines_through,
    )


class CompiledIndex:
    """A tablebase's look-ups of one position and its children in compiled kernels
    (:func:`_probe_family`): what :meth:`Tablebase.compile
    <solver.tablebase.probe.Tablebase.compile>` switches them to."""

    def __init__(self, tablebase: Tablebase) -> None:
        rules = tablebase.rules
        self.tablebase = tablebase
        self.full = rules.full
        self.cells = rules.cells
        self.tables = cell_tables(rules)
        self.binom = binomials(rules.cells)
        self.lines = np.array(rules.lines, dtype=np.int64)
        width = max(len(through) for through in rules.lines_through)
        self.lines_through = np.full((rules.cells, width), 1 << rules.cells, dtype=np.int64)
        for cell, through in enumerate(rules.lines_through):
            self.lines_through[cell, : len(through)] = through
        self._plies: dict[int, tuple[int, NDArray[np.int64], NDArray[np.uint8] | None]] = {}
        self._none = (0, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint8))
        self._arguments: dict[tuple[int, bool], tuple[Any, ...]] = {}

    def _ply(self, ply: int) -> tuple[int, NDArray[np.int64], NDArray[np.uint8] | None]:
        """A ply's records a number, representatives' ranks and records (as an array over
        the file's map; ``None`` for records read otherwise)."""
        found = self._plies.get(ply)
        if found is None:
            ply_file = self.tablebase.ply_file(ply)
            ranks = np.frombuffer(
                ply_file.data, dtype="<u8", count=ply_file.header.reps, offset=HEADER_SIZE
            ).view(np.int64)
            source = ply_file.source
            records = source.array() if isinstance(source, MappedRecords) else None
            found = self._plies[ply] = (ply_file.index.per_class, ranks, records)
        return found

    def family(
        self, ply: int, x: int, o: int, children: int
    ) -> tuple[NDArray[np.int64], list[int], int]:
        """``(numbers, records, problem)`` of the position ``(x, o)`` of ``ply``, then of its
        ``children`` children (its empty cells, or 0), one a move to each empty cell in
        ascending order, and :func:`~solver.tablebase.lookup.family_problem` of them (-1:
        none, and always without children; -2: a number the index or the records do not
        hold)."""
        arguments = self._arguments.get((ply, children > 0))
        if arguments is None:
            arguments = self._arguments[(ply, children > 0)] = self._arguments_of(ply, children)
        numbers = np.empty(1 + children, dtype=np.int64)  # each call its own: threads share
        found = np.empty(1 + children, dtype=np.int64)
        if arguments[2] is not None and arguments[5] is not None:
            problem = _probe_family(x, o, children > 0, *arguments, numbers, found)
            return numbers, found.tolist(), problem
        per_class, ranks, _, child_per_class, child_ranks, _, *shared = arguments
        count = _family(
            x,
            o,
            children > 0,
            per_class,
            ranks,
            child_per_class,
            child_ranks,
            *shared[:3],
            numbers,
        )
        if count and numbers.min() < 0:
            return numbers, [], -2
        read = [self.tablebase.ply_file(ply).source.record(int(numbers[0]))]
        if not children:
            return numbers, read, -1
        read += self.tablebase.ply_file(ply + 1).source.records(numbers[1:]).tolist()
        mover, opponent = (x, o) if bin(x).count("1") == bin(o).count("1") else (o, x)
        problem = _family_problem(
            mover,
            opponent,
            self.full & ~(x | o),
            self.cells,
            read[0],
            np.array(read[1:], dtype=np.int64),
            self.lines,
            self.lines_through,
        )
        return numbers, read, problem

    def _arguments_of(self, ply: int, children: int) -> tuple[Any, ...]:
        """What :func:`_probe_family` is given for a position of ``ply`` (with or without
        its children), but the position and the arrays it fills."""
        per_class, ranks, records = self._ply(ply)
        child = self._ply(ply + 1) if children else self._none
        shared = (self.full, self.tables, self.binom, self.lines, self.lines_through)
        return (per_class, ranks, records, *child, *shared)

    def release(self) -> None:
        """Drop the views of the files' maps (before they are closed)."""
        self._plies.clear()
        self._arguments.clear()
