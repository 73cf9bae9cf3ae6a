"""Positions drawn by number from a game's dense index (:mod:`solver.sampling`): every
reachable position whose game goes on comes exactly once, in an order the seed decides and
that is uniform. The oracle is a walk of every game from the empty board."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.sampling import DenseIndex, open_positions, shuffled


def walked(rules: Rules) -> set[Position]:
    """Every position some game reaches whose game is not over, by playing every move."""
    seen = {Position.start(rules)}
    frontier = list(seen)
    while frontier:
        children = {
            position.play(cell)
            for position in frontier
            for cell in position.legal_moves()
            if not position.is_terminal
        }
        frontier = list(children - seen)
        seen |= children
    return {position for position in seen if not position.is_terminal}


BOARDS = [Rules(3, 3, 3), Rules(3, 4, 3), Rules(2, 5, 2), Rules(3, 3, 2)]


@pytest.mark.parametrize(
    "rules",
    [BOARDS[0], pytest.param(BOARDS[1], marks=pytest.mark.slow), *BOARDS[2:]],
    ids=lambda r: r.name,
)
def test_every_open_position_comes_once(rules):
    expected = walked(rules)
    drawn = list(open_positions(rules, seed=5))
    assert len(drawn) == len(set(drawn)) == len(expected)
    assert set(drawn) == expected
    classes = list(open_positions(rules, seed=5, per_class=True))
    assert len(classes) == len(set(classes))
    assert {p.key for p in classes} == {p.canonical_key for p in expected}


def test_3x3_counts_are_the_published_ones():
    rules = Rules(3, 3, 3)
    # 5,478 reachable positions of which 958 are over; 765 classes of which 138 are over
    assert sum(1 for _ in open_positions(rules, 0)) == 5478 - 958
    assert sum(1 for _ in open_positions(rules, 0, per_class=True)) == 765 - 138


def test_the_seed_decides_the_order():
    rules = Rules(3, 4, 3)
    first = list(itertools.islice(open_positions(rules, 1), 200))
    assert first == list(itertools.islice(open_positions(rules, 1), 200))
    assert first != list(itertools.islice(open_positions(rules, 2), 200))


def chi_square(drawn: Counter, population: Counter) -> float:
    """Pearson's statistic of ``drawn`` against the shares of ``population``."""
    n, total = sum(drawn.values()), sum(population.values())
    return sum((drawn[k] - n * c / total) ** 2 / (n * c / total) for k, c in population.items())


@pytest.mark.parametrize("per_class", [False, True], ids=["positions", "classes"])
def test_the_order_is_uniform(per_class):
    """The first 4,000 of 3x4 k=3 (seeded: the figures are always the same) fall in the
    plies, and among symmetric and other classes, as the whole set does (chi-square at p =
    0.001): positions and classes differ there, a symmetric class having fewer positions."""
    rules = Rules(3, 4, 3)
    whole = walked(rules)
    if per_class:
        whole = {Position.from_key(rules, p.canonical_key) for p in whole}
    drawn = list(itertools.islice(open_positions(rules, 11, per_class=per_class), 4000))
    plies = Counter(p.ply for p in whole)
    assert chi_square(Counter(p.ply for p in drawn), plies) < 29.6  # 10 degrees of freedom

    def symmetric(position: Position) -> bool:
        return len(set(position.image_keys())) < len(rules.symmetries)

    kinds = Counter(symmetric(p) for p in whole)
    assert chi_square(Counter(symmetric(p) for p in drawn), kinds) < 10.83  # 1 degree


@pytest.mark.parametrize("count", [0, 1, 2, 7, 1000])
def test_shuffled_is_a_permutation(count):
    import random

    order = list(shuffled(count, random.Random(3)))
    assert sorted(order) == list(range(count))


def test_the_dense_index_numbers_every_position_of_a_ply_once():
    rules = Rules(3, 3, 3)
    index = DenseIndex(rules, rules.cells + 1)
    positions = [index.position(number) for number in range(len(index))]
    assert len(set(positions)) == len(positions) == 6046  # sum of C(9, x) * C(9 - x, o)
    assert all(p.ply == ply for ply in range(10) for p in positions[index.starts[ply] :][:1])
