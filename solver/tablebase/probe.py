"""The probe: a tablebase read position by position, as python-chess reads Syzygy tables.

>>> with open_tablebase("t.sqlite.tables/3x3k3") as tablebase:     # doctest: +SKIP
...     tablebase.probe(position)          # one record read
...     tablebase.probe_moves(position)    # and one read a move: what a query shows

:func:`open_tablebase` opens the folder a build made (:mod:`solver.tablebase.build`) as a
:class:`Tablebase`, which owns its open files. A position is ranked in its ply's index
(:class:`solver.tablebase.lookup.PlyIndex`: the class of its X set by bisection over the
representatives' ranks, then the rank of its O set) and its record read from the ply's
:class:`PlyRecords`; a move's value is its child's record, ranked the same way. No search,
and neither NumPy nor Numba is loaded, except by :meth:`Tablebase.probe_many`, which ranks
arrays of positions in kernels.

**Damage is never served as truth.** A record that the rules forbid (a remoteness beyond the
empty cells, a finished game recorded as anything but its end, an open one as finished, a win
in one with no winning move) and, in :meth:`Tablebase.probe_moves`, which reads every child
anyway, a position whose record is not the best of its moves' or a legal position recorded as
no position, raise :class:`TableDamagedError` naming the ply's file and the number: no more
reads than the answer takes. :meth:`Tablebase.probe_best` reads and checks what
:meth:`Tablebase.probe_moves` does and gives the best moves' cells and the children's values
instead of every move's value (less work for a process that asks it of millions of positions).

Opening a ply's file checks its header and length (a truncated file is refused);
:meth:`Tablebase.verify` checks each file's digest.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, Protocol, cast

from ttt_solve.errors import TttError
from ttt_solve.solver.errors import InvalidPositionError
from ttt_solve.solver.position import Position, iter_cells
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.compressed import MANIFEST
from ttt_solve.solver.tablebase.compressed import MANIFEST_FORMAT as COMPRESSED_FORMAT
from ttt_solve.solver.tablebase.files import (
    MissingTableError,
    TableError,
    TableFileError,
    TableHeader,
    manifest_json,
    manifest_of,
    open_regular,
    ply_path,
    read_header,
    verify,
)
from ttt_solve.solver.tablebase.lookup import (
    NO_GAME,
    PlyIndex,
    family_problem,
    lines_through_table,
    record_fault,
    stored_ranks,
)
from ttt_solve.solver.tablebase.record import (
    DECIDED,
    DRAW,
    NONE,
    RecordCounts,
    record_of,
    score_of_record,
    value_of_record,
)
from ttt_solve.solver.value import Value, best_child_score, move_value

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ttt_solve.solver.tablebase.compressed import BlockCache
    from ttt_solve.solver.tablebase.many import CompiledIndex


COMPILE_AFTER = 2_000
"""Positions a :class:`Tablebase` looks up one by one in plain Python before it switches to
its compiled look-ups (:meth:`Tablebase.compile`): a one-shot command never pays for Numba's
loading, a process that asks many positions pays it once."""

NO_POSITION = -1
"""The remoteness :meth:`Tablebase.probe_many` gives a position the table holds as no
position (its stones cannot arise in a game)."""


class TableDamagedError(TableFileError):
    """A record no build writes: the message names the ply's file and the number, and says
    what the record contradicts."""

    def __init__(self, path: Path | str, number: int, problem: str) -> None:
        TableError.__init__(self, f"the table is damaged: {path}, number {number:,}: {problem}")
        self.path = str(path)
        self.number = number

    @classmethod
    def contradicted(
        cls, path: Path, number: int, position: Position, recorded: Value, backed: Value
    ) -> TableDamagedError:
        """The error for a position whose record is not the best of its moves' values (read
        from the next ply's file, named too: either file may be the damaged one)."""
        moves = ply_path(path.parent, position.ply + 1).name
        return cls(
            path,
            number,
            f"it records {_said(recorded)} for {position}, but its moves (in {moves}) give "
            f"{_said(backed)}",
        )


class Probe(NamedTuple):
    """A position's value for the side to move and every legal move's value for its mover,
    by cell in ascending order (none once the game is over)."""

    value: Value
    moves: dict[int, Value]

    @property
    def best_moves(self) -> tuple[int, ...]:
        """The cells of the moves that keep the value with the best remoteness, ascending."""
        value = self.value
        return tuple(cell for cell, move in self.moves.items() if move == value)


