"""Benchmark of the tablebase build against the single-threaded C solver, side by side.

For each board, in one run: the whole table build as a process of its own
(``ttt table build GAME FOLDER``: start-up, every ply, the files written and flushed) and the
C reference solver of ``bench/c/solve.c`` (built as ``bench/bench_solve.py`` builds it); their
wall times, the ratio, each one's peak memory, the
table's bytes on disk, and whether both found the published counts. Then the look-up of a
position's value and every move's value from the table, in one process (median of 2,000 random
positions of the game).

    python bench/bench_tablebase.py              # 4x4 k=4
    python bench/bench_tablebase.py --with-4x5   # also 4 rows x 5 columns, k=4 (minutes)
    python bench/bench_tablebase.py --probe-5x5  # the 5x5 k=4 ply step's rate, and the time
    python bench/bench_tablebase.py --probe-build 4x6k4  # the same of another board
    python bench/bench_tablebase.py --read-5x5 BOOK  # look-ups, queries, an export of 5x5 k=4
    python bench/bench_tablebase.py --probe BOOK     # the probe of the largest table BOOK holds

Then, for each board, ``ttt-solve`` as a whole process (a table by default on these boards:
start-up, build, catalogue in a new book) against the C program, ``--runs`` times each,
alternating, so that both see the same load: the medians and their ratio (``--whole-only``:
this alone, as ``--with-4x5 --whole-only --runs 1``).

``--read-5x5 BOOK`` reads the 5x5 k=4 table that BOOK catalogues (built apart): the look-up of
a position's value and every move's value in one process (median of 2,000), ``ttt query`` as
a whole process on seeded random positions (``--runs`` of them; the modules byte-compiled
first, as installed), and ``ttt export --where 'ply<=6'`` as a whole process.

``--probe BOOK`` times the probe of the largest game BOOK holds as a table (``--game 5x5k4``:
that one), in one process,
side by side: the book's answer through rows (``Book.find_with_moves``), ``probe`` (the value
alone), ``probe_moves`` (the value and every move's) plain and compiled, p50 and p99 over
2,000 positions of random games; ``probe_many`` over ``--many`` positions, all plies mixed and
one ply (positions a second, and the cores it kept busy); then ``ttt query`` as a whole
process against Python's start-up with ``import click`` alone, ``--runs`` of each, alternating.

``--probe-5x5`` times the ply step of 5x5 k=4 on a slice of 2**24 numbers from the middle of
a few plies (all of a smaller ply), against a next ply of its true size (GBs) whose records all
say "draw": the memory traffic of the real build, not its values. From the rates it estimates
the whole build's time (without writing the files). ``--probe-build GAME``: the same of GAME.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile

from bench_solve import BOARD_4X5, C_PROGRAM, build_c, remove_book
from common import board_arguments, chosen_boards, load_average, measure, script
from tabulate import tabulate

BOARDS = [(4, 4, 4, 1217977, 9722011)]

POSITIONS = """
rng = random.Random(1)
positions = []
while len(positions) < 2000:  # random games, cut at a random ply
    position = Position.start(rules)
    for _ in range(rng.randrange(rules.cells)):
        if position.is_terminal:
            break
        position = position.play(rng.choice(position.legal_moves()))
    positions.append(position)
"""
"""The positions the look-ups are timed on, in the scripts below (``rules`` given)."""

LOOKUPS = (
    """
import random, statistics, sys, time
from ttt_solve.solver.tablebase.probe import open_tablebase
from ttt_solve.solver.position import Position
table = open_tablebase(sys.argv[1], compile_after=None)
rules = table.rules
"""
    + POSITIONS
    + """
times = []
for position in positions:
    started = time.perf_counter()
    table.probe_moves(position)
    times.append(time.perf_counter() - started)
times.sort()
print(statistics.median(times) * 1e3, times[int(0.99 * len(times))] * 1e3)
"""
)

PROBES = (
    """
import contextlib, json, random, statistics, sys, time
import numpy as np
from ttt_solve.book.reader import open_book
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import parse_game
from ttt_solve.solver.tablebase.probe import open_tablebase

