"""``ttt_solve/Mnk-v0``, the Gymnasium environment: Gymnasium's checker, the opponents, the
shaping reward.

Skipped, saying what to install, without the ``rl`` extra.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="pip install -e '.[rl]'")
gymnasium = pytest.importorskip("gymnasium", reason="pip install -e '.[rl]'")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from ttt_solve.agents.spec import AgentSpecError  # noqa: E402
from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.rl import GYMNASIUM_ID  # noqa: E402
from ttt_solve.rl.aec import action_of, cell_of  # noqa: E402
from ttt_solve.rl.opponents import nearest_rung  # noqa: E402
from ttt_solve.rl.single import NO_ACTION, MnkVsOpponent  # noqa: E402
from ttt_solve.solver.errors import IllegalMoveError  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def random_action(observation, rng: random.Random) -> int:
    return rng.choice(np.flatnonzero(observation["action_mask"]).tolist())


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"opponent": "perfect:eps=0.3", "learner": "random", "shaping": 0.5},
        {"rows": 3, "cols": 4, "k": 3, "opponent": "heuristic", "learner": "o", "truth": False},
    ],
    ids=["perfect", "eps random side shaped", "3x4 heuristic"],
)
def test_gymnasiums_check_env(kwargs):
    check_env(gymnasium.make(GYMNASIUM_ID, **kwargs).unwrapped)


def test_registered_with_a_versioned_id():
    env = gymnasium.make("ttt_solve/Mnk-v0", rows=4, cols=4, k=3, truth=False)
    assert env.spec.version == 0 and env.unwrapped.rules == Rules(4, 4, 3)


@pytest.mark.parametrize(
    "rules, learner", [(Rules(3, 3, 3), "random"), (Rules(4, 4, 3), "o")], ids=str
)
def test_perfect_opponent_never_loses(book_small, rules, learner):
    """1,000 seeded games against a random learner: on 3x3 half as X and half as O; on 4x4
    k=3, a win for X, the opponent is X (as O it can lose to a lucky random X: the next test
    holds it to keeping the value instead)."""
    rng = random.Random(1)
    results = {1.0: 0, 0.0: 0, -1.0: 0}
    with open_book(book_small) as book:
        env = MnkVsOpponent(rules.rows, rules.cols, rules.k, book=book, learner=learner)
        for game in range(1000):
            observation, _ = env.reset(seed=game)
            while True:
                observation, reward, terminated, truncated, _ = env.step(
                    random_action(observation, rng)
                )
                if terminated or truncated:
                    results[reward] += 1
                    break
    assert results[1.0] == 0 and results[-1.0] > 500, results


def test_perfect_opponent_keeps_every_value(book_small):
    """Every move of the perfect opponent is a best move of the book, either side, 4x4 k=3."""
    rules = Rules(4, 4, 3)
    rng = random.Random(6)
    moves = 0
    with open_book(book_small) as book:
        env = MnkVsOpponent(4, 4, 3, book=book, learner="random", truth=False)
        for game in range(300):
            observation, info = env.reset(seed=game)
            position = Position.start(rules)
            while True:
                if info["opponent_action"] != NO_ACTION:
                    cell = cell_of(rules, info["opponent_action"])
                    assert cell in book.find(position).best_moves
                    moves += 1
                    position = position.play(cell)
                if position.is_terminal:
                    break
                action = random_action(observation, rng)
                position = position.play(cell_of(rules, action))
                observation, _, _, _, info = env.step(action)
    assert moves > 800


def test_eps_opponents_share_of_random_moves(book_3x3):
    """Each opponent move that is not best reveals a random move; a random move is not best
    with chance (legal - best) / legal. The share of random moves measured from them matches
    eps within its 99.9% interval."""
    eps, rules = 0.3, Rules(3, 3, 3)
    rng = random.Random(2)
    not_best = expected = variance = 0.0
    moves = 0
    with open_book(book_3x3) as book:
        env = MnkVsOpponent(book=book, opponent=f"perfect:eps={eps}", learner="random")
        for game in range(1500):
            observation, info = env.reset(seed=game)
            position = Position.start(rules)
            if info["opponent_action"] != NO_ACTION:
                position = position.play(cell_of(rules, info["opponent_action"]))
            while True:
                action = random_action(observation, rng)
                position = position.play(cell_of(rules, action))
                observation, _, terminated, _, info = env.step(action)
                if info["opponent_action"] != NO_ACTION:
                    entry = book.find(position)
                    legal = len(position.legal_moves())
                    chance = (legal - len(entry.best_moves)) / legal
                    cell = cell_of(rules, info["opponent_action"])
                    not_best += cell not in entry.best_moves
                    expected += chance
                    variance += eps * chance * (1 - eps * chance)
                    moves += 1
                    position = position.play(cell)
                if terminated:
                    break
    measured = not_best / expected  # the share of random moves
    half_width = 3.29 * math.sqrt(variance) / expected
    assert moves > 3000
    assert abs(measured - eps) < half_width, (measured, half_width)
    assert half_width < 0.05  # a test that could tell 0.3 from 0.25


def test_truth_in_info_is_the_learners(book_3x3):
    rules = Rules(3, 3, 3)
    rng = random.Random(3)
    with open_book(book_3x3) as book:
        env = MnkVsOpponent(book=book, opponent="random", learner="o")
        for game in range(30):
            observation, info = env.reset(seed=game)
            position = Position.start(rules).play(cell_of(rules, info["opponent_action"]))
            while True:
                entry = book.find(position)
                assert info["value"] == entry.value.outcome.value
                assert info["remoteness"] == entry.value.remoteness
                assert info["best_moves"] == tuple(
                    sorted(action_of(rules, c) for c in entry.best_moves)
                )
                action = random_action(observation, rng)
                cell = cell_of(rules, action)
                move = {m.cell: m.value for m in book.moves(position)}[cell]
                position = position.play(cell)
                observation, reward, terminated, _, info = env.step(action)
                assert info["last_move_kept"] == (move.outcome is entry.value.outcome)
                assert info["last_move_best"] == (move == entry.value)
                if terminated:
                    assert info["value"] == {1.0: "win", 0.0: "draw", -1.0: "loss"}[reward]
                    break
                position = position.play(cell_of(rules, info["opponent_action"]))


def test_shaping_reward_is_the_value_lost(book_3x3):
    rules = Rules(3, 3, 3)
    rng = random.Random(4)
    with open_book(book_3x3) as book:
        plain = MnkVsOpponent(book=book, opponent="random", truth=False)
        shaped = MnkVsOpponent(book=book, opponent="random", truth=False, shaping=0.25)
        lost = 0
        for game in range(100):
            observation, _ = plain.reset(seed=game)
            shaped.reset(seed=game)
            position = Position.start(rules)
            while True:
                action = random_action(observation, rng)
                entry = book.find(position)
                move = {m.cell: m.value for m in book.moves(position)}[cell_of(rules, action)]
                observation, reward, terminated, _, info = plain.step(action)
                _, shaped_reward, _, _, _ = shaped.step(action)
                drop = move.outcome.sign - entry.value.outcome.sign
                lost += drop < 0
                assert shaped_reward == pytest.approx(reward + 0.25 * drop)
                if not terminated:
                    assert reward == 0.0
                    position = position.play(cell_of(rules, action))
                    position = position.play(cell_of(rules, info["opponent_action"]))
                else:
                    break
        assert lost > 50


def test_illegal_moves_end_the_game():
    env = MnkVsOpponent(opponent="random", truth=False)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(0)
    taken = info["opponent_action"]
    _, reward, terminated, _, info = env.step(taken)
    assert (reward, terminated, info) == (
        -1.0,
        True,
        {"illegal": True, "opponent_action": NO_ACTION},
    )

    def bad_policy(observation):
        return 0  # a1, taken by the learner's first move

    env = MnkVsOpponent(opponent=bad_policy, truth=False)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(0)
    assert (reward, terminated, info["opponent_illegal"]) == (1.0, True, True)

    env = MnkVsOpponent(opponent=lambda observation: 10, truth=False)  # off the 3x3 board
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(0)
    assert (reward, terminated, info["opponent_illegal"]) == (1.0, True, True)


def test_opponent_as_a_policy_and_as_an_agent_spec():
    def first_legal(observation):
        return int(np.flatnonzero(observation["action_mask"])[0])

    env = MnkVsOpponent(opponent=first_legal, truth=False)
    observation, _ = env.reset(seed=1)
    _, _, _, _, info = env.step(4)
    assert info["opponent_action"] == 0
    env = MnkVsOpponent(opponent="heuristic", truth=False)
    env.reset(seed=1)
    _, _, _, _, info = env.step(0)
    assert info["opponent_action"] != NO_ACTION
    with pytest.raises(AgentSpecError, match="unknown agent 'nobody'"):
        MnkVsOpponent(opponent="nobody")
    with pytest.raises(
        AgentSpecError, match="no book was given: play it with ttt rate --size 3 --win 3"
    ):
        MnkVsOpponent(opponent="rating:800")


def test_nearest_rung():
    rungs = [("random", 0.0), ("perfect:error=0.5", 400.0), ("perfect", 900.0)]
    assert nearest_rung(rungs, 380) == "perfect:error=0.5"
    assert nearest_rung(rungs, 650) == "perfect:error=0.5"  # equally near: the weaker
    assert nearest_rung(rungs, 5000) == "perfect"


def test_seeded_games_repeat():
    def games(seed: int) -> list[int]:
        env = MnkVsOpponent(opponent="perfect:eps=0.5", learner="random", truth=False)
        rng = random.Random(seed)
        actions = []
        for game in range(20):
            observation, info = env.reset(seed=seed * 100 + game)
            actions.append(info["opponent_action"])
            terminated = False
            while not terminated:
                observation, _, terminated, _, info = env.step(random_action(observation, rng))
                actions.append(info["opponent_action"])
        return actions

    assert games(1) == games(1) and games(1) != games(2)


@pytest.mark.slow
def test_rating_opponent_is_the_nearest_rung_of_the_cached_ladder(tmp_path):
    from tests.pg_support import solve_into
    from ttt_solve.agents.ladder import rate_on_ladder

    db = str(tmp_path / "ladder.sqlite")
    solve_into(db, Rules(3, 3, 3))
    with open_book(db) as book:
        ladder = rate_on_ladder(book, db, Rules(3, 3, 3), games=2, audit=False, jobs=1)
        rungs = [(one.agent, one.rating.mean) for one in ladder.fit.rated]
        for rating in (0, 300, 600, 2000):
            env = MnkVsOpponent(book=book, opponent=f"rating:{rating}", truth=False)
            assert env.opponent.name == nearest_rung(rungs, rating)
            env.reset(seed=0)
            env.step(4)


def test_an_illegal_move_ends_the_game_with_its_result_in_info(book_3x3):
    with open_book(book_3x3) as book:
        env = MnkVsOpponent(book=book, opponent="perfect")
        env.reset(seed=0)
        _, _, _, _, info = env.step(4)
        _, reward, terminated, _, info = env.step(info["opponent_action"])
    assert (reward, terminated) == (-1.0, True)
    assert info == {
        "value": "loss",
        "remoteness": 0,
        "best_moves": (),
        "source": "end",
        "last_move_kept": False,
        "last_move_best": False,
        "illegal": True,
        "opponent_action": NO_ACTION,
    }


def test_the_learners_last_move_says_the_opponent_did_not_answer(book_3x3):
    """A move that ends the game leaves the opponent nothing to answer: ``opponent_action``
    is there, ``None``."""
    with open_book(book_3x3) as book:
        env = MnkVsOpponent(book=book, opponent="random")
        for game in range(20):
            observation, info = env.reset(seed=game)
            assert "opponent_action" in info
            terminated = False
            while not terminated:
                best = info["best_moves"]
                observation, reward, terminated, _, info = env.step(best[0])
                assert "opponent_action" in info
            # X, playing best moves, never loses: its own move (a win, or the last cell) ends it
            assert reward >= 0 and info["opponent_action"] == NO_ACTION


@pytest.mark.parametrize("answer", [-1, 9, 99], ids=["-1", "off the board", "far off"])
def test_an_opponents_illegal_first_answer_ends_the_game_at_reset(book_3x3, answer):
    """As X the opponent answers at ``reset``; an illegal answer there ends the episode as
    one in ``step`` does: the learner's win, its +1 handed by its next ``step``."""
    with open_book(book_3x3) as book:
        env = MnkVsOpponent(book=book, opponent=lambda observation: answer, learner="o")
        observation, info = env.reset(seed=0)
        assert info["opponent_illegal"] is True and info["opponent_action"] == NO_ACTION
        assert (info["value"], info["remoteness"], info["best_moves"]) == ("win", 0, ())
        assert not observation["action_mask"].any()
        _, reward, terminated, truncated, info = env.step(0)
        assert (reward, terminated, truncated) == (1.0, True, False)
        assert info["opponent_illegal"] is True and info["value"] == "win"
        with pytest.raises(RuntimeError, match="call reset"):
            env.step(0)
        observation, info = env.reset(seed=1)  # a new game, as usual
        assert info["opponent_illegal"] is True


@pytest.mark.parametrize("action", [2.7, "3", True, np.bool_(True), 3.0, None, [3]])
def test_an_action_that_is_no_whole_number_is_refused(action):
    env = MnkVsOpponent(opponent="random", truth=False)
    env.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="is no action: give a whole number") as refused:
        env.step(action)
    assert "\n" not in str(refused.value)
    _, reward, terminated, _, _ = env.step(np.int64(4))  # the game goes on: numbers still do
    assert (reward, terminated) == (0.0, False)


@pytest.mark.parametrize("rating", ["nan", "inf", "-inf", "1e400"])
def test_a_rating_that_is_no_finite_number_is_refused(rating):
    with pytest.raises(AgentSpecError, match=f"rating:{rating}") as refused:
        MnkVsOpponent(opponent=f"rating:{rating}")
    assert "finite" in str(refused.value) and "\n" not in str(refused.value)
