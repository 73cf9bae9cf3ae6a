"""The backend of a SQLite book file, through the standard library's ``sqlite3``.

Importing SQLAlchemy alone takes 0.2-0.3 s, most of the budget of a one-shot ``ttt query``, so a
book that is a SQLite file is read without it; every other database, and any write, goes
through SQLAlchemy (:mod:`book.enginerows`, :mod:`book.writer`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import urllib.parse
from collections.abc import Iterator, Sequence
from typing import Any

from ttt_solve.book.blockreads import BlockReads
from ttt_solve.book.errors import BookNotFoundError
from ttt_solve.book.records import GAME_COLUMNS
from ttt_solve.solver.rules import Rules

_SQLITE_BUSY_MS = 60_000


class SqliteRows(BlockReads):
    """The book's read queries over a stdlib ``sqlite3`` connection."""

    errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def __init__(self, path: str, read_only: bool = False) -> None:
        # A Book may be handed between threads, as the SQLAlchemy pool allowed; this SQLite is
        # built serialized (sqlite3.threadsafety == 3), so sharing the connection is safe.
        self.connection = sqlite3.connect(
            read_only_uri(path) if read_only else path,
            isolation_level=None,
            check_same_thread=sqlite3.threadsafety != 3,
            uri=read_only,
        )
        self.connection.execute(f"PRAGMA busy_timeout = {_SQLITE_BUSY_MS}")

    def tables(self) -> list[str]:
        rows = self.connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return [name for (name,) in rows]

    def schema_version(self) -> str | None:
        row = self.connection.execute(
            "SELECT value FROM meta WHERE name = 'schema_version'"
        ).fetchone()
        return None if row is None else row[0]

    def games(self, rules: Rules | None = None) -> list[tuple[Any, ...]]:
        sql = f"SELECT {', '.join(GAME_COLUMNS)} FROM games"
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


def writable(path: str) -> bool:
    """Whether this process may write the book file and its folder (SQLite writes both)."""
    return os.access(path, os.W_OK) and os.access(os.path.dirname(path) or ".", os.W_OK)


def read_only_uri(path: str) -> str:
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
