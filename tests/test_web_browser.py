"""ttt serve in a real browser: headless Chromium (Debian's chromium and chromium-driver),
driven through selenium, against a server on loopback over a 3x3 book.

It plays moves by clicking cells, checks each cell's colour and label against the book, goes
back with the browser's history, runs an audit and follows a blunder link. Skipped, with the
reason, where Chromium, its driver or selenium is not installed. Set TTT_WEB_SCREENSHOTS to a
folder to keep the screenshots (the documentation's come from here).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")

from ttt_solve.book.oracle import Oracle  # noqa: E402
from ttt_solve.book.query import parse_query  # noqa: E402
from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="no headless Chromium: apt-get install chromium chromium-driver",
)

R3 = Rules(3, 3, 3)
# The background colours of style.css for a move's value, as Chromium computes them.
COLOURS = {
    "rgba(46, 157, 75, 1)": "win",
    "rgba(242, 201, 76, 1)": "draw",
    "rgba(139, 30, 30, 1)": "loss",
}
LETTERS = {"win": "W", "draw": "D", "loss": "L"}


@pytest.fixture(scope="module")
def server(book_3x3):
    import uvicorn

    from ttt_solve.web.app import create_app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(create_app(book_3x3), host="127.0.0.1", port=port, log_level="warning")
    app_server = uvicorn.Server(config)
    thread = threading.Thread(target=app_server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not app_server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
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
        "--window-size=1200,1000",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    driver.implicitly_wait(5)
    yield driver
    driver.quit()


def screenshot(driver, name: str, tmp_path, element=None) -> None:
    """The window (or one element of it) as ``name``, kept where TTT_WEB_SCREENSHOTS says."""
    if element is None:
        driver.save_screenshot(str(tmp_path / name))
    else:
        driver.execute_script("arguments[0].scrollIntoView();", element)
        element.screenshot(str(tmp_path / name))
    folder = os.environ.get("TTT_WEB_SCREENSHOTS")
    if folder:
        shutil.copy(tmp_path / name, os.path.join(folder, name))


def book_moves(db: str, moves: str) -> dict[str, tuple[str, int]]:
    with open_book(db) as book:
        analysis = Oracle(R3, book).analyse(parse_query(R3, None, moves))
    return {m.name: (m.value.outcome.value, m.value.remoteness) for m in analysis.moves}


def board_shown(driver) -> dict[str, tuple[str, int]]:
    """Each empty cell's value as the browser draws it: its colour, and its label (D7)."""
    from selenium.webdriver.common.by import By

    shown = {}
    for cell in driver.find_elements(By.CSS_SELECTOR, "#board td.move"):
        colour = cell.value_of_css_property("background-color")
        value = COLOURS[colour]
        label = cell.text.replace("★", "").strip()
        assert label[0] == LETTERS[value], f"{cell.get_attribute('data-cell')}: {label} on {value}"
        shown[cell.get_attribute("data-cell")] = (value, int(label[1:]))
    return shown


def click_cell(driver, name: str) -> None:
    from selenium.webdriver.common.by import By

    driver.find_element(By.CSS_SELECTOR, f'#board td[data-cell="{name}"] a').click()


def test_explore_by_clicking_and_the_browser_history(server, browser, book_3x3, tmp_path):
    from selenium.webdriver.common.by import By

    browser.get(server + "/game/3x3k3")
    assert board_shown(browser) == book_moves(book_3x3, "")
    click_cell(browser, "b2")
    assert browser.current_url.endswith("/game/3x3k3?moves=b2")
    assert board_shown(browser) == book_moves(book_3x3, "b2")
    click_cell(browser, "b1")  # an edge reply loses for O
    assert browser.current_url.endswith("?moves=b2,b1")
    shown = board_shown(browser)
    assert shown == book_moves(book_3x3, "b2,b1")
    assert "win" in {value for value, _ in shown.values()}
    summary = browser.find_element(By.ID, "summary")
    assert summary.get_attribute("data-value") == "win"  # X to move wins after O's edge
    screenshot(browser, "web-position.png", tmp_path)
    browser.back()
    assert browser.current_url.endswith("?moves=b2")
    assert board_shown(browser) == book_moves(book_3x3, "b2")
    browser.forward()
    assert browser.current_url.endswith("?moves=b2,b1")
    browser.find_element(By.ID, "undo").click()
    assert browser.current_url.endswith("?moves=b2")


def test_audit_progress_result_and_a_blunder_link(server, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server + "/audits")
    field = browser.find_element(By.NAME, "agent")
    field.clear()
    field.send_keys("montecarlo:playouts=5")
    browser.find_element(By.ID, "start-audit").click()
    WebDriverWait(browser, 120).until(
        expected_conditions.presence_of_element_located((By.ID, "audit-summary"))
    )
    accuracy = browser.find_element(By.ID, "accuracy").text
    assert accuracy.endswith("%") and 0 < float(accuracy[:-1]) <= 100
    screenshot(browser, "web-audit.png", tmp_path)
    blunder = browser.find_element(By.CSS_SELECTOR, "#worst tr.blunder a.worst-link")
    row = blunder.find_element(By.XPATH, "./ancestor::tr")
    played = row.find_elements(By.TAG_NAME, "td")[2].text
    best = row.find_elements(By.TAG_NAME, "td")[5].text.split()
    blunder.click()
    marked = browser.find_element(By.CSS_SELECTOR, "#board td.mark")
    assert marked.get_attribute("data-cell") == played
    stars = {
        cell.get_attribute("data-cell")
        for cell in browser.find_elements(By.CSS_SELECTOR, "#board td.best")
    }
    assert stars == set(best)
    assert "blunder" not in marked.get_attribute("class")
    value = marked.get_attribute("data-value")
    assert value is not None and value != browser.find_element(By.ID, "summary").get_attribute(
        "data-value"
    )  # a blunder changes the value


def test_value_history_and_play(server, browser, tmp_path):
    from selenium.webdriver.common.by import By

    browser.get(server + "/game/3x3k3?moves=b2,b1,a1,c3")
    points = browser.find_elements(By.CSS_SELECTOR, "#history svg a")
    assert len(points) == 5  # plies 0..4, each a link
    screenshot(browser, "web-history.png", tmp_path, browser.find_element(By.ID, "history"))
    browser.get(server + "/play/3x3k3?agent=heuristic&side=x&seed=1")
    for _ in range(5):
        if browser.find_elements(By.ID, "result"):
            break
        browser.find_element(By.CSS_SELECTOR, "#board td.open a").click()
    assert browser.find_element(By.ID, "result").text
    assert browser.find_element(By.ID, "graded")
    screenshot(browser, "web-play.png", tmp_path)
