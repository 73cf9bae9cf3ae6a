"""Tables of a book database and how to connect to one.

One database holds many games. ``games`` has a row per solved (R, C, k) game with its summary
figures; ``position_blocks`` a row per block of canonical positions of one ply of a game, keyed
by ``(game_id, ply, first_key)`` (the layout of a block: :mod:`book.blocks`). On SQLite it is a
``WITHOUT ROWID`` table: the primary key is the storage order, so there is no second index and
blocks inserted in key order go in sequentially.

``ladder_games`` caches the games of a game's reference ladder of agents and of the agents
rated against it (:mod:`book.ladder`): a row per pair of agents and colour.

The ``meta`` table records :data:`SCHEMA_VERSION`; it is written in the same transaction that
creates the tables, so a database never holds the tables without their version.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Engine, make_url

from ttt_solve.book.blocks import FIRST_KEY_BYTES, TABLE
from ttt_solve.book.defaults import DEFAULT_DB as DEFAULT_DB  # re-exported
from ttt_solve.book.defaults import SCHEMA_VERSION as SCHEMA_VERSION
from ttt_solve.book.errors import BookNotFoundError
from ttt_solve.book.urls import hide_password

metadata = sa.MetaData()

meta = sa.Table(
    "meta",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("value", sa.String(256), nullable=False),
)

games = sa.Table(
    "games",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("rows", sa.Integer, nullable=False),
    sa.Column("cols", sa.Integer, nullable=False),
    sa.Column("k", sa.Integer, nullable=False),
    sa.Column("method", sa.String(16), nullable=False),  # "exhaustive", "alphabeta" or "table"
    sa.Column("book_depth", sa.Integer, nullable=True),  # last ply stored by an opening book
    sa.Column("solver_version", sa.String(32), nullable=False),
    sa.Column("value", sa.SmallInteger, nullable=False),  # for X at the start: 1, 0, -1
    sa.Column("remoteness", sa.Integer, nullable=False),
    sa.Column("positions", sa.BigInteger, nullable=False),  # rows stored (canonical)
    sa.Column("reachable", sa.BigInteger, nullable=False),  # positions they stand for
    sa.Column("figures", sa.Text, nullable=False),  # JSON of solver.figures.Figures
    sa.Column("seconds", sa.Float, nullable=False),
    sa.Column("solved_at", sa.DateTime(timezone=True), nullable=False),
    # A game stored as a tablebase (method "table"): its folder, absolute or relative to the
    # folder of the book's SQLite file (see book.table.rows); NULL for a game stored in blocks.
    sa.Column("table_folder", sa.Text, nullable=True),
    sa.UniqueConstraint("rows", "cols", "k", name="one_game_per_rules"),
)


position_blocks = sa.Table(
    TABLE,
    metadata,
    sa.Column(
        "game_id", sa.Integer, sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    ),
    sa.Column("ply", sa.SmallInteger, primary_key=True),
    sa.Column("first_key", sa.LargeBinary(FIRST_KEY_BYTES), primary_key=True),
    sa.Column("count", sa.Integer, nullable=False),  # positions in the block
    sa.Column("keys", sa.LargeBinary, nullable=False),  # packed, see book.blocks
    sa.Column("data", sa.LargeBinary, nullable=False),
    sqlite_with_rowid=False,
)
"""A row per block of up to ``BLOCK_POSITIONS`` positions of one ply (:mod:`book.blocks`)."""


ladder_games = sa.Table(
    "ladder_games",
    metadata,
    sa.Column(
        "game_id", sa.Integer, sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    ),
    sa.Column("ladder", sa.String(64), primary_key=True),  # the set of rungs, by name
    sa.Column("games_per_pair", sa.Integer, primary_key=True),
    sa.Column("seed", sa.BigInteger, primary_key=True),
    sa.Column("x_agent", sa.Text, primary_key=True),  # the spec of the agent playing X
    sa.Column("o_agent", sa.Text, primary_key=True),
    sa.Column("x_wins", sa.Integer, nullable=False),
    sa.Column("draws", sa.Integer, nullable=False),
    sa.Column("o_wins", sa.Integer, nullable=False),
    sa.Column("rated", sa.Text, nullable=False),  # "" for the ladder's own games, else the agent
    sa.Column("played_at", sa.DateTime(timezone=True), nullable=False),
)
"""Games of a reference ladder and of the agents rated against it (:mod:`book.ladder`)."""


@event.listens_for(meta, "after_create")
def _record_version(target: sa.Table, connection: sa.Connection, **_kw: object) -> None:
    # create_all runs this inside its own transaction: the version row and the tables appear
    # together, and a process killed during creation leaves neither.
    connection.execute(sa.insert(meta).values(name="schema_version", value=str(SCHEMA_VERSION)))


def database_url(db: str) -> URL:
    """A ``--db`` argument as a URL: any SQLAlchemy URL, or else a path to a SQLite file.

    Raises :class:`~book.errors.BookNotFoundError` quoting ``db`` for a malformed URL.
    """
    if "://" in db:
        try:
            return make_url(db)
        except (sa.exc.ArgumentError, ValueError) as error:
            shown = hide_password(db)  # the error may quote the whole URL too
            reason = str(error).replace(db, shown)
            raise BookNotFoundError(f"cannot open a book at {shown!r}: {reason}") from None
    return URL.create("sqlite", database=os.path.abspath(db))


def is_sqlite(url: URL) -> bool:
    return url.get_backend_name() == "sqlite"


def sqlite_path(url: URL) -> str | None:
    """The file of a SQLite URL (None for an in-memory database)."""
    if not is_sqlite(url) or url.database in (None, "", ":memory:"):
        return None
    return url.database


def is_postgresql(url: URL) -> bool:
    return url.get_backend_name() == "postgresql"


_SQLITE_BUSY_SECONDS = 600  # how long a writer waits for another's lock before it fails


def make_engine(url: URL, read_only: bool = False) -> Engine:
    """An engine with this project's SQLite settings; ``read_only``: one that cannot write
    (a SQLite file opened in SQLite's read-only mode, PostgreSQL in read-only transactions).

    SQLite: WAL journal (readers keep reading while a game is written), a generous busy
    timeout (a second writer waits instead of failing), and transactions begun by us:
    ``BEGIN IMMEDIATE`` for connections with the execution option ``write=True`` so a writer
    takes the write lock before it reads, plain ``BEGIN`` otherwise. Other backends keep their
    defaults (PostgreSQL writers serialise on advisory locks, see :mod:`book.writer`).

    Raises :class:`~book.errors.BookNotFoundError` quoting the URL when SQLAlchemy has no
    dialect or driver for it (``foo://``, or ``postgresql+psycopg`` without psycopg installed).
    """
    path = sqlite_path(url)
    options: dict[str, Any] = {}
    if read_only and path is not None:
        from ttt_solve.book.sqliterows import read_only_uri

        uri = read_only_uri(path)
        options["creator"] = lambda: sqlite3.connect(uri, uri=True, check_same_thread=False)
    try:
        engine = sa.create_engine(url, **options)
    except (ImportError, sa.exc.ArgumentError) as error:
        shown = url.render_as_string(hide_password=True)
        hint = " (install the driver: pip install 'psycopg[binary]')" if is_postgresql(url) else ""
        raise BookNotFoundError(f"cannot open a book at {shown}: {error}{hint}") from None
    if is_sqlite(url):

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
            cursor = dbapi_connection.cursor()
            cursor.execute(f"PRAGMA busy_timeout = {_SQLITE_BUSY_SECONDS * 1000}")
            cursor.execute("PRAGMA foreign_keys = ON")
            if path is not None and not read_only:
                _switch_to_wal(cursor)
                cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(connection: sa.Connection) -> None:
            mode = "IMMEDIATE" if connection.get_execution_options().get("write") else "DEFERRED"
            connection.exec_driver_sql(f"BEGIN {mode}")

    if read_only and is_postgresql(url):
        engine = engine.execution_options(postgresql_readonly=True)
    return engine


def _switch_to_wal(cursor: sqlite3.Cursor) -> None:
    """``PRAGMA journal_mode = WAL``, waiting out other connections as the busy timeout would.

    SQLite does not call the busy handler while it changes the journal mode, so a connection
    opening a new book in the instant another switches it answers "database is locked" at
    once (two runs started together on one new file); this wait stands in for the handler.
    """
    deadline = time.monotonic() + _SQLITE_BUSY_SECONDS
    pause = 0.001
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.1)


def placeholders(engine: Engine, count: int) -> str:
    """``?, ?, ?`` or ``%s, %s, %s``: the DB-API driver's own parameter markers."""
    style = engine.dialect.paramstyle
    marker = "?" if style == "qmark" else "%s"
    return ", ".join([marker] * count)
