"""Scores: the one score flip and its inverse, for Python ints, NumPy arrays and Numba code."""

from __future__ import annotations

import numpy as np
import pytest

from ttt_solve.solver.plytable import join_scores, split_scores
from ttt_solve.solver.value import (
    WIN_SCORE,
    Outcome,
    Value,
    best_child_score,
    move_score,
    move_value,
    remoteness_of,
    score_of,
)

SCORES = [0] + [WIN_SCORE - r for r in range(0, 30)] + [-(WIN_SCORE - r) for r in range(0, 30)]


def test_move_score_negates_the_outcome_and_adds_the_move():
    for child in SCORES:
        value = Value.from_score(child, 7)
        assert move_score(child) == move_value(value).score
        assert Value.from_score(move_score(child), 8) == move_value(value)
    assert move_value(Value(Outcome.DRAW, 3)) == Value(Outcome.DRAW, 4)
    assert move_score(WIN_SCORE - 3) == -(WIN_SCORE - 4)
    assert move_score(-WIN_SCORE) == WIN_SCORE - 1
    assert type(move_score(5)) is int


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64])
def test_the_score_flips_keep_an_array_dtype(dtype):
    scores = np.array(SCORES, dtype=dtype)
    flipped = move_score(scores)
    assert flipped.dtype == dtype
    assert flipped.tolist() == [move_score(s) for s in SCORES]
    inverse = best_child_score(scores)
    assert inverse.dtype == dtype
    assert inverse.tolist() == [best_child_score(s) for s in SCORES]


def test_the_score_flips_compile_with_numba():
    numba = pytest.importorskip("numba")
    compiled_move_score = numba.njit(move_score)
    compiled_best_child_score = numba.njit(best_child_score)
    for score in SCORES:
        assert compiled_move_score(score) == move_score(score)
        assert compiled_best_child_score(score) == best_child_score(score)
    array = np.array(SCORES, dtype=np.int16)
    assert np.array_equal(compiled_move_score(array), move_score(array))


def test_score_and_remoteness_round_trip_for_ints_and_arrays():
    for score in SCORES:
        value = Value.from_score(score, 5)
        assert remoteness_of(score, 5) == value.remoteness
        assert score_of(value.outcome.sign, value.remoteness) == score
    scores = np.array(SCORES, dtype=np.int16)
    signs, remoteness = split_scores(scores, 5)
    assert remoteness.tolist() == [Value.from_score(s, 5).remoteness for s in SCORES]
    assert np.array_equal(join_scores(signs, remoteness), scores)
