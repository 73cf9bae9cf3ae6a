"""Boards past the prover's reach so far, proved one first move at a time: how far it gets.

(8,8,5) is a draw (Hsu, Ko, Chen, Wei, Hsueh and Wu, 2020: 17.4 hours) and (10,4,4) an X win
(Charatsidis, 2017). One search from the empty board runs for hours with nothing to show
until it ends, and an interruption loses it all. So this script splits the proof at the root,
in the weak prover's terms (the outcome, not the remoteness):

* a draw: no first move wins. Each canonical first move is probed on its own, "after it, can
  O hold the draw?", the farthest from the centre (the weakest, quickest to refute) first.
  That X cannot lose needs no search: by strategy stealing (an extra stone never hurts in an
  m,n,k-game, so the first player is never worse off than the second; see Hales and Jewett,
  1963) the start is at least a draw for X. ``--prove-start`` proves it by search anyway,
  one probe of the start;
* a win: some first move wins: the canonical first moves are probed one by one, nearest the
  centre first, until one wins.

Each probe is one search, with a progress line every ``--report-every`` seconds (from a
thread: the search is not cut into slices, which would start again from the root and search
more nodes, so its node count does not depend on how often it reports); each first move
proved is written at once to the ``--state`` file (JSON), with its nodes, seconds,
the prover's counters and the load average, and a rerun with the same file skips the moves
proved already. ``--limit`` bounds the whole run; ``--moves`` proves only the first moves
named (to measure one move against another set of prunings); ``--prunings`` names the
prover's prunings as bench_prover.py does (default: the strongest set).

    python bench/bench_stretch.py --board 8,8,5 --limit 14400 --state 885.json
    python bench/bench_stretch.py --board 8,8,5 --moves a1 --limit 2400 --prunings classic
    python bench/bench_stretch.py --board 10,4,4 --limit 3600 --state 1044.json
    python bench/bench_stretch.py --board 7,7,5 --limit 600     # a draw it proves in seconds

Boards are (columns, rows, k) as published.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench_prover import BOARDS, PRUNINGS, STRETCH  # noqa: E402
from common import load_average  # noqa: E402

from ttt_solve.solver.errors import SearchTimeout  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.prover.search import Prover  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402

PUBLISHED = {board: value for board, value, _ in BOARDS + STRETCH}
"""Published values for X by (columns, rows, k), as bench_prover.py has them."""


def first_moves(rules: Rules, nearest_first: bool) -> list[int]:
    """One cell of each canonical first move, nearest the centre first or last (then by
    cell)."""
    start = Position.start(rules)
    seen: dict[int, int] = {}
    for cell in start.legal_moves():
        seen.setdefault(start.play(cell).canonical_key, cell)
    middle_row, middle_col = (rules.rows - 1) / 2, (rules.cols - 1) / 2

    def distance(cell: int) -> tuple[float, int]:
        row, col = divmod(cell, rules.cols)
        away = abs(row - middle_row) + abs(col - middle_col)
        return (away if nearest_first else -away, cell)

    return sorted(seen.values(), key=distance)


class Run:
    """The state of one board's split proof, kept in a JSON file after each step."""

    def __init__(self, rules: Rules, path: str | None) -> None:
        self.rules = rules
        self.path = path
        self.proved: dict[str, dict[str, Any]] = {}
        """What each step proved: ``"start"`` or a first move's cell name -> its record."""
        if path and os.path.exists(path):
            with open(path) as file:
                kept = json.load(file)
            if kept["board"] != [rules.rows, rules.cols, rules.k]:
                raise SystemExit(f"{path} holds the proof of another board: {kept['board']}")
            self.proved = kept["proved"]

    def keep(self, step: str, record: dict[str, Any]) -> None:
        self.proved[step] = record
        if self.path:
            temporary = self.path + ".tmp"
            with open(temporary, "w") as file:
                json.dump(
                    {
                        "board": [self.rules.rows, self.rules.cols, self.rules.k],
                        "proved": self.proved,
                    },
                    file,
                    indent=1,
                )
            os.replace(temporary, self.path)  # a run killed while writing keeps the old file


def probe(
    prover: Prover,
    position: Position,
    alpha: int,
    beta: int,
    label: str,
    report_every: float,
    deadline: float,
) -> tuple[int | None, int, float]:
    """``(bound or None if out of time, nodes, seconds)`` of one probe: one search, whose
    progress a thread prints every ``report_every`` seconds. A search cut into slices would
    start again from the root at each and search more nodes: the table keeps the subtrees
    proved, but the line under way is lost, and the move order, which follows the history
    heuristic, changes; with slices of 60 s (8,8,5)'s a1 took 156.3 M nodes, not 87.3 M. The
    thread gets its turn when the compiled search looks at the clock (every few thousand
    nodes), as a signal handler does."""
    started, nodes_before = time.perf_counter(), prover.nodes
    finished = threading.Event()

    def report() -> None:
        while not finished.wait(report_every):
            seconds = time.perf_counter() - started
            nodes = prover.nodes - nodes_before
            print(
                f"  {label}: {seconds:,.0f} s, {nodes:,} nodes ({nodes / seconds:,.0f}/s), "
                f"load {load_average()}",
                file=sys.stderr,
                flush=True,
            )

    reporter = threading.Thread(target=report, daemon=True)
    reporter.start()
    try:
        bound: int | None = prover.bound(position, alpha, beta, deadline=deadline)
    except SearchTimeout:
        bound = None
    finally:
        finished.set()
        reporter.join()
    return bound, prover.nodes - nodes_before, time.perf_counter() - started


