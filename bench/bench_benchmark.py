"""What ``ttt benchmark`` costs beyond the agent's own time, measured side by side in one run.

For each agent, ``--repeat`` runs of :func:`~ttt_solve.agents.benchmark.run_benchmark` on the
set in this process (``jobs=1``, one core), the run with the least harness time reported:

* **the agent**: the time inside its ``select_move`` calls, timed as they happen in the run,
  less the seeding of its generator (which happens there, when the agent first draws);
* **the benchmark**: the whole run: the grading pipeline's posing of every position (the
  agent's generator seeded for each, where the agent draws from it), the agent's moves, the
  grading and the cells' figures;
* **the harness**: the run's time less the agent's, and its share of the agent's time
  (target: at most 10% on a 5x5 k=4 set with a fast agent);
* **harness CPU**: the processor time of the harness alone, a run of the set whose agent
  replays the answers of the timed run without thinking (the least of ``--repeat``), and its
  share of the agent's processor time (the timed runs' least processor time less the
  harness's): figures the machine's load moves less than those on the clock;
* **seeded**: the positions in which the agent drew from its generator, so that it was seeded;
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
import sys
import time
from pathlib import Path
from typing import NamedTuple

from tabulate import tabulate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import measure, script  # noqa: E402

from ttt_solve.agents import seeding  # noqa: E402
from ttt_solve.agents.benchmark import run_benchmark  # noqa: E402
from ttt_solve.agents.benchset import load_set, set_path  # noqa: E402
from ttt_solve.agents.makers import InstanceMaker  # noqa: E402
from ttt_solve.agents.parallel import AgentMaker  # noqa: E402
from ttt_solve.solver.rules import parse_game  # noqa: E402


class Timed(NamedTuple):
    """One run of the set: wall seconds inside the agent's moves and of the whole run,
    processor seconds of the whole run, and each position's answer (with whether the agent
    drew from its generator there)."""

    agent: float
    total: float
    cpu: float
    answers: dict[int, tuple[int, bool]]

    @property
    def seeded(self) -> int:
        return sum(drew for _, drew in self.answers.values())


def timed_run(spec: str, bench_set, seed: int) -> Timed:  # noqa: ANN001
    """One :func:`run_benchmark` (one process), the agent's calls timed as they happen. A
    generator is seeded when the agent first draws from it, inside its move: that seeding is
    timed too and counted as the harness's."""
    agent = AgentMaker(spec).build()
    choose = agent.select_move
    spent = [0.0]
    seeded = [0, 0.0]
    answers = {}

    def select_move(position):  # noqa: ANN001, ANN202
        before = seeded[0]
        started = time.perf_counter()
        try:
            cell = choose(position)
        finally:
            spent[0] += time.perf_counter() - started
        answers[position.key] = (cell, seeded[0] > before)
        return cell

    def seed_now(rng):  # noqa: ANN001, ANN202
        started = time.perf_counter()
        try:
            untimed_seed_now(rng)
        finally:
            seeded[0] += 1
            seeded[1] += time.perf_counter() - started

    agent.select_move = select_move
    untimed_seed_now, seeding._seed_now = seeding._seed_now, seed_now
    try:
        started, cpu = time.perf_counter(), time.thread_time()
        run_benchmark(InstanceMaker(agent), bench_set, seed=seed, jobs=1)
        cpu, total = time.thread_time() - cpu, time.perf_counter() - started
    finally:
        seeding._seed_now = untimed_seed_now
    return Timed(spent[0] - seeded[1], total, cpu, answers)


def replayed_cpu(spec: str, bench_set, seed: int, answers: dict[int, tuple[int, bool]]) -> float:  # noqa: ANN001
    """Processor seconds of a run whose agent replays ``answers`` without thinking: the
    harness alone (the agent's generator seeded where the agent drew from it)."""
    agent = AgentMaker(spec).build()

    def select_move(position):  # noqa: ANN001, ANN202
        cell, drew = answers[position.key]
        if drew:
            agent.rng.random()  # seeds the generator, as the agent's first draw did
        return cell

    agent.select_move = select_move
    started = time.thread_time()
    run_benchmark(InstanceMaker(agent), bench_set, seed=seed, jobs=1)
    return time.thread_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="5x5k4", help="a published set's game")
    parser.add_argument("--set", dest="set_file", help="another set file (SHA256SUMS beside it)")
    parser.add_argument("--agent", action="append", dest="agents")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rules = parse_game(args.game)
    path = Path(args.set_file) if args.set_file else set_path(rules)
    started = time.perf_counter()
    bench_set = load_set(path)
    rules = bench_set.rules
    loading = time.perf_counter() - started
    agents = args.agents or ["heuristic", "mcts:iterations=100"]
    rows = []
    for spec in agents:
        runs = [timed_run(spec, bench_set, 0) for _ in range(args.repeat)]
        timed = min(runs, key=lambda run: run.total - run.agent)
        agent, total = timed.agent, timed.total
        harness_cpu = min(replayed_cpu(spec, bench_set, 0, timed.answers) for _ in runs)
        agent_cpu = min(run.cpu for run in runs) - harness_cpu
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
                f"{harness_cpu:.3f}",
                f"{100 * harness_cpu / agent_cpu:.1f}%",
                f"{timed.seeded:,}",
                f"{command.seconds:.1f}",
                f"{command.peak_mib:.0f}",
            ]
        )
    print(
        f"{rules.name}: {len(bench_set.items):,} positions in {path.name}; loading and checking "
        f"the set {loading:.2f} s; the least of {args.repeat} runs each, load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    print(
        tabulate(
            rows,
            headers=[
                "agent",
                "agent (s)",
                "benchmark (s)",
                "harness (s)",
                "harness / agent",
                "harness CPU (s)",
                "/ agent CPU",
                "seeded",
                "whole command (s)",
                "peak (MiB)",
            ],
            tablefmt="github",
            disable_numparse=True,
        )
    )


if __name__ == "__main__":
    main()
