"""Ratings: the fit recovers chosen strengths from simulated games at the stated rate, orders
real agents of known strength, and handles anchors, draws and one-sided results."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable

import pytest

from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.rating import KAPPA, RESAMPLES, RatingError, extend, parse_anchor, rate
from ttt_solve.agents.tournament import Pairing, round_robin
from ttt_solve.book.reader import open_book
from ttt_solve.solver.rules import Rules


def round_robin_of(entrants: int, games: int, result: Callable[[int, int, int], int]):  # noqa: ANN201
    """Pairings of a round robin of ``games`` per pair, colours alternating, each game's
    result ``result(a, b, x)`` for X (0 won, 1 drew, 2 lost; ``x`` is a or b)."""
    pairings = []
    for a in range(entrants):
        for b in range(a + 1, entrants):
            total, first = [0, 0, 0], [0, 0, 0]
            for game in range(games):
                x = a if game % 2 == 0 else b
                x_result = result(a, b, x)
                for_a = x_result if x == a else 2 - x_result  # for a: won, drew, lost
                total[for_a] += 1
                if x == a:
                    first[for_a] += 1
            pairings.append(Pairing(a, b, *total, (first[0], first[1], first[2])))
    return pairings


def simulate(
    true: list[float], first_move: float, nu: float, games: int, rng: random.Random
) -> list[Pairing]:
    """A round robin of agents with these true ratings (Elo) under Davidson's model with a
    first-move advantage: ``games`` per pair, colours alternating."""

    def result(a: int, b: int, x: int) -> int:
        o = b if x == a else a
        z = KAPPA * (true[x] + first_move - true[o]) / 2
        win, loss = math.exp(z), math.exp(-z)
        u = rng.random() * (win + nu + loss)
        return 0 if u < win else 1 if u < win + nu else 2

    return round_robin_of(len(true), games, result)


NAMES = ["random", "b", "c", "d", "e"]
TRUE = [0.0, 80.0, 250.0, 300.0, 650.0]


@pytest.mark.slow
def test_the_fit_recovers_known_strengths_within_its_intervals_at_the_stated_rate():
    inside = total = first_move_inside = 0
    errors = []
    for seed in range(60):
        ratings = rate(simulate(TRUE, 60.0, 0.8, 120, random.Random(seed)), NAMES)
        for one in ratings.rated[:]:
            if one.agent == "random":
                assert one.rating == (0.0, 0.0, 0.0)  # the anchor
                continue
            truth = TRUE[one.entrant]
            inside += one.rating.low <= truth <= one.rating.high
            total += 1
            errors.append(one.rating.mean - truth)
        assert ratings.first_move is not None
        first_move_inside += ratings.first_move.low <= 60.0 <= ratings.first_move.high
    coverage = inside / total
    assert 0.90 <= coverage <= 0.99, coverage  # 95% intervals: about 95 in 100 hold the truth
    assert 0.85 <= first_move_inside / 60 <= 1.0
    assert abs(sum(errors) / len(errors)) < 10  # and the estimates are centred on the truth


def test_the_order_and_the_likelihood_of_superiority_follow_the_evidence():
    ratings = rate(simulate(TRUE, 0.0, 0.5, 60, random.Random(1)), NAMES)
    assert [one.agent for one in ratings.rated] == ["e", "d", "c", "b", "random"]
    los = {one.agent: one.stronger_than_next for one in ratings.rated}
    assert los["e"] > 0.999 and los["c"] > 0.999  # 350 and 170 points apart
    assert 0.6 < los["d"] < 0.9999  # d and c are only 50 apart: likely, not certain
    assert los["random"] is None


def test_bootstrap_intervals_are_seeded_and_agree_with_the_likelihood():
    pairings = simulate(TRUE, 40.0, 1.0, 300, random.Random(5))
    first = rate(pairings, NAMES, bootstrap=200, seed=3)
    assert first == rate(pairings, NAMES, bootstrap=200, seed=3)
    assert first != rate(pairings, NAMES, bootstrap=200, seed=4)
    likelihood = rate(pairings, NAMES)
    assert first.method == "bootstrap" and likelihood.method == "likelihood"
    for boot, exact in zip(first.rated, likelihood.rated):
        assert boot.agent == exact.agent and boot.rating.mean == exact.rating.mean
        width_ratio = (boot.rating.high - boot.rating.low) / max(
            exact.rating.high - exact.rating.low, 1e-9
        )
        assert exact.agent == "random" or 0.75 < width_ratio < 1.33


def test_anchors():
    pairings = simulate(TRUE, 0.0, 1.0, 100, random.Random(2))
    default = rate(pairings, NAMES)
    moved = rate(pairings, NAMES, anchor=("c", 1500.0))
    assert moved.of("c").rating == (1500.0, 1500.0, 1500.0)
    shift = moved.of("c").rating.mean - default.of("c").rating.mean
    for one in default.rated:
        assert moved.of(one.agent).rating.mean == pytest.approx(one.rating.mean + shift)
    assert parse_anchor("perfect:error=0.1=400") == ("perfect:error=0.1", 400.0)
    for bad in ("random", "=3", "random=abc", "random=inf"):
        with pytest.raises(RatingError, match="is not SPEC=RATING"):
            parse_anchor(bad)
    with pytest.raises(RatingError, match="names no agent of these games; agents: random, b"):
        rate(pairings, NAMES, anchor=("mcts", 0.0))
    # Without a random agent, the mean is 0.
    others = ["p", "q", "r", "s", "t"]
    mean_anchored = rate(pairings, others)
    assert mean_anchored.anchor == ""
    assert sum(one.rating.mean for one in mean_anchored.rated) == pytest.approx(0, abs=1e-6)


def test_one_sided_and_drawn_results_stay_finite():
    # b won every game: the prior's virtual draws keep the gap finite.
    swept = rate([Pairing(0, 1, 0, 0, 50, (0, 0, 25))], ["random", "b"])
    low, mean, high = swept.of("b").rating.low, swept.of("b").rating.mean, swept.of("b").rating.high
    assert 300 < mean < 2000 and math.isfinite(low) and low < mean < high < 5000
    # Nothing but draws: equal ratings.
    drawn = rate([Pairing(0, 1, 0, 40, 0, (0, 20, 0))], ["random", "b"])
    assert drawn.of("b").rating.mean == pytest.approx(0, abs=1e-6)
    # Colours unknown: no first-move advantage is fitted.
    neutral = rate([Pairing(0, 1, 10, 5, 30)], ["random", "b"])
    assert neutral.first_move is None and neutral.of("b").rating.mean > 0


def test_agents_that_never_met_cannot_be_rated():
    pairings = [Pairing(0, 1, 3, 0, 3, (2, 0, 1)), Pairing(2, 3, 1, 0, 5, (0, 0, 3))]
    with pytest.raises(RatingError, match="c, d met a neither directly nor through others"):
        rate(pairings, ["a", "b", "c", "d"])


def test_to_dict_is_plain_json():
    ratings = rate(simulate(TRUE, 30.0, 1.0, 20, random.Random(0)), NAMES)
    data = json.loads(json.dumps(ratings.to_dict()))
    assert data["model"] == "davidson" and data["anchor"] == {"agent": "random", "rating": 0.0}
    assert [row["rank"] for row in data["ratings"]] == [1, 2, 3, 4, 5]
    assert data["games"] == 10 * 20
    assert set(data["first_move"]) == {"rating", "low", "high"}


GRADED = ["random", "perfect:error=0.5", "perfect:error=0.1", "perfect"]


@pytest.mark.parametrize(
    "rules, games",
    [
        pytest.param(Rules(3, 3, 3), 300, id="3x3 k=3"),
        pytest.param(Rules(4, 4, 3), 1500, id="4x4 k=3", marks=pytest.mark.slow),
    ],
)
def test_agents_of_known_strength_are_ordered_apart(book_small, rules, games):
    with open_book(book_small) as book:
        pairings = round_robin(
            [AgentMaker(spec, book_small) for spec in GRADED], rules, games, book=book, jobs=2
        )
    ratings = rate(pairings, GRADED)
    # One draw parameter for every pair misfits real agents (perfect players draw each other
    # always, random hardly ever): the misfit is found, and the intervals are a bootstrap's.
    assert ratings.goodness is not None and ratings.goodness.rejected
    assert ratings.method == "bootstrap" and ratings.resamples == RESAMPLES
    ordered = [one.agent for one in ratings.rated]
    assert ordered == list(reversed(GRADED))
    for stronger, weaker in zip(ratings.rated, ratings.rated[1:]):
        assert stronger.rating.low > weaker.rating.mean, (stronger, weaker)
        assert stronger.stronger_than_next > 0.999


def test_chi_square_tail_matches_closed_forms():
    from ttt_solve.agents.intervals import chi_square_tail, normal_cdf

    for x in (0.1, 1.0, 3.84, 10.0, 40.0):
        assert chi_square_tail(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)
        assert chi_square_tail(x, 1) == pytest.approx(2 * normal_cdf(-math.sqrt(x)), rel=1e-9)
        # 4 degrees of freedom: Q = exp(-x/2) (1 + x/2)
        assert chi_square_tail(x, 4) == pytest.approx(math.exp(-x / 2) * (1 + x / 2), rel=1e-12)
    assert chi_square_tail(0.0, 5) == 1.0


def test_games_drawn_from_the_model_fit_it_and_keep_the_likelihood_intervals():
    statistics, p_values = [], []
    for seed in range(20):
        ratings = rate(simulate(TRUE, 60.0, 0.8, 120, random.Random(100 + seed)), NAMES)
        fit = ratings.goodness
        assert fit is not None and fit.cells == 20 and fit.degrees == 2 * 20 - 6
        statistics.append(fit.statistic)
        p_values.append(fit.p_value)
        assert ratings.method == "likelihood" or fit.rejected
    # X² of a true model has its degrees of freedom as mean (34; sd of the mean about 1.8)
    assert 29 < sum(statistics) / len(statistics) < 40
    assert sum(p < 0.01 for p in p_values) <= 1
    data = json.loads(json.dumps(ratings.to_dict()))
    assert data["goodness_of_fit"]["degrees_of_freedom"] == 34
    assert data["intervals"] == "likelihood" and "fits" in data["intervals_reason"]


def simulate_drawish_pairs(true: list[float], games: int, rng: random.Random) -> list[Pairing]:
    """Games from another model: among decisive games X wins with the Elo expectation of
    ``r_X + 60 - r_O``, but each pair and colour has a draw rate of its own (from 2% to 80%),
    where Davidson's model has one ``nu`` for all."""

    def result(a: int, b: int, x: int) -> int:
        o = b if x == a else a
        draw = [0.02, 0.8, 0.3, 0.6][(a + 2 * b + x) % 4]
        decisive = 1 / (1 + 10 ** (-(true[x] + 60 - true[o]) / 400))
        return 1 if rng.random() < draw else 0 if rng.random() < decisive else 2

    return round_robin_of(len(true), games, result)


