"""Reading a book: open it, find games, look positions up, list and choose moves.

>>> with open_book("ttt.sqlite") as book:                          # doctest: +SKIP
...     entry = book.find(Position.parse("x.o/.x./..o", Rules(3, 3, 3)))
...     entry.value, [book.rules.cell_name(c) for c in entry.best_moves]

Positions are looked up by their canonical key; every answer is turned back into the
orientation of the position asked about.
"""

from __future__ import annotations

import json
import os
import random
from contextlib import contextmanager
from datetime import datetime
from typing import Iterable, Iterator, NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from book import schema
from book.errors import (BookNotFoundError, GameNotFoundError, PositionNotFoundError,
                         SchemaVersionError)
from solver.figures import Figures
from solver.position import Position, iter_cells
from solver.rules import Rules
from solver.value import Outcome, Value, move_value

_LOOKUP_BATCH = 500


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


class Entry(NamedTuple):
    """A stored position, in the orientation it was asked in.

    ``value`` is for the side to move; ``best_moves`` are cell indexes, ascending.
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


class Book:
    """A book database. Make one with :func:`open_book`."""

    def __init__(self, engine: Engine, url: sa.engine.URL) -> None:
        self.engine = engine
        self.url = url
        self._games: dict[Rules, GameInfo] = {}

    # -- games --------------------------------------------------------------------------------

    def games(self) -> list[GameInfo]:
        """Every game in the book, smallest board first."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(schema.games).order_by(
                schema.games.c.rows * schema.games.c.cols, schema.games.c.k)).all()
        return [_game_info(row) for row in rows]

    def find_game(self, rules: Rules) -> GameInfo | None:
        """The game with these rules, or ``None``."""
        if rules in self._games:
            return self._games[rules]
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(schema.games).where(
                schema.games.c.rows == rules.rows, schema.games.c.cols == rules.cols,
                schema.games.c.k == rules.k)).first()
        if row is None:
            return None
        info = _game_info(row)
        self._games[rules] = info
        return info

    def game(self, rules: Rules) -> GameInfo:
        """The game with these rules; :class:`GameNotFoundError` names the command to make it."""
        info = self.find_game(rules)
        if info is None:
            raise GameNotFoundError(
                f"{self.describe()} holds no {rules.name} game; build it with: "
                f"ttt-solve --size {rules.size} --win {rules.k}"
                + ("" if self.url.database == os.path.abspath(schema.DEFAULT_DB) else
                   f" --db {self.display_url}")
            )
        return info

    @property
    def display_url(self) -> str:
        """The database as a user would name it (path for SQLite, URL without password else)."""
        path = schema.sqlite_path(self.url)
        if path:
            return os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
        return self.url.render_as_string(hide_password=True)

    def describe(self) -> str:
        return f"book {self.display_url}"

    # -- positions ----------------------------------------------------------------------------

    def find(self, position: Position) -> Entry:
        """The stored entry of a position; :class:`PositionNotFoundError` if not stored."""
        entry = self.find_many([position]).get(position)
        if entry is None:
            info = self.game(position.rules)
            where = (f"beyond the opening book's depth {info.book_depth}"
                     if info.book_depth is not None else "not reachable")
            raise PositionNotFoundError(f"position {position} is not in the book ({where})")
        return entry

    def get(self, position: Position, default: Entry | None = None) -> Entry | None:
        """The stored entry of a position, or ``default``."""
        return self.find_many([position]).get(position, default)

    def find_many(self, positions: Iterable[Position]) -> dict[Position, Entry]:
        """Entries of many positions of one game, batched; positions not stored are left out."""
        positions = list(dict.fromkeys(positions))
        if not positions:
            return {}
        info = self.game(positions[0].rules)
        wanted: dict[tuple[int, int], list[tuple[Position, int]]] = {}
        for position in positions:
            key, symmetry = position.canonical()
            wanted.setdefault((position.ply, key), []).append((position, symmetry))
        found: dict[Position, Entry] = {}
        table = schema.positions
        pairs = list(wanted)
        with self.engine.connect() as conn:
            for start in range(0, len(pairs), _LOOKUP_BATCH):
                batch = pairs[start:start + _LOOKUP_BATCH]
                by_ply: dict[int, list[int]] = {}
                for ply, key in batch:
                    by_ply.setdefault(ply, []).append(key)
                conditions = [sa.and_(table.c.ply == ply, table.c.key.in_(keys))
                              for ply, keys in by_ply.items()]
                rows = conn.execute(
                    sa.select(table.c.ply, table.c.key, table.c.value, table.c.remoteness,
                              table.c.best_moves, table.c.images)
                    .where(table.c.game_id == info.id, sa.or_(*conditions))
                ).all()
                for ply, key, value, remoteness, best, images in rows:
                    for position, symmetry in wanted[(ply, key)]:
                        rules = position.rules
                        back = rules.inverse(symmetry)
                        cells = tuple(sorted(iter_cells(rules.permute(best, back))))
                        found[position] = Entry(
                            position, Value(Outcome.from_sign(value), remoteness), cells, images)
        return found

    def moves(self, position: Position) -> list[MoveEntry]:
        """Every legal move with its value for the mover, best first (then by cell).

        Raises :class:`PositionNotFoundError` if a child is not stored (past an opening book).
        """
        children = {cell: position.play(cell) for cell in position.legal_moves()}
        entries = self.find_many(children.values())
        result = []
        for cell, child in children.items():
            entry = entries.get(child)
            if entry is None:
                raise PositionNotFoundError(f"position {child} is not in the book")
            result.append(MoveEntry(cell, position.rules.cell_name(cell), move_value(entry.value)))
        result.sort(key=lambda m: (m.value.sort_key, m.cell))
        return result

    def choose(self, position: Position, rng: random.Random) -> int:
        """A best move (fastest win, slowest loss), ties broken by ``rng``."""
        best = self.find(position).best_moves
        if not best:
            raise PositionNotFoundError(f"position {position} is over: it has no moves")
        return rng.choice(best)

    def iter_rows(self, rules: Rules, where: sa.ColumnElement | None = None,
                  batch: int = 50_000) -> Iterator[sa.Row]:
        """Every stored row of a game in (ply, key) order, streamed in batches."""
        info = self.game(rules)
        table = schema.positions
        query = sa.select(table).where(table.c.game_id == info.id)
        if where is not None:
            query = query.where(where)
        query = query.order_by(table.c.ply, table.c.key)
        with self.engine.connect() as conn:
            result = conn.execution_options(yield_per=batch).execute(query)
            yield from result


