"""Benchmark of the main job: the exhaustive solve against a single-threaded C program.

Prints for each board, in one run: the in-process solve alone (plies solved, nothing written,
in a process whose compiled kernels are already loaded), the whole ``ttt-solve`` process on a
fresh SQLite book (start-up, solve and the write of its blocks), and the C reference solver of
``bench/c/solve.c`` (built here with the system's ``cc -O2`` into ``bench/out/``); then the
ratios to the C program, peak memory, and whether the counts match the published ones.

``--overlap`` times the solve and write in one process both ways: every ply solved first and
then written, or the forward pass first and then the backward pass on a thread while the writer
writes each ply as it comes (alternating). ``--write`` times the write alone (the plies solved
beforehand, in the same process) and SQLite's bare insert of the same positions
(``executemany`` of prepared rows, one transaction): a row per position into the table of
schema version 2, and a block per row into ``position_blocks``. ``--block-sizes`` times the
write and one lookup with blocks of 256, 1,024 and 4,096 positions. ``--engines`` times the
whole process with the NumPy per-ply operations against the compiled kernels on small boards,
alternating, to place :data:`solver.exhaustive.keyarrays.COMPILED_FROM_CELLS`.

    python bench/bench_solve.py              # 4x4 k=3 and 4x4 k=4
    python bench/bench_solve.py --with-4x5   # also 4 rows x 5 columns, k=4 (minutes, GiBs)
    python bench/bench_solve.py --write      # the write alone and the bare inserts
    python bench/bench_solve.py --block-sizes  # the write and a lookup by block size
    python bench/bench_solve.py --engines    # NumPy against the kernels, 3x3 to 4x4
    python bench/bench_solve.py --overlap    # the backward pass during the write, or before
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

from common import board_arguments, chosen_boards, load_average, measure, script
from tabulate import tabulate

HERE = os.path.dirname(os.path.abspath(__file__))
C_SOURCE = os.path.join(HERE, "c", "solve.c")
C_PROGRAM = os.path.join(HERE, "out", "solve")

BOARDS = [  # rows, cols, k, canonical, reachable (published)
    (4, 4, 3, 756387, 6036001),
    (4, 4, 4, 1217977, 9722011),
]
BOARD_4X5 = (4, 5, 4, 168720724, 674794169)

ENGINE_BOARDS = [(3, 3, 3), (3, 4, 3), (4, 4, 3), (4, 4, 4)]

SOLVE_ALONE = """
import sys, time
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.rules import Rules
for _ in ExhaustiveSolver(Rules(2, 2, 2), compiled=True).solve():  # load the compiled kernels
    pass
rules = Rules(*map(int, sys.argv[1:4]))
started = time.perf_counter()
rows = sum(len(table.keys) for table in ExhaustiveSolver(rules).solve())
print(time.perf_counter() - started, rows)
"""

WHOLE_WITH_ENGINE = """
import sys
from ttt_solve.book.reader import open_book
from ttt_solve.book.writer import write_game
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.rules import Rules
rules = Rules(*map(int, sys.argv[1:4]))
plies = list(ExhaustiveSolver(rules, compiled=sys.argv[5] == "compiled").solve())
with open_book(sys.argv[4], create=True) as book:
    write_game(book, rules, plies, method="exhaustive")
"""

SOLVE_AND_WRITE = """
import sys, time
from ttt_solve.book.reader import open_book
from ttt_solve.book.writer import write_game
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.rules import Rules
for _ in ExhaustiveSolver(Rules(2, 2, 2), compiled=True).solve():  # load the compiled kernels
    pass
rules = Rules(*map(int, sys.argv[1:4]))
started = time.perf_counter()
solver = ExhaustiveSolver(rules)
if sys.argv[5] == "overlapped":
    solver.enumerate_plies()
    plies = solver.solve()  # the backward pass runs as the writer takes the plies
else:
    plies = list(solver.solve())
with open_book(sys.argv[4], create=True) as book:
    write_game(book, rules, plies, method="exhaustive")
print(time.perf_counter() - started)
"""

WRITE_ALONE = """
import os, sqlite3, sys, time
from ttt_solve.book.reader import open_book
from ttt_solve.book.writer import ply_blocks, write_game
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.plytable import split_scores
from ttt_solve.solver.rules import Rules
rules = Rules(*map(int, sys.argv[1:4]))
plies = list(ExhaustiveSolver(rules).solve())
with open_book(sys.argv[4], create=True) as book:
    started = time.perf_counter()
    write_game(book, rules, plies, method="exhaustive")
    write = time.perf_counter() - started
