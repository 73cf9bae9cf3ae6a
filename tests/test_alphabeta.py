"""The alpha-beta prover against the exhaustive solver, published values and its contract."""

from __future__ import annotations

import random
import time

import pytest

from tests.reference import rows
from tests.support import random_walk
from ttt_solve.solver.errors import SearchTimeout
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.position import Position, iter_cells
from ttt_solve.solver.prover.search import (
    EXACT_SEARCHES,
    Prover,
    Prunings,
    SearchEngine,
    SearchResult,
    child_window,
    fits_compiled,
)
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import WIN_SCORE, Outcome, Value, move_score


def exhaustive_rows(rules: Rules) -> list[tuple[int, int, int, int]]:
    """``(ply, canonical key, exact score, best-move mask)`` of every canonical position."""
    return [
        (table.ply, key, score, best)
        for table in ExhaustiveSolver(rules).solve()
        for key, score, best in zip(
            table.keys.tolist(), table.scores.tolist(), table.best_moves.tolist()
        )
    ]


@pytest.fixture(scope="module")
def table_3x3() -> list[tuple[int, int, int, int]]:
    return exhaustive_rows(Rules(3, 3, 3))


@pytest.fixture(scope="module")
def sample_4x4k4() -> list[tuple[int, int, int, int]]:
    """2,000 canonical positions of 4x4 k=4 drawn with a fixed seed (all plies mixed)."""
    return random.Random(20240501).sample(exhaustive_rows(Rules(4, 4, 4)), 2000)


ENGINES = ["compiled", "python"]
"""Both searches of the prover: Numba-compiled (boards of at most 32 cells) and pure Python."""

WINDOWS = [
    (-1, 1),
    (0, 1),
    (-1, 0),
    (WIN_SCORE - 12, WIN_SCORE - 11),
    (WIN_SCORE - 5, WIN_SCORE - 4),
    (-(WIN_SCORE - 9), -(WIN_SCORE - 10)),
    (-(WIN_SCORE - 6), -(WIN_SCORE - 7)),
    (3 - WIN_SCORE, WIN_SCORE - 3),
    (-WIN_SCORE, WIN_SCORE),
]
"""Search windows ``(alpha, beta)`` the bound tests probe: narrow ones around the draw, null
windows among the wins and among the losses, and wide ones."""


@pytest.fixture(params=ENGINES)
def engine(request) -> str:
    return request.param


@pytest.fixture(params=EXACT_SEARCHES)
def exact_search(request) -> str:
    return request.param


def sign(score: int) -> int:
    return (score > 0) - (score < 0)


def test_every_3x3_position_exact(table_3x3, engine, exact_search):
    rules = Rules(3, 3, 3)
    prover = Prover(rules, engine=engine)
    wrong = [
        (
            str(Position.from_key(rules, key)),
            score,
            prover.solve(Position.from_key(rules, key), exact_search=exact_search).score,
        )
        for _, key, score, _ in table_3x3
    ]
    wrong = [w for w in wrong if w[1] != w[2]]
    assert len(table_3x3) == 765
    assert wrong == []


def test_every_3x3_position_weak_outcome(table_3x3, engine):
    rules = Rules(3, 3, 3)
    prover = Prover(rules, weak=True, engine=engine)
    for _, key, score, _ in table_3x3:
        position = Position.from_key(rules, key)
        result = prover.solve(position)
        assert sign(result.score) == sign(score), str(position)
        assert result.value.outcome is Value.from_score(score, position.empty_count).outcome
        if score == 0:  # a draw's remoteness is the empty cells, even in weak mode
            assert result.value.remoteness == position.empty_count


def test_sample_of_4x4k4_exact(sample_4x4k4, engine, exact_search):
    rules = Rules(4, 4, 4)
    prover = Prover(rules, engine=engine)
    for _, key, score, _ in sample_4x4k4:
        position = Position.from_key(rules, key)
        assert prover.solve(position, exact_search=exact_search).score == score, str(position)