def test_games_from_another_model_are_flagged_and_get_bootstrap_intervals_that_hold():
    # What the model's ratings tend to as the games grow (the pseudo-true values that any
    # interval of this fit can aim at): the fit of a very long sample.
    long_run = rate(simulate_drawish_pairs(TRUE, 40_000, random.Random(7)), NAMES)
    target = {one.agent: one.rating.mean for one in long_run.rated}
    inside = total = 0
    for seed in range(12):
        ratings = rate(simulate_drawish_pairs(TRUE, 200, random.Random(seed)), NAMES, seed=seed)
        assert ratings.goodness is not None and ratings.goodness.rejected, ratings.goodness
        assert ratings.method == "bootstrap" and ratings.resamples == RESAMPLES
        assert "misfits" in ratings.reason
        for one in ratings.rated:
            if one.agent != "random":
                inside += one.rating.low <= target[one.agent] <= one.rating.high
                total += 1
    assert 0.85 <= inside / total <= 1.0, inside / total


def test_an_agent_rated_on_a_ladder_carries_the_first_move_and_nu_uncertainty():
    import dataclasses

    ladder = rate(simulate(TRUE[:4], 60.0, 0.8, 60, random.Random(3)), NAMES[:4])
    rng = random.Random(4)
    own = [p for p in simulate([*TRUE[:4], 400.0], 60.0, 0.8, 60, rng) if p.b == 4]
    with_all = extend(ladder, [("new", own)]).of("new").rating
    held = [list(row) for row in ladder.covariance]
    for i in range(len(held)):
        for j in (4, 5):  # h and ln nu: as if known exactly
            held[i][j] = held[j][i] = 0.0
    frozen = tuple(tuple(row) for row in held)
    without = extend(dataclasses.replace(ladder, covariance=frozen), [("new", own)]).of("new")
    assert with_all.mean == without.rating.mean
    assert with_all.high - with_all.low > without.rating.high - without.rating.low + 1


def test_a_simulated_x2_equal_to_the_games_own_but_for_the_last_bits_counts_as_as_large(
    monkeypatch,
):
    """A resample that draws the games played refits to their X², give or take the last bits,
    which fall either way from one processor to another: the p-value counts it either way."""
    from ttt_solve.agents import rating

    pearson = rating._pearson
    first: list[float] = []

    def last_bits_below(*args):  # noqa: ANN202
        value = pearson(*args)
        if not first:
            first.append(value)
            return value
        return first[0] * (1 - 1e-13)

    monkeypatch.setattr(rating, "_pearson", last_bits_below)
    fit = rate(simulate(TRUE[:3], 0.0, 1.0, 4, random.Random(0)), NAMES[:3]).goodness
    assert fit is not None and fit.simulated == RESAMPLES
    assert fit.p_value == 1.0
