"""ttt serve's routes through Starlette's test client: pages, JSON, the universal API, audits,
play, and every kind of bad input answered with a 4xx and one line."""

from __future__ import annotations

import re
import time
import warnings

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")
pytest.importorskip("httpx", reason="Starlette's test client needs httpx: pip install httpx")

with warnings.catch_warnings():  # recent Starlette warns that it prefers httpx2 to httpx
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from tests.web_support import served  # noqa: E402
from ttt_solve.book.oracle import Oracle  # noqa: E402
from ttt_solve.book.query import analysis_json, parse_query  # noqa: E402
from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402
from ttt_solve.web.app import create_app  # noqa: E402
from ttt_solve.web.explorer import Limits  # noqa: E402

R3 = Rules(3, 3, 3)


@pytest.fixture(scope="module")
def client(book_small):
    with served(create_app(book_small)) as client:
        yield client


@pytest.fixture(scope="module")
def opening_client(opening_book):
    with served(create_app(opening_book, Limits(search_seconds=30))) as client:
        yield client


def book_answer(db: str, rules: Rules, moves: str) -> dict:
    with open_book(db) as book:
        return analysis_json(Oracle(rules, book).analyse(parse_query(rules, None, moves)))


def board_cells(html: str) -> dict[str, dict[str, str]]:
    """The data attributes of each cell of the board on a page, by cell name."""
    cells = {}
    for tag in re.findall(r"<g [^>]*\bdata-cell=[^>]*>", html):
        attributes = dict(re.findall(r'\b(data-[a-z-]+|class)="([^"]*)"', tag))
        cells[attributes["data-cell"]] = attributes
    return cells


def cells_shown(html: str) -> dict[str, tuple[str, int]]:
    """Each empty cell's value and remoteness as the board on a page shows them."""
    return {
        name: (cell["data-value"], int(cell["data-remoteness"]))
        for name, cell in board_cells(html).items()
        if "data-value" in cell
    }


# -- pages ---------------------------------------------------------------------------------


def test_index_lists_the_games_with_their_summary(client):
    response = client.get("/")
    assert response.status_code == 200
    for name in ("3x3k3", "3x4k3", "4x4k3"):
        assert f'href="/game/{name}"' in response.text
    assert "draw" in response.text and "765" in response.text  # 3x3: a draw, 765 stored rows


def test_position_page_shows_every_move_as_the_book_values_it(client, book_small):
    response = client.get("/game/3x3k3?moves=b2,a1")
    assert response.status_code == 200
    expected = book_answer(book_small, R3, "b2,a1")
    shown = cells_shown(response.text)
    assert shown == {m["cell"]: (m["value"], m["remoteness"]) for m in expected["moves"]}
    assert 'data-value="draw" data-remoteness="7"' in response.text  # the summary line
    assert "from the book" in response.text
    # each move links to the position after it, and undo to the one before
    assert 'href="/game/3x3k3?moves=b2,a1,c3"' in response.text
    assert 'id="undo"' in response.text and 'href="/game/3x3k3?moves=b2"' in response.text


def test_a_board_of_links_is_a_group_of_named_cells(client):
    """Linked cells are named images inside their links, in a board that is a group (an
    image's parts are hidden from screen readers); a board without links is one image."""
    page = client.get("/game/3x3k3?moves=b2,a1").text
    board = page[page.index('<svg xmlns="http://www.w3.org/2000/svg"') :]
    assert board.split(">", 1)[0].count('role="group"') == 1
    linked = re.findall(r'<a href="[^"]+"><g class="cell[^>]*>', board.split("</svg>")[0])
    assert len(linked) == 7
    assert all('role="img" aria-label="' in cell for cell in linked)
    assert 'aria-label="c3: draw in 7' in board
    over = client.get("/game/3x3k3?moves=a1,a2,b1,b2,c1").text
    svg = over[over.index('<svg xmlns="http://www.w3.org/2000/svg"') :].split(">", 1)[0]
    assert 'role="img"' in svg


def test_position_page_of_a_won_position_marks_the_winning_moves(client):
    response = client.get("/game/3x3k3?position=xx./oo./...")
    shown = cells_shown(response.text)
    assert shown["c1"] == ("win", 1)
    assert shown["a3"] == ("loss", 2)  # O completes the middle row at c2
    best_wins = [
        name
        for name, cell in board_cells(response.text).items()
        if cell.get("data-value") == "win" and cell.get("data-best") == "true"
    ]
    assert best_wins == ["c1"]  # c1 alone wins at once


def test_position_page_written_and_by_moves_agree(client):
    by_moves = cells_shown(client.get("/game/3x3k3?moves=b2,a1").text)
    written = cells_shown(client.get("/game/3x3k3?position=o../.x./...").text)
    assert by_moves == written


def test_symmetric_images_are_links_to_the_same_value(client):
    response = client.get("/game/3x3k3?moves=a1")
    images = re.findall(r'<li><a href="(/game/3x3k3\?position=[^"]+)">', response.text)
    assert len(images) == 3  # a corner stone has 4 images on the square board: 3 others
    values = sorted(cells_shown(response.text).values())
    for url in images:
        page = client.get(url.replace("&amp;", "&"))
        assert sorted(cells_shown(page.text).values()) == values


