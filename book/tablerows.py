"""The rows of a game stored as a tablebase: a :class:`~book.backend.Backend` over
:class:`~book.table.Table`.

A games row of method ``table`` names the game's folder (``table_folder``): absolute, or
relative to the folder of the book's SQLite file (:func:`table_folder`), so that a book and its
tables move together. The table holds a record per number (value and remoteness); what a block
holds besides is derived here, giving the rows the blocks would give, byte for byte:

- the canonical key: the smallest of the position's images' keys (``x | o << cells``);
- the best moves: the cells whose child's value, looked up in the next ply, is the position's
  (same outcome, one ply less to the end), in the canonical orientation;
- the images: how many distinct positions the canonical one's symmetries make.

Streaming a game (:meth:`TableRows.chunks`) enumerates each ply's reachable canonical positions
from the one before, as the exhaustive solver's forward pass does (children of the open
positions, made canonical, sorted, distinct), and looks each up in the table with NumPy: a ply's
canonical keys are held in memory at once, 8 bytes each (4x5 k=4: 25 million keys at the widest
ply, 200 MB). Past that (5x5: 2.8·10^9 keys at the widest ply, 22.6 GB) a stream in (ply, key)
order needs the keys sorted out of memory, which is not built: :meth:`chunks` refuses boards of
more than :data:`STREAM_CELLS_LIMIT` cells in one line, and look-ups (``positions``,
``family``) work on every board.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ttt_solve.book.backend import Row, StorageDamage
from ttt_solve.book.records import POSITION_COLUMNS
from ttt_solve.book.table import Table
from ttt_solve.book.tablefile import TableError
from ttt_solve.solver.position import Position
from ttt_solve.solver.tablebase import NONE, score_of_record
from ttt_solve.solver.value import Value

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ttt_solve.book.rowfilter import RowFilter
    from ttt_solve.solver.rules import Rules

STREAM_CELLS_LIMIT = 20
"""The largest board whose rows :meth:`TableRows.chunks` streams: each ply's canonical keys
are sorted in memory (4x5: 200 MB at the widest ply; 5x5 would need 22.6 GB)."""


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


def _row(table: Table, position: Position, key: int) -> Row | None:
    """The stored row of a canonical position, or ``None`` when the table holds no position
    there."""
    record = table.record(position)
    if record == NONE:
        return None
    value = Value.from_score(score_of_record(record), position.empty_count)
    best = 0
    for cell, move in table.moves(position).items():
        if move == value:
            best |= 1 << cell
    images = len(set(position.image_keys()))
    return (position.ply, key, value.outcome.sign, value.remoteness, best, images)


class TableRows:
    """The positions of one game, read from its tablebase folder."""

    errors: tuple[type[Exception], ...] = (OSError,)

    def __init__(self, folder: Path, rules: Rules) -> None:
        """Open the table in ``folder``; raises :class:`~book.tablefile.TableError` (one line,
        quoting the folder or file) when it is missing, of another game or unreadable."""
        self.table = Table(folder, rules)

    def positions(self, rules: Rules, game_id: int, ply: int, keys: Sequence[int]) -> list[Row]:
        rows = []
        try:
            for key in sorted(set(keys)):
                row = _row(self.table, Position.from_key(rules, key), key)
                if row is not None:
                    rows.append(row)
        except TableError as error:
            raise StorageDamage(str(error)) from None
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
        """The selected rows in pieces of the positions a block would hold
        (:data:`~book.blocks.BLOCK_POSITIONS` of a ply), so that chunks are cut where a block
        book's are and an export's Parquet row groups are the same."""
        from ttt_solve.book.blocks import BLOCK_POSITIONS

        if rules.cells > STREAM_CELLS_LIMIT:
            raise StorageDamage(
                f"streaming every row of {rules.name} from its table is not built for boards "
                f"over {STREAM_CELLS_LIMIT} cells (each ply's keys are sorted in memory); "
                "look positions up instead"
            )
        try:
            for columns in self.plies(rules):
                for start in range(0, len(columns["key"]), BLOCK_POSITIONS):
                    piece = {
                        name: c[start : start + BLOCK_POSITIONS] for name, c in columns.items()
                    }
                    if where.conditions:
                        keep = where.holds(piece)
                        piece = {name: column[keep] for name, column in piece.items()}
                    if len(piece["key"]):
                        yield piece
        except TableError as error:
            raise StorageDamage(str(error)) from None

    def plies(self, rules: Rules) -> Iterator[dict[str, NDArray[Any]]]:
        """Each ply's rows as columns (the dtypes of :func:`book.blocks.block_columns`), in
        key order, from the empty board on."""
        import numpy as np

        from ttt_solve.solver.keyarrays import key_arrays, sorted_unique

        arrays = key_arrays(rules)
        keys = np.zeros(1, dtype=np.uint64)
        for ply in range(rules.cells + 1):
            if len(keys) == 0:
                return
            values, remoteness = self._values(rules, ply, keys)
            best = np.zeros(len(keys), dtype=np.uint64)
            open_ = remoteness > 0
            children = np.empty(0, dtype=np.uint64)
            if ply < rules.cells and open_.any():
                parents = keys[open_]
                moves, cells = arrays.children(parents, x_to_move=ply % 2 == 0)
                child_values, child_remoteness = self._values(rules, ply + 1, moves.ravel())
                shape = moves.shape
                good = (child_values.reshape(shape) == -values[open_, None]) & (
                    child_remoteness.reshape(shape) == remoteness[open_, None] - 1
                )
                bits = np.left_shift(np.uint64(1), cells.astype(np.uint64))
                best[open_] = np.bitwise_or.reduce(np.where(good, bits, np.uint64(0)), axis=1)
                children = arrays.canonical(moves.ravel())
            yield {
                "ply": np.full(len(keys), ply, dtype=np.int64),
                "key": keys,
                "value": values.astype(np.int64),
                "remoteness": remoteness.astype(np.int64),
                "best_moves": best.astype(np.int64),
                "images": arrays.orbit_sizes(keys).astype(np.int64),
            }
            keys = sorted_unique(children)

    def _values(
        self, rules: Rules, ply: int, keys: NDArray[np.uint64]
    ) -> tuple[NDArray[np.int8], NDArray[np.int8]]:
        """The value (1, 0, -1 for the side to move) and remoteness of positions of ``ply``
        (any orientation), looked up in the table; a position it does not hold is damage."""
        import numpy as np

        from ttt_solve.solver.tablebase_index import class_table, indexes, stone_counts

        cells = np.uint64(rules.cells)
        full = np.uint64(rules.full)
        x = (keys & full).astype(np.int64)
        o = ((keys >> cells) & full).astype(np.int64)
        numbers = indexes(rules, ply, class_table(rules, stone_counts(ply)[0]), x, o)
        ply_file = self.table._ply(ply)
        records = np.frombuffer(ply_file.data, dtype=np.uint8, offset=ply_file.records_at)
        found = records[numbers]
        if (found == NONE).any():
            raise StorageDamage(
                f"{self.table.folder}: ply {ply} of the table holds no record of a position "
                "that a game reaches"
            )
        draw = found == 1
        steps = found.astype(np.int8) - 2
        remoteness = np.where(draw, np.int8(rules.cells - ply), steps).astype(np.int8)
        values = np.where(draw, 0, np.where(steps % 2 == 1, 1, -1)).astype(np.int8)
        return values, remoteness

    def close(self) -> None:
        self.table.close()
