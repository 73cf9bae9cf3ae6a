"""Benchmark of an agent's isolation: what a move costs in a child process against in this one.

A Python agent given a time limit runs in a forked child process (``agents/isolation.py``); one
without runs in the caller's process. Each agent below answers every reachable non-terminal
3x3 position (4,520) through :class:`CallableAgent`, in turn in this process and in a child,
and the time per move (wall clock, median of ``--repeat`` rounds) is shown with the difference:
the pipe's round trip, the position's pickle and the answer's JSON, and the generator's state
when the agent drew from it. The child's start (its fork, before the first move) is shown apart.

* ``first-empty``: the first empty cell of a flat board (a move of about a microsecond);
* ``random``: ``random.choice`` of the empty cells (the global generator, seeded per move);
* ``own-rng``: a plug-in's agent drawing from the generator it was made with (its state comes
  back with every answer);
* ``win-or-block``: a lab's heuristic, win if it can, else block, else the centre.

    python bench/bench_isolation.py
    python bench/bench_isolation.py --repeat 7
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from tabulate import tabulate

from ttt_solve.agents.adapters import Adapter, CallableAgent
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

RULES = Rules(3, 3, 3)
LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def first_empty(board: list[str]) -> int:
    return board.index(" ")


def random_empty(board: list[str]) -> int:
    return random.choice([i for i, c in enumerate(board) if c == " "])


def win_or_block(board: list[str], side: str) -> int:
    """A lab's heuristic: win if it can, else block, else the centre, else the first empty."""
    other = "O" if side == "X" else "X"
    for who in (side, other):
        for line in LINES:
            marks = [board[i] for i in line]
            if marks.count(who) == 2 and marks.count(" ") == 1:
                return line[marks.index(" ")]
    return 4 if board[4] == " " else board.index(" ")


def own_rng_agent(rng: random.Random) -> Callable[[Position], int]:
    return lambda position: rng.choice(position.legal_moves())


def positions() -> list[Position]:
    """Every reachable non-terminal position of 3x3, each once."""
    seen: dict[tuple[int, int], Position] = {}
    frontier = [Position(RULES, 0, 0)]
    while frontier:
        position = frontier.pop()
        if (position.x, position.o) in seen or position.is_terminal:
            continue
        seen[position.x, position.o] = position
        frontier.extend(position.play(cell) for cell in position.legal_moves())
    return list(seen.values())


def agent(name: str, timeout: float | None) -> CallableAgent:
    rng = random.Random(0)
    if name == "first-empty":
        return CallableAgent(rng, first_empty, Adapter.make("flat"), timeout=timeout)
    if name == "random":
        return CallableAgent(rng, random_empty, Adapter.make("flat"), timeout=timeout)
    if name == "own-rng":
        return CallableAgent(rng, own_rng_agent(rng), timeout=timeout)
    return CallableAgent(rng, win_or_block, Adapter.make("flat", side="name"), timeout=timeout)


def per_move_us(made: CallableAgent, every: list[Position]) -> tuple[float, float, list[int]]:
    """Wall and CPU microseconds per move over ``every`` position (the generator seeded per
    move, as an audit does), and the moves. The CPU time is this process's and its child's
    (counted once the child is reaped, by ``close``): on a busy machine it is the steadier."""
    moves = []
    started, cpu = time.perf_counter(), _cpu()
    for index, position in enumerate(every):
        made.rng.seed(index)
        moves.append(made.select_move(position))
    made.close()
    wall, cpu = time.perf_counter() - started, _cpu() - cpu
    return wall / len(every) * 1e6, cpu / len(every) * 1e6, moves


def _cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds per agent (median)")
    args = parser.parse_args()
    every = positions()
    rows: list[list[Any]] = []
    starts = []
    for name in ("first-empty", "random", "own-rng", "win-or-block"):
        inside: list[tuple[float, float]] = []
        child: list[tuple[float, float]] = []
        for _ in range(args.repeat):
            *us, moves_here = per_move_us(agent(name, None), every)
            inside.append((us[0], us[1]))
            isolated = agent(name, 60.0)
            started = time.perf_counter()
            isolated.select_move(every[0])  # the fork, and the first move
            starts.append((time.perf_counter() - started) * 1e3)
            *us, moves_child = per_move_us(isolated, every)
            child.append((us[0], us[1]))
            if moves_child != moves_here:
                raise SystemExit(f"{name}: the child played other moves than this process")
        row = [name]
        for column in (0, 1):
            a = statistics.median(t[column] for t in inside)
            b = statistics.median(t[column] for t in child)
            row += [f"{a:,.0f}", f"{b:,.0f}", f"{b - a:+,.0f}"]
        rows.append(row)
    print(f"{len(every):,} positions of 3x3 a round, median of {args.repeat} rounds; the same")
    print("moves in both modes (checked). Microseconds per move:\n")
    headers = [
        "agent",
        "wall, in process",
        "wall, in a child",
        "difference",
        "CPU, in process",
        "CPU, in a child",
        "difference",
    ]
    print(tabulate(rows, headers=headers, disable_numparse=True))
    print(f"\nthe child's start (fork and first move): median {statistics.median(starts):.1f} ms")


if __name__ == "__main__":
    main()
