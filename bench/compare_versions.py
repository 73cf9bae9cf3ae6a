"""Two installed versions of ttt-solve side by side: the same commands, alternated, one run.

Each measure runs ``--repeat`` times on each version, the two versions taking turns so that
both see the same load; the median of each and their ratio (new / old: above 1 the new version
is slower) are printed. The versions are named by the ``bin`` folders of their virtual
environments; the commands are the CLI's, so any two versions with these commands compare.
The prover rows time the search alone, in-process (nodes per second), on both engines.

    python bench/compare_versions.py --old ../old/.venv/bin --new .venv/bin
    python bench/compare_versions.py --old OLD --new NEW --repeat 7 --only solve
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from typing import NamedTuple

from common import measure

# The prover's import path changed when the packages moved under ttt_solve; the snippet
# finds it in either version.
PROVER_SNIPPET = """
import json, sys, time
try:
    from ttt_solve.solver.prover.search import Prover
    from ttt_solve.solver.rules import Rules
    from ttt_solve.solver.position import Position
except ImportError:
    from solver.alphabeta import Prover
    from solver.rules import Rules
    from solver.position import Position
size, k, engine = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rules = Rules.from_size(size, k)
prover = Prover(rules, weak=True, engine=engine)
start = Position.start(rules)
began = time.perf_counter()
result = prover.solve(start)
seconds = time.perf_counter() - began
print(json.dumps({"seconds": seconds, "nodes": prover.nodes}))
"""


class Measure(NamedTuple):
    name: str
    group: str
    run: Callable[[str, str], float]  # (bin folder, scratch folder) -> seconds


def _checked(argv: list[str]) -> tuple[float, str]:
    run = measure(argv)
    if run.returncode != 0:
        raise SystemExit(f"failed ({run.returncode}): {' '.join(argv)}\n{run.output[-2000:]}")
    return run.seconds, run.output


def _solve(size: str, k: int) -> Callable[[str, str], float]:
    def run(bin_dir: str, scratch: str) -> float:
        database = os.path.join(scratch, f"solve-{size}-{k}.sqlite")
        for leftover in (database, database + "-wal", database + "-shm"):
            if os.path.exists(leftover):
                os.remove(leftover)
        argv = [f"{bin_dir}/ttt-solve", "--size", size, "--win", str(k), "--db", database, "-q"]
        return _checked(argv)[0]

    return run


def _book(bin_dir: str, scratch: str, size: str, k: int) -> str:
    """A book of this version's own making, solved once and reused."""
    database = os.path.join(scratch, f"book-{size}-{k}.sqlite")
    if not os.path.exists(database):
        argv = [f"{bin_dir}/ttt-solve", "--size", size, "--win", str(k), "--db", database, "-q"]
        _checked(argv)
    return database


def _ttt(size: str, k: int, *arguments: str) -> Callable[[str, str], float]:
    def run(bin_dir: str, scratch: str) -> float:
        database = _book(bin_dir, scratch, size, k)
        argv = [f"{bin_dir}/ttt", *arguments, "--size", size, "--win", str(k), "--db", database]
        return _checked(argv)[0]

    return run


def _prover(size: str, k: int, engine: str) -> Callable[[str, str], float]:
    def run(bin_dir: str, scratch: str) -> float:
        # -I: the folder it runs in must not shadow the installed packages.
        argv = [f"{bin_dir}/python", "-I", "-c", PROVER_SNIPPET, size, str(k), engine]
        output = _checked(argv)[1]
        figures = json.loads(output.strip().splitlines()[-1])
        return float(figures["seconds"])

    return run


def _prover_process(size: str, k: int) -> Callable[[str, str], float]:
    def run(bin_dir: str, scratch: str) -> float:
        database = os.path.join(scratch, f"prove-{size}-{k}.sqlite")
        if os.path.exists(database):
            os.remove(database)
        argv = [f"{bin_dir}/ttt-solve", "--size", size, "--win", str(k), "--db", database]
        argv += ["--method", "alphabeta", "--book-depth", "0", "-q"]
        return _checked(argv)[0]

    return run


MEASURES = [
    Measure("ttt-solve 3x3 k=3, whole process", "solve", _solve("3", 3)),
    Measure("ttt-solve 4x4 k=3, whole process", "solve", _solve("4", 3)),
    Measure("ttt-solve 4x4 k=4, whole process", "solve", _solve("4", 4)),
    Measure("ttt query, one process, 4x4 k=4", "book", _ttt("4", 4, "query", "--moves", "b2,c3")),
    Measure("ttt stats 4x4 k=4", "book", _ttt("4", 4, "stats", "--json")),
    Measure("ttt export 4x4 k=3 to a file", "book", _ttt("4", 3, "export", "-q", "-o", os.devnull)),
    Measure("ttt verify 4x4 k=4", "book", _ttt("4", 4, "verify")),
    Measure(
        "ttt audit mcts:iterations=1000, every 3x3 position",
        "agents",
        _ttt("3", 3, "audit", "--agent", "mcts:iterations=1000", "--positions", "all", "-q"),
    ),
    Measure("prover (5,4,4) weak, compiled, search only", "prover", _prover("4x5", 4, "compiled")),
    Measure("prover (5,5,4) weak, compiled, search only", "prover", _prover("5", 4, "compiled")),
    Measure("prover (6,4,4) weak, compiled, search only", "prover", _prover("4x6", 4, "compiled")),
    Measure("prover (5,4,4) weak, Python, search only", "prover", _prover("4x5", 4, "python")),
    Measure("prover (5,5,4) whole ttt-solve process", "prover", _prover_process("5", 4)),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="bin folder of the old version's venv")
    parser.add_argument("--new", default=os.path.dirname(sys.executable), help="bin folder")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", help="one group: solve, book, agents or prover")
    options = parser.parse_args()
    chosen = [m for m in MEASURES if options.only in (None, m.group)]
    with open("/proc/loadavg") as loadavg:
        print(f"load average at start: {loadavg.read().split()[0]}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="ttt-compare-") as scratch:
        for version in ("old", "new"):
            os.makedirs(os.path.join(scratch, version))
        for item in chosen:
            times: dict[str, list[float]] = {"old": [], "new": []}
            # One untimed run each first: compiles or loads cached machine code, fills caches.
            for version in ("old", "new"):
                item.run(getattr(options, version), os.path.join(scratch, version))
            for turn in range(options.repeat):
                # Alternate which version goes first, so neither always runs on a warmer cache.
                order = ("old", "new") if turn % 2 == 0 else ("new", "old")
                for version in order:
                    bin_dir = getattr(options, version)
                    times[version].append(item.run(bin_dir, os.path.join(scratch, version)))
            old, new = statistics.median(times["old"]), statistics.median(times["new"])
            ratio = new / old
            verdict = "worse by more than 10%" if ratio > 1.10 else "ok"
            rows.append((item.name, old, new, ratio, verdict))
            print(
                f"{item.name:<55} old {old:8.3f} s  new {new:8.3f} s  new/old {ratio:5.2f}  "
                f"{verdict}",
                flush=True,
            )
    with open("/proc/loadavg") as loadavg:
        print(f"load average at end: {loadavg.read().split()[0]}")
    worse = [row for row in rows if row[3] > 1.10]
    print(f"{len(rows)} measures, {len(worse)} worse by more than 10%")


if __name__ == "__main__":
    main()
