"""``ttt query`` through click's CliRunner: drawing, move table, JSON, live search."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner

from tests.support import random_walk
from ttt_solve.book.reader import open_book
from ttt_solve.cli.main import ttt
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome, Value, move_value

T3 = Rules(3, 3, 3)


def query(*args: str):
    return CliRunner().invoke(ttt, ["query", *args])


def query_json(*args: str) -> dict:
    result = query(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_text_answer(book_3x3):
    result = query("x.o/.x./...", "--size", "3", "--win", "3", "--db", book_3x3)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:4] == ["    a  b  c", "  1 x  L2 o", "  2 L2 x  L2", "  3 L2 L2 D6"]
    assert lines[4] == "O to move (ply 3): draw, remoteness 6"
    assert lines[5].split() == ["move", "value", "remoteness"]
    assert lines[6].split() == ["c3", "draw", "6", "best"]
    assert sorted(line.split()[0] for line in lines[7:]) == ["a2", "a3", "b1", "b3", "c2"]
    assert all(line.split()[1:] == ["loss", "2"] for line in lines[7:])
    assert "\x1b[" not in result.output  # no colour when the output is not a terminal
    assert "searched" not in result.output


def test_colour_on_request(book_3x3):
    result = query("x.o/.x./...", "--db", book_3x3, "--color")
    assert result.exit_code == 0
    assert "\x1b[31m" in result.output and "\x1b[33m" in result.output  # red L, yellow D


def test_moves_option_and_finished_games(book_3x3):
    by_moves = query_json("--moves", "b2,a1,c3", "--db", book_3x3)
    by_text = query_json("o../.x./..x", "--db", book_3x3)
    assert by_moves == by_text
    assert by_moves["to_move"] == "o" and by_moves["value"] == "draw"
    assert {m["cell"] for m in by_moves["moves"] if m["best"]} == {"c1", "a3"}
    # Indexes and spaces work too, and moves continue from a given position.
    assert query_json("--moves", "4 0 8", "--db", book_3x3) == by_moves
    assert query_json(".../.x./...", "--moves", "a1,c3", "--db", book_3x3) == by_moves
    over = query("xxx/oo./...", "--db", book_3x3)
    assert over.exit_code == 0
    assert "game over after 5 moves: X has won" in over.output
    data = query_json("xxx/oo./...", "--db", book_3x3)
    assert data["moves"] == [] and data["value"] == "loss" and data["remoteness"] == 0
    assert data["winner"] == "x" and data["terminal"]


def test_json_object(book_3x3):
    data = query_json("--db", book_3x3)
    assert data["position"] == ".../.../..." and data["to_move"] == "x" and data["ply"] == 0
    assert (data["value"], data["remoteness"]) == ("draw", 9)
    assert data["source"] == "book" and data["searched_live"] is False
    assert len(data["moves"]) == 9 and all(m["best"] for m in data["moves"])
    assert data["game"] == {"rows": 3, "cols": 3, "k": 3}


def test_every_listed_move_agrees_with_the_stored_child(book_3x3):
    """For positions met in random games, each move's value is the child's stored value,
    negated, one ply further; the list is sorted best first; the position's value is the best."""
    rng = random.Random(3)
    with open_book(book_3x3) as book:
        for _ in range(40):
            position = random_walk(T3, rng, rng.randrange(0, 8))
            data = query_json(str(position), "--db", book_3x3)
            for move in data["moves"]:
                child = book.find(position.play(T3.parse_cell(move["cell"])))
                assert Value(Outcome(move["value"]), move["remoteness"]) == move_value(child.value)
            values = [Value(Outcome(m["value"]), m["remoteness"]) for m in data["moves"]]
            assert values == sorted(values, key=lambda v: v.sort_key)
            stored = book.find(position).value
            assert (data["value"], data["remoteness"]) == (stored.outcome.value, stored.remoteness)
            assert {m["index"] for m in data["moves"] if m["best"]} == set(
                book.find(position).best_moves
            )


def test_a_larger_board(book_4x4k4):
    data = query_json("..../.x../..o./....", "--size", "4", "--win", "4", "--db", book_4x4k4)
    assert data["value"] == "draw" and data["remoteness"] == 14 and len(data["moves"]) == 14


def test_game_not_in_the_book_is_searched_live(book_3x3):
    pytest.importorskip("ttt_solve.solver.prover.search")
    result = query("--size", "4", "--win", "3", "--db", book_3x3)
    assert result.exit_code == 0, result.output
    assert "searched live: the book holds no such game" in result.output
    assert "X to move (ply 0): win" in result.output
    data = query_json("--size", "3x4", "--win", "3", "--db", book_3x3)
    assert data["source"] == "search" and data["searched_live"] and data["value"] == "win"


def test_game_out_of_reach_names_the_command(book_3x3):
    result = query("--size", "5", "--win", "4", "--db", book_3x3, "--search-seconds", "0")
    assert result.exit_code == 2
    assert "holds no 5x5 k=4 game" in result.output
    assert f"ttt-solve --size 5 --win 4 --db {book_3x3}" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_past_the_opening_book_the_moves_are_searched(opening_book, book_small):
    pytest.importorskip("ttt_solve.solver.prover.search")
    args = ["x.../.o../....", "--size", "3x4", "--win", "3"]
    result = query(*args, "--db", opening_book)
    assert result.exit_code == 0, result.output
    assert "value from the book; moves searched live (past the opening book)" in result.output
    searched = query_json(*args, "--db", opening_book)
    truth = query_json(*args, "--db", book_small)
    assert searched["source"] == "book+search" and truth["source"] == "book"
    for key in ("value", "remoteness", "moves"):
        assert searched[key] == truth[key]
    deeper = query_json(*args, "--moves", "c3", "--db", opening_book)
    assert deeper["source"] == "search"
    said = query(*args, "--moves", "c3", "--db", opening_book).output
    assert "searched live: past the opening book's depth 2" in said
    assert deeper["moves"] == query_json(*args, "--moves", "c3", "--db", book_small)["moves"]
