"""The API's JSON of an answer, written out directly, is byte for byte the encoding of
``ttt query --json``'s object."""

from __future__ import annotations

import pytest

from tests.test_memory import every_position, sample
from ttt_solve.book.oracle import Analysis, Oracle
from ttt_solve.book.query import analysis_json
from ttt_solve.book.reader import open_book
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.web.answers import ENCODER, encode_analysis


def assert_written_as_encoded(answers: list[Analysis]) -> None:
    for answer in answers:
        assert encode_analysis(answer) == ENCODER.encode(analysis_json(answer)).encode(), answer


def test_every_answer_of_3x3_from_the_book(book_3x3):
    rules = Rules(3, 3, 3)
    positions = every_position(rules)
    with open_book(book_3x3, read_only=True) as book:
        oracle = Oracle(rules, book, search_seconds=0)
        answers = [oracle.analyse(position) for position in positions]
    assert {a.position.is_terminal for a in answers} == {False, True}
    assert {a.position.winner for a in answers} == {None, "x", "o"}
    assert_written_as_encoded(answers)


@pytest.mark.parametrize("rules", [Rules(3, 4, 3), Rules(4, 4, 3)], ids=str)
def test_a_sample_of_bigger_games_from_the_book(book_small, rules):
    with open_book(book_small, read_only=True) as book:
        oracle = Oracle(rules, book, search_seconds=0)
        answers = [oracle.analyse(position) for position in sample(book_small, rules, 300)]
    assert_written_as_encoded(answers)


def test_answers_searched_live_and_past_an_opening_book(opening_book):
    rules = Rules(3, 4, 3)
    positions = [
        Position.from_moves(rules, moves) for moves in ([], ["a1", "b2"], ["a1", "b2", "c3"])
    ]
    with open_book(opening_book, read_only=True) as book:
        answers = [Oracle(rules, book).analyse(position) for position in positions]
    answers += [Oracle(rules).analyse(position) for position in positions]  # no book at all
    assert [a.source for a in answers] == ["book", "book+search", "search"] + ["search"] * 3
    assert any(a.nodes and a.seconds for a in answers)
    assert_written_as_encoded(answers)
