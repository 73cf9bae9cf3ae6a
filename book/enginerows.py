"""The backend of any book database through SQLAlchemy Core: PostgreSQL, an in-memory SQLite,
and a SQLite file being created or written (a SQLite file that is only read goes through
:mod:`book.sqliterows`, without importing SQLAlchemy)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ttt_solve.book import schema
from ttt_solve.book.blockreads import BlockReads
from ttt_solve.book.records import GAME_COLUMNS
from ttt_solve.solver.rules import Rules


class EngineRows(BlockReads):
    """The same reads through SQLAlchemy, for databases other than SQLite files."""

    errors: tuple[type[Exception], ...] = (sa.exc.DBAPIError, sqlite3.Error)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def tables(self) -> list[str]:
        return sa.inspect(self.engine).get_table_names()

    def schema_version(self) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(
                sa.select(schema.meta.c.value).where(schema.meta.c.name == "schema_version")
            ).scalar()

    def games(self, rules: Rules | None = None) -> list[tuple[Any, ...]]:
        games = schema.games
        query = sa.select(*(games.c[name] for name in GAME_COLUMNS))
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
        """Nothing to release: the engine is the book's, which disposes of it."""