def test_optimal_line_on_request(client, book_small):
    response = client.get("/game/3x3k3?moves=b2&line=1")
    assert 'id="line"' in response.text
    line = client.get("/api/games/3x3k3/mainline?moves=b2").json()
    assert len(line["moves"]) == 8  # a draw: the board fills
    assert all(step["value"] == "draw" for step in line["moves"])
    assert 'id="line"' not in client.get("/game/3x3k3?moves=b2").text


def test_value_history_chart_links_each_ply(client):
    response = client.get("/game/3x3k3?moves=b2,a1,c3")
    assert 'id="history"' in response.text
    history = response.text[response.text.index('id="history"') :]
    for ply in ("&amp;ply=0", "&amp;ply=1", "&amp;ply=2", ""):  # the same game at each ply
        assert f'<a href="/game/3x3k3?moves=b2,a1,c3{ply}"><g class="point"' in history
    at_one = client.get("/game/3x3k3?moves=b2,a1,c3&ply=1").text
    assert re.findall(r'<rect class="current"[^>]*data-ply="(\d+)"', at_one) == ["1"]


def test_finished_game_page(client):
    response = client.get("/game/3x3k3?moves=a1,a2,b1,b2,c1")
    assert response.status_code == 200
    assert "X has won" in response.text
    assert cells_shown(response.text) == {}
    # the end of a game is said plainly, not in the colour of the loser's value
    summary = re.search(r'<p id="summary" class="([^"]*)"', response.text)
    assert summary is not None and summary.group(1) == "summary"
    assert re.findall(r'class="winning-line"', response.text) == ['class="winning-line"']


def test_analysis_page_has_the_stats_tables(client, book_small):
    response = client.get("/game/3x3k3/analysis")
    assert response.status_code == 200
    with open_book(book_small) as book:
        figures = book.game(R3).figures
    assert f"{figures.reachable:,}" in response.text  # 5,478 reachable positions
    for table in ("by-ply", "outcomes", "terminal", "remoteness"):
        assert f'id="{table}"' in response.text


def test_a_position_past_the_opening_book_is_searched_live(opening_client, book_small):
    rules = Rules(3, 4, 3)
    response = opening_client.get("/game/3x4k3?moves=a1,b2,c3")
    assert response.status_code == 200
    assert "searched live: past the opening book&#39;s depth 2" in response.text
    data = opening_client.get("/api/games/3x4k3/position?moves=a1,b2,c3").json()
    assert data["source"] == "search" and data["searched_live"]
    exact = book_answer(book_small, rules, "a1,b2,c3")
    assert data["value"] == exact["value"] and data["remoteness"] == exact["remoteness"]
    assert [(m["cell"], m["value"], m["remoteness"]) for m in data["moves"]] == [
        (m["cell"], m["value"], m["remoteness"]) for m in exact["moves"]
    ]
    last_ply = opening_client.get("/api/games/3x4k3/position?moves=a1,b2").json()
    assert last_ply["source"] == "book+search"


def test_every_page_has_its_json_twin(client, book_small):
    """A page's URL with .json after the path answers the object the page is rendered from:
    the position page's answer is the API's position object, its line the API's mainline."""
    page = client.get("/game/3x3k3.json?moves=b2,a1&line=1")
    assert page.status_code == 200 and page.headers["content-type"] == "application/json"
    data = page.json()
    assert data["answer"] == client.get("/api/games/3x3k3/position?moves=b2,a1").json()
    mainline = client.get("/api/games/3x3k3/mainline?moves=b2,a1").json()
    assert data["line"] == mainline
    assert [p["ply"] for p in data["history"]["points"]] == [0, 1, 2]
    assert data["moves"] == ["b2", "a1"] and data["ply"] == 2 and data["last_move"] == "a1"
    grouped = {m["cell"]: (g["value"], m["remoteness"]) for g in data["groups"] for m in g["moves"]}
    assert grouped == {m["cell"]: (m["value"], m["remoteness"]) for m in data["answer"]["moves"]}
    html = client.get("/game/3x3k3?moves=b2,a1&line=1").text
    assert 'href="/game/3x3k3.json?moves=b2,a1&amp;line=1"' in html
    analysis = client.get("/game/3x3k3/analysis.json").json()
    assert analysis["stats"]["reachable"] == 5478
    assert analysis["stats"]["longest_win"]["url"].startswith("/game/3x3k3?position=")
    editor = client.get("/game/3x3k3/edit.json?position=x../.o./...").json()
    assert editor["legal"] and editor["explore"] == "/game/3x3k3?position=x../.o./..."
    assert client.get("/audits.json").json()["games"] == ["3x3k3", "3x4k3", "4x4k3"]
    # play answers its object too, its redirects (the agent's move) to the JSON twin
    moved = client.get("/play/3x3k3.json?agent=heuristic&side=o&seed=7", follow_redirects=False)
    assert moved.status_code == 303 and moved.headers["location"].startswith("/play/3x3k3.json?")
    game = client.get(moved.headers["location"]).json()
    assert game["to_move"] == "o" and len(game["moves"]) == 1 and game["agent"] == "heuristic"