def test_sample_of_4x4k4_exact_with_a_fresh_prover_each_time(sample_4x4k4, engine, exact_search):
    # a shared table could hide a wrong bound; a fresh prover searches from nothing
    rules = Rules(4, 4, 4)
    for _, key, score, _ in sample_4x4k4[:200]:
        position = Position.from_key(rules, key)
        prover = Prover(rules, table_bits=4, engine=engine)
        assert prover.solve(position, exact_search=exact_search).score == score, str(position)


def test_sample_of_4x4k4_weak(sample_4x4k4, engine):
    rules = Rules(4, 4, 4)
    prover = Prover(rules, weak=True, engine=engine)
    for _, key, score, _ in sample_4x4k4:
        position = Position.from_key(rules, key)
        assert sign(prover.solve(position).score) == sign(score), str(position)


@pytest.mark.parametrize(
    "shape", [(3, 4, 3), (4, 3, 3), (2, 3, 1), (3, 3, 2), (1, 5, 2), (2, 4, 3), (3, 3, 1)]
)
def test_small_games_exact_everywhere(shape, engine, exact_search):
    """Rectangles (4 symmetries), k=1 and k=2, lines longer than a side: all against the
    exhaustive solver."""
    rules = Rules(*shape)
    prover = Prover(rules, engine=engine)
    for _, key, score, _ in exhaustive_rows(rules):
        position = Position.from_key(rules, key)
        assert prover.solve(position, exact_search=exact_search).score == score, str(position)


@pytest.mark.parametrize("shape,plies", [((5, 5, 4), 9), ((5, 6, 4), 8), ((6, 6, 5), 12)])
def test_exact_searches_agree_past_the_exhaustive_boards(shape, plies):
    """Wins, draws and losses of random positions (seeded), each by a fresh prover per
    search: deepening finds the score bisection finds."""
    rules = Rules(*shape)
    rng = random.Random(f"exact searches {shape}")
    scores = set()
    for _ in range(12):
        position = random_walk(rules, rng, plies + rng.randrange(4))
        by_bisection = Prover(rules).solve(position).score
        by_deepening = Prover(rules).solve(position, exact_search="deepening").score
        assert by_deepening == by_bisection, str(position)
        scores.add(sign(by_bisection))
    assert len(scores) >= 2  # not all of one kind (over the three boards: wins, draws, losses)


def test_an_unknown_exact_search_is_refused():
    with pytest.raises(ValueError, match="'fastest'.*bisection, deepening"):
        Prover(Rules(3, 3, 3)).solve(Position.start(Rules(3, 3, 3)), exact_search="fastest")


def test_move_values_match_the_exhaustive_best_moves(table_3x3, engine):
    rules = Rules(3, 3, 3)
    prover = Prover(rules, weak=True, engine=engine)  # move_values is exact in both modes
    for _, key, score, best in table_3x3:
        position = Position.from_key(rules, key)
        values = prover.move_values(position)
        assert [cell for cell, _ in values] == sorted(
            position.legal_moves(), key=lambda c: dict(values)[c].sort_key * 100 + c
        )
        if not values:
            assert best == 0
            continue
        top = values[0][1]
        assert top.score == score, str(position)
        assert sum(1 << cell for cell, value in values if value == top) == best, str(position)
        for cell, value in values:
            child = position.play(cell)
            assert value.score == move_score(Prover(rules, engine=engine).solve(child).score)


def test_published_3x3_first_moves_all_draw():
    rules = Rules(3, 3, 3)
    values = Prover(rules).move_values(Position.start(rules))
    assert [cell for cell, _ in values] == list(range(9))
    assert {value for _, value in values} == {Value(Outcome.DRAW, 9)}


def test_a_drawn_position_with_best_moves():
    rules = Rules(3, 3, 3)
    # X threatens c1 (cell 2); O must block there, every other move loses at once
    position = Position.parse("xx./.o./...", rules)
    values = Prover(rules).move_values(position)
    assert values[0] == (2, Value(Outcome.DRAW, 6))
    assert all(value == Value(Outcome.LOSS, 2) for _, value in values[1:])


