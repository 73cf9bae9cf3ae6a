"""The schema version stored in a book: new books, newer and older ones, upgrades; key width.

On both backends (PostgreSQL only with a server, see :mod:`tests.pg_support`).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import sqlalchemy as sa

from ttt_solve.book import migrate, schema
from ttt_solve.book.blocks import NARROW, WIDE, layout
from ttt_solve.book.errors import BookNotFoundError, SchemaVersionError
from ttt_solve.book.reader import open_book
from ttt_solve.book.writer import write_game
from ttt_solve.fixes import fix
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

    sa.event.listen(schema.position_blocks, "before_create", fail)
    try:
        with pytest.raises(RuntimeError):
            migrate.prepare_schema(engine)
    finally:
        sa.event.remove(schema.position_blocks, "before_create", fail)
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
    blocks of 8-byte keys and 4-byte masks carry them exactly on every backend."""
    rules = Rules(5, 6, 4)
    top = (1 << 2 * rules.cells) - 1
    rows, _ = write_and_read(book_db, rules, [1, 1 << 40, top], [0, 1, top >> 30], 1)
    assert rows == [(0, 0, 1, 1), (3, 1, 0, 1), (3, 1 << 40, 1, 4), (3, top, top >> 30, 8)]
    assert layout(rules.cells) == NARROW and (NARROW.key_bytes, NARROW.data_bytes) == (8, 7)


def test_the_keys_of_a_64_cell_board_round_trip(book_db):
    """A 64-cell board has 128-bit keys, kept as 16 bytes, and best moves on cell 63, kept in
    8 bytes; both come back as the numbers they were."""
    rules = Rules(8, 8, 7)
    top = (1 << 2 * rules.cells) - 1
    keys = [1, 1 << 64, top - 1]
    masks = [0, 1 << 63, (1 << 64) - 1]
    rows, found = write_and_read(book_db, rules, keys, masks, 1 << 63)
    assert rows == [(0, 0, 1 << 63, 1)] + [(3, k, m, i) for k, m, i in zip(keys, masks, (1, 4, 8))]
    assert found == [(1 << 64, 1 << 63), (top - 1, top >> 64)]
    assert layout(rules.cells) == WIDE and (WIDE.key_bytes, WIDE.data_bytes) == (16, 11)


OLD_POSITIONS = """CREATE TABLE {name} (
    game_id INTEGER NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    ply SMALLINT NOT NULL, key {key} NOT NULL, value SMALLINT NOT NULL,
    remoteness SMALLINT NOT NULL, best_moves BIGINT NOT NULL, images SMALLINT NOT NULL,
    PRIMARY KEY (game_id, ply, key)){rowid}"""
"""The table of positions of schema versions 1 and 2, as SQLAlchemy made it: ``positions``
(a BIGINT key) and, from version 2, ``wide_positions`` (a 16-byte big-endian key, the signed
64-bit pattern of the best-moves mask)."""

OLD_GAMES = [Rules(3, 3, 3), Rules(3, 11, 3)]  # a board of 33 cells: keys past 64 bits


def solved_rows(db: str) -> dict[Rules, list[tuple[int, ...]]]:
    """Every stored row of every game of a book, read by the book."""
    with open_book(db) as book:
        return {info.rules: list(book.rows(info.rules)) for info in book.games()}