def test_a_page_shown_at_a_ply_of_its_game(client, book_small):
    data = client.get("/game/3x3k3.json?moves=b2,a1,c3&ply=1").json()
    assert data["position"] == ".../.x./..." and data["moves"] == ["b2", "a1", "c3"]
    links = data["links"]
    assert links["back"] == "/game/3x3k3?moves=b2,a1,c3&ply=0"
    assert links["forward"] == "/game/3x3k3?moves=b2,a1,c3&ply=2"
    assert links["end"] == "/game/3x3k3?moves=b2,a1,c3"
    assert links["undo"] == "/game/3x3k3"
    # a move played there starts a new game from that point
    assert {m["url"] for g in data["groups"] for m in g["moves"]} >= {"/game/3x3k3?moves=b2,a1"}
    assert data["answer"] == book_answer(book_small, R3, "b2")
    hidden = client.get("/game/3x3k3.json?moves=b2&values=0").json()
    assert hidden["answer"] is None and hidden["groups"] == [] and hidden["history"] is None
    assert hidden["links"]["values_toggle"] == "/game/3x3k3?moves=b2"


@pytest.mark.parametrize(
    ("setup", "legal", "words"),
    [
        ("x../.o./...", True, None),
        ("xx./.../...", False, "X has 2 stones and O 0"),
        ("xxx/oo./o..", False, "O moved after X had already won"),
        ("xxx/ooo/...", False, "both players have a line"),
        ("x../.o./...&turn=o", False, "O cannot be to move"),
        ("x../.../...&turn=o", True, None),
        ("x../..", False, "has 2 rows"),
    ],
)
def test_the_editor_says_why_a_setup_is_illegal(client, setup, legal, words):
    data = client.get(f"/game/3x3k3/edit.json?position={setup}").json()
    assert data["legal"] is legal
    if words:
        assert words in data["problem"] and data["explore"] is None
    page = client.get(f"/game/3x3k3/edit?position={setup}").text
    assert ('id="explore"' in page) is legal


def test_the_editor_places_and_removes_stones_by_links(client):
    data = client.get("/game/3x3k3/edit.json?position=x../.../...&tool=o").json()
    assert data["links"]["cells"]["b2"] == "/game/3x3k3/edit?position=x../.o./...&tool=o"
    assert data["links"]["cells"]["a1"] == "/game/3x3k3/edit?position=o../.../...&tool=o"
    removed = client.get("/game/3x3k3/edit.json?position=x../.../...").json()
    assert removed["links"]["cells"]["a1"] == "/game/3x3k3/edit?position=.../.../..."


@pytest.mark.parametrize(
    ("done", "total", "seconds", "text"),
    [
        (0, 0, 0.0, "starting"),
        (0, 20088, 0.5, "0 of 20,088 (0.0%)"),
        (96, 20088, 4.0, "96 of 20,088 (0.5%), about 13 min 53 s left"),
        (10_000, 20_000, 3600.0, "10,000 of 20,000 (50.0%), about 1 h left"),
        (19_999, 20_000, 10.0, "19,999 of 20,000 (100.0%), about 1 s left"),
        (20_000, 20_000, 10.0, "20,000 of 20,000 (100.0%)"),
    ],
)
def test_an_audits_progress_in_words(done, total, seconds, text):
    from ttt_solve.web.views import progress_text

    assert progress_text(done, total, seconds) == text


# -- JSON ----------------------------------------------------------------------------------


def test_api_position_is_the_object_of_ttt_query_json(client, book_small):
    data = client.get("/api/games/3x3k3/position?moves=b2,a1").json()
    assert data == book_answer(book_small, R3, "b2,a1")
    written = client.get("/api/games/3x3k3/position?position=o../.x./...").json()
    assert written == data


def test_api_position_asked_again_is_answered_from_the_kept_bytes(client, monkeypatch):
    """A URL whose answer the book holds is answered, asked again, from the bytes the explorer
    kept under the URL's words (its position not read again), with the status, headers and
    bytes of its first answer and of any other URL of the same position."""
    explorer = client.app.state.explorer
    read = explorer.asked
    routed = []
    monkeypatch.setattr(explorer, "asked", lambda *args: routed.append(1) or read(*args))
    url = "/api/games/3x3k3/position"
    for text in ("", "?position=x../.o./...", "?position=XO-/.x.+/..o", "?position=xxx%2Foo./..."):
        first = client.get(url + text)
        assert routed, text
        routed.clear()
        in_front = client.get(url + text)
        assert not routed, text
        through_route = client.get(url + (text or "?") + "&moves=")
        assert routed, text
        routed.clear()
        assert in_front.status_code == through_route.status_code == first.status_code == 200
        assert in_front.headers == through_route.headers == first.headers
        assert in_front.content == through_route.content == first.content


