"""The schema version stored in a book: new books, newer and older ones, upgrades; key width.

On both backends (PostgreSQL only with a server, see :mod:`tests.pg_support`).
"""

from __future__ import annotations

import numpy as np
import pytest
import sqlalchemy as sa

from ttt_solve.book import migrate, schema
from ttt_solve.book.errors import BookNotFoundError, SchemaVersionError
from ttt_solve.book.reader import open_book
from ttt_solve.book.writer import copy_dtype, write_game
from ttt_solve.solver.plytable import PlyTable
from ttt_solve.solver.rules import Rules


def engine_of(db: str) -> sa.Engine:
    return schema.make_engine(schema.database_url(db))


def set_version(engine: sa.Engine, value: str) -> None:
    with engine.begin() as conn:
        conn.execute(
            sa.update(schema.meta).where(schema.meta.c.name == "schema_version").values(value=value)
        )


def stored_version(engine: sa.Engine) -> str:
    with engine.connect() as conn:
        return conn.execute(sa.select(schema.meta.c.value)).scalar()


def test_a_new_book_records_the_current_version(book_db):
    engine = engine_of(book_db)
    assert migrate.prepare_schema(engine) == 0
    assert stored_version(engine) == str(schema.SCHEMA_VERSION)
    assert migrate.prepare_schema(engine) == schema.SCHEMA_VERSION  # a second call: no change


def test_tables_and_version_appear_together_or_not_at_all(book_db, monkeypatch):
    engine = engine_of(book_db)

    def fail(*_args, **_kwargs):
        raise RuntimeError("interrupted while creating the tables")

    sa.event.listen(schema.positions, "before_create", fail)
    try:
        with pytest.raises(RuntimeError):
            migrate.prepare_schema(engine)
    finally:
        sa.event.remove(schema.positions, "before_create", fail)
    assert sa.inspect(engine).get_table_names() == []
    assert migrate.prepare_schema(engine) == 0


def test_a_newer_book_is_refused(book_db):
    engine = engine_of(book_db)
    migrate.prepare_schema(engine)
    set_version(engine, str(schema.SCHEMA_VERSION + 1))
    with pytest.raises(
        SchemaVersionError,
        match=f"newer ttt-solve: found schema version {schema.SCHEMA_VERSION + 1}, expected",
    ):
        migrate.prepare_schema(engine, "the book")
    with pytest.raises(SchemaVersionError, match="newer"):
        with open_book(book_db):
            pass


def test_an_older_book_without_an_upgrade_is_explained(book_db):
    engine = engine_of(book_db)
    migrate.prepare_schema(engine)
    set_version(engine, "0")
    with pytest.raises(
        SchemaVersionError,
        match="older ttt-solve: found schema version 0, expected 1, and there is no upgrade",
    ):
        migrate.prepare_schema(engine, "the book")
    assert stored_version(engine) == "0"


def test_an_older_book_is_upgraded_in_one_transaction(book_db, monkeypatch):
    engine = engine_of(book_db)
    migrate.prepare_schema(engine)
    steps = []

    def add_note(conn):
        steps.append("1->2")
        conn.execute(sa.insert(schema.meta).values(name="note", value="added by the upgrade"))

    monkeypatch.setattr(schema, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(migrate.UPGRADES, 1, add_note)

    def broken(conn):
        add_note(conn)
        raise RuntimeError("upgrade interrupted")

    monkeypatch.setitem(migrate.UPGRADES, 1, broken)
    with pytest.raises(RuntimeError):
        migrate.prepare_schema(engine)
    assert stored_version(engine) == "1"  # the half-done step was rolled back with the rest
    monkeypatch.setitem(migrate.UPGRADES, 1, add_note)
    assert migrate.prepare_schema(engine) == 1
    assert steps == ["1->2", "1->2"]
    with engine.connect() as conn:
        meta = dict(conn.execute(sa.select(schema.meta.c.name, schema.meta.c.value)).all())
    assert meta == {"schema_version": "2", "note": "added by the upgrade"}


def test_a_database_that_is_not_a_book_is_refused(book_db):
    engine = engine_of(book_db)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    with pytest.raises(SchemaVersionError, match="not a ttt-solve book .found tables customers"):
        migrate.prepare_schema(engine, "db")


def test_a_damaged_version_is_refused(book_db):
    engine = engine_of(book_db)
    migrate.prepare_schema(engine)
    set_version(engine, "one")
    with pytest.raises(SchemaVersionError, match="found schema version 'one', expected a number"):
        migrate.prepare_schema(engine)


@pytest.mark.parametrize(
    "db", ["nosuchdialect://x/y", "postgresql+nosuchdriver://u@h/d", "postgresql://u@h:port/d"]
)
def test_unusable_urls_give_one_narrow_error(db):
    with pytest.raises(BookNotFoundError, match="cannot open a book at"):
        schema.make_engine(schema.database_url(db))


def test_the_widest_keys_round_trip(book_db):
    """A 30-cell board (the largest a side of 26 allows under 31 cells) has 60-bit keys;
    BIGINT holds them on every backend, and the COPY rows carry them exactly."""
    rules = Rules(5, 6, 4)
    top = (1 << 2 * rules.cells) - 1
    keys = np.array([1, 1 << 40, top], dtype=np.uint64)
    plies = [
        PlyTable(
            3,
            keys,
            np.zeros(3, dtype=np.int16),
            np.array([0, 1, top >> 30], np.uint64),
            np.array([1, 4, 8], dtype=np.uint8),
        ),
        PlyTable(
            0,
            np.array([0], np.uint64),
            np.zeros(1, np.int16),
            np.array([1], np.uint64),
            np.array([1], np.uint8),
        ),
    ]
    with open_book(book_db, create=True) as book:
        write_game(book, rules, plies, method="alphabeta", book_depth=3)
        rows = [
            (row.ply, row.key, row.best_moves, row.images)
            for row in book.rows(rules, checked=False)
        ]
    assert rows == [(0, 0, 1, 1), (3, 1, 0, 1), (3, 1 << 40, 1, 4), (3, top, top >> 30, 8)]
    assert copy_dtype().itemsize == 2 + 7 * 4 + 4 + 2 + 8 + 2 + 2 + 8 + 2
