"""Benchmark of the Dask engine: the exhaustive solve (no book write) on a 2-worker
``LocalCluster`` against the in-process solver, in one run.

Prints, per board: the in-process solve time, the Dask solve time, their ratio, the peak
memory of the largest worker process, the Parquet bytes kept and the bytes shuffled between
tasks, then the bytes shuffled ply by ply. Needs the dask extra (pip install 'ttt-solve[dask]').

    python bench/bench_dask.py              # 4x4 k=4 (target: under 60 s)
    python bench/bench_dask.py --with-4x5   # also 4 rows x 5 columns, k=4 (target: under 30 min)
"""

from __future__ import annotations

import resource
import tempfile
import time

from common import board_arguments, chosen_boards, load_average
from tabulate import tabulate

from ttt_solve.solver.exhaustive.distributed import DaskSolver
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.rules import Rules

BOARDS = [(Rules(4, 4, 4), 60.0)]  # rules, target seconds for the Dask solve
BOARD_4X5 = (Rules(4, 5, 4), 1800.0)


def in_process_seconds(rules: Rules) -> float:
    """The in-process exhaustive solve, plies kept in memory (as the CLI does below 2M)."""
    for _ in ExhaustiveSolver(Rules(2, 2, 2), compiled=True).solve():  # load the kernels
        pass
    started = time.perf_counter()
    for _ in ExhaustiveSolver(rules).solve():
        pass
    return time.perf_counter() - started


def dask_run(rules: Rules, workdir: str, workers: int) -> tuple[float, float, DaskSolver]:
    """The Dask solve on a fresh local cluster; (seconds, peak MiB of the largest worker,
    solver). The cluster is started before the clock and closed after it."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, memory_limit="4GiB", dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        client.wait_for_workers(workers)
        solver = DaskSolver(rules, workdir, client=client)
        started = time.perf_counter()
        solver.run()
        seconds = time.perf_counter() - started
        peaks = client.run(
            lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB
        )
    return seconds, max(peaks.values()), solver


def main() -> None:
    parser = board_arguments(__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    args = parser.parse_args()
    boards = chosen_boards(args, BOARDS, BOARD_4X5)
    table, per_ply = [], []
    print(f"load average at start {load_average()}")
    for rules, target in boards:
        local = in_process_seconds(rules)
        with tempfile.TemporaryDirectory(prefix="ttt-dask-bench-") as workdir:
            seconds, peak_mib, solver = dask_run(rules, workdir, args.workers)
        solved = [stats for stats in solver.stats if stats.stage == "solved"]
        made = [stats for stats in solver.stats if stats.stage == "keys"]
        table.append(
            (
                rules.name,
                f"{local:.1f}",
                f"{seconds:.1f}",
                f"{seconds / local:.1f}x",
                f"{peak_mib:,.0f}",
                f"{sum(s.stored for s in solved) / 2**20:,.1f}",
                f"{sum(s.shuffled for s in solver.stats) / 2**20:,.1f}",
                f"{sum(s.positions for s in solved):,}",
                "ok" if seconds <= target else f"over {target:.0f} s",
            )
        )
        for forward, backward in zip(made, reversed(solved)):
            per_ply.append(
                (
                    rules.name,
                    forward.ply,
                    f"{forward.positions:,}",
                    forward.partitions,
                    f"{forward.shuffled / 2**20:,.2f}",
                    f"{backward.shuffled / 2**20:,.2f}",
                    f"{forward.seconds + backward.seconds:.2f}",
                )
            )
    print(
        tabulate(
            table,
            headers=[
                "game",
                "in-process s",
                "dask s",
                "ratio",
                "worker peak MiB",
                "parquet MiB",
                "shuffled MiB",
                "positions",
                "target",
            ],
        )
    )
    print()
    print(
        tabulate(
            per_ply,
            headers=[
                "game",
                "ply",
                "positions",
                "partitions",
                "shuffled fwd MiB",
                "shuffled back MiB",
                "s",
            ],
        )
    )
    print(f"\nload average at end {load_average()}")


if __name__ == "__main__":
    main()