def test_api_position_answers_are_kept_encoded_byte_for_byte(book_small, monkeypatch):
    """The book's answers are kept as the bytes Starlette's JSONResponse would send, in a
    bounded cache; answers searched live are not kept."""
    from starlette.responses import JSONResponse

    from ttt_solve.web import explorer as explorer_module

    monkeypatch.setattr(explorer_module, "JSON_CACHE", 5)
    with TestClient(create_app(book_small)) as small_cache:
        kept = small_cache.app.state.explorer._position_json
        for moves in ("", "b2", "b2,a1", "b2,a1,c3", "a1", "a1,b2", "c3", "b2,a1"):
            url = f"/api/games/3x3k3/position?moves={moves}"
            first, again = small_cache.get(url), small_cache.get(url)
            expected = JSONResponse(book_answer(book_small, R3, moves))
            assert first.content == again.content == expected.body, moves
            assert first.headers["content-type"] == expected.headers["content-type"]
            assert first.headers["content-length"] == expected.headers["content-length"]
        assert kept.cache_info().currsize == 5 and kept.cache_info().hits >= 8


def test_answers_searched_live_are_not_kept(opening_client):
    kept = opening_client.app.state.explorer._position_json
    before = kept.cache_info().currsize
    for _ in range(2):
        data = opening_client.get("/api/games/3x4k3/position?moves=a1,b2,c3").json()
        assert data["source"] == "search"
    assert kept.cache_info().currsize == before


def test_api_games_and_game(client):
    games = client.get("/api/games").json()
    assert [g["name"] for g in games] == ["3x3k3", "3x4k3", "4x4k3"]
    one = client.get("/api/games/3x3k3").json()
    assert one["value_for_x"] == "draw" and one["remoteness"] == 9
    assert one["reachable"] == 5478
    assert sum(one["figures"]["by_ply"]["reachable"].values()) == 5478


# -- the universal API (GamesmanUni) ---------------------------------------------------------


def test_uwapi_routes(client, book_small):
    assert client.get("/uwapi/").json()[0]["id"] == "mnk"
    variants = client.get("/uwapi/mnk/").json()["variants"]
    assert [v["id"] for v in variants] == ["3x3k3", "3x4k3", "4x4k3"]
    variant = client.get("/uwapi/mnk/3x3k3/").json()
    assert variant["startPosition"] == "1_---------"
    assert len(variant["imageAutoGUIData"]["themes"]["regular"]["centers"]) == 9
    data = client.get("/uwapi/mnk/3x3k3/positions/?p=2_----x----").json()
    expected = book_answer(book_small, R3, "b2")
    assert data["positionValue"] == "tie" and data["remoteness"] == expected["remoteness"]
    by_cell = {m["move"]: m for m in data["moves"]}
    for move in expected["moves"]:
        got = by_cell[move["cell"]]
        assert got["moveValue"] == {"win": "win", "draw": "tie", "loss": "lose"}[move["value"]]
        assert got["remoteness"] == move["remoteness"] - 1  # the child's own remoteness
    # a corner reply keeps the draw; an edge reply loses: its delta is against the slowest loss
    assert by_cell["a1"]["moveValue"] == "tie" and by_cell["a1"]["positionValue"] == "tie"
    assert by_cell["b1"]["moveValue"] == "lose" and by_cell["b1"]["positionValue"] == "win"
    losses = [m for m in data["moves"] if m["moveValue"] == "lose"]
    slowest = max(m["remoteness"] for m in losses)
    assert all(m["deltaRemoteness"] == slowest - m["remoteness"] for m in losses)
    assert client.get("/uwapi/mnk/3x3k3/positions/?p=o../.x./...").json()["positionValue"] == "tie"


def test_uwapi_instructions_in_the_shape_of_gamescrafters_server(client):
    for locale in ("", "?locale=en-US", "?locale=es"):  # English for every locale
        data = client.get(f"/uwapi/mnk/4x4k3/instructions/{locale}").json()
        assert list(data) == ["instructions"]
        text = data["instructions"]
        assert text.startswith("# 4x4, 3 in a row\n")
        for heading in ("## The Board", "## The Pieces", "## Rules", "**To Move:**", "**To Win:**"):
            assert heading in text
        assert "won by X in 5 moves" in text  # the book's value of 4x4 k=3
    assert client.get("/uwapi/mnk/9x9k9/instructions/").status_code == 404


def grid_lines(theme: dict, position: str) -> set[tuple[str, float, float, float]]:
    """The lines the grid pieces of an AutoGUI position draw, in cell units: ("v", x, y0, y1)
    and ("h", y, x0, x1) of each copy of the 3x3 grid image, clipped to the board."""
    cols, rows = theme["space"]
    drawn = set()
    board = position.split("_", 1)[1]
    for char, (cx, cy) in zip(board, theme["centers"]):
        if char != "g":
            continue
        scale = theme["charImages"]["g"]["scale"]
        for offset in (-scale / 6, scale / 6):  # the image's lines: at 22 and 44 of 66
            drawn.add(("v", cx + offset, max(0, cy - scale / 2), min(rows, cy + scale / 2)))
            drawn.add(("h", cy + offset, max(0, cx - scale / 2), min(cols, cx + scale / 2)))
    return drawn


