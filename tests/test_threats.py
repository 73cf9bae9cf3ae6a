"""Wins by continuous threats in the prover (``_threat_win`` of solver.prover.negamax)."""

from __future__ import annotations

import random

import pytest

from tests.support import random_walk
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.position import Position
from ttt_solve.solver.prover.search import Prover, Prunings, SearchCounters, root_of
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import WIN_SCORE, Outcome

ENGINES = ["compiled", "python"]

THREAT_WIN = "x......o./x..x...../..o.o..../.ox......"
"""(9,4,4), X to move after 8 plies, no threat on the board: X wins by a sequence of single
threats, each forcing O's block, that ends in a double threat (13 plies at most)."""


def threat_plies(prover: Prover, position: Position) -> int:
    """The plies of the win by continuous threats the prover finds for the side to move."""
    return prover._search.threat_win(root_of(position))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_win_by_continuous_threats_needs_no_search(engine: str) -> None:
    rules = Rules(4, 9, 4)
    position = Position.parse(THREAT_WIN, rules)
    prover = Prover(rules, weak=True, engine=engine)
    assert threat_plies(prover, position) == 13
    result = prover.solve(position)
    assert result.value.outcome == Outcome.WIN
    assert (result.technique, result.nodes, result.threats) == ("threats", 0, 1)
    assert result.score == WIN_SCORE - 13
    # without threats the search proves the same win, searching for it
    plain = Prover(rules, weak=True, engine=engine, prunings=Prunings(threats=False)).solve(
        position
    )
    assert plain.value.outcome == Outcome.WIN
    assert plain.technique != "threats" and plain.threats == 0 and plain.nodes > 0


def test_the_threat_win_is_no_longer_than_it_says() -> None:
    """The exact remoteness, found without threats, is at most the plies the sequence takes."""
    rules = Rules(4, 9, 4)
    position = Position.parse(THREAT_WIN, rules)
    exact = Prover(rules, prunings=Prunings(threats=False)).solve(position)
    assert exact.value.outcome == Outcome.WIN
    assert exact.value.remoteness <= 13
    # the exact mode with threats at its nodes finds the same remoteness
    assert Prover(rules).solve(position).value == exact.value


def test_no_threat_win_where_the_side_to_move_cannot_win() -> None:
    """Soundness apart from the prover: on a seeded sample of 4x4 k=4 and 3x3 positions, a win
    by threats found in ``r`` plies is a win of at most ``r`` plies by the exhaustive value."""
    found = 0
    for rules in (Rules(4, 4, 4), Rules(3, 3, 3), Rules(4, 4, 3)):
        prover = Prover(rules, engine="python")
        rows = [
            (key, score)
            for table in ExhaustiveSolver(rules).solve()
            for key, score in zip(table.keys.tolist(), table.scores.tolist())
        ]
        for key, score in random.Random(8).sample(rows, min(len(rows), 6000)):
            position = Position.from_key(rules, key)
            if position.is_terminal:
                continue
            plies = threat_plies(prover, position)
            if plies:
                found += 1
                assert score >= WIN_SCORE - plies, str(position)
    assert found >= 100


@pytest.mark.parametrize("shape", [(4, 5, 4), (5, 5, 4), (4, 7, 4)])
def test_threat_wins_agree_with_the_exact_search_without_threats(
    shape: tuple[int, int, int],
) -> None:
    """On boards past the exhaustive tables, where the opponent's forced blocks threaten in
    turn more often: every threat win found in ``r`` plies is a win of at most ``r`` plies
    by the exact search without threats."""
    rules = Rules(*shape)
    rng = random.Random(7 * sum(shape))
    finder = Prover(rules, table_bits=8)
    exact = Prover(rules, table_bits=18, prunings=Prunings(threats=False))
    found = 0
    for _ in range(400):
        position = random_walk(rules, rng, rng.randrange(4, 16))
        if position.is_terminal:
            continue
        plies = threat_plies(finder, position)
        if plies:
            found += 1
            assert exact.solve(position).score >= WIN_SCORE - plies, str(position)
    assert found >= 20


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("shape", [(4, 5, 4), (4, 6, 4), (5, 5, 4), (5, 6, 4), (6, 6, 5)])
def test_weak_values_with_threats_equal_those_without_on_the_empty_board(
    shape: tuple[int, int, int], engine: str
) -> None:
    rules = Rules(*shape)
    start = Position.start(rules)
    with_threats = Prover(rules, weak=True, engine=engine).solve(start)
    without = Prover(rules, weak=True, engine=engine, prunings=Prunings(threats=False)).solve(start)
    assert with_threats.value.outcome == without.value.outcome
    assert without.threats == 0 and "threats" not in without.technique


def closed_by_threats_alike(
    shape: tuple[int, int, int], weak: bool, seed: int, walks: int, fewest: int = 2
) -> int:
    """Solve ``walks`` random positions of ``shape`` (``fewest`` to 13 plies) with and without
    the threat search and check the values equal (weak: the outcome; exact: the outcome and
    remoteness); the nodes the threat search closed."""
    rules = Rules(*shape)
    rng = random.Random(seed)
    with_threats = Prover(rules, weak=weak, table_bits=18)
    without = Prover(rules, weak=weak, table_bits=18, prunings=Prunings(threats=False))
    for _ in range(walks):
        position = random_walk(rules, rng, rng.randrange(fewest, 14))
        if position.is_terminal:
            continue
        found = with_threats.solve(position).value
        plain = without.solve(position).value
        assert (found.outcome if weak else found) == (plain.outcome if weak else plain), str(
            position
        )
    assert without.threat_wins == 0
    return with_threats.threat_wins


@pytest.mark.parametrize(
    "shape, fewest",
    [((4, 5, 4), 2), ((5, 5, 4), 2), ((4, 7, 4), 2), ((5, 6, 4), 2), ((4, 9, 4), 8)],
)
def test_weak_values_with_threats_equal_those_without_on_random_positions(
    shape: tuple[int, int, int], fewest: int
) -> None:
    """(9,4,4) from 8 plies on: its earlier positions take the search minutes."""
    assert closed_by_threats_alike(shape, True, sum(shape), 40, fewest) > 0


def test_the_engines_agree_with_threats() -> None:
    rules = Rules(4, 6, 4)
    rng = random.Random(46)
    compiled = Prover(rules, weak=True, engine="compiled", table_bits=14)
    plain = Prover(rules, weak=True, engine="python", table_bits=14)
    for _ in range(12):
        position = random_walk(rules, rng, rng.randrange(3, 10))
        if position.is_terminal:
            continue
        assert compiled.solve(position)[:3] == plain.solve(position)[:3]
    assert compiled.threat_wins == plain.threat_wins > 0


@pytest.mark.parametrize("shape", [(4, 5, 4), (5, 5, 4), (4, 6, 4)])
def test_exact_values_with_threats_equal_those_without(shape: tuple[int, int, int]) -> None:
    """Exact mode keeps the shortest win's remoteness: a threat win closes a node only as a
    lower bound on its score."""
    assert closed_by_threats_alike(shape, False, 100 + sum(shape), 25) > 0


def test_technique_names() -> None:
    assert SearchCounters().technique == "search"
    assert SearchCounters(pairings=3).technique == "search+pairing"
    assert SearchCounters(threats=2).technique == "search+threats"
    assert SearchCounters(pairings=1, threats=1).technique == "search+pairing+threats"
