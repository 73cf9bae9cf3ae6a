"""Benchmark of ``ttt serve``: position requests over loopback against a 4x4 k=4 book.

10,000 requests of ``/api/games/4x4k4/position`` (positions of random games, written out) from
16 concurrent clients, each on its own keep-alive connection, sent by a lean HTTP/1.1 client
(raw asyncio streams on uvloop) in this process, the server in its own. Every answer is checked:
a 200, a Content-Length, and once the clock has stopped, a JSON body of the position asked.
Prints p50 and p99 latency and requests per second with their ratio to the targets (a ratio
below 1 meets the target), the server's resident memory after the first 1,000 requests and
after the run (target: within 20% of each other), and the CPU time per request of the server
and of the load generator.

    python bench/bench_serve.py                      # builds the book in a temporary directory
    python bench/bench_serve.py --books DIR          # keeps (and reuses) it in DIR
    python bench/bench_serve.py --requests 2000 --clients 4
    python bench/bench_serve.py --constant           # the floor: uvicorn answering a constant
    python bench/bench_serve.py --steps              # CPU per request of each step, no HTTP

After the run it prints the weight of a position page: its HTML (and of it the inline SVG of
the board and the value history) and the files it loads.

``--constant`` sends the same requests to uvicorn serving a bare ASGI app that answers each with
the same JSON of an answer's length: the CPU per request of the HTTP stack alone. ``--steps``
times, in this process, each step of answering the same positions (reading the position, the
book's lookup, the JSON) and the whole route called as an ASGI app without HTTP.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from typing import Any

from tabulate import tabulate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench_query import build, random_positions  # noqa: E402
from common import script  # noqa: E402

from ttt_solve.solver.rules import Rules  # noqa: E402
from ttt_solve.web.links import query  # noqa: E402

P50_TARGET_MS = 5.0
P99_TARGET_MS = 50.0
RPS_TARGET = 1_000
MEMORY_GROWTH_TARGET = 0.20
STEP_PASSES = 3
"""Passes over the positions of each ``--steps`` step; the fastest is shown."""
GAME_POSITIONS = 1_217_977
"""The canonical positions of 4x4 k=4, the rows its book holds."""
WARMUP = 1_000
"""Requests after which the server's memory is taken as the baseline."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def rss_mib(pid: int) -> float:
    """Resident memory of a process, from /proc (Linux)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used, from /proc (Linux)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


CONSTANT_BODY = json.dumps({"position": "....", "padding": "." * 720}).encode()
"""The ``--constant`` app's answer, about as long as an answer of the 4x4 book."""


async def constant_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A bare ASGI app answering every request with :data:`CONSTANT_BODY`."""
    length = str(len(CONSTANT_BODY)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", length)]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": CONSTANT_BODY})


def start_server(
    db: str, port: int, constant: bool = False, memory_rows: int | None = None
) -> subprocess.Popen:
    """The server, answering; with the game's rows in memory unless ``memory_rows`` is 0."""
    argv = [script("ttt"), "serve", "--db", db, "--port", str(port), "--quiet"]
    if memory_rows is not None:
        argv += ["--memory-rows", str(memory_rows)]
    if constant:
        here = os.path.dirname(os.path.abspath(__file__))
        argv = [sys.executable, "-m", "uvicorn", "--app-dir", here, "bench_serve:constant_app"]
        argv += ["--port", str(port), "--no-access-log", "--lifespan", "off"]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"ttt serve stopped at start:\n{server.stdout.read()}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/games", timeout=1).read()
        except OSError:
            time.sleep(0.2)
            continue
        if not constant and (memory_rows is None or memory_rows >= GAME_POSITIONS):
            wait_for_memory(server)  # the server loads a game only if all its rows fit
        return server
    server.kill()
    sys.exit("ttt serve did not answer within 60 s")


def wait_for_memory(server: subprocess.Popen) -> None:
    """Wait until the server says the game's rows are in memory (or why not): the benchmark
    measures the server as it answers once started, not while it loads."""
    assert server.stdout is not None
    while line := server.stdout.readline():
        if line.startswith(f"{Rules(4, 4, 4).name}:"):
            print(f"server: {line.strip()}", flush=True)
            return
    sys.exit("ttt serve stopped before the game's rows were in memory")


