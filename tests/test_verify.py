"""``ttt verify`` passes on good books and catches corrupted rows."""

from __future__ import annotations

import sqlite3

import pytest
from click.testing import CliRunner

from tests import booksurgery
from ttt_solve.cli.verify import verify


def run(db, *args):
    return CliRunner().invoke(verify, ["--size", "3", "--win", "3", "--db", db, *args])


def test_good_book_passes(book_3x3):
    result = run(book_3x3)
    assert result.exit_code == 0, result.output
    assert "OK, 765 positions consistent" in result.output


def first_of_ply(db, ply, **fields):
    return booksurgery.first(db, ply=ply, **fields)


def negate_a_won_or_lost(db):
    row = next(r for r in booksurgery.matching(db, ply=4) if r.value != 0)
    booksurgery.change(db, row, value=-row.value)


def lengthen_a_loss(db):
    row = first_of_ply(db, 9, value=-1)
    booksurgery.change(db, row, remoteness=row.remoteness + 2)


def clear_best_moves(db):
    booksurgery.change(db, first_of_ply(db, 3), best_moves=0)


def wrong_images(db):
    for row in booksurgery.matching(db, ply=1):
        booksurgery.change(db, row, images=3)


def delete_a_child(db):
    booksurgery.delete(db, [booksurgery.matching(db, ply=5)[-1]])


@pytest.mark.parametrize(
    "corruption, message",
    [
        (negate_a_won_or_lost, "score is not the best"),
        (lengthen_a_loss, "won position is not a loss in 0"),
        (clear_best_moves, "best moves are not"),
        (wrong_images, "images is not the size"),
        (delete_a_child, "a child position is missing"),
    ],
)
def test_corruption_is_caught(book_3x3, tmp_path, corruption, message):
    db = str(tmp_path / "corrupt.sqlite")
    with sqlite3.connect(book_3x3) as source, sqlite3.connect(db) as target:
        source.backup(target)
    before = booksurgery.stored_rows(db)
    corruption(db)
    assert booksurgery.stored_rows(db) != before
    result = run(db)
    assert result.exit_code == 1
    assert message in result.output
