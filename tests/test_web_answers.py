"""The API's answer of a position is, byte for byte, the one encoder's JSON of ``ttt query
--json``'s object, on every 3x3 position and samples of larger games, asked once and again
(the second time from the explorer's kept bytes), written out and by moves."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx", reason="Starlette's test client needs httpx: pip install httpx")

with warnings.catch_warnings():  # recent Starlette warns that it prefers httpx2 to httpx
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from tests.test_memory import every_position, sample  # noqa: E402
from tests.web_support import served  # noqa: E402
from ttt_solve.book.oracle import Oracle  # noqa: E402
from ttt_solve.book.query import analysis_json  # noqa: E402
from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402
from ttt_solve.web.answers import ENCODER  # noqa: E402
from ttt_solve.web.app import create_app  # noqa: E402
from ttt_solve.web.explorer import Limits, game_name  # noqa: E402


def assert_answered_as_encoded(db: str, rules: Rules, positions: list[Position]) -> None:
    with open_book(db, read_only=True) as book:
        oracle = Oracle(rules, book, search_seconds=0)
        expected = [ENCODER.encode(analysis_json(oracle.analyse(p))).encode() for p in positions]
    url = f"/api/games/{game_name(rules)}/position?position="
    with TestClient(create_app(db, Limits(memory_rows=0))) as client:
        asked = list(zip(positions, expected))
        for position, body in asked + asked[:300]:  # asked again: the kept bytes
            response = client.get(url + str(position))
            assert response.status_code == 200
            assert response.content == body, position
            assert response.headers["content-length"] == str(len(body))


def test_every_answer_of_3x3(book_3x3):
    rules = Rules(3, 3, 3)
    positions = every_position(rules)
    assert {p.winner for p in positions} == {None, "x", "o"}
    assert_answered_as_encoded(book_3x3, rules, positions)


@pytest.mark.parametrize("rules", [Rules(3, 4, 3), Rules(4, 4, 3)], ids=str)
def test_a_sample_of_bigger_games(book_small, rules):
    assert_answered_as_encoded(book_small, rules, sample(book_small, rules, 200))


def test_answers_searched_live_past_an_opening_book(opening_book, book_small):
    """Searched live, the answer has the exhaustive book's values and moves, encoded alike
    (only the search's own figures differ)."""
    rules = Rules(3, 4, 3)
    with open_book(book_small, read_only=True) as book:
        exact = analysis_json(
            Oracle(rules, book).analyse(Position.from_moves(rules, "a1 b2 c3".split()))
        )
    with served(create_app(opening_book, Limits(search_seconds=30))) as client:
        response = client.get("/api/games/3x4k3/position?moves=a1,b2,c3")
    data = response.json()
    assert response.content == ENCODER.encode(data).encode()
    assert data["source"] == "search" and data["searched_live"]
    searched = ("source", "searched_live", "search_nodes", "search_seconds")
    assert {k: v for k, v in data.items() if k not in searched} == {
        k: v for k, v in exact.items() if k not in searched
    }
