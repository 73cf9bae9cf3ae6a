"""Benchmark of start-up: the whole ``ttt`` process, against ``python -c "import click"``.

Each command runs as its own process, wall time from start to exit; the commands take turns
(one run of each, then the next round), so a change of load falls on all of them alike, and
the figure is the median of the rounds. The project's target: ``ttt --help`` within 2.5 times
``python -c "import click"`` (the cost of a click program that does nothing).

    python bench/bench_start.py                # 5 rounds
    python bench/bench_start.py --rounds 11
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from common import load_average, measure, script  # the bench folder is first on sys.path
from tabulate import tabulate

TARGET = 2.5
"""``ttt --help`` within this many times ``python -c "import click"``."""


def commands(book: str) -> list[tuple[str, list[str]]]:
    """What is timed: the baseline first, then the help texts and a lookup."""
    ttt = script("ttt")
    return [
        ('python -c "import click"', [sys.executable, "-c", "import click"]),
        ("ttt --help", [ttt, "--help"]),
        ("ttt query --help", [ttt, "query", "--help"]),
        ("ttt audit --help", [ttt, "audit", "--help"]),
        ("ttt solve --help", [ttt, "solve", "--help"]),
        ("ttt table --help", [ttt, "table", "--help"]),
        ("ttt-solve --help", [script("ttt-solve"), "--help"]),
        ("ttt query (3x3 book)", [ttt, "query", "x.o/.x./...", "--db", book]),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="runs of each command (default 5)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        book = os.path.join(folder, "3x3.sqlite")
        subprocess.run([script("ttt-solve"), "--size", "3", "--db", book, "-q"], check=True)
        timed = commands(book)
        seconds: dict[str, list[float]] = {name: [] for name, _ in timed}
        print(f"load average at start {load_average()}", flush=True)
        for _ in range(args.rounds):
            for name, argv in timed:
                run = measure(argv)
                if run.returncode != 0:
                    sys.exit(f"{name} failed:\n{run.output}")
                seconds[name].append(run.seconds)
    baseline = statistics.median(seconds[timed[0][0]])
    rows = []
    for name, _ in timed:
        median = statistics.median(seconds[name])
        ratio = median / baseline
        target = f"{ratio / TARGET:.2f}" if name == "ttt --help" else "-"
        rows.append([name, f"{median * 1000:.0f}", f"{ratio:.1f}", target])
    headers = ["command", "median ms", "x click", "ratio to target"]
    print(tabulate(rows, headers=headers, disable_numparse=True))
    print(f"median of {args.rounds} rounds, alternating; load average at end {load_average()}")


if __name__ == "__main__":
    main()
