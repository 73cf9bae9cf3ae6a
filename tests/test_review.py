"""An audit reviewed for a teacher (agents/review.py): its costly moves one row per position
and move with their count, bounded; its games' results as X and as O; each game's blunders.
Checked against the audit's own grading, counted here by hand."""

from __future__ import annotations

from collections import Counter

import pytest

from ttt_solve.agents.audit import Truth, grade_game, worst
from ttt_solve.agents.grading import audit_games, audit_positions
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.review import blunders_per_game, costly_rows, results_table
from ttt_solve.book.reader import open_book
from ttt_solve.solver.rules import Rules

R3 = Rules(3, 3, 3)


@pytest.fixture(scope="module")
def truth(book_3x3):
    with open_book(book_3x3, read_only=True) as book:
        yield Truth(book, R3)


@pytest.fixture(scope="module")
def games(truth):
    records, _, results, _ = audit_games(
        AgentMaker("random"), AgentMaker("heuristic"), truth, games=40, seed=2, jobs=1
    )
    return records, results


def test_costly_moves_of_games_one_row_per_position_and_move_with_how_often(games):
    records, _ = games
    rows, count = costly_rows(records, weighted=False)
    expected = Counter((str(r.position), r.cell) for r in records if r.grade.value != "best")
    assert count == len(rows) == len(expected) > 20
    assert {(str(row.record.position), row.record.cell): row.times for row in rows} == expected
    assert max(expected.values()) > 1  # some position and move came up more than once
    grades = [row.record.grade.value for row in rows]
    assert grades == sorted(grades, key="blunder".__ne__)  # blunders first
    # within blunders and within the others, the score given away never grows
    for kind in ("blunder", "sound"):
        costs = [row.record.cost for row in rows if row.record.grade.value == kind]
        assert costs == sorted(costs, reverse=True)


def test_costly_moves_are_bounded_to_the_costliest(games):
    records, _ = games
    every, count = costly_rows(records, weighted=False)
    for limit in (1, 7, count, count + 5):
        head, total = costly_rows(records, weighted=False, limit=limit)
        assert total == count
        assert head == every[:limit]


def test_costly_moves_of_positions_counted_by_the_positions_they_stand_for(truth):
    records, _, _ = audit_positions(AgentMaker("random"), truth, seed=1, jobs=1)
    rows, count = costly_rows(records, weighted=True)
    not_best = [r for r in records if r.grade.value != "best"]
    assert count == len(not_best) > 100  # each position is graded once: a row each
    assert {(row.record.position.key, row.times) for row in rows} == {
        (r.position.key, r.weight) for r in not_best
    }
    assert sum(row.times for row in rows) == sum(r.weight for r in not_best)
    assert [row.record for row in rows[:10]] == worst(records, 10)  # the same order as worst


def test_results_as_x_and_as_o(games):
    _, results = games
    table = results_table(results)
    for side in ("x", "o"):
        played = [g for g in results if g.agent_side == side]
        assert len(played) == 20
        for outcome in ("win", "draw", "loss"):
            assert table[side][outcome] == sum(g.outcome.value == outcome for g in played)
    assert {k: table["x"][k] + table["o"][k] for k in table["all"]} == table["all"]
    assert table["all"]["loss"] > 0 and table["all"]["forfeited"] == 0


def test_blunders_of_each_game(truth, games):
    records, results = games
    counted = blunders_per_game(truth, results)
    assert counted == [
        sum(r.kind is not None for r in grade_game(truth, R3, g.moves, g.agent_side)[0])
        for g in results
    ]
    assert sum(counted) == sum(r.grade.value == "blunder" for r in records) > 0