def _game_info(row: sa.Row) -> GameInfo:
    rules = Rules(row.rows, row.cols, row.k)
    value = Value(Outcome.from_sign(row.value), row.remoteness)
    return GameInfo(row.id, rules, row.method, row.book_depth, row.solver_version, value,
                    row.positions, row.reachable, Figures.from_dict(json.loads(row.figures)),
                    row.seconds, row.solved_at)


def ensure_schema(engine: Engine) -> None:
    """Create the tables if missing and record the schema version."""
    schema.metadata.create_all(engine)
    with engine.begin() as conn:
        found = conn.execute(sa.select(schema.meta.c.value).where(
            schema.meta.c.name == "schema_version")).scalar()
        if found is None:
            conn.execute(sa.insert(schema.meta).values(name="schema_version",
                                                       value=str(schema.SCHEMA_VERSION)))


def check_schema(engine: Engine, url: sa.engine.URL) -> None:
    """Refuse databases that are not books, or books of a newer schema."""
    inspector = sa.inspect(engine)
    if not inspector.has_table("meta"):
        if inspector.get_table_names():
            raise SchemaVersionError(
                f"{url.render_as_string(hide_password=True)} is not a ttt-solve book "
                f"(found tables {', '.join(sorted(inspector.get_table_names()))}, expected meta)")
        return
    with engine.connect() as conn:
        found = conn.execute(sa.select(schema.meta.c.value).where(
            schema.meta.c.name == "schema_version")).scalar()
    try:
        version = int(found)
    except (TypeError, ValueError):
        raise SchemaVersionError(f"found schema version {found!r}, expected a number") from None
    if version > schema.SCHEMA_VERSION:
        raise SchemaVersionError(
            f"the book was written by a newer ttt-solve: found schema version {version}, "
            f"expected {schema.SCHEMA_VERSION} or older; upgrade ttt-solve to read it")


@contextmanager
def open_book(db: str = schema.DEFAULT_DB, create: bool = False) -> Iterator[Book]:
    """Open a book database (path or SQLAlchemy URL); ``create`` makes a missing one.

    Raises :class:`BookNotFoundError` for a missing SQLite file unless ``create``, and
    :class:`SchemaVersionError` for a database that is not a book or is newer than this code.
    """
    url = schema.database_url(db)
    path = schema.sqlite_path(url)
    if path and not create and not os.path.exists(path):
        raise BookNotFoundError(f"no book at {db}: solve a game first (ttt-solve --size 3 --win 3"
                                f"{'' if db == schema.DEFAULT_DB else ' --db ' + db})")
    if path and create:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    engine = schema.make_engine(url)
    try:
        try:
            check_schema(engine, url)
            if create:
                ensure_schema(engine)
        except sa.exc.OperationalError as error:
            raise BookNotFoundError(f"cannot open {db}: {error.orig}") from None
        except sa.exc.DatabaseError as error:
            raise BookNotFoundError(f"cannot read a book at {db}: {error.orig}") from None
        yield Book(engine, url)
    finally:
        engine.dispose()
