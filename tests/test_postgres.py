"""Every command on a PostgreSQL book answers exactly as on a SQLite book of the same games.

Needs a server (see :mod:`tests.pg_support`; skipped otherwise). The games are 3x3 and 3x4
k=3, solved by ``ttt solve`` into both books; each command then runs on both and its output,
with the database's name and the solve's time and date blanked, must be the same.
"""

from __future__ import annotations

import importlib
import re

import pytest
from click.testing import CliRunner

from ttt_solve.cli.main import COMMANDS, ttt

GAMES = (("3", "3"), ("3x4", "3"))

CASES = {
    "verify": [["--size", "3x4", "--win", "3"]],
    "query": [
        ["x.o/.x./...", "--size", "3", "--json", "--search-seconds", "0"],
        ["--moves", "b2,a1", "--size", "3x4", "--win", "3", "--search-seconds", "0", "--no-color"],
    ],
    "stats": [["--size", "3", "--json"], ["--size", "3x4", "--win", "3"]],
    "export": [
        ["--size", "3", "--format", "jsonl"],
        ["--size", "3x4", "--win", "3", "--where", "ply=4", "--quiet"],
    ],
    "audit": [
        [
            "--size",
            "3",
            "--agent",
            "heuristic",
            "--games",
            "20",
            "--seed",
            "1",
            "--jobs",
            "1",
            "--json",
            "--quiet",
        ]
    ],
}


TIMES = re.compile(
    r'\d+(\.\d+)? s\b|"(seconds|solved_at|time)": [^,}]+|'
    r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?(\+00:00)?"
)
"""Durations and dates, which differ between two solves of one game."""


def same_text(output: str, db: str) -> str:
    return TIMES.sub("TIME", output.replace(db, "DB"))


def invoke(args: list[str]) -> str:
    result = CliRunner().invoke(ttt, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def two_books(postgres_db, tmp_path):  # noqa: F811
    """The same games solved by ``ttt solve`` into a SQLite file and a PostgreSQL database."""
    sqlite_db = str(tmp_path / "book.sqlite")
    for db in (sqlite_db, postgres_db):
        for size, win in GAMES:
            invoke(["solve", "--size", size, "--win", win, "--db", db, "--quiet"])
    return sqlite_db, postgres_db


@pytest.mark.parametrize(
    "command, number", [(c, n) for c, cases in CASES.items() for n in range(len(cases))]
)
def test_commands_agree_on_both_backends(two_books, command, number):
    module = COMMANDS[command].target.split(":")[0]
    try:
        importlib.import_module(module)
    except ModuleNotFoundError:
        pytest.skip(f"{module} does not exist yet")
    args = CASES[command][number]
    sqlite_db, postgres_db = two_books
    on_sqlite = same_text(invoke([command, *args, "--db", sqlite_db]), sqlite_db)
    on_postgres = same_text(invoke([command, *args, "--db", postgres_db]), postgres_db)
    assert on_postgres == on_sqlite
    assert on_sqlite.strip()


def test_solve_summary_and_rerun_on_postgres(postgres_db):  # noqa: F811
    first = invoke(["solve", "--size", "3", "--win", "3", "--db", postgres_db])
    assert "5,478" in first and "draw (remoteness 9)" in first
    again = CliRunner().invoke(ttt, ["solve", "--size", "3", "--win", "3", "--db", postgres_db])
    assert again.exit_code == 0 and "already solved" in again.output
    invoke(["solve", "--size", "3", "--win", "3", "--db", postgres_db, "--force", "--quiet"])
    assert "OK, 765 positions" in invoke(["verify", "--size", "3", "--db", postgres_db])