def test_win_in_one_and_double_threat(engine):
    rules = Rules(3, 3, 3)
    prover = Prover(rules, engine=engine)
    assert prover.solve(Position.parse("xx./oo./...", rules)).value == Value(Outcome.WIN, 1)
    # X to move, no threat on the board; only c3 forks (threats at b2 and c1): win in 3
    fork = Position.parse("xo./o.x/...", rules)
    assert prover.solve(fork).value == Value(Outcome.WIN, 3)
    values = prover.move_values(fork)
    assert [cell for cell, value in values if value == Value(Outcome.WIN, 3)] == [8]


def test_terminal_positions():
    rules = Rules(3, 3, 3)
    prover = Prover(rules)
    won = Position.parse("xxx/oo./...", rules)
    assert prover.solve(won).value == Value(Outcome.LOSS, 0)
    assert prover.solve(won).score == -WIN_SCORE
    full = Position.parse("xox/xox/oxo", rules)
    assert prover.solve(full).value == Value(Outcome.DRAW, 0)
    assert prover.move_values(won) == []


@pytest.mark.parametrize(
    "shape,outcome",
    [
        ((3, 3, 3), "draw"),
        ((4, 4, 3), "win"),
        ((3, 4, 3), "win"),
        ((4, 4, 4), "draw"),
        ((4, 5, 4), "draw"),  # (5,4,4) in columns x rows
    ],
)
def test_published_values_fast(shape, outcome, engine):
    rules = Rules(*shape)
    for weak in (True, False):
        result = Prover(rules, weak=weak, engine=engine).solve(Position.start(rules))
        assert result.value.outcome.value == outcome


@pytest.mark.slow
@pytest.mark.parametrize(
    "row",
    [
        r
        for r in rows("published_values.csv")
        if (int(r["columns"]), int(r["rows"]), int(r["k"])) in {(6, 4, 4), (5, 5, 4), (6, 5, 4)}
    ],
    ids=lambda r: f"({r['columns']},{r['rows']},{r['k']})",
)
def test_published_values_slow(row, engine):
    rules = Rules(int(row["rows"]), int(row["columns"]), int(row["k"]))
    result = Prover(rules, weak=True, engine=engine).solve(Position.start(rules))
    assert result.value.outcome.value == row["value_for_x"]


@pytest.mark.slow
def test_6x5k4_exact_win_agrees_with_two_probes():
    """(6,5,4): X wins; a fresh prover's null-window probes confirm the exact remoteness."""
    rules = Rules(5, 6, 4)
    start = Position.start(rules)
    score = Prover(rules).solve(start).score
    assert score > 0
    probe = Prover(rules)
    assert probe.bound(start, score - 1, score) >= score  # a win at least this fast
    assert probe.bound(start, score, score + 1) <= score  # and none faster


def test_search_result_fields_and_node_counts():
    rules = Rules(4, 4, 3)
    prover = Prover(rules)
    assert prover.nodes == 0
    first = prover.solve(Position.start(rules))
    assert isinstance(first, SearchResult)
    assert first.value == Value.from_score(first.score, 16)
    assert first.nodes > 0 and first.seconds >= 0
    second = prover.solve(Position.from_moves(rules, ["b2"]))
    assert prover.nodes == first.nodes + second.nodes
    again = prover.solve(Position.start(rules))  # the table persists: far fewer nodes
    assert again.score == first.score and again.nodes < first.nodes


def test_search_timeout_past_the_deadline(engine):
    rules = Rules(4, 9, 4)  # (9,4,4): far more than 0.05 s of search
    prover = Prover(rules, engine=engine)
    with pytest.raises(SearchTimeout):
        prover.solve(Position.start(rules), deadline=time.perf_counter() + 0.05)
    with pytest.raises(SearchTimeout):
        prover.move_values(Position.start(rules), deadline=time.perf_counter() - 1)


