"""The prover's two exact searches, bisection and deepening, on the deepest ply of opening books.

An opening book spends nearly all its time proving its deepest ply (each position's exact
score, then a probe of each move for the best moves: ``solver.prover.opening.prove_rows``). This
script proves that ply once by each exact search, each with a fresh book prover, checks that
the two give the same scores and best moves, and prints the nodes and seconds of each and their
ratio. ``GAME:DEPTH`` is ``R,C,K:D``; depth 0 is the empty board alone, which a book of depth 0
with two processes proves by both searches at once, keeping the first answer::

    python bench/bench_exact_search.py 4,5,4:4 5,5,4:3 6,6,4:2 5,7,4:2 4,8,4:1 7,7,5:1
    python bench/bench_exact_search.py 4,8,4:0 7,7,5:0 4,9,4:0 4,10,4:0
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # common.py beside it
from common import load_average  # noqa: E402

from ttt_solve.solver.prover.opening import OpeningBookBuilder, book_prover, prove_rows  # noqa: E402
from ttt_solve.solver.prover.search import EXACT_SEARCHES  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="+", metavar="R,C,K:D", help="a game and a book depth")
    args = parser.parse_args()
    print(f"load {load_average()}", flush=True)
    for spec in args.games:
        game, depth = spec.split(":")
        rules = Rules(*(int(part) for part in game.split(",")))
        keys, won = OpeningBookBuilder(rules, int(depth)).enumerate_plies()[-1]
        results = {}
        for exact_search in EXACT_SEARCHES:
            prover = book_prover(rules)
            started = time.perf_counter()
            scores, best = prove_rows(prover, keys, won, exact_search=exact_search)
            results[exact_search] = (scores, best, prover.nodes, time.perf_counter() - started)
        (scores, best, nodes, seconds), (other_scores, other_best, other_nodes, other_seconds) = (
            results[exact_search] for exact_search in EXACT_SEARCHES
        )
        if not (np.array_equal(scores, other_scores) and np.array_equal(best, other_best)):
            raise SystemExit(f"{rules.name} to ply {depth}: the two searches disagree")
        print(
            f"{rules.name}, ply {depth} ({len(keys):,} positions): "
            f"bisection {nodes:,} nodes {seconds:.1f} s, "
            f"deepening {other_nodes:,} nodes {other_seconds:.1f} s, "
            f"deepening/bisection nodes {other_nodes / max(nodes, 1):.2f} "
            f"time {other_seconds / max(seconds, 1e-9):.2f}; load {load_average()}",
            flush=True,
        )


if __name__ == "__main__":
    main()
