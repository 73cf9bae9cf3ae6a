"""Benchmark of the main job: ``ttt-solve`` on fresh databases, whole process.

Prints wall time, peak memory and rows written for 3x3, 4x4 k=3 and 4x4 k=4, against the
project's time and memory budgets, and checks the counts against the published ones.

    python bench/bench_solve.py            # the three boards
    python bench/bench_solve.py --with-4x5 # also 4 rows x 5 columns, k=4 (minutes, GiBs)
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile

from tabulate import tabulate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import measure, script  # noqa: E402

BOARDS = [  # size, k, budget seconds, budget peak MiB, canonical, reachable (published)
    ("3", 3, 1.0, None, 765, 5478),
    ("4", 3, None, None, 756387, 6036001),
    ("4", 4, 15.0, 2048, 1217977, 9722011),
]
BOARD_4X5 = ("4x5", 4, 1800.0, 16384, 168720724, 674794169)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--with-4x5", action="store_true", help="also solve 4x5 k=4")
    parser.add_argument("--repeat", type=int, default=1, help="runs per board (best is shown)")
    args = parser.parse_args()
    boards = BOARDS + ([BOARD_4X5] if args.with_4x5 else [])
    table = []
    with tempfile.TemporaryDirectory(prefix="ttt-bench-") as workdir:
        for size, k, budget_s, budget_mib, canonical, reachable in boards:
            runs = []
            for attempt in range(args.repeat):
                db = os.path.join(workdir, f"{size}-{k}-{attempt}.sqlite")
                run = measure(
                    [script("ttt-solve"), "--size", size, "--win", str(k), "--db", db, "--quiet"]
                )
                if run.returncode != 0:
                    sys.exit(f"ttt-solve --size {size} --win {k} failed:\n{run.output}")
                runs.append((run, db))
            run, db = min(runs, key=lambda r: r[0].seconds)
            with sqlite3.connect(db) as conn:
                rows = conn.execute("SELECT count(*) FROM positions").fetchone()[0]
                stored = conn.execute("SELECT positions, reachable FROM games").fetchone()
            counts_ok = rows == canonical and tuple(stored) == (canonical, reachable)
            table.append(
                [
                    f"{size} k={k}",
                    f"{run.seconds:.2f}",
                    f"{budget_s:g}" if budget_s else "-",
                    f"{run.seconds / budget_s:.2f}" if budget_s else "-",
                    f"{run.peak_mib:.0f}",
                    f"{budget_mib}" if budget_mib else "-",
                    f"{rows:,}",
                    f"{os.path.getsize(db) / 2**20:.1f}",
                    "yes" if counts_ok else "NO",
                ]
            )
    print(
        tabulate(
            table,
            headers=[
                "board",
                "wall s",
                "budget s",
                "ratio",
                "peak MiB",
                "budget MiB",
                "rows written",
                "file MiB",
                "counts match",
            ],
        )
    )
    print(f"\n{os.cpu_count()} cores; ratio = wall / budget (under 1 is within the budget)")


if __name__ == "__main__":
    main()