def test_bound_keeps_the_fail_soft_contract(sample_4x4k4, engine):
    rules = Rules(4, 4, 4)
    prover = Prover(rules, engine=engine)
    rng = random.Random(7)
    for _, key, score, _ in sample_4x4k4[:500]:
        position = Position.from_key(rules, key)
        alpha, beta = rng.choice(WINDOWS)
        value = prover.bound(position, alpha, beta)
        if value <= alpha:
            assert score <= value, str(position)
        elif value >= beta:
            assert score >= value, str(position)
        else:
            assert score == value, str(position)


def test_child_window_decides_the_parent_window():
    # every real child score on the right side of the child window is on the right side
    # of the parent window after move_score
    scores = [0] + [WIN_SCORE - r for r in range(12)] + [-(WIN_SCORE - r) for r in range(12)]
    for alpha, beta in WINDOWS:
        low, high = child_window(alpha, beta)
        for s in scores:
            if s <= low:
                assert move_score(s) >= beta
            if s >= high:
                assert move_score(s) <= alpha


def test_dead_draw_is_seen_without_search(engine):
    # 4x4 k=4, every line holds both an x and an o: a draw whose remoteness is the empty cells
    rules = Rules(4, 4, 4)
    position = Position.parse("x..o/.o.x/.xo./o.x.", rules)
    assert all(line & position.x and line & position.o for line in rules.lines)
    result = Prover(rules, engine=engine).solve(position)
    assert result.value == Value(Outcome.DRAW, 8)
    assert result.nodes == 0  # no line left to block: the empty pairing, for each side
    assert result.technique == "pairing"
    values = Prover(rules, engine=engine).move_values(position)
    assert {value for _, value in values} == {Value(Outcome.DRAW, 8)}
    assert len(list(iter_cells(position.empty))) == len(values) == 8


def test_the_engine_is_compiled_where_the_board_fits():
    assert Prover(Rules(5, 5, 4)).engine == "compiled"
    assert Prover(Rules(4, 8, 4)).engine == "compiled"
    assert Prover(Rules(6, 6, 5)).engine == "compiled"  # 36 cells: keys of 72 bits
    assert Prover(Rules(8, 8, 5)).engine == "compiled"  # 64 cells, the most it holds; 96 lines
    assert len(Rules(8, 8, 5).lines) == 96
    big = Rules(5, 13, 5)  # 65 cells: a cell set no longer fits a 64-bit integer
    assert not fits_compiled(big)
    assert Prover(big).engine == "python"
    with pytest.raises(ValueError, match="too large"):
        SearchEngine(big, 10, compiled=True)
    with pytest.raises(ValueError, match="unknown prover engine"):
        Prover(Rules(3, 3, 3), engine="fortran")


def test_compiled_engine_with_more_lines_than_cells():
    # k=2 on 3x4: 29 lines through 12 cells, many lines per cell; against the exhaustive table
    rules = Rules(3, 4, 2)
    prover = Prover(rules, engine="compiled")
    for _, key, score, _ in exhaustive_rows(rules):
        position = Position.from_key(rules, key)
        assert prover.solve(position).score == score, str(position)


def test_engines_agree_on_5x5k4_positions():
    """Beyond the exhaustive tables: the two engines (the one search compiled, and run as plain
    Python) give the same exact scores on random (5,5,4) positions (plies 4 to 10)."""
    rules = Rules(5, 5, 4)
    rng = random.Random(11)
    compiled_prover = Prover(rules, engine="compiled")
    python_prover = Prover(rules, engine="python")
    for _ in range(12):
        position = random_walk(rules, rng, rng.randint(6, 10))
        assert compiled_prover.solve(position).score == python_prover.solve(position).score, str(
            position
        )


