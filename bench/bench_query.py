"""Benchmark of reading a book: ``ttt query`` per process, API lookups, ``ttt export`` memory.

Prints figures and their ratio to the project's budgets (a ratio below 1 meets the budget):

* one ``ttt query`` process on a 4x4 k=4 book, whole process: under 0.5 s;
* 10,000 random lookups through the Python API on that book: under 2 s;
* ``ttt export --expand`` of 4x4 k=3: peak memory under 500 MiB.

    python bench/bench_query.py                      # builds the books in a temporary directory
    python bench/bench_query.py --books DIR          # keeps (and reuses) them in DIR
    python bench/bench_query.py --skip-export        # the query figures only (seconds)
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

from common import measure, script  # the bench folder is the script's own, first on sys.path
from tabulate import tabulate

from ttt_solve.book.reader import open_book
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

QUERY_TARGET_S = 0.5
LOOKUPS = 10_000
LOOKUP_TARGET_S = 2.0
EXPORT_TARGET_MIB = 500


def build(db: str, size: str, k: int) -> None:
    """Solve a game into ``db`` unless it is there already."""
    run = measure([script("ttt-solve"), "--size", size, "--win", str(k), "--db", db, "--quiet"])
    if run.returncode != 0:
        sys.exit(f"ttt-solve --size {size} --win {k} failed:\n{run.output}")


def random_positions(rules: Rules, count: int, seed: int) -> list[Position]:
    """Positions of random games, stopped at a uniformly random ply."""
    rng = random.Random(seed)
    positions = []
    while len(positions) < count:
        position = Position.start(rules)
        for _ in range(rng.randrange(rules.cells + 1)):
            if position.is_terminal:
                break
            position = position.play(rng.choice(position.legal_moves()))
        positions.append(position)
    return positions


def query_path_modules(db: str) -> str:
    """Which heavy packages one ``ttt query`` imports (run in a fresh interpreter)."""
    code = (
        "import sys\nfrom ttt_solve.cli.main import ttt\n"
        f"try: ttt(['query', '--size', '4', '--win', '4', '--db', {db!r}])\n"
        "except SystemExit: pass\n"
        "print(' '.join(p for p in ('numpy', 'sqlalchemy', 'tabulate', 'numba',"
        " 'ttt_solve.solver.prover.search', 'ttt_solve.solver.exhaustive.solve')"
        " if p in sys.modules)"
        " or 'none', file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", help="directory to keep the books in (reused if present)")
    parser.add_argument("--runs", type=int, default=10, help="ttt query processes to time")
    parser.add_argument("--skip-export", action="store_true", help="do not time ttt export")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ttt-bench-") as scratch:
        books = args.books or scratch
        os.makedirs(books, exist_ok=True)
        db44 = os.path.join(books, "4x4k4.sqlite")
        build(db44, "4", 4)
        rows = []

        # One process per query, as a person or a shell script would run it.
        position = "x.../.o../..x./...."
        argv = [script("ttt"), "query", position, "--size", "4", "--win", "4", "--db", db44]
        measure(argv)  # warm the page cache: the figure is the process, not the disk
        runs = [measure(argv) for _ in range(args.runs)]
        if any(run.returncode for run in runs):
            sys.exit(f"ttt query failed:\n{runs[0].output}")
        median = statistics.median(run.seconds for run in runs)
        rows.append(
            [
                f"ttt query, 4x4 k=4 (median of {args.runs} processes)",
                f"{median:.3f} s (min {min(r.seconds for r in runs):.3f}, "
                f"max {max(r.seconds for r in runs):.3f})",
                f"{QUERY_TARGET_S} s",
                f"{median / QUERY_TARGET_S:.2f}",
            ]
        )
        rows.append(
            ["  peak memory of that process", f"{max(r.peak_mib for r in runs):.0f} MiB", "-", "-"]
        )
        rows.append(["  heavy imports on the query path", query_path_modules(db44), "-", "-"])
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        rows.append(
            [
                "  bare interpreter start, for scale",
                f"{time.perf_counter() - started:.3f} s",
                "-",
                "-",
            ]
        )

        # The Python API, one lookup per call and batched.
        rules = Rules(4, 4, 4)
        sample = random_positions(rules, LOOKUPS, seed=1)
        with open_book(db44) as book:
            book.game(rules)
            started = time.perf_counter()
            for position in sample:
                book.find(position)
            one_by_one = time.perf_counter() - started
            started = time.perf_counter()
            found = book.find_many(sample)
            batched = time.perf_counter() - started
            assert len(found) == len(set(sample))
            started = time.perf_counter()
            for position in sample[:1000]:
                book.moves(position)
            moves_s = time.perf_counter() - started
        rows.append(
            [
                f"API: {LOOKUPS:,} random Book.find calls, 4x4 k=4",
                f"{one_by_one:.3f} s",
                f"{LOOKUP_TARGET_S} s",
                f"{one_by_one / LOOKUP_TARGET_S:.2f}",
            ]
        )
        rows.append(
            [f"API: the same {LOOKUPS:,} in one Book.find_many", f"{batched:.3f} s", "-", "-"]
        )
        rows.append(
            ["API: 1,000 Book.moves calls (position + children)", f"{moves_s:.3f} s", "-", "-"]
        )

        if not args.skip_export:
            db43 = os.path.join(books, "4x4k3.sqlite")
            build(db43, "4", 3)
            for size, k, db, expand, target in (
                ("4", 3, db43, True, EXPORT_TARGET_MIB),
                ("4", 3, db43, False, None),
                ("4", 4, db44, True, None),
            ):
                argv = [
                    script("ttt"),
                    "export",
                    "--size",
                    size,
                    "--win",
                    str(k),
                    "--db",
                    db,
                    "--format",
                    "csv",
                    "-q",
                    "-o",
                    os.devnull,
                ]
                run = measure(argv + (["--expand"] if expand else []))
                if run.returncode:
                    sys.exit(f"ttt export failed:\n{run.output}")
                label = f"ttt export{' --expand' if expand else ''}, {size}x{size} k={k}"
                rows.append(
                    [
                        label + " (peak memory)",
                        f"{run.peak_mib:.0f} MiB in {run.seconds:.1f} s",
                        f"{target} MiB" if target else "-",
                        f"{run.peak_mib / target:.2f}" if target else "-",
                    ]
                )
        print(tabulate(rows, headers=["measure", "figure", "target", "ratio"]))


if __name__ == "__main__":
    main()