@pytest.mark.parametrize("variant", ["3x3k3", "3x4k3", "4x4k3"])
def test_uwapi_draws_the_tic_tac_toe_grid_on_every_board(client, variant):
    data = client.get(f"/uwapi/mnk/{variant}/").json()
    rows, cols = (int(n) for n in variant.split("k")[0].split("x"))
    theme = data["imageAutoGUIData"]["themes"][data["imageAutoGUIData"]["defaultTheme"]]
    assert theme["charImages"]["x"]["image"] == "ttt/x.svg"
    assert theme["charImages"]["o"]["image"] == "ttt/o.svg"
    assert data["startPosition"] == "1_" + "-" * rows * cols
    if (rows, cols) == (3, 3):
        assert theme["background"] == "ttt/3x3grid.svg"
        assert data["autoguiStartPosition"] == data["startPosition"]
        return
    # elsewhere copies of the grid image, together, draw exactly the lines between the cells
    lines = grid_lines(theme, data["autoguiStartPosition"])
    vertical = {(x, y0, y1) for kind, x, y0, y1 in lines if kind == "v"}
    horizontal = {(y, x0, x1) for kind, y, x0, x1 in lines if kind == "h"}
    assert {x for x, _, _ in vertical} == set(range(1, cols))
    assert {y for y, _, _ in horizontal} == set(range(1, rows))
    for x in range(1, cols):
        spans = sorted((y0, y1) for at, y0, y1 in vertical if at == x)
        assert spans[0][0] == 0 and spans[-1][1] == rows
        assert all(a[1] >= b[0] for a, b in zip(spans, spans[1:]))  # no gap
    for y in range(1, rows):
        spans = sorted((x0, x1) for at, x0, x1 in horizontal if at == y)
        assert spans[0][0] == 0 and spans[-1][1] == cols
        assert all(a[1] >= b[0] for a, b in zip(spans, spans[1:]))
    position = client.get(f"/uwapi/mnk/{variant}/positions/?p={data['startPosition']}").json()
    assert position["position"] == data["startPosition"]
    assert position["autoguiPosition"] == data["autoguiStartPosition"]
    child = position["moves"][0]
    assert child["autoguiPosition"].startswith(child["position"])


def test_uwapi_may_be_read_by_pages_of_other_origins(client):
    origin = {"Origin": "http://localhost:3000"}  # a GamesmanUni served elsewhere
    assert client.get("/uwapi/", headers=origin).headers["access-control-allow-origin"] == "*"
    errors = client.get("/uwapi/mnk/3x3k3/positions/?p=x", headers=origin)
    assert errors.status_code == 400 and errors.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-origin" not in client.get("/api/games", headers=origin).headers


def test_uwapi_bad_input(client):
    assert client.get("/uwapi/chess/").status_code == 404
    assert client.get("/uwapi/mnk/9x9k9/").status_code == 404
    for bad in ("1_----x----", "2_---", "?", ""):
        response = client.get(f"/uwapi/mnk/3x3k3/positions/?p={bad}")
        assert response.status_code == 400, bad
        assert "\n" not in response.json()["error"]


# -- bad input -----------------------------------------------------------------------------


BAD = """
404  /game/5x5k4                                  holds no 5x5 k=4   # a game the book does not hold
404  /game/chess                                  not a game name
404  /game/99x99k3                                not supported
400  /game/3x3k3?moves=b2,b2                      b2                 # an illegal move
400  /game/3x3k3?moves=z9                         off the 3x3 board
400  /game/3x3k3?moves=b2,,,%%                    not a cell
400  /game/3x3k3?position=xx                      has 2 cells        # a malformed position
400  /game/3x3k3?position=xxx/.../...             not legal
400  /game/3x3k3?position=                        empty
400  /game/3x3k3?moves=a1,a2,b1,b2,c1,c2          game is over
400  /game/3x3k3?mark=q7                          q7
200  /game/3x3k3/analysis?
404  /game/4x4k9/analysis                         impossible
400  /play/3x3k3?agent=nonsense&seed=1            unknown agent      # a spec that does not parse
400  /play/3x3k3?agent=mcts:iterations=x&seed=1   whole number
400  /play/3x3k3?agent=cmd:ls&seed=1              outside the project  # never run a command
400  /play/3x3k3?agent=py:os:system&seed=1        outside the project
400  /play/3x3k3?side=z&seed=1                    side
400  /play/3x3k3?seed=abc                         whole number
404  /audits/999                                  no audit
404  /audits/abc                                  no audit
404  /nowhere                                     Not Found
400  /game/3x3k3?moves=b2,a1&ply=3                ply 3 is out of range
400  /game/3x3k3?moves=b2&ply=x                   not a whole number
400  /game/3x3k3?audit=abc                        is not a whole number
400  /game/3x3k3?side=z                           side
400  /game/3x3k3/edit?tool=z                      tool
400  /game/3x3k3/edit?turn=q                      turn
404  /game/9x9k9/edit                             holds no 9x9 k=9
200  /game/3x3k3/edit?position=zz
"""
"""Bad input and its answer, a line each: the status, the URL, then words of the message (the
rest of the line up to a ``#`` note)."""


