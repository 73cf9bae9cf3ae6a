"""``mnk_v0``, the PettingZoo environment: PettingZoo's own tests, ``tictactoe_v3`` move for
move, and the truth in ``infos`` against the book.

Skipped, saying what to install, without the ``rl`` extra (and, for ``tictactoe_v3`` and the
pictures, pygame).
"""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="pip install -e '.[rl]'")
pytest.importorskip("gymnasium", reason="pip install -e '.[rl]'")

import pettingzoo  # noqa: E402
from pettingzoo.test import api_test, render_test, seed_test  # noqa: E402

import ttt_solve.rl  # noqa: E402, F401 - registers the environment
from ttt_solve.agents.adapters import Adapter  # noqa: E402
from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.rl import aec  # noqa: E402
from ttt_solve.rl.truth import TruthUnavailableError  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402
from ttt_solve.solver.value import move_value  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # api_test's advice on dicts


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"rows": 4, "cols": 4, "k": 3, "truth": False}, {"rows": 3, "cols": 4, "k": 3}],
    ids=["3x3 truth", "4x4k3", "3x4k3 truth"],
)
def test_pettingzoos_api_test(kwargs):
    api_test(aec.env(**kwargs), num_cycles=300)


def test_pettingzoos_seed_and_render_tests():
    seed_test(lambda: aec.env(rows=3, cols=4, k=3, truth=False), num_cycles=100)
    pytest.importorskip("pygame", reason="rgb_array frames are drawn by pygame")
    render_test(lambda render_mode: aec.env(render_mode=render_mode, truth=False))


def test_turn_based_parallel_conversion():
    """A turn-based game has no parallel API of its own (``is_parallelizable`` is False, as
    for tictactoe_v3); PettingZoo's turn-based conversion runs it."""
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    parallel = turn_based_aec_to_parallel(aec.env(truth=False))
    observations, _ = parallel.reset(seed=1)
    rng = random.Random(1)
    while parallel.agents:
        actions = {}
        for agent in parallel.agents:
            legal = np.flatnonzero(observations[agent]["action_mask"]).tolist()
            actions[agent] = rng.choice(legal) if legal else 0
        observations, rewards, terminations, _, _ = parallel.step(actions)
    assert sorted(rewards.values()) in ([-1, 1], [0, 0])


def test_registered_under_pettingzoos_registry():
    env = pettingzoo.make("aec", "ttt_solve/mnk_v0", rows=4, cols=5, k=4, truth=False)
    env.reset()
    assert env.unwrapped.rules == Rules(4, 5, 4)
    assert env.observation_space("player_1")["observation"].shape == (5, 4, 2)
    assert env.metadata["name"] == "mnk_v0"


def test_random_games_match_tictactoe_v3_move_for_move():
    pytest.importorskip("pygame", reason="PettingZoo's tic-tac-toe imports pygame")
    from pettingzoo.classic import tictactoe_v3

    rng = random.Random(5)
    illegal_games = 0
    for game in range(200):
        theirs, ours = tictactoe_v3.env(), aec.env(truth=False)
        theirs.reset(seed=game)
        ours.reset(seed=game)
        for agent_theirs, agent_ours in zip(theirs.agent_iter(), ours.agent_iter()):
            assert agent_theirs == agent_ours
            last_theirs, last_ours = theirs.last(), ours.last()
            for one, other in zip(last_theirs[:4], last_ours[:4]):
                if isinstance(one, dict):
                    for key in ("observation", "action_mask"):
                        assert np.array_equal(one[key], other[key]), (game, key)
                        assert one[key].dtype == other[key].dtype
                else:
                    assert one == other, game
            assert theirs.rewards == ours.rewards and theirs.terminations == ours.terminations
            assert theirs.truncations == ours.truncations
            if last_theirs[2] or last_theirs[3]:
                action = None
            else:
                mask = last_theirs[0]["action_mask"]
                # now and then a taken cell: both end the game at -1 for its mover
                if rng.random() < 0.03 and mask.sum() < 9:
                    action = int(rng.choice(np.flatnonzero(mask == 0).tolist()))
                    illegal_games += 1
                else:
                    action = int(rng.choice(np.flatnonzero(mask).tolist()))
            theirs.step(action)
            ours.step(action)
        assert not theirs.agents and not ours.agents
    assert illegal_games > 5


