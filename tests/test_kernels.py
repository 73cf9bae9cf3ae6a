"""The compiled per-ply kernels against plain definitions, and the writer's ply thread."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from ttt_solve.book.writer import solved_ahead
from ttt_solve.solver import kernels
from ttt_solve.solver.keyarrays import KeyArrays
from ttt_solve.solver.rules import Rules


@pytest.mark.parametrize("slices", [1, 2, 3, 8])
def test_sorted_unique_matches_numpy(slices):
    rng = np.random.default_rng(slices)
    for size in (0, 1, 7, 10_000):
        keys = rng.integers(0, 500, size=size).astype(np.uint64)
        expected = np.unique(keys)
        assert np.array_equal(kernels.sorted_unique_parallel(keys.copy(), slices), expected)


@pytest.mark.parametrize("shape", [(3, 3, 3), (4, 5, 4), (5, 5, 4), (4, 4, 4)])
def test_canonical_children_are_the_positions_children(shape):
    rules = Rules(*shape)
    arrays = KeyArrays(rules)
    rng = random.Random(11)
    for ply in (0, 1, 4, rules.cells - 2):
        parents = []
        for _ in range(40):
            cells = rng.sample(range(rules.cells), ply)
            x = sum(1 << c for c in cells[: (ply + 1) // 2])
            o = sum(1 << c for c in cells[(ply + 1) // 2 :])
            parents.append(x | o << rules.cells)
        children = arrays.canonical_children(np.array(parents, dtype=np.uint64), ply)
        expected = []
        for key in parents:
            x, o = key & rules.full, key >> rules.cells
            for cell in range(rules.cells):
                if not (x | o) >> cell & 1:
                    if ply % 2 == 0:
                        expected.append(rules.canonical(x | 1 << cell, o)[0])
                    else:
                        expected.append(rules.canonical(x, o | 1 << cell)[0])
        assert children.tolist() == expected


def test_back_up_reports_missing_children():
    rules = Rules(3, 3, 3)
    arrays = KeyArrays(rules)
    parents = np.array([0], dtype=np.uint64)  # the empty board: three canonical children
    children = arrays.sorted_unique(arrays.canonical_children(parents, 0))
    assert len(children) == 3
    scores, best, complete = arrays.back_up(parents, 0, children, np.zeros(3, dtype=np.int16))
    assert complete.tolist() == [True] and scores.tolist() == [0] and best[0] == rules.full
    partial = arrays.back_up(parents, 0, children[:1], np.zeros(1, dtype=np.int16))
    assert partial[2].tolist() == [False]
    empty = arrays.back_up(parents, 0, np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int16))
    assert empty[0].tolist() == [kernels.NO_MOVE] and empty[1].tolist() == [0]


def test_solved_ahead_passes_plies_and_errors_through():
    assert list(solved_ahead(iter(range(5)))) == [0, 1, 2, 3, 4]

    def failing():
        yield 1
        raise RuntimeError("solver broke")

    with pytest.raises(RuntimeError, match="solver broke"):
        list(solved_ahead(failing()))


def test_solved_ahead_stops_its_thread_when_the_consumer_stops():
    made = []

    def plies():
        for ply in range(100):
            made.append(ply)
            yield ply

    ahead = solved_ahead(plies())
    assert next(ahead) == 0
    ahead.close()
    time.sleep(0.5)
    assert len(made) <= 4  # one handed over, one waiting, one being made
