"""An agent's generator seeded when it is first used draws what one seeded at once draws, and
the grading pipeline's answers do not depend on which of the two an agent holds."""

from __future__ import annotations

import copy
import functools
import pickle
import random

import pytest

from ttt_solve.agents.benchset import load_set, set_path
from ttt_solve.agents.grading import pose
from ttt_solve.agents.makers import InstanceMaker
from ttt_solve.agents.match import SeedDeriver, derive_seed
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.seeding import SeededOnUse, reseed
from ttt_solve.agents.spec import make_agent
from ttt_solve.solver.rules import Rules

USES = {
    "random": lambda rng: [rng.random() for _ in range(3)],
    "getrandbits": lambda rng: rng.getrandbits(70),
    "randrange": lambda rng: [rng.randrange(7) for _ in range(5)],
    "choice": lambda rng: rng.choice("abcdefg"),
    "shuffle": lambda rng: (lambda cells: (rng.shuffle(cells), cells)[1])(list(range(9))),
    "sample": lambda rng: rng.sample(range(100), 4),
    "gauss": lambda rng: [rng.gauss(0, 1) for _ in range(3)],
    "getstate": lambda rng: rng.getstate(),
    "a bound method": lambda rng: (lambda draw: [draw(), draw()])(rng.random),
    "deepcopy": lambda rng: copy.deepcopy(rng).random(),
    "pickle": lambda rng: pickle.loads(pickle.dumps(rng)).random(),
    "setstate after getstate": lambda rng: (rng.setstate(rng.getstate()), rng.random())[1],
}


@pytest.mark.parametrize("use", USES)
def test_a_generator_seeded_on_use_draws_as_one_seeded_at_once(use):
    lazy, eager = SeededOnUse(1), random.Random(1)
    for seed in (5, 2**64 - 3, 0, 17):
        reseed(lazy, seed)
        eager.seed(seed)
        assert USES[use](lazy) == USES[use](eager)
        assert lazy.random() == eager.random()  # and the stream goes on alike


def test_seeds_put_off_and_never_used_leave_no_trace():
    lazy = SeededOnUse(1)
    reseed(lazy, 3)
    lazy.random()
    for seed in range(100):  # tasks that drew nothing
        reseed(lazy, seed)
    reseed(lazy, 99)
    assert lazy.getstate() == random.Random(99).getstate()
    assert isinstance(lazy, random.Random) and lazy.gauss_next is None


def test_a_seed_given_as_a_function_is_worked_out_only_when_the_generator_is_used():
    worked: list[int] = []

    def seed_of(key: int) -> int:
        worked.append(key)
        return derive_seed(3, "position", key)

    lazy = SeededOnUse(1)
    for key in range(50):
        reseed(lazy, functools.partial(seed_of, key))
    assert worked == []
    assert lazy.random() == random.Random(derive_seed(3, "position", 49)).random()
    assert worked == [49]
    eager = random.Random(1)
    reseed(eager, functools.partial(seed_of, 7))
    assert worked == [49, 7] and eager.random() == random.Random(seed_of(7)).random()


def test_a_seed_deriver_derives_the_same_seeds_after_pickling():
    seed_of = SeedDeriver(3, "position")
    again = pickle.loads(pickle.dumps(seed_of))
    assert [again(key) for key in (0, 5, 2**40)] == [
        derive_seed(3, "position", key) for key in (0, 5, 2**40)
    ]


def test_a_plain_generator_is_seeded_at_once():
    rng = random.Random(1)
    draw = rng.random  # kept across tasks, as code written elsewhere may keep it
    reseed(rng, 42)
    assert draw() == random.Random(42).random()


def test_a_plugin_that_keeps_a_method_of_its_generator_draws_as_seeded_for_each_position():
    bench_set = load_set(set_path(Rules(4, 4, 4)))
    positions = [item.position for item in bench_set.items[::50]]
    maker = AgentMaker("py:tests.lab_agents:kept_draw,timeout=none")
    answers = pose(maker, None, bench_set.rules, [(p, 1) for p in positions], seed=3, jobs=1)
    for position, answer in zip(positions, answers):
        cells = position.legal_moves()
        drawn = random.Random(derive_seed(3, "position", position.key)).random()
        assert answer.cell == cells[int(drawn * len(cells))]


@pytest.mark.parametrize("spec", ["heuristic", "random", "mcts:iterations=30", "montecarlo"])
def test_the_pipeline_answers_alike_with_either_generator(spec):
    bench_set = load_set(set_path(Rules(4, 4, 4)))
    rows = [(item.position, 1) for item in bench_set.items[::9]]
    lazy = AgentMaker(spec)
    eager = InstanceMaker(make_agent(spec, random.Random(0)))
    assert type(eager.build().rng) is random.Random
    answers = [
        [a.cell for a in pose(maker, None, bench_set.rules, rows, seed=3, jobs=1)]
        for maker in (lazy, eager)
    ]
    assert answers[0] == answers[1]
