"""What a visitor can and cannot make ``ttt serve`` do, tried on a real server over loopback:
work bounded in time and stopped when its visitor goes, agent parameters capped, book answers
that never wait for a search, Ctrl-C, request bodies, hostile input, binding, a book damaged
while served. See docs/reliability.md, "The server"."""

from __future__ import annotations

import contextlib
import html
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from click.testing import CliRunner  # noqa: E402

from tests import booksurgery  # noqa: E402
from tests.pg_support import solve_into  # noqa: E402
from tests.web_support import TTT, Serving, small_book  # noqa: E402
from ttt_solve.book.oracle import Oracle  # noqa: E402
from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.cli.main import ttt  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402

R3, R34, R44 = Rules(3, 3, 3), Rules(3, 4, 3), Rules(4, 4, 3)
ENDLESS = "minimax:depth=9"
"""An agent whose first move on 4x4 no limit lets finish (billions of nodes): work that runs
until it is stopped."""
ENDLESS_MOVE = f"/play/4x4k3?agent={ENDLESS}&side=o&seed=1"


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> str:
    """3x3 k=3 and 4x4 k=3 solved, and 3x4 k=3 as an opening book of depth 2."""
    return small_book(str(tmp_path_factory.mktemp("serve") / "book.sqlite"))


@pytest.fixture(scope="module")
def exact_34(tmp_path_factory: pytest.TempPathFactory) -> str:
    """3x4 k=3 solved exhaustively: the truth past the opening book."""
    db = str(tmp_path_factory.mktemp("serve") / "exact.sqlite")
    solve_into(db, R34)
    return db


def start(db: str, *args: str) -> Serving:
    """``ttt serve`` on ``db`` with ``args``, once its worker processes are ready."""
    server = Serving(db, "--quiet", "--memory-rows", "0", *args)
    server.wait_for("worker processes ready")
    return server


@pytest.fixture(scope="module")
def server(book: str):
    """A server with tight limits: 2 s a search or move, 3 s an audit, one of each at once."""
    with start(
        book, "--search-seconds", "2", "--audit-seconds", "3", "--max-searches", "1"
    ) as serving:
        yield serving


class Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> dict:
        return json.loads(self.body)

    @property
    def error(self) -> str:
        """The one-line message of an error, from the JSON or the page."""
        if self.headers.get("content-type", "").startswith("application/json"):
            return self.json()["error"]
        found = re.search(rb'<p class="error" id="error">(.*?)</p>', self.body, re.S)
        assert found, self.body[:300]
        return html.unescape(found[1].decode())


def ask(
    server: Serving,
    path: str,
    *,
    method: str = "GET",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 60,
) -> Answer:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return Answer(response.status, dict(response.getheaders()), response.read())
    finally:
        connection.close()


def post_json(server: Serving, path: str, fields: object, **headers: str) -> Answer:
    body = json.dumps(fields).encode()
    return ask(server, path, method="POST", body=body, headers=headers)


def start_audit(server: Serving, fields: dict, seconds: float = 20) -> Answer:
    """Start an audit, waiting for the audit slot while another audit holds it (429)."""

    def started() -> Answer | None:
        answer = post_json(server, "/api/audits", fields)
        return None if answer.status == 429 else answer

    answer = until(started, seconds, "the audit slot")
    assert answer.status == 202, answer.body
    return answer


def finished_audit(server: Serving, started: Answer, seconds: float) -> dict:
    """The audit's JSON once it is no longer running."""
    job = f"/api/audits/{started.json()['id']}"

    def finished() -> dict | None:
        data = ask(server, job).json()
        return data if data["status"] != "running" else None

    return until(finished, seconds, "the audit's end")


def until(condition: Callable[[], object], seconds: float, what: str) -> object:
    """Poll ``condition()`` until it gives something true, within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {seconds} s")


def live_search_works(server: Serving) -> bool:
    """Whether a position past the opening book is searched now (not refused: 429)."""
    answer = ask(server, "/api/games/3x4k3/position?moves=a1,b2,c3")
    assert answer.status in (200, 429), answer.body
    return answer.status == 200


def wait_idle(server: Serving) -> None:
    """Until the server's live-search worker takes work again (one a previous test had
    stopped is replaced by a fresh process)."""
    until(lambda: live_search_works(server), 30, "a live search")


def workers(server: Serving) -> dict[int, int]:
    """The server's worker processes: pid -> niceness (from /proc)."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                command = cmdline.read()
        except OSError:
            continue
        if int(fields[1]) == server.process.pid and b"spawn_main" in command:
            found[int(pid)] = int(fields[16])
    return found


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no process {pid}")


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def open_request(server: Serving, path: str) -> socket.socket:
    """A GET sent on a connection left open (its visitor waits for the answer)."""
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    connection = socket.create_connection((host, int(port)))
    connection.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    return connection