def test_observation_is_the_planes_adapter():
    """The observation of the agent to move is the ``planes`` board the audit hands agents."""
    rules = Rules(3, 5, 3)
    adapter = Adapter.make("planes")
    rng = random.Random(2)
    env = aec.env(rows=3, cols=5, k=3, truth=False)
    for _ in range(30):
        env.reset()
        position = Position.start(rules)
        while not position.is_terminal:
            observation = env.observe(env.agent_selection)
            ours = adapter.encode(position)
            assert np.array_equal(observation["observation"], ours["observation"])
            assert np.array_equal(observation["action_mask"], ours["action_mask"])
            cell = rng.choice(position.legal_moves())
            env.step(adapter.action_of(rules, cell))
            position = position.play(cell)


def test_truth_in_infos_is_the_books(book_small):
    rules = Rules(4, 4, 3)
    rng = random.Random(3)
    with open_book(book_small) as book:
        env = aec.env(rows=4, cols=4, k=3, book=book)
        for _ in range(20):
            env.reset()
            position = Position.start(rules)
            before = None
            while True:
                info = env.infos[env.agent_selection]
                entry, moves = book.find_with_moves(position)
                assert info["value"] == entry.value.outcome.value
                assert info["remoteness"] == entry.value.remoteness
                assert info["source"] == "book"
                assert info["to_move"] == env.agent_selection
                assert info["best_moves"] == tuple(
                    sorted(aec.action_of(rules, cell) for cell in entry.best_moves)
                )
                assert env.infos["player_1"] == env.infos["player_2"]
                if before is None:
                    assert info["last_move_kept"] is None
                else:
                    value_before, cell = before
                    played = move_value(entry.value)
                    assert info["last_move_kept"] == (played.outcome is value_before.outcome)
                    assert info["last_move_best"] == (played == value_before)
                if position.is_terminal:
                    break
                cell = rng.choice(position.legal_moves())
                before = (entry.value, cell)
                env.step(aec.action_of(rules, cell))
                position = position.play(cell)
        env.close()


def test_truth_by_live_search_without_a_book(book_small):
    rules = Rules(3, 4, 3)
    env = aec.env(rows=3, cols=4, k=3)
    rng = random.Random(4)
    with open_book(book_small) as book:
        for _ in range(5):
            env.reset()
            position = Position.start(rules)
            while not position.is_terminal:
                info = env.infos["player_1"]
                entry = book.find(position)
                assert info["source"] == "search"
                assert (info["value"], info["remoteness"]) == (
                    entry.value.outcome.value,
                    entry.value.remoteness,
                )
                cell = rng.choice(position.legal_moves())
                env.step(aec.action_of(rules, cell))
                position = position.play(cell)


def test_truth_out_of_reach_is_a_clear_error():
    with pytest.raises(TruthUnavailableError) as caught:
        aec.env(rows=5, cols=5, k=4, search_seconds=0)  # no book, and no time to search
    message = str(caught.value)
    assert "5x5 k=4" in message and "truth=False" in message and "\n" not in message
    assert "live search is turned off" in message
    aec.env(rows=5, cols=5, k=4, truth=False).reset()  # without the truth it plays


def test_rgb_array_is_the_svg_board():
    pytest.importorskip("pygame", reason="rgb_array frames are drawn by pygame")
    env = aec.env(rows=3, cols=4, k=3, truth=False, render_mode="rgb_array")
    env.reset()
    empty = env.render()
    assert empty.shape == (300, 400, 3) and empty.dtype == np.uint8
    env.step(0)  # a1: X in the top left cell
    frame = env.render()
    changed = np.argwhere((frame != empty).any(axis=2))
    assert changed[:, 0].max() < 100 and changed[:, 1].max() < 100  # within the first cell
    env.unwrapped.render_mode = "ansi"
    assert env.render().splitlines()[1].split() == ["1", "x", ".", ".", "."]


def test_illegal_move_on_the_raw_env_is_an_error():
    env = aec.raw_env(truth=False)
    env.step(4)
    with pytest.raises(ValueError, match="b2"):
        env.step(4)
    for action in (-1, 9):
        with pytest.raises(ValueError, match="off the board"):
            env.step(action)


def test_missing_extra_names_it(monkeypatch):
    from ttt_solve.rl.extra import RlExtraMissingError

    monkeypatch.setitem(sys.modules, "pettingzoo", None)
    for module in ("ttt_solve.rl.aec", "ttt_solve.rl.single"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(RlExtraMissingError, match=r"pip install 'ttt-solve\[rl\]'") as caught:
        import ttt_solve.rl.single  # noqa: F401
    assert "\n" not in str(caught.value) and "pettingzoo" in str(caught.value)
