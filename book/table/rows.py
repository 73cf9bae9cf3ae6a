"""The rows of a game stored as a tablebase: a :class:`~book.backend.Backend` over
:class:`~solver.tablebase.probe.Tablebase`.

A position is answered directly by the table's probe (:meth:`TableRows.analyse`: one record
for the position and one a move, each checked against the others, no row made); the rows
below are for whatever reads a game as rows (``positions``, ``family``, streams).

A games row of method ``table`` names the game's folder (``table_folder``): absolute, or
relative to the folder of the book's SQLite file (:func:`table_folder`), so that a book and its
tables move together. The table holds a record per number (value and remoteness); what a block
holds besides is derived here, giving the rows the blocks would give, byte for byte:

- the canonical key: the smallest of the position's images' keys (``x | o << cells``);
- the best moves: the cells whose child's value, looked up in the next ply, is the position's
  (same outcome, one ply less to the end), in the canonical orientation;
- the images: how many distinct positions the canonical one's symmetries make.

Streaming a game (:meth:`TableRows.chunks`) goes ply by ply, in one of two orders:

- boards of up to :data:`STREAM_CELLS_LIMIT` cells, in (ply, key) order, as blocks give them:
  each ply's reachable canonical positions are enumerated from the one before, as the
  exhaustive solver's forward pass does (children of the open positions, made canonical,
  sorted, distinct), and looked up in the table with NumPy. A ply's canonical keys are held in
  memory at once, 8 bytes each (4x5 k=4: 25 million keys at the widest ply, 200 MB);
- larger boards (5x5: 2.8·10^9 keys at the widest ply, 22.6 GB), in (ply, number) order: the
  order of the table's index, not of keys. Each ply's numbers are read :data:`SCAN_NUMBERS` at a
  time (:func:`solver.tablebase.positions.stand_for` turns them into positions), so memory stays
  bounded whatever the ply; a ply that ``where``'s conditions on the ply rule out is not read.

Either way, when every ply a stream reads (those selected, and the next of each for the best
moves) is small (:func:`solver.tablebase.smallply.small_enough`: the first plies, which an
export of ``ply<=4`` asks for), each is read whole without kernels (:meth:`TableRows.plain_ply`),
so that a one-shot command does not load Numba for a few thousand rows: the same rows.

Look-ups (``analyse``, ``positions``, ``family``) work on every board.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ttt_solve.book.ahead import stop_requested
from ttt_solve.book.backend import Answer, Row, StorageDamage, TableDamage
from ttt_solve.book.records import POSITION_COLUMNS
from ttt_solve.solver.errors import InvalidPositionError
from ttt_solve.solver.position import Position
from ttt_solve.solver.tablebase.files import TableError
from ttt_solve.solver.tablebase.probe import Tablebase, TableDamagedError
from ttt_solve.solver.tablebase.record import (
    DECIDED,
    DRAW,
    decode_records,
    score_of_record,
    value_of_record,
)
from ttt_solve.solver.value import Value

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ttt_solve.book.rowfilter import RowFilter
    from ttt_solve.solver.exhaustive.keyarrays import KeyArrays
    from ttt_solve.solver.rules import Rules
    from ttt_solve.solver.tablebase.classes import ClassTable
    from ttt_solve.solver.tablebase.smallply import PlyKeys

STREAM_CELLS_LIMIT = 20
"""The largest board whose rows :meth:`TableRows.chunks` streams in (ply, key) order, as
blocks do: each ply's canonical keys are sorted in memory (4x5: 200 MB at the widest ply; 5x5
would need 22.6 GB). Larger boards stream in the order of the table's index."""

KEY_RUNS = 256
"""The most runs :meth:`TableRows.sorted_rows` sorts a ply's keys in (about 120,000 keys each at
4x5 k=4's widest ply: a run's rows are made in a fraction of a second, so a stop is soon
heard); a ply of fewer numbers is sorted in fewer, four for each :data:`SCAN_NUMBERS` (one
when it has fewer), since each run costs a few calls of the kernels."""

SCAN_NUMBERS = 1 << 19
"""Numbers of a ply read at once on a board streamed in index order: with the positions they
stand for and their rows, an export of 5x5 k=4's widest ply was measured at 300 to 430 MB of
the process's own memory, whatever its length (docs/tablebase.md)."""


