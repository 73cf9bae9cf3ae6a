"""The compiled MCTS against the pure-Python search it replaced: the same tree for the same
seed, node for node, and the generator left in the same state; its Mersenne Twister against
Python's."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tests.reference_mcts import ReferenceMcts
from tests.support import random_walk
from ttt_solve.agents.match import play_game
from ttt_solve.agents.mcts import MctsAgent
from ttt_solve.agents.spec import make_agent
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

BOARDS = [
    Rules(3, 3, 3),
    Rules(3, 4, 3),
    Rules(4, 4, 3),
    Rules(4, 4, 4),
    Rules(5, 5, 4),
    Rules(2, 3, 2),
    Rules(1, 4, 1),
    Rules(8, 8, 5),  # 64 cells: every bit of a 64-bit board
    Rules(9, 9, 5),  # past 64 cells
]
SETTINGS = [
    {},
    {"rollout": "heuristic"},
    {"solver": True},
    {"solver": True, "rollout": "heuristic", "c": 0.5},
    {"c": 0.0},
]


def tree_of(root) -> list[tuple[int, int, int, int | None]]:  # noqa: ANN001
    """Every node of a tree, depth first in expansion order."""
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        out.append((node.bit, node.visits, node.value, node.proven))
        stack.extend(reversed(node.children))
    return out


def test_the_generator_is_pythons_mersenne_twister():
    from ttt_solve.agents.mcts_kernel import next_double

    rng = random.Random(12345)
    rng.random()
    mt = np.array(rng.getstate()[1], np.int64)
    compiled = [next_double(mt) for _ in range(2000)]  # crosses the 624-word twist 6 times
    assert compiled == [rng.random() for _ in range(2000)]
    assert tuple(mt.tolist()) == rng.getstate()[1]  # the state handed back is Python's


@pytest.mark.parametrize("rules", BOARDS, ids=lambda rules: rules.name)
def test_the_same_tree_as_the_python_search_for_the_same_seed(rules):
    compared = 0
    for seed in range(12):
        position = random_walk(rules, random.Random(seed), seed % max(1, rules.cells - 1))
        if position.is_terminal:
            continue
        iterations = (7, 60, 400 if rules.cells <= 25 else 120)[seed % 3]
        for settings in SETTINGS:
            old = ReferenceMcts(random.Random(seed), iterations=iterations, **settings)
            new = MctsAgent(random.Random(seed), iterations=iterations, **settings)
            assert tree_of(new.tree(position)) == tree_of(old.tree(position)), (seed, settings)
            assert new.simulations == old.simulations
            assert new.rng.getstate() == old.rng.getstate()  # the same numbers drawn
            compared += 1
    assert compared >= 20


def test_whole_games_move_for_move_as_before():
    rules = Rules(4, 4, 3)
    for seed in range(4):
        specs = ("mcts:iterations=200", "mcts:iterations=100,rollout=heuristic,solver=true")
        new = play_game(
            make_agent(specs[0], random.Random(seed)),
            make_agent(specs[1], random.Random(seed + 100)),
            rules,
        )
        old = play_game(
            ReferenceMcts(random.Random(seed), iterations=200),
            ReferenceMcts(
                random.Random(seed + 100), iterations=100, rollout="heuristic", solver=True
            ),
            rules,
        )
        assert new.moves == old.moves and new.winner == old.winner


def test_many_iterations_grow_the_pool_of_untried_moves():
    # 5x5: each expanded node keeps up to 24 untried cells; 3,000 nodes outgrow the first pool.
    rules = Rules(5, 5, 4)
    old = ReferenceMcts(random.Random(3), iterations=3000)
    new = MctsAgent(random.Random(3), iterations=3000)
    start = Position.start(rules)
    assert tree_of(new.tree(start)) == tree_of(old.tree(start))


def test_ctrl_c_during_a_search_is_a_keyboard_interrupt():
    # Ctrl-C lands while the compiled search runs, or as it returns: it must come out as
    # KeyboardInterrupt (and so stop the command), never as another error or not at all.
    import os
    import signal
    import threading
    import time

    agent = MctsAgent(random.Random(0), iterations=20000)
    start = Position.start(Rules(3, 3, 3))
    agent.tree(start)
    rng = random.Random(1)
    for _ in range(12):
        began = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            threading.Timer(
                rng.random() * 0.03, lambda: os.kill(os.getpid(), signal.SIGINT)
            ).start()
            while time.monotonic() - began < 10:
                agent.tree(start)