async def client(
    port: int,
    paths: list[str],
    latencies: list[float],
    bodies: list[tuple[str, bytes]],
    errors: list[str],
    counter: list[int],
    on_warm: asyncio.Event,
) -> None:
    """One keep-alive connection sending its share of the requests one after another."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for path in paths:
            started = time.perf_counter()
            writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            status = head.split(b" ", 2)[1]
            length = None
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            body = await reader.readexactly(length or 0)
            latencies.append(time.perf_counter() - started)
            if status != b"200" or not length:
                errors.append(f"{status.decode()} {path}: {length} bytes: {body[:200]!r}")
            bodies.append((path, body))
            counter[0] += 1
            if counter[0] == WARMUP:
                on_warm.set()
    finally:
        writer.close()


def check_bodies(bodies: list[tuple[str, bytes]], expected: dict[str, str]) -> list[str]:
    """Errors of the answers: each must be the JSON object of the position its path asked."""
    errors = []
    for path, body in bodies:
        try:
            position = json.loads(body)["position"]
        except (ValueError, KeyError, TypeError) as error:
            errors.append(f"{path}: not an answer ({error}): {body[:200]!r}")
            continue
        if position != expected[path]:
            errors.append(f"{path}: the answer is of {position}, not of {expected[path]}")
    return errors


async def load(port: int, paths: list[str], clients: int, pid: int) -> dict:
    latencies: list[float] = []
    bodies: list[tuple[str, bytes]] = []
    errors: list[str] = []
    counter = [0]
    warm = asyncio.Event()
    memory: dict[str, float] = {}

    async def watch_memory() -> None:
        await warm.wait()
        memory["after_warmup"] = rss_mib(pid)

    watcher = asyncio.create_task(watch_memory())
    shares = [paths[i::clients] for i in range(clients)]
    cpu_before, own_cpu_before = cpu_seconds(pid), time.process_time()
    started = time.perf_counter()
    await asyncio.gather(
        *(client(port, share, latencies, bodies, errors, counter, warm) for share in shares)
    )
    seconds = time.perf_counter() - started
    cpu, own_cpu = cpu_seconds(pid) - cpu_before, time.process_time() - own_cpu_before
    memory["after_run"] = rss_mib(pid)
    if not warm.is_set():
        memory["after_warmup"] = memory["after_run"]
    watcher.cancel()
    return {
        "latencies": latencies,
        "bodies": bodies,
        "errors": errors,
        "seconds": seconds,
        "memory": memory,
        "server_cpu": cpu,
        "client_cpu": own_cpu,
    }


PAGE = "/game/4x4k4?moves=b2,c3,a1,d4"
"""The position page weighed: a game of four moves, so it has its value history."""


def page_weight(port: int, path: str) -> tuple[int, int, dict[str, int]]:
    """The bytes of a page's HTML, of the SVG inline in it, and of each file it loads."""
    base = f"http://127.0.0.1:{port}"
    with urllib.request.urlopen(base + path, timeout=60) as response:
        html = response.read().decode()
    svg = sum(len(part.split("</svg>")[0]) + 6 for part in html.split("<svg")[1:])
    assets = {}
    for name in re.findall(r'(?:href|src)="(/static/[^"]+)"', html):
        with urllib.request.urlopen(base + name, timeout=60) as response:
            assets[name.rsplit("/", 1)[1]] = len(response.read())
    return len(html.encode()), svg, assets