def _cut(pieces: Iterable[dict[str, NDArray[Any]]], size: int) -> Iterator[dict[str, NDArray[Any]]]:
    """The rows of ``pieces`` (columns of equal length) again, in pieces of ``size`` rows (the
    last one the rest)."""
    import numpy as np

    held: list[dict[str, NDArray[Any]]] = []
    count = 0
    for piece in pieces:
        held.append(piece)
        count += len(piece["key"])
        if count < size:
            continue
        joined = {name: np.concatenate([part[name] for part in held]) for name in piece}
        whole = count - count % size
        for start in range(0, whole, size):
            yield {name: column[start : start + size] for name, column in joined.items()}
        held = [{name: column[whole:] for name, column in joined.items()}]
        count -= whole
    if count:
        yield {name: np.concatenate([part[name] for part in held]) for name in held[0]}


def table_folder(recorded: str, book_file: str | None) -> Path:
    """The folder a games row's ``table_folder`` names: absolute as recorded, or relative to
    the folder of the book's SQLite file (``book_file``; ``None`` for a database that is no
    file, whose tables must be recorded with absolute paths)."""
    path = Path(recorded)
    if path.is_absolute() or book_file is None:
        return path
    return Path(os.path.dirname(os.path.abspath(book_file))) / path


def recorded_folder(folder: Path | str, book_file: str | None) -> str:
    """What a games row records for a table in ``folder``: relative to the book's folder when
    the table lies in it or below (so that they move together), absolute otherwise."""
    folder = Path(os.path.abspath(folder))
    if book_file is not None:
        base = Path(os.path.dirname(os.path.abspath(book_file)))
        if folder == base or base in folder.parents:
            return str(folder.relative_to(base))
    return str(folder)


def _row(position: Position, key: int, answer: Answer) -> Row:
    """The row blocks would hold of a canonical position (its key ``key``), from the table's
    answer."""
    value, moves = answer
    best = 0
    for cell, move in moves.items():
        if move == value:
            best |= 1 << cell
    images = len(set(position.image_keys()))
    return (position.ply, key, value.outcome.sign, value.remoteness, best, images)


def _columns(
    ply: int,
    keys: NDArray[np.uint64],
    values: NDArray[Any],
    remoteness: NDArray[Any],
    best: NDArray[Any] | None,
    images: NDArray[Any] | None,
) -> dict[str, NDArray[Any]]:
    """Rows as columns, with the dtypes of :func:`book.blocks.block_columns` (best moves and
    images left out where not given)."""
    import numpy as np

    columns = {
        "ply": np.full(len(keys), ply, dtype=np.int64),
        "key": keys,
        "value": values.astype(np.int64),
        "remoteness": remoteness.astype(np.int64),
    }
    if best is not None:
        columns["best_moves"] = best.astype(np.int64)
    if images is not None:
        columns["images"] = images.astype(np.int64)
    return columns


