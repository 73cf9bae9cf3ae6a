"""Benchmark of the bulk commands on a game stored as a table: a sampled audit, an export of the
early plies, the statistics and an evaluation set, each as a whole process.

    ttt audit --agent heuristic --positions sample:N --size S --win K --db BOOK -q
    ttt export --where 'ply<=4' --size S --win K --db BOOK -q -o FILE
    ttt stats --size S --win K --db BOOK
    ttt evalset --count 2000 --format jsonl --size S --win K --db BOOK -q --out FOLDER

Targets (a 4x5 k=4 table on a 2-core machine): the audit of 2,000 positions within 10 s and 500
MB, the export within 3 s, the statistics within 2 s; on 5x5 k=4 the audit of 10,000 positions
within 60 s and the evaluation set within 2 minutes.

``--bin`` runs the same commands of another installed version (its ``bin`` folder) beside
these, alternating, so that both see the same load; a command of it that runs past
``--timeout`` seconds or ``--memory-cap`` MiB is stopped and shown as such (the audit of 4x5 k=4
used to list every row first: minutes and gigabytes). The build of the book is not timed. A
last rows time what every command pays before its work (Python started and click imported) and
what one that calls a kernel pays (Python, NumPy and Numba started and one cached kernel
called). ``--only`` times some of the commands.

    python bench/bench_bulk.py /tmp/t.sqlite --size 4x5 --win 4
    python bench/bench_bulk.py /tmp/t.sqlite --size 4x5 --win 4 --bin /work/old/.venv/bin
    python bench/bench_bulk.py books.sqlite --size 5 --win 4 --sample 10000
    python bench/bench_bulk.py books.sqlite --size 5 --win 4 --only export stats --runs 3
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

from tabulate import tabulate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_average, script  # noqa: E402


class Timed(NamedTuple):
    seconds: float
    peak_mib: float
    stopped: str  # why it was stopped ("" if it ended by itself)
    returncode: int


def rss_mib(pid: int) -> float:
    """The resident memory of a running process, from ``/proc``."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def timed(argv: list[str], timeout: float, cap_mib: float) -> Timed:
    """Run a command to its end, or stop it past ``timeout`` seconds or ``cap_mib`` MiB; its
    wall time and peak resident memory (of the process alone)."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stopped = ""
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        elapsed = time.perf_counter() - started
        if not stopped and (elapsed > timeout or rss_mib(process.pid) > cap_mib):
            stopped = f"stopped at {elapsed:.0f} s, {rss_mib(process.pid):,.0f} MiB"
            process.kill()
        time.sleep(0.05)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    return Timed(seconds, usage.ru_maxrss / 1024, stopped, process.returncode)


FLOOR = """
import numpy as np
from ttt_solve.solver.rules import parse_game
from ttt_solve.solver.tablebase.positions import stand_for
stand_for(parse_game("3x3k3"), 2, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))
"""
"""What every command that calls a kernel pays first: Python, NumPy and Numba started, and one
cached kernel loaded and called (the Numba start, seconds on a loaded machine)."""

FLOORS = [
    ("(Python and click: python -c 'import click')", "import click"),
    ("(a kernel's start: python -c 'stand_for(...)')", FLOOR),
]


COMMANDS = ("audit", "export", "stats", "evalset")


def commands(args: argparse.Namespace, workdir: str) -> list[tuple[str, list[str]]]:
    game = ["--size", args.size, "--win", args.win, "--db", args.book]
    every = [
        (
            f"audit --agent heuristic --positions sample:{args.sample}",
            ["audit", "--agent", "heuristic", "--positions", f"sample:{args.sample}", *game, "-q"],
        ),
        (
            "export --where 'ply<=4'",
            ["export", "--where", "ply<=4", *game, "-q", "-o", os.path.join(workdir, "e.csv")],
        ),
        ("stats", ["stats", *game]),
        (
            "evalset --count 2000",
            ["evalset", "--count", "2000", "--format", "jsonl", *game, "-q", "--out", workdir],
        ),
    ]
    return [command for command in every if command[0].split()[0] in args.only]


def shown(run: Timed | None) -> tuple[str, str]:
    if run is None:
        return "", ""
    if run.stopped:
        return f"> {run.seconds:.1f} ({run.stopped})", f"{run.peak_mib:,.0f}"
    failed = "" if run.returncode == 0 else f" (exit {run.returncode})"
    return f"{run.seconds:.2f}{failed}", f"{run.peak_mib:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("book", help="a book whose game is stored as a table")
    parser.add_argument("--size", default="4x5")
    parser.add_argument("--win", default="4")
    parser.add_argument("--sample", type=int, default=2000, help="positions the audit draws")
    parser.add_argument("--bin", default=None, help="the bin folder of a version to compare")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds, for --bin's")
    parser.add_argument("--memory-cap", type=float, default=3000.0, help="MiB, for --bin's")
    parser.add_argument("--runs", type=int, default=1, help="runs of each (the median shown)")
    parser.add_argument(
        "--only", nargs="+", choices=COMMANDS, default=COMMANDS, help="the commands to time"
    )
    args = parser.parse_args()
    ours = script("ttt")
    theirs = os.path.join(args.bin, "ttt") if args.bin else None
    rows = []
    with tempfile.TemporaryDirectory(prefix="ttt-bench-") as workdir:
        for name, argv in commands(args, workdir):
            mine, other = [], []
            for _ in range(args.runs):
                mine.append(timed([ours, *argv], 3600, 1e9))
                if theirs is not None:
                    other.append(timed([theirs, *argv], args.timeout, args.memory_cap))
            best = sorted(mine)[len(mine) // 2]
            then = sorted(other)[len(other) // 2] if other else None
            rows.append((name, *shown(best), *shown(then)))
        for name, code in FLOORS:
            floor = sorted(timed([sys.executable, "-c", code], 600, 1e9) for _ in range(args.runs))
            rows.append((name, *shown(floor[len(floor) // 2]), "", ""))
    headers = ["command", "s", "peak MiB"]
    if theirs is not None:
        headers += ["--bin s", "--bin peak MiB"]
    else:
        rows = [row[:3] for row in rows]
    print(f"ttt ... --size {args.size} --win {args.win} --db {args.book}")
    print(tabulate(rows, headers=headers, disable_numparse=True))
    print(f"\n2 cores expected; load average {load_average()} at the end; {args.runs} run(s) each")


if __name__ == "__main__":
    main()