book_path, many, game = sys.argv[1], int(sys.argv[2]), sys.argv[3]
stack = contextlib.ExitStack()
book = stack.enter_context(open_book(book_path))
games = book.games()  # smallest board first
info = next((g for g in games if g.rules == parse_game(game)), None) if game else games[-1]
if info is None:
    sys.exit(f"{book_path} holds no {game}")
rules = info.rules
folder = book.table_folder(info)
"""
    + POSITIONS
    + """
def timed(answer):
    for position in positions[:50]:
        answer(position)  # the files mapped and the pages read before the clock
    times = []
    for position in positions:
        started = time.perf_counter()
        answer(position)
        times.append(time.perf_counter() - started)
    times.sort()
    return [statistics.median(times) * 1e3, times[int(0.99 * len(times))] * 1e3]

out = {"game": rules.name}
book.tablebase(rules).compile()  # as a process that asks many positions has it
out["book"] = timed(book.find_with_moves)
table = open_tablebase(folder, compile_after=None)
out["value"] = timed(table.probe)
out["plain"] = timed(table.probe_moves)
table.compile()
out["compiled"] = timed(table.probe_moves)
pick = np.random.default_rng(0)
middle = [p for p in positions if p.ply == rules.cells // 2]
for name, chosen in (("mixed", positions), ("one ply", middle)):
    images = [p.transform(i % len(rules.symmetries)) for i, p in enumerate(chosen)]
    x = np.array([p.x for p in images], dtype=np.int64)
    o = np.array([p.o for p in images], dtype=np.int64)
    table.probe_many(x, o)  # compiled, the class tables made
    at = pick.integers(0, len(x), many)
    xs, os_ = x[at], o[at]
    best = None
    for _ in range(3):
        started, cpu = time.perf_counter(), time.process_time()
        table.probe_many(xs, os_)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
        if best is None or seconds < best[0]:
            best = (seconds, cpu_seconds)
    out[name] = [many / best[0], best[1] / best[0]]
print(json.dumps(out))
"""
)

PROBE = """
import sys, time
import numpy as np
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.classes import class_tables
from ttt_solve.solver.tablebase.index import ply_records
from ttt_solve.solver.tablebase.record import DRAW
from ttt_solve.solver.tablebase.step import back_up_range, ply_step
rules = Rules(*(int(part) for part in sys.argv[2:5]))
ply = int(sys.argv[1])
step = ply_step(rules, ply, *class_tables(rules, ply, {}))
records = step.records
child = np.full(ply_records(rules, ply + 1), DRAW, dtype=np.uint8)
back_up_range(step, 0, 1 << 12, child)  # compiled and paged in before the clock starts
first = max(0, records // 2 - (1 << 23))
stop = min(records, first + (1 << 24))
started = time.perf_counter()
made, counts = back_up_range(step, first, stop, child)
seconds = time.perf_counter() - started
canonical_open = int(counts.counts[:, 0, 0].sum())
print(seconds, stop - first, canonical_open * (rules.cells - ply))
"""

PROBE_PLIES = (8, 12, 16, 20)


def probe_build(game: str) -> None:
    """The ply step's rate on slices of a game's plies (5x5k4, 4x6k4), and the whole build's
    time from it."""
    from ttt_solve.solver.rules import parse_game
    from ttt_solve.solver.tablebase.index import ply_records

    rules = parse_game(game)
    board = [str(rules.rows), str(rules.cols), str(rules.k)]
    rates = {}
    rows_out = []
    for ply in PROBE_PLIES:
        run = measure([sys.executable, "-c", PROBE, str(ply), *board])
        if run.returncode != 0:
            sys.exit(f"ply {ply}: the probe failed:\n{run.output}")
        seconds, numbers, reads = (float(v) for v in run.output.split())
        rates[ply] = numbers / seconds
        rows_out.append(
            [
                ply,
                f"{ply_records(rules, ply):,}",
                f"{numbers / seconds:,.0f}",
                f"{reads / seconds:,.0f}",
                f"{run.peak_mib:.0f}",
            ]
        )
    headers = ["ply", "numbers", "numbers/s", "child reads/s (canonical open x empties)"]
    print(tabulate(rows_out, headers=[*headers, "peak MiB"]))
    total = 0.0
    for ply in range(rules.cells + 1):
        nearest = min(PROBE_PLIES, key=lambda p: abs(p - ply))
        total += ply_records(rules, ply) / rates[nearest]
    print(
        f"\n{rules.name} whole build at these rates (each ply at its nearest probed ply's): "
        f"{total / 3600:.1f} h; {os.cpu_count()} cores, load average {load_average()} at the end"
    )


def solve_against_c(boards: list[tuple[int, ...]], runs: int) -> None:
    """``ttt-solve`` (a table by default) as a whole process against the C program, alternating."""
    rows_out = []
    with tempfile.TemporaryDirectory(prefix="bench-tablebase-") as workdir:
        for rows, cols, k, canonical, _ in boards:
            db = os.path.join(workdir, "book.sqlite")
            argv = [script("ttt-solve"), "--size", f"{rows}x{cols}", "--win", str(k), "--db", db]
            table_runs, c_runs = [], []
            for _ in range(runs):
                remove_book(db)
                shutil.rmtree(db + ".tables", ignore_errors=True)
                run = measure(argv)
                if run.returncode != 0 or f"{canonical:,}" not in run.output:
                    sys.exit(f"{rows}x{cols} k={k}: ttt-solve failed:\n{run.output}")
                table_runs.append(run)
                c_runs.append(measure([C_PROGRAM, str(rows), str(cols), str(k)]))
            table_s = statistics.median(run.seconds for run in table_runs)
            c_s = statistics.median(run.seconds for run in c_runs)
            ratios = [t.seconds / c.seconds for t, c in zip(table_runs, c_runs, strict=True)]
            rows_out.append(
                [
                    f"{rows}x{cols} k={k}",
                    f"{table_s:.2f}",
                    f"{c_s:.2f}",
                    f"{table_s / c_s:.2f}",
                    f"{min(ratios):.2f}-{max(ratios):.2f}",
                    f"{max(run.peak_mib for run in table_runs):.0f}",
                ]
            )
    headers = ["board", "ttt-solve s", "C s", "ratio", "ratio per run", "peak MiB"]
    print(tabulate(rows_out, headers=headers))
    print(
        f"\n{os.cpu_count()} cores, load average {load_average()} at the end; median of "
        f"{runs} runs each, alternating; ttt-solve = the whole process, a table by default "
        "(start-up, build, catalogue in a new book)"
    )


def random_positions(rules: object, count: int, seed: int) -> list[str]:
    """Positions of seeded random games, each cut at a random ply, as text."""
    from ttt_solve.solver.position import Position

    rng = random.Random(seed)
    found = []
    while len(found) < count:
        position = Position.start(rules)  # type: ignore[arg-type]
        for _ in range(rng.randrange(min(12, position.rules.cells))):
            if position.is_terminal:
                break
            position = position.play(rng.choice(position.legal_moves()))
        found.append(str(position))
    return found


def compile_sources() -> None:
    """Byte-compile the project's modules, as an installed package holds them: a process that
    compiles its sources at each start (``PYTHONDONTWRITEBYTECODE``, a fresh checkout) pays
    about 70 ms for it on this machine."""
    import compileall

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for folder in ("ttt_solve", "solver", "book", "cli", "agents", "web", "rl"):
        compileall.compile_dir(os.path.join(root, folder), quiet=1)


def read_5x5(book: str, runs: int) -> None:
    """Look-ups, whole ``ttt query`` processes and an export of the 5x5 k=4 table in ``book``."""
    from ttt_solve.book.reader import open_book
    from ttt_solve.solver.rules import Rules

    rules = Rules(5, 5, 4)
    with open_book(book) as opened:
        folder = opened.table_folder(opened.game(rules))
    if folder is None:
        sys.exit(f"{book}: 5x5 k=4 is not stored as a table there")
    lookup = measure([sys.executable, "-c", LOOKUPS, str(folder)])
    if lookup.returncode != 0:
        sys.exit(f"the look-ups failed:\n{lookup.output}")
    p50, p99 = (float(v) for v in lookup.output.split())
    compile_sources()
    ttt = script("ttt")
    game = ["--size", "5", "--win", "4", "--db", book]
    queries = []
    for position in random_positions(rules, runs, seed=3):
        run = measure([ttt, "query", *game, position])
        if run.returncode != 0:
            sys.exit(f"ttt query {position} failed:\n{run.output}")
        queries.append(run)
    with tempfile.TemporaryDirectory(prefix="bench-tablebase-") as workdir:
        target = os.path.join(workdir, "ply6.csv")
        export = measure([ttt, "export", *game, "--where", "ply<=6", "-o", target])
        if export.returncode != 0:
            sys.exit(f"ttt export failed:\n{export.output}")
        exported = os.path.getsize(target)
    seconds = sorted(run.seconds for run in queries)
    print(
        tabulate(
            [
                [
                    "look-up in a process (2,000 positions)",
                    f"p50 {p50:.3f} ms",
                    f"p99 {p99:.3f} ms",
                ],
                [
                    f"ttt query, whole process ({runs} positions)",
                    f"median {statistics.median(seconds):.3f} s",
                    f"max {seconds[-1]:.3f} s",
                ],
                [
                    "ttt export --where 'ply<=6' (521,369 rows, CSV)",
                    f"{export.seconds:.2f} s",
                    f"{exported / 1e6:.1f} MB, peak {export.peak_mib:.0f} MiB",
                ],
            ],
            headers=["5x5 k=4", "time", ""],
        )
    )
    print(f"\n{os.cpu_count()} cores, load average {load_average()} at the end")


def probes(book: str, many: int, runs: int, game: str) -> None:
    """The probe of ``game`` (or else the largest game ``book`` holds) as a table, side by
    side with the book's answer through rows, and ``ttt query`` as a whole process beside
    Python's start-up."""
    run = measure([sys.executable, "-c", PROBES, book, str(many), game])
    if run.returncode != 0:
        sys.exit(f"the probes failed:\n{run.output}")
    found = json.loads(run.output.strip().splitlines()[-1])
    compile_sources()
    ttt = script("ttt")
    from ttt_solve.solver.rules import parse_game

    rules = parse_game(found["game"])
    game = ["--size", f"{rules.rows}x{rules.cols}", "--win", str(rules.k), "--db", book]
    queries, starts = [], []
    for position in random_positions(rules, runs, seed=3):
        starts.append(measure([sys.executable, "-c", "import click"]))
        query = measure([ttt, "query", *game, position])
        if query.returncode != 0:
            sys.exit(f"ttt query {position} failed:\n{query.output}")
        queries.append(query)
    rows_out = [
        ["the book's answer, compiled (Book.find_with_moves)", *found["book"]],
        ["probe: the value alone, plain Python (probe)", *found["value"]],
        ["probe: value and every move's, plain (probe_moves)", *found["plain"]],
        ["the same, compiled (after compile())", *found["compiled"]],
    ]
    print(
        tabulate(
            [[name, f"{p50:.3f}", f"{p99:.3f}"] for name, p50, p99 in rows_out],
            headers=[f"{found['game']}: one position, 2,000 of random games", "p50 ms", "p99 ms"],
        )
    )
    print()
    print(
        tabulate(
            [
                [
                    f"probe_many, {name}",
                    f"{rate / 1e6:.2f}",
                    f"{cores:.2f}",
                    f"{rate / cores / 1e6:.2f}",
                ]
                for name in ("mixed", "one ply")
                for rate, cores in [found[name]]
            ],
            headers=[f"{many:,} positions", "M/s", "cores used", "M/s a core"],
        )
    )
    print()
    median = statistics.median
    print(
        tabulate(
            [
                [
                    "ttt query (whole process)",
                    f"{median(q.seconds for q in queries):.3f}",
                    f"{max(q.peak_mib for q in queries):.0f}",
                ],
                [
                    "python -c 'import click' (start-up alone)",
                    f"{median(s.seconds for s in starts):.3f}",
                    f"{max(s.peak_mib for s in starts):.0f}",
                ],
            ],
            headers=[f"{runs} runs each, alternating", "median s", "peak MiB"],
        )
    )
    print(f"\n{os.cpu_count()} cores, load average {load_average()} at the end")


def main() -> None:
    parser = board_arguments(__doc__.splitlines()[0])
    parser.add_argument("--probe-5x5", action="store_true", help="the 5x5 k=4 rate and time")
    parser.add_argument("--probe-build", metavar="GAME", help="the same of GAME (as 4x6k4)")
    parser.add_argument("--read-5x5", metavar="BOOK", help="read the 5x5 k=4 table BOOK holds")
    parser.add_argument("--runs", type=int, default=3, help="runs of each timed process")
    parser.add_argument("--probe", metavar="BOOK", help="probe the largest table BOOK holds")
    parser.add_argument("--many", type=int, default=2_000_000, help="positions of probe_many")
    parser.add_argument("--game", default="", help="with --probe: the game, as 5x5k4")
    parser.add_argument(
        "--whole-only", action="store_true", help="only ttt-solve as a whole process against C"
    )
    args = parser.parse_args()
    if args.probe:
        probes(args.probe, args.many, args.runs, args.game)
        return
    if args.probe_5x5 or args.probe_build:
        probe_build(args.probe_build or "5x5k4")
        return
    if args.read_5x5:
        read_5x5(args.read_5x5, args.runs)
        return
    build_c()
    if args.whole_only:
        solve_against_c(chosen_boards(args, BOARDS, BOARD_4X5), args.runs)
        return
    rows_out = []
    with tempfile.TemporaryDirectory(prefix="bench-tablebase-") as workdir:
        for rows, cols, k, canonical, reachable in chosen_boards(args, BOARDS, BOARD_4X5):
            game = f"{rows}x{cols}k{k}"
            folder = os.path.join(workdir, game)
            argv = [script("ttt"), "table", "build", game, folder]
            table = measure([*argv, "--every", "1000000"])
            if table.returncode != 0:
                sys.exit(f"{game}: the table build failed:\n{table.output}")
            c_run = measure([C_PROGRAM, str(rows), str(cols), str(k)])
            if c_run.returncode != 0:
                sys.exit(f"{game}: the C program failed:\n{c_run.output}")
            disk = sum(entry.stat().st_size for entry in os.scandir(folder))
            found = re.search(r"([\d,]+) canonical and ([\d,]+) reachable", table.output)
            counts = found and tuple(int(n.replace(",", "")) for n in found.groups())
            lookup = measure([sys.executable, "-c", LOOKUPS, folder])
            p50, p99 = (float(v) for v in lookup.output.split())
            shutil.rmtree(folder)
            c_counts = f"canonical {canonical} reachable {reachable}" in c_run.output
            rows_out.append(
                [
                    f"{rows}x{cols} k={k}",
                    f"{table.seconds:.2f}",
                    f"{c_run.seconds:.2f}",
                    f"{table.seconds / c_run.seconds:.2f}",
                    f"{table.peak_mib:.0f}",
                    f"{c_run.peak_mib:.0f}",
                    f"{disk / 1e6:.1f}",
                    f"{p50:.3f}",
                    f"{p99:.3f}",
                    "yes" if counts == (canonical, reachable) and c_counts else "NO",
                ]
            )
    headers = ["board", "table s", "C s", "table/C", "peak MiB", "C peak MiB", "disk MB"]
    print(tabulate(rows_out, headers=[*headers, "lookup p50 ms", "p99 ms", "counts match"]))
    print(
        f"\n{os.cpu_count()} cores, load average {load_average()} at the end; one run each; "
        "table = the whole build process; lookup = a position's value and every move's value"
    )
    print()
    solve_against_c(chosen_boards(args, BOARDS, BOARD_4X5), args.runs)


if __name__ == "__main__":
    main()