class Best(NamedTuple):
    """A position's value for the side to move, the cells of its best moves (ascending) and
    its children's values, each for its side to move (one a move to each empty cell, in
    ascending order; none once the game is over)."""

    value: Value
    cells: tuple[int, ...]
    children: list[Value]


class Probes(NamedTuple):
    """Many positions' values for the side to move (1, 0, -1) and remoteness, as arrays in
    the order asked; :data:`NO_POSITION` as the remoteness (and 0 as the value) of a position
    the table holds as no position."""

    values: NDArray[np.int8]
    remoteness: NDArray[np.int8]


class PlyRecords(Protocol):
    """Where a ply's records are read from: one byte a number
    (:mod:`solver.tablebase.step`). The file's bytes through a memory map
    (:class:`MappedRecords`); another form (compressed blocks with a cache) gives the same
    reads."""

    count: int
    """The numbers of the ply."""

    def record(self, number: int) -> int:
        """The record of one number (``0 <= number < count``)."""
        ...

    def records(self, numbers: NDArray[np.int64]) -> NDArray[np.uint8]:
        """The records of many numbers, in their order."""
        ...

    def array(self) -> NDArray[np.uint8]:
        """Every record of the ply, in number order."""
        ...

    def close(self) -> None:
        """Release what the source holds (a later read may open it again)."""
        ...


class MappedRecords:
    """A ply's records as its file holds them, read through the file's memory map."""

    def __init__(self, data: mmap.mmap, offset: int, count: int) -> None:
        self.data = data
        self.offset = offset
        self.count = count

    def record(self, number: int) -> int:
        return self.data[self.offset + number]

    def records(self, numbers: NDArray[np.int64]) -> NDArray[np.uint8]:
        import numpy as np

        view = np.frombuffer(self.data, dtype=np.uint8, count=self.count, offset=self.offset)
        found: NDArray[np.uint8] = view[numbers]
        return found

    def array(self) -> NDArray[np.uint8]:
        """Every record, as an array over the map (no copy)."""
        import numpy as np

        return np.frombuffer(self.data, dtype=np.uint8, count=self.count, offset=self.offset)

    def close(self) -> None:
        pass  # the map is the ply's, closed with it


class _Ply:
    """One ply's file: its index and its records, and the values its records stand for (a
    table of each record's value for the side to move and as a move). A raw file
    (``ply-PP.tb``) is read through its memory map, its ``header``, ``data`` and
    ``records_at`` at hand for streams; a compressed one (``ply-PP.tbz``,
    :mod:`solver.tablebase.compressed`) a block at a time, through ``cache``."""

    def __init__(self, path: Path, rules: Rules, ply: int, cache: BlockCache | None) -> None:
        self.path = path
        self._view: memoryview | None = None
        self.source: PlyRecords
        if cache is not None:
            from ttt_solve.solver.tablebase.compressed import CompressedPly

            compressed = CompressedPly(path, rules, ply, cache)
            self.index, self.source = compressed.index, compressed
            self._ranks = compressed.rep_ranks
        else:
            self.header: TableHeader = read_header(path, rules, ply)
            with open_regular(path) as handle:
                self.data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            header = self.header
            ranks, self._view = stored_ranks(self.data, header.reps_at, header.reps, 8)
            self.index = PlyIndex(rules, ply, ranks)
            self.records_at = header.records_at
            self.source = MappedRecords(self.data, self.records_at, header.count)
            self._ranks = self._mapped_ranks
        empty = rules.cells - ply
        # record -> value, for every record the rules allow at this ply (None: forbidden)
        self.values: list[Value | None] = [None] * 256
        self.values[DRAW] = value_of_record(DRAW, empty)
        for record in range(DECIDED, DECIDED + empty + 1):
            self.values[record] = value_of_record(record, empty)
        self.moves = [None if value is None else move_value(value) for value in self.values]
        self.best_children = [NONE] * 256
        """For each record an open position of this ply may hold, the record of its best
        moves' children (in the next ply)."""
        for record in range(DRAW, DECIDED + empty + 1):
            if record != DECIDED:
                self.best_children[record] = record_of(best_child_score(score_of_record(record)))

    def advise_scattered(self) -> None:
        """Advise the file's map that it is read at random (:meth:`Tablebase.read_scattered`;
        nothing for a compressed file, read a block at a time)."""
        if isinstance(self.source, MappedRecords) and hasattr(mmap, "MADV_RANDOM"):
            self.data.madvise(mmap.MADV_RANDOM)

    def rep_ranks(self) -> NDArray[np.int64]:
        """The representatives' ranks as an array (over the file's map where it can)."""
        return self._ranks()

    def _mapped_ranks(self) -> NDArray[np.int64]:
        import numpy as np

        header = self.header
        ranks = np.frombuffer(self.data, dtype="<u8", count=header.reps, offset=header.reps_at)
        return ranks.view(np.int64)

    def close(self) -> None:
        if self._view is not None:
            self._view.release()
        self.source.close()
        if isinstance(self.source, MappedRecords):
            self.data.close()


