"""What ``ttt benchmark`` costs beyond the agent's own time, measured side by side in one run.

For each agent, in turns ``--repeat`` times (median reported), in this process, one core:

* **the agent alone**: its ``select_move`` in every position of the set, its generator seeded
  as the grading seeds it, only the calls timed;
* **the benchmark**: :func:`~ttt_solve.agents.benchmark.run_benchmark` on the same set
  (``jobs=1``): the grading pipeline's posing of every position, the same moves, the grading
  and the cells' figures;
* **the harness**: the benchmark's time less the agent's, and its share of the agent's time
  (target: at most 10% on a 5x5 k=4 set with a fast agent);
* **loading**: reading and checking the set (once per command, beside it).

The whole command is timed too (``ttt benchmark --agent SPEC``, start-up and imports
included). Agents default to ``heuristic`` (the fast one the target means) and
``mcts:iterations=100``.

    python bench/bench_benchmark.py --game 5x5k4
    python bench/bench_benchmark.py --game 4x5k4 --agent heuristic --agent random --repeat 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from tabulate import tabulate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import measure, script  # noqa: E402

from ttt_solve.agents.benchmark import run_benchmark  # noqa: E402
from ttt_solve.agents.benchset import load_set, set_path  # noqa: E402
from ttt_solve.agents.match import derive_seed  # noqa: E402
from ttt_solve.agents.parallel import AgentMaker  # noqa: E402
from ttt_solve.solver.rules import parse_game  # noqa: E402


def agent_alone(spec: str, bench_set, seed: int) -> float:  # noqa: ANN001
    """Seconds inside the agent's ``select_move`` over the whole set."""
    agent = AgentMaker(spec).build()
    spent = 0.0
    for item in bench_set.items:
        agent.rng.seed(derive_seed(seed, "position", item.position.key))
        started = time.perf_counter()
        agent.select_move(item.position)
        spent += time.perf_counter() - started
    return spent


def through_benchmark(spec: str, bench_set, seed: int) -> float:  # noqa: ANN001
    started = time.perf_counter()
    run_benchmark(AgentMaker(spec), bench_set, seed=seed, jobs=1)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="5x5k4")
    parser.add_argument("--agent", action="append", dest="agents")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rules = parse_game(args.game)
    path = set_path(rules)
    started = time.perf_counter()
    bench_set = load_set(path)
    loading = time.perf_counter() - started
    agents = args.agents or ["heuristic", "mcts:iterations=100"]
    rows = []
    for spec in agents:
        alone, whole = [], []
        for _ in range(args.repeat):
            alone.append(agent_alone(spec, bench_set, 0))
            whole.append(through_benchmark(spec, bench_set, 0))
        agent, total = statistics.median(alone), statistics.median(whole)
        command = measure(
            [
                script("ttt"),
                "benchmark",
                "--agent",
                spec,
                "--size",
                rules.size,
                "--win",
                str(rules.k),
                "-q",
                "--jobs",
                "1",
            ]  # fmt: skip
        )
        rows.append(
            [
                spec,
                f"{agent:.2f}",
                f"{total:.2f}",
                f"{total - agent:.2f}",
                f"{100 * (total - agent) / agent:.1f}%",
                f"{command.seconds:.1f}",
                f"{command.peak_mib:.0f}",
            ]
        )
    print(
        f"{rules.name}: {len(bench_set.items):,} positions in {path.name}; loading and checking "
        f"the set {loading:.2f} s; median of {args.repeat}, load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    print(
        tabulate(
            rows,
            headers=[
                "agent",
                "agent alone (s)",
                "benchmark (s)",
                "harness (s)",
                "harness / agent",
                "whole command (s)",
                "peak (MiB)",
            ],
            tablefmt="github",
            disable_numparse=True,
        )
    )


if __name__ == "__main__":
    main()
