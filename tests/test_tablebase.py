"""The tablebase's index and ply step against the exhaustive solver, board by board."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.classes import class_table
from ttt_solve.solver.tablebase.index import binomial_table, class_count, rank_set, stone_counts
from ttt_solve.solver.tablebase.lookup import PlyIndex
from ttt_solve.solver.tablebase.positions import indexes
from ttt_solve.solver.tablebase.record import DRAW, NONE, record_of, score_of_record
from ttt_solve.solver.tablebase.step import solve_in_memory

GAMES = [
    (3, 3, 3),
    (2, 3, 2),
    (3, 2, 3),
    (3, 4, 3),
    (4, 3, 4),
    (2, 4, 2),
    (4, 4, 3),
    (4, 4, 4),
    (3, 3, 2),
]
"""Every board the exhaustive solver settles in seconds: squares, both orientations of
rectangles, k from 2 to 4."""

_SOLVED: dict[tuple[int, int, int], list] = {}


def solved(game: tuple[int, int, int]) -> list:
    if game not in _SOLVED:
        _SOLVED[game] = solve_in_memory(Rules(*game))
    return _SOLVED[game]


def test_the_rank_is_the_place_in_colex_order() -> None:
    sets = [s for s in range(1 << 7) if s.bit_count() == 3]
    assert [rank_set(s, binomial_table()) for s in sets] == list(range(comb(7, 3)))


@pytest.mark.parametrize("game", [(3, 3, 3), (3, 4, 3), (4, 4, 4), (4, 5, 4)])
def test_classes_counted_by_burnside_match_the_table(game: tuple[int, int, int]) -> None:
    rules = Rules(*game)
    for x in range(rules.cells + 1):
        table = class_table(rules, x)
        assert len(table.reps) == class_count(rules, x)
        # every set's symmetry maps it onto its class's representative
        ranks = np.arange(len(table.classes))
        sample = ranks[:: max(1, len(ranks) // 50)]
        for rank in sample:
            stones = _unrank(int(rank), x, rules.cells)
            image = rules.permute(stones, int(table.symmetries[rank]))
            assert image == int(table.reps[table.classes[rank]])


def _unrank(rank: int, size: int, cells: int) -> int:
    stones, top = 0, cells - 1
    for m in range(size, 0, -1):
        while comb(top, m) > rank:
            top -= 1
        rank -= comb(top, m)
        stones |= 1 << top
        top -= 1
    return stones


def test_records_code_every_score() -> None:
    for score in [0, *(1024 - r for r in range(1, 26, 2)), *(-(1024 - r) for r in range(0, 26, 2))]:
        assert score_of_record(record_of(score)) == score


@pytest.mark.parametrize("game", GAMES)
def test_the_table_agrees_with_the_exhaustive_solver_row_for_row(
    game: tuple[int, int, int],
) -> None:
    rules = Rules(*game)
    plies = solved(game)
    exhaustive = {table.ply: table for table in ExhaustiveSolver(rules).solve()}
    for ply, (records, counts) in enumerate(plies):
        table = exhaustive.get(ply)
        if table is None:  # no position of this ply is reachable
            assert counts.canonical == 0 and not records.any()
            continue
        keys = np.asarray(table.keys, dtype=np.uint64)
        x = (keys & np.uint64(rules.full)).astype(np.int64)
        o = (keys >> np.uint64(rules.cells)).astype(np.int64)
        numbers = indexes(rules, ply, class_table(rules, stone_counts(ply)[0]), x, o)
        found = records[numbers]
        assert (found != NONE).all()
        expected = [record_of(int(score)) for score in table.scores]
        assert found.tolist() == expected, f"ply {ply}"
        assert counts.canonical == len(keys)
        assert counts.reachable == int(np.asarray(table.images, dtype=np.int64).sum())


@pytest.mark.parametrize("game", [(3, 3, 3), (3, 4, 3)])
def test_every_number_is_a_position_exactly_when_the_rules_allow_it(
    game: tuple[int, int, int],
) -> None:
    """The local test of reachability against Position.illegality, number by number."""
    rules = Rules(*game)
    for ply, (records, _) in enumerate(solved(game)):
        x_count, o_count = stone_counts(ply)
        table = class_table(rules, x_count)
        per_class = comb(rules.cells - x_count, o_count)
        for number, rep in enumerate(table.reps.tolist()):
            free = rules.full & ~rep
            cells = [c for c in range(rules.cells) if free >> c & 1]
            for rank in range(per_class):
                o = sum(
                    1 << cells[c]
                    for c in range(len(cells))
                    if _unrank(rank, o_count, len(cells)) >> c & 1
                )
                legal = Position(rules, rep, o).illegality() is None
                assert (records[number * per_class + rank] != NONE) == legal


def test_published_values_and_counts() -> None:
    """data/boards.csv's reachable counts, and the value of the empty board."""
    import csv
    from pathlib import Path

    rows = csv.DictReader((Path(__file__).parents[1] / "data" / "boards.csv").open())
    checked = 0
    for row in rows:
        game = (int(row["rows"]), int(row["cols"]), int(row["k"]))
        if Rules(*game).cells > 16:
            continue
        plies = solved(game)
        assert sum(c.reachable for _, c in plies) == int(row["reachable"])
        assert sum(c.canonical for _, c in plies) == int(row["canonical"])
        root = int(plies[0][0][0])
        value = "draw" if root == DRAW else "win" if (root - 2) % 2 else "loss"
        assert value == row["value_for_x"]
        checked += 1
    assert checked >= 4


