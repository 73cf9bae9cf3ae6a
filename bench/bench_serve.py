"""Benchmark of ``ttt serve``: position requests over loopback against a 4x4 k=4 book.

10,000 requests of ``/api/games/4x4k4/position`` (positions of random games, written out) from
16 concurrent clients, each on its own keep-alive connection; every answer must be a 200.
Prints p50 and p99 latency and requests per second with their ratio to the targets (a ratio
below 1 meets the target), and the server's resident memory after the first 1,000 requests and
after the run (target: within 20% of each other).

    python bench/bench_serve.py                      # builds the book in a temporary directory
    python bench/bench_serve.py --books DIR          # keeps (and reuses) it in DIR
    python bench/bench_serve.py --requests 2000 --clients 4
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

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


def start_server(db: str, port: int) -> subprocess.Popen:
    argv = [script("ttt"), "serve", "--db", db, "--port", str(port), "--quiet"]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"ttt serve stopped at start:\n{server.stdout.read()}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/games", timeout=1).read()
            return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    sys.exit("ttt serve did not answer within 60 s")


async def client(
    port: int,
    paths: list[str],
    latencies: list[float],
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
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            body = await reader.readexactly(length)
            latencies.append(time.perf_counter() - started)
            if status != b"200":
                errors.append(f"{status.decode()} {path}: {body[:200].decode(errors='replace')}")
            counter[0] += 1
            if counter[0] == WARMUP:
                on_warm.set()
    finally:
        writer.close()


async def load(port: int, paths: list[str], clients: int, pid: int) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    counter = [0]
    warm = asyncio.Event()
    memory: dict[str, float] = {}

    async def watch_memory() -> None:
        await warm.wait()
        memory["after_warmup"] = rss_mib(pid)

    watcher = asyncio.create_task(watch_memory())
    shares = [paths[i::clients] for i in range(clients)]
    cpu_before = cpu_seconds(pid)
    started = time.perf_counter()
    await asyncio.gather(
        *(client(port, share, latencies, errors, counter, warm) for share in shares)
    )
    seconds = time.perf_counter() - started
    cpu = cpu_seconds(pid) - cpu_before
    memory["after_run"] = rss_mib(pid)
    if not warm.is_set():
        memory["after_warmup"] = memory["after_run"]
    watcher.cancel()
    return {
        "latencies": latencies,
        "errors": errors,
        "seconds": seconds,
        "memory": memory,
        "server_cpu": cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", help="folder to keep the 4x4 k=4 book in (reused if there)")
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    folder = args.books or tempfile.mkdtemp(prefix="bench-serve-")
    os.makedirs(folder, exist_ok=True)
    db = os.path.join(folder, "4x4k4.sqlite")
    if not os.path.exists(db):
        print(f"building {db} (ttt-solve --size 4 --win 4) ...", flush=True)
        build(db, "4", 4)
    rules = Rules(4, 4, 4)
    paths = [
        "/api/games/4x4k4/position" + query(position=str(p))
        for p in random_positions(rules, args.requests, args.seed)
    ]
    port = free_port()
    server = start_server(db, port)
    try:
        result = asyncio.run(load(port, paths, args.clients, server.pid))
    finally:
        server.terminate()
        server.wait(10)
    latencies = sorted(result["latencies"])
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] * 1000
    rps = len(latencies) / result["seconds"]
    memory = result["memory"]
    growth = memory["after_run"] / memory["after_warmup"] - 1
    print(
        f"{len(latencies):,} requests of /api/games/4x4k4/position, {args.clients} clients, "
        f"keep-alive, loopback; {len(result['errors'])} errors; {result['seconds']:.2f} s"
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
    load_average = os.getloadavg()[0]
    print(
        f"server CPU per request: {cpu_ms:.2f} ms (at most {1000 / cpu_ms:,.0f} requests per "
        f"second per core it is given); load average {load_average:.1f} on {os.cpu_count()} cores. "
        f"With {args.clients} clients each waiting for its answer, p50 is about "
        f"{args.clients} / requests per second (Little's law): a p50 of {P50_TARGET_MS:g} ms "
        f"at {args.clients} clients needs {1000 * args.clients / P50_TARGET_MS:,.0f} per second."
    )
    for error in result["errors"][:5]:
        print("error:", error)
    if result["errors"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
