"""Check a tablebase's counts against the exhaustive solver's forward pass: for each early ply,
the canonical positions, the reachable ones (every image) and those whose game is over.

The forward pass is the exhaustive solver's own (:func:`solver.exhaustive.plies.enumerate_plies`):
each ply's sorted canonical keys are the distinct canonical children of the last ply's open
positions. It keeps the plies in a ply store in a temporary folder (``--work DIR`` keeps it, and
a rerun with the same folder goes on from the plies it holds). Each ply made is counted: its
keys, their images (:meth:`KeyArrays.orbit_sizes`, as the solver's ply tables count them), and
those whose game is over (the last mover has a line; at the last ply, every full board too).
The table's counts are its files' headers, as ``ttt table figures`` prints them
(``Tablebase.record_counts``); no record is read.

The pass goes to ``--plies`` (default: the last ply) but stops before a ply that might not fit
``--memory``, and says so. Making ply p+1 holds, 8 bytes a key, ply p's keys, its open ones,
each chunk's distinct canonical children and their concatenation (each at most the children
themselves) and ply p+1: at most ``8 * (canonical + open * (1 + 2 * empty cells) + next)``,
counted with the table's counts. Measured: 4x6 k=4's ply 9 (bound 3.5 GiB) peaked at 1.4 GB
resident, its ply 10 (bound 10.6 GiB) at 9.4 GB, 5x5 k=4's ply 10 (bound 8.8 GiB) at 7.6 GB.

One line a ply: the pass's counts, the table's, agree or DISAGREE, and the seconds the ply
took. Each ply's result is also one JSON line appended to ``--out``; a rerun skips the plies
already there. The exit status is 1 when any ply disagrees (in this run or in ``--out``).

    python bench/check_reachable.py 4x6k4 FOLDER --memory 12G --out 4x6k4-reachable.jsonl
    python bench/check_reachable.py 5x5k4 FOLDER --plies 8
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ttt_solve.solver.exhaustive.keyarrays import KeyArrays, key_arrays
from ttt_solve.solver.exhaustive.plies import enumerate_plies, ply_name
from ttt_solve.solver.exhaustive.plystore import PlyStore
from ttt_solve.solver.rules import Rules, parse_game
from ttt_solve.solver.tablebase.build import parse_bytes, size_text
from ttt_solve.solver.tablebase.probe import open_tablebase
from ttt_solve.solver.tablebase.record import RecordCounts

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # common.py beside it
from common import checked  # noqa: E402

KEY_BYTES = 8


class PlyCounts(NamedTuple):
    """One ply's positions: canonical, reachable, and how many of each are over."""

    canonical: int
    reachable: int
    over: int
    over_reachable: int

    @classmethod
    def of_table(cls, counts: RecordCounts) -> PlyCounts:
        """A table's counts (``counts[outcome, terminal, kind]``)."""
        by = counts.counts
        return cls(
            int(by[:, :, 0].sum()),
            int(by[:, :, 1].sum()),
            int(by[:, 1, 0].sum()),
            int(by[:, 1, 1].sum()),
        )

    @classmethod
    def of_keys(cls, arrays: KeyArrays, keys: np.ndarray, won: np.ndarray, ply: int) -> PlyCounts:
        """A ply of the forward pass: its canonical keys and which the last mover has won."""
        images = arrays.orbit_sizes(keys)
        over = np.ones(len(keys), dtype=bool) if ply == arrays.cells else np.asarray(won)
        return cls(
            len(keys),
            int(images.sum(dtype=np.int64)),
            int(np.count_nonzero(over)),
            int(images[over].sum(dtype=np.int64)),
        )

    def text(self) -> str:
        return " ".join(f"{count:,}" for count in self)


NONE = PlyCounts(0, 0, 0, 0)


def table_counts(folder: Path, rules: Rules) -> dict[int, PlyCounts]:
    """Every ply's counts from the table's headers."""
    with open_tablebase(folder, rules) as table:
        return {ply: PlyCounts.of_table(table.record_counts(ply)) for ply in range(rules.cells + 1)}


def plies_that_fit(
    rules: Rules, expected: Mapping[int, PlyCounts], asked: int, memory: int
) -> tuple[int, str]:
    """The last ply to make (up to ``asked``) within ``memory``, and why it stops there."""
    for ply in range(asked):
        here, next_ply = expected[ply], expected[ply + 1]
        open_keys = here.canonical - here.over
        children = open_keys * (rules.cells - ply)
        need = KEY_BYTES * (here.canonical + open_keys + 2 * children + next_ply.canonical)
        if need > memory:
            return ply, (
                f"ply {ply + 1} might take {size_text(need, binary=True)}: "
                f"{next_ply.canonical:,} keys from {children:,} children, "
                f"over --memory {size_text(memory, binary=True)}"
            )
    return asked, f"within --memory {size_text(memory, binary=True)}"


