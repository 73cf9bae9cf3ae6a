"""Check a tablebase against independent answers: the prover's live search on a seeded sample of
every ply, and every entry of an alpha-beta opening book of the same game.

The sample is uniform over each ply's canonical positions (up to ``--per-ply`` of them a ply,
all of a smaller ply), drawn by the table's one sampler (``solver.tablebase.sample``) with a
generator seeded by ``--seed`` and the ply; each position's value and remoteness from the
table must equal the prover's exact score (:meth:`Prover.solve`). Instead of a folder,
``--sample`` takes the positions and records a build elsewhere brought back (JSONL, gzipped or
not: ``ply``, ``position``, ``record``), as a GPU machine's build of 5x5 k=5 does.
``--opening-book DB`` compares the value, remoteness and best moves of every position an
opening book of the game holds (``ttt-solve --book-depth D``).

Each ply's result is one JSON line appended to ``--out`` as it is done (the positions checked,
how many disagree, a few of them, and the seconds spent drawing the sample and in the prover's
search); a rerun skips the plies already there, so an interrupted check goes on where it
stopped. The exit status is 1 when any position disagrees.

    python bench/check_tablebase.py 5x5k4 --table FOLDER --out 5x5k4-check.jsonl
    python bench/check_tablebase.py 5x5k5 --sample sample-5x5k5.jsonl.gz --out 5x5k5-check.jsonl
    python bench/check_tablebase.py 5x5k4 --table FOLDER --opening-book ab554.sqlite
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

from ttt_solve.book.reader import open_book
from ttt_solve.solver.position import Position
from ttt_solve.solver.prover.search import Prover
from ttt_solve.solver.rules import Rules, parse_game
from ttt_solve.solver.tablebase.probe import Tablebase, open_tablebase
from ttt_solve.solver.tablebase.record import value_of_record
from ttt_solve.solver.tablebase.sample import PlySample
from ttt_solve.solver.value import Outcome, Value

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # common.py beside it
from common import checked  # noqa: E402


def table_sample(folder: Path, rules: Rules, ply: int, size: int, seed: int) -> list[tuple]:
    """Up to ``size`` of the ply's canonical positions, drawn uniformly
    (:class:`~ttt_solve.solver.tablebase.sample.PlySample`), each with its record."""
    drawn = PlySample(folder, rules, ply).sample(size, seed)
    return [
        (Position(rules, int(x), int(o)), int(record))
        for x, o, record in zip(drawn.x, drawn.o, drawn.records)
    ]


def file_sample(path: Path, rules: Rules) -> dict[int, list[tuple]]:
    """The positions and records of a sample file, by ply."""
    opener = gzip.open if path.suffix == ".gz" else open
    by_ply: dict[int, list[tuple]] = defaultdict(list)
    with opener(path, "rt") as lines:
        for line in lines:
            item = json.loads(line)
            by_ply[item["ply"]].append((Position.parse(item["position"], rules), item["record"]))
    return by_ply


def check_ply(prover: Prover, ply: int, sample: list[tuple]) -> dict:
    """The ply's sample against the prover's exact scores."""
    started = time.perf_counter()
    wrong = []
    for position, record in sample:
        expected = value_of_record(record, position.empty_count)
        found = prover.solve(position).value
        if found != expected:
            wrong.append(f"{position}: table {expected}, prover {found}")
    return {
        "ply": ply,
        "checked": len(sample),
        "disagree": len(wrong),
        "examples": wrong[:5],
        "prover_seconds": round(time.perf_counter() - started, 1),
    }


def opening_book_problems(table: Tablebase, db: str, rules: Rules) -> tuple[int, list[str]]:
    """How many positions an opening book holds, and each one whose value, remoteness or best
    moves the table does not give."""
    held, problems = 0, []
    with open_book(db) as book:
        for row in book.rows(rules):
            held += 1
            position = Position.from_key(rules, row.key)
            value, moves = table.probe_moves(position)
            stored = Value(Outcome.from_sign(row.value), row.remoteness)
            if value != stored:
                problems.append(f"{position}: table {value}, book {stored}")
                continue
            if moves:
                best = min(move.sort_key for move in moves.values())
                table_best = sum(1 << cell for cell, move in moves.items() if move.sort_key == best)
                if table_best != row.best_moves:
                    problems.append(
                        f"{position}: best moves differ "
                        f"({table_best:#x} against {row.best_moves:#x})"
                    )
    return held, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game", help="the game, e.g. 5x5k4")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--table", type=Path, help="the table's folder")
    source.add_argument("--sample", type=Path, help="positions and records (JSONL)")
    parser.add_argument("--per-ply", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, help="one JSON line a ply (a rerun skips those)")
    parser.add_argument("--opening-book", help="an opening book of the game to compare")
    return checked(check, parser.parse_args(argv))


def check(args: argparse.Namespace) -> int:
    """The checks the arguments ask for; 1 when any position disagrees."""
    rules = parse_game(args.game)
    failed = False
    if args.opening_book:
        if args.table is None:
            raise ValueError("--opening-book needs --table")
        with open_tablebase(args.table, rules) as table:
            held, problems = opening_book_problems(table, args.opening_book, rules)
        print(f"opening book: {held:,} positions, {len(problems)} disagree", flush=True)
        for problem in problems[:10]:
            print("  ", problem)
        failed |= bool(problems)
    done: set[int] = set()
    if args.out is not None and args.out.exists():
        done = {json.loads(line)["ply"] for line in args.out.read_text().splitlines() if line}
    samples = file_sample(args.sample, rules) if args.sample else None
    prover = Prover(rules)
    for ply in range(rules.cells + 1):
        if ply in done:
            continue
        started = time.perf_counter()
        if samples is not None:
            sample = samples.get(ply, [])
        else:
            sample = table_sample(args.table, rules, ply, args.per_ply, args.seed)
        sample_seconds = round(time.perf_counter() - started, 1)
        result = check_ply(prover, ply, sample) | {"sample_seconds": sample_seconds}
        print(json.dumps(result), flush=True)
        if args.out is not None:
            with open(args.out, "a") as out:
                out.write(json.dumps(result) + "\n")
        failed |= result["disagree"] > 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