with open_book(sys.argv[5], create=True) as book:  # an empty book: the same settings
    pass
rows = []  # prepared before the clock: one row per position, as Python ints
for t in plies:
    values, remoteness = split_scores(t.scores, rules.cells - t.ply)
    rows.append(list(zip(t.keys.astype("int64").tolist(), values.tolist(), remoteness.tolist(),
                         t.best_moves.astype("int64").tolist(), t.images.tolist())))
blocks = [list(ply_blocks(rules, t)) for t in plies]  # prepared too: the packed blocks
conn = sqlite3.connect(sys.argv[5], isolation_level=None)
conn.execute("PRAGMA journal_mode = WAL")
conn.execute("PRAGMA synchronous = NORMAL")
conn.execute("INSERT INTO games VALUES (1, 1, 1, 1, '', NULL, '', 0, 0, 0, 0, '', 0, '')")
conn.execute(  # the table of a position per row that the blocks replaced
    "CREATE TABLE positions (game_id INTEGER NOT NULL, ply SMALLINT NOT NULL, "
    "key BIGINT NOT NULL, value SMALLINT NOT NULL, remoteness SMALLINT NOT NULL, "
    "best_moves BIGINT NOT NULL, images SMALLINT NOT NULL, PRIMARY KEY (game_id, ply, key)) "
    "WITHOUT ROWID")
bare = {}
for name in ("rows", "blocks"):
    started = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    for table, ply_rows, ply_blocks_ in zip(plies, rows, blocks):
        if name == "rows":
            conn.executemany(
                f"INSERT INTO positions (game_id, ply, key, value, remoteness, best_moves, "
                f"images) VALUES (1, {table.ply}, ?, ?, ?, ?, ?)", ply_rows)
        else:
            conn.executemany(
                f"INSERT INTO position_blocks (game_id, ply, first_key, count, keys, data) "
                f"VALUES (1, {table.ply}, ?, ?, ?, ?)", ply_blocks_)
    conn.execute("COMMIT")
    bare[name] = time.perf_counter() - started
print(write, bare["rows"], bare["blocks"], sum(len(r) for r in rows))
"""

BLOCK_SIZE = """
import os, random, sys, time
import ttt_solve.book.blocks
from ttt_solve.book.reader import open_book
from ttt_solve.book.writer import write_game
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
rules = Rules(*map(int, sys.argv[1:4]))
ttt_solve.book.blocks.BLOCK_POSITIONS = int(sys.argv[5])
plies = list(ExhaustiveSolver(rules).solve())
with open_book(sys.argv[4], create=True) as book:
    started = time.perf_counter()
    write_game(book, rules, plies, method="exhaustive")
    write = time.perf_counter() - started
rng = random.Random(1)
tables = [t for t in plies if len(t.keys)]
asked = []
for _ in range(10_000):
    t = rng.choice(tables)
    asked.append(Position.from_key(rules, int(t.keys[rng.randrange(len(t.keys))])))
with open_book(sys.argv[4]) as book:
    book.find(asked[0])
    started = time.perf_counter()
    for position in asked:
        book.find(position)
    find = (time.perf_counter() - started) / len(asked)
print(write, find, os.path.getsize(sys.argv[4]))
"""

BLOCK_SIZES = (256, 1024, 4096)


def build_c() -> None:
    """Compile the C reference solver (``cc -O2``) into ``bench/out/``."""
    os.makedirs(os.path.dirname(C_PROGRAM), exist_ok=True)
    subprocess.run(["cc", "-O2", "-o", C_PROGRAM, C_SOURCE], check=True)


def remove_book(db: str) -> None:
    """Remove a SQLite book and its WAL files."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)


def size_of(rows: int, cols: int) -> str:
    return str(rows) if rows == cols else f"{rows}x{cols}"


