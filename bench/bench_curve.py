"""Benchmark of ``ttt curve``: MCTS curves on 3x3 and on every position of 4x4 k=3.

1. ``--board 3x3`` (the default): the 3x3 curve of our MCTS, 10 to 3,000 iterations, 5 seeds,
   every position (30 audits of the 627 non-terminal positions up to symmetry). Target: under
   2 minutes on a 2-core machine.

       ttt curve --agent mcts --vary iterations=10,30,100,300,1000,3000 --seeds 5 --positions all

2. ``--board 4x4k3``: the curve of our MCTS at 10, 100, 1,000 and 10,000 iterations on every
   non-terminal position of 4x4 k=3 (3 seeds: the command's default), or, with
   ``--positions sample:N``, on N positions drawn uniformly (up to symmetry), from which the
   time of the whole curve is extrapolated: a uniform sample costs, position for position, what
   all positions cost on average. A second run on N/4 positions separates the fixed cost of a
   run (starting, reading the book) from the cost per position.

       ttt curve --agent mcts --vary iterations=10,100,1000,10000 --size 4 --win 3 --positions all

Whole process, the book built beforehand (by the same version) and not timed; ``--bin`` times
another installed version (its ``bin`` folder), for before-and-after figures. The wall time,
the CPU time of the command and its workers, and the load average are shown: on a machine
shared with other work the wall time also counts waiting for a core.

    python bench/bench_curve.py
    python bench/bench_curve.py --board 4x4k3 --positions sample:2000
    python bench/bench_curve.py --board 4x4k3 --bin ../old/.venv/bin --positions sample:300
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

from tabulate import tabulate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import measure, script  # noqa: E402

TARGET_S = 120.0
BOARDS = {
    "3x3": ("3", "3", "10,30,100,300,1000,3000", 5, "all"),
    "4x4k3": ("4", "3", "10,100,1000,10000", 3, "all"),
}


def children_cpu() -> float:
    """CPU seconds of every finished child process so far (with the children they waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def command(folder: str | None, name: str) -> str:
    return os.path.join(folder, name) if folder else script(name)


def nonterminal(folder: str | None, db: str, size: str, k: str) -> int:
    """The non-terminal positions up to symmetry (what ``--positions all`` audits)."""
    run = subprocess.run(
        [command(folder, "ttt"), "stats", "--size", size, "--win", k, "--db", db, "--json"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    figures = json.loads(run.stdout)
    return int(figures["canonical"]) - sum(figures["terminal"]["canonical"].values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", choices=sorted(BOARDS), default="3x3")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per point")
    parser.add_argument("--positions", default=None, help="all or sample:N")
    parser.add_argument("--bin", default=None, help="the bin folder of the version to time")
    args = parser.parse_args()
    size, k, iterations, default_seeds, default_positions = BOARDS[args.board]
    seeds = args.seeds or default_seeds
    positions = args.positions or default_positions
    with tempfile.TemporaryDirectory(prefix="ttt-bench-") as workdir:
        db = os.path.join(workdir, "book.sqlite")
        subprocess.run(
            [command(args.bin, "ttt-solve"), "--size", size, "--win", k, "--db", db, "-q"],
            check=True,
        )
        total = nonterminal(args.bin, db, size, k) if positions != "all" else None
        load = os.getloadavg()[0]

        def timed(positions: str) -> tuple[object, float]:
            cpu_before = children_cpu()
            run = measure(
                [
                    command(args.bin, "ttt"),
                    *["curve", "--agent", "mcts", "--vary", f"iterations={iterations}"],
                    *["--size", size, "--win", k, "--seeds", str(seeds)],
                    *["--positions", positions, "--db", db, "--json", "-q"],
                ]
            )
            if run.returncode != 0:
                sys.exit(f"ttt curve failed:\n{run.output}")
            return run, children_cpu() - cpu_before

        run, cpu = timed(positions)
        if total is not None:
            sampled = int(positions.split(":")[1])
            fewer = max(1, sampled // 4)
            small, small_cpu = timed(f"sample:{fewer}")
    (curve,) = json.loads(run.output)["curves"]
    graded = curve["points"][0]["runs"][0]
    accuracy = ", ".join(
        f"{p['value']}: {100 * p['accuracy']['mean']:.2f}%" for p in curve["points"]
    )
    print(
        f"load average {load:.1f} on {os.cpu_count()} cores at the start (wall times grow with it)"
    )
    name = f"ttt curve mcts iterations={iterations}, {seeds} seeds, {size}x{size} k={k} {positions}"
    row = [name, f"{run.seconds:.1f} s wall, {cpu:.1f} s CPU, {run.peak_mib:.0f} MiB"]
    headers = ["measure", "this version" if args.bin is None else args.bin]
    if args.board == "3x3":
        row += [f"< {TARGET_S:.0f} s", "yes" if run.seconds < TARGET_S else "NO"]
        headers += ["target", "met"]
    if total is not None:
        per_wall = (run.seconds - small.seconds) / (sampled - fewer)
        per_cpu = (cpu - small_cpu) / (sampled - fewer)
        whole_wall = run.seconds + per_wall * (total - sampled)
        whole_cpu = cpu + per_cpu * (total - sampled)
        row.append(
            f"{whole_wall / 3600:.2f} h wall, {whole_cpu / 3600:.2f} h CPU for all {total:,} "
            f"positions ({1000 * per_cpu:.2f} ms CPU per position; sample:{fewer} took "
            f"{small.seconds:.1f} s wall, {small_cpu:.1f} s CPU)"
        )
        headers.append("extrapolated")
    print(tabulate([row], headers=headers, tablefmt="simple_outline"))
    print(f"graded moves per audit (weighted): {graded['moves']:,}")
    print(f"accuracy by iterations: {accuracy}")
    print(f"kept the value for every seed from iterations={curve['kept_value_from']}")


if __name__ == "__main__":
    main()
