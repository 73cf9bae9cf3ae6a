"""ttt serve in a real browser: headless Chromium (Debian's chromium and chromium-driver, at
/usr/bin/chromium and /usr/bin/chromedriver), driven through selenium, against a server on
loopback over a book of 3x3, 4x4 k=3 and an opening book of 6x6 k=6.

What a reader sees is checked as the browser lays it out: cells of equal size with centred
labels, the colours of cells, value-history points and chart series against the book and the
palette, no page wider than a phone, the editor, the keys, an audit's games replayed, play.
Skipped, with the reason, where Chromium, its driver or selenium is not installed. Set
TTT_WEB_SCREENSHOTS to a folder to keep the screenshots (the documentation's come from here).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
import urllib.request
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")

from click.testing import CliRunner  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from tests.pg_support import solve_into  # noqa: E402
from ttt_solve.agents.audit import Truth, grade_move  # noqa: E402
from ttt_solve.book.oracle import Oracle  # noqa: E402
from ttt_solve.book.query import parse_query  # noqa: E402
from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.book.writer import write_game  # noqa: E402
from ttt_solve.cli.main import ttt  # noqa: E402
from ttt_solve.presentation.palette import SERIES, VALUES  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.prover.opening import OpeningBookBuilder  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
pytestmark = pytest.mark.skipif(
    not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)),
    reason=f"no headless Chromium at {CHROMIUM} with {DRIVER}: "
    "apt-get install chromium chromium-driver",
)

R3 = Rules(3, 3, 3)
LETTERS = {"win": "W", "draw": "D", "loss": "L"}
PHONES = (360, 400)
DESKTOP = (1280, 900)


def rgb(colour: str) -> str:
    """``#009e73`` as the browser computes it: ``rgb(0, 158, 115)``."""
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({red}, {green}, {blue})"


FILLS = {rgb(colours.fill): outcome.value for outcome, colours in VALUES.items()}
"""The palette's value fills, as the browser computes them, to the value each stands for."""


def opaque(colour: str) -> str:
    """A colour as selenium reads a CSS property (``rgba(0, 158, 115, 1)``) written as the
    browser computes an SVG fill (``rgb(0, 158, 115)``)."""
    if colour.startswith("rgba(") and colour.endswith(", 1)"):
        return "rgb(" + colour[5:-4] + ")"
    return colour


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    """A book of 3x3 and 4x4 k=3 (solved) and 6x6 k=6 (an opening book to ply 1), with a
    ladder of 3x3 played and an agent rated on it."""
    db = str(tmp_path_factory.mktemp("browser-books") / "books.sqlite")
    solve_into(db, R3)
    solve_into(db, Rules(4, 4, 3))
    six = Rules(6, 6, 6)
    with open_book(db) as book:
        write_game(book, six, OpeningBookBuilder(six, 1).solve(), method="alphabeta", book_depth=1)
    rated = CliRunner().invoke(
        ttt, ["rate", "--db", db, "--games", "2", "--agent", "heuristic", "-q"]
    )
    assert rated.exit_code == 0, rated.output  # 3x3's ladder, for its ratings page
    return db


