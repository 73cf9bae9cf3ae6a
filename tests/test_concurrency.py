"""Concurrent use of one book: queries while a game is written, two solves of one game.

A writer is held in the middle of its transaction (its plies come from a generator that waits
on an event), so what the other side sees is checked at a known moment, not by luck of timing.
On both backends (PostgreSQL only with a server, see :mod:`tests.pg_support`).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator

from click.testing import CliRunner

from tests.pg_support import solve_into, start_ttt_solve
from ttt_solve.book.migrate import prepare_schema
from ttt_solve.book.reader import open_book
from ttt_solve.book.schema import SCHEMA_VERSION, database_url, make_engine
from ttt_solve.book.verify import verify_game
from ttt_solve.book.writer import write_game
from ttt_solve.cli.main import ttt
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.plytable import PlyTable
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome

T3 = Rules(3, 3, 3)
T34 = Rules(3, 4, 3)
QUICK = 5.0
"""Seconds within which a read must answer while a write is held open (it takes
milliseconds; the margin is for a loaded machine)."""


class HeldWriter:
    """``write_game`` of a game in a thread, stopped inside its transaction after some plies
    until :meth:`release`."""

    def __init__(self, db: str, rules: Rules, plies_before_pause: int = 4) -> None:
        self.db, self.rules, self.pause_after = db, rules, plies_before_pause
        self.paused, self.resume = threading.Event(), threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _plies(self) -> Iterator[PlyTable]:
        for number, table in enumerate(ExhaustiveSolver(self.rules).solve()):
            if number == self.pause_after:
                self.paused.set()
                self.resume.wait(60)
            yield table

    def _run(self) -> None:
        try:
            with open_book(self.db, create=True) as book:
                write_game(book, self.rules, self._plies(), method="exhaustive")
        except BaseException as error:  # noqa: BLE001 - reported by release()
            self.error = error
            self.paused.set()

    def __enter__(self) -> HeldWriter:
        self.thread.start()
        assert self.paused.wait(60), "the writer never reached its pause"
        assert self.error is None, self.error
        return self

    def release(self) -> None:
        self.resume.set()
        self.thread.join(60)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error

    def __exit__(self, *exc: object) -> None:
        self.resume.set()
        self.thread.join(60)


def timed(function, *args):  # noqa: ANN001, ANN201
    started = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - started


def test_queries_keep_working_while_another_game_is_written(book_db):
    solve_into(book_db, T3)
    position = Position.parse("xx./oo./...", T3)
    with HeldWriter(book_db, T34) as writer:

        def read():
            with open_book(book_db) as book:
                return book.find(position), book.find_game(T34), len(book.games())

        (entry, unfinished, count), seconds = timed(read)
        assert seconds < QUICK
        assert entry.value.outcome is Outcome.WIN and entry.best_moves == (2,)
        assert unfinished is None and count == 1  # nothing of the game being written shows
        result, seconds = timed(
            CliRunner().invoke,
            ttt,
            ["query", "xx./oo./...", "--size", "3", "--db", book_db, "--json"],
        )
        assert result.exit_code == 0, result.output
        assert seconds < QUICK and '"win"' in result.output
        writer.release()
    with open_book(book_db) as book:
        assert book.game(T34).positions == 28_275
        _, problems = verify_game(book, T34)
        assert list(problems) == []


def test_a_query_in_another_process_answers_during_a_write(tmp_path):
    db = str(tmp_path / "b.sqlite")
    solve_into(db, T3)
    command = [
        sys.executable,
        "-c",
        "from ttt_solve.cli.main import main; main()",
        "query",
        "x........",
        "--size",
        "3",
        "--db",
        db,
        "--search-seconds",
        "0",
    ]
    with HeldWriter(db, T34) as writer:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
        assert result.returncode == 0, result.stderr
        assert "draw" in result.stdout
        writer.release()


def test_a_second_solve_of_the_same_game_waits_then_reports_it(book_db):
    solve_into(book_db, T3)
    with HeldWriter(book_db, T34) as writer:
        second = start_ttt_solve(["--size", "3x4", "--win", "3", "--db", book_db])
        time.sleep(3)  # time to start, find no game yet, and block on the write lock
        assert second.poll() is None, second.communicate()
        writer.release()
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    # It waited either when opening the book or when starting its write; then it reports.
    assert "solved by another run meanwhile" in err or "is already solved" in err
    assert "28,275" in out  # the summary of the game the first run wrote
    with open_book(book_db) as book:
        assert [info.rules for info in book.games()] == [T3, T34]
        _, problems = verify_game(book, T34)
        assert list(problems) == []


def test_two_solves_started_together_on_an_existing_book(book_db):
    solve_into(book_db, T3)
    runs = [start_ttt_solve(["--size", "3x4", "--win", "3", "--db", book_db]) for _ in range(2)]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err for _, err in outputs]
    with open_book(book_db) as book:
        assert [info.rules for info in book.games()] == [T3, T34]
        _, problems = verify_game(book, T34)
        assert list(problems) == []


def test_schema_preparation_from_two_processes_on_a_new_database(book_db):
    """:func:`book.migrate.prepare_schema` serialises: exactly one of two creates the tables."""
    code = (
        "import sys; from ttt_solve.book.migrate import prepare_schema; "
        "from ttt_solve.book.schema import database_url, make_engine; "
        "print(prepare_schema(make_engine(database_url(sys.argv[1]))))"
    )
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", code, book_db],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=60) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err for _, err in outputs]
    current = str(SCHEMA_VERSION)
    assert sorted(out.strip() for out, _ in outputs) == ["0", current]  # new, then found current
    assert prepare_schema(make_engine(database_url(book_db))) == SCHEMA_VERSION


def test_connections_opened_together_on_a_new_sqlite_file(tmp_path):
    """Six processes connect at one instant to a new file: each switches it to WAL or finds it
    switched; none is told "database is locked" (SQLite skips its busy handler there)."""
    code = (
        "import sys, time; from ttt_solve.book.schema import database_url, make_engine\n"
        "engine = make_engine(database_url(sys.argv[1]))\n"
        "while time.time() < float(sys.argv[2]): pass\n"
        "with engine.connect() as conn: print(conn.exec_driver_sql('PRAGMA journal_mode')"
        ".scalar())"
    )
    for attempt in range(4):
        db = str(tmp_path / f"new-{attempt}.sqlite")
        start = time.time() + 2.0  # after every process has imported
        runs = [
            subprocess.Popen(
                [sys.executable, "-c", code, db, str(start)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(6)
        ]
        outputs = [run.communicate(timeout=120) for run in runs]
        assert [run.returncode for run in runs] == [0] * 6, [err for _, err in outputs]
        assert [out.strip() for out, _ in outputs] == ["wal"] * 6


def test_two_solves_started_together_on_a_new_sqlite_file(tmp_path):
    for attempt in range(3):
        db = str(tmp_path / f"new-{attempt}.sqlite")
        runs = [
            start_ttt_solve(["--size", "3", "--win", "3", "--db", db, "--quiet"]) for _ in range(2)
        ]
        outputs = [run.communicate(timeout=120) for run in runs]
        assert [run.returncode for run in runs] == [0, 0], [err for _, err in outputs]
