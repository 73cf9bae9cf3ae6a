"""The edges of ttt serve's pages through Starlette's test client: a replay link whose audit is
gone, templates that read only what their data holds, errors of the ``.json`` twins, long
input quoted shortened, repeated parameters, agent specs checked before an audit is accepted,
the board editor's links, the move list's blunders, and the Host check."""

from __future__ import annotations

import re
import warnings
from html import unescape

import pytest

jinja2 = pytest.importorskip("jinja2")

pytest.importorskip("starlette")
pytest.importorskip("httpx", reason="Starlette's test client needs httpx: pip install httpx")

with warnings.catch_warnings():  # recent Starlette warns that it prefers httpx2 to httpx
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from tests.web_support import served  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402
from ttt_solve.web import links  # noqa: E402
from ttt_solve.web.app import create_app  # noqa: E402


@pytest.fixture(scope="module")
def client(book_small):
    with served(create_app(book_small)) as client:
        yield client


def post_form(client: TestClient, body: str):  # noqa: ANN201 - an httpx response
    """``body`` posted to ``/audits`` as the page's form posts it."""
    form = {"content-type": "application/x-www-form-urlencoded"}
    return client.post("/audits", content=body, headers=form, follow_redirects=False)


def error_of(response) -> str:  # noqa: ANN001 - an httpx response
    found = re.search(r'<p class="error" id="error">(.*?)</p>', response.text, re.S)
    assert found, response.text[:300]
    return unescape(found[1])


# -- a replay link whose audit is gone ------------------------------------------------------


def test_a_replay_link_whose_audit_is_gone_shows_the_game_and_says_so(client):
    response = client.get("/game/3x3k3?moves=b2,a1&audit=1&game=1&side=o")
    assert response.status_code == 200, response.text[-500:]
    banner = re.search(r'<div class="banner" id="audit-banner">(.*?)</div>', response.text, re.S)
    assert banner and "audit #1" in banner[1] and "no longer on this server" in banner[1]
    assert 'id="back-to-audit"' not in banner[1]  # it would lead to a 404
    assert 'id="board"' in response.text and 'id="history"' in response.text
    twin = client.get("/game/3x3k3.json?moves=b2,a1&audit=1&game=1&side=o").json()
    assert twin["audit"]["agent"] is None and twin["audit"]["side"] == "o"


def test_templates_fail_loudly_on_a_missing_key(client):
    templates = client.app.state.templates
    with pytest.raises(jinja2.UndefinedError):
        templates.from_string("{{ data.missing }}").render(data={})


# -- the board editor and the move list -----------------------------------------------------


def test_the_editors_clear_link_clears_the_board(client):
    page = client.get("/game/3x3k3/edit?position=x../.o./...&turn=x")
    found = re.search(r'<a href="([^"]*)"[^>]*>clear the board</a>', page.text)
    assert found, page.text[-800:]
    href = unescape(found[1])
    assert href == links.editor_url(Rules(3, 3, 3), None, "x", "x")
    assert client.get(href).status_code == 200


def test_a_dict_key_named_as_a_dict_method_is_read_as_the_key(client):
    """``d.links.clear`` names the key, not ``dict.clear``: templates read data objects."""
    templates = client.app.state.templates
    data = {"clear": "/a", "items": "/b", "keys": "/c", "values": "/d", "get": "/e"}
    written = templates.from_string(
        "{{ d.clear }} {{ d.items }} {{ d.keys }} {{ d.values }} {{ d.get }}"
    ).render(d=data)
    assert written == "/a /b /c /d /e"


def test_the_move_list_marks_a_blunder_as_lichess_does(client):
    # b2 a1? no: a1 draws; after b2, b1 loses for O (the edge reply)
    page = client.get("/game/3x3k3?moves=b2,b1,a1")
    moves = re.search(r'<ol class="game-moves" id="moves">(.*?)</ol>', page.text, re.S)
    assert moves, page.text[-800:]
    text = re.sub(r"<[^>]+>", "", moves[1])
    assert "b1??" in text and "b2??" not in text and "a1??" not in text
    twin = client.get("/game/3x3k3.json?moves=b2,b1,a1").json()
    assert twin["numbered"][0]["o"]["blunder"] is True
    assert twin["numbered"][0]["x"]["blunder"] is False


