"""Agents of graded strength: ``perfect:error=P`` and ``perfect:temperature=T``. What they
should do follows from the book; audits of them must find it, within sampling error."""

from __future__ import annotations

import random

import pytest

from tests.support import refused_spec
from ttt_solve.agents.audit import Truth, summarize
from ttt_solve.agents.grading import audit_positions, select_positions
from ttt_solve.agents.match import play_game
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.perfect import move_distribution, predicted_shares, utility
from ttt_solve.agents.spec import make_agent
from ttt_solve.book.reader import open_book
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome, Value

WIN1, WIN3 = Value(Outcome.WIN, 1), Value(Outcome.WIN, 3)
DRAW, LOSS2 = Value(Outcome.DRAW, 6), Value(Outcome.LOSS, 2)
MOVES = [(4, WIN1), (0, WIN3), (2, DRAW), (8, LOSS2), (6, LOSS2)]


def test_error_spreads_its_probability_over_the_moves_that_are_not_best():
    shares = dict(move_distribution(MOVES, 9, error=0.2))
    assert shares == pytest.approx({4: 0.8, 0: 0.05, 2: 0.05, 8: 0.05, 6: 0.05})
    assert dict(move_distribution(MOVES[:1], 9, error=0.2)) == {4: 1.0}  # nothing else to play
    assert dict(move_distribution(MOVES, 9)) == {4: 1.0, 0: 0.0, 2: 0.0, 8: 0.0, 6: 0.0}


def test_temperature_orders_win_draw_loss_then_remoteness():
    assert utility(WIN1, 9) > utility(WIN3, 9) > utility(DRAW, 9) > utility(LOSS2, 9)
    assert utility(Value(Outcome.LOSS, 4), 9) > utility(LOSS2, 9)  # the slower loss
    cold = dict(move_distribution(MOVES, 9, temperature=0.01))
    assert cold[4] > 0.9999  # the win in 3 is 0.1 below: e**-10 as likely
    warm = dict(move_distribution(MOVES, 9, temperature=0.5))
    assert warm[4] > warm[0] > warm[2] > warm[8] == warm[6] > 0
    hot = dict(move_distribution(MOVES, 9, temperature=1000))
    assert all(abs(p - 0.2) < 0.001 for p in hot.values())


@pytest.mark.parametrize(
    "spec, words",
    [
        ("perfect:error=1.5", ["at most 1"]),
        ("perfect:error=0.1,temperature=1", ["error or temperature, not both"]),
        ("perfect:error=-0.1", ["expected a finite number >= 0"]),
        ("perfect:heat=1", ["unknown parameter 'heat'", "error (float, default 0.0)"]),
    ],
)
def test_bad_graded_specs(book_3x3, spec, words):
    if "heat" in spec or "-0.1" in spec:
        refused_spec(spec, words)
        return
    with open_book(book_3x3) as book, pytest.raises(ValueError) as caught:
        make_agent(spec, random.Random(0), book)
    assert all(word in str(caught.value) for word in words)


def test_no_error_plays_as_perfect_does(book_3x3):
    rules = Rules(3, 3, 3)
    with open_book(book_3x3) as book:
        for seed in range(5):
            games = [
                play_game(
                    make_agent(spec, random.Random(seed), book),
                    make_agent("random", random.Random(seed + 50)),
                    rules,
                )
                for spec in ("perfect", "perfect:error=0", "perfect:temperature=0")
            ]
            assert games[0] == games[1] == games[2]


def audited(db: str, rules: Rules, spec: str, sample: int | None, seed: int):  # noqa: ANN201
    """The audit's accuracy and perfection of ``spec`` and the book's prediction for the
    same positions."""
    params = dict(item.split("=") for item in spec.partition(":")[2].split(","))
    with open_book(db) as book:
        truth = Truth(book, rules)
        records, _, _ = audit_positions(
            AgentMaker(spec, db), truth, sample=sample, seed=seed, jobs=1
        )
        summary = summarize(records)
        rows = [(0, key, weight) for key, weight in select_positions(truth, sample, seed)]
        prediction = predicted_shares(truth, rows, **{k: float(v) for k, v in params.items()})
    return summary, prediction


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param("perfect:error=0.5", marks=pytest.mark.slow),
        "perfect:error=0.1",
        pytest.param("perfect:temperature=0.3", marks=pytest.mark.slow),
    ],
)
def test_the_audit_finds_the_predicted_accuracy_and_perfection_on_3x3(book_3x3, spec):
    rules = Rules(3, 3, 3)
    misses = []
    for seed in range(3):
        summary, prediction = audited(book_3x3, rules, spec, None, seed)
        assert summary.moves == 4520
        for found, expected, sd in (
            (summary.accuracy, prediction.accuracy, prediction.accuracy_sd),
            (summary.perfection, prediction.perfection, prediction.perfection_sd),
        ):
            assert sd > 0
            misses.append(abs(found - expected) / sd)
    assert max(misses) < 4  # within four standard deviations, every seed
    assert sum(misses) / len(misses) < 1.5  # and about one on average, not far more


def test_the_prediction_holds_on_sampled_4x4_k3_positions(book_small):
    rules = Rules(4, 4, 3)
    summary, prediction = audited(book_small, rules, "perfect:error=0.3", 400, 7)
    assert summary.graded == 400
    assert abs(summary.accuracy - prediction.accuracy) < 4 * prediction.accuracy_sd
    assert abs(summary.perfection - prediction.perfection) < 4 * prediction.perfection_sd
    # The prediction is not trivially met: a perfect agent would be far outside it.
    assert abs(1.0 - prediction.perfection) > 4 * prediction.perfection_sd


@pytest.mark.parametrize("rules", [Rules(3, 3, 3), Rules(3, 4, 3)], ids=str)
def test_positions_drawn_by_number_are_the_books_open_positions(book_small, rules):
    """What a large game's sample is drawn from (the game's index, by number) is what the
    book's rows list: asked for all of them, the same positions and weights; asked for some,
    distinct ones in (ply, class, key) order, the same for the same seed."""
    from ttt_solve.agents.grading import drawn_positions, listed_positions, open_count

    with open_book(book_small) as book:
        truth = Truth(book, rules)
        for per_class in (False, True):
            every = listed_positions(truth, None, 0, per_class=per_class)
            assert open_count(truth, per_class) == len(every)
            drawn = drawn_positions(rules, len(every), 4, per_class=per_class)
            assert sorted(drawn) == sorted(every)
        some = drawn_positions(rules, 300, 4)
        assert some == drawn_positions(rules, 300, 4) != drawn_positions(rules, 300, 5)
        assert len(set(some)) == 300 and {weight for _, weight in some} == {1}
        order = [
            (p.ply, p.canonical_key, p.key) for p in (Position.from_key(rules, k) for k, _ in some)
        ]
        assert order == sorted(order)
