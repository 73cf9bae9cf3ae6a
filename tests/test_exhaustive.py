"""The exhaustive solver against published figures and against a brute force."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from tests.reference import boards, rows
from tests.support import over_boards
from ttt_solve.solver.exhaustive.keyarrays import KeyArrays
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.figures import Figures
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import WIN_SCORE, Outcome, Value, move_score


def solve(rules: Rules) -> tuple[Figures, dict[int, object]]:
    figures = Figures(rules.cells)
    tables = {}
    for table in ExhaustiveSolver(rules).solve():
        figures.add(table)
        tables[table.ply] = table
    return figures, tables


@pytest.fixture(scope="module")
def solved_3x3():
    return solve(Rules(3, 3, 3))


def test_3x3_positions_by_ply(solved_3x3):
    figures, _ = solved_3x3
    for row in rows("positions_by_ply_3x3.csv"):
        ply = int(row["ply"])
        assert figures.by_ply["reachable"][ply] == int(row["reachable"])
        assert figures.by_ply["canonical"][ply] == int(row["canonical"])
    assert (figures.reachable, figures.canonical) == (5478, 765)


def test_3x3_terminal_and_value_counts(solved_3x3):
    figures, _ = solved_3x3
    ref = {r["figure"]: r for r in rows("figures_3x3.csv")}
    terminal = figures.terminal
    assert sum(terminal["reachable"].values()) == int(ref["terminal"]["reachable"])
    assert sum(terminal["canonical"].values()) == int(ref["terminal"]["canonical"])
    assert terminal["reachable"]["x"] == int(ref["terminal_x_wins"]["reachable"])
    assert terminal["reachable"]["o"] == int(ref["terminal_o_wins"]["reachable"])
    assert terminal["reachable"]["draw"] == int(ref["terminal_draws"]["reachable"])
    for outcome in ("win", "loss", "draw"):
        row = ref[f"side_to_move_{outcome}"]
        assert figures.values["reachable"][outcome] == int(row["reachable"])
        assert figures.values["canonical"][outcome] == int(row["canonical"])


def test_3x3_remoteness_table(solved_3x3):
    figures, _ = solved_3x3
    table = figures.remoteness["reachable"]
    for row in rows("remoteness_3x3.csv"):
        r = int(row["remoteness"])
        for outcome in ("win", "loss", "draw"):
            assert table[outcome].get(r, 0) == int(row[outcome]), (outcome, r)


def test_3x3_value_and_first_moves_are_draws(solved_3x3):
    figures, tables = solved_3x3
    assert figures.start_score == 0
    assert tables[1].scores.tolist() == [0, 0, 0]  # corner, edge, centre: all draws
    assert tables[0].best_moves[0] == (1 << 9) - 1  # so every first move is best


@cache
def brute_score(position: Position) -> int:
    """Plain negamax over Position objects, no symmetry: the oracle for small boards."""
    if position.winner is not None:
        return -WIN_SCORE
    moves = position.legal_moves()
    if not moves:
        return 0
    return max(move_score(brute_score(position.play(cell))) for cell in moves)


def all_positions(rules: Rules) -> set[Position]:
    seen, frontier = {Position.start(rules)}, [Position.start(rules)]
    while frontier:
        position = frontier.pop()
        for cell in position.legal_moves():
            child = position.play(cell)
            if child not in seen:
                seen.add(child)
                frontier.append(child)
    return seen


@over_boards("3x3 k=3", "2x3 k=2", "3x2 k=3", "3x3 k=2", "2x2 k=1", "1x4 k=2", "3x3 k=1")
def test_every_position_matches_a_brute_force(rules):
    _, tables = solve(rules)
    stored = {}
    for table in tables.values():
        for key, score, best in zip(
            table.keys.tolist(), table.scores.tolist(), table.best_moves.tolist()
        ):
            stored[key] = (score, best)
    positions = all_positions(rules)
    canonical_keys = {p.canonical_key for p in positions}
    assert canonical_keys == set(stored), "the solver's positions are not the reachable ones"
    for position in positions:
        key, symmetry = position.canonical()
        score, best = stored[key]
        assert score == brute_score(position), position
        if position.is_terminal:
            assert best == 0
            continue
        canonical = position.transform(symmetry)
        expected = {
            c
            for c in canonical.legal_moves()
            if move_score(brute_score(canonical.play(c))) == score
        }
        assert {c for c in range(rules.cells) if best >> c & 1} == expected, position


@pytest.mark.parametrize("rules_args", [(3, 4, 3), (4, 4, 3), (4, 4, 4)])
def test_counts_and_value_of_larger_boards(rules_args):
    ref = boards()[rules_args]
    figures, tables = solve(Rules(*rules_args))
    assert figures.reachable == int(ref["reachable"])
    assert figures.canonical == int(ref["canonical"])
    start = Value.from_score(figures.start_score, Rules(*rules_args).cells)
    assert start.outcome is Outcome(ref["value_for_x"])


def test_4x4_k3_every_first_move_wins_for_x():
    _, tables = solve(Rules(4, 4, 3))
    first_moves = tables[1]  # canonical positions after X's first move; O to move
    assert len(first_moves.keys) == 3
    assert (first_moves.scores < 0).all()  # O loses: X's first move wins, wherever it is


def test_key_arrays_agree_with_positions():
    import random

    for rules in (Rules(3, 3, 3), Rules(4, 5, 4), Rules(5, 5, 4)):
        rng = random.Random(7)
        arrays = KeyArrays(rules)
        positions = []
        for _ in range(300):
            position = Position.start(rules)
            for _ in range(rng.randrange(rules.cells)):
                moves = position.legal_moves()
                if not moves:
                    break
                position = position.play(rng.choice(moves))
            positions.append(position)
        keys = np.array([p.key for p in positions], dtype=np.uint64)
        assert arrays.canonical(keys).tolist() == [p.canonical_key for p in positions]
        sizes = arrays.orbit_sizes(keys).tolist()
        assert sizes == [
            len({p.transform(s) for s in range(len(rules.symmetries))}) for p in positions
        ]