class Tablebase:
    """A game's tablebase in a folder: positions looked up by rank. Make one with
    :func:`open_tablebase`; close it (or leave its ``with`` block) to unmap its files."""

    def __init__(
        self,
        folder: Path | str,
        rules: Rules | None = None,
        *,
        compile_after: int | None = COMPILE_AFTER,
    ) -> None:
        self.folder = Path(folder)
        self.compile_after = compile_after
        manifest_path = self.folder / MANIFEST
        data = manifest_json(self.folder)
        compressed = isinstance(data, dict) and data.get("format") == COMPRESSED_FORMAT
        if compressed:
            try:
                game = data["rules"]
                found = Rules(game["rows"], game["cols"], game["k"])
                digests = {entry["ply"]: entry["digest"] for entry in data["plies"]}
                self._entries = {entry["ply"]: entry for entry in data["plies"]}
            except (ValueError, KeyError, TypeError, TttError):
                raise TableFileError(manifest_path, "not a table manifest") from None
        else:
            manifest = manifest_of(data, manifest_path)
            found = manifest.rules
            digests = {entry.ply: entry.blake2b for entry in manifest.plies}
        if rules is not None and rules != found:
            raise TableError(f"{self.folder}: a table of {found.name}, not of {rules.name}")
        self.rules = rules or found  # the caller's own: its positions' rules are these (`is`)
        self.digests = digests
        self.compressed = compressed
        """Whether the folder holds a compressed table (a release), read a block at a time."""
        self._cache: BlockCache | None = None
        if compressed:
            from ttt_solve.solver.tablebase.compressed import BlockCache

            self._cache = BlockCache()
        self.reads = 0
        """Records read so far by :meth:`probe` and :meth:`probe_moves` (one a position)."""
        self.kernels: CompiledIndex | None = None
        """The compiled look-ups (:mod:`solver.tablebase.many`), made by :meth:`probe_many`
        or :meth:`compile`."""
        self._plies: dict[int, _Ply] = {}
        self._compiled: CompiledIndex | None = None  # once compile() asked for them
        self._asked = 0
        self._scattered = False  # whether read_scattered() advised the maps

    def __enter__(self) -> Tablebase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Tablebase {self.rules.name} in {self.folder}>"

    # -- one position -------------------------------------------------------------------------

    def probe(self, position: Position) -> Value:
        """The value of a position for the side to move, with its remoteness: one record.

        Raises :class:`InvalidPositionError` for a position of another game or one no game
        reaches, :class:`TableDamagedError` for a record the rules forbid there."""
        compiled = self._compiled
        if compiled is not None and (position.rules is self.rules or position.rules == self.rules):
            value = compiled.value(position.x, position.o)  # the plain path says why not
            if value is not None:
                self.reads += 1
                return value
        ply, numbers, records, _, _ = self._family(position, False)
        return self._value(ply, numbers[0], records[0], position)

    def probe_moves(self, position: Position) -> Probe:
        """The position's value and every legal move's value: one record for the position
        and one for each move. The moves must agree with the position's record: a record
        that is not the best of its moves', or a move to no position, is
        :class:`TableDamagedError` (so is what :meth:`probe` refuses, for the position and
        for each move's)."""
        value, children, records = self._checked_family(position)
        if children is None:
            return Probe(value, {})
        moves = cast("list[Value]", children.moves)  # the records are sound: checked
        cells = iter_cells(position.empty)
        return Probe(value, dict(zip(cells, [moves[record] for record in records[1:]])))

    def probe_best(self, position: Position) -> Best:
        """The position's value, the cells of its best moves, ascending, and the values of
        its children (one a move to each empty cell, ascending; none once the game is over):
        :meth:`probe_moves`'s reads and checks, without a move's value for every move (for a
        process that asks this of millions of positions: an environment's truth)."""
        value, children, records = self._checked_family(position)
        if children is None:
            return Best(value, (), [])
        empty = position.empty
        cells = [cell for cell in range(self.rules.cells) if empty >> cell & 1]
        best = self._plies[position.ply].best_children[records[0]]
        found = tuple([cell for cell, record in zip(cells, records[1:]) if record == best])
        values = cast("list[Value]", children.values)  # the records are sound: checked
        return Best(value, found, [values[record] for record in records[1:]])

    def _checked_family(self, position: Position) -> tuple[Value, _Ply | None, list[int]]:
        """``(value, children, records)``: the position's value, and where the game goes on,
        the next ply's file; the records of the position and of its children (one a move to
        each empty cell, ascending), checked against each other as :meth:`probe_moves` says."""
        open_ = not position.is_terminal
        ply, numbers, records, problem, checked = self._family(position, open_)
        if checked:
            value = cast("Value", ply.values[records[0]])
        else:
            value = self._value(ply, numbers[0], records[0], position, open_)
        if not open_:
            return value, None, records
        children = self._plies.get(position.ply + 1) or self._ply(position.ply + 1)
        if problem >= 0:
            cells = list(iter_cells(position.empty))
            self._family_damage(position, ply, children, numbers, records, problem, cells)
        return value, children, records

    def record(self, position: Position) -> int:
        """The raw record of a position (:mod:`solver.tablebase.step`), unchecked."""
        return self._family(position, False)[2][0]

    def compile(self) -> None:
        """Look positions up with compiled kernels from now on: the same numbers and checks,
        several times faster a position, for a process that probes many (a server, an
        environment's truth). It loads Numba (a fraction of a second; on a machine's first
        use its kernels are compiled, a minute at most, and kept); a one-shot look-up is
        faster without."""
        if self._compiled is None:
            from ttt_solve.solver.tablebase.many import CompiledIndex

            compiled = self.kernels or CompiledIndex(self)
            compiled.family(0, 0, 0, self.rules.cells)  # loaded (or compiled) now
            compiled.one(0, 0, 0)
            compiled.value(0, 0)
            self.kernels = self._compiled = compiled

    def read_scattered(self) -> None:
        """Have the system read this table's files a page at a time where a look-up misses
        the page cache, rather than with the read-ahead around the page (the maps advised
        ``MADV_RANDOM``, as chess engines advise their Syzygy tables' maps): for a process
        that probes positions scattered over a table larger than memory (an environment's
        truth), where the read-ahead reads megabytes a look-up that nothing else reads.
        Reading a whole ply in order through the same maps is slower after it: open another
        :class:`Tablebase` for that."""
        self._scattered = True
        for ply_file in self._plies.values():
            ply_file.advise_scattered()

    def _family(
        self, position: Position, children: bool
    ) -> tuple[_Ply, list[int], list[int], int, bool]:
        """``(ply, numbers, records, problem, checked)``: the ply of a position, its number
        and record, then with ``children`` those of its children in the next ply, one for
        each empty cell in ascending order, their
        :func:`~solver.tablebase.lookup.family_problem` (-1: none, and always without
        ``children``), and whether the position's record was checked against the rules
        (:func:`~solver.tablebase.lookup.record_fault`; a win in 1 against its moves').
        Counts the records read."""
        if position.rules is not self.rules and position.rules != self.rules:  # `is`: cheap
            raise InvalidPositionError(
                f"a position of {position.rules.name} looked up in a table of {self.rules.name}"
            )
        problem = _count_problem(position)
        if problem is not None:
            raise InvalidPositionError(f"{position} is not a position of a game: {problem}")
        x, o, at = position.x, position.o, position.ply
        self._asked += 1
        if self._asked == self.compile_after and self._compiled is None:
            self.compile()
        ply = self._plies.get(at) or self._ply(at)
        if children:
            child_ply = self._plies.get(at + 1) or self._ply(at + 1)
        if self._compiled is not None and not children:
            number, record = self._compiled.one(at, x, o)
            if number >= 0:
                self.reads += 1
                return ply, [number], [record], -1, False
        elif self._compiled is not None:
            count = self.rules.cells - at
            array, records, found = self._compiled.family(at, x, o, count)
            if found != -2:
                self.reads += 1 + count
                numbers = array.tolist() if found >= 0 else [int(array[0])]
                return ply, numbers, records, found, True
        try:  # the plain index, or the compiled one's failure said in words
            numbers = [ply.index.index(x, o)]
            if children:
                numbers += child_ply.index.children(x, o, list(iter_cells(position.empty)))
        except ValueError as error:  # an X set of no class: a ply's index is damaged
            damaged = child_ply if children and len(numbers) == 1 else ply
            raise TableFileError(damaged.path, f"its index is damaged: {error}") from None
        self.reads += len(numbers)
        records = [ply.source.record(numbers[0])]
        if not children:
            return ply, numbers, records, -1, False
        source = child_ply.source
        records += [source.record(number) for number in numbers[1:]]
        mover, opponent = (x, o) if position.x_to_move else (o, x)
        rules = self.rules
        through, width = lines_through_table(rules)
        found = family_problem(
            mover,
            opponent,
            position.empty,
            rules.cells,
            records[0],
            records[1:],
            rules.lines,
            through,
            width,
        )
        return ply, numbers, records, found, False

    def _family_damage(
        self,
        position: Position,
        ply: _Ply,
        children: _Ply,
        numbers: list[int],
        records: list[int],
        problem: int,
        cells: list[int],
    ) -> NoReturn:
        """Raise the damage :func:`~solver.tablebase.lookup.family_problem` found: a move's
        record the rules forbid, or the position's that is not the best of its moves'."""
        if problem < len(cells):
            child = position.play(cells[problem])
            record = records[1 + problem]
            raise TableDamagedError(
                children.path, numbers[1 + problem], _record_problem(children, record, child)
            )
        value = ply.values[records[0]]
        assert value is not None  # checked first
        moves = [children.moves[record] for record in records[1:]]
        backed = max((move for move in moves if move is not None), key=_score)
        raise TableDamagedError.contradicted(ply.path, numbers[0], position, value, backed)

    def _value(
        self, ply: _Ply, number: int, record: int, position: Position, moves_read: bool = False
    ) -> Value:
        """The value of a position's record, checked against what the rules allow there
        (:func:`~solver.tablebase.lookup.record_fault`; a win in 1 only where a move wins,
        unless ``moves_read``: its moves' records are checked against it)."""
        x, o = position.x, position.o
        mover, last = (x, o) if position.x_to_move else (o, x)
        fault = record_fault(mover, last, position.empty, record, self.rules.lines, not moves_read)
        if fault == NO_GAME and record == NONE:
            problem = position.illegality()
            raise InvalidPositionError(f"{position} is not a position of a game: {problem}")
        if fault:
            raise TableDamagedError(ply.path, number, _record_problem(ply, record, position))
        return cast("Value", ply.values[record])

    # -- many positions -----------------------------------------------------------------------

    def probe_many(self, x: Any, o: Any) -> Probes:
        """The values and remoteness of many positions (arrays of X and O cell sets, aligned:
        any orientation, any mix of plies), ranked in kernels over every core and read one
        record each. Raises :class:`InvalidPositionError` for stones off the board, on one
        cell twice or in counts no game has, and :class:`TableDamagedError` for a record
        beyond its position's empty cells."""
        from ttt_solve.solver.tablebase.many import probe_arrays

        return probe_arrays(self, x, o)

    # -- files --------------------------------------------------------------------------------

    def verify(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Check every ply's file against its digest (and the manifest's record of it);
        returns the files checked. ``progress(done, total)`` is told the bytes read after
        each file."""
        paths = [self._path(ply) for ply in range(self.rules.cells + 1)]
        sizes = [path.stat().st_size if path.exists() else 0 for path in paths]
        for ply, path in enumerate(paths):
            if self.compressed:
                compressed = self._ply(ply).source
                compressed.verify()  # type: ignore[attr-defined]  # a CompressedPly's
                digest = compressed.header.digest  # type: ignore[attr-defined]
            else:
                digest = verify(path, self.rules, ply).digest
            if digest.hex() != self.digests.get(ply):
                raise TableFileError(path, "its digest is not the one the manifest holds")
            if progress is not None:
                progress(sum(sizes[: ply + 1]), sum(sizes))
        return len(paths)

    def record_counts(self, ply: int) -> RecordCounts:
        """How many positions of ``ply`` hold each record, canonical and reachable, as the
        build counted them: a raw file's header holds them, a release's manifest (checked
        against each ply's 12 counts). No record is read."""
        if not self.compressed:
            return read_header(ply_path(self.folder, ply), self.rules, ply).record_counts
        from ttt_solve.solver.tablebase.compressed import held_counts

        try:
            return held_counts(self._entries[ply], self.rules, ply)
        except (ValueError, KeyError) as error:
            raise TableFileError(self.folder / MANIFEST, str(error)) from None

    def ply_file(self, ply: int) -> _Ply:
        """A ply's open file (opened on first use): its header, index and records."""
        return self._ply(ply)

    def _ply(self, ply: int) -> _Ply:
        found = self._plies.get(ply)
        if found is None:
            path = self._path(ply)
            if not path.exists():
                raise MissingTableError(f"{path}: missing from the table; build it again")
            found = self._plies[ply] = _Ply(path, self.rules, ply, self._cache)
            if self._scattered:
                found.advise_scattered()
        return found

    def _path(self, ply: int) -> Path:
        if self.compressed:
            from ttt_solve.solver.tablebase.compressed import compressed_path

            return compressed_path(self.folder, ply)
        return ply_path(self.folder, ply)

    def close(self) -> None:
        """Unmap the files opened so far (a later look-up opens them again)."""
        if self.kernels is not None:
            self.kernels.release()
        for ply_file in self._plies.values():
            try:
                ply_file.close()
            except BufferError:
                # NumPy arrays still view the map (a stream stopped midway): it is unmapped
                # when the last of them goes.
                pass
        self._plies.clear()


def open_tablebase(
    folder: Path | str, rules: Rules | None = None, *, compile_after: int | None = COMPILE_AFTER
) -> Tablebase:
    """Open the tablebase in ``folder`` (its manifest names the game; ``rules``, if given,
    must be it). Files are opened as positions need them; nothing is read whole. After
    ``compile_after`` positions (``None``: never) its look-ups switch to compiled kernels
    (:meth:`Tablebase.compile`).

    Raises :class:`MissingTableError` when the folder holds no finished table,
    :class:`~solver.tablebase.files.TableError` for a table of another game or an
    unreadable manifest."""
    return Tablebase(folder, rules, compile_after=compile_after)


def _count_problem(position: Position) -> str | None:
    """Why a position's stones cannot be ranked in a ply (``None``: they can)."""
    x, o = position.x, position.o
    if x & o:
        return "a cell holds both x and o"
    if (x | o) & ~position.rules.full:
        return "a stone is off the board"
    if not 0 <= x.bit_count() - o.bit_count() <= 1:
        return position.illegality()
    return None


def _record_problem(ply: _Ply, record: int, position: Position) -> str:
    """What is wrong with the record of a position of ``ply``: the rules forbid it there."""
    if record == NONE:
        return f"it records no position for {position}, which a game reaches"
    value = ply.values[record]
    if value is None:
        return (
            f"its record {record} means no value at ply {position.ply} (a remoteness beyond "
            f"the {position.empty_count} empty cells) for {position}"
        )
    if position.illegality() is not None:
        return f"it records {_said(value)} for {position}, which no game reaches"
    if position.is_terminal:
        return f"it records {_said(value)} for {position}, where the game is over"
    if record == DECIDED + 1:
        return f"it records a win in 1 for {position}, where no move wins at once"
    return f"it records {_said(value)} for {position}, where the game is not over"


def _score(value: Value) -> int:
    return value.score


def _said(value: Value) -> str:
    return f"{value.outcome.value} in {value.remoteness}"