def outcome_of(proved: dict[str, dict[str, Any]], steps: list[str]) -> str:
    """What the steps proved so far (in this run and the runs before) show."""
    found = [proved[step]["found"] for step in steps if step in proved]
    if "X wins" in found:
        return "win"
    if "X loses" in found:
        return "loss"
    if len(found) == len(steps):
        return "draw"  # no first move wins, and X cannot lose
    return "not reached"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="8,8,5", help="columns,rows,k as published")
    parser.add_argument("--limit", type=float, default=7200.0, help="seconds for the whole run")
    parser.add_argument("--state", help="JSON file of the steps proved (read, then kept up)")
    parser.add_argument(
        "--report-every", type=float, default=300.0, help="seconds between progress lines"
    )
    parser.add_argument(
        "--prove-start",
        action="store_true",
        help="for a draw, also prove by search that X cannot lose (strategy stealing shows it)",
    )
    parser.add_argument(
        "--table-bits",
        type=int,
        default=24,
        help="prover table of 2**(bits+1) slots (24: 768 MiB, 1.25 GiB with zones)",
    )
    parser.add_argument(
        "--prunings",
        default="strongest",
        choices=sorted(PRUNINGS),
        help="the prover's prunings, as bench_prover.py names them (default: strongest)",
    )
    parser.add_argument(
        "--moves", nargs="+", metavar="CELL", help="prove only these first moves (e.g. a1 b1)"
    )
    args = parser.parse_args()
    columns, rows, k = (int(part) for part in args.board.split(","))
    published = PUBLISHED.get((columns, rows, k))
    if published is None:
        raise SystemExit(f"no published value known for ({args.board}): {sorted(PUBLISHED)}")
    rules = Rules(rows, columns, k)
    run = Run(rules, args.state)
    prover = Prover(rules, weak=True, table_bits=args.table_bits, prunings=PRUNINGS[args.prunings])
    started = time.perf_counter()
    deadline = started + args.limit
    moves = first_moves(rules, nearest_first=published == "win")
    print(
        f"({args.board}) published {published}; {len(moves)} canonical first moves; "
        f"{len(run.proved)} steps kept; prunings {args.prunings}; load {load_average()}",
        file=sys.stderr,
        flush=True,
    )
    start = Position.start(rules)
    steps = [("start", start, None)] if published == "draw" and args.prove_start else []
    steps += [(rules.cell_name(cell), start.play(cell), cell) for cell in moves]
    every_step = [step for step, _, _ in steps]  # the outcome needs them all, not --moves'
    if args.moves:
        unknown = set(args.moves) - {step for step, _, _ in steps}
        if unknown:
            raise SystemExit(f"not canonical first moves here: {sorted(unknown)}")
        steps = [step for step in steps if step[0] in args.moves]
    for number, (step, position, cell) in enumerate(steps, 1):
        if step in run.proved:
            continue
        # the start: "can X avoid losing?" (score >= 0); a first move: "can O hold a draw
        # after it?" (the child's score >= 0 for O; below 0, the move wins for X)
        label = f"step {number} of {len(steps)}, {step}"
        before = prover.counters
        bound, nodes, seconds = probe(prover, position, -1, 0, label, args.report_every, deadline)
        if bound is None:
            print(f"  {label}: out of time", file=sys.stderr, flush=True)
            break
        holds = bound >= 0
        found = (
            ("X does not lose" if holds else "X loses")
            if cell is None
            else ("O holds" if holds else "X wins")
        )
        run.keep(
            step,
            {
                "found": found,
                "nodes": nodes,
                "seconds": round(seconds, 1),
                "prunings": args.prunings,
                "counters": (prover.counters - before)._asdict(),
                "load": load_average(),
            },
        )
        print(
            f"  {label}: {found}, {nodes:,} nodes, {seconds:,.1f} s, load {load_average()}",
            file=sys.stderr,
            flush=True,
        )
        if found in ("X wins", "X loses"):
            break
    outcome = outcome_of(run.proved, every_step)
    total_nodes = sum(record["nodes"] for record in run.proved.values())
    total_seconds = sum(record["seconds"] for record in run.proved.values())
    print(
        f"({args.board}): {outcome} (published {published}); steps proved {len(run.proved)} of "
        f"{len(every_step)}: {total_nodes:,} nodes, {total_seconds:,.1f} s in all runs; this run "
        f"{time.perf_counter() - started:,.1f} s; load {load_average()}"
    )
    for step, record in run.proved.items():
        print(f"  {step}: {record['found']}, {record['nodes']:,} nodes, {record['seconds']} s")


if __name__ == "__main__":
    main()
