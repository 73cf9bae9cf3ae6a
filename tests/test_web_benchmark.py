"""The benchmark's pages and their JSON: each published set, its leaderboard as
``ttt benchmark leaderboard --out`` wrote it, and one agent's heatmaps, drawn from those
figures."""

from __future__ import annotations

import json
import re
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

from ttt_solve.agents.benchset import CHECKSUMS, DATA  # noqa: E402
from ttt_solve.cli.main import ttt  # noqa: E402
from ttt_solve.web import benchmark as pages  # noqa: E402
from ttt_solve.web.app import create_app  # noqa: E402


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """The published sets, with a leaderboard of two agents on 4x4 k=4 beside them."""
    folder = tmp_path_factory.mktemp("benchmarks")
    for path in [*DATA.glob("*.jsonl"), DATA / CHECKSUMS]:
        shutil.copy(path, folder / path.name)
    out = folder / "leaderboard.json"
    result = CliRunner().invoke(
        ttt,
        ["benchmark", "leaderboard", "--game", "4x4k4", "--agent", "random"]
        + ["--agent", "heuristic", "--agent", "perfect", "--db", "none.sqlite", "-q"]
        + ["--out", str(out), "--jobs", "1"],
    )
    assert result.exit_code == 0, result.output
    assert "Left out: `perfect`: no book at none.sqlite" in result.output
    return folder, json.loads(out.read_text())


@pytest.fixture
def client(published, book_3x3, monkeypatch):
    monkeypatch.setattr(pages, "DATA", published[0])
    with TestClient(create_app(book_3x3)) as client:
        yield client


def test_the_index_lists_every_published_set(client):
    page = client.get("/benchmark")
    assert page.status_code == 200
    assert 'href="/benchmark/4x4k4"' in page.text and 'href="/benchmark/4x5k4"' in page.text
    assert 'href="/benchmark"' in client.get("/").text  # reached from every page
    sets = {s["game"]: s for s in client.get("/benchmark.json").json()["sets"]}
    assert sets["4x4k4"]["agents"] == 2 and sets["4x5k4"]["agents"] == 0
    assert sets["4x4k4"]["stages"][0] == {"name": "opening", "plies": [0, 8]}


def test_a_board_shows_its_leaderboard_and_one_agents_heatmaps(client, published):
    _, board = published
    figures = {r["agent"]: r for r in board["boards"]["4x4k4"]["reports"]}
    page = client.get("/benchmark/4x4k4?agent=heuristic")
    assert page.status_code == 200
    assert 'href="/benchmark/4x4k4?agent=random"' in page.text
    assert "heuristic, cell by cell" in page.text
    assert "Left out: `perfect`: no book at none.sqlite" in page.text
    cells = re.findall(r'<g class="heat-cell"([^>]*)>', page.text)
    assert len(cells) == 36
    drawn = re.search(r'data-row="end" data-column="mid" data-share="([0-9.]+)"', page.text)
    cell = next(
        c
        for c in figures["heuristic"]["cells"]
        if (c["split"], c["stage"], c["difficulty"]) == ("decisive", "end", "mid")
    )
    assert float(drawn.group(1)) == pytest.approx(cell["value_kept"], abs=1e-6)
    twin = client.get("/benchmark/4x4k4.json?agent=heuristic").json()
    assert twin["agent"] == figures["heuristic"]
    assert [row["agent"] for row in twin["leaderboard"]] == ["random", "heuristic"]
    assert "random, cell by cell" in client.get("/benchmark/4x4k4").text


def test_a_board_without_a_leaderboard_and_unknown_ones(client):
    empty = client.get("/benchmark/4x5k4")
    assert (
        empty.status_code == 200 and "No leaderboard of this board is published yet" in empty.text
    )
    assert "ttt benchmark --agent SPEC --size 4x5 --win 4" in empty.text
    assert client.get("/benchmark/3x3k3").status_code == 404
    assert client.get("/benchmark/4x4k4?agent=nobody").status_code == 404
    assert client.get("/benchmark/4x4k4.json?agent=nobody").json()["status"] == 404