def against_c(boards: list[tuple[int, int, int, int, int]], repeat: int, workdir: str) -> None:
    """The in-process solve alone, the whole ``ttt-solve`` process and the C program."""
    build_c()
    table = []
    for rows, cols, k, canonical, reachable in boards:
        name = f"{rows}x{cols} k={k}"
        big = (rows, cols) == (4, 5)
        alone, whole, c_runs = [], [], []
        for attempt in range(1 if big else repeat):  # interleaved: load hits all three alike
            if not big:  # the 4x5 solve alone would take minutes more
                run = measure([sys.executable, "-c", SOLVE_ALONE, str(rows), str(cols), str(k)])
                if run.returncode != 0:
                    sys.exit(f"{name}: in-process solve failed:\n{run.output}")
                alone.append(float(run.output.split()[0]))
            db = os.path.join(workdir, f"{rows}x{cols}-{k}-{attempt}.sqlite")
            argv = [script("ttt-solve"), "--size", size_of(rows, cols), "--win", str(k)]
            run = measure([*argv, "--db", db, "--quiet"])
            if run.returncode != 0:
                sys.exit(f"{name}: ttt-solve failed:\n{run.output}")
            whole.append(run)
            c_run = measure([C_PROGRAM, str(rows), str(cols), str(k)])
            if c_run.returncode != 0:
                sys.exit(f"{name}: the C program failed:\n{c_run.output}")
            c_runs.append(c_run)
        with sqlite3.connect(db) as conn:
            stored = conn.execute("SELECT positions, reachable FROM games").fetchone()
        remove_book(db)  # 4x5 books are GiBs
        c_counts = f"canonical {canonical} reachable {reachable}" in c_runs[0].output
        whole_s = statistics.median(run.seconds for run in whole)
        c_s = statistics.median(run.seconds for run in c_runs)
        alone_s = statistics.median(alone) if alone else None
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
    headers = ["board", "solve s", "whole s", "C s", "solve/C", "whole/C", "peak MiB"]
    print(tabulate(table, headers=[*headers, "C peak MiB", "counts match"]))
    print(
        f"\n{os.cpu_count()} cores, load average {load_average()}; median of {repeat} runs "
        "(4x5: one); solve = in-process solve alone, whole = the ttt-solve process with the "
        "SQLite write"
    )


def write_alone(boards: list[tuple[int, int, int, int, int]], repeat: int, workdir: str) -> None:
    """The writer's time, and SQLite's bare insert of the same positions a row each (the
    table of schema version 2) and a block each, against the C program's time."""
    build_c()
    table = []
    for rows, cols, k, _, _ in boards:
        writes, row_inserts, block_inserts, c_times = [], [], [], []
        count = 0
        for _ in range(repeat):
            books = [os.path.join(workdir, f"write-{rows}x{cols}-{k}-{n}.sqlite") for n in (1, 2)]
            run = measure([sys.executable, "-c", WRITE_ALONE, str(rows), str(cols), str(k), *books])
            for book in books:
                remove_book(book)
            if run.returncode != 0:
                sys.exit(f"write benchmark failed:\n{run.output}")
            write, row_insert, block_insert, count_text = run.output.split()[-4:]
            writes.append(float(write))
            row_inserts.append(float(row_insert))
            block_inserts.append(float(block_insert))
            count = int(count_text)
            c_times.append(measure([C_PROGRAM, str(rows), str(cols), str(k)]).seconds)
        write_s, c_s = statistics.median(writes), statistics.median(c_times)
        row_s, block_s = statistics.median(row_inserts), statistics.median(block_inserts)
        table.append(
            [
                f"{rows}x{cols} k={k}",
                f"{count:,}",
                f"{write_s:.2f}",
                f"{row_s:.2f}",
                f"{count / row_s:,.0f}",
                f"{block_s:.2f}",
                f"{count / block_s:,.0f}",
                f"{c_s:.2f}",
                f"{write_s / c_s:.2f}",
            ]
        )
    headers = ["board", "positions", "write s", "row insert s", "rows/s", "block insert s"]
    headers += ["positions/s", "C s", "write/C"]
    print(tabulate(table, headers=headers))
    print(f"\nload average {load_average()}; median of {repeat} runs")


