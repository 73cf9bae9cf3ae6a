"""Benchmark of ``ttt curve``: the 3x3 MCTS curve, 10 to 3,000 iterations, 5 seeds, every position.

    ttt curve --agent mcts --vary iterations=10,30,100,300,1000,3000 --seeds 5 --positions all

30 audits of the 627 non-terminal 3x3 positions (up to symmetry), whole process, the book built
beforehand and not timed. Target: under 2 minutes on a 2-core machine. The wall time, the CPU
time of the command and its workers, and the load average are shown: on a machine shared with
other work the wall time also counts waiting for a core.

    python bench/bench_curve.py
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
ITERATIONS = "10,30,100,300,1000,3000"


def children_cpu() -> float:
    """CPU seconds of every finished child process so far (with the children they waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds per point")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ttt-bench-") as workdir:
        db = os.path.join(workdir, "3x3.sqlite")
        subprocess.run(
            [script("ttt-solve"), "--size", "3", "--win", "3", "--db", db, "-q"], check=True
        )
        load = os.getloadavg()[0]
        cpu_before = children_cpu()
        run = measure(
            [
                script("ttt"),
                "curve",
                "--agent",
                "mcts",
                "--vary",
                f"iterations={ITERATIONS}",
                "--seeds",
                str(args.seeds),
                "--positions",
                "all",
                "--db",
                db,
                "--json",
                "-q",
            ]
        )
        cpu = children_cpu() - cpu_before
    if run.returncode != 0:
        sys.exit(f"ttt curve failed:\n{run.output}")
    (curve,) = json.loads(run.output)["curves"]
    accuracy = ", ".join(
        f"{p['value']}: {100 * p['accuracy']['mean']:.2f}%" for p in curve["points"]
    )
    print(
        f"load average {load:.1f} on {os.cpu_count()} cores at the start (wall times grow with it)"
    )
    print(
        tabulate(
            [
                [
                    f"ttt curve mcts iterations={ITERATIONS}, {args.seeds} seeds, 3x3 all",
                    f"{run.seconds:.1f} s wall, {cpu:.1f} s CPU, {run.peak_mib:.0f} MiB",
                    f"< {TARGET_S:.0f} s",
                    "yes" if run.seconds < TARGET_S else "NO",
                ]
            ],
            headers=["measure", "ours", "target", "met"],
            tablefmt="simple_outline",
        )
    )
    print(f"accuracy by iterations: {accuracy}")
    print(f"kept the value for every seed from iterations={curve['kept_value_from']}")


if __name__ == "__main__":
    main()
