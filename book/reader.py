"""Reading a book: open it, find games, look positions up, list and choose moves.

>>> with open_book("ttt.sqlite") as book:                          # doctest: +SKIP
...     entry = book.find(Position.parse("x.o/.x./..o", Rules(3, 3, 3)))
...     entry.value, [book.rules.cell_name(c) for c in entry.best_moves]

Positions are looked up by their canonical key; every answer is turned back into the
orientation of the position asked about.

:class:`Book` reads its games from the database's catalogue and their positions through a
backend (:mod:`book.backend`), and checks every row it reads (:mod:`book.rowchecks`). A SQLite
file is read with the standard library's ``sqlite3`` (:mod:`book.sqliterows`), any other
database through SQLAlchemy Core (:mod:`book.enginerows`): one behaviour, two ways to the
rows. SQLAlchemy is imported only when it is needed: a non-SQLite URL, ``create=True`` or
:attr:`Book.engine` (the writer's way in).
"""

from __future__ import annotations

import functools
import operator
import os
import random
import re
import sqlite3
from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ttt_solve.book.backend import Backend, Catalogue, Database, StorageDamage, TableDamage
from ttt_solve.book.blocks import TABLE
from ttt_solve.book.defaults import DEFAULT_DB, SCHEMA_VERSION
from ttt_solve.book.errors import (
    BookError,
    BookNotFoundError,
    DamagedBookError,
    ErrorKind,
    GameNotFoundError,
    PositionNotFoundError,
    SchemaVersionError,
)
from ttt_solve.book.records import (
    POSITION_COLUMNS,
    Entry,
    GameInfo,
    MoveEntry,
    StoredRow,
    stored_row,
)
from ttt_solve.book.rowchecks import columns_problem, game_info, row_problem
from ttt_solve.book.rowfilter import RowFilter
from ttt_solve.book.sqliterows import SqliteRows, writable
from ttt_solve.book.urls import hide_password, sqlite_file
from ttt_solve.book.version import read_version, refuse_foreign_tables, refuse_newer
from ttt_solve.errors import TttError
from ttt_solve.solver.errors import IllegalMoveError
from ttt_solve.solver.exhaustive.plystore import make_folder
from ttt_solve.solver.position import Position, iter_cells
from ttt_solve.solver.rules import Rules, parse_game
from ttt_solve.solver.value import Outcome, Value, move_value

if TYPE_CHECKING:
    from sqlalchemy.engine import URL, Engine

    from ttt_solve.book.memtable import MemoryTable
    from ttt_solve.solver.tablebase.probe import Tablebase

