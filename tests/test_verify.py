"""``ttt verify`` passes on good books and catches corrupted rows."""

from __future__ import annotations

import sqlite3

import pytest
from click.testing import CliRunner

from ttt_solve.cli.verify import verify


def run(db, *args):
    return CliRunner().invoke(verify, ["--size", "3", "--win", "3", "--db", db, *args])


def test_good_book_passes(book_3x3):
    result = run(book_3x3)
    assert result.exit_code == 0, result.output
    assert "OK, 765 positions consistent" in result.output


@pytest.mark.parametrize(
    "corruption, message",
    [
        (
            "UPDATE positions SET value = -value, remoteness = remoteness "
            "WHERE ply = 4 AND value != 0 "
            "AND key = (SELECT min(key) FROM positions WHERE ply = 4 AND value != 0)",
            "score is not the best",
        ),
        (
            "UPDATE positions SET remoteness = remoteness + 2 WHERE ply = 9 AND value = -1 "
            "AND key = (SELECT min(key) FROM positions WHERE ply = 9 AND value = -1)",
            "won position is not a loss in 0",
        ),
        (
            "UPDATE positions SET best_moves = 0 WHERE ply = 3 "
            "AND key = (SELECT min(key) FROM positions WHERE ply = 3)",
            "best moves are not",
        ),
        ("UPDATE positions SET images = 3 WHERE ply = 1", "images is not the size"),
        (
            "DELETE FROM positions WHERE ply = 5 "
            "AND key = (SELECT max(key) FROM positions WHERE ply = 5)",
            "a child position is missing",
        ),
    ],
)
def test_corruption_is_caught(book_3x3, tmp_path, corruption, message):
    db = str(tmp_path / "corrupt.sqlite")
    with sqlite3.connect(book_3x3) as source, sqlite3.connect(db) as target:
        source.backup(target)
    with sqlite3.connect(db) as conn:
        assert conn.execute(corruption).rowcount >= 1
    result = run(db)
    assert result.exit_code == 1
    assert message in result.output
