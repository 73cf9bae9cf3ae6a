"""Writing games into a book: contents, atomicity, replacing, schema versions."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from tests import booksurgery
from ttt_solve.book import schema
from ttt_solve.book.errors import (
    BookNotFoundError,
    GameExistsError,
    GameNotFoundError,
    SchemaVersionError,
)
from ttt_solve.book.reader import open_book
from ttt_solve.book.writer import write_game
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome

T3 = Rules(3, 3, 3)
STORED_POSITIONS = sa.select(sa.func.coalesce(sa.func.sum(schema.position_blocks.c.count), 0))


def test_stored_game_and_rows(book_3x3):
    with open_book(book_3x3) as book:
        info = book.game(T3)
        assert (info.positions, info.reachable) == (765, 5478)
        assert info.value.outcome is Outcome.DRAW and info.value.remoteness == 9
        assert info.method == "exhaustive" and info.book_depth is None
        rows = booksurgery.stored_rows(book_3x3)  # read by the documented block layout
        total, images = len(rows), sum(row.images for row in rows)
        assert (total, images) == (765, 5478)
        entry = book.find(Position.parse("xx./oo./...", T3))
        assert entry.value.outcome is Outcome.WIN and entry.value.remoteness == 1
        assert entry.best_moves == (2,)  # c1 wins at once; the block at c2 is slower


def test_best_moves_follow_the_orientation_asked(book_3x3):
    with open_book(book_3x3) as book:
        # The same position in two orientations: X threatens the top row / the left column.
        top = book.find(Position.parse("xx./o../o..", T3))
        left = book.find(Position.parse("xoo/x../...", T3))
        assert top.best_moves == (2,) and left.best_moves == (6,)


def test_existing_game_is_refused_then_replaced_with_force(tmp_path):
    db = str(tmp_path / "b.sqlite")
    with open_book(db, create=True) as book:
        write_game(book, T3, ExhaustiveSolver(T3).solve(), method="exhaustive")
        with pytest.raises(GameExistsError):
            write_game(book, T3, ExhaustiveSolver(T3).solve(), method="exhaustive")
        first = book.game(T3)
        info = write_game(book, T3, ExhaustiveSolver(T3).solve(), method="exhaustive", force=True)
        assert info.solved_at > first.solved_at and info.positions == 765
        assert len(book.games()) == 1
        with book.engine.connect() as conn:
            assert conn.execute(STORED_POSITIONS).scalar() == 765


def test_an_interrupted_write_leaves_nothing(tmp_path):
    db = str(tmp_path / "b.sqlite")
    rules = Rules(3, 4, 3)

    def interrupted():
        for number, table in enumerate(ExhaustiveSolver(rules).solve()):
            if number == 5:
                raise KeyboardInterrupt
            yield table

    with open_book(db, create=True) as book:
        with pytest.raises(KeyboardInterrupt):
            write_game(book, rules, interrupted(), method="exhaustive")
        assert book.find_game(rules) is None
        with book.engine.connect() as conn:
            assert conn.execute(STORED_POSITIONS).scalar() == 0
        info = write_game(book, rules, ExhaustiveSolver(rules).solve(), method="exhaustive")
        assert info.positions == 28275


def test_many_games_in_one_book(book_small):
    with open_book(book_small) as book:
        names = [g.rules.name for g in book.games()]
        assert names == ["3x3 k=3", "3x4 k=3", "4x4 k=3"]
        assert book.game(Rules(3, 4, 3)).value.outcome is Outcome.WIN
        with pytest.raises(GameNotFoundError, match="holds no 4x4 k=4 game"):
            book.game(Rules(4, 4, 4))


def test_missing_database_and_newer_schema(corrupt_books):
    for name, error, message in [
        ("missing", BookNotFoundError, "no book at"),
        ("newer", SchemaVersionError, "newer"),
        ("other", SchemaVersionError, "not a ttt-solve book"),
        ("garbage", BookNotFoundError, None),
    ]:
        with pytest.raises(error, match=message):
            with open_book(corrupt_books[name]):
                pass
