"""Benchmark of ``gymnasium.make_vec("ttt_solve/Mnk-v0")``: the batched environment side by side
with Gymnasium's ``SyncVectorEnv`` of the same environment, in one run, on the same games.

Each vector environment plays ``--envs`` games at once for ``--steps`` steps against
``--opponent`` (``perfect:eps=0.5`` by default), the learner's side drawn at each reset, with
the truth in ``info``: the same seeds and the same random legal actions in both (the two give
the same steps, as the tests require), each environment fresh, so that every answer of the truth
is read from the book. A row's figure is the time per game step (a vector step divided by the
games in it), the median of ``--repeat`` runs, the two made in turns. The book is a fresh one of
the game, solved beforehand (not timed): ``exhaustive`` in SQLite rows, or ``table`` (a
tablebase beside the book, which the book reads a position at a time).

    python bench/bench_rl_vector.py
    python bench/bench_rl_vector.py --game 4x4k4 --method exhaustive --method table
    python bench/bench_rl_vector.py --opponent perfect
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import warnings

from tabulate import tabulate

warnings.filterwarnings("ignore", category=UserWarning)

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_average  # noqa: E402

import ttt_solve.rl  # noqa: E402, F401 - registers ttt_solve/Mnk-v0
from ttt_solve.book.solving import solve  # noqa: E402
from ttt_solve.solver.rules import parse_game  # noqa: E402

MODES = ("vector_entry_point", "sync")


def seconds_per_game_step(
    mode: str, rules, book: str, envs: int, steps: int, opponent: str
) -> float:  # noqa: ANN001
    """The time per game step of ``steps`` vector steps in a fresh vector environment."""
    made = gymnasium.make_vec(
        "ttt_solve/Mnk-v0",
        num_envs=envs,
        vectorization_mode=mode,
        rows=rules.rows,
        cols=rules.cols,
        k=rules.k,
        opponent=opponent,
        learner="random",
        book=book,
    )
    rng = random.Random(0)
    started = time.perf_counter()
    observations, _ = made.reset(seed=0)
    for _ in range(steps):
        masks = observations["action_mask"]
        actions = [rng.choice(np.flatnonzero(row).tolist() or [0]) for row in masks]
        observations, *_ = made.step(actions)
    seconds = time.perf_counter() - started
    made.close()
    return seconds / (envs * steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="4x4k4", help="The game, as 4x4k4.")
    parser.add_argument(
        "--method", action="append", choices=("exhaustive", "table"), help="How the book holds it."
    )
    parser.add_argument("--opponent", default="perfect:eps=0.5", help="The opponent's spec.")
    parser.add_argument("--envs", type=int, default=16, help="Games in each vector environment.")
    parser.add_argument("--steps", type=int, default=100, help="Vector steps in each run.")
    parser.add_argument("--repeat", type=int, default=3, help="Runs of each (the median).")
    args = parser.parse_args()
    rules = parse_game(args.game)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for method in args.method or ["exhaustive"]:
            book = os.path.join(folder, f"{method}.sqlite")
            solve(rules, book, method=method)
            times: dict[str, list[float]] = {mode: [] for mode in MODES}
            for _ in range(args.repeat):
                for mode in MODES:
                    times[mode].append(
                        seconds_per_game_step(
                            mode, rules, book, args.envs, args.steps, args.opponent
                        )
                    )
            mine, theirs = (statistics.median(times[mode]) for mode in MODES)
            rows.append(
                [method, f"{mine * 1e3:.2f}", f"{theirs * 1e3:.2f}", f"{theirs / mine:.2f}x"]
            )
    print(
        f"{rules.name} against {args.opponent}: {args.envs} games at once, {args.steps} "
        f"steps, median of {args.repeat} runs each, load average {load_average()}"
    )
    header = ["book", "make_vec (ms/step)", "SyncVectorEnv (ms/step)", "speed-up"]
    print(tabulate(rows, headers=header, tablefmt="github"))


if __name__ == "__main__":
    main()