def test_a_replayed_audit_game_marks_only_the_agents_blunders(client):
    # both players blunder: O's b1 (draw -> loss), then X's c3 (win -> draw)
    base = "/game/3x3k3.json?moves=b2,b1,c3"
    both = client.get(base).json()
    blunders = [m["cell"] for row in both["numbered"] for m in (row["x"], row["o"]) if m]
    assert blunders == ["b2", "b1", "c3"]
    marked = {
        m["cell"] for row in both["numbered"] for m in (row["x"], row["o"]) if m and m["blunder"]
    }
    agent_o = client.get(base + "&audit=7&side=o").json()
    marked_o = {
        m["cell"] for row in agent_o["numbered"] for m in (row["x"], row["o"]) if m and m["blunder"]
    }
    assert "b1" in marked and marked_o == {"b1"} and marked_o <= marked


def test_no_mark_when_values_are_hidden(client):
    page = client.get("/game/3x3k3?moves=b2,b1&values=0")
    assert "??" not in page.text


# -- long input ----------------------------------------------------------------


LONG = "x" * 3000


@pytest.mark.parametrize(
    "url",
    [
        f"/game/{LONG}",
        f"/game/3x3k3?position={LONG}",
        f"/game/3x3k3?moves={'a1' * 900}",
        f"/play/3x3k3?seed=1&agent={LONG[:150]}{'y' * 40}",
    ],
)
def test_long_input_is_quoted_shortened(client, url):
    response = client.get(url)
    assert 400 <= response.status_code < 500
    message = error_of(response)
    assert len(message) < 300 and max(len(word) for word in message.split()) <= 60


def test_the_editor_quotes_a_long_position_shortened(client):
    for text in (LONG, "x" * 2000 + "/" + "o" * 990):
        page = client.get(f"/game/3x3k3/edit?position={text}")
        assert page.status_code == 200
        status = re.search(r'<p id="setup-status"[^>]*>(.*?)</p>', page.text, re.S)
        assert status and "Not a legal position" in status[1]
        assert len(unescape(status[1])) < 300 and "…" in status[1]
        problem = client.get(f"/game/3x3k3/edit.json?position={text}").json()["problem"]
        assert len(problem) < 300 and max(len(w) for w in problem.split()) <= 60


# -- a parameter given twice ----------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "/game/3x3k3?moves=b2&moves=a1",
        "/game/3x3k3.json?moves=b2&ply=0&ply=1",
        "/api/games/3x3k3/position?position=x........&position=.........",
        "/api/games/3x3k3/position?moves=b2&mo%76es=a1",
        "/play/3x3k3?agent=random&agent=perfect&seed=1",
        "/uwapi/mnk/3x3k3/positions/?p=1_---------&p=2_----x----",
    ],
)
def test_a_repeated_query_parameter_is_refused(client, url):
    response = client.get(url, follow_redirects=False)
    assert response.status_code == 400
    error = response.json()["error"] if "json" in response.headers["content-type"] else None
    error = error or error_of(response)
    assert "given twice" in error and "\n" not in error


def test_a_repeated_form_or_json_field_is_refused(client):
    response = post_form(client, "game=3x3k3&agent=random&agent=perfect&mode=positions&sample=5")
    assert response.status_code == 400 and "given twice" in error_of(response)
    body = b'{"game": "3x3k3", "agent": "random", "agent": "perfect"}'
    api = client.post("/api/audits", content=body)
    assert api.status_code == 400 and "'agent' is given twice" in api.json()["error"]


def test_distinct_parameters_and_blank_ones_still_pass(client):
    assert client.get("/game/3x3k3?moves=b2&ply=0&values=0&line=1").status_code == 200
    assert client.get("/game/3x3k3?moves=b2&").status_code == 200


# -- audits: the agent specs checked before the audit is accepted ---------------------------


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"agent": "perfect:error=2"}, "error"),
        ({"agent": "perfect:error=1.5"}, "error"),
        ({"agent": "random", "mode": "games", "opponent": "perfect:error=2"}, "error"),
        ({"agent": "perfect:error=-0.5"}, "error"),
    ],
)
def test_an_agent_spec_the_agent_refuses_is_a_400_before_accepting(client, fields, words):
    api = client.post("/api/audits", json={"game": "3x3k3", **fields})
    assert api.status_code == 400, api.text
    assert words in api.json()["error"] and "\n" not in api.json()["error"]
    form = "&".join(f"{key}={value}" for key, value in {"game": "3x3k3", **fields}.items())
    page = post_form(client, form)
    assert page.status_code == 400 and words in error_of(page)
    assert client.get(
        "/play/3x3k3?seed=1&agent=" + fields.get("opponent", fields["agent"])
    ).status_code == (400)