def steps(db: str, texts: list[str]) -> None:
    """Print the CPU time per position of each step of the position route."""
    from ttt_solve.book.oracle import Oracle
    from ttt_solve.book.query import analysis_json
    from ttt_solve.solver.position import Position
    from ttt_solve.web import explorer
    from ttt_solve.web.answers import ENCODER, encode_analysis
    from ttt_solve.web.app import create_app

    rules = Rules(4, 4, 4)
    app = create_app(db)

    def timed(name: str, work: Any) -> None:
        print(f"{name:<56} {1e6 * fastest(work) / len(texts):8.1f} us")

    def fastest(work: Any) -> float:
        """The least CPU time of a few passes (other jobs on the machine only add to it)."""
        seconds = []
        for _ in range(STEP_PASSES):
            started = time.process_time()
            work()
            seconds.append(time.process_time() - started)
        return min(seconds)

    async def route(query_string: bytes) -> None:
        path = "/api/games/4x4k4/position"
        scope = {
            "type": "http",
            "method": "GET",
            "scheme": "http",
            "http_version": "1.1",
            "path": path,
            "raw_path": path.encode(),
            "query_string": query_string,
            "root_path": "",
            "headers": [(b"host", b"127.0.0.1")],
            "state": {},
        }

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] != 200:
                raise RuntimeError(f"{message['status']} for {query_string!r}")

        await app(scope, receive, send)

    async def run() -> None:
        async with app.router.lifespan_context(app):
            server = app.state.explorer
            book = server.book
            positions = [Position.parse(text, rules) for text in texts]
            queries = [query(position=text)[1:].encode() for text in texts]
            analyses = [server.analyse(p) for p in positions]
            reader = Oracle(rules, book, search_seconds=0)
            objects = [analysis_json(a) for a in analyses]
            app.state.memory.join()  # the game's rows in memory (its thread's CPU would count)
            timed(
                "Position.parse (the position parameter)",
                lambda: [Position.parse(t, rules) for t in texts],
            )
            held = dict(book.memory)
            timed(
                "Book.find_with_moves from memory",
                lambda: [book.find_with_moves(p) for p in positions],
            )
            book.memory.clear()
            timed(
                "Book.find_with_moves (one query)",
                lambda: [book.find_with_moves(p) for p in positions],
            )
            timed(
                "Book.find + Book.moves (two queries)",
                lambda: [(book.find(p), book.moves(p)) for p in positions],
            )
            book.memory.update(held)
            timed(
                "Oracle.analyse from memory (the answer)",
                lambda: [reader.analyse(p) for p in positions],
            )
            timed(
                "the answer's JSON (encode_analysis)",
                lambda: [encode_analysis(a) for a in analyses],
            )
            timed(
                "  of it: analysis_json (the answer as plain data)",
                lambda: [analysis_json(a) for a in analyses],
            )
            timed("  and its encoding", lambda: [ENCODER.encode(o).encode() for o in objects])
            timed(
                "a URL's answer from memory, encoded (Explorer.position_json)",
                lambda: [server._book_json("4x4k4", q) for q in queries],
            )
            kept = queries[: explorer.JSON_CACHE]  # as many as are kept
            for label, asked in (
                ("the whole route (ASGI, no HTTP), not kept", queries),
                ("the whole route (ASGI, no HTTP), kept", kept),
            ):
                seconds = []
                for _ in range(STEP_PASSES):
                    server._position_json.cache_clear()
                    if asked is kept:
                        for query_string in kept:  # asked once: kept from then on
                            await route(query_string)
                    started = time.process_time()
                    for query_string in asked:
                        await route(query_string)
                    seconds.append(time.process_time() - started)
                print(f"{label:<56} {1e6 * min(seconds) / len(asked):8.1f} us")

    run_loop(run())
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


