"""The proof-number search of bench/bench_pns.py answers as the alpha-beta prover does, and the
search engine's entry points it uses (``SearchEngine.moves`` and ``breaker_holds``) say what
the search does at a node."""

from __future__ import annotations

import random
from types import ModuleType

import pytest

from tests.support import bench_script, random_walk
from tests.test_prunings import small_games
from ttt_solve.solver.position import Position
from ttt_solve.solver.prover.search import Prover, Prunings, SearchEngine, root_of
from ttt_solve.solver.rules import Rules


@pytest.fixture(scope="module")
def bench_pns() -> ModuleType:
    return bench_script("bench_pns")


def prover_says_x_wins(prover: Prover, position: Position) -> bool:
    """The weak prover's answer, with the null window of the question as bench_pns asks it."""
    if position.winner is not None:
        return position.winner == "x"
    if not position.empty:
        return False
    if position.x_to_move:
        return prover.bound(position, 0, 1) > 0
    return prover.bound(position, -1, 0) < 0


@pytest.mark.parametrize("eager", [pytest.param(True, marks=pytest.mark.slow), False])
def test_df_pn_agrees_with_the_prover_on_every_small_game(
    bench_pns: ModuleType, eager: bool
) -> None:
    """The empty board and 3 seeded random positions of every game of at most 16 cells."""
    rng = random.Random(16)
    answers = set()
    for rules in small_games():
        if rules.cells > 16:
            continue
        prover = Prover(rules, weak=True, prunings=Prunings.strongest(), table_bits=10)
        positions = [Position.start(rules)]
        positions += [random_walk(rules, rng, rng.randrange(rules.cells)) for _ in range(3)]
        for position in positions:
            found = bench_pns.ProofNumberSearch(rules, eager=eager).x_wins(position)
            assert found == prover_says_x_wins(prover, position), (rules.name, str(position))
            answers.add(found)
    assert answers == {True, False}


@pytest.mark.parametrize(
    "shape, walks, fewest, most", [((5, 5, 4), 40, 2, 14), ((6, 6, 5), 25, 6, 20)]
)
def test_df_pn_agrees_with_the_prover_on_random_positions(
    bench_pns: ModuleType, shape: tuple[int, int, int], walks: int, fewest: int, most: int
) -> None:
    rules = Rules(*shape)
    rng = random.Random(sum(shape))
    prover = Prover(rules, weak=True, prunings=Prunings.strongest(), table_bits=16)
    wins = 0
    for _ in range(walks):
        position = random_walk(rules, rng, rng.randrange(fewest, most))
        search = bench_pns.ProofNumberSearch(rules)
        found = search.x_wins(position)
        assert found == prover_says_x_wins(prover, position), str(position)
        wins += found
    assert 0 < wins < walks  # both answers were asked for


def test_df_pn_proves_the_5x5_k4_draw_by_search(bench_pns: ModuleType) -> None:
    """The published value, reached through the search rather than a check of the root."""
    rules = Rules(5, 5, 4)
    search = bench_pns.ProofNumberSearch(rules)
    assert not search.x_wins(Position.start(rules))
    assert search.expanded > 100 and search.root_numbers[0] == bench_pns.INFINITY


@pytest.mark.parametrize("compiled", [True, False])
def test_engine_moves_are_the_search_move_order(compiled: bool) -> None:
    rules = Rules(5, 5, 4)
    engine = SearchEngine(rules, 4, compiled=compiled, prunings=Prunings())
    # O (to move) faces X's one threat on the top row: the block is the only move
    blocked = Position.parse("xxx../oo.../...../...../.....", rules)
    assert engine.moves(root_of(blocked)) == [rules.parse_cell("d1")]
    # X (to move) makes two threats at once by d3 (b3 c3 d3, a3 and e3 open): a win in 3
    double = Position.parse("...../...../.xx../...../o...o", rules)
    assert engine.moves(root_of(double)) is None
    # no dead cell, no domination: every empty cell
    start = Position.start(rules).play(12)
    assert sorted(engine.moves(root_of(start)) or []) == start.legal_moves()
    # one row of 6, k=5: the two lines both pass through the four middle cells, so with
    # domination the lowest of them stands for every move
    row = Rules(1, 6, 5)
    dominating = SearchEngine(row, 4, compiled=compiled, prunings=Prunings.strongest())
    assert dominating.moves(root_of(Position.start(row))) == [1]


@pytest.mark.parametrize("compiled", [True, False])
def test_engine_breaker_holds_as_the_pairings_say(compiled: bool) -> None:
    # (5,5,5) is a draw by a pairing of either side's; on 3x3 k=3 O has none
    five = Rules(5, 5, 5)
    engine = SearchEngine(five, 4, compiled=compiled, prunings=Prunings())
    start = root_of(Position.start(five))
    assert engine.breaker_holds(start, maker_to_move=True)
    assert engine.breaker_holds(start, maker_to_move=False)
    three = Rules(3, 3, 3)
    engine = SearchEngine(three, 4, compiled=compiled, prunings=Prunings.strongest())
    assert not engine.breaker_holds(root_of(Position.start(three)), maker_to_move=True)
    # with O to move after X's corner, O still has no pairing, before or after its move
    corner = root_of(Position.start(three).play(0))
    assert not engine.breaker_holds(corner, maker_to_move=False)