class TableRows:
    """The positions of one game, read from its tablebase folder."""

    errors: tuple[type[Exception], ...] = (OSError,)

    def __init__(self, folder: Path, rules: Rules) -> None:
        """Open the table in ``folder``; raises :class:`~solver.tablebase.files.TableError` (one
        line,
        quoting the folder or file) when it is missing, of another game or unreadable."""
        self.table = Tablebase(folder, rules)
        self._classes: dict[int, ClassTable] = {}
        self._arrays: KeyArrays | None = None
        self._decoded: tuple[int, NDArray[np.uint8]] | None = None
        self._plain: dict[int, PlyKeys] = {}

    def analyse(self, rules: Rules, game_id: int, position: Position) -> Answer | None:
        try:
            return self.table.probe_moves(position)
        except InvalidPositionError:
            return None  # no game reaches it: Book says so
        except TableDamagedError as error:
            raise TableDamage(str(error)) from None
        except TableError as error:
            raise StorageDamage(str(error)) from None

    def positions(self, rules: Rules, game_id: int, ply: int, keys: Sequence[int]) -> list[Row]:
        rows = []
        for key in sorted(set(keys)):
            position = Position.from_key(rules, key)
            answer = self.analyse(rules, game_id, position)
            if answer is not None:
                rows.append(_row(position, key, answer))
        return rows

    def family(
        self, rules: Rules, game_id: int, ply: int, key: int, child_keys: Sequence[int]
    ) -> list[Row]:
        return self.positions(rules, game_id, ply, [key]) + self.positions(
            rules, game_id, ply + 1, child_keys
        )

    def chunks(
        self, rules: Rules, game_id: int, where: RowFilter, batch: int
    ) -> Iterator[list[Row]]:
        chunk: list[Row] = []
        for piece in self._pieces(rules, where):
            chunk += zip(*(piece[name].tolist() for name in POSITION_COLUMNS))
            if len(chunk) >= batch:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    def column_chunks(
        self, rules: Rules, game_id: int, where: RowFilter, batch: int
    ) -> Iterator[dict[str, Any]]:
        import numpy as np

        parts: list[dict[str, Any]] = []
        held = 0
        for piece in self._pieces(rules, where):
            parts.append(piece)
            held += len(piece["key"])
            if held >= batch:
                yield {name: np.concatenate([part[name] for part in parts]) for name in piece}
                parts, held = [], 0
        if held:
            yield {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}

    def _pieces(self, rules: Rules, where: RowFilter) -> Iterator[dict[str, NDArray[Any]]]:
        """The selected rows in pieces: of the positions a block would hold
        (:data:`~book.blocks.BLOCK_POSITIONS` of a ply) on a board streamed in key order, so
        that chunks are cut where a block book's are and an export's Parquet row groups are
        the same; of :data:`SCAN_NUMBERS` numbers on a larger board. A ply that ``where``'s
        conditions on the ply rule out is not read."""
        from ttt_solve.book.blocks import BLOCK_POSITIONS

        try:
            if rules.cells > STREAM_CELLS_LIMIT:
                yield from self.scanned_rows(rules, where)
                return
            from ttt_solve.solver.tablebase.smallply import small_enough

            plies = self.selected_plies(rules, where)
            plain = small_enough(rules, plies)
            for ply in plies:
                for piece in _cut(self.key_ordered(rules, ply, plain), BLOCK_POSITIONS):
                    if where.conditions:
                        keep = where.holds(piece)
                        piece = {name: column[keep] for name, column in piece.items()}
                    if len(piece["key"]):
                        yield piece
        except TableError as error:
            raise StorageDamage(str(error)) from None

    @staticmethod
    def selected_plies(rules: Rules, where: RowFilter) -> list[int]:
        """The plies whose rows ``where``'s conditions on the ply may select."""
        plies = where.only("ply")
        return [ply for ply in range(rules.cells + 1) if plies.holds({"ply": ply})]

    def plies(self, rules: Rules) -> Iterator[dict[str, NDArray[Any]]]:
        """Each ply's rows as columns (the dtypes of :func:`book.blocks.block_columns`), in
        key order, from the empty board on."""
        import numpy as np

        for ply in range(rules.cells + 1):
            runs = list(self.key_ordered(rules, ply))
            if runs:
                yield {name: np.concatenate([run[name] for run in runs]) for name in runs[0]}

    def key_ordered(
        self, rules: Rules, ply: int, plain: bool = False
    ) -> Iterator[dict[str, NDArray[Any]]]:
        """A ply's rows in key order, as columns, a run of keys at a time
        (:meth:`sorted_rows`); with ``plain``, a small ply's in one run, read without kernels
        (:meth:`plain_ply`)."""
        runs = self._unpacked(rules, ply)
        if plain:
            whole = self.plain_ply(rules, ply).by_key()
            runs = iter([(whole.keys, whole.records, whole.images)])
        for keys, records, images in runs:
            if stop_requested():
                return
            values, remoteness = decode_records(records, rules.cells - ply)
            best = self.best_moves(rules, ply, keys, records, plain)
            yield _columns(ply, keys, values, remoteness, best, images)

    def _unpacked(
        self, rules: Rules, ply: int
    ) -> Iterator[tuple[NDArray[np.uint64], NDArray[np.uint8], NDArray[np.uint8]]]:
        """The runs of :meth:`sorted_rows` as ``(keys, records, images)``."""
        import numpy as np

        for packed in self.sorted_rows(rules, ply):
            keys = packed >> np.uint64(16)
            images = ((packed >> np.uint64(8)) & np.uint64(0xFF)).astype(np.uint8)
            records = (packed & np.uint64(0xFF)).astype(np.uint8)
            yield keys, records, images

    def plain_ply(self, rules: Rules, ply: int) -> PlyKeys:
        """A small ply's canonical positions read whole without kernels
        (:func:`solver.tablebase.smallply.read_ply`), in number order; the last two read are
        kept (a ply's and its children's)."""
        from ttt_solve.solver.tablebase.smallply import read_ply

        if ply not in self._plain:
            if len(self._plain) >= 2:
                del self._plain[next(iter(self._plain))]
            ply_file = self.table.ply_file(ply)
            ranks = ply_file.rep_ranks().tolist()
            self._plain[ply] = read_ply(rules, ply, ranks, self.records(ply))
        return self._plain[ply]

    def sorted_rows(self, rules: Rules, ply: int) -> Iterator[NDArray[np.uint64]]:
        """A ply's positions in ascending order of their canonical keys, in runs, each packed
        as ``key << 16 | images << 8 | record`` (keys of at most 20 cells take 40 bits).

        They are made from the ply's numbers (each canonical position at its own number),
        parted between :data:`KEY_RUNS` splitters taken from a sample of them, and each part
        sorted on its own: no sort holds the whole ply (4x5 k=4: 25 million keys, seconds
        that neither Ctrl-C nor SIGTERM would interrupt), and nothing but the ply's packed
        keys is held."""
        import numpy as np

        count = len(self.records(ply))
        if count == 0:
            return
        runs = max(1, min(KEY_RUNS, count // SCAN_NUMBERS * 4))
        probe = np.unique(np.linspace(0, count - 1, min(count, 64 * runs)).astype(np.int64))
        splitters = np.sort(self._packed_at(rules, ply, probe))[::64][1:]
        parts: list[list[NDArray[np.uint64]]] = [[] for _ in range(len(splitters) + 1)]
        for start, stop in self.number_ranges(ply):
            if stop_requested():
                return
            packed = self._packed_at(rules, ply, np.arange(start, stop, dtype=np.int64))
            which = np.searchsorted(splitters, packed, side="right")
            order = np.argsort(which, kind="stable")
            bounds = np.searchsorted(which[order], np.arange(1, len(parts)))
            for part, piece in zip(parts, np.split(packed[order], bounds)):
                if len(piece):
                    part.append(piece)
        for part in parts:
            if part:
                packed = np.concatenate(part)
                part.clear()
                packed.sort()
                yield packed

    def _packed_at(self, rules: Rules, ply: int, numbers: NDArray[np.int64]) -> NDArray[np.uint64]:
        """The positions standing at their own numbers among ``numbers`` of ``ply``, packed
        as :meth:`sorted_rows` gives them (in the order of ``numbers``)."""
        import numpy as np

        x, o, records, images = self.positions_at(rules, ply, numbers)
        stones = x.astype(np.uint64) | (o.astype(np.uint64) << np.uint64(rules.cells))
        keys = self._key_arrays(rules).canonical(stones)
        packed: NDArray[np.uint64] = (
            (keys << np.uint64(16))
            | (images.astype(np.uint64) << np.uint64(8))
            | records.astype(np.uint64)
        )
        return packed

    def first_key(self, rules: Rules, value: Value) -> int | None:
        """The canonical key of the first position in (ply, key) order whose value for the
        side to move is ``value`` (a win or a loss), or ``None``: the first ply whose header
        counts a position at its record is searched for the record's byte (a search in the
        memory map, no NumPy), and the smallest key of the positions holding it taken. Rows
        are not streamed, and no other ply's records are read."""
        record = next(
            r for r in range(DRAW, DECIDED + rules.cells + 1) if score_of_record(r) == value.score
        )
        for ply in range(rules.cells + 1):
            if self.table.record_counts(ply).by_record[0, record] == 0:
                continue
            ply_file = self.table.ply_file(ply)
            keys = [
                rules.canonical(*ply_file.index.stones(number))[0]
                for number in self._numbers_holding(ply, record)
            ]
            if keys:
                return min(keys)
        return None

    def _numbers_holding(self, ply: int, record: int) -> Iterator[int]:
        """The numbers of ``ply`` whose record is ``record``, ascending: a search of the raw
        file's map for the byte (no NumPy), or of a compressed ply's records decoded."""
        ply_file = self.table.ply_file(ply)
        if self.table.compressed:
            import numpy as np

            yield from np.flatnonzero(self.records(ply) == record).tolist()
            return
        data, start = ply_file.data, ply_file.records_at
        found = data.find(bytes([record]), start)
        while found >= 0:
            yield found - start
            found = data.find(bytes([record]), found + 1)

    def counted_plies(self, rules: Rules) -> Iterator[dict[str, NDArray[Any]]]:
        """Each ply's canonical positions as the columns ``ply``, ``key`` (in the index's
        orientation, not canonical), ``value``, ``remoteness`` and ``images``, a whole ply at
        a time in the order of the index: what a game's figures count, without the forward
        pass and the children that :meth:`plies` needs for keys in order and best moves."""
        import numpy as np

        for ply in range(rules.cells + 1):
            parts = []
            for start, stop in self.number_ranges(ply):
                numbers = np.arange(start, stop, dtype=np.int64)
                x, o, records, images = self.positions_at(rules, ply, numbers)
                keys = x.astype(np.uint64) | (o.astype(np.uint64) << np.uint64(rules.cells))
                values, remoteness = decode_records(records, rules.cells - ply)
                parts.append(_columns(ply, keys, values, remoteness, None, images))
            if parts and any(len(part["key"]) for part in parts):
                yield {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}

    def scanned_rows(self, rules: Rules, where: RowFilter) -> Iterator[dict[str, NDArray[Any]]]:
        """The rows ``where`` selects, ply by ply in the order of the table's index,
        :data:`SCAN_NUMBERS` numbers at a time (pieces of no row are left out)."""
        from ttt_solve.solver.tablebase.smallply import small_enough

        plies = self.selected_plies(rules, where)
        plain = small_enough(rules, plies)
        for ply in plies:
            for start, stop in self.number_ranges(ply):
                piece = self.scan(rules, ply, start, stop, where, plain)
                if len(piece["key"]):
                    yield piece

    def number_ranges(self, ply: int) -> Iterator[tuple[int, int]]:
        """The ranges of a ply's numbers that :meth:`scanned_rows` reads at once."""
        numbers = self.table.ply_file(ply).source.count
        for start in range(0, numbers, SCAN_NUMBERS):
            yield start, min(numbers, start + SCAN_NUMBERS)

    def scan(
        self,
        rules: Rules,
        ply: int,
        start: int,
        stop: int,
        where: RowFilter | None = None,
        plain: bool = False,
    ) -> dict[str, NDArray[Any]]:
        """The rows of the canonical positions standing at the numbers ``start .. stop-1`` of
        ``ply`` (each at its own number, :mod:`solver.tablebase.positions`) that ``where`` selects,
        in number order; with ``plain``, of a small ply read without kernels
        (:meth:`plain_ply`). Best moves are worked out for the selected rows only."""
        import numpy as np

        if plain:
            whole = self.plain_ply(rules, ply)
            first, last = np.searchsorted(whole.numbers, [start, stop])
            keys = whole.keys[first:last]
            records, images = whole.records[first:last], whole.images[first:last]
        else:
            numbers = np.arange(start, stop, dtype=np.int64)
            x, o, records, images = self.positions_at(rules, ply, numbers)
            keys = self._key_arrays(rules).canonical(
                x.astype(np.uint64) | (o.astype(np.uint64) << np.uint64(rules.cells))
            )
        values, remoteness = decode_records(records, rules.cells - ply)
        piece = _columns(ply, keys, values, remoteness, None, images)
        if where is not None and where.conditions:
            keep = where.holds(piece)
            piece = {name: column[keep] for name, column in piece.items()}
            records = records[keep]
        piece["best_moves"] = self.best_moves(rules, ply, piece["key"], records, plain)
        return {name: piece[name] for name in POSITION_COLUMNS}

    def positions_at(
        self, rules: Rules, ply: int, numbers: NDArray[np.int64]
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.uint8], NDArray[np.uint8]]:
        """``(x, o, records, images)`` of the canonical positions standing at their own
        numbers among ``numbers`` of ``ply`` (X and O cell sets in the index's orientation,
        each one's record, and how many positions its symmetries make), in the order of
        ``numbers``; numbers of no position are left out."""

        from ttt_solve.solver.tablebase.sample import canonical_at

        rep_ranks = self.table.ply_file(ply).rep_ranks()
        found = canonical_at(rules, ply, rep_ranks, self.records(ply), numbers)
        return found.x, found.o, found.records, found.images

    def records(self, ply: int) -> NDArray[np.uint8]:
        """A ply's records, one byte a number: a raw file's through its memory map, a
        compressed one's decoded (once: the last ply decoded is kept)."""
        if self._decoded is not None and self._decoded[0] == ply:
            return self._decoded[1]
        records = self.table.ply_file(ply).source.array()
        if self.table.compressed:
            self._decoded = (ply, records)
        return records

    def children_records(
        self,
        rules: Rules,
        ply: int,
        x: NDArray[np.int64],
        o: NDArray[np.int64],
        records: NDArray[np.uint8],
    ) -> tuple[NDArray[np.uint8], NDArray[np.int64], NDArray[np.int64]]:
        """:func:`solver.tablebase.positions.children_records` from this table's next ply."""
        from ttt_solve.solver.tablebase.positions import children_records

        if ply == rules.cells:
            return children_records(rules, ply, x, o, records, None, records[:0])
        child = self._class_table(rules, ply + 1)
        return children_records(rules, ply, x, o, records, child, self.records(ply + 1))

    def best_moves(
        self,
        rules: Rules,
        ply: int,
        keys: NDArray[np.uint64],
        records: NDArray[np.uint8],
        plain: bool = False,
    ) -> NDArray[np.int64]:
        """The best moves of positions of ``ply`` with these ``records``, as bitmasks of
        cells in the keys' orientation: the moves whose child, looked up in the next ply, has
        the position's value for its mover (with ``plain``, among the next ply's positions
        read without kernels, :meth:`plain_ply`). A child the table does not hold is
        damage."""
        import numpy as np

        x = (keys & np.uint64(rules.full)).astype(np.int64)
        o = (keys >> np.uint64(rules.cells)).astype(np.int64)
        missing: NDArray[Any]  # how many children missing, or whether any is
        if plain:
            from ttt_solve.solver.tablebase import smallply

            children = self.plain_ply(rules, ply + 1) if ply < rules.cells else None
            backed, best, missing = smallply.children_records(rules, ply, keys, records, children)
        else:
            backed, best, missing = self.children_records(rules, ply, x, o, records)
        if missing.any():
            raise StorageDamage(
                f"{self.table.folder}: ply {ply + 1} of the table holds no record of a "
                "position that a game reaches"
            )
        wrong = np.flatnonzero(backed != records)
        if len(wrong):  # a record its children contradict: never streamed as truth
            self._contradicted(rules, ply, int(x[wrong[0]]), int(o[wrong[0]]), backed[wrong[0]])
        return best

    def _contradicted(self, rules: Rules, ply: int, x: int, o: int, backed: int) -> None:
        """Raise the damage of a position whose record is not the one its children give."""
        position = Position(rules, x, o)
        ply_file = self.table.ply_file(ply)
        number = ply_file.index.index(x, o)
        recorded = ply_file.source.record(number)
        empty = position.empty_count
        raise TableDamage(
            str(
                TableDamagedError.contradicted(
                    ply_file.path,
                    number,
                    position,
                    value_of_record(recorded, empty),
                    value_of_record(int(backed), empty),
                )
            )
        )

    def _class_table(self, rules: Rules, ply: int) -> ClassTable:
        """The class table of a ply's X sets, made once; the last two made are kept (a ply's
        and its children's)."""
        from ttt_solve.solver.tablebase.classes import class_table
        from ttt_solve.solver.tablebase.index import stone_counts

        size = stone_counts(ply)[0]
        if size not in self._classes:
            if len(self._classes) >= 2:
                del self._classes[next(iter(self._classes))]
            self._classes[size] = class_table(rules, size)
        return self._classes[size]

    def _key_arrays(self, rules: Rules) -> KeyArrays:
        if self._arrays is None:
            from ttt_solve.solver.exhaustive.keyarrays import key_arrays

            self._arrays = key_arrays(rules)
        return self._arrays

    def close(self) -> None:
        self.table.close()