def run_loop(work: Any) -> Any:
    """``asyncio.run`` on uvloop (a third less CPU per request than asyncio's own loop, which
    serves where uvloop is not installed)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(work)
    return uvloop.run(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", help="folder to keep the 4x4 k=4 book in (reused if there)")
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--constant", action="store_true", help="serve a constant answer from a bare ASGI app"
    )
    parser.add_argument(
        "--steps", action="store_true", help="time each step of the route, in this process"
    )
    parser.add_argument(
        "--memory-rows", type=int, help="ttt serve --memory-rows (0: answer from the book file)"
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="the server on the first core, the load generator on the second (Linux)",
    )
    args = parser.parse_args()

    folder = args.books or tempfile.mkdtemp(prefix="bench-serve-")
    os.makedirs(folder, exist_ok=True)
    db = os.path.join(folder, "4x4k4.sqlite")
    if not os.path.exists(db):
        print(f"building {db} (ttt-solve --size 4 --win 4) ...", flush=True)
        build(db, "4", 4)
    rules = Rules(4, 4, 4)
    positions = [str(p) for p in random_positions(rules, args.requests, args.seed)]
    paths = ["/api/games/4x4k4/position" + query(position=p) for p in positions]
    expected = dict(zip(paths, positions))
    if args.steps:
        steps(db, list(dict.fromkeys(positions)))  # each position once: none is kept yet
        return
    port = free_port()
    server = start_server(db, port, args.constant, args.memory_rows)
    if args.pin:
        first, second, *_ = sorted(os.sched_getaffinity(0))
        for thread in os.listdir(f"/proc/{server.pid}/task"):  # each of its threads
            os.sched_setaffinity(int(thread), {first})
        os.sched_setaffinity(0, {second})
    try:
        result = run_loop(load(port, paths, args.clients, server.pid))
        weight = None if args.constant else page_weight(port, PAGE)
    finally:
        server.terminate()
        server.wait(10)
    if not args.constant:
        result["errors"] += check_bodies(result["bodies"], expected)
    latencies = sorted(result["latencies"])
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] * 1000
    rps = len(latencies) / result["seconds"]
    memory = result["memory"]
    growth = memory["after_run"] / memory["after_warmup"] - 1
    served = "a constant answer (uvicorn, bare ASGI app)" if args.constant else "ttt serve"
    print(
        f"{served}: {len(latencies):,} requests of /api/games/4x4k4/position, "
        f"{args.clients} clients, keep-alive, loopback; {len(result['errors'])} errors; "
        f"{result['seconds']:.2f} s"
    )
    print(
        tabulate(
            [
                (
                    "p50 latency",
                    f"{p50:.2f} ms",
                    f"< {P50_TARGET_MS:g} ms",
                    f"{p50 / P50_TARGET_MS:.2f}",
                ),
                (
                    "p99 latency",
                    f"{p99:.2f} ms",
                    f"< {P99_TARGET_MS:g} ms",
                    f"{p99 / P99_TARGET_MS:.2f}",
                ),
                (
                    "requests per second",
                    f"{rps:,.0f}",
                    f">= {RPS_TARGET:,}",
                    f"{RPS_TARGET / rps:.2f}",
                ),
                (
                    "server memory",
                    f"{memory['after_warmup']:.1f} -> {memory['after_run']:.1f} MiB "
                    f"({100 * growth:+.1f}%)",
                    f"within {100 * MEMORY_GROWTH_TARGET:g}%",
                    f"{abs(growth) / MEMORY_GROWTH_TARGET:.2f}",
                ),
            ],
            headers=("figure", "measured", "target", "ratio"),
        )
    )
    cpu_ms = 1000 * result["server_cpu"] / len(latencies)
    client_ms = 1000 * result["client_cpu"] / len(latencies)
    load_average = os.getloadavg()[0]
    print(
        f"server CPU per request: {cpu_ms:.2f} ms (at most {1000 / cpu_ms:,.0f} requests per "
        f"second per core it is given); the load generator's: {client_ms:.2f} ms; "
        f"load average {load_average:.1f} on {os.cpu_count()} cores. "
        f"With {args.clients} clients each waiting for its answer, p50 is about "
        f"{args.clients} / requests per second (Little's law): a p50 of {P50_TARGET_MS:g} ms "
        f"at {args.clients} clients needs {1000 * args.clients / P50_TARGET_MS:,.0f} per second."
    )
    if weight is not None:
        html, svg, assets = weight
        total = html + sum(assets.values())
        print(
            f"page weight of a position page ({PAGE}): {total:,} bytes: the HTML {html:,} "
            f"(of it {svg:,} of inline SVG: the board and the value history), "
            + ", ".join(f"{name} {size:,}" for name, size in assets.items())
            + "; nothing else is loaded (no web font, no framework, no CDN)"
        )
    for error in result["errors"][:5]:
        print("error:", error)
    if result["errors"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
