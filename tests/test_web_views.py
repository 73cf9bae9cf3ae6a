"""Each page is one view's data object, rendered by its template or answered as ``.json``: a
template reads nothing of a page but what its ``.json`` twin holds (and the pictures drawn
from the same answers), so rendering it from the decoded JSON alone, with a key the JSON lacks
an error, gives the page."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("starlette")
jinja2 = pytest.importorskip("jinja2")
pytest.importorskip("httpx", reason="Starlette's test client needs httpx: pip install httpx")

from tests.web_support import render, render_from_json, served, visible  # noqa: E402
from ttt_solve.web.app import create_app  # noqa: E402
from ttt_solve.web.links import json_twin  # noqa: E402


@pytest.fixture(scope="module")
def client(book_small):
    with served(create_app(book_small)) as client:
        yield client


PAGES = [
    ("position.html", "/game/3x3k3"),
    ("position.html", "/game/3x3k3?moves=b2,a1&line=1"),
    ("position.html", "/game/3x3k3?moves=b2,a1,c3&ply=1&values=0"),
    ("position.html", "/game/3x3k3?moves=a1,b1,a2,b2,a3"),
    ("position.html", "/game/3x3k3?moves=b2,a1&mark=c3&audit=999&game=2&side=o"),
    ("position.html", "/game/3x3k3?position=x../.o./...&mark=c3"),
    ("analysis.html", "/game/3x3k3/analysis"),
    ("analysis.html", "/game/3x4k3/analysis"),
    ("edit.html", "/game/3x3k3/edit"),
    ("edit.html", "/game/3x3k3/edit?position=x../.o./...&turn=o&tool=o"),
    ("edit.html", "/game/3x3k3/edit?position=xxx/.../..."),
    ("audits.html", "/audits"),
    ("audits.html", "/audits?game=4x4k3&agent=random"),
    ("play.html", "/play/3x3k3?agent=heuristic&side=x&seed=4"),
    ("play.html", "/play/3x3k3?agent=heuristic&side=x&seed=4&values=1&hint=1&moves=b2,a1"),
    ("play.html", "/play/3x3k3?agent=random&side=o&seed=4&moves=a1,b1,a2,b2,a3"),
    ("play.html", "/play/3x3k3?agent=random&side=x&seed=4&moves=b2,a1,c3,a3,a2,c2,b1,b3,c1"),
    ("ratings.html", "/game/4x4k3/ratings"),
]


@pytest.mark.parametrize(("template", "url"), PAGES)
def test_a_page_is_its_template_over_its_json(client, template, url):
    page = client.get(url)
    assert page.status_code == 200, page.text
    # every word of the page is that of its template rendered from its JSON alone
    assert visible(render_from_json(client, template, url)) == visible(page.text)


def wait_for(client, job: int) -> None:  # noqa: ANN001 - a test client
    for _ in range(600):
        if client.get(f"/api/audits/{job}").json()["status"] != "running":
            return
        time.sleep(0.1)
    raise AssertionError("the audit did not finish")


@pytest.mark.parametrize(
    "body",
    [
        {"game": "3x3k3", "agent": "random", "mode": "games", "games": 8, "seed": 1},
        {"game": "3x3k3", "agent": "heuristic", "mode": "positions", "sample": 40, "seed": 2},
    ],
)
def test_an_audit_page_is_its_template_over_its_json(client, body):
    job = client.post("/api/audits", json=body).json()["id"]
    wait_for(client, job)
    for url in (f"/audits/{job}", f"/audits/{job}?costly=2&games=1"):
        page = client.get(url)
        assert page.status_code == 200, page.text
        assert visible(render_from_json(client, "audit.html", url)) == visible(page.text)


@pytest.mark.parametrize(
    ("template", "url", "key"),
    [
        ("analysis.html", "/game/3x3k3/analysis", "depths"),
        ("audits.html", "/audits", "form"),
        ("position.html", "/game/3x3k3?moves=b2", "links"),
    ],
)
def test_a_template_reading_what_the_json_lacks_fails(client, template, url, key):
    """The check above can fail: a key the template reads, taken out of the JSON, is an
    error, never an empty string."""
    data = client.get(json_twin(url)).json()
    del data[key]
    with pytest.raises(jinja2.UndefinedError):
        render(client, template, data)
