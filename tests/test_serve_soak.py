"""A soak of ``ttt serve``: a real server over loopback, hammered for a bounded time by several
clients at once with hostile work (endless agent moves, slow audits, live searches, specs and
bodies no server should take, connections that trickle or hang up), while other clients ask
for positions the book holds. Every book answer must be right and none may fail; no answer of
any kind may be a 5xx; the server's memory stays bounded; Ctrl-C stops it in under 2 s.

The book answers' latency is measured and printed (p50, p99), not asserted: a test asserts no
wall time (the machine is shared). ``bench/bench_serve.py`` measures the server's speed."""

from __future__ import annotations

import http.client
import json
import random
import signal
import socket
import statistics
import threading
import time
from collections.abc import Callable

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from tests.support import random_walk  # noqa: E402
from tests.test_serve_limits import ENDLESS, rss_mib, workers  # noqa: E402
from tests.web_support import Serving, small_book  # noqa: E402
from ttt_solve.book.oracle import Oracle  # noqa: E402
from ttt_solve.book.query import analysis_json  # noqa: E402
from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402

SOAK_SECONDS = 12.0
"""How long the clients hammer the server."""
MAX_REQUESTS = 100_000
"""And at most this many requests of the book-answer clients in all."""
BOOK_CLIENTS = 3
R3, R34, R44 = Rules(3, 3, 3), Rules(3, 4, 3), Rules(4, 4, 3)

HOSTILE_MOVES = [
    f"/play/4x4k3?agent={ENDLESS}&side=o&seed=1",  # stopped at its time limit (422)
    "/play/4x4k3?agent=mcts:iterations=100000&side=o&seed=2",
    "/play/4x4k3?agent=mcts:iterations=50000000&side=o&seed=3",  # capped (400)
    "/play/4x4k3?agent=mcts:iterations=-1&side=o&seed=4",
    "/play/3x3k3?agent=cmd:sleep%20100&side=o&seed=5",  # never run (400)
    "/play/3x3k3?agent=" + "x" * 3000 + "&seed=6",
    "/play/3x4k3?agent=perfect&side=x&seed=7&moves=a1,b2,c3",  # searched past the book
]
HOSTILE_AUDITS: list[bytes] = [
    json.dumps({"game": "4x4k3", "agent": ENDLESS, "mode": "games", "games": 3}).encode(),
    json.dumps({"game": "4x4k3", "agent": "mcts:iterations=2000", "sample": 500}).encode(),
    json.dumps({"game": "3x3k3", "agent": "mcts:iterations=-1"}).encode(),
    b"[" * 10_000,
    b'{"game": "3x3k3", "agent": "random", "seed": ' + b"7" * 5_000 + b"}",
    b"\xff\xfe not json",
]


@pytest.fixture(scope="module")
def soak_book(tmp_path_factory: pytest.TempPathFactory) -> str:
    """3x3 k=3 and 4x4 k=3 solved, and 3x4 k=3 as an opening book of depth 2."""
    return small_book(str(tmp_path_factory.mktemp("soak") / "book.sqlite"))


def expected_answers(db: str, count: int) -> list[tuple[str, dict]]:
    """(path, the JSON the book gives) of positions of 4x4 k=3 and 3x3 k=3 reached by random
    games, asked written out (answered in front of the routes) or by moves (by the route)."""
    rng = random.Random(20261124)
    asked = []
    with open_book(db, read_only=True) as book:
        for index in range(count):
            rules = R44 if index % 3 else R3
            position = random_walk(rules, rng, rng.randrange(rules.cells))
            answer = analysis_json(Oracle(rules, book, search_seconds=0).analyse(position))
            game = f"{rules.rows}x{rules.cols}k{rules.k}"
            asked.append((f"/api/games/{game}/position?position={position}", answer))
    return asked


