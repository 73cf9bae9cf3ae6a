"""Where an opening book of depth 0 spends its time: the exact value of the empty board, then
the best-move mask, one null-window probe per first move, timed one by one.

These are the steps ``ttt-solve --method alphabeta --book-depth 0`` takes (the book builder's
prover, ``solver.prover.opening.book_prover``, and its probe of each move, ``is_best_move``)::

    python bench/bench_book_root.py --size 4x10 --win 4
    python bench/bench_book_root.py --size 4x10 --win 4 --exact-search deepening
    python bench/bench_book_root.py --size 4x9 --win 4

With two processes (``--jobs``, 2 by default) the book builder runs both exact searches of the
empty board at once and keeps the first answer; this script times one of them
(``--exact-search``, bisection by default). Prints each null-window search of the empty board
as the prover makes it (by bisection the outcome, then the probes that narrow the remoteness;
by deepening a win within 1 ply, 3, 5, ...), the root's score and remoteness with its nodes
and seconds, then a line per first move:
whether it is among the best, its nodes and seconds (a move symmetric to one probed already
costs a table lookup).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # common.py beside it
from common import load_average  # noqa: E402

from ttt_solve.solver.position import Position, iter_cells  # noqa: E402
from ttt_solve.solver.prover.opening import book_prover, is_best_move  # noqa: E402
from ttt_solve.solver.prover.search import EXACT_SEARCHES, Prover, Root  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402
from ttt_solve.solver.value import remoteness_of  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="4x10", help="ROWSxCOLUMNS, as ttt-solve takes it")
    parser.add_argument("--win", type=int, default=4, help="stones in a row that win")
    parser.add_argument(
        "--exact-search",
        choices=EXACT_SEARCHES,
        default="bisection",
        help="the order of the probes of the empty board's exact score",
    )
    args = parser.parse_args()
    rows, columns = (int(part) for part in args.size.split("x"))
    rules = Rules(rows, columns, args.win)
    prover = book_prover(rules)
    start = Position.start(rules)
    print(f"{rules.name}, exact search by {args.exact_search}; load {load_average()}", flush=True)

    _print_each_probe(prover, rules)
    before, started = prover.nodes, time.perf_counter()
    score = prover.solve(start, exact_search=args.exact_search).score
    print(
        f"empty board: score {score} (remoteness {remoteness_of(score, rules.cells)}), "
        f"{prover.nodes - before:,} nodes, {time.perf_counter() - started:.1f} s, "
        f"load {load_average()}",
        flush=True,
    )
    mask_nodes, mask_started = prover.nodes, time.perf_counter()
    for cell in iter_cells(start.empty):
        before, started = prover.nodes, time.perf_counter()
        best = is_best_move(prover, start, cell, score)
        print(
            f"  {rules.cell_name(cell)}: {'best' if best else 'not best'}, "
            f"{prover.nodes - before:,} nodes, {time.perf_counter() - started:.1f} s",
            flush=True,
        )
    print(
        f"best-move mask: {prover.nodes - mask_nodes:,} nodes, "
        f"{time.perf_counter() - mask_started:.1f} s; load {load_average()}"
    )


def _print_each_probe(prover: Prover, rules: Rules) -> None:
    """Print each null-window search the prover makes of the empty board, as it makes them
    (see the module docstring), with its nodes and seconds."""
    search = prover._search.search

    def printed(root: Root, alpha: int, beta: int) -> int:
        if root.empties != rules.cells:
            return search(root, alpha, beta)
        before, started = prover.nodes, time.perf_counter()
        value = search(root, alpha, beta)
        print(
            f"  window ({alpha}, {beta}): {_bound(value, alpha, beta, rules.cells)}, "
            f"{prover.nodes - before:,} nodes, {time.perf_counter() - started:.1f} s",
            flush=True,
        )
        return value

    prover._search.search = printed  # type: ignore[method-assign]


def _bound(value: int, alpha: int, beta: int, cells: int) -> str:
    """What a fail-soft value of the window ``(alpha, beta)`` says of the empty board: "X wins
    in at most 21", "no X win in under 23", "at most a draw"..."""
    if value == 0:
        return "at most a draw" if value <= alpha else "at least a draw"
    plies = remoteness_of(value, cells)
    if value > 0:
        return f"X wins in at most {plies}" if value >= beta else f"no X win in under {plies}"
    return f"X loses in at most {plies}" if value <= alpha else f"no X loss in under {plies}"


if __name__ == "__main__":
    main()