_LOOKUP_BATCH = 4096
"""Keys of one ply looked up at a time: sorted, the keys that share a block read it once."""


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
        rows: Database | None = None,
        read_only: bool = False,
    ) -> None:
        self._engine = engine
        self.url = url
        self.read_only = read_only
        """Whether the book was opened only to read: an engine made later cannot write."""
        self._games: dict[Rules, GameInfo] = {}
        self._rows: Database = rows if rows is not None else _engine_rows(self.engine)
        self._tables: dict[int, Backend] = {}  # the backends of games stored as tables, by id
        self.memory: dict[int, MemoryTable] = {}
        """Games whose rows are held in memory, by game id (see :mod:`book.memory`): their
        :meth:`find_with_moves` reads no database."""

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine of this book (made on first use)."""
        if self._engine is None:
            from ttt_solve.book import schema

            url = schema.database_url(self.url) if isinstance(self.url, str) else self.url
            self._engine = schema.make_engine(url, read_only=self.read_only)
        return self._engine

    def close(self) -> None:
        """Release the connections and tables (``open_book`` does it on leaving its block)."""
        for table in self._tables.values():
            table.close()
        self._tables.clear()
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
        if info.table_folder is not None:
            return self._probed(info, position)[0]
        key, symmetry = rules.canonical(position.x, position.o)
        backend = self._backend(info)
        with self._reading(rules, backend):
            rows = backend.positions(rules, info.id, position.ply, (key,))
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
        if info.table_folder is not None:  # a table answers positions, not keys
            entries = {position: self._lookup_one(position) for position in positions}
            return {position: entry for position, entry in entries.items() if entry is not None}
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
        backend = self._backend(info)
        for ply, keys in by_ply.items():
            for start in range(0, len(keys), _LOOKUP_BATCH):
                with self._reading(rules, backend):
                    rows = backend.positions(
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
        info = self.game(position.rules)
        if info.table_folder is not None:
            return self._probed(info, position, missing=True)[1]
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
        if info.table_folder is not None:
            entry, moves = self._probed(info, position, missing=True)
            assert entry is not None  # a missing position raised
            return entry, moves
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
        backend = self._backend(info)
        with self._reading(rules, backend):
            rows = backend.family(rules, info.id, ply, key, list(cells_of))
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

    def _probed(
        self, info: GameInfo, position: Position, missing: bool = False
    ) -> tuple[Entry | None, list[MoveEntry]]:
        """The entry and moves of a position of a game stored as a table, probed directly:
        one record for the position and one a move (:meth:`Backend.analyse`); ``(None,
        [])`` for a position no game reaches, or with ``missing`` the error :meth:`find`
        raises for it."""
        backend = self._backend(info)
        with self._reading(info.rules, backend):
            answer = backend.analyse(info.rules, info.id, position)
        if answer is None:
            if missing:
                self.find(position)  # raises: the table holds no such position
            return None, []
        value, by_cell = answer
        best = tuple(cell for cell, move in sorted(by_cell.items()) if move == value)
        images = len(set(position.image_keys()))
        return Entry(position, value, best, images), _move_entries(info.rules, by_cell)

    def tablebase(self, rules: Rules) -> Tablebase | None:
        """The probe of a game stored as a table (``None``: stored in blocks), opened on
        first use and closed with the book: :class:`~solver.tablebase.probe.Tablebase`'s
        ``probe``, ``probe_moves`` and ``probe_many`` read it directly."""
        info = self.game(rules)
        if info.table_folder is None:
            return None
        from ttt_solve.book.table.rows import TableRows

        backend = self._backend(info)
        assert isinstance(backend, TableRows)  # the backend of every game stored as a table
        return backend.table

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
        backend = self._backend(info)
        with self._reading(rules, backend):
            for chunk in backend.chunks(rules, info.id, where or RowFilter(), batch):
                if checked:
                    self._check_rows(rules, chunk)
                yield from map(stored_row, chunk)

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
                    for i, name in enumerate(POSITION_COLUMNS)
                }
            return
        backend = self._backend(info)
        with self._reading(rules, backend):
            for chunk in backend.column_chunks(rules, info.id, where, batch):
                problem = columns_problem(rules, chunk)
                if problem is not None:
                    raise self.damaged(problem, rules)
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

    def table_folder(self, info: GameInfo) -> Path | None:
        """The folder of a game stored as a tablebase (``None``: stored in blocks)."""
        if info.table_folder is None:
            return None
        from ttt_solve.book.table.rows import table_folder

        return table_folder(info.table_folder, sqlite_file(str(self.url)))

    def _backend(self, info: GameInfo) -> Backend:
        """The backend that reads this game's positions: the database's own blocks, or for a
        game stored as a tablebase its table (:mod:`book.table.rows`), opened on first use.

        A table folder that is missing, of another game or damaged is a
        :class:`DamagedBookError` quoting the folder or file."""
        folder = self.table_folder(info)
        if folder is None:
            return self._rows
        tables = self._tables
        if info.id not in tables:
            from ttt_solve.book.table.rows import TableRows
            from ttt_solve.solver.tablebase.files import TableError

            try:
                tables[info.id] = TableRows(folder, info.rules)
            except TableError as error:
                raise self.damaged(f"the table of {info.rules.name}: {error}", info.rules) from None
        return tables[info.id]

    # -- damage -------------------------------------------------------------------------------

    @contextmanager
    def _reading(
        self, rules: Rules | None = None, backend: Backend | None = None
    ) -> Iterator[None]:
        """Turn the errors of the database (or of ``backend``) into book errors: damaged
        storage or a missing table are :class:`DamagedBookError` s naming the book and the
        fix; anything else the store refuses (a lock held too long, a lost connection) a
        :class:`BookError`."""
        try:
            yield
        except TableDamage as error:
            raise DamagedBookError(
                str(error), database=self.db_argument, rules=rules, kind=ErrorKind.DAMAGED_TABLE
            ) from None
        except StorageDamage as error:
            raise self.damaged(str(error), rules) from None
        except (backend or self._rows).errors as error:
            reason = " ".join(str(getattr(error, "orig", None) or error).split())
            if _DAMAGE.search(reason):
                raise self.damaged(f"the database says: {reason}", rules) from None
            raise BookError(f"cannot read {self.describe()}: {reason}") from None

    def _game_info(self, row: Sequence[Any]) -> GameInfo:
        try:
            return game_info(row)
        except (TypeError, ValueError, KeyError, AttributeError, TttError) as error:
            name = f"{row[1]}x{row[2]} k={row[3]}" if len(row) > 3 else "a game"
            raise self.damaged(
                f"the games row of {name} cannot be read ({type(error).__name__}: {error})",
                _rules_of_row(row),
            ) from None

    def _check_rows(self, rules: Rules, rows: Sequence[Sequence[Any]]) -> None:
        """Raise :class:`DamagedBookError` if a stored row holds what no book can
        (:mod:`book.rowchecks`)."""
        problem = row_problem(rules, rows)
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


def ensure_schema(engine: Engine) -> None:
    """Create the tables if missing (or upgrade an older book), exclusively: two runs that
    start on a new database do not both create it (see :mod:`book.migrate`)."""
    from ttt_solve.book.migrate import prepare_schema

    prepare_schema(engine)


def _first_rules(rows: Catalogue) -> Rules | None:
    """The rules of a game the book holds, or ``None`` if its games cannot be read."""
    unreadable: tuple[type[Exception], ...] = (IndexError, ValueError, *rows.errors)
    try:
        return game_info(rows.games()[0]).rules
    except unreadable:
        return None


def _check_schema(rows: Catalogue, db: str, create: bool) -> None:
    """Refuse databases that are not books, or books of a newer schema.

    A database without tables is accepted only when it is to be created.
    """
    tables = rows.tables()
    if "meta" not in tables:
        refuse_foreign_tables(tables, db)
        if not create:
            raise BookNotFoundError(
                f"{db} is not a ttt-solve book: it holds no tables",
                database=db,
                kind=ErrorKind.NOT_A_BOOK,
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
            kind=ErrorKind.OLDER_SCHEMA,
        )
    missing = [name for name in ("games", TABLE) if name not in tables]
    if missing and not create:
        raise DamagedBookError(
            f"book {db} looks damaged: it has no {' and no '.join(missing)} table",
            database=db,
            kind=ErrorKind.DAMAGED_TABLES,
        )


def _rules_of_row(row: Sequence[Any]) -> Rules | None:
    """The game a damaged ``games`` row is of, where its dimensions still read as one."""
    try:
        return Rules(*row[1:4])
    except (TypeError, ValueError):
        return None


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
            kind=ErrorKind.UNWRITABLE_FOLDER,
        )


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
        raise BookNotFoundError(f"no book at {db}", database=db, kind=ErrorKind.NO_BOOK)
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
                engine = schema.make_engine(url, read_only=read_only and not create)
                rows = SqliteRows(path) if path else _engine_rows(engine)
                book = Book(engine, url, rows=rows, read_only=read_only and not create)
            else:
                # Read-only only where it must be (or is asked): a read-only connection to a
                # book in WAL mode leaves its -wal and -shm files behind when it closes.
                read_only = read_only or not writable(path)
                rows = SqliteRows(path, read_only=read_only)
                book = Book(None, db, rows=rows, read_only=read_only)
            _check_schema(book._rows, shown, create)
            if create:
                ensure_schema(book.engine)
        except errors as error:
            reason = " ".join(str(getattr(error, "orig", None) or error).split())
            if _DAMAGE.search(reason):
                raise DamagedBookError(  # the fix, to restore or solve again: fixes.py
                    f"book {shown} looks damaged: the database says: {reason}"
                ) from None
            raise BookNotFoundError(
                f"cannot read a book at {shown}: {reason}{_full_disk_hint(path)}"
            ) from None
        yield book
    finally:
        if book is not None:
            book.close()


def _engine_rows(engine: Engine) -> Database:
    """The backend of a database through SQLAlchemy (imported here: only where it is needed)."""
    from ttt_solve.book.enginerows import EngineRows

    return EngineRows(engine)
