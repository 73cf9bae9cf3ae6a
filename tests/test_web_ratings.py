"""The ratings page and its JSON: the ladders cached in the book and the agents rated on them."""

from __future__ import annotations

import shutil
import warnings

import pytest
from click.testing import CliRunner

pytest.importorskip("starlette")
pytest.importorskip("jinja2")
pytest.importorskip("httpx", reason="Starlette's test client needs httpx: pip install httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # recent Starlette prefers httpx2 to httpx
    from starlette.testclient import TestClient  # noqa: E402

from ttt_solve.cli.main import ttt  # noqa: E402
from ttt_solve.web.app import create_app  # noqa: E402


@pytest.fixture(scope="module")
def rated_book(book_small, tmp_path_factory):
    """3x3 k=3 with its ladder (2 games per pair) and one agent rated; 4x4 k=3 with none."""
    db = str(tmp_path_factory.mktemp("ratings") / "rated.sqlite")
    shutil.copy(book_small, db)
    result = CliRunner().invoke(
        ttt, ["rate", "--db", db, "--games", "2", "--agent", "heuristic", "-q", "--json"]
    )
    assert result.exit_code == 0, result.output
    return db, result.output


def test_the_ratings_page_shows_the_cached_ladder(rated_book):
    db, _ = rated_book
    with TestClient(create_app(db)) as client:
        index = client.get("/").text
        assert 'href="/game/3x3k3/ratings"' in index
        page = client.get("/game/3x3k3/ratings")
        assert page.status_code == 200
        assert "Ladder standard-1, 2 games per pair, seed 0" in page.text
        assert "heuristic *" in page.text and "mcts:iterations=10000" in page.text
        assert "<svg" in page.text  # the ratings with their intervals
        empty = client.get("/game/4x4k3/ratings")
        assert empty.status_code == 200 and "No ladder of this game is cached yet" in empty.text
        assert "ttt rate --size 4 --win 3" in empty.text
        assert client.get("/game/5x5k4/ratings").status_code == 404


def test_the_ratings_json_is_what_ttt_rate_printed(rated_book):
    import json

    db, printed = rated_book
    by_command = json.loads(printed)
    with TestClient(create_app(db)) as client:
        data = client.get("/api/games/3x3k3/ratings").json()
        empty = client.get("/api/games/4x4k3/ratings").json()
    assert empty["game"] == "4x4k3" and empty["ladders"] == []
    assert empty["rules"] == {"rows": 4, "cols": 4, "k": 3}
    assert empty["rate"]["command"] == f"ttt rate --size 4 --win 3 --db {db}"
    assert empty["rate"]["rungs"][0] == "random" and empty["rate"]["games_per_pair"] > 0
    (ladder,) = data["ladders"]
    assert ladder["ladder"]["ratings"] == by_command["ladder"]["ratings"]
    assert ladder["table"] == by_command["table"]
    assert [agent["agent"] for agent in ladder["agents"]] == ["heuristic"]


def test_the_ratings_page_has_its_json_twin_in_the_one_encoding(rated_book):
    from ttt_solve.web.answers import ENCODER

    db, _ = rated_book
    with TestClient(create_app(db)) as client:
        twin = client.get("/game/3x3k3/ratings.json")
        api = client.get("/api/games/3x3k3/ratings")
        assert twin.status_code == api.status_code == 200
        assert twin.content == api.content == ENCODER.encode(api.json()).encode()
        assert 'href="/game/3x3k3/ratings.json"' in client.get("/game/3x3k3/ratings").text


def test_the_ratings_page_is_its_template_over_its_json(rated_book):
    """Every word of the ratings page, with a ladder or none, is its template's rendered from
    its JSON alone (the charts aside)."""
    from tests.web_support import render_from_json, visible

    db, _ = rated_book
    with TestClient(create_app(db)) as client:
        for url in ("/game/3x3k3/ratings", "/game/4x4k3/ratings"):
            page = client.get(url).text
            assert visible(render_from_json(client, "ratings.html", url)) == visible(page)


def test_the_ratings_page_shows_the_models_fit_from_its_json(rated_book):
    from html import unescape

    from ttt_solve.agents.ladder import from_cache
    from ttt_solve.book.reader import open_book
    from ttt_solve.reports.ratings import fit_text
    from ttt_solve.solver.rules import Rules

    db, printed = rated_book
    with open_book(db) as book:
        (result,) = from_cache(book, Rules(3, 3, 3))
    sentence = fit_text(result.table)  # as ttt rate prints it
    assert sentence.startswith("fit: Pearson X²")
    with TestClient(create_app(db)) as client:
        (ladder,) = client.get("/api/games/3x3k3/ratings").json()["ladders"]
        page = unescape(client.get("/game/3x3k3/ratings").text)
    assert ladder["fit"] == sentence and sentence in printed_text(db)
    assert f'<p class="note fit">Goodness of {sentence}</p>' in page  # below the table


def printed_text(db: str) -> str:
    """``ttt rate``'s text report of the cached ladder (nothing is played again)."""
    result = CliRunner().invoke(ttt, ["rate", "--db", db, "--games", "2", "-q"])
    assert result.exit_code == 0, result.output
    return result.output
