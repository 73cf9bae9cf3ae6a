"""Benchmark of the main job: the exhaustive solve against a single-threaded C program.

Prints for each board, in one run: the in-process solve alone (plies solved, nothing
written, in a process whose compiled kernels are already loaded), the whole ``ttt-solve``
process on a fresh SQLite book (start-up, solve and write), and the C reference solver of
``bench/c/solve.c`` (built here with the system's ``cc -O2`` into ``bench/out/``); then the
ratios to the C program, peak memory, and whether the counts match the published ones.

    python bench/bench_solve.py              # 4x4 k=3 and 4x4 k=4
    python bench/bench_solve.py --with-4x5   # also 4 rows x 5 columns, k=4 (minutes, GiBs)
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile

from tabulate import tabulate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import measure, script  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
C_SOURCE = os.path.join(HERE, "c", "solve.c")
C_PROGRAM = os.path.join(HERE, "out", "solve")

BOARDS = [  # rows, cols, k, canonical, reachable (published)
    (4, 4, 3, 756387, 6036001),
    (4, 4, 4, 1217977, 9722011),
]
BOARD_4X5 = (4, 5, 4, 168720724, 674794169)

SOLVE_ALONE = """
import sys, time
from ttt_solve.solver.exhaustive import ExhaustiveSolver
from ttt_solve.solver.rules import Rules
for _ in ExhaustiveSolver(Rules(2, 2, 2)).solve():  # load the compiled kernels
    pass
rules = Rules(*map(int, sys.argv[1:4]))
started = time.perf_counter()
rows = sum(len(table.keys) for table in ExhaustiveSolver(rules).solve())
print(time.perf_counter() - started, rows)
"""


def build_c() -> None:
    """Compile the C reference solver (``cc -O2``) into ``bench/out/``."""
    os.makedirs(os.path.dirname(C_PROGRAM), exist_ok=True)
    subprocess.run(["cc", "-O2", "-o", C_PROGRAM, C_SOURCE], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--with-4x5", action="store_true", help="also solve 4x5 k=4")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (median shown)")
    args = parser.parse_args()
    build_c()
    boards = BOARDS + ([BOARD_4X5] if args.with_4x5 else [])
    table = []
    with tempfile.TemporaryDirectory(prefix="ttt-bench-") as workdir:
        for rows, cols, k, canonical, reachable in boards:
            name = f"{rows}x{cols} k={k}"
            repeat = 1 if (rows, cols) == (4, 5) else args.repeat
            alone, whole, c_runs = [], [], []
            for attempt in range(repeat):  # interleaved: a load spike hits all three alike
                if (rows, cols) != (4, 5):  # the 4x5 solve alone would take minutes more
                    run = measure([sys.executable, "-c", SOLVE_ALONE, str(rows), str(cols), str(k)])
                    if run.returncode != 0:
                        sys.exit(f"{name}: in-process solve failed:\n{run.output}")
                    alone.append(float(run.output.split()[0]))
                db = os.path.join(workdir, f"{rows}x{cols}-{k}-{attempt}.sqlite")
                size = str(rows) if rows == cols else f"{rows}x{cols}"
                argv = [script("ttt-solve"), "--size", size, "--win", str(k), "--db", db]
                run = measure([*argv, "--quiet"])
                if run.returncode != 0:
                    sys.exit(f"{name}: ttt-solve failed:\n{run.output}")
                whole.append(run)
                c_run = measure([C_PROGRAM, str(rows), str(cols), str(k)])
                if c_run.returncode != 0:
                    sys.exit(f"{name}: the C program failed:\n{c_run.output}")
                c_runs.append(c_run)
            with sqlite3.connect(db) as conn:
                stored = conn.execute("SELECT positions, reachable FROM games").fetchone()
            c_counts = f"canonical {canonical} reachable {reachable}" in c_runs[0].output
            whole_s = median([run.seconds for run in whole])
            c_s = median([run.seconds for run in c_runs])
            alone_s = median(alone) if alone else None
            table.append(
                [
                    name,
                    f"{alone_s:.2f}" if alone_s is not None else "-",
                    f"{whole_s:.2f}",
                    f"{c_s:.2f}",
                    f"{alone_s / c_s:.2f}" if alone_s is not None else "-",
                    f"{whole_s / c_s:.2f}",
                    f"{max(run.peak_mib for run in whole):.0f}",
                    f"{max(run.peak_mib for run in c_runs):.0f}",
                    "yes" if tuple(stored) == (canonical, reachable) and c_counts else "NO",
                ]
            )
    print(
        tabulate(
            table,
            headers=[
                "board",
                "solve s",
                "whole s",
                "C s",
                "solve/C",
                "whole/C",
                "peak MiB",
                "C peak MiB",
                "counts match",
            ],
        )
    )
    load = os.getloadavg()[0]
    print(
        f"\n{os.cpu_count()} cores, load average {load:.1f}; median of {args.repeat} runs "
        "(4x5: one); solve = in-process solve alone, whole = the ttt-solve process with the "
        "SQLite write"
    )


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


if __name__ == "__main__":
    main()