@pytest.fixture(scope="module")
def server(books):
    import uvicorn

    from ttt_solve.web.app import create_app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = create_app(books)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    app_server = uvicorn.Server(config)
    thread = threading.Thread(target=app_server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not app_server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    for pool in app.state.workers:  # live searches, agent moves and audits run in them
        assert pool.wait_ready(120), "the worker processes did not start"
    yield f"http://127.0.0.1:{port}"
    app_server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    driver.implicitly_wait(5)
    driver.set_window_size(*DESKTOP)
    yield driver
    driver.quit()


@pytest.fixture
def desktop(browser):
    browser.set_window_size(*DESKTOP)
    return browser


def screenshot(driver, name: str, tmp_path, element=None, height: int | None = None) -> None:
    """The window (``height`` pixels of the page, or one element) as ``name``, kept where
    TTT_WEB_SCREENSHOTS says."""
    size = driver.get_window_size()
    try:
        if height:
            chrome = size["height"] - driver.execute_script("return window.innerHeight")
            driver.set_window_size(size["width"], height + chrome)
        if element is None:
            driver.save_screenshot(str(tmp_path / name))
        else:
            driver.execute_script("arguments[0].scrollIntoView();", element)
            element.screenshot(str(tmp_path / name))
    finally:
        driver.set_window_size(size["width"], size["height"])
    folder = os.environ.get("TTT_WEB_SCREENSHOTS")
    if folder:
        shutil.copy(tmp_path / name, os.path.join(folder, name))


def book_moves(db: str, moves: str, rules: Rules = R3) -> dict[str, tuple[str, int]]:
    with open_book(db) as book:
        analysis = Oracle(rules, book).analyse(parse_query(rules, None, moves))
    return {m.name: (m.value.outcome.value, m.value.remoteness) for m in analysis.moves}


def board_shown(driver) -> dict[str, tuple[str, int]]:
    """Each empty cell's value as the browser draws it: its colour, and its label (D7)."""
    shown = {}
    for cell in driver.find_elements(By.CSS_SELECTOR, "#board g.cell.move"):
        rect = cell.find_element(By.TAG_NAME, "rect")
        value = FILLS[rect.value_of_css_property("fill")]
        label = cell.find_element(By.TAG_NAME, "text").text
        name = cell.get_attribute("data-cell")
        assert label[0] == LETTERS[value], f"{name}: {label} on {value}"
        assert cell.get_attribute("data-value") == value
        shown[name] = (value, int(label[1:]))
    return shown


def click_cell(driver, name: str) -> None:
    driver.find_element(By.CSS_SELECTOR, f'#board g.cell[data-cell="{name}"]').click()


def stones_shown(driver) -> dict[str, str]:
    return {
        cell.get_attribute("data-cell"): cell.get_attribute("data-stone")
        for cell in driver.find_elements(By.CSS_SELECTOR, "#board g.cell.stone")
    }


def ply_of(url: str) -> str | None:
    values = parse_qs(urlsplit(url).query).get("ply")
    return values[0] if values else None


def no_horizontal_scroll(driver) -> tuple[int, int]:
    return driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")


# -- the board ---------------------------------------------------------------------------------


def test_explore_by_clicking_and_the_browser_history(server, desktop, books, tmp_path):
    browser = desktop
    browser.get(server + "/game/3x3k3")
    assert board_shown(browser) == book_moves(books, "")
    click_cell(browser, "b2")
    assert browser.current_url.endswith("/game/3x3k3?moves=b2")
    assert board_shown(browser) == book_moves(books, "b2")
    click_cell(browser, "b1")  # an edge reply loses for O
    assert browser.current_url.endswith("?moves=b2,b1")
    shown = board_shown(browser)
    assert shown == book_moves(books, "b2,b1")
    assert "win" in {value for value, _ in shown.values()}
    summary = browser.find_element(By.ID, "summary")
    assert summary.get_attribute("data-value") == "win"  # X to move wins after O's edge
    last = browser.find_element(By.CSS_SELECTOR, "#board g.cell.last")
    assert last.get_attribute("data-cell") == "b1"
    browser.back()
    assert browser.current_url.endswith("?moves=b2")
    assert board_shown(browser) == book_moves(books, "b2")
    browser.forward()
    assert browser.current_url.endswith("?moves=b2,b1")
    browser.find_element(By.ID, "undo").click()
    assert browser.current_url.endswith("?moves=b2")


def test_moves_are_grouped_by_value_as_the_book_says(server, desktop, books):
    browser = desktop
    for moves, values in (("b2", ["draw", "loss"]), ("b2,b1", ["win", "draw"])):
        browser.get(server + "/game/3x3k3?moves=" + moves)
        grouped = {}
        groups = browser.find_elements(By.CSS_SELECTOR, "section.group")
        assert [g.get_attribute("id").removeprefix("moves-") for g in groups] == values
        for group, value in zip(groups, values):
            chips = group.find_elements(By.CSS_SELECTOR, "a.chip")
            remoteness = [int(chip.get_attribute("data-remoteness")) for chip in chips]
            # best first within the group: fastest win, slowest loss
            assert remoteness == sorted(remoteness, reverse=value == "loss")
            for chip, r in zip(chips, remoteness):
                assert FILLS[opaque(chip.value_of_css_property("background-color"))] == value
                grouped[chip.get_attribute("data-move")] = (value, r)
        assert grouped == book_moves(books, moves)


@pytest.mark.parametrize(
    ("game", "moves"),
    [("3x3k3", "b2,a1,c3"), ("4x4k3", "b2,a1"), ("6x6k6", "c3")],
)
def test_cells_are_equal_and_labels_centred(server, browser, game, moves):
    """Every cell, stone or not, is the same size within 2 px (on a desktop and a phone),
    and its label or stone sits in its middle."""
    for width in (DESKTOP[0], *PHONES):
        browser.set_window_size(width, 900)
        browser.get(f"{server}/game/{game}?moves={moves}")
        boxes = browser.execute_script(
            """
            return [...document.querySelectorAll('#board g.cell')].map(cell => {
              const box = cell.querySelector('rect').getBoundingClientRect();
              const mark = cell.querySelector('text, path, circle');
              const inner = mark ? mark.getBoundingClientRect() : null;
              return {
                cell: cell.dataset.cell, stone: cell.dataset.stone || null,
                width: box.width, height: box.height, right: box.right,
                cx: box.left + box.width / 2, cy: box.top + box.height / 2,
                mx: inner && inner.left + inner.width / 2,
                my: inner && inner.top + inner.height / 2,
              };
            });"""
        )
        rows, cols = (int(n) for n in game.split("k")[0].split("x"))
        assert len(boxes) == rows * cols
        sides = [b["width"] for b in boxes] + [b["height"] for b in boxes]
        assert max(sides) - min(sides) <= 2, (game, width, sides)
        assert {b["stone"] for b in boxes} >= {None, "x"}  # stones and empty cells alike
        inner_width = browser.execute_script("return window.innerWidth")
        assert max(b["right"] for b in boxes) <= inner_width, (game, width)
        for box in boxes:
            if box["mx"] is not None:
                assert abs(box["mx"] - box["cx"]) <= 2 and abs(box["my"] - box["cy"]) <= 2, box


def test_a_screen_reader_reaches_each_linked_cell_by_its_name(server, desktop, books):
    """A board whose cells are links is a group, not one image (whose parts a screen reader
    would not enter): each link is exposed as a link named by its cell and value; so are the
    value history's points. A board without links stays one image."""
    browser = desktop
    browser.get(server + "/game/3x3k3?moves=b2,a1")
    board = browser.find_element(By.CSS_SELECTOR, "#board svg")
    assert board.aria_role == "group" and "3x3" in board.accessible_name
    links = browser.find_elements(By.CSS_SELECTOR, "#board svg a")
    values = book_moves(books, "b2,a1")
    assert len(links) == len(values) == 7
    for link in links:
        cell = link.find_element(By.CSS_SELECTOR, "g.cell").get_attribute("data-cell")
        value, remoteness = values[cell]
        assert link.aria_role == "link"
        assert link.accessible_name.startswith(f"{cell}: {value} in {remoteness}"), cell
    stone = browser.find_element(By.CSS_SELECTOR, '#board g.cell[data-cell="b2"]')
    assert stone.aria_role == "image" and stone.accessible_name == "b2: X"
    history = browser.find_element(By.CSS_SELECTOR, "#history svg")
    assert history.aria_role == "group"
    points = browser.find_elements(By.CSS_SELECTOR, "#history svg a")
    assert [p.aria_role for p in points] == ["link"] * 3
    assert points[1].accessible_name.startswith("ply 1, after b2: O to move")
    browser.get(server + "/play/3x3k3?agent=random&side=x&seed=1&moves=b2,a1")
    names = [a.accessible_name for a in browser.find_elements(By.CSS_SELECTOR, "#board svg a")]
    assert sorted(names) == ["a2", "a3", "b1", "b3", "c1", "c2", "c3"]
    browser.get(server + "/game/3x3k3?moves=b2,a1,c3,a3,a2,c1,b1,b3,c2")  # over: no links
    board = browser.find_element(By.CSS_SELECTOR, "#board svg")
    assert board.aria_role == "image" and not board.find_elements(By.TAG_NAME, "a")


def test_hide_values_keeps_the_board_playable(server, desktop):
    browser = desktop
    browser.get(server + "/game/3x3k3?moves=b2")
    browser.find_element(By.ID, "values-toggle").click()
    assert "values=0" in browser.current_url
    assert not browser.find_elements(By.CSS_SELECTOR, "#board g.cell[data-value]")
    assert not browser.find_elements(By.CSS_SELECTOR, "section.group, #history")
    assert browser.find_element(By.ID, "summary").get_attribute("data-value") is None
    click_cell(browser, "a1")
    assert "moves=b2,a1" in browser.current_url and "values=0" in browser.current_url
    assert not browser.find_elements(By.CSS_SELECTOR, "#board g.cell[data-value]")
    browser.find_element(By.ID, "values-toggle").click()
    assert browser.find_elements(By.CSS_SELECTOR, "#board g.cell[data-value]")


def test_the_optimal_line_is_drawn_on_the_board(server, desktop, tmp_path):
    browser = desktop
    browser.get(server + "/game/3x3k3?moves=b2,b1,a1")
    browser.find_element(By.ID, "show-line").click()
    line = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#line a")]
    numbered = {
        int(cell.get_attribute("data-number")): cell.get_attribute("data-cell")
        for cell in browser.find_elements(By.CSS_SELECTOR, "#board g.cell[data-number]")
    }
    assert line and [numbered[i + 1] for i in range(len(line))] == line
    screenshot(browser, "web-position.png", tmp_path, height=1000)


def test_keys_walk_through_the_game(server, desktop):
    browser = desktop
    browser.get(server + "/game/3x3k3?moves=b2,a1,c3")

    def press(key: str, ends: str) -> None:
        browser.find_element(By.TAG_NAME, "body").send_keys(key)
        WebDriverWait(browser, 10).until(lambda d: d.current_url.endswith(ends))

    press(Keys.ARROW_LEFT, "moves=b2,a1,c3&ply=2")
    assert stones_shown(browser) == {"b2": "x", "a1": "o"}
    press(Keys.ARROW_LEFT, "&ply=1")
    press(Keys.ARROW_RIGHT, "&ply=2")
    press(Keys.HOME, "&ply=0")
    assert stones_shown(browser) == {}
    press(Keys.END, "moves=b2,a1,c3")
    assert stones_shown(browser) == {"b2": "x", "a1": "o", "c3": "x"}
    press("u", "moves=b2,a1")


# -- colours against the book and the palette ---------------------------------------------------


def test_value_history_points_and_rings(server, desktop, books, tmp_path):
    browser = desktop
    moves = ["b2", "b1", "a1", "c3"]
    browser.get(server + "/game/3x3k3?moves=" + ",".join(moves))
    points = browser.find_elements(By.CSS_SELECTOR, "#history g.point")
    assert len(points) == 5
    with open_book(books) as book:
        oracle, truth = Oracle(R3, book), Truth(book, R3)
        position = Position.start(R3)
        for ply, point in enumerate(points):
            value = oracle.analyse(position).value
            dot = point.find_elements(By.TAG_NAME, "circle")[-1]
            assert FILLS[dot.value_of_css_property("fill")] == value.outcome.value
            assert point.get_attribute("data-remoteness") == str(value.remoteness)
            if ply < len(moves):
                graded = grade_move(truth, position, R3.parse_cell(moves[ply]))
                assert graded is not None
                ringed = points[ply + 1].get_attribute("data-changed") == "true"
                assert ringed == (graded.kind is not None), moves[ply]
                position = position.play(R3.parse_cell(moves[ply]))
    ticks = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#history text.tick")]
    assert ticks and all(t.isdigit() for t in ticks)
    assert max(int(t) for t in ticks) == R3.cells  # the axis scaled to the game's cells
    assert len(browser.find_elements(By.CSS_SELECTOR, "#history a")) == 5  # each a link
    screenshot(browser, "web-history.png", tmp_path, browser.find_element(By.ID, "history"))


def legend(driver, chart: str) -> dict[str, str]:
    """A matplotlib chart's legend as drawn: each entry's label and the colour of its key."""
    return driver.execute_script(
        """
        const entries = {};
        const box = document.querySelector(arguments[0] + ' g[id^="legend"]');
        let colour = null;
        for (const element of box.querySelectorAll('path, text')) {
          if (element.tagName === 'text') {
            if (colour) entries[element.textContent.trim()] = colour;
            colour = null;
          } else {
            const style = getComputedStyle(element);
            const paint = style.fill !== 'none' ? style.fill : style.stroke;
            if (paint && paint !== 'none' && paint !== 'rgb(255, 255, 255)'
                && paint !== 'rgb(0, 0, 0)') colour = paint;
          }
        }
        return entries;""",
        chart,
    )


def test_every_chart_takes_the_palette(server, desktop):
    browser = desktop
    browser.get(server + "/game/3x3k3/analysis")
    remoteness = legend(browser, "#remoteness-chart")
    assert {name: FILLS[colour] for name, colour in remoteness.items()} == {
        "win": "win",
        "draw": "draw",
        "loss": "loss",
    }
    bars = set(
        browser.execute_script(
            "return [...document.querySelectorAll('#remoteness-chart g[id^=\"patch\"] path')]"
            ".map(p => getComputedStyle(p).fill)"
        )
    )
    assert set(FILLS) <= bars - {"none"} <= set(FILLS) | {"rgb(255, 255, 255)"}
    by_ply = legend(browser, "#by-ply-chart")
    assert by_ply == {"reachable": rgb(SERIES[0]), "canonical": rgb(SERIES[1])}
    # the example positions of the longest win and loss are links
    examples = browser.find_elements(By.CSS_SELECTOR, "#longest a.example")
    assert len(examples) == 2
    examples[0].click()
    assert browser.find_element(By.ID, "summary").get_attribute("data-value") == "win"


# -- phones ------------------------------------------------------------------------------------


def test_no_page_is_wider_than_a_phone(server, browser, tmp_path):
    job = start_audit(server, {"game": "3x3k3", "agent": "heuristic", "mode": "games", "games": 12})
    positions = start_audit(server, {"game": "3x3k3", "agent": "montecarlo:playouts=5"})
    pages = {
        "index": "/",
        "position": "/game/3x3k3?moves=b2,b1,a1&line=1",
        "position 4x4": "/game/4x4k3?moves=b2,a1,c3",
        "analysis": "/game/4x4k3/analysis",
        "audit": f"/audits/{job}",
        "play": "/play/3x3k3?agent=random&side=x&seed=1&moves=b2,a1,c3,a3,a2,c1,b1,b3,c2",
        "editor": "/game/6x6k6/edit?position=x......o",
        "audit of positions": f"/audits/{positions}",
        "ratings": "/game/3x3k3/ratings",
        "editor quoting a long input": "/game/3x3k3/edit?position=" + "x" * 3000,
        "404 quoting a long input": "/game/" + "x" * 3000,
    }
    try:
        for width in PHONES:
            browser.set_window_size(width, 800)
            for name, path in pages.items():
                browser.get(server + path)
                scroll, inner = no_horizontal_scroll(browser)
                assert scroll <= inner, f"{name} at {width} px is {scroll} px wide"
                if width == 360 and name in ("position", "audit"):
                    screenshot(browser, f"web-{name}-phone.png", tmp_path, height=760)
                if name.startswith("audit"):  # its figures in view, not scrolled away
                    for figure in ("accuracy", "perfection"):
                        right = browser.execute_script(
                            "return document.getElementById(arguments[0])"
                            ".getBoundingClientRect().right",
                            figure,
                        )
                        assert right <= inner, f"{name} at {width} px: {figure} at {right}"
    finally:
        browser.set_window_size(*DESKTOP)


def test_the_ratings_page_shows_the_models_fit_on_a_phone(server, browser):
    """The goodness-of-fit line under the ladder's table, whole and in view, as wide as the
    page allows at 400 px as at 1280."""
    try:
        for width in (PHONES[-1], DESKTOP[0]):
            browser.set_window_size(width, 900)
            browser.get(server + "/game/3x3k3/ratings")
            (note,) = browser.find_elements(By.CSS_SELECTOR, "p.fit")
            assert note.is_displayed() and note.text.startswith("Goodness of fit: Pearson X²")
            inner = browser.execute_script("return window.innerWidth")
            assert note.rect["x"] >= 0 and note.rect["x"] + note.rect["width"] <= inner
            table = browser.find_element(By.CSS_SELECTOR, "table.ratings").rect
            assert note.rect["y"] > table["y"] + table["height"]  # it describes the table
    finally:
        browser.set_window_size(*DESKTOP)


def test_the_value_history_reads_on_a_phone(server, browser):
    """Its labels at 9.5 px or more, and each blunder named where it can be read, at 360 and
    400 px wide as at 1280."""
    try:
        for width in (*PHONES, DESKTOP[0]):
            browser.set_window_size(width, 900)
            for path in ("/game/3x3k3?moves=b2,b1,a1", "/game/4x4k3?moves=a1,b1,c1,d1,a2,b2"):
                browser.get(server + path)
                sizes = browser.execute_script(
                    """const svg = document.querySelector('#history svg');
                    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
                    return Array.from(svg.querySelectorAll('text'),
                        t => scale * parseFloat(getComputedStyle(t).fontSize));"""
                )
                assert sizes and min(sizes) >= 9.5, (width, path, min(sizes))
                inner = browser.execute_script("return window.innerWidth")
                box = browser.find_element(By.ID, "history").rect
                assert box["x"] + box["width"] <= inner
                names = browser.find_elements(
                    By.XPATH, "//*[contains(text(), 'draw→loss') or contains(text(), 'win→')]"
                )
                assert names, (width, path)
                for name in names:
                    right = name.rect["x"] + name.rect["width"]
                    assert name.is_displayed() and right <= min(inner, box["x"] + box["width"])
    finally:
        browser.set_window_size(*DESKTOP)


def test_words_align_left_and_figures_right(server, desktop):
    """In the tables, columns of words (agents, results, moves, cells) read from the left and
    columns of figures from the right."""
    browser = desktop
    job = start_audit(server, {"game": "3x3k3", "agent": "random", "mode": "games", "games": 4})

    def aligned(selector: str) -> set[str]:
        return set(
            browser.execute_script(
                "return [...document.querySelectorAll(arguments[0])]"
                ".map(cell => getComputedStyle(cell).textAlign)",
                selector,
            )
        )

    browser.get(server + "/game/3x3k3/ratings")
    rows = ".ratings tbody tr"
    assert aligned(f"{rows} td:nth-child(2), .ratings th:nth-child(2)") == {"left"}  # agents
    assert aligned(f"{rows} td:nth-child(3), .ratings th:nth-child(3)") == {"right"}  # ratings
    browser.get(f"{server}/audits/{job}")
    for column in (2, 3, 5):  # the agent's side, its result, the moves
        assert aligned(f"#game-list td:nth-child({column}), #game-list th:nth-child({column})") == {
            "left"
        }
    assert aligned("#game-list td:nth-child(4)") == {"right"}  # blunders
    browser.get(server + "/")
    assert aligned("#games td:nth-child(2), #games td:nth-child(4)") == {"left"}  # value, method
    assert aligned("#games td:nth-child(5), #games td:nth-child(6)") == {"right"}  # counts


# -- the board editor --------------------------------------------------------------------------


def test_the_editor_refuses_an_illegal_setup_and_explores_a_legal_one(server, desktop, tmp_path):
    browser = desktop
    browser.get(server + "/game/3x3k3/edit")

    def status() -> tuple[bool, str]:
        element = browser.find_element(By.ID, "setup-status")
        return element.get_attribute("data-legal") == "true", element.text

    browser.find_element(By.ID, "tool-x").click()
    click_cell(browser, "a1")
    click_cell(browser, "b1")
    legal, text = status()
    assert not legal and "X has 2 stones and O 0" in text  # the parser's own words
    assert not browser.find_elements(By.ID, "explore")
    browser.find_element(By.ID, "tool-o").click()
    click_cell(browser, "b2")
    assert status() == (True, "A legal position, O to move.")
    browser.find_element(By.ID, "turn-x").click()
    legal, text = status()
    assert not legal and "X cannot be to move" in text
    browser.find_element(By.ID, "turn-o").click()
    assert status()[0]
    screenshot(browser, "web-editor.png", tmp_path)
    browser.find_element(By.ID, "tool-empty").click()
    click_cell(browser, "b1")  # removed: one X, one O, but O still chosen to move
    legal, text = status()
    assert not legal and "O cannot be to move" in text
    browser.find_element(By.ID, "turn-x").click()
    assert status() == (True, "A legal position, X to move.")
    browser.find_element(By.ID, "explore").click()
    assert "/game/3x3k3?position=x../.o./..." in browser.current_url
    assert stones_shown(browser) == {"a1": "x", "b2": "o"}


# -- audits ------------------------------------------------------------------------------------


def start_audit(server: str, body: dict) -> int:
    request = urllib.request.Request(
        server + "/api/audits", json.dumps(body).encode(), {"content-type": "application/json"}
    )
    with urllib.request.urlopen(request) as response:
        job = json.load(response)["id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{server}/api/audits/{job}") as response:
            if json.load(response)["status"] != "running":
                return int(job)
        time.sleep(0.2)
    raise AssertionError("the audit did not finish")


def test_audit_progress_result_and_a_blunder_link(server, desktop, tmp_path):
    browser = desktop
    browser.get(server + "/audits")
    field = browser.find_element(By.NAME, "agent")
    field.clear()
    field.send_keys("montecarlo:playouts=5")
    browser.find_element(By.ID, "start-audit").click()
    WebDriverWait(browser, 120).until(
        expected_conditions.presence_of_element_located((By.ID, "audit-summary"))
    )
    audit_url = browser.current_url
    accuracy = browser.find_element(By.ID, "accuracy").text
    assert accuracy.endswith("%") and 0 < float(accuracy[:-1]) <= 100
    plies = browser.find_elements(By.CSS_SELECTOR, "#by-ply tbody tr")
    assert plies and legend(browser, "#audit-chart") == {
        "accuracy": rgb(SERIES[0]),
        "perfection": rgb(SERIES[1]),
    }
    screenshot(browser, "web-audit.png", tmp_path, height=1500)
    card = browser.find_element(By.CSS_SELECTOR, "#worst li.blunder")
    played = card.get_attribute("data-move")
    best = card.get_attribute("data-best").split()
    card.find_element(By.CSS_SELECTOR, "a.worst-link").click()
    banner = browser.find_element(By.ID, "audit-banner")
    assert "montecarlo:playouts=5" in banner.text and "audit #" in banner.text
    assert f"played {played}" in banner.text and "blunder" in banner.text
    marked = browser.find_element(By.CSS_SELECTOR, "#board g.cell.marked")
    assert marked.get_attribute("data-cell") == played
    stars = {
        cell.get_attribute("data-cell")
        for cell in browser.find_elements(By.CSS_SELECTOR, '#board g.cell[data-best="true"]')
    }
    assert stars == set(best)
    value = marked.get_attribute("data-value")
    summary = browser.find_element(By.ID, "summary").get_attribute("data-value")
    assert value is not None and value != summary  # a blunder changes the value
    screenshot(browser, "web-blunder.png", tmp_path)
    browser.find_element(By.ID, "back-to-audit").click()
    assert browser.current_url == audit_url


def test_a_lost_game_of_an_audit_is_replayed_move_by_move(server, desktop, books):
    browser = desktop
    job = start_audit(
        server,
        {"game": "3x3k3", "agent": "random", "mode": "games", "games": 8, "opponent": "perfect"},
    )
    browser.get(f"{server}/audits/{job}")
    results = {
        (row.get_attribute("data-side"), cell.get_attribute("data-outcome")): int(cell.text)
        for row in browser.find_elements(By.CSS_SELECTOR, "#results tbody tr")
        for cell in row.find_elements(By.CSS_SELECTOR, "td[data-outcome]")
    }
    assert sum(results[("all", o)] for o in ("win", "draw", "loss")) == 8
    assert results[("x", "loss")] + results[("o", "loss")] == results[("all", "loss")] > 0
    lost = browser.find_element(By.CSS_SELECTOR, '#game-list tr[data-outcome="loss"]')
    side = lost.get_attribute("data-side")
    moves = lost.find_element(By.CSS_SELECTOR, "td.moves").text.split()
    lost.find_element(By.CSS_SELECTOR, "a.replay").click()
    assert "audit #" in browser.find_element(By.ID, "audit-banner").text
    assert stones_shown(browser) == {}  # from the start
    for ply, move in enumerate(moves, start=1):
        browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
        shown = None if ply == len(moves) else str(ply)  # the end has no ply
        WebDriverWait(browser, 10).until(lambda d, shown=shown: ply_of(d.current_url) == shown)
        assert len(stones_shown(browser)) == ply and move in stones_shown(browser)
    caption = browser.find_element(By.CSS_SELECTOR, "#board text.caption")
    assert caption.get_attribute("data-winner") == ("o" if side == "x" else "x")
    # the value history rings the agent's blunders, and only those
    with open_book(books) as book:
        truth = Truth(book, R3)
        position, blunders = Position.start(R3), set()
        for ply, move in enumerate(moves):
            if position.to_move == side:
                graded = grade_move(truth, position, R3.parse_cell(move))
                if graded is not None and graded.kind is not None:
                    blunders.add(ply + 1)
            position = position.play(R3.parse_cell(move))
    ringed = {
        int(point.get_attribute("data-ply"))
        for point in browser.find_elements(By.CSS_SELECTOR, '#history g.point[data-changed="true"]')
    }
    assert ringed == blunders and blunders


# -- play --------------------------------------------------------------------------------------


def test_play_with_a_hint_to_the_graded_end(server, desktop, books, tmp_path):
    browser = desktop
    browser.get(server + "/play/3x3k3?agent=heuristic&side=x&seed=1")
    browser.find_element(By.ID, "hint").click()
    hinted = {
        cell.get_attribute("data-cell")
        for cell in browser.find_elements(By.CSS_SELECTOR, "#board g.cell.marked")
    }
    with open_book(books) as book:
        best = Oracle(R3, book).analyse(Position.start(R3)).best_moves
    assert hinted == {R3.cell_name(c) for c in best}
    for _ in range(5):
        if browser.find_elements(By.ID, "result"):
            break
        browser.find_element(By.CSS_SELECTOR, "#board a g.cell").click()
    assert browser.find_element(By.ID, "result").text
    numbers = [n.text for n in browser.find_elements(By.CSS_SELECTOR, "#moves .n")]
    assert numbers == [f"{i}." for i in range(1, len(numbers) + 1)]  # numbered per player
    rows = browser.find_elements(By.CSS_SELECTOR, "#graded tbody tr")
    assert [r.find_element(By.TAG_NAME, "td").text for r in rows] == [
        str(i) for i in range(1, len(rows) + 1)
    ]
    screenshot(browser, "web-play.png", tmp_path, height=950)
    rows[0].find_element(By.CSS_SELECTOR, "a").click()
    marked = browser.find_element(By.CSS_SELECTOR, "#board g.cell.marked")
    assert "ply=0" in browser.current_url and marked.get_attribute("data-value")


# -- the GamesCrafters API ---------------------------------------------------------------------


@pytest.fixture
def other_origin():
    """A page of another origin on loopback (GamesmanUni is served from its own site)."""
    import http.server

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            body = b"<!doctype html><title>another origin</title>"
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    page = http.server.HTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=page.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{page.server_address[1]}/"
    page.shutdown()
    thread.join(10)


def test_gamesmanuni_reads_the_instructions_from_another_origin(server, desktop, other_origin):
    browser = desktop
    browser.get(other_origin)
    answer = browser.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        fetch(arguments[0]).then(r => r.json()).then(done, e => done(String(e)));""",
        server + "/uwapi/mnk/3x3k3/instructions/?locale=en-US",
    )
    assert isinstance(answer, dict), answer
    assert answer["instructions"].startswith("# 3x3, 3 in a row")
    assert "**To Win:**" in answer["instructions"]
    assert "a tie: the board fills in 9 moves" in answer["instructions"]  # the book's value


def test_the_progress_line_reads_the_same_in_the_browser(server, desktop):
    """The page polls a running audit and writes its progress as the server writes it."""
    from ttt_solve.web.views import progress_text

    browser = desktop
    browser.get(server + "/audits")
    for done, total, seconds in [(0, 0, 0), (96, 20088, 4.0), (10_000, 20_000, 3600.0), (7, 9, 70)]:
        shown = browser.execute_script("return progressText(...arguments)", done, total, seconds)
        assert shown == progress_text(done, total, seconds)
