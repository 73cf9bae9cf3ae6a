"""Creating a book's tables and keeping its schema version, safely when runs overlap.

:func:`prepare_schema` is what a writer calls before it writes: in one write transaction it
creates the tables a new database lacks (recording :data:`book.schema.SCHEMA_VERSION` with
them), upgrades a book written by an older version step by step through :data:`UPGRADES`, and
refuses a newer book or an older one that no step leads from. The transaction is exclusive
(SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: a transaction-level advisory lock), so two runs that
start on a fresh database do not both try to create the tables: the second waits, then finds
them.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from ttt_solve.book import schema
from ttt_solve.book.errors import SchemaVersionError
from ttt_solve.book.version import read_version, refuse_foreign_tables, refuse_newer


def _add_wide_positions(conn: Connection) -> None:
    """Version 1 -> 2: add the (empty) table of games of 32 to 64 cells. The rows of smaller
    games stay where they are, untouched: the step costs the same for any size of book."""
    schema.wide_positions.create(conn)


UPGRADES: dict[int, Callable[[Connection], None]] = {1: _add_wide_positions}
"""``UPGRADES[n]`` turns a book of schema version ``n`` into version ``n + 1`` on an open
write connection (inside the caller's transaction). A table change adds its step here when
it bumps the version."""

SCHEMA_LOCK = 0x7474_7300_0000_0000
"""PostgreSQL advisory-lock key held while the schema is created or upgraded (``tts`` ...)."""


def write_lock(conn: Connection, key: int) -> None:
    """On PostgreSQL, take the transaction-level advisory lock ``key`` (released at commit or
    rollback, also when the client dies). Other backends need nothing: SQLite write
    transactions of this project begin with ``BEGIN IMMEDIATE`` and so are exclusive."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(key)))


def stored_version(conn: Connection, where: str) -> int | None:
    """The schema version recorded in the database; ``None`` if it holds no ``meta`` table.

    Raises :class:`SchemaVersionError` if ``meta`` exists but records no readable version.
    """
    if not sa.inspect(conn).has_table(schema.meta.name):
        return None
    found = conn.execute(
        sa.select(schema.meta.c.value).where(schema.meta.c.name == "schema_version")
    ).scalar()
    return read_version(found, where)


def check_version(version: int, where: str) -> None:
    """Refuse a version this code cannot write to: newer, or older with no upgrade path."""
    current = schema.SCHEMA_VERSION
    refuse_newer(version, current, where)
    missing = [step for step in range(version, current) if step not in UPGRADES]
    if missing:
        raise SchemaVersionError(
            f"{where} was written by an older ttt-solve: found schema version {version}, "
            f"expected {current}, and there is no upgrade from version {missing[0]}; "
            f"solve the games again into a new book (--db NEW)"
        )


def prepare_schema(engine: Engine, where: str | None = None) -> int:
    """Make the database at ``engine`` a current book; return the version it had (0: new).

    One exclusive transaction: create missing tables, or upgrade an older book (every step,
    then the new version, commit together, so an interrupted upgrade leaves the old book), or
    raise :class:`SchemaVersionError` (``where`` names the database in the message).
    """
    where = where or engine.url.render_as_string(hide_password=True)
    with engine.connect().execution_options(write=True) as conn, conn.begin():
        write_lock(conn, SCHEMA_LOCK)
        version = stored_version(conn, where)
        if version is None:
            refuse_foreign_tables(
                set(sa.inspect(conn).get_table_names()) - set(schema.metadata.tables), where
            )
            schema.metadata.create_all(conn)  # the meta table's after_create records the version
            return 0
        check_version(version, where)
        for step in range(version, schema.SCHEMA_VERSION):
            UPGRADES[step](conn)
        if version != schema.SCHEMA_VERSION:
            conn.execute(
                sa.update(schema.meta)
                .where(schema.meta.c.name == "schema_version")
                .values(value=str(schema.SCHEMA_VERSION))
            )
        return version
