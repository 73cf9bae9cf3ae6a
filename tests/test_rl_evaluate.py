"""``ttt.evaluate`` on a shipped set: the figures of known policies, recounted here from the
set's own labels (every move's value), and failures counted as lost moves."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ttt_solve.rl.evalset import load
from ttt_solve.rl.evaluate import evaluate
from ttt_solve.solver.position import Position

SET_3X3 = Path(__file__).parent.parent / "data" / "evalsets" / "3x3k3-seed0-n2000.jsonl"
RANK = {"loss": 0, "draw": 1, "win": 2}


@pytest.fixture(scope="module")
def evalset():
    return load(SET_3X3)


def recount(records, choose):
    """(best, kept, lost by ply) of ``choose(record) -> cell`` by brute force: a move is best
    when no other move has a better outcome or, of the same outcome, a better remoteness
    (a faster win, a slower loss; all draws are equal); it keeps the value when its outcome is
    the position's."""
    best = kept = 0
    lost: dict[int, int] = {}
    for record in records:
        cell = choose(record)
        index = record["move_cells"].index(cell)
        outcome = record["move_values"][index]

        # the set's move values are for the mover
        scores = [
            (RANK[value], {"loss": far, "draw": 0, "win": -far}[value])
            for value, far in zip(record["move_values"], record["move_remoteness"])
        ]
        best += scores[index] == max(scores)
        kept += outcome == record["value"]
        lost[record["ply"]] = lost.get(record["ply"], 0) + (outcome != record["value"])
    return best, kept, lost


def test_a_perfect_policy_scores_everything(evalset):
    labels = {r["key"]: r for r in evalset.records}
    report = evaluate(lambda p: labels[p.key]["best_moves"][0], evalset)
    assert report.positions == len(evalset) == 431  # every decisive 3x3 position
    assert report.best == report.kept == 431 and report.failures == 0
    assert report.best_move_accuracy == report.value_kept == 1.0
    assert all(one.best == one.moves and one.lost == 0 for one in report.by_ply)


def test_first_empty_matches_a_recount_of_the_labels(evalset):
    report = evaluate(lambda p: p.legal_moves()[0], evalset)
    best, kept, lost = recount(evalset.records, lambda r: min(r["move_cells"]))
    assert (report.best, report.kept, report.failures) == (best, kept, 0)
    assert {one.ply: one.lost for one in report.by_ply} == lost
    # the policy is far from perfect on decisive positions: the recount is no trivial one
    assert 0 < best < kept < len(evalset)


def test_crashes_and_illegal_answers_count_as_lost_moves(evalset):
    def crashing_on_odd_keys(position: Position) -> int:
        if position.key % 2:
            raise RuntimeError("no move for odd keys")
        return position.legal_moves()[0]

    report = evaluate(crashing_on_odd_keys, evalset)
    odd = [r for r in evalset.records if r["key"] % 2]
    even = [r for r in evalset.records if not r["key"] % 2]
    best, kept, _ = recount(even, lambda r: min(r["move_cells"]))
    assert report.failures == len(odd) > 0
    assert (report.best, report.kept) == (best, kept)
    lost_by_ply: dict[int, int] = {}
    for record in odd:
        lost_by_ply[record["ply"]] = lost_by_ply.get(record["ply"], 0) + 1
    _, _, lost_even = recount(even, lambda r: min(r["move_cells"]))
    for ply, count in lost_even.items():
        lost_by_ply[ply] = lost_by_ply.get(ply, 0) + count
    assert {one.ply: one.lost for one in report.by_ply} == lost_by_ply
    # an occupied cell is an illegal answer: a failure too
    occupied = evaluate(lambda p: (p.x | p.o).bit_length() - 1, evalset)
    assert occupied.failures == len(evalset) and occupied.kept == occupied.best == 0


def test_a_value_function_failure_is_a_wrong_sign(evalset):
    labels = {r["key"]: r for r in evalset.records}
    signs = {"win": 1.0, "draw": 0.0, "loss": -1.0}
    truth = evaluate(lambda p: signs[labels[p.key]["value"]], evalset, kind="value")
    assert truth.sign_right == len(evalset) and truth.failures == 0

    def nan_on_draws(position: Position) -> float:
        value = labels[position.key]["value"]
        return math.nan if value == "draw" else signs[value]

    draws = sum(r["value"] == "draw" for r in evalset.records)
    report = evaluate(nan_on_draws, evalset, kind="value")
    assert report.failures == draws > 0 and report.sign_right == len(evalset) - draws

    def raising(position: Position) -> float:
        raise ValueError("no value")

    assert evaluate(raising, evalset, kind="value").sign_right == 0