def block_sizes(boards: list[tuple[int, int, int, int, int]], repeat: int, workdir: str) -> None:
    """The write, one lookup (``Book.find``, mean of 10,000 random stored positions) and the
    book's size for each block size of :data:`BLOCK_SIZES`, the sizes taking turns."""
    table = []
    for rows, cols, k, _, _ in boards:
        runs: dict[int, list[tuple[float, float, int]]] = {size: [] for size in BLOCK_SIZES}
        for turn in range(repeat):
            for size in BLOCK_SIZES if turn % 2 == 0 else BLOCK_SIZES[::-1]:
                db = os.path.join(workdir, f"blocks-{rows}x{cols}-{k}-{size}.sqlite")
                argv = [sys.executable, "-c", BLOCK_SIZE, str(rows), str(cols), str(k), db]
                run = measure([*argv, str(size)])
                remove_book(db)
                if run.returncode != 0:
                    sys.exit(f"block size {size} failed:\n{run.output}")
                write, find, size_bytes = run.output.split()[-3:]
                runs[size].append((float(write), float(find), int(size_bytes)))
        for size, results in runs.items():
            write_s = statistics.median(r[0] for r in results)
            find_us = statistics.median(r[1] for r in results) * 1e6
            table.append(
                [f"{rows}x{cols} k={k}", size, f"{write_s:.2f}", f"{find_us:.0f}", results[0][2]]
            )
    headers = ["board", "positions a block", "write s", "find us", "book bytes"]
    print(tabulate(table, headers=headers))
    print(f"\nload average {load_average()}; median of {repeat} runs, the sizes taking turns")


def alternating(
    script_text: str, board: tuple[int, int, int], sides: tuple[str, str], repeat: int, workdir: str
) -> tuple[float, float]:
    """Median seconds of ``script_text`` run on ``board`` with each of two ``sides`` (its last
    argument), the two taking turns; the script prints its own time last, or the whole
    process is timed."""
    rows, cols, k = board
    times: dict[str, list[float]] = {side: [] for side in sides}
    for turn in range(repeat):
        for side in sides if turn % 2 == 0 else sides[::-1]:
            db = os.path.join(workdir, f"{rows}x{cols}-{k}-{side}-{turn}.sqlite")
            argv = [sys.executable, "-c", script_text, str(rows), str(cols), str(k), db, side]
            run = measure(argv)
            if run.returncode != 0:
                sys.exit(f"{side} failed:\n{run.output}")
            printed = run.output.split()
            times[side].append(float(printed[-1]) if printed else run.seconds)
            remove_book(db)
    first, second = (statistics.median(times[side]) for side in sides)
    return first, second


def engines(repeat: int, workdir: str) -> None:
    """The whole process (start-up, solve, SQLite write) with either per-ply implementation,
    the two alternating."""
    table = []
    for rows, cols, k in ENGINE_BOARDS:
        sides = ("numpy", "compiled")
        numpy_s, compiled_s = alternating(
            WHOLE_WITH_ENGINE, (rows, cols, k), sides, repeat, workdir
        )
        name = f"{rows}x{cols} k={k}"
        table.append([name, f"{numpy_s:.2f}", f"{compiled_s:.2f}", f"{compiled_s / numpy_s:.2f}"])
    print(tabulate(table, headers=["board", "NumPy s", "compiled s", "compiled/NumPy"]))
    print(f"\nload average {load_average()}; median of {repeat} runs, the two alternating")


def overlap(boards: list[tuple[int, int, int, int, int]], repeat: int, workdir: str) -> None:
    """Solve and write in one process: the backward pass before the write or during it."""
    table = []
    for rows, cols, k, _, _ in boards:
        runs = 1 if (rows, cols) == (4, 5) else repeat
        sides = ("sequential", "overlapped")
        first, second = alternating(SOLVE_AND_WRITE, (rows, cols, k), sides, runs, workdir)
        table.append(
            [f"{rows}x{cols} k={k}", f"{first:.2f}", f"{second:.2f}", f"{second / first:.2f}"]
        )
    headers = ["board", "solve, then write s", "write during back-up s", "ratio"]
    print(tabulate(table, headers=headers))
    print(f"\nload average {load_average()}; median of {repeat} runs, the two alternating")


def main() -> None:
    parser = board_arguments(__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (median shown)")
    parser.add_argument("--write", action="store_true", help="the write and the bare insert")
    parser.add_argument("--engines", action="store_true", help="NumPy against the kernels")
    parser.add_argument("--overlap", action="store_true", help="write during the back-up")
    parser.add_argument("--block-sizes", action="store_true", help="write and lookup by block")
    args = parser.parse_args()
    boards = chosen_boards(args, BOARDS, BOARD_4X5)
    print(f"load average at start {load_average()}")
    with tempfile.TemporaryDirectory(prefix="ttt-bench-") as workdir:
        if args.engines:
            engines(args.repeat, workdir)
        elif args.overlap:
            overlap(boards, args.repeat, workdir)
        elif args.write:
            write_alone(boards, args.repeat, workdir)
        elif args.block_sizes:
            block_sizes(boards, args.repeat, workdir)
        else:
            against_c(boards, args.repeat, workdir)


if __name__ == "__main__":
    main()