def test_a_valid_perfect_with_errors_is_accepted(client):
    api = client.post("/api/audits", json={"game": "3x3k3", "agent": "perfect:error=0.25"})
    assert api.status_code in (202, 429), api.text


# -- the Host check -------------------------------------------------------------------------


def test_only_the_hosts_named_are_served(book_small):
    app = create_app(book_small, allowed_hosts=("books.example",))
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        assert client.get("/api/games").status_code == 200
        for host in ("books.example", "books.example:8000", "127.0.0.1", "[::1]:80", "localhost"):
            assert client.get("/api/games", headers={"host": host}).status_code == 200, host
        for host in ("rebind.evil.example", "evil.example:8000", "books.example.evil.example"):
            page = client.get("/", headers={"host": host})
            assert page.status_code == 400 and "--allowed-host" in error_of(page)
            assert host.split(":")[0] in error_of(page)
            api = client.get("/api/games", headers={"host": host})
            assert api.status_code == 400 and "--allowed-host" in api.json()["error"]
            post = client.post(
                "/audits",
                content="game=3x3k3&agent=random",
                headers={
                    "host": host,
                    "origin": f"http://{host}",
                    "content-type": "application/x-www-form-urlencoded",
                },
                follow_redirects=False,
            )
            assert post.status_code == 400


def test_hosts_may_be_any_with_a_star(book_small):
    with TestClient(create_app(book_small, allowed_hosts=("*",))) as client:
        assert client.get("/api/games", headers={"host": "any.example"}).status_code == 200
    with TestClient(create_app(book_small, allowed_hosts=(".example.org",))) as client:
        assert client.get("/api/games", headers={"host": "a.example.org"}).status_code == 200
        assert client.get("/api/games", headers={"host": "example.org"}).status_code == 200
        assert client.get("/api/games", headers={"host": "example.com"}).status_code == 400


def test_the_value_history_names_its_blunders_under_the_chart(client):
    page = client.get("/game/3x3k3?moves=b2,b1,a1")
    found = re.search(
        r'<p id="changes">Blunders: <a href="([^"]*)" class="loss">O b1: draw→loss', page.text
    )
    assert found, page.text[-1500:]
    assert unescape(found[1]) == "/game/3x3k3?moves=b2,b1,a1&ply=2"
    width = re.search(r'<svg [^>]*viewBox="0 0 (\d+) \d+"[^>]*class="value-history"', page.text)
    assert width and int(width[1]) <= 380  # no column of notes: it reads on a phone
    twin = client.get("/game/3x3k3.json?moves=b2,b1,a1").json()
    assert twin["history"]["changes"][0]["url"] == "/game/3x3k3?moves=b2,b1,a1&ply=2"


def test_an_empty_host_is_told_what_to_send(book_small):
    app = create_app(book_small, allowed_hosts=("books.example",))
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        page = client.get("/", headers={"host": ""})
        assert page.status_code == 400
        message = error_of(page)
        assert "empty" in message and "--allowed-host  " not in message, message
        assert "''" not in message, message


# -- the server's own troubles ----------------------------------------------------------------


def test_a_damaged_table_is_a_500_naming_its_whole_file(tmp_path):
    from ttt_solve.book.reader import open_book
    from ttt_solve.book.table.catalogue import catalogue_table
    from ttt_solve.solver.tablebase.build import build_table

    folder = tmp_path / ("a-folder-name-long-enough-to-be-cut-on-a-page-" * 2) / "3x3k3"
    build_table(Rules(3, 3, 3), folder)
    db = str(tmp_path / "t.sqlite")
    with open_book(db, create=True) as book:
        catalogue_table(book, folder)
    (folder / "ply-02.tb").write_bytes(b"TTTTABLE")  # truncated
    with served(create_app(db)) as client:
        api = client.get("/api/games/3x3k3/position?moves=b2,a1")
        assert api.status_code == 500, api.text
        assert str(folder / "ply-02.tb") in api.json()["error"], api.json()["error"]
        page = client.get("/game/3x3k3?moves=b2,a1")
        assert page.status_code == 500 and str(folder / "ply-02.tb") in error_of(page)
        assert "\\x1b" not in page.text