@pytest.mark.parametrize(
    "shape, moves", [((4, 6, 4), []), ((5, 5, 4), []), ((4, 8, 4), ["b2", "e3", "c3", "d2", "f3"])]
)
def test_engines_walk_the_same_tree(shape, moves):
    """The same search run two ways: with tables too big to lose an entry, both engines search
    exactly the same nodes (a stricter check than equal scores). Without the threat search,
    whose closed nodes would leave too small a tree on (4,8,4) (tests/test_threats.py checks
    the engines' trees with it)."""
    rules = Rules(*shape)
    position = Position.from_moves(rules, moves)
    counts = {
        engine: Prover(rules, engine=engine, prunings=Prunings(threats=False)).solve(position).nodes
        for engine in ENGINES
    }
    assert counts["compiled"] == counts["python"] > 1000, counts


@pytest.mark.parametrize("table_bits", [5, 8])
def test_engines_walk_the_same_tree_with_a_small_table(table_bits):
    """Both engines share the table scheme (hash, buckets, replacement), so even a table that
    loses entries all the time loses the same ones: equal node counts, exact and weak."""
    rules = Rules(5, 5, 4)
    position = Position.start(rules)
    lossless = Prover(rules, engine="compiled").solve(position).nodes
    for weak in (True, False):
        results = {
            engine: Prover(rules, weak=weak, table_bits=table_bits, engine=engine).solve(position)
            for engine in ENGINES
        }
        assert results["compiled"].score == results["python"].score == 0
        # more nodes than with a large table: entries were lost
        assert results["compiled"].nodes == results["python"].nodes > lossless, results


def test_the_plain_engine_plays_boards_past_the_compiled_limit():
    """(5,13,4), 65 cells: only the plain-Python engine holds it; after a few moves, the
    values of the moves agree with a search of each child."""
    rules = Rules(5, 13, 4)
    assert not fits_compiled(rules)
    position = Position.from_moves(rules, ["b2", "e5", "c3", "d4", "a1", "m5", "b3"])
    prover = Prover(rules)
    assert prover.engine == "python"
    values = prover.move_values(position)
    for cell, value in values[:3]:
        child = position.play(cell)
        assert value.score == move_score(Prover(rules, table_bits=12).solve(child).score)


@pytest.mark.parametrize(
    "shape, moves",
    [
        ((6, 6, 4), ["e3", "f4", "f6", "b1", "c6", "d5", "c2", "a5"]),  # 36 cells: 72-bit keys
        ((4, 9, 4), ["h3", "c1", "h2", "g3", "a3", "g2", "i3", "f2", "f1", "b1"]),  # 45 lines
        (
            (7, 7, 5),
            "d7 a5 c2 f2 a7 g2 c5 e2 e1 g7 e3 c1 e7 b2 g5 g1 f4 f1 d5 e5 a2 f6".split(),
        ),
        (  # h8 is cell 63: the sign bit of a 64-bit word
            (8, 8, 5),
            "b3 h1 g3 e2 c5 g2 b6 c1 a5 f5 e4 h4 g7 d7 f1 c7 d3 h3 h8 e5 a1 g5 d6 d4 g6 d2".split(),
        ),
    ],
)
def test_engines_agree_past_32_cells(shape, moves):
    """Boards of 33 to 64 cells: the compiled search (keys of two 64-bit words, cell 63 in the
    sign bit on 8x8) and the plain one give the same exact scores and search the same nodes,
    and the moves' values agree with a search of each child."""
    rules = Rules(*shape)
    assert 32 < rules.cells <= 64 and fits_compiled(rules)
    position = Position.from_moves(rules, moves)
    results = {engine: Prover(rules, engine=engine).solve(position) for engine in ENGINES}
    assert results["compiled"].score == results["python"].score
    assert results["compiled"].nodes == results["python"].nodes > 100, results
    values = Prover(rules, engine="compiled").move_values(position)
    assert values[0][1].score == results["compiled"].score
    for cell, value in values[:2]:
        child = position.play(cell)
        assert value.score == move_score(Prover(rules, engine="python").solve(child).score)
