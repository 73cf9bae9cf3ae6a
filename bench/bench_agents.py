"""Benchmark of the agents: our MCTS against OpenSpiel's C++ MCTS in one run, and an audit.

1. MCTS, one move of 1,000 simulations (random rollouts, UCT c=1.4, no solver) from the empty
   board, CPU time per move, ours and OpenSpiel's C++ ``pyspiel.MCTSBot`` (with a
   ``RandomRolloutEvaluator`` of one rollout, the same c, ``solve=False``) measured in turns in
   the same process, median of ``--repeat``, and their ratio (ours / OpenSpiel's). OpenSpiel
   plays 3x3 as its native C++ ``tic_tac_toe`` (its fastest game) and as its generic C++
   ``mnk(m=3,n=3,k=3)``, larger boards as ``mnk``. Target: at most 1.0x OpenSpiel's time per
   move on 3x3 (against ``tic_tac_toe``) and on 4x4 k=3. OpenSpiel's Python ``MCTSBot`` on 3x3
   is shown for scale.
2. ``ttt audit --agent mcts:iterations=1000 --positions all`` on 3x3, whole process (the book
   built beforehand, not timed). Target: under 60 s.

Needs the openspiel extra (``pip install -e '.[openspiel]'``) for the OpenSpiel columns.

    python bench/bench_agents.py
    python bench/bench_agents.py --repeat 21
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from tabulate import tabulate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import measure, script  # noqa: E402

from ttt_solve.agents.mcts import MctsAgent  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402

SIMULATIONS = 1000
C = 1.4
TARGET_RATIO = 1.0
AUDIT_TARGET_S = 60.0
BOARDS = (Rules(3, 3, 3), Rules(4, 4, 3), Rules(4, 4, 4))


def cpu_ms(move: Callable[[], object]) -> float:
    started = time.process_time()
    move()
    return 1000 * (time.process_time() - started)


def ours(rules: Rules) -> Callable[[], object]:
    agent = MctsAgent(random.Random(0), iterations=SIMULATIONS, c=C)
    start = Position.start(rules)
    agent.tree(start)  # compile (or load the cached machine code) and build the tables
    return lambda: agent.tree(start)


def openspiel_cpp(game_name: str) -> Callable[[], object] | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game(game_name)
    evaluator = pyspiel.RandomRolloutEvaluator(1, 0)
    bot = pyspiel.MCTSBot(game, evaluator, C, SIMULATIONS, 1000, False, 0, False)
    state = game.new_initial_state()
    bot.step(state)
    return lambda: bot.step(state)


def openspiel_python(game_name: str) -> Callable[[], object] | None:
    try:
        import numpy as np
        import pyspiel
        from open_spiel.python.algorithms import mcts
    except ImportError:
        return None
    game = pyspiel.load_game(game_name)
    random_state = np.random.RandomState(0)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state)
    bot = mcts.MCTSBot(game, C, SIMULATIONS, evaluator, solve=False, random_state=random_state)
    state = game.new_initial_state()
    return lambda: bot.step(state)


def mnk(rules: Rules) -> str:
    return f"mnk(m={rules.cols},n={rules.rows},k={rules.k})"  # OpenSpiel's m is columns


def mcts_rows(repeat: int) -> list[list[str]]:
    rows = []
    for rules in BOARDS:
        peers = {"OpenSpiel C++ mnk": openspiel_cpp(mnk(rules))}
        if rules == Rules(3, 3, 3):
            peers = {
                "OpenSpiel C++ tic_tac_toe": openspiel_cpp("tic_tac_toe"),
                **peers,
                "OpenSpiel Python": openspiel_python("tic_tac_toe"),
            }
        runs = {"ours": ours(rules), **{name: run for name, run in peers.items() if run}}
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(repeat):  # in turns, so that every one sees the same load
            for name, run in runs.items():
                times[name].append(cpu_ms(run))
        median = {name: statistics.median(values) for name, values in times.items()}
        for name in runs:
            if name == "ours":
                continue
            ratio = median["ours"] / median[name]
            targeted = name != "OpenSpiel Python" and (
                rules == Rules(4, 4, 3) or name == "OpenSpiel C++ tic_tac_toe"
            )
            rows.append(
                [
                    rules.name,
                    name,
                    f"{median['ours']:.2f}",
                    f"{median[name]:.2f}",
                    f"{ratio:.2f}x",
                    f"<= {TARGET_RATIO:.1f}x" if targeted else "-",
                    ("yes" if ratio <= TARGET_RATIO else "NO") if targeted else "-",
                ]
            )
        if len(runs) == 1:
            rows.append([rules.name, "(OpenSpiel not installed)", f"{median['ours']:.2f}"])
    return rows


def audit_row() -> list[str]:
    with tempfile.TemporaryDirectory(prefix="ttt-bench-") as workdir:
        db = os.path.join(workdir, "3x3.sqlite")
        subprocess.run(
            [script("ttt-solve"), "--size", "3", "--win", "3", "--db", db, "-q"], check=True
        )
        run = measure(
            [
                script("ttt"),
                *"audit --agent mcts:iterations=1000 --size 3 --win 3 --positions all".split(),
                *["--db", db, "--json", "-q"],
            ]
        )
    if run.returncode != 0:
        sys.exit(f"ttt audit failed:\n{run.output}")
    figures = json.loads(run.output)
    return [
        "ttt audit --agent mcts:iterations=1000 --positions all (3x3)",
        f"{run.seconds:.1f} s",
        f"{figures['graded']} positions, accuracy {100 * figures['accuracy']:.2f}%",
        f"< {AUDIT_TARGET_S:.0f} s",
        "yes" if run.seconds < AUDIT_TARGET_S else "NO",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11, help="timed moves per bot (median)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = mcts_rows(args.repeat)
    print(f"load average {load:.1f} on {os.cpu_count()} cores at the start")
    print(
        f"MCTS, {SIMULATIONS:,} simulations from the empty board, random rollouts, c={C}, "
        f"no solver: CPU ms per move, median of {args.repeat}, measured in turns"
    )
    print(
        tabulate(
            rows,
            headers=["board", "against", "ours ms", "theirs ms", "ratio", "target", "met"],
            tablefmt="simple_outline",
            disable_numparse=True,
        )
    )
    print(
        tabulate(
            [audit_row()],
            headers=["measure", "ours", "result", "target", "met"],
            tablefmt="simple_outline",
        )
    )


if __name__ == "__main__":
    main()