# -- work bounded in time, stopped when its visitor goes, never in the way of the book -----


def test_an_agent_move_is_stopped_at_the_time_limit(server):
    wait_idle(server)
    before = set(workers(server))
    started = time.monotonic()
    answer = ask(server, ENDLESS_MOVE)
    assert answer.status == 422 and "ran past this server's limit of 2 s" in answer.error
    assert time.monotonic() - started < 2 + 5
    # the worker that ran it was ended (its work stopped, not only the wait), and replaced
    until(lambda: not any(alive(pid) for pid in before - set(workers(server))), 5, "the end")
    assert before - set(workers(server))
    wait_idle(server)


def test_an_audit_is_stopped_at_the_time_limit_and_frees_its_slot(server):
    fields = {"game": "4x4k3", "agent": ENDLESS, "mode": "games", "games": 2}
    started = post_json(server, "/api/audits", fields)
    assert started.status == 202, started.body
    assert post_json(server, "/api/audits", fields).status == 429  # the one audit slot
    data = finished_audit(server, started, 3 + 5)
    assert data["status"] == "failed" and "limit of 3 s" in data["error"]
    start_audit(server, {"game": "3x3k3", "agent": "random"}, 15)  # its slot is free again


def test_book_answers_never_wait_for_a_search_slot_and_a_gone_visitor_frees_it(book):
    with start(book, "--search-seconds", "120", "--max-searches", "1") as serving:
        before = set(workers(serving))
        visitor = open_request(serving, ENDLESS_MOVE)  # takes the one search slot
        try:
            until(lambda: not live_search_works(serving), 10, "the slot taken")
            mainline = ask(serving, "/api/games/3x3k3/mainline")
            assert mainline.status == 200 and len(mainline.json()["moves"]) == 9
            assert ask(serving, "/game/4x4k3?moves=b2,a1&line=1").status == 200
            assert ask(serving, "/api/games/4x4k3/position?moves=b2").status == 200
            perfect = ask(serving, "/play/3x3k3?agent=perfect&side=o&seed=1")
            assert perfect.status == 303 and "moves=" in perfect.headers["location"]
        finally:
            visitor.close()  # the visitor goes: its move is stopped, its slot freed
        until(lambda: live_search_works(serving), 15, "the slot freed")
        gone = before - set(workers(serving))
        assert gone and not any(alive(pid) for pid in gone)


def test_agent_parameters_from_the_web_are_capped_and_checked_before_accepting(server):
    for path in (
        "/play/3x3k3?agent=mcts:iterations=50000000&seed=1",
        "/play/3x3k3?agent=montecarlo:playouts=99999999&seed=1",
    ):
        answer = ask(server, path)
        assert answer.status == 400 and "more than this server allows" in answer.error
    for fields, words in (
        ('"agent": "mcts:iterations=50000000"', "more than this server allows"),
        ('"agent": "mcts:iterations=-1"', "at least 1"),
        ('"agent": "random", "mode": "games", "opponent": "alphabeta:depth=0"', "at least 1"),
        ('"agent": "random", "mode": "games", "games": 0', "games 0 is not between"),
        ('"agent": "random", "seed": ' + "9" * 5000, "seed 999999999999... (5,000 characters)"),
        ('"agent": "random", "seed": -1', "seed -1 is not between"),
    ):
        body = f'{{"game": "3x3k3", {fields}}}'.encode()
        answer = ask(server, "/api/audits", method="POST", body=body)
        assert answer.status == 400, (fields[:100], answer.body)
        assert words in answer.error and "not JSON" not in answer.error
        assert "\n" not in answer.error and len(answer.error) < 400


# -- Ctrl-C, SIGTERM, kill -9 -----------------------------------------------------------------


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_the_server_and_its_workers_stop_at_once_whatever_runs(book, how):
    serving = start(
        book, "--search-seconds", "120", "--audit-seconds", "600", "--max-searches", "1"
    )
    try:
        pids = set(workers(serving))
        visitor = open_request(serving, ENDLESS_MOVE)
        audit = post_json(serving, "/api/audits", {"game": "4x4k3", "agent": ENDLESS})
        assert audit.status == 202
        until(lambda: not live_search_works(serving), 10, "the move running")
        seconds = serving.signal(how)
        visitor.close()
    finally:
        serving.stop()
    assert seconds < 2, f"stopped after {seconds:.2f} s"
    until(lambda: not any(alive(pid) for pid in pids), 2, "the workers' end")
    if how != signal.SIGKILL:
        assert serving.process.returncode == 0
        out = serving.output
        assert out.rstrip().endswith("stopped")
        assert "Traceback" not in out and "CancelledError" not in out and "ERROR" not in out


