"""Benchmark of the alpha-beta prover: published (m,n,k) values from the empty board.

Prints, for each board, mode and set of prunings, the value found, the published value, the
technique that closed the proof (search and the prunings that worked), nodes, the nodes each
kind of proof closed (pairing, threats, potential, partial pairing) and the moves each pruning
skipped (domination, zones), nodes per second and wall time, and the ratio to the target
where the project sets one. Each run uses a fresh prover (empty table) in this process, one
run at a time. The plain-Python engine runs only the boards it finishes in a few minutes.

    python bench/bench_prover.py                  # both engines, weak + exact, and the book
    python bench/bench_prover.py --engines compiled --modes weak
    python bench/bench_prover.py --engines compiled --modes weak --stretch --limit 600
                                                  # also (10,4,4) and (8,8,5): how far they get
    python bench/bench_prover.py --limit 120      # seconds allowed per run (default 300)
    python bench/bench_prover.py --book-depth 2   # the (5,5,4) opening book to ply 2 (default 4)
    python bench/bench_prover.py --no-book
    python bench/bench_prover.py --engines compiled --modes weak --jobs 2   # book on 2 cores
    python bench/bench_prover.py --engines compiled --modes weak --no-book --prunings each
                                                  # each board with the classic prunings,
                                                  # then each new one alone, then together
    python bench/bench_prover.py --boards 7,7,5 9,4,4 --prunings classic,zones

The compiled engine is compiled (or loaded from Numba's cache) once before anything is timed;
that time is printed apart.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from tabulate import tabulate

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import load_average  # noqa: E402

from ttt_solve.solver.errors import SearchTimeout  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.prover import negamax  # noqa: E402
from ttt_solve.solver.prover.opening import OpeningBookBuilder  # noqa: E402
from ttt_solve.solver.prover.search import Prover, Prunings, SearchCounters  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402

BOARDS = [  # (columns, rows, k) as published, value for X, target seconds for the weak solve
    ((5, 4, 4), "draw", None),
    ((6, 4, 4), "draw", None),
    ((5, 5, 4), "draw", 60.0),
    ((6, 5, 4), "win", None),
    ((5, 5, 5), "draw", None),
    ((6, 6, 5), "draw", None),
    ((7, 7, 5), "draw", 60.0),
    ((9, 4, 4), "win", None),
]
STRETCH = [((10, 4, 4), "win", None), ((8, 8, 5), "draw", None)]
"""Boards past reach so far (``--stretch``): the run reports how far it got by the limit."""
PYTHON_BOARDS = {(5, 4, 4), (6, 4, 4), (5, 5, 4), (6, 5, 4), (5, 5, 5), (6, 6, 5)}
"""The boards the plain-Python engine runs (the others take it far past any limit)."""
BOOK_TARGET = {4: 600.0}
"""Target seconds of the (5,5,4) opening book by depth."""


ADDED = [pruning.name for pruning in negamax.PRUNINGS if not pruning.classic]
"""The prunings off by default, each of which ``--prunings NAME`` adds to the classic ones."""
PRUNINGS = {
    "classic": Prunings(),
    "bare": Prunings.none(),
    **{name: Prunings(**{name: True}) for name in ADDED},
    "strongest": Prunings.strongest(),
    "every": Prunings.every(),
}
"""The sets of prunings ``--prunings`` names: the classic ones (threats and pairings, the
prover's default), none, each other one with the classic ones, the command line's choice, and
all of them."""
EACH = ["classic", *ADDED, "strongest", "every"]
"""``--prunings each``."""


def warm_up(engine: str) -> float:
    """Seconds to compile the engine (or load it from Numba's cache)."""
    started = time.perf_counter()
    rules = Rules(3, 3, 3)
    Prover(rules, engine=engine).solve(Position.start(rules))
    return time.perf_counter() - started


def run(
    rules: Rules, engine: str, weak: bool, prunings: Prunings, limit: float, table_bits: int
) -> list[Any]:
    """One proof from the empty board: the row's measured cells."""
    prover = Prover(rules, weak=weak, engine=engine, prunings=prunings, table_bits=table_bits)
    started = time.perf_counter()
    try:
        result = prover.solve(Position.start(rules), deadline=started + limit)
    except SearchTimeout:
        seconds = time.perf_counter() - started
        counts = prover.counters
        return ["timeout", "-", *counts, f"{counts.nodes / seconds:,.0f}", f"> {seconds:.1f}"]
    rate = result.nodes / result.seconds if result.seconds else 0.0
    shown = result.value.outcome.value if weak else str(result.value)
    return [shown, result.technique, *result.counters, f"{rate:,.0f}", f"{result.seconds:.2f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=300.0, help="seconds allowed per run")
    parser.add_argument("--modes", default="weak,exact", help="weak, exact or both")
    parser.add_argument(
        "--engines", default="compiled,python", help="compiled (Numba), python, or both (default)"
    )
    parser.add_argument(
        "--book-depth",
        type=int,
        default=4,
        help="build a (5,5,4) opening book to this ply (default 4)",
    )
    parser.add_argument("--no-book", action="store_true", help="skip the opening book")
    parser.add_argument(
        "--prunings",
        default="classic",
        help="sets of prunings, comma-separated, each board run with each in turn: "
        + ", ".join(PRUNINGS)
        + "; or each ("
        + ",".join(EACH)
        + "). Default: classic",
    )
    parser.add_argument(
        "--boards",
        nargs="+",
        metavar="C,R,K",
        help="only these boards (columns,rows,k as published; the --stretch ones too)",
    )
    parser.add_argument(
        "--stretch", action="store_true", help="also (10,4,4) and (8,8,5), within --limit"
    )
    parser.add_argument(
        "--table-bits", type=int, default=22, help="prover table of 2**(bits+1) slots (22)"
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="processes proving the book's deepest ply (default 1)"
    )
    args = parser.parse_args()
    engines = args.engines.split(",")
    names = EACH if args.prunings == "each" else args.prunings.split(",")
    unknown = [name for name in names if name not in PRUNINGS]
    if unknown:
        raise SystemExit(f"unknown prunings {unknown}: choose among {sorted(PRUNINGS)} or each")
    boards = BOARDS + (STRETCH if args.stretch else [])
    if args.boards:
        wanted = [tuple(int(part) for part in board.split(",")) for board in args.boards]
        boards = [entry for entry in BOARDS + STRETCH if entry[0] in wanted]
    print(f"load average at start {load_average()}", file=sys.stderr, flush=True)
    if "compiled" in engines:
        print(
            f"compiled engine ready in {warm_up('compiled'):.1f} s (compile or cache load)",
            file=sys.stderr,
            flush=True,
        )
    table = []
    for (columns, rows, k), published, target in boards:
        rules = Rules(rows, columns, k)
        for engine in engines:
            if engine == "python" and (columns, rows, k) not in PYTHON_BOARDS:
                continue
            for mode in args.modes.split(","):
                for name in names:
                    measured = run(
                        rules, engine, mode == "weak", PRUNINGS[name], args.limit, args.table_bits
                    )
                    value, seconds = measured[0], measured[-1]
                    ratio = "-"
                    if target and mode == "weak" and value != "timeout":
                        ratio = f"{float(seconds) / target:.2f}"
                    table.append(
                        [
                            f"({columns},{rows},{k})",
                            f"--size {rules.size} --win {k}",
                            engine,
                            mode,
                            name,
                            value,
                            published,
                            measured[1],
                            *(f"{count:,}" for count in measured[2:-2]),
                            measured[-2],
                            seconds,
                            f"{target:g}" if target and mode == "weak" else "-",
                            ratio,
                            load_average(),
                        ]
                    )
                    print(tabulate([table[-1]], tablefmt="plain"), file=sys.stderr, flush=True)
    print(
        tabulate(
            table,
            headers=[
                "(cols,rows,k)",
                "options",
                "engine",
                "mode",
                "prunings",
                "value",
                "published",
                "closed by",
                *SearchCounters._fields,
                "nodes/s",
                "seconds",
                "target s",
                "ratio",
                "load",
            ],
            disable_numparse=True,
        )
    )
    if not args.no_book:
        rules = Rules(5, 5, 4)
        builder = OpeningBookBuilder(rules, args.book_depth, jobs=args.jobs)
        started = time.perf_counter()
        positions = sum(len(table.keys) for table in builder.solve())
        seconds = time.perf_counter() - started
        target = BOOK_TARGET.get(args.book_depth)
        print(
            f"\n(5,5,4) opening book to ply {args.book_depth}, {builder.prover.engine} "
            f"engine, {args.jobs} process(es): {positions:,} positions, "
            f"{builder.nodes:,} nodes, {seconds:.1f} s "
            f"({builder.nodes / seconds:,.0f} nodes/s)"
            + (f"; target {target:g} s, ratio {seconds / target:.2f}" if target else "")
        )
    print(f"\nload average at end {load_average()}")
    print(
        f"\n{os.cpu_count()} cores; ratio = seconds / target (under 1 meets the target); "
        "weak: outcome only; exact: outcome and remoteness; "
        + "; ".join(f"{pruning.counter}: {pruning.counts}" for pruning in negamax.PRUNINGS)
    )


if __name__ == "__main__":
    main()
