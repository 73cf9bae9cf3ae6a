"""The per-ply key operations (NumPy and compiled kernels) against plain definitions, the
choice between them, and the writer's ply thread."""

from __future__ import annotations

import random
import subprocess
import sys
import time

import numpy as np
import pytest

from ttt_solve.book.writer import solved_ahead
from ttt_solve.solver.exhaustive import kernels
from ttt_solve.solver.exhaustive.keyarrays import (
    COMPILED_FROM_CELLS,
    NO_MOVE,
    CompiledKeyArrays,
    KeyArrays,
    key_arrays,
)
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.rules import Rules


@pytest.mark.parametrize("slices", [1, 2, 3, 8])
def test_sorted_unique_matches_numpy(slices):
    rng = np.random.default_rng(slices)
    for size in (0, 1, 7, 10_000):
        keys = rng.integers(0, 500, size=size).astype(np.uint64)
        expected = np.unique(keys)
        assert np.array_equal(kernels.sorted_unique_parallel(keys.copy(), slices), expected)


IMPLEMENTATIONS = [KeyArrays, CompiledKeyArrays]


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@pytest.mark.parametrize("shape", [(3, 3, 3), (4, 5, 4), (5, 5, 4), (4, 4, 4)])
def test_canonical_children_are_the_positions_children(implementation, shape):
    rules = Rules(*shape)
    arrays = implementation(rules)
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


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_back_up_reports_missing_children(implementation):
    rules = Rules(3, 3, 3)
    arrays = implementation(rules)
    parents = np.array([0], dtype=np.uint64)  # the empty board: three canonical children
    children = arrays.sorted_unique(arrays.canonical_children(parents, 0))
    assert len(children) == 3
    scores, best, complete = arrays.back_up(parents, 0, children, np.zeros(3, dtype=np.int16))
    assert complete.tolist() == [True] and scores.tolist() == [0] and best[0] == rules.full
    partial = arrays.back_up(parents, 0, children[:1], np.zeros(1, dtype=np.int16))
    assert partial[2].tolist() == [False]
    empty = arrays.back_up(parents, 0, np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int16))
    assert empty[0].tolist() == [NO_MOVE] and empty[1].tolist() == [0]


@pytest.mark.parametrize("shape", [(3, 3, 3), (4, 4, 4)])
def test_both_implementations_agree_key_by_key(shape):
    rules = Rules(*shape)
    plain, compiled = KeyArrays(rules), CompiledKeyArrays(rules)
    rng = np.random.default_rng(5)
    ply = 6
    keys = []
    for _ in range(300):
        cells = rng.permutation(rules.cells)[:ply]
        x = sum(1 << int(c) for c in cells[: (ply + 1) // 2])
        o = sum(1 << int(c) for c in cells[(ply + 1) // 2 :])
        keys.append(x | o << rules.cells)
    keys_array = np.array(keys, dtype=np.uint64)
    assert np.array_equal(plain.canonical(keys_array), compiled.canonical(keys_array))
    assert np.array_equal(plain.orbit_sizes(keys_array), compiled.orbit_sizes(keys_array))
    for won_ply in (0, ply):
        assert np.array_equal(
            plain.won_by_last_mover(keys_array, won_ply),
            compiled.won_by_last_mover(keys_array, won_ply),
        )
    children = plain.sorted_unique(plain.canonical_children(keys_array, ply))
    scores = rng.integers(-100, 100, size=len(children)).astype(np.int16)
    for a, b in zip(
        plain.back_up(keys_array, ply, children, scores),
        compiled.back_up(keys_array, ply, children, scores),
    ):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("shape", [(3, 3, 3), (3, 4, 3)])
def test_both_implementations_agree_on_every_position_of_a_game(shape):
    # Every position, the symmetric ones (orbits of 1, 2 or 4) among them.
    rules = Rules(*shape)
    plain, compiled = KeyArrays(rules), CompiledKeyArrays(rules)
    keys = np.concatenate([t.keys for t in ExhaustiveSolver(rules, compiled=False).solve()])
    sizes = compiled.orbit_sizes(keys)
    assert np.array_equal(sizes, plain.orbit_sizes(keys))
    assert set(sizes.tolist()) == ({1, 2, 4, 8} if rules.rows == rules.cols else {1, 2, 4})
    assert np.array_equal(compiled.canonical(keys), keys)


def test_the_compiled_kernels_are_chosen_from_a_board_size_on():
    assert type(key_arrays(Rules(3, 3, 3))) is KeyArrays
    assert type(key_arrays(Rules(3, 4, 3))) is KeyArrays
    assert type(key_arrays(Rules(4, 4, 3))) is KeyArrays  # 756,387 positions: NumPy is faster
    assert COMPILED_FROM_CELLS <= 16
    assert type(key_arrays(Rules(4, 4, 4))) is CompiledKeyArrays
    assert type(key_arrays(Rules(4, 5, 3))) is CompiledKeyArrays
    assert type(key_arrays(Rules(3, 3, 3), compiled=True)) is CompiledKeyArrays
    assert type(key_arrays(Rules(4, 4, 4), compiled=False)) is KeyArrays


def test_a_small_solve_does_not_load_the_kernels():
    code = (
        "import sys\n"
        "from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver\n"
        "from ttt_solve.solver.rules import Rules\n"
        "list(ExhaustiveSolver(Rules(3, 3, 3)).solve())\n"
        "print('numba' in sys.modules, 'ttt_solve.solver.exhaustive.kernels' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]


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