# -- what the server says when it starts ----------------------------------------------------


def test_the_start_up_line_hides_a_password(book, monkeypatch):
    """A PostgreSQL URL's password never appears in the start-up line (here the URL is served
    from a SQLite book: nothing listens; the test with a real server is below)."""
    from ttt_solve.cli import serve as serve_command
    from ttt_solve.web import server as web_server

    url = "postgresql+psycopg://postgres:secretpw@db.example:5432/books"
    monkeypatch.setattr(serve_command, "open_book", lambda db, **kw: open_book(book, **kw))
    monkeypatch.setattr(web_server, "run", lambda *args, **kwargs: None)
    result = CliRunner().invoke(ttt, ["serve", "--db", url, "--port", "0"])
    assert result.exit_code == 0, result.output
    assert "serving 3 games of postgresql+psycopg://postgres:***@db.example" in result.output
    assert "secretpw" not in result.output


def test_the_start_up_line_hides_a_password_of_a_real_server(postgres_db):
    import sqlalchemy as sa

    solve_into(postgres_db, R3)
    url = sa.make_url(postgres_db).set(password="secretpw").render_as_string(hide_password=False)
    with Serving(url, "--quiet") as serving:  # the test server trusts loopback: any password
        serving.wait_for("worker processes ready")
        assert ask(serving, "/api/games/3x3k3/position").status == 200
    printed = serving.output
    assert "secretpw" not in printed and ":***@" in printed