def compare(ply: int, found: PlyCounts, expected: PlyCounts, seconds: float) -> dict:
    """One ply's result."""
    return {
        "ply": ply,
        "pass": found._asdict(),
        "table": expected._asdict(),
        "agree": found == expected,
        "seconds": round(seconds, 1),
    }


def line(result: dict) -> str:
    verdict = "agree" if result["agree"] else "DISAGREE"
    found, expected = PlyCounts(**result["pass"]), PlyCounts(**result["table"])
    return (
        f"{result['ply']:>3}: {found.text()} | {expected.text()}  {verdict}  "
        f"{result['seconds']:.1f} s"
    )


def forward_pass(
    rules: Rules,
    last_ply: int,
    work: str,
    skip: set[int],
    report: Callable[[int, PlyCounts, float], None],
) -> int:
    """Make plies 0 to ``last_ply`` in a ply store in ``work``, and report each one's counts
    but those in ``skip``, with the seconds it took; returns how many plies have positions."""
    arrays = key_arrays(rules)
    store = PlyStore(work, {"game": rules.name, "check": "reachable"})
    started = time.perf_counter()

    def counted(ply: int) -> None:
        nonlocal started
        if ply not in skip:
            keys = store.load(ply_name("keys", ply))
            won = store.load(ply_name("won", ply))
            found = PlyCounts.of_keys(arrays, np.asarray(keys), won, ply)
            report(ply, found, time.perf_counter() - started)
        started = time.perf_counter()

    try:
        return enumerate_plies(arrays, store, last_ply, on_ply=counted)
    finally:
        store.release()


def check_plies(
    rules: Rules,
    expected: Mapping[int, PlyCounts],
    last_ply: int,
    work: str,
    out: Path | None = None,
) -> int:
    """The forward pass to ``last_ply`` against ``expected``, one line a ply (and one JSON
    line in ``out``, whose plies are skipped); 1 when any ply disagrees."""
    previous = []
    if out is not None and out.exists():
        previous = [json.loads(text) for text in out.read_text().splitlines() if text]
    done = {result["ply"] for result in previous}
    failed = not all(result["agree"] for result in previous)

    def report(ply: int, found: PlyCounts, seconds: float) -> None:
        nonlocal failed
        result = compare(ply, found, expected[ply], seconds)
        print(line(result), flush=True)
        if out is not None:
            with open(out, "a") as lines:
                lines.write(json.dumps(result) + "\n")
        failed |= not result["agree"]

    print("ply: canonical reachable over over-reachable, the pass | the table", flush=True)
    if not set(range(last_ply + 1)) - done:
        print(f"every ply to {last_ply} is in {out} already", flush=True)
    else:
        made = forward_pass(rules, last_ply, work, done, report)
        for ply in range(made, last_ply + 1):  # no open position is left to play on
            if ply not in done:
                report(ply, NONE, 0.0)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game", help="the game, e.g. 4x6k4")
    parser.add_argument("table", type=Path, help="the table's folder")
    parser.add_argument("--plies", type=int, help="the last ply to make (default: the last)")
    parser.add_argument("--memory", default="4G", help="memory the pass may use (4G)")
    parser.add_argument("--work", help="a folder to keep the plies in (default: a temporary one)")
    parser.add_argument("--out", type=Path, help="one JSON line a ply (a rerun skips those)")
    return checked(check, parser.parse_args(argv))


def check(args: argparse.Namespace) -> int:
    """The check the arguments ask for; 1 when any ply disagrees."""
    rules = parse_game(args.game)
    expected = table_counts(args.table, rules)
    if args.plies is not None and args.plies < 0:
        raise ValueError(f"--plies {args.plies}: a ply is 0 or more")
    asked = rules.cells if args.plies is None else min(args.plies, rules.cells)
    last_ply, why = plies_that_fit(rules, expected, asked, parse_bytes(args.memory))
    print(f"{rules.name}: the forward pass to ply {last_ply} ({why})", flush=True)
    if args.work is not None:
        return check_plies(rules, expected, last_ply, args.work, args.out)
    with tempfile.TemporaryDirectory(prefix="check-reachable-") as work:
        return check_plies(rules, expected, last_ply, work, args.out)


if __name__ == "__main__":
    sys.exit(main())