def test_a_position_is_ranked_alone_as_in_bulk() -> None:
    rules = Rules(4, 4, 4)
    position = Position.from_moves(rules, ["b2", "c3", "a1", "d4", "b3"])
    ply = position.ply
    table = class_table(rules, stone_counts(ply)[0])
    alone = PlyIndex(rules, ply, table.rep_ranks.tolist()).index(position.x, position.o)
    bulk = indexes(rules, ply, table, np.array([position.x]), np.array([position.o]))
    assert alone == int(bulk[0])


@pytest.mark.parametrize("game", [(3, 3, 3), (3, 4, 3), (4, 4, 4)])
def test_every_number_gives_back_the_stones_it_ranks(game: tuple[int, int, int]) -> None:
    rules = Rules(*game)
    for ply in range(rules.cells + 1):
        x_count, o_count = stone_counts(ply)
        index = PlyIndex(rules, ply, class_table(rules, x_count).rep_ranks.tolist())
        numbers = range(len(index)) if len(index) < 5000 else range(0, len(index), 37)
        for number in numbers:
            x, o = index.stones(number)
            assert (x.bit_count(), o.bit_count(), x & o) == (x_count, o_count, 0)
            assert index.index(x, o) == number, (game, ply, number)
    with pytest.raises(ValueError, match="not within ply"):
        index.stones(len(index))


@pytest.mark.slow
def test_4x5_k4_agrees_with_the_exhaustive_solver_row_for_row() -> None:
    """Minutes and about 3 GiB: every canonical position of 4 rows x 5 columns, k=4."""
    rules = Rules(4, 5, 4)
    plies = solve_in_memory(rules)
    for table in ExhaustiveSolver(rules).solve():
        records, counts = plies[table.ply]
        keys = np.asarray(table.keys, dtype=np.uint64)
        x = (keys & np.uint64(rules.full)).astype(np.int64)
        o = (keys >> np.uint64(rules.cells)).astype(np.int64)
        numbers = indexes(rules, table.ply, class_table(rules, stone_counts(table.ply)[0]), x, o)
        scores = np.asarray(table.scores, dtype=np.int64)
        expected = np.where(
            scores == 0, DRAW, 2 + np.where(scores > 0, 1024 - scores, 1024 + scores)
        )
        assert (records[numbers] == expected).all(), f"ply {table.ply}"
        assert counts.canonical == len(keys), f"ply {table.ply}"
        assert counts.reachable == int(np.asarray(table.images, dtype=np.int64).sum())
