"""A game's rows in memory (book/memory.py) answer as the database does, and ttt serve loads
them in the background."""

from __future__ import annotations

import random
import sqlite3

import pytest

from ttt_solve.book.errors import DamagedBookError
from ttt_solve.book.memory import MemoryLoader, load_table
from ttt_solve.book.reader import Book, open_book
from ttt_solve.book.records import Entry, MoveEntry
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules


def every_position(rules: Rules) -> list[Position]:
    """Every reachable position of a game, each orientation on its own."""
    seen = {Position.start(rules)}
    frontier = list(seen)
    while frontier:
        position = frontier.pop()
        if position.is_terminal:
            continue
        for cell in position.legal_moves():
            child = position.play(cell)
            if child not in seen:
                seen.add(child)
                frontier.append(child)
    return sorted(seen, key=lambda p: (p.ply, p.key))


def sample(db: str, rules: Rules, count: int, seed: int = 0) -> list[Position]:
    """Stored positions drawn at random, each turned by a random symmetry."""
    rng = random.Random(seed)
    with open_book(db, read_only=True) as book:
        keys = [row.key for row in book.rows(rules)]
    symmetries = len(rules.symmetries)
    return [
        Position.from_key(rules, key).transform(rng.randrange(symmetries))
        for key in rng.sample(keys, count)
    ]


def answers(book: Book, positions: list[Position]) -> list[tuple[Entry, list[MoveEntry]]]:
    return [book.find_with_moves(position) for position in positions]


def refused(*args: object) -> None:
    """Stands in for a lookup of the database that must not happen."""
    raise sqlite3.OperationalError("the database was asked")


def compare(db: str, rules: Rules, positions: list[Position]) -> None:
    """find_with_moves with the game's table against the database, on every position; and
    the table was used: with the database's lookups cut off, the answers still come."""
    with open_book(db, read_only=True) as book:
        from_database = answers(book, positions)
        table = load_table(book, rules)
        book.memory[book.game(rules).id] = table

        living = [p for p in positions if not p.is_terminal]
        book._rows.family = refused  # type: ignore[method-assign]
        assert answers(book, living) == [a for p, a in zip(positions, from_database) if p in living]
        del book._rows.family
        assert answers(book, positions) == from_database


def test_every_position_of_3x3_is_answered_as_the_database_does(book_3x3):
    rules = Rules(3, 3, 3)
    positions = every_position(rules)
    assert len(positions) == 5_478  # the published count of legal 3x3 positions
    compare(book_3x3, rules, positions)


@pytest.mark.parametrize(
    "rules", [Rules(3, 4, 3), pytest.param(Rules(4, 4, 3), marks=pytest.mark.slow)], ids=str
)
def test_a_sample_of_bigger_games_is_answered_as_the_database_does(book_small, rules):
    compare(book_small, rules, sample(book_small, rules, 600))


def test_a_finished_game_is_answered_from_memory_too(book_3x3):
    rules = Rules(3, 3, 3)
    over = [p for p in every_position(rules) if p.is_terminal]
    assert len(over) == 958  # the published count of 3x3's finished positions
    with open_book(book_3x3, read_only=True) as book:
        from_database = answers(book, over)
        assert all(moves == [] for _, moves in from_database)
        book.memory[book.game(rules).id] = load_table(book, rules)
        book._rows.positions = refused  # type: ignore[method-assign]
        book._rows.family = refused  # type: ignore[method-assign]
        assert answers(book, over) == from_database


@pytest.mark.slow
def test_a_sample_of_4x4k4_is_answered_as_the_database_does(book_4x4k4):
    rules = Rules(4, 4, 4)
    compare(book_4x4k4, rules, sample(book_4x4k4, rules, 2_000))


def test_a_table_holds_every_row_of_its_game_in_15_bytes_each(book_small):
    with open_book(book_small, read_only=True) as book:
        info = book.game(Rules(3, 3, 3))
        table = load_table(book, info.rules)
        assert len(table) == info.positions == 765  # 3x3's positions up to symmetry
        assert table.nbytes == 15 * 765


def test_an_opening_book_answers_its_last_ply_from_the_database(opening_book):
    # the children of its last ply are not stored: the table has none to give
    rules = Rules(3, 4, 3)
    positions = [p for p in every_position(rules) if p.ply <= 1]
    compare(opening_book, rules, positions)


def test_a_row_whose_ply_is_not_its_stones_is_not_loaded(tmp_path, book_3x3):
    db = tmp_path / "damaged.sqlite"
    db.write_bytes(open(book_3x3, "rb").read())
    with sqlite3.connect(db) as connection:
        moved = connection.execute("UPDATE position_blocks SET ply = 3 WHERE ply = 4")
        assert moved.rowcount >= 1  # the blocks of ply 4, and their keys of 4 stones, at ply 3
    with open_book(str(db), read_only=True) as book:
        with pytest.raises(DamagedBookError, match="ply is not its count of stones"):
            load_table(book, Rules(3, 3, 3))


def test_the_loader_keeps_the_smallest_games_that_fit(book_small):
    reports: list[str] = []
    with open_book(book_small, read_only=True) as book:
        sizes = {info.rules: info.positions for info in book.games()}
        budget = sizes[Rules(3, 3, 3)] + sizes[Rules(3, 4, 3)]
        MemoryLoader(book, budget, reports.append).start().join()
        kept = {book.game(rules).id for rules in (Rules(3, 3, 3), Rules(3, 4, 3))}
        assert set(book.memory) == kept
    # the compile of the lookup said apart from the reading of each game (its seconds with it)
    assert reports[0].startswith("lookup in memory compiled in ")
    assert [line.split(":")[0] for line in reports[1:]] == ["3x3 k=3", "3x4 k=3"]
    assert "765 positions in memory" in reports[1] and "read in" in reports[1]


def test_the_loader_stops_when_asked(book_small):
    with open_book(book_small, read_only=True) as book:
        loader = MemoryLoader(book, 10**9, lambda line: None)
        loader.stopping.set()
        loader.start().join()
        assert book.memory == {}
