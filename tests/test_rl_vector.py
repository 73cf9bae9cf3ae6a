"""The RL conventions of ``ttt_solve/Mnk-v0``: ``action_masks()`` where sb3-contrib's
``MaskablePPO`` looks for it, and ``gymnasium.make_vec``'s batched environment, held to
Gymnasium's own ``SyncVectorEnv`` of the single environment step for step, with the truth of a
batch read from the book at once and equal to the truth read a position at a time.

Skipped, saying what to install, without the ``rl`` extra.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="pip install -e '.[rl]'")
gymnasium = pytest.importorskip("gymnasium", reason="pip install -e '.[rl]'")

from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.rl import GYMNASIUM_ID  # noqa: E402
from ttt_solve.rl.truth import Truth  # noqa: E402
from ttt_solve.rl.vector import MnkVectorEnv  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def legal_actions(masks: np.ndarray, rng: random.Random) -> list[int]:
    """A random legal action of each game (0 where a game is over and about to be reset)."""
    return [rng.choice(np.flatnonzero(row).tolist() or [0]) for row in masks]


def same(a, b) -> bool:
    """Two batched observations or infos hold the same values."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if not isinstance(a, np.ndarray):
        return type(a) is type(b) and a == b
    if a.dtype == object or b.dtype == object:
        return a.shape == b.shape and all(same(x, y) for x, y in zip(a.flat, b.flat, strict=True))
    return a.dtype == b.dtype and np.array_equal(a, b)


def test_action_masks_are_found_where_maskable_ppo_looks():
    """sb3-contrib asks ``env.get_wrapper_attr("action_masks")()`` through the wrappers
    ``gymnasium.make`` adds: booleans, the observation's mask, none once the game is over."""
    env = gymnasium.make(GYMNASIUM_ID, opponent="random", truth=False)
    observation, _ = env.reset(seed=3)
    rng = random.Random(3)
    terminated = False
    while not terminated:
        masks = env.get_wrapper_attr("action_masks")()
        assert masks.dtype == np.bool_ and masks.shape == (9,)
        assert np.array_equal(masks, observation["action_mask"].astype(bool))
        action = rng.choice(np.flatnonzero(masks).tolist())
        observation, _, terminated, _, _ = env.step(action)
    assert not env.get_wrapper_attr("action_masks")().any()


def test_make_vec_makes_the_batched_environment():
    envs = gymnasium.make_vec(GYMNASIUM_ID, num_envs=3, rows=3, cols=4, k=3, truth=False)
    assert isinstance(envs.unwrapped, MnkVectorEnv)
    observations, _ = envs.reset(seed=0)
    assert observations["observation"].shape == (3, 4, 3, 2)
    assert envs.action_masks().shape == (3, 12) and envs.action_masks().all()
    envs.close()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"opponent": "perfect:eps=0.3", "learner": "random", "shaping": 0.5},
        {"rows": 4, "cols": 4, "k": 3, "opponent": "perfect:eps=0.5", "learner": "o"},
        {"rows": 3, "cols": 4, "k": 3, "opponent": "perfect", "learner": "random"},
        {"opponent": "heuristic", "truth": False},
    ],
    ids=["3x3 eps shaped", "4x4k3 as O", "3x4k3 perfect", "heuristic no truth"],
)
def test_the_batch_plays_as_gymnasiums_sync_vector_env(book_small, kwargs):
    """The same seeds and actions give the same observations, rewards, ends and infos as
    Gymnasium's ``SyncVectorEnv`` of ``Mnk-v0``, finished games reset on the next step."""
    made = {
        mode: gymnasium.make_vec(
            GYMNASIUM_ID, num_envs=5, vectorization_mode=mode, book=book_small, **kwargs
        )
        for mode in ("vector_entry_point", "sync")
    }
    ours, theirs = made["vector_entry_point"], made["sync"]
    assert isinstance(ours.unwrapped, MnkVectorEnv) and not isinstance(theirs, MnkVectorEnv)
    first, second = ours.reset(seed=11), theirs.reset(seed=11)
    assert same(first[0], second[0]) and same(first[1], second[1])
    rng, ends = random.Random(11), 0
    observations = first[0]
    for _ in range(150):
        actions = legal_actions(observations["action_mask"], rng)
        if rng.random() < 0.02:
            actions[0] = 0 if observations["action_mask"][0][0] == 0 else actions[0]
        mine, gymnasiums = ours.step(actions), theirs.step(actions)
        for part, (a, b) in enumerate(zip(mine, gymnasiums, strict=True)):
            assert same(a, b), (part, a, b)
        observations = mine[0]
        ends += int(mine[2].sum())
    assert ends >= 20  # many games played to their end and reset
    for env in made.values():
        env.close()


def test_a_batch_read_at_once_is_the_truth_read_one_at_a_time(book_small):
    """``Truth.read`` keeps, from one batched read of the book, what ``Truth.of`` answers
    position by position: values, every move's value, best moves, the source."""
    rules = Rules(4, 4, 3)
    rng = random.Random(5)
    positions = []
    for _ in range(60):
        position = Position.start(rules)
        for _ in range(rng.randrange(0, 12)):
            if position.is_terminal:
                break
            position = position.play(rng.choice(position.legal_moves()))
        positions.append(position)
    assert any(p.is_terminal for p in positions) and any(p.ply == 0 for p in positions)
    with open_book(book_small, read_only=True) as book:
        batched, single = Truth(rules, book), Truth(rules, book)
        batched.read(positions)
        assert len(batched._cache) == len(set(positions))
        assert batched.of_many(positions) == [single.of(p) for p in positions]
