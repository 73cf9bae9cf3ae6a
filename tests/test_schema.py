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
from ttt_solve.solver.position import Position
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
        match=f"older ttt-solve: found schema version 0, expected {schema.SCHEMA_VERSION}, and "
        f"there is no upgrade",
    ):
        migrate.prepare_schema(engine, "the book")
    assert stored_version(engine) == "0"


def test_an_older_book_is_upgraded_in_one_transaction(book_db, monkeypatch):
    engine = engine_of(book_db)
    migrate.prepare_schema(engine)
    steps = []

    current = schema.SCHEMA_VERSION  # a next version, one step from this one

    def add_note(conn):
        steps.append(f"{current}->{current + 1}")
        conn.execute(sa.insert(schema.meta).values(name="note", value="added by the upgrade"))

    monkeypatch.setattr(schema, "SCHEMA_VERSION", current + 1)
    monkeypatch.setitem(migrate.UPGRADES, current, add_note)

    def broken(conn):
        add_note(conn)
        raise RuntimeError("upgrade interrupted")

    monkeypatch.setitem(migrate.UPGRADES, current, broken)
    with pytest.raises(RuntimeError):
        migrate.prepare_schema(engine)
    assert stored_version(engine) == str(current)  # the half-done step was rolled back too
    monkeypatch.setitem(migrate.UPGRADES, current, add_note)
    assert migrate.prepare_schema(engine) == current
    assert steps == [f"{current}->{current + 1}"] * 2
    with engine.connect() as conn:
        meta = dict(conn.execute(sa.select(schema.meta.c.name, schema.meta.c.value)).all())
    assert meta == {"schema_version": str(current + 1), "note": "added by the upgrade"}


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


def write_and_read(book_db: str, rules: Rules, keys: list[int], masks: list[int], start_best: int):
    """Write a game of two plies (3: ``keys`` with best moves ``masks``; 0: the empty board)
    and read its rows back as (ply, key, best moves, images); also the book's lookup of ply 3."""
    dtype = np.uint64 if rules.fits_key else object  # what the solvers hand over
    plies = [
        PlyTable(
            3,
            np.array(keys, dtype=dtype),
            np.zeros(3, dtype=np.int16),
            np.array(masks, np.uint64),
            np.array([1, 4, 8], dtype=np.uint8),
        ),
        PlyTable(
            0,
            np.array([0], dtype=dtype),
            np.zeros(1, np.int16),
            np.array([start_best], np.uint64),
            np.array([1], np.uint8),
        ),
    ]
    with open_book(book_db, create=True) as book:
        write_game(book, rules, plies, method="alphabeta", book_depth=3)
        rows = [
            (row.ply, row.key, row.best_moves, row.images)
            for row in book.rows(rules, checked=False)
        ]
        found = book._rows.positions(rules, book.game(rules).id, 3, keys[1:])
    return rows, sorted((row[1], row[4]) for row in found)


def test_the_widest_keys_round_trip(book_db):
    """A 30-cell board (the largest a side of 26 allows under 31 cells) has 60-bit keys;
    BIGINT holds them on every backend, and the COPY rows carry them exactly."""
    rules = Rules(5, 6, 4)
    top = (1 << 2 * rules.cells) - 1
    rows, _ = write_and_read(book_db, rules, [1, 1 << 40, top], [0, 1, top >> 30], 1)
    assert rows == [(0, 0, 1, 1), (3, 1, 0, 1), (3, 1 << 40, 1, 4), (3, top, top >> 30, 8)]
    assert copy_dtype().itemsize == 2 + 7 * 4 + 4 + 2 + 8 + 2 + 2 + 8 + 2


def test_the_keys_of_a_64_cell_board_round_trip(book_db):
    """A 64-cell board has 128-bit keys, kept as 16 bytes, and best moves on cell 63, kept as
    the signed pattern of the mask; both come back as the numbers they were."""
    rules = Rules(8, 8, 7)
    top = (1 << 2 * rules.cells) - 1
    keys = [1, 1 << 64, top - 1]
    masks = [0, 1 << 63, (1 << 64) - 1]
    rows, found = write_and_read(book_db, rules, keys, masks, 1 << 63)
    assert rows == [(0, 0, 1 << 63, 1)] + [(3, k, m, i) for k, m, i in zip(keys, masks, (1, 4, 8))]
    assert found == [(1 << 64, 1 << 63), (top - 1, top >> 64)]
    assert copy_dtype(schema.wide_positions).itemsize == 2 + 7 * 4 + 4 + 2 + 16 + 2 + 2 + 8 + 2


def make_version_1_book(db: str) -> None:
    """A book as version 1 wrote it: meta, games and positions, no wide_positions table."""
    from ttt_solve.solver.exhaustive import ExhaustiveSolver

    engine = engine_of(db)
    version_1 = [schema.meta, schema.games, schema.positions]
    schema.metadata.create_all(engine, tables=version_1)
    set_version(engine, "1")
    engine.dispose()
    with open_book(db) as book:  # without create: the tables stay as they are
        rules = Rules(3, 3, 3)
        write_game(book, rules, ExhaustiveSolver(rules).solve(), method="exhaustive")


def test_a_version_1_book_is_read_as_it_is_and_upgraded_by_a_writer(tmp_path):
    db = str(tmp_path / "v1.sqlite")
    make_version_1_book(db)
    engine = engine_of(db)
    assert stored_version(engine) == "1"
    assert not sa.inspect(engine).has_table("wide_positions")
    start = Position.start(Rules(3, 3, 3))
    with open_book(db) as book:  # reading changes nothing
        assert book.find(start).value.outcome.value == "draw"
        assert sum(1 for _ in book.rows(Rules(3, 3, 3))) == 765
    assert stored_version(engine) == "1"
    assert migrate.prepare_schema(engine) == 1  # a writer's first step
    assert stored_version(engine) == str(schema.SCHEMA_VERSION)
    assert sa.inspect(engine).has_table("wide_positions")
    with open_book(db) as book:
        assert book.find(start).value.outcome.value == "draw"
        assert book.game(Rules(3, 3, 3)).positions == 765
