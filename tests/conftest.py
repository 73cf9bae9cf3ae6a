"""Shared fixtures: books solved once per test session, and files that are no book."""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

import pytest

# The storage fixtures run each test on SQLite and, where a server is configured, PostgreSQL.
from tests.pg_support import book_db, postgres_db, solve_into  # noqa: E402, F401 - two fixtures
from ttt_solve.book import schema
from ttt_solve.book.reader import open_book
from ttt_solve.book.writer import write_game
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.rules import Rules

# The tests of Ctrl-C send SIGINT to the commands they start. A shell starts a background job
# with SIGINT ignored, and an ignored signal stays ignored in every program it starts: the
# commands would never see their Ctrl-C. A handler, unlike an ignore, is reset when a program
# starts, so the commands get the usual Ctrl-C whatever way the tests were launched.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def solved_book(factory: pytest.TempPathFactory, name: str, *games: Rules) -> str:
    """Path of a new SQLite book file ``name`` holding each game, solved exhaustively."""
    db = str(factory.mktemp("books") / name)
    for rules in games:
        solve_into(db, rules)
    return db


@pytest.fixture(scope="session")
def book_3x3(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Path of a SQLite book holding 3x3 k=3."""
    return solved_book(tmp_path_factory, "3x3.sqlite", Rules(3, 3, 3))


@pytest.fixture(scope="session")
def book_small(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Path of a SQLite book holding 3x3 k=3, 3x4 k=3 and 4x4 k=3 (about 2 s to build)."""
    return solved_book(
        tmp_path_factory, "small.sqlite", Rules(3, 3, 3), Rules(3, 4, 3), Rules(4, 4, 3)
    )


@pytest.fixture(scope="session")
def book_4x4k4(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Path of a SQLite book holding 4x4 k=4 (about 5 s to build)."""
    return solved_book(tmp_path_factory, "4x4k4.sqlite", Rules(4, 4, 4))


@pytest.fixture(scope="session")
def opening_book(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A book holding 3x4 k=3 as an opening book of depth 2 (plies 0..2 of the exhaustive solve)."""
    rules = Rules(3, 4, 3)
    db = str(tmp_path_factory.mktemp("books") / "opening.sqlite")
    with open_book(db, create=True) as book:
        plies = (t for t in ExhaustiveSolver(rules).solve() if t.ply <= 2)
        write_game(book, rules, plies, method="alphabeta", book_depth=2)
    return db


@pytest.fixture
def corrupt_books(tmp_path: Path) -> dict[str, str]:
    """Paths of files that are no readable book, by name: a missing file, an empty file, a
    non-book database, garbage, and a book of a newer schema."""
    newer = tmp_path / "newer.sqlite"
    with open_book(str(newer), create=True):
        pass
    with sqlite3.connect(newer) as conn:
        conn.execute(
            "UPDATE meta SET value = ? WHERE name = 'schema_version'",
            (str(schema.SCHEMA_VERSION + 1),),
        )
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (a)")
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database " * 200)
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    return {
        "missing": str(tmp_path / "absent.sqlite"),
        "newer": str(newer),
        "other": str(other),
        "garbage": str(garbage),
        "empty": str(empty),
    }