def test_an_empty_host_is_refused_and_one_beyond_loopback_warned(book):
    empty = subprocess.run(
        [TTT, "serve", "--db", book, "--host", "", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert empty.returncode == 2 and "--host is empty" in empty.stderr
    assert "serving" not in empty.stdout
    # every interface, on a port taken on loopback: warned, then refused; nothing listens
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        wide = subprocess.run(
            [TTT, "serve", "--db", book, "--host", "0.0.0.0", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert "warning: listening on 0.0.0.0" in wide.stderr and "no login" in wide.stderr
    assert wide.returncode == 2 and "serving" not in wide.stdout


def test_a_port_in_use_is_one_line_and_exit_2_before_serving(book):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = subprocess.run(
            [TTT, "serve", "--db", book, "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"Error: cannot listen on 127.0.0.1:{port}: the port is in use (another server?); "
        f"choose another --port"
    ]


# -- request bodies and hostile input -------------------------------------------------------


def whole_reply(connection: socket.socket) -> str:
    """What the server sends until it closes the connection."""
    parts = []
    with contextlib.suppress(ConnectionResetError):  # it may close with our data unread
        while part := connection.recv(65536):
            parts.append(part)
    return b"".join(parts).decode(errors="replace")


def test_a_body_or_head_over_the_limit_is_refused_before_it_is_read(server):
    before = rss_mib(server.process.pid)
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    for path, method in (("/api/audits", "POST"), ("/audits", "POST"), ("/api/games", "GET")):
        with socket.create_connection((host, int(port)), timeout=10) as connection:
            connection.sendall(
                f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: 300000000\r\n\r\n".encode()
                + b"[" * 4096
            )
            reply = whole_reply(connection)
        assert reply.startswith("HTTP/1.1 413"), (path, reply[:200])
        assert "longer than this server reads" in reply
    # a body with no length said: refused as soon as it passes the limit
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(
            f"POST /api/audits HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Transfer-Encoding: chunked\r\n\r\n".encode()
        )
        chunk = b"1000\r\n" + b" " * 4096 + b"\r\n"
        for _ in range(4):
            connection.sendall(chunk)
        reply = whole_reply(connection)
    assert reply.startswith("HTTP/1.1 413"), reply[:200]
    # a head without end: refused as soon as it passes its limit
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(f"GET /api/games HTTP/1.1\r\nHost: {host}:{port}\r\nX-A: ".encode())
        connection.sendall(b"a" * 70_000)
        reply = whole_reply(connection)
    assert reply.startswith("HTTP/1.1 431"), reply[:200]
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        with contextlib.suppress(ConnectionError):  # closed by the server as it sends
            for _ in range(50):
                connection.sendall(b"a" * 1_000_000)
    assert rss_mib(server.process.pid) - before < 20


def test_deeply_nested_json_is_a_400(server):
    for body in (b"[" * 10_000, b'{"a":' * 1_900):
        answer = ask(server, "/api/audits", method="POST", body=body)
        assert answer.status == 400 and "nested too deeply" in answer.error


def test_posts_from_pages_of_other_sites_are_refused(server):
    form = "game=3x3k3&agent=random&mode=positions&sample=5&seed=0"
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    host = server.url.removeprefix("http://")
    for other in (
        {"Origin": "http://evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Origin": f"http://{host}", "Sec-Fetch-Site": "same-site"},  # a sibling subdomain
    ):
        for path in ("/audits", "/api/audits"):
            sent = {**headers, **other}
            answer = ask(server, path, method="POST", body=form.encode(), headers=sent)
            assert answer.status == 403 and "may not send this request" in answer.error
    for allowed in (
        {},  # not a browser's request: a script
        {"Origin": f"https://{host}"},  # through a proxy that adds TLS
        {"Origin": "https://books.example", "Sec-Fetch-Site": "same-origin"},  # another Host
    ):
        answer = ask(server, "/api/audits", method="POST", body=b'{"agent": "?"}', headers=allowed)
        assert answer.status == 400 and "unknown agent" in answer.error  # past the guard
    own = {**headers, "Origin": f"http://{host}", "Sec-Fetch-Site": "same-origin"}

    def accepted() -> Answer | None:
        answer = ask(server, "/audits", method="POST", body=form.encode(), headers=own)
        return None if answer.status == 429 else answer

    answer = until(accepted, 15, "the audit slot")
    assert answer.status == 303 and answer.headers["location"].startswith("/audits/")


# -- the work runs elsewhere, and bounded ----------------------------------------------------


def test_work_runs_in_worker_processes_at_a_lower_priority(server):
    found = workers(server)
    assert len(found) == 2  # one for searches and moves, one for audits
    with open(f"/proc/{server.process.pid}/stat") as stat:
        own = int(stat.read().rsplit(")", 1)[1].split()[16])
    assert set(found.values()) == {min(own + 10, 19)}  # 19: the lowest priority there is


@pytest.mark.slow
def test_audits_do_not_grow_the_server(book):
    """Each audit's truth (the values of a whole game) is read in a worker, which keeps one."""
    with start(book, "--audit-seconds", "60") as serving:

        def audited(game: str) -> None:
            started = start_audit(serving, {"game": game, "agent": "random", "sample": 20})
            data = finished_audit(serving, started, 60)
            assert data["status"] == "done", data

        audited("3x3k3")
        before = rss_mib(serving.process.pid)
        for _ in range(2):
            for game in ("4x4k3", "3x3k3", "3x4k3"):
                audited(game)
        assert rss_mib(serving.process.pid) - before < 25
        assert all(rss_mib(pid) < 700 for pid in workers(serving))


# -- the server's own faults ------------------------------------------------------------------


def test_a_book_damaged_while_served_is_a_5xx_naming_ttt_verify(book, tmp_path):
    copy = str(tmp_path / "served.sqlite")
    shutil.copy(book, copy)
    with start(copy) as serving:
        assert ask(serving, "/api/games/3x3k3/position?moves=b2").status == 200
        corner = Position.start(R3).play(0)
        key = R3.canonical(corner.x, corner.o)[0]
        row = booksurgery.first(copy, game_id=1, ply=1, key=key)
        booksurgery.change(copy, row, value=5)
        for path in ("/api/games/3x3k3/position?moves=a1", "/game/3x3k3?moves=c3"):
            answer = ask(serving, path)
            assert answer.status == 500, (path, answer.body[:300])
            assert "looks damaged" in answer.error and "ttt verify" in answer.error
    assert "looks damaged" in serving.output  # and the server's log says so


def test_play_against_perfect_past_the_opening_book(server, exact_34):
    wait_idle(server)
    answer = ask(server, "/play/3x4k3?agent=perfect&side=x&seed=4&moves=a1,b2,c3")
    assert answer.status == 303, answer.body[:300]
    reply = answer.headers["location"].rsplit("moves=a1,b2,c3,", 1)[1].split("&")[0]
    with open_book(exact_34) as exact:
        truth = Oracle(R34, exact).analyse(Position.start(R34).play(0).play(5).play(10))
    assert R34.parse_cell(reply) in truth.best_moves