def bad_input_rows(table: str) -> list[tuple[str, int, str]]:
    """(url, status, words) of each line of a table like :data:`BAD`."""
    rows = []
    for line in table.strip().splitlines():
        status, url, *words = line.split("#")[0].split(maxsplit=2)
        rows.append((url, int(status), " ".join(words).strip()))
    return rows


@pytest.mark.parametrize(("url", "status", "words"), bad_input_rows(BAD))
def test_bad_input_is_a_4xx_page_with_one_line(client, url, status, words):
    response = client.get(url, follow_redirects=False)
    assert response.status_code == status
    if status != 200:
        message = re.search(r'<p class="error" id="error">(.*?)</p>', response.text, re.S)
        assert message is not None and words in message.group(1)
        assert "\n" not in message.group(1) and "Traceback" not in response.text


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("/api/games/5x5k4/position", 404),
        ("/api/games/3x3k3/position?moves=b2,b2", 400),
        ("/api/games/3x3k3/position?position=x", 400),
        ("/api/games/3x3k3/mainline?moves=q", 400),
        ("/api/audits/12345", 404),
        ("/api/nowhere", 404),
        # the pages' .json twins answer their errors as JSON too
        ("/game/3x3k3.json?moves=zz", 400),
        ("/game/9x9k9.json", 404),
        ("/game/3x3k3/edit.json?tool=z", 400),
        ("/audits/999.json", 404),
        ("/play/3x3k3.json?agent=bogus&seed=1", 400),
    ],
)
def test_bad_input_is_a_4xx_json_with_one_line(client, url, status):
    response = client.get(url)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.json()["status"] == status and "\n" not in response.json()["error"]


def test_what_a_user_typed_is_escaped(client):
    attack = "<script>alert(1)</script>"
    for url in (f"/game/3x3k3?position={attack}", f"/play/3x3k3?seed=1&agent={attack}"):
        response = client.get(url)
        assert response.status_code == 400
        assert "<script>alert" not in response.text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text
    assert "<script>alert" not in client.get(f"/game/{attack}").text


def test_overlong_parameters_are_refused(client):
    response = client.get("/api/games/3x3k3/position?moves=" + "a1," * 1000)
    assert response.status_code == 400 and "longer than" in response.json()["error"]


def test_a_book_that_cannot_be_opened(tmp_path):
    app = create_app(str(tmp_path / "missing.sqlite"))
    with pytest.raises(Exception, match="no book at"):
        with TestClient(app):
            pass


def test_the_book_is_opened_read_only(book_small, client):
    book = client.app.state.explorer.book
    with pytest.raises(Exception, match="readonly"):
        book._rows.connection.execute("DELETE FROM games")


def test_busy_live_searches_are_refused_with_429(opening_book):
    with served(create_app(opening_book, Limits(max_searches=1))) as client:
        workers = client.app.state.explorer.workers
        slow = workers.submit(
            "move", "mcts:iterations=100000", 0, Position.start(Rules(3, 4, 3)), what="a move"
        )
        try:  # the one worker is taken
            response = client.get("/api/games/3x4k3/position?moves=a1,b2,c3")
            assert response.status_code == 429 and response.headers["retry-after"]
            assert "busy" in response.json()["error"]
            twin = client.get("/game/3x4k3.json?moves=a1,b2,c3")  # a page's twin: JSON too
            assert twin.status_code == 429 and twin.headers["retry-after"]
            assert "busy" in twin.json()["error"]
            page = client.get("/game/3x4k3?moves=a1,b2,c3")
            assert page.status_code == 429 and page.headers["content-type"].startswith("text/html")
            assert client.get("/api/games/3x4k3/position?moves=a1").status_code == 200
        finally:
            slow.result(60)


# -- audits --------------------------------------------------------------------------------


def wait_for(client, job_id: int, seconds: float = 60) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        data = client.get(f"/api/audits/{job_id}").json()
        if data["status"] != "running":
            return data
        time.sleep(0.1)
    raise AssertionError("the audit did not finish")


