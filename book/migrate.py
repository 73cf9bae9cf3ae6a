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

import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from ttt_solve.book import schema
from ttt_solve.book.errors import SchemaVersionError
from ttt_solve.book.version import read_version, refuse_foreign_tables, refuse_newer
from ttt_solve.solver.rules import KEY_CELLS_LIMIT

if TYPE_CHECKING:
    import numpy as np


def _nothing_to_add(conn: Connection) -> None:
    """Version 1 -> 2 added the (empty) table ``wide_positions`` of games of 32 to 64 cells;
    version 3 replaces it, and :func:`_into_blocks` converts whichever old tables a book has."""


OLD_TABLES = ("positions", "wide_positions")
"""The tables of versions 1 and 2: a row per position, keyed by ``(game_id, ply, key)``;
``wide_positions`` (version 2) with a 16-byte big-endian key and the signed 64-bit pattern of
the best-moves mask."""

_PROGRESS_EVERY = 5.0
"""Seconds between the progress lines of an upgrade of a big book."""


def _into_blocks(conn: Connection) -> None:
    """Version 2 -> 3: every game's rows, read ply by ply in key order, written as blocks
    (:mod:`book.blocks`) into ``position_blocks``; then the old tables are dropped. All in
    the caller's transaction: interrupted, the book stays as it was. A book of more than a
    million positions says how far it is on stderr every few seconds."""
    from ttt_solve.book.blocks import BLOCK_POSITIONS, pack_ply
    from ttt_solve.book.blockwrites import insert_blocks

    batch = 64 * BLOCK_POSITIONS  # old rows read, packed and written at a time: whole blocks
    schema.position_blocks.create(conn)
    tables = [name for name in OLD_TABLES if sa.inspect(conn).has_table(name)]
    games = conn.execute(sa.text("SELECT id, rows, cols, positions FROM games")).all()
    total = sum(int(game.positions) for game in games)
    done, shown = 0, time.perf_counter()
    for game_id, rows, cols, _ in games:
        cells = rows * cols
        wide = cells > KEY_CELLS_LIMIT
        table = "wide_positions" if wide and "wide_positions" in tables else "positions"
        for ply in range(cells + 1):
            select = sa.text(
                f"SELECT key, value, remoteness, best_moves, images FROM {table} "
                "WHERE game_id = :game AND ply = :ply ORDER BY key"
            ).execution_options(yield_per=batch)  # this statement's alone
            result = conn.execute(select, {"game": game_id, "ply": ply})
            # The size is given again: without it SQLite's driver hands over a row at a time.
            for part in result.partitions(batch):  # whole blocks but the ply's last
                old_rows = [tuple(row) for row in part]  # NumPy reads tuples fast, Row objects not
                keys, values, remoteness, images, best = _old_columns(old_rows, cells)
                blocks = pack_ply(cells, keys, values, remoteness, images, best)
                done += sum(insert_blocks(conn, game_id, ply, blocks))
                if total > 1_000_000 and time.perf_counter() - shown > _PROGRESS_EVERY:
                    shown = time.perf_counter()
                    print(
                        f"upgrading the book to schema version 3: {done:,} of {total:,} "
                        "positions packed into blocks",
                        file=sys.stderr,
                        flush=True,
                    )
    for name in tables:
        conn.execute(sa.text(f"DROP TABLE {name}"))


def _old_columns(
    rows: Sequence[Sequence[Any]], cells: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Keys, values, remoteness, images and best moves of old rows, as :func:`pack_ply`
    takes them (a wide key from its 16 bytes, a wide mask from its signed pattern)."""
    import numpy as np

    if cells <= KEY_CELLS_LIMIT:
        table = np.array(rows, dtype=np.int64).reshape(-1, 5)
        keys = table[:, 0].astype(np.uint64)
        best = table[:, 3].astype(np.uint64)
    else:
        keys = np.array([int.from_bytes(bytes(row[0]), "big") for row in rows], dtype=object)
        best = np.array([row[3] & (1 << 64) - 1 for row in rows], dtype=np.uint64)
        table = np.array([row[1:] for row in rows], dtype=np.int64).reshape(-1, 4)
        table = np.concatenate([np.zeros((len(rows), 1), np.int64), table], axis=1)
    return keys, table[:, 1], table[:, 2], table[:, 4], best


def _add_ladder(conn: Connection) -> None:
    """Version 3 -> 4: the (empty) cache of rating games, ``ladder_games``."""
    schema.ladder_games.create(conn)


def _add_table_folder(conn: Connection) -> None:
    """Version 4 -> 5: the ``games`` column ``table_folder`` (NULL: every game so far is
    stored in blocks). A book upgraded from version 2 or older has its ``games`` table from
    before, which lacks it too; a ``games`` table that has it already is left alone."""
    if "table_folder" not in {column["name"] for column in sa.inspect(conn).get_columns("games")}:
        conn.execute(sa.text("ALTER TABLE games ADD COLUMN table_folder TEXT"))


UPGRADES: dict[int, Callable[[Connection], None]] = {
    1: _nothing_to_add,
    2: _into_blocks,
    3: _add_ladder,
    4: _add_table_folder,
}
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