def make_old_book(db: str, version: int) -> dict[Rules, list[tuple[int, ...]]]:
    """A book as schema version 1 or 2 wrote it, with the old tables made by their SQL, holding
    3x3 k=3 and (version 2) an opening book of 3x11 k=3; returns the rows it holds."""
    from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
    from ttt_solve.solver.prover.opening import OpeningBookBuilder

    with open_book(db, create=True) as book:  # the games written now, then moved to old tables
        rules = OLD_GAMES[0]
        write_game(book, rules, ExhaustiveSolver(rules).solve(), method="exhaustive")
        if version >= 2:
            wide = OLD_GAMES[1]
            plies = OpeningBookBuilder(wide, 1).solve()
            write_game(book, wide, plies, method="alphabeta", book_depth=1)
    rows = solved_rows(db)
    engine = engine_of(db)
    sqlite = engine.dialect.name == "sqlite"
    with engine.begin() as conn:
        ids = dict(conn.execute(sa.select(schema.games.c.cols, schema.games.c.id)).all())
        conn.exec_driver_sql("DROP TABLE position_blocks")
        conn.exec_driver_sql("DROP TABLE ladder_games")  # version 4's: no old book has it
        tables = [("positions", "BIGINT")]
        if version >= 2:
            tables.append(("wide_positions", "BLOB" if sqlite else "BYTEA"))
        for name, key in tables:
            rowid = " WITHOUT ROWID" if sqlite else ""
            conn.exec_driver_sql(OLD_POSITIONS.format(name=name, key=key, rowid=rowid))
        for rules, game_rows in rows.items():
            wide = rules.cells > 31
            insert = sa.text(
                f"INSERT INTO {'wide_positions' if wide else 'positions'} "
                "VALUES (:game, :ply, :key, :value, :remoteness, :best, :images)"
            )
            conn.execute(
                insert,
                [
                    {
                        "game": ids[rules.cols],
                        "ply": ply,
                        "key": key.to_bytes(16, "big") if wide else key,
                        "value": value,
                        "remoteness": remoteness,
                        "best": best - (1 << 64) if best >> 63 else best,
                        "images": images,
                    }
                    for ply, key, value, remoteness, best, images in game_rows
                ],
            )
    set_version(engine, str(version))
    engine.dispose()
    return rows


@pytest.mark.parametrize("version", [1, 2])
def test_an_old_book_is_refused_by_readers_and_upgraded_by_a_writer(book_db, version):
    rows = make_old_book(book_db, version)
    engine = engine_of(book_db)
    assert stored_version(engine) == str(version)
    with pytest.raises(
        SchemaVersionError, match=f"older ttt-solve: found schema version {version}"
    ):
        with open_book(book_db):
            pass
    assert stored_version(engine) == str(version)  # reading changes nothing
    assert migrate.prepare_schema(engine) == version  # a writer's first step
    assert stored_version(engine) == str(schema.SCHEMA_VERSION)
    tables = set(sa.inspect(engine).get_table_names())
    assert "position_blocks" in tables and not tables & {"positions", "wide_positions"}
    assert solved_rows(book_db) == rows  # every row of every game, as it was
    start = Position.start(Rules(3, 3, 3))
    with open_book(book_db) as book:
        assert book.find(start).value.outcome.value == "draw"
        assert book.game(Rules(3, 3, 3)).positions == 765
    engine.dispose()


def test_the_refusal_of_an_old_book_names_a_game_it_holds(book_db):
    make_old_book(book_db, 2)
    engine = engine_of(book_db)
    with engine.begin() as conn:  # 3x11 k=3 is left: the command to upgrade must name it
        conn.execute(sa.delete(schema.games).where(schema.games.c.cols == 3))
    engine.dispose()
    with pytest.raises(SchemaVersionError, match="older ttt-solve") as caught:
        with open_book(book_db):
            pass
    assert caught.value.kind == "older-schema" and caught.value.rules == Rules(3, 11, 3)
    assert re.search(r"e\.g\.: ttt-solve --size 3x11 --win 3 --db ", fix(caught.value))


def test_an_upgrade_interrupted_half_way_leaves_the_old_book(book_db, monkeypatch):
    rows = make_old_book(book_db, 2)
    engine = engine_of(book_db)

    def broken(conn, *args):
        raise RuntimeError("upgrade interrupted")

    import ttt_solve.book.blockwrites

    monkeypatch.setattr(ttt_solve.book.blockwrites, "insert_blocks", broken)
    with pytest.raises(RuntimeError):
        migrate.prepare_schema(engine)
    assert stored_version(engine) == "2"
    assert "positions" in sa.inspect(engine).get_table_names()
    monkeypatch.undo()
    assert migrate.prepare_schema(engine) == 2
    assert solved_rows(book_db) == rows
    engine.dispose()
