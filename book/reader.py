"""Reading a book: open it, find games, look positions up, list and choose moves.

>>> with open_book("ttt.sqlite") as book:                          # doctest: +SKIP
...     entry = book.find(Position.parse("x.o/.x./..o", Rules(3, 3, 3)))
...     entry.value, [book.rules.cell_name(c) for c in entry.best_moves]

Positions are looked up by their canonical key; every answer is turned back into the
orientation of the position asked about.

Two ways to the rows, one behaviour: a SQLite file is read with the standard library's
``sqlite3`` (importing SQLAlchemy alone takes 0.2-0.3 s, most of the budget of a one-shot
``ttt query``), any other database through SQLAlchemy Core. SQLAlchemy is imported only when
it is needed: a non-SQLite URL, ``create=True`` or :attr:`Book.engine` (the writer's way in).
Both ways stream a game's rows, as :class:`StoredRow` s, through :meth:`Book.rows`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import operator
import os
import random
import re
import sqlite3
import urllib.parse
from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from ttt_solve.book.blocks import (
    NARROW,
    TABLE,
    BlockDamage,
    Layout,
    block_columns,
    block_row,
    check_order,
    checked_block,
    find_in_block,
    first_key,
    layout,
)
from ttt_solve.book.defaults import DEFAULT_DB, SCHEMA_VERSION
from ttt_solve.book.errors import (
    BookError,
    BookNotFoundError,
    DamagedBookError,
    GameNotFoundError,
    PositionNotFoundError,
    SchemaVersionError,
)
from ttt_solve.book.rowfilter import PYTHON_OPERATORS, SQL_OPERATORS, RowFilter
from ttt_solve.book.version import read_version, refuse_foreign_tables, refuse_newer
from ttt_solve.errors import TttError
from ttt_solve.solver.errors import IllegalMoveError
from ttt_solve.solver.plystore import make_folder
from ttt_solve.solver.position import Position, iter_cells
from ttt_solve.solver.rules import Rules, parse_game
from ttt_solve.solver.value import Outcome, Value, move_value

if TYPE_CHECKING:
    from sqlalchemy.engine import URL, Engine

    from ttt_solve.book.memory import MemoryTable
    from ttt_solve.solver.figures import Figures

_LOOKUP_BATCH = 4096
"""Keys of one ply looked up at a time: sorted, the keys that share a block read it once."""

_SQLITE_BUSY_MS = 60_000


_GAME_COLUMNS = (
    "id",
    "rows",
    "cols",
    "k",
    "method",
    "book_depth",
    "solver_version",
    "value",
    "remoteness",
    "positions",
    "reachable",
    "figures",
    "seconds",
    "solved_at",
)
_POSITION_COLUMNS = ("ply", "key", "value", "remoteness", "best_moves", "images")


class GameInfo(NamedTuple):
    """A solved game as the ``games`` table describes it."""

    id: int
    rules: Rules
    method: str  # "exhaustive" or "alphabeta"
    book_depth: int | None  # for an opening book: the last ply it holds
    solver_version: str
    value: Value  # of the empty board, for X (who moves first)
    positions: int  # canonical rows stored
    reachable: int  # positions those rows stand for
    figures: Figures
    seconds: float
    solved_at: datetime

    @property
    def is_complete(self) -> bool:
        """Every reachable position is stored (an exhaustive solve)."""
        return self.book_depth is None

    def holds_ply(self, ply: int) -> bool:
        """Whether positions of this ply are stored (all of them, when they are)."""
        return self.book_depth is None or ply <= self.book_depth

    @property
    def scope(self) -> str:
        """``exhaustive`` or ``opening book to ply D``."""
        return "exhaustive" if self.book_depth is None else f"opening book to ply {self.book_depth}"

    def __repr__(self) -> str:
        return (
            f"<GameInfo {self.rules.name}: {self.value} for X, {self.scope}, "
            f"{self.positions:,} positions ({self.reachable:,} reachable)>"
        )


class Entry(NamedTuple):
    """A stored position, in the orientation it was asked in.

    ``value`` is for the side to move; ``best_moves`` are cell indexes, ascending (empty for a
    terminal position); ``images`` is how many reachable positions share its canonical form.
    """

    position: Position
    value: Value
    best_moves: tuple[int, ...]
    images: int


class MoveEntry(NamedTuple):
    """A legal move and its value for the player who makes it."""

    cell: int
    name: str
    value: Value


class StoredRow(NamedTuple):
    """One stored position of a game (canonical orientation), as a block holds it."""

    ply: int
    key: int
    value: int  # for the side to move: 1 win, 0 draw, -1 loss
    remoteness: int
    best_moves: int  # bitmask of cells
    images: int


_stored_row = functools.partial(tuple.__new__, StoredRow)
"""A :class:`StoredRow` from a selected row, made in C: namedtuple's ``_make`` is a Python call
per row, a third of the cost of streaming a game. Rows come from our own SELECT of
:data:`_POSITION_COLUMNS`, so their length is right."""


_BLOCK_SQL = f"SELECT first_key, count, keys, data FROM {TABLE}"
_BLOCK_OF_KEY = (
    f"{_BLOCK_SQL} WHERE game_id = ? AND ply = ? AND first_key <= ? ORDER BY first_key DESC LIMIT 1"
)
_GAME_BLOCKS = f"SELECT ply, first_key, count, keys, data FROM {TABLE} WHERE game_id = ?"


def _blob(column: Any) -> Any:
    """A binary column as ``bytes`` (drivers differ: ``memoryview`` from some); others as
    they are, for the block's checks to report."""
    return bytes(column) if isinstance(column, memoryview) else column