def test_audit_through_the_form_and_its_page(client):
    response = client.post(
        "/audits",
        content="game=3x3k3&agent=heuristic&mode=positions&sample=&seed=0",
        headers={"content-type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert response.status_code == 303
    job_id = int(response.headers["location"].rsplit("/", 1)[1])
    data = wait_for(client, job_id)
    assert data["status"] == "done"
    result = data["result"]
    assert 0 < result["accuracy"] < 1 and result["perfection"] <= result["accuracy"]
    assert sum(result["blunder_kinds"].values()) == result["blunders"]
    page = client.get(f"/audits/{job_id}").text
    assert f"{100 * result['accuracy']:.2f}%" in page
    worst = re.findall(r'class="worst-link" href="([^"]+)"', page)
    assert worst and all("mark=" in url for url in worst)
    assert client.get(worst[0].replace("&amp;", "&")).status_code == 200
    assert f'href="/audits/{job_id}"' in client.get("/audits").text


def test_audit_api_games_mode_matches_the_library(client, book_small):
    from ttt_solve.agents.audit import Truth, summarize
    from ttt_solve.agents.grading import audit_games
    from ttt_solve.agents.parallel import AgentMaker

    body = {
        "game": "3x3k3",
        "agent": "heuristic",
        "mode": "games",
        "games": 6,
        "opponent": "random",
        "seed": 3,
    }
    started = client.post("/api/audits", json=body)
    assert started.status_code == 202
    data = wait_for(client, started.json()["id"])
    with open_book(book_small) as book:
        records, ungraded, _, _ = audit_games(
            AgentMaker("heuristic"), AgentMaker("random"), Truth(book, R3), games=6, seed=3, jobs=1
        )
    summary = summarize(records, ungraded)
    assert data["result"]["accuracy"] == summary.accuracy
    assert data["result"]["moves"] == summary.moves
    assert len(data["result"]["games"]) == 6


def test_an_audit_page_lists_every_costly_move_and_every_game(client, book_small):
    """Games mode: the won/drawn/lost table as X and as O, every game with the agent's
    blunders and a replay link, and every move that was not best, one row per position and
    move with how often, a page at a time."""
    from ttt_solve.agents.audit import Truth, grade_game

    body = {"game": "3x3k3", "agent": "random", "mode": "games", "games": 60, "seed": 1}
    job = client.post("/api/audits", json=body).json()["id"]
    data = wait_for(client, job)
    games = data["result"]["games"]
    page = client.get(f"/audits/{job}.json").json()
    table = page["games"]["table"]
    for side in ("x", "o"):
        played = [g for g in games if g["agent_side"] == side]
        for outcome in ("win", "draw", "loss"):
            assert table[side][outcome] == sum(g["outcome"] == outcome for g in played)
    costly: dict[tuple[str, str], int] = {}
    blunders = []
    with open_book(book_small) as book:
        truth = Truth(book, R3)
        for game in games:
            moves = [R3.parse_cell(m) for m in game["moves"]]
            graded, _ = grade_game(truth, R3, moves, game["agent_side"])
            blunders.append(sum(r.grade.value == "blunder" for r in graded))
            for r in graded:
                if r.grade.value != "best":
                    key = (str(r.position), R3.cell_name(r.cell))
                    costly[key] = costly.get(key, 0) + 1
    rows, number = [], 1
    while True:
        shown = client.get(f"/audits/{job}.json?costly={number}").json()["costly"]
        rows += shown["rows"]
        if number == shown["pages"]:
            break
        number += 1
    assert number > 1 and page["costly"]["all"]
    assert {(r["position"], r["move"]): r["count"] for r in rows} == costly
    assert [r["grade"] for r in rows] == sorted((r["grade"] for r in rows), key="blunder".__ne__)
    listed = (
        page["games"]["rows"] + client.get(f"/audits/{job}.json?games=2").json()["games"]["rows"]
    )
    assert [g["blunders"] for g in listed] == blunders
    assert [g["moves"] for g in listed] == [g["moves"] for g in games]
    first = listed[0]
    assert first["url"] == (
        f"/game/3x3k3?moves={','.join(first['moves'])}&ply=0&audit={job}&game=1&side=x"
    )
    html = client.get(f"/audits/{job}?costly=2").text
    assert html.count('class="worst-link"') == len(
        client.get(f"/audits/{job}.json?costly=2").json()["costly"]["rows"]
    )


def test_a_positions_audit_page_lists_every_costly_position(client, book_small):
    """Positions mode: every position where the agent did not play a best move, one row each
    with the reachable positions it stands for, a page at a time (not only the worst few)."""
    from ttt_solve.agents.audit import Truth
    from ttt_solve.agents.grading import audit_positions
    from ttt_solve.agents.parallel import AgentMaker

    body = {"game": "3x3k3", "agent": "random", "mode": "positions", "seed": 4}
    job = client.post("/api/audits", json=body).json()["id"]
    assert wait_for(client, job)["status"] == "done"
    with open_book(book_small) as book:
        records, _, _ = audit_positions(AgentMaker("random"), Truth(book, R3), seed=4, jobs=1)
    expected = {
        (str(r.position), R3.cell_name(r.cell)): r.weight
        for r in records
        if r.grade.value != "best"
    }
    rows, number = [], 1
    while True:
        shown = client.get(f"/audits/{job}.json?costly={number}").json()["costly"]
        rows += shown["rows"]
        if number == shown["pages"]:
            break
        number += 1
    assert shown["all"] and shown["count"] == len(expected) > 100
    assert {(r["position"], r["move"]): r["count"] for r in rows} == expected
    assert [r["grade"] for r in rows] == sorted((r["grade"] for r in rows), key="blunder".__ne__)
    html = client.get(f"/audits/{job}?costly={number}").text
    assert html.count('class="worst-link"') == len(shown["rows"]) > 0
    assert f"page {number} of {number}" in html


@pytest.mark.parametrize(
    "body",
    [
        {"game": "3x3k3", "agent": "bogus"},
        {"game": "3x3k3", "agent": "cmd:rm -rf /"},
        {"game": "3x3k3", "agent": "heuristic", "mode": "sideways"},
        {"game": "3x3k3", "agent": "heuristic", "sample": "0"},
        {"game": "3x3k3", "agent": "heuristic", "mode": "games", "opponent": "nope"},
        {"game": "7x7k7", "agent": "heuristic"},
    ],
)
def test_audit_bad_requests(client, body):
    response = client.post("/api/audits", json=body)
    assert 400 <= response.status_code < 500
    assert "\n" not in response.json()["error"]
    assert client.post("/api/audits", content=b"not json").status_code == 400


def test_audits_are_bounded_in_number_and_time(book_small):
    limits = Limits(max_audits=1, audit_seconds=0.05)
    with served(create_app(book_small, limits)) as client:
        first = client.post("/api/audits", json={"game": "4x4k3", "agent": "mcts:iterations=200"})
        second = client.post("/api/audits", json={"game": "3x3k3", "agent": "random"})
        assert first.status_code == 202
        assert second.status_code == 429
        data = wait_for(client, first.json()["id"])
        assert data["status"] == "failed" and "limit" in data["error"]


# -- play ----------------------------------------------------------------------------------


def test_play_a_game_to_the_end_and_see_it_graded(client):
    response = client.get("/play/3x3k3?agent=random&side=x", follow_redirects=False)
    assert response.status_code == 303 and "seed=" in response.headers["location"]
    url = response.headers["location"]
    for _ in range(9):
        page = client.get(url)
        assert page.status_code == 200
        if 'id="result"' in page.text:
            break
        cells = re.findall(r'<a href="(/play/3x3k3\?[^"]+)"><g class="cell', page.text)
        url = cells[0].replace("&amp;", "&")  # the first free cell
    assert 'id="result"' in page.text and 'id="graded"' in page.text
    assert "Accuracy" in page.text


def test_play_as_o_the_agent_moves_first_and_the_same_url_gives_the_same_move(client):
    first = client.get("/play/3x3k3?agent=heuristic&side=o&seed=7", follow_redirects=False)
    again = client.get("/play/3x3k3?agent=heuristic&side=o&seed=7", follow_redirects=False)
    assert first.status_code == 303
    assert first.headers["location"] == again.headers["location"]
    assert "moves=" in first.headers["location"]


def test_perfect_plays_in_the_book_as_the_agent_does(client):
    """The server answers the perfect agent's move from the book itself (no worker): the
    same move as the agent's, drawn by the same seeded generator."""
    import random

    from tests.support import random_walk
    from ttt_solve.agents.match import derive_seed
    from ttt_solve.agents.spec import make_agent

    explorer = client.app.state.explorer
    rng = random.Random(5)
    for seed in range(40):
        position = random_walk(R3, rng, rng.randrange(8))
        if position.is_terminal:
            continue
        agent = make_agent(
            "perfect", random.Random(derive_seed(seed, "ply", position.ply)), explorer.book
        )
        assert explorer.agent_move("perfect", seed, position) == agent.select_move(position)


@pytest.mark.parametrize("spec", ["perfect:error=0.5", "perfect:temperature=2"])
def test_graded_perfect_plays_in_the_book_as_the_agent_does(client, spec):
    """perfect's kinds that err on purpose move in the server as the agent does: not a best
    move each time."""
    import random

    from tests.support import random_walk
    from ttt_solve.agents.seeded import move_rng
    from ttt_solve.agents.spec import make_agent

    explorer = client.app.state.explorer
    rng = random.Random(6)
    not_best = 0
    for seed in range(60):
        position = random_walk(R3, rng, rng.randrange(7))
        if position.is_terminal:
            continue
        agent = make_agent(spec, move_rng(seed, position.ply), explorer.book)
        move = explorer.agent_move(spec, seed, position)
        assert move == agent.select_move(position), (spec, seed, position)
        not_best += move not in explorer.analyse(position).best_moves
    assert not_best > 0


def test_a_book_on_either_backend_is_served_read_only(book_db):
    from tests.pg_support import solve_into

    solve_into(book_db, R3)
    with TestClient(create_app(book_db)) as client:
        data = client.get("/api/games/3x3k3/position?moves=b2,a1").json()
        assert data == book_answer(book_db, R3, "b2,a1")
        book = client.app.state.explorer.book
        if book_db.startswith("postgresql"):
            import sqlalchemy as sa

            with pytest.raises(sa.exc.DBAPIError, match="read-only"):
                with book.engine.connect() as conn:
                    conn.exec_driver_sql("DELETE FROM games")
        else:
            with pytest.raises(Exception, match="readonly"):
                book._rows.connection.execute("DELETE FROM games")


def test_a_hint_where_every_move_is_best_says_so(client):
    """At the start of 3x3 every move keeps the draw in 9: the hint says any move is best
    rather than listing the nine; where a few are best, it names them."""
    every = client.get("/play/3x3k3?agent=random&side=x&seed=1&hint=1")
    assert "every move is best here" in every.text
    assert client.get("/play/3x3k3.json?agent=random&side=x&seed=1&hint=1").json()[
        "hint_every_move"
    ]
    some = client.get("/play/3x3k3?agent=random&side=x&seed=1&moves=b2,b1&hint=1")
    assert "every move is best here" not in some.text and "Hint: " in some.text