class Client:
    """One keep-alive connection to the server, opened again when the server closes it."""

    def __init__(self, url: str) -> None:
        self.host, port = url.removeprefix("http://").rsplit(":", 1)
        self.port = int(port)
        self.connection: http.client.HTTPConnection | None = None

    def ask(self, path: str, method: str = "GET", body: bytes | None = None) -> tuple[int, bytes]:
        for attempt in (1, 2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
            try:
                self.connection.request(method, path, body=body)
                response = self.connection.getresponse()
                data = response.read()
                if response.getheader("connection") == "close":
                    self.close()
                return response.status, data
            except (http.client.RemoteDisconnected, ConnectionError):
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class Soak:
    """The clients' shared clock and what they saw."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.wrong: list[str] = []
        self.statuses: dict[int, int] = {}
        self.requests = 0

    def saw(self, status: int) -> None:
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1
            self.requests += 1

    def run(self, clients: list[Callable[[], None]]) -> None:
        threads = [threading.Thread(target=self.guarded, args=(c,), daemon=True) for c in clients]
        for thread in threads:
            thread.start()
        self.stop.wait(SOAK_SECONDS)
        self.stop.set()
        for thread in threads:
            thread.join(60)
            assert not thread.is_alive(), "a client did not stop"

    def guarded(self, client: Callable[[], None]) -> None:
        try:
            client()
        except Exception as error:  # noqa: BLE001 - a client's failure fails the soak
            with self.lock:
                self.wrong.append(f"{client.__name__}: {type(error).__name__}: {error}")


def book_answers(soak: Soak, asked: list[tuple[str, dict]], seed: int) -> Callable[[], None]:
    def book_client() -> None:
        rng = random.Random(seed)
        client = Client(soak.url)
        while not soak.stop.is_set() and soak.requests < MAX_REQUESTS:
            path, expected = rng.choice(asked)
            started = time.perf_counter()
            status, body = client.ask(path)
            took = time.perf_counter() - started
            soak.saw(status)
            with soak.lock:
                soak.latencies.append(took)
                if status != 200 or json.loads(body) != expected:
                    soak.wrong.append(f"{path}: {status} {body[:200]!r}")

    return book_client


def hostile(soak: Soak, seed: int) -> Callable[[], None]:
    """Endless and capped agent moves, live searches, slow and hostile audits, in turn."""

    def hostile_client() -> None:
        rng = random.Random(seed)
        client = Client(soak.url)
        while not soak.stop.is_set():
            kind = rng.randrange(3)
            if kind == 0:
                status, _ = client.ask(rng.choice(HOSTILE_MOVES))
            elif kind == 1:
                moves = ",".join(rng.sample(["a1", "b2", "c3", "d1", "a3", "d2"], 3))
                status, _ = client.ask(f"/api/games/3x4k3/position?moves={moves}")
            else:
                status, _ = client.ask("/api/audits", "POST", rng.choice(HOSTILE_AUDITS))
            soak.saw(status)
            time.sleep(0.05)

    return hostile_client


def raw(soak: Soak) -> socket.socket:
    host, port = soak.url.removeprefix("http://").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=30)


def status_of(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/1.1 ") else 0


def rude(soak: Soak) -> Callable[[], None]:
    """Oversize bodies and heads, visitors who hang up during a live move, a request sent a
    byte at a time."""

    def rude_client() -> None:
        host = soak.url.removeprefix("http://")
        round_ = 0
        while not soak.stop.is_set():
            round_ += 1
            with raw(soak) as connection:  # 300 MB announced: refused before it is read
                connection.sendall(
                    f"POST /api/audits HTTP/1.1\r\nHost: {host}\r\n"
                    f"Content-Length: 300000000\r\n\r\n".encode()
                    + b"{" * 8192
                )
                soak.saw(status_of(connection.recv(64)))
            with raw(soak) as connection:  # a head without end: refused as it passes 64 KiB
                connection.sendall(f"GET /api/games HTTP/1.1\r\nHost: {host}\r\nX: ".encode())
                connection.sendall(b"x" * 70_000)
                soak.saw(status_of(connection.recv(64)))
            with raw(soak) as connection:  # asks for an endless move, then hangs up
                connection.sendall(
                    f"GET /play/4x4k3?agent={ENDLESS}&side=o&seed={round_} HTTP/1.1\r\n"
                    f"Host: {host}\r\n\r\n".encode()
                )
                time.sleep(0.2)
            with raw(soak) as connection:  # a request trickled in
                for byte in f"GET /api/games HTTP/1.1\r\nHost: {host}\r\n\r\n".encode():
                    connection.sendall(bytes([byte]))
                    time.sleep(0.01)
                soak.saw(status_of(connection.recv(64)))

    return rude_client


@pytest.mark.slow
def test_the_server_under_hostile_load(soak_book):
    asked = expected_answers(soak_book, 300)
    serving = Serving(
        soak_book,
        "--quiet",
        "--search-seconds",
        "1",
        "--audit-seconds",
        "3",
        "--max-searches",
        "2",
        "--max-audits",
        "1",
    )
    try:
        serving.wait_for("worker processes ready")
        serving.wait_for("4x4 k=3: 756,387 positions in memory")
        soak = Soak(serving.url)
        pid = serving.process.pid
        memory: list[float] = []

        def sample_memory() -> None:
            while not soak.stop.is_set():
                memory.append(rss_mib(pid))
                time.sleep(0.25)

        for path, expected in asked[:50]:  # warm: the answers kept, the first allocations made
            status, body = Client(serving.url).ask(path)
            assert status == 200 and json.loads(body) == expected
        baseline = rss_mib(pid)
        clients = [book_answers(soak, asked, seed) for seed in range(BOOK_CLIENTS)]
        clients += [hostile(soak, seed) for seed in range(3)]
        clients += [rude(soak), sample_memory]
        soak.run(clients)
        biggest_worker = max(rss_mib(worker) for worker in workers(serving))
        stop_seconds = serving.signal(signal.SIGINT)
        out = serving.output
    finally:
        serving.stop()
    latencies = sorted(soak.latencies)
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[int(0.99 * (len(latencies) - 1))] * 1000
    print(
        f"\nsoak: {soak.requests:,} requests in {SOAK_SECONDS:g} s, statuses {soak.statuses}; "
        f"book answers {len(latencies):,}: p50 {p50:.1f} ms, p99 {p99:.1f} ms; server memory "
        f"{baseline:.0f} -> at most {max(memory):.0f} MiB; largest worker "
        f"{biggest_worker:.0f} MiB; stopped {stop_seconds:.2f} s after Ctrl-C"
    )
    assert not soak.wrong, soak.wrong[:5]
    assert len(latencies) > 1_000
    assert not [status for status in soak.statuses if status >= 500 or status == 0]
    assert {429, 422, 431, 413, 400} <= set(
        soak.statuses
    )  # the hostile work was refused or stopped
    assert max(memory) - baseline < 60
    assert biggest_worker < 700
    assert stop_seconds < 2 and serving.process.returncode == 0
    assert out.rstrip().endswith("stopped") and "Traceback" not in out