class _BlockReads:
    """The book's reads of positions, from the blocks of ``position_blocks`` (see
    :mod:`book.blocks`), over :meth:`_fetch` and :meth:`_stream`, which each backend gives.

    A key is found in the last block of its ply whose ``first_key`` is not above it, by a
    binary search among the block's keys. A block that no writer makes raises
    :class:`~book.blocks.BlockDamage`."""

    def _fetch(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _stream(self, sql: str, params: Sequence[Any]) -> Iterator[Sequence[Any]]:
        raise NotImplementedError

    def positions(
        self, rules: Rules, game_id: int, ply: int, keys: Sequence[int]
    ) -> list[tuple[Any, ...]]:
        return self._lookup(rules, game_id, ply, keys)

    def family(
        self, rules: Rules, game_id: int, ply: int, key: int, child_keys: Sequence[int]
    ) -> list[tuple[Any, ...]]:
        parent = self._lookup(rules, game_id, ply, (key,))
        return parent + self._lookup(rules, game_id, ply + 1, child_keys)

    def _lookup(
        self, rules: Rules, game_id: int, ply: int, keys: Sequence[int]
    ) -> list[tuple[Any, ...]]:
        """The rows of these keys of one ply that are stored, in key order."""
        shape = layout(rules.cells)
        rows: list[tuple[Any, ...]] = []
        stored: Sequence[int] = []  # the keys of the block read last
        data = b""
        for key in sorted(set(keys)):
            if not stored or not stored[0] <= key <= stored[-1]:
                found = self._fetch(_BLOCK_OF_KEY, (game_id, ply, first_key(key)))
                if not found:
                    stored = []
                    continue
                first, count, packed, data = map(_blob, found[0])
                stored = checked_block(shape, ply, first, count, packed, data)
            row = find_in_block(shape, ply, stored, data, key)
            if row is not None:
                rows.append(row)
        return rows

    def column_chunks(
        self, rules: Rules, game_id: int, where: RowFilter, batch: int
    ) -> Iterator[dict[str, Any]]:
        """The selected rows of a narrow board's game as NumPy columns, about ``batch`` rows
        a chunk (``ply`` and ``key`` included), in (ply, key) order."""
        import numpy as np

        on_ply, params = where.only("ply").sql()
        sql = f"{_GAME_BLOCKS}{on_ply} ORDER BY ply, first_key"
        parts: list[dict[str, Any]] = []
        held = 0
        for ply, *block in self._stream(sql, (game_id, *params)):
            first, count, packed, data = map(_blob, block)
            checked_block(NARROW, ply, first, count, packed, data)
            columns = _narrow_columns(ply, count, packed, data, where)
            columns["ply"] = np.full(len(columns["key"]), ply, dtype=np.int64)
            parts.append(columns)
            held += len(columns["key"])
            if held >= batch:
                yield _joined(parts)
                parts, held = [], 0
        if held:
            yield _joined(parts)

    def chunks(
        self, rules: Rules, game_id: int, where: RowFilter, batch: int
    ) -> Iterator[list[Any]]:
        shape = layout(rules.cells)
        on_ply, params = where.only("ply").sql()
        sql = f"{_GAME_BLOCKS}{on_ply} ORDER BY ply, first_key"
        chunk: list[Any] = []
        for ply, *block in self._stream(sql, (game_id, *params)):
            first, count, packed, data = map(_blob, block)
            stored = checked_block(shape, ply, first, count, packed, data)
            if shape is NARROW and batch >= _NUMPY_BATCH:
                chunk += _narrow_rows(ply, count, packed, data, where)
            else:  # few rows wanted (or a wide board's): plain Python, no NumPy to import
                chunk += _python_rows(shape, ply, stored, data, where)
            if len(chunk) >= batch:
                yield chunk
                chunk = []
        if chunk:
            yield chunk


def _joined(parts: list[dict[str, Any]]) -> dict[str, Any]:
    import numpy as np

    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


_NUMPY_BATCH = 1000
"""Rows a reader asks for at a time from which blocks are unpacked by NumPy: one who asks for
fewer (``ttt stats`` looks for one example row) is spared its import."""


def _python_rows(
    shape: Layout, ply: int, keys: Sequence[int], data: bytes, where: RowFilter
) -> list[Any]:
    """The rows of a block that ``where`` selects, in plain Python: the small columns are
    tested first, and only the positions they select are unpacked whole."""
    count = len(keys)
    columns = {
        "ply": [ply] * count,
        "value": [byte - 256 if byte > 127 else byte for byte in data[:count]],
        "remoteness": list(data[count : 2 * count]),
        "images": list(data[2 * count : 3 * count]),
    }
    chosen: Sequence[int] = range(count)
    for condition in where.conditions:
        column, compare = columns[condition.column], PYTHON_OPERATORS[SQL_OPERATORS[condition.op]]
        chosen = [i for i in chosen if compare(column[i], condition.number)]
    if not chosen:
        return []
    check_order(ply, keys)
    return [block_row(shape, ply, keys[i], data, count, i) for i in chosen]


def _narrow_rows(ply: int, count: int, packed: bytes, data: bytes, where: RowFilter) -> list[Any]:
    """The rows of a block of a board of at most 31 cells that ``where`` selects, unpacked by
    NumPy column by column."""
    from itertools import repeat

    columns = _narrow_columns(ply, count, packed, data, where)
    order = [columns[name].tolist() for name in _POSITION_COLUMNS[1:]]
    return list(zip(repeat(ply), *order))


def _narrow_columns(
    ply: int, count: int, packed: bytes, data: bytes, where: RowFilter
) -> dict[str, Any]:
    """The columns (NumPy arrays) of the rows of a narrow block that ``where`` selects."""
    columns = block_columns(NARROW, ply, count, packed, data)
    if where.conditions:
        import numpy as np

        chosen = np.broadcast_to(where.holds({"ply": ply, **columns}), (count,))
        columns = {name: column[chosen] for name, column in columns.items()}
    return columns


class _SqliteRows(_BlockReads):
    """The book's read queries over a stdlib ``sqlite3`` connection."""

    def __init__(self, path: str, read_only: bool = False) -> None:
        # A Book may be handed between threads, as the SQLAlchemy pool allowed; this SQLite is
        # built serialized (sqlite3.threadsafety == 3), so sharing the connection is safe.
        self.connection = sqlite3.connect(
            _read_only_uri(path) if read_only else path,
            isolation_level=None,
            check_same_thread=sqlite3.threadsafety != 3,
            uri=read_only,
        )
        self.connection.execute(f"PRAGMA busy_timeout = {_SQLITE_BUSY_MS}")
        self.errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def tables(self) -> list[str]:
        rows = self.connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return [name for (name,) in rows]

    def schema_version(self) -> str | None:
        row = self.connection.execute(
            "SELECT value FROM meta WHERE name = 'schema_version'"
        ).fetchone()
        return None if row is None else row[0]

    def games(self, rules: Rules | None = None) -> list[tuple[Any, ...]]:
        sql = f"SELECT {', '.join(_GAME_COLUMNS)} FROM games"
        params: tuple[Any, ...] = ()
        if rules is not None:
            sql += " WHERE rows = ? AND cols = ? AND k = ?"
            params = (rules.rows, rules.cols, rules.k)
        return self.connection.execute(sql + " ORDER BY rows * cols, k", params).fetchall()

    def _fetch(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self.connection.execute(sql, params).fetchall()

    def _stream(self, sql: str, params: Sequence[Any]) -> Iterator[Sequence[Any]]:
        cursor = self.connection.execute(sql, params)
        try:
            while rows := cursor.fetchmany(64):
                yield from rows
        finally:
            # A reader left unfinished may be collected after its book closed the connection.
            with contextlib.suppress(sqlite3.ProgrammingError):
                cursor.close()

    def close(self) -> None:
        self.connection.close()


def _writable(path: str) -> bool:
    """Whether this process may write the book file and its folder (SQLite writes both)."""
    return os.access(path, os.W_OK) and os.access(os.path.dirname(path) or ".", os.W_OK)


def _read_only_uri(path: str) -> str:
    """The URI that opens a book file only to read it.

    ``mode=ro`` where the folder is writable: SQLite still needs to make the write-ahead log's
    index file (``-shm``) beside the book, and readers and a writer share it as usual. In a
    read-only folder nobody can write the book, so it is opened ``immutable`` (no locks, no
    index file) - unless its journal (``-wal``) holds changes not yet in the file, which only
    a connection that may write can fold in.
    """
    uri = f"file:{urllib.parse.quote(path)}"
    if os.access(os.path.dirname(path) or ".", os.W_OK):
        return uri + "?mode=ro"
    journal = path + "-wal"
    if os.path.exists(journal) and os.path.getsize(journal) > 0:
        raise BookNotFoundError(
            f"cannot read the book {path}: its folder is read-only and its journal {journal} "
            f"holds changes not yet in the book; open it once where the folder is writable "
            f"(or copy the book with its -wal file to such a folder)"
        )
    return uri + "?immutable=1"


class _EngineRows(_BlockReads):
    """The same reads through SQLAlchemy, for databases other than SQLite files."""

    def __init__(self, engine: Engine) -> None:
        import sqlalchemy as sa

        self.engine = engine
        self.errors: tuple[type[Exception], ...] = (sa.exc.DBAPIError, sqlite3.Error)

    def tables(self) -> list[str]:
        import sqlalchemy as sa

        return sa.inspect(self.engine).get_table_names()

    def schema_version(self) -> str | None:
        import sqlalchemy as sa

        from ttt_solve.book import schema

        with self.engine.connect() as conn:
            return conn.execute(
                sa.select(schema.meta.c.value).where(schema.meta.c.name == "schema_version")
            ).scalar()

    def games(self, rules: Rules | None = None) -> list[tuple[Any, ...]]:
        import sqlalchemy as sa

        from ttt_solve.book import schema

        games = schema.games
        query = sa.select(*(games.c[name] for name in _GAME_COLUMNS))
        if rules is not None:
            query = query.where(
                games.c.rows == rules.rows, games.c.cols == rules.cols, games.c.k == rules.k
            )
        with self.engine.connect() as conn:
            return [
                tuple(row)
                for row in conn.execute(query.order_by(games.c.rows * games.c.cols, games.c.k))
            ]

    def _driver_sql(self, sql: str) -> str:
        return sql if self.engine.dialect.paramstyle == "qmark" else sql.replace("?", "%s")

    def _fetch(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with self.engine.connect() as conn:
            return [
                tuple(row) for row in conn.exec_driver_sql(self._driver_sql(sql), tuple(params))
            ]

    def _stream(self, sql: str, params: Sequence[Any]) -> Iterator[Sequence[Any]]:
        with self.engine.connect() as conn:
            result = conn.execution_options(yield_per=64).exec_driver_sql(
                self._driver_sql(sql), tuple(params)
            )
            for rows in result.partitions():
                yield from rows

    def close(self) -> None:
        pass


class Book:
    """A book database. Make one with :func:`open_book`.

    ``engine`` may be ``None``: it is then made (and SQLAlchemy imported) on first use of
    :attr:`engine`.
    """

    def __init__(
        self,
        engine: Engine | None,
        url: URL | str,
        *,
        rows: _SqliteRows | _EngineRows | None = None,
    ) -> None:
        self._engine = engine
        self.url = url
        self._games: dict[Rules, GameInfo] = {}
        self._rows = rows if rows is not None else _EngineRows(self.engine)
        self.memory: dict[int, MemoryTable] = {}
        """Games whose rows are held in memory, by game id (see :mod:`book.memory`): their
        :meth:`find_with_moves` reads no database."""

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine of this book (made on first use)."""
        if self._engine is None:
            from ttt_solve.book import schema

            url = schema.database_url(self.url) if isinstance(self.url, str) else self.url
            self._engine = schema.make_engine(url)
        return self._engine

    def close(self) -> None:
        """Release the connections (``open_book`` does it on leaving its block)."""
        self._rows.close()
        if self._engine is not None:
            self._engine.dispose()

    # -- games --------------------------------------------------------------------------------

    def games(self) -> list[GameInfo]:
        """Every game in the book, smallest board first."""
        with self._reading():
            return [self._game_info(row) for row in self._rows.games()]

    def find_game(self, rules: Rules) -> GameInfo | None:
        """The game with these rules, or ``None``."""
        if rules in self._games:
            return self._games[rules]
        with self._reading(rules):
            rows = self._rows.games(rules)
        if not rows:
            return None
        info = self._game_info(rows[0])
        self._games[rules] = info
        return info

    def forget_game(self, rules: Rules) -> None:
        """Drop what this book remembers of a game, so that the next lookup reads its row
        again (the writer calls it when it has replaced or added the game)."""
        self._games.pop(rules, None)

    def _replaced(self, rules: Rules, info: GameInfo) -> bool:
        """Whether the cached ``info`` is out of date: another process re-solved the game
        (``--force``) under a new id since it was read. Asked only after a lookup missed, so
        hits cost nothing; the cache is refreshed either way."""
        self.forget_game(rules)
        fresh = self.find_game(rules)
        return fresh is not None and fresh.id != info.id

    def game(self, rules: Rules) -> GameInfo:
        """The game with these rules; :class:`GameNotFoundError` names the command to make it."""
        info = self.find_game(rules)
        if info is None:
            raise GameNotFoundError(
                f"{self.describe()} holds no {rules.name} game",
                database=self.db_argument,
                rules=rules,
            )
        return info

    @property
    def db_argument(self) -> str:
        """This book as a ``--db`` argument (``ttt.sqlite`` when it is the default)."""
        path = sqlite_file(str(self.url))
        if path is not None and path == os.path.abspath(DEFAULT_DB):
            return DEFAULT_DB
        return self.display_url

    @property
    def display_url(self) -> str:
        """The database as a user would name it (path for SQLite, URL without password else)."""
        path = sqlite_file(str(self.url))
        if path:
            relative = os.path.relpath(path)
            return path if relative.startswith("..") else relative
        if isinstance(self.url, str):
            return self.url
        return self.url.render_as_string(hide_password=True)

    def describe(self) -> str:
        return f"book {self.display_url}"

    def __repr__(self) -> str:
        try:
            games = self.games()
        except BookError as error:
            return f"<Book {self.display_url}: cannot be read: {error}>"
        listed = "; ".join(f"{g.rules.name} {g.value} for X, {g.scope}" for g in games)
        return f"<Book {self.display_url}: {len(games)} game{'s' if len(games) != 1 else ''}" + (
            f" ({listed})>" if games else ">"
        )

    def _repr_html_(self) -> str:
        from html import escape

        rows = "".join(
            f"<tr><td>{escape(g.rules.name)}</td><td>{escape(str(g.value))}</td>"
            f"<td>{escape(g.scope)}</td><td>{g.positions:,}</td><td>{g.reachable:,}</td></tr>"
            for g in self.games()
        )
        return (
            f"<div><b>book {escape(self.display_url)}</b><table><tr><th>game</th>"
            f"<th>value for X</th><th>method</th><th>positions</th><th>reachable</th></tr>"
            f"{rows}</table></div>"
        )

    def damaged(self, detail: str, rules: Rules | None = None) -> DamagedBookError:
        """The error for a book found damaged: ``detail`` says what was found; ``rules`` is
        the game concerned, if one is."""
        return DamagedBookError(
            f"{self.describe()} looks damaged: {detail}", database=self.db_argument, rules=rules
        )

    # -- positions ----------------------------------------------------------------------------

    def find(self, position: Position) -> Entry:
        """The stored entry of a position.

        Raises :class:`PositionNotFoundError` (a ``KeyError``) if the position is not stored,
        :class:`GameNotFoundError` if its game is not in the book.
        """
        entry = self._lookup_one(position)
        if entry is None:
            info = self.game(position.rules)
            if not info.holds_ply(position.ply):
                where = f"it is beyond the opening book's depth {info.book_depth}"
            elif position.illegality() is None:  # reachable, so it should be stored
                raise self.missing(position)
            else:
                where = "it is not reachable"
            raise PositionNotFoundError(f"position {position} is not in {self.describe()}: {where}")
        return entry

    def missing(self, position: Position) -> DamagedBookError:
        """The error for a reachable position of a stored ply that the book does not hold."""
        return self.damaged(
            f"it holds no row for {position}, a reachable position of ply {position.ply}",
            position.rules,
        )

    def get(self, position: Position, default: Entry | None = None) -> Entry | None:
        """The stored entry of a position, or ``default`` if it is not stored.

        A game missing from the book is still an error (:class:`GameNotFoundError`).
        """
        entry = self._lookup_one(position)
        return default if entry is None else entry

    def _lookup_one(self, position: Position) -> Entry | None:
        """One position's entry or ``None``: :meth:`find_many` without the batching."""
        rules = position.rules
        info = self.game(rules)
        if not info.holds_ply(position.ply):
            return None
        key, symmetry = rules.canonical(position.x, position.o)
        with self._reading(rules):
            rows = self._rows.positions(rules, info.id, position.ply, (key,))
        if not rows and self._replaced(rules, info):
            return self._lookup_one(position)
        return self._entry(position, rows[0], symmetry) if rows else None

    def find_many(self, positions: Iterable[Position]) -> dict[Position, Entry]:
        """Entries of many positions of one game, batched; positions not stored are left out."""
        positions = list(dict.fromkeys(positions))
        if not positions:
            return {}
        rules = positions[0].rules
        if any(position.rules != rules for position in positions):
            raise ValueError("find_many looks up positions of one game at a time")
        info = self.game(rules)
        wanted: dict[tuple[int, int], list[tuple[Position, int]]] = {}
        for position in positions:
            if not info.holds_ply(position.ply):
                continue
            key, symmetry = rules.canonical(position.x, position.o)
            wanted.setdefault((position.ply, key), []).append((position, symmetry))
        by_ply: dict[int, list[int]] = {}
        for ply, key in wanted:
            by_ply.setdefault(ply, []).append(key)
        found: dict[Position, Entry] = {}
        for ply, keys in by_ply.items():
            for start in range(0, len(keys), _LOOKUP_BATCH):
                with self._reading(rules):
                    rows = self._rows.positions(
                        rules, info.id, ply, keys[start : start + _LOOKUP_BATCH]
                    )
                for row in rows:
                    for position, symmetry in wanted[(ply, row[1])]:
                        found[position] = self._entry(position, row, symmetry)
        if sum(map(len, wanted.values())) > len(found) and self._replaced(rules, info):
            return self.find_many(positions)
        return found

    def moves(self, position: Position) -> list[MoveEntry]:
        """Every legal move with its value for the mover, best first (then by cell).

        A terminal position has no moves: ``[]``. Raises :class:`PositionNotFoundError` if a
        child is not stored (past the depth of an opening book).
        """
        children = {cell: position.play(cell) for cell in position.legal_moves()}
        entries = self.find_many(children.values())
        values = {}
        for cell, child in children.items():
            entry = entries.get(child)
            if entry is None:
                info = self.game(position.rules)
                if info.holds_ply(child.ply):
                    raise self.missing(child)
                reason = f"beyond the opening book's depth {info.book_depth}"
                raise PositionNotFoundError(
                    f"the moves of {position} are not in {self.describe()}: {reason}"
                )
            values[cell] = move_value(entry.value)
        return _move_entries(position.rules, values)

    def find_with_moves(self, position: Position) -> tuple[Entry, list[MoveEntry]]:
        """:meth:`find` and :meth:`moves` of one position, read in one query.

        The children's canonical keys come from the position's own images under the board's
        symmetries (a child's image is its parent's image plus the image of the new stone), so
        no child is canonicalised on its own. Raises what :meth:`find` and :meth:`moves` raise.
        """
        rules, ply = position.rules, position.ply
        info = self.game(rules)
        terminal = position.is_terminal
        table = self.memory.get(info.id)
        if table is not None and info.holds_ply(ply if terminal else ply + 1):
            family = table.family(position, terminal)
            if family is not None:  # rows checked when the table was loaded
                by_cell = dict(
                    zip(family.cells, map(_move_value, family.values, family.remoteness))
                )
                entry = _oriented_entry(position, family.row, family.symmetry)
                return entry, _move_entries(rules, by_cell)
        if terminal or not info.holds_ply(ply + 1):
            return self.find(position), self.moves(position)  # no children, or none stored
        images = [rules.permute(position.key, s) for s in range(len(rules.symmetries))]
        key = min(images)  # the canonical key, and its first symmetry, as Rules.canonical's
        mover = 0 if position.x_to_move else rules.cells  # where the mover's stones sit in a key
        stone_images = rules.bit_images
        cells_of: dict[int, list[int]] = {}  # symmetric children share a canonical key
        for cell in iter_cells(position.empty):
            child_key = min(map(operator.or_, images, stone_images[mover + cell]))
            cells_of.setdefault(child_key, []).append(cell)
        with self._reading(rules):
            rows = self._rows.family(rules, info.id, ply, key, list(cells_of))
        parent = [row for row in rows if row[0] == ply]
        children = [row for row in rows if row[0] != ply]
        if not parent or len(children) < len(cells_of):
            if self._replaced(rules, info):
                return self.find_with_moves(position)
            return self.find(position), self.moves(position)  # raise what is missing
        values = {}
        for row in children:
            self._check_rows(rules, [row])
            for cell in cells_of[row[1]]:
                values[cell] = _move_value(row[2], row[3])
        return self._entry(position, parent[0], images.index(key)), _move_entries(rules, values)

    def choose(self, position: Position, rng: random.Random | int | None = None) -> int:
        """A best move (fastest win, slowest loss), ties broken by ``rng``.

        ``rng`` is a :class:`random.Random` or a seed; the same seed gives the same move.
        Raises :class:`IllegalMoveError` for a finished game and
        :class:`PositionNotFoundError` for a position that is not stored.
        """
        if position.is_terminal:
            raise IllegalMoveError(f"the game is over in {position}; there is no move to choose")
        best = self.find(position).best_moves
        if not isinstance(rng, random.Random):
            rng = random.Random(rng)
        return rng.choice(best)

    def rows(
        self,
        rules: Rules,
        *,
        where: RowFilter | None = None,
        batch: int = 50_000,
        checked: bool = True,
    ) -> Generator[StoredRow, None, None]:
        """The stored rows of a game in (ply, key) order, streamed ``batch`` rows at a time;
        ``where`` keeps only the rows it selects. Keys and best moves are canonical.

        A row no book can hold (see :meth:`_check_rows`) raises :class:`DamagedBookError`;
        ``checked=False`` hands such rows over as they are, for a checker to report.

        Close the iterator (or read it to the end) to release the database's read cursor.
        """
        info = self.game(rules)
        with self._reading(rules):
            for chunk in self._rows.chunks(rules, info.id, where or RowFilter(), batch):
                if checked:
                    self._check_rows(rules, chunk)
                yield from map(_stored_row, chunk)

    def columns(
        self, rules: Rules, *, where: RowFilter | None = None, batch: int = 1 << 18
    ) -> Generator[dict[str, Any], None, None]:
        """The rows :meth:`rows` gives, as NumPy columns a chunk of about ``batch`` rows at a
        time: ``ply``, ``key`` (``uint64``), ``value``, ``remoteness``, ``best_moves`` (a
        bitmask of cells) and ``images``, in (ply, key) order, checked as :meth:`rows` checks
        them. A board of more than 31 cells (keys past 64 bits) gives ``key`` and
        ``best_moves`` as arrays of Python integers."""
        import numpy as np

        info = self.game(rules)
        where = where or RowFilter()
        if not rules.fits_key:
            rows = list(self.rows(rules, where=where))
            if rows:
                yield {
                    name: np.array([row[i] for row in rows], dtype=object if i in (1, 4) else None)
                    for i, name in enumerate(_POSITION_COLUMNS)
                }
            return
        with self._reading(rules):
            for chunk in self._rows.column_chunks(rules, info.id, where, batch):
                # as int64 (a narrow key has at most 62 bits), as a chunk of rows is checked
                columns = [chunk[name].astype(np.int64) for name in _POSITION_COLUMNS]
                for bad, what in out_of_range(rules, *columns):
                    if bad is not False and np.any(bad):
                        first = int(np.flatnonzero(bad)[0])
                        raise self.damaged(
                            f"a positions row of ply {int(chunk['ply'][first])} holds {what}", rules
                        )
                if (np.bitwise_count(chunk["key"]) != chunk["ply"]).any():
                    raise self.damaged("a positions row's ply is not its count of stones", rules)
                yield chunk

    def frame(
        self,
        game: Rules | str,
        *,
        where: RowFilter | str | None = None,
        expand: bool = False,
        cells: bool = True,
    ) -> Any:
        """The rows of a game (``Rules`` or a name like ``"4x4k4"``) as a pandas DataFrame,
        selected by ``where`` (a :class:`RowFilter` or its text, ``"ply<=4 and value=win"``),
        one row per canonical position or with ``expand`` per reachable one: see
        :func:`book.frame.frame`. Needs pandas (``pip install 'ttt-solve[notebook]'``)."""
        from ttt_solve.book.frame import frame

        rules = game if isinstance(game, Rules) else parse_game(game)
        if isinstance(where, str):
            where = RowFilter.parse(where)
        return frame(self, rules, where=where, expand=expand, cells=cells)

    # -- damage -------------------------------------------------------------------------------

    @contextmanager
    def _reading(self, rules: Rules | None = None) -> Iterator[None]:
        """Turn the database's errors into book errors: damaged pages or a missing table are
        :class:`DamagedBookError` s naming the book and the fix; anything else the database
        refuses (a lock held too long, a lost connection) a :class:`BookError`."""
        try:
            yield
        except BlockDamage as error:
            raise self.damaged(str(error), rules) from None
        except self._rows.errors as error:
            reason = " ".join(str(getattr(error, "orig", None) or error).split())
            if _DAMAGE.search(reason):
                raise self.damaged(f"the database says: {reason}", rules) from None
            raise BookError(f"cannot read {self.describe()}: {reason}") from None

    def _game_info(self, row: Sequence[Any]) -> GameInfo:
        try:
            return _game_info(row)
        except (TypeError, ValueError, KeyError, AttributeError, TttError) as error:
            name = f"{row[1]}x{row[2]} k={row[3]}" if len(row) > 3 else "a game"
            raise self.damaged(
                f"the games row of {name} cannot be read ({type(error).__name__}: {error})"
            ) from None

    def _check_rows(self, rules: Rules, rows: Sequence[Sequence[Any]]) -> None:
        """Raise :class:`DamagedBookError` if a stored row holds what no book can: a value
        that is not a whole number, a value other than 1, 0, -1, a remoteness past the end of
        the game, best moves off the board or on a taken cell, a key or ply off the board.

        Rows that are possible but wrong (a score that is not the best over the children)
        are for ``ttt verify`` to find; these are the ones no reader could present."""
        problem = _row_problem(rules, rows)
        if problem is not None:
            raise self.damaged(problem, rules)

    def _entry(self, position: Position, row: Sequence[Any], symmetry: int) -> Entry:
        """The entry of a stored row, turned back into the orientation of ``position``."""
        self._check_rows(position.rules, [row])
        return _oriented_entry(position, row, symmetry)


def _oriented_entry(position: Position, row: Sequence[Any], symmetry: int) -> Entry:
    """The entry of a checked stored row, turned back into the orientation of ``position``."""
    rules = position.rules
    _, _, value, remoteness, best, images = row
    cells = tuple(iter_cells(rules.permute(best, rules.inverse(symmetry))))
    return Entry(position, _stored_value(value, remoteness), cells, images)


@functools.cache
def _stored_value(value: int, remoteness: int) -> Value:
    """The value of a stored value and remoteness (few pairs exist, as for :func:`_move_value`)."""
    return Value(Outcome.from_sign(value), remoteness)


_DAMAGE = re.compile(r"malformed|no such (table|column)|corrupt|database disk image", re.IGNORECASE)
"""Database errors that mean the file itself is damaged (the same words in SQLite and
PostgreSQL), not that it is busy or out of reach."""


@functools.cache
def _move_value(child_value: int, child_remoteness: int) -> Value:
    """The value of a move to a child of this stored value and remoteness (few pairs exist:
    three values, a remoteness up to the board's cells)."""
    return move_value(_stored_value(child_value, child_remoteness))


def _move_entries(rules: Rules, values: dict[int, Value]) -> list[MoveEntry]:
    """The moves of these values for the mover, best first (then by cell)."""
    names = _cell_names(rules)
    moves = [MoveEntry(cell, names[cell], value) for cell, value in values.items()]
    moves.sort(key=lambda m: (_sort_key(m.value), m.cell))
    return moves


@functools.cache
def _cell_names(rules: Rules) -> tuple[str, ...]:
    """``rules.cell_name`` of every cell, kept (a few games are served, each asked often)."""
    return tuple(map(rules.cell_name, range(rules.cells)))


@functools.cache
def _sort_key(value: Value) -> int:
    """``value.sort_key``, kept: a board has few values, and the property costs three calls."""
    return value.sort_key


def _row_problem(rules: Rules, rows: Sequence[Sequence[Any]]) -> str | None:
    """What makes stored ``positions`` rows unreadable, or ``None``. One row (a lookup) is
    checked in plain Python, a chunk (a stream) by NumPy columns: the same checks
    (:func:`out_of_range`), so streaming a game pays little for them and a lookup does not
    import NumPy. The rows of a board of more than 31 cells (keys past 64 bits) are checked
    one by one in plain Python: such a game is an opening book of few rows."""
    if not rows:
        return None
    if len(rows) > 1 and not rules.fits_key:
        return next(filter(None, (_row_problem(rules, [row]) for row in rows)), None)
    if len(rows) == 1:
        row = rows[0]
        if len(row) != len(_POSITION_COLUMNS) or not all(type(v) is int for v in row):
            return not_a_number(rows)
        columns: Sequence[Any] = row
    else:
        import numpy as np

        try:
            table = np.array(rows)  # whole numbers only: int64; a text, a real or a NULL: not
        except (ValueError, OverflowError):  # rows of different lengths, numbers past 64 bits
            return not_a_number(rows)
        if table.dtype.kind != "i" or table.ndim != 2 or table.shape[1] != len(_POSITION_COLUMNS):
            return not_a_number(rows)
        columns = table.astype(np.int64).T
    for bad, what in out_of_range(rules, *columns):
        if bad is True or (bad is not False and bad.any()):
            first = 0 if bad is True else int(bad.nonzero()[0][0])
            ply = columns[0] if bad is True else columns[0][first]
            return f"a positions row of ply {int(ply)} holds {what}"
    ply, key = columns[0], columns[1]
    if len(rows) == 1:
        misplaced = key.bit_count() != ply
    else:
        import numpy as np

        misplaced = bool((np.bitwise_count(key) != ply).any())
    if misplaced:  # a block of one ply holding a key of another
        return "a positions row's ply is not its count of stones"
    return None


def not_a_number(rows: Sequence[Sequence[Any]]) -> str:
    values = [v for row in rows for v in row]
    bad = next((v for v in values if type(v) is not int), None)  # a text, a real, a NULL
    if bad is None:  # else a number past 64 bits
        bad = next((v for v in values if not -(2**63) <= v < 2**63), None)
    return f"a positions row holds {bad!r} where a whole number belongs"


def out_of_range(
    rules: Rules, ply: Any, key: Any, value: Any, remoteness: Any, best: Any, images: Any
) -> list[tuple[Any, str]]:
    """(which rows are bad, what they hold) for each range a stored column must keep: the
    columns are Python ints (one row) or NumPy arrays (many), the same operators serve both."""
    cells, full = rules.cells, rules.full
    taken = (key & full) | (key >> cells)
    return [
        ((ply < 0) | (ply > cells), "a ply off the board"),
        ((key < 0) | ((key >> cells) >> cells != 0), "a key off the board"),
        ((value < -1) | (value > 1), "a value other than 1, 0, -1"),
        ((remoteness < 0) | (remoteness > cells - ply), "a remoteness past the end of the game"),
        ((best < 0) | (best & ~full != 0) | (best & taken != 0), "best moves off the board"),
        ((images < 1) | (images > len(rules.symmetries)), "an images count no board has"),
    ]


def _game_info(row: Sequence[Any]) -> GameInfo:
    """A ``games`` row read; a field of the wrong type or range raises ``ValueError``."""
    from ttt_solve.solver.figures import Figures

    fields = dict(zip(_GAME_COLUMNS, row))
    whole = ("id", "rows", "cols", "k", "value", "remoteness", "positions", "reachable")
    for name in whole + (() if fields["book_depth"] is None else ("book_depth",)):
        if type(fields[name]) is not int:
            raise ValueError(f"{name} is {fields[name]!r}, not a whole number")
    rules = Rules(fields["rows"], fields["cols"], fields["k"])
    ranges = {
        # An exhaustive solve stores every ply; an opening book (alphabeta) stops at a depth.
        "method": fields["method"]
        == ("exhaustive" if fields["book_depth"] is None else "alphabeta"),
        "value": -1 <= fields["value"] <= 1,
        "remoteness": 0 <= fields["remoteness"] <= rules.cells,
        "positions": fields["positions"] >= 0,
        "reachable": fields["reachable"] >= 0,
        "book_depth": fields["book_depth"] is None or 0 <= fields["book_depth"] <= rules.cells,
        "seconds": isinstance(fields["seconds"], (int, float)),
    }
    for name, good in ranges.items():
        if not good:
            raise ValueError(f"{name} {fields[name]!r} is out of range")
    value = Value(Outcome.from_sign(fields["value"]), fields["remoteness"])
    solved_at = fields["solved_at"]
    if isinstance(solved_at, str):
        solved_at = datetime.fromisoformat(solved_at)
    return GameInfo(
        fields["id"],
        rules,
        fields["method"],
        fields["book_depth"],
        fields["solver_version"],
        value,
        fields["positions"],
        fields["reachable"],
        Figures.from_dict(json.loads(fields["figures"])),
        fields["seconds"],
        solved_at,
    )


_PASSWORD = re.compile(r"^([^:/]+://[^:/@]*:).*@")
"""``scheme://user:`` and everything to the last ``@``: where a URL's password is."""


def hide_password(db: str) -> str:
    """``db`` with a URL's password replaced by ``***``.

    Done on the text, before any parsing, because a URL that does not parse is quoted in its
    error message; to the last ``@``, so that a password holding one is hidden too."""
    return _PASSWORD.sub(r"\1***@", db)


def sqlite_file(db: str) -> str | None:
    """The file of a ``--db`` argument that names a SQLite file, else ``None``.

    Plain paths and ``sqlite:///path`` URLs name files; ``sqlite://`` (in memory) and URLs of
    other databases do not. The same rule as :func:`book.schema.database_url`.
    """
    if "://" not in db:
        return os.path.abspath(db)
    scheme, _, rest = db.partition("://")
    if scheme.split("+")[0] != "sqlite" or not rest.startswith("/") or "?" in rest:
        return None
    path = rest[1:]
    return os.path.abspath(path) if path and path != ":memory:" else None


def book_files(db: str) -> list[str]:
    """The files a SQLite book ``db`` is made of (the database and the companions SQLite keeps
    beside it while writing); none for other databases."""
    path = sqlite_file(db)
    if path is None:
        return []
    return [path] + [path + suffix for suffix in ("-wal", "-shm", "-journal")]


def ensure_schema(engine: Engine) -> None:
    """Create the tables if missing (or upgrade an older book), exclusively: two runs that
    start on a new database do not both create it (see :mod:`book.migrate`)."""
    from ttt_solve.book.migrate import prepare_schema

    prepare_schema(engine)


def _first_rules(rows: _SqliteRows | _EngineRows) -> Rules | None:
    """The rules of a game the book holds, or ``None`` if its games cannot be read."""
    unreadable: tuple[type[Exception], ...] = (IndexError, ValueError, *rows.errors)
    try:
        return _game_info(rows.games()[0]).rules
    except unreadable:
        return None


def _check_schema(rows: _SqliteRows | _EngineRows, db: str, create: bool) -> None:
    """Refuse databases that are not books, or books of a newer schema.

    A database without tables is accepted only when it is to be created.
    """
    tables = rows.tables()
    if "meta" not in tables:
        refuse_foreign_tables(tables, db)
        if not create:
            raise BookNotFoundError(
                f"{db} is not a ttt-solve book: it holds no tables", database=db, kind="not-a-book"
            )
        return
    version = read_version(rows.schema_version(), db)
    refuse_newer(version, SCHEMA_VERSION, db)
    if version < SCHEMA_VERSION and not create:
        raise SchemaVersionError(
            f"{db} was written by an older ttt-solve: found schema version {version}, "
            f"expected {SCHEMA_VERSION}",
            database=db,
            rules=_first_rules(rows),
            kind="older-schema",
        )
    missing = [name for name in ("games", TABLE) if name not in tables]
    if missing and not create:
        raise DamagedBookError(
            f"book {db} looks damaged: it has no {' and no '.join(missing)} table",
            database=db,
            kind="damaged-tables",
        )


def _full_disk_hint(path: str | None) -> str:
    """Why SQLite could not open a book whose disk is full (it reports a "disk I/O error"
    when it cannot make the ``-shm`` index file beside the book), or ``""``."""
    if path is None:
        return ""
    try:
        full = os.statvfs(os.path.dirname(path) or ".").f_bavail == 0
    except OSError:
        return ""
    return "; no space left on its disk: free some space and run again" if full else ""


def _make_book_folder(path: str, db: str) -> None:
    """Make the folder of a new SQLite book, or say in one line why not and what to do."""
    problem = make_folder(os.path.dirname(path) or ".")
    if problem is not None:
        raise BookNotFoundError(
            f"cannot make the folder of the book {hide_password(db)[:200]}: {problem}",
            database=db,
            kind="unwritable-folder",
        )


def unwritable_reason(db: str) -> str | None:
    """Why a SQLite book (or the folder it would be made in) cannot be written, or ``None``:
    SQLite writes beside the book too (its journal), so the folder must be writable.
    ``None`` for a server's book, whose permissions only a write shows."""
    path = sqlite_file(db)
    if path is None:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    for target, what in ((path, "the book file"), (folder, "its folder")):
        if os.path.exists(target) and not os.access(target, os.W_OK):
            return f"{what} {target} is read-only"
    return None


@contextmanager
def open_book(
    db: str = DEFAULT_DB, create: bool = False, read_only: bool = False
) -> Iterator[Book]:
    """Open a book database (path or SQLAlchemy URL); ``create`` makes a missing one.

    ``read_only`` opens the book so that nothing can write through it (a server that only
    reads): a SQLite file in SQLite's read-only mode, PostgreSQL in read-only transactions.

    Raises :class:`BookNotFoundError` for a missing SQLite file unless ``create`` or for a
    file that is not a database, and :class:`SchemaVersionError` for a database that is not a
    book or is newer than this code.
    """
    path = sqlite_file(db)
    if path is not None and not create and not os.path.exists(path):
        raise BookNotFoundError(f"no book at {db}", database=db, kind="no-book")
    if path is not None and create:
        _make_book_folder(path, db)
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)
    shown = hide_password(db)  # what messages quote
    book = None
    try:
        try:
            if create or path is None:
                import sqlalchemy as sa

                from ttt_solve.book import schema

                errors += (sa.exc.DBAPIError,)
                url = schema.database_url(db)
                shown = url.render_as_string(hide_password=True)
                engine = schema.make_engine(url)
                if read_only and engine.dialect.name == "postgresql":
                    engine = engine.execution_options(postgresql_readonly=True)
                book = Book(engine, url, rows=_SqliteRows(path) if path else _EngineRows(engine))
            else:
                # Read-only only where it must be (or is asked): a read-only connection to a
                # book in WAL mode leaves its -wal and -shm files behind when it closes.
                read_only = read_only or not _writable(path)
                book = Book(None, db, rows=_SqliteRows(path, read_only=read_only))
            _check_schema(book._rows, shown, create)
            if create:
                ensure_schema(book.engine)
        except errors as error:
            reason = " ".join(str(getattr(error, "orig", None) or error).split())
            if _DAMAGE.search(reason):
                raise DamagedBookError(
                    f"book {shown} looks damaged: the database says: {reason}; restore it "
                    f"from a copy or solve its games again into a new book"
                ) from None
            raise BookNotFoundError(
                f"cannot read a book at {shown}: {reason}{_full_disk_hint(path)}"
            ) from None
        yield book
    finally:
        if book is not None:
            book.close()
