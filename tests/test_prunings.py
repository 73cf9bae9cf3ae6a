"""The prover's prunings (potential, partial pairings, vertex domination, relevance zones):
each is sound alone and with the others, and each part of its argument is checked apart from
the search where it can be (docs/prover.md gives the arguments)."""

from __future__ import annotations

import hashlib
import inspect
import pickle
import random

import pytest

from tests.support import random_walk
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.position import Position, iter_cells
from ttt_solve.solver.prover import negamax
from ttt_solve.solver.prover.search import (
    Prover,
    Prunings,
    SearchCounters,
    _tables,
    root_of,
)
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import WIN_SCORE, move_score

NEW = ("potential", "partial_pairings", "domination", "zones")
"""The prunings this module is about (threats and pairings have their own test modules)."""

EVERY = Prunings.every()
"""Every pruning on."""

CONFIGURATIONS = {name: Prunings(**{name: True}) for name in NEW} | {
    "every": EVERY,
    "strongest": Prunings.strongest(),
}
"""Each new pruning alone (with the classic ones), and all of them."""

BARE_ZONES = {
    "bare+zones": Prunings(threats=False, pairings=False, zones=True),
    "bare+domination": Prunings(threats=False, pairings=False, domination=True),
}
"""Zones and domination without the classic prunings: zones then come from the search's own
leaves (small boards only: without pairings the search is far bigger)."""


def small_games() -> list[Rules]:
    """Every game of at most 20 cells: R <= C (the other way round is the same game turned),
    R * C <= 20, 1 <= k <= C."""
    return [
        Rules(rows, cols, k)
        for rows in range(1, 5)
        for cols in range(rows, 21)
        if rows * cols <= 20
        for k in range(1, cols + 1)
    ]


def same_values(
    rules: Rules,
    positions: list[Position],
    weak: bool = False,
    table_bits: int = 12,
    configurations: dict[str, Prunings] = CONFIGURATIONS,
) -> dict[str, int]:
    """Solve ``positions`` with the classic prover and with each configuration (one prover
    each, its table shared by all the positions, so that a bound stored under one window
    meets the others), check that the values are equal (the outcome and, exact, the
    remoteness); the moves or nodes each configuration's pruning skipped or closed."""
    provers = {
        name: Prover(rules, weak=weak, table_bits=table_bits, prunings=prunings)
        for name, prunings in configurations.items()
    }
    reference = Prover(rules, weak=weak, table_bits=table_bits)
    for position in positions:
        if position.is_terminal:
            continue
        expected = reference.solve(position).value
        for name, prover in provers.items():
            found = prover.solve(position).value
            if weak:
                assert found.outcome == expected.outcome, (name, str(position))
            else:
                assert found == expected, (name, str(position))
    used = {}
    for name, prover in provers.items():
        counts = prover.counters
        used[name] = (
            counts.potential + counts.partial_pairings + counts.dominated + counts.zone_skipped
        )
    return used


@pytest.mark.slow
def test_every_small_game_has_the_same_exact_values_with_each_pruning() -> None:
    """Every (R, C, k) of at most 20 cells: the empty board and 6 seeded random positions,
    exact values and remoteness, each pruning on against the classic search."""
    rng = random.Random(20)
    configurations = CONFIGURATIONS | BARE_ZONES
    totals = dict.fromkeys(configurations, 0)
    for rules in small_games():
        positions = [Position.start(rules)] + [
            random_walk(rules, rng, rng.randrange(rules.cells)) for _ in range(6)
        ]
        for name, used in same_values(rules, positions, configurations=configurations).items():
            totals[name] += used
    assert all(totals.values()), totals  # every pruning did something


def test_small_games_values_agree_with_the_exhaustive_solver() -> None:
    """Apart from the classic prover: every canonical position of 3x4 k=3 and a sample of
    4x4 k=4, exact scores with every pruning on, against the exhaustive solver."""
    for rules, sample in ((Rules(3, 4, 3), None), (Rules(4, 4, 4), 3000)):
        rows = [
            (key, score)
            for table in ExhaustiveSolver(rules).solve()
            for key, score in zip(table.keys.tolist(), table.scores.tolist())
        ]
        if sample:
            rows = random.Random(4).sample(rows, sample)
        prover = Prover(rules, table_bits=14, prunings=EVERY)
        for key, score in rows:
            position = Position.from_key(rules, key)
            assert prover.solve(position).score == score, str(position)
        assert prover.counters.zone_skipped and prover.counters.dominated


@pytest.mark.parametrize(
    "shape, walks, fewest, most",
    [((5, 5, 4), 30, 2, 14), ((6, 6, 5), 20, 4, 16), ((7, 7, 5), 5, 10, 20)],
)
def test_random_positions_have_the_same_exact_values_with_each_pruning(
    shape: tuple[int, int, int], walks: int, fewest: int, most: int
) -> None:
    rules = Rules(*shape)
    rng = random.Random(sum(shape))
    positions = [random_walk(rules, rng, rng.randrange(fewest, most)) for _ in range(walks)]
    used = same_values(rules, positions, table_bits=18)
    assert used["zones"] and used["domination"] and used["every"], used


def test_random_positions_have_the_same_outcomes_in_weak_mode() -> None:
    rules = Rules(4, 9, 4)
    rng = random.Random(49)
    positions = [random_walk(rules, rng, rng.randrange(6, 14)) for _ in range(12)]
    assert same_values(rules, positions, weak=True, table_bits=18)["every"]


@pytest.mark.parametrize(
    "shape, moves",
    [((5, 5, 4), []), ((4, 8, 4), ["b2", "e3", "c3", "d2", "f3"]), ((7, 7, 5), ["d4"])],
)
def test_the_engines_walk_the_same_tree_with_every_pruning(
    shape: tuple[int, int, int], moves: list[str]
) -> None:
    """The compiled and the plain engine share every pruning's code: the same nodes and the
    same counters, move for move."""
    rules = Rules(*shape)
    position = Position.from_moves(rules, moves)
    results = {
        engine: Prover(rules, engine=engine, prunings=EVERY).solve(position)
        for engine in ("compiled", "python")
    }
    assert results["compiled"].score == results["python"].score
    assert results["compiled"].counters == results["python"].counters
    assert results["compiled"].nodes > 100


# -- relevance zones, checked by brute force ---------------------------------------------------


class BruteForce:
    """Whether a side can force a line of its own before the other completes one or the
    board fills, by plain minimax over the cells (no symmetry, no table of lines through a
    cell, no bounds: an implementation apart from the prover's), its answers kept for the
    game's other questions. The stones need not be a reachable position."""

    def __init__(self, rules: Rules) -> None:
        self.lines = rules.lines
        self.full = rules.full
        self.known: dict[tuple[int, int, bool], bool] = {}

    def maker_can_win(self, maker: int, breaker: int, maker_to_move: bool) -> bool:
        """Whether the side holding ``maker`` can force a line (``breaker``: the other's)."""
        if any(line & maker == line for line in self.lines):
            return True
        if any(line & breaker == line for line in self.lines):
            return False
        return self._wins(maker, breaker, maker_to_move)

    def _completes(self, stones: int, cell: int) -> bool:
        return any(line & stones == line for line in self.lines if line >> cell & 1)

    def _wins(self, mine: int, theirs: int, my_turn: bool) -> bool:
        known = self.known.get((mine, theirs, my_turn))
        if known is None:
            known = self.known[mine, theirs, my_turn] = self._search(mine, theirs, my_turn)
        return known

    def _search(self, mine: int, theirs: int, my_turn: bool) -> bool:
        for cell in iter_cells(self.full & ~(mine | theirs)):
            if my_turn:
                stones = mine | 1 << cell
                if self._completes(stones, cell) or self._wins(stones, theirs, False):
                    return True
            else:
                stones = theirs | 1 << cell
                if self._completes(stones, cell) or not self._wins(mine, stones, True):
                    return False
        return not my_turn and bool(self.full & ~(mine | theirs))


ZONED = {
    "every": EVERY,
    "bare": Prunings(threats=False, pairings=False, domination=True, zones=True),
}
"""Zones built on every pruning's proofs, and on the search's own leaves (with domination,
whose left-out moves a zone must account for)."""


@pytest.mark.parametrize("zoned", ZONED)
@pytest.mark.parametrize(
    "shape, fewest, seed, engine",
    [
        ((4, 4, 4), 3, 1, "compiled"),
        ((3, 4, 3), 0, 2, "python"),
        ((4, 5, 4), 8, 3, "compiled"),
        ((4, 4, 3), 2, 5, "python"),
        pytest.param((5, 5, 4), 12, 4, "compiled", marks=pytest.mark.slow),
    ],
)
def test_no_move_outside_a_relevance_zone_changes_the_result(
    shape: tuple[int, int, int], fewest: int, seed: int, engine: str, zoned: str
) -> None:
    """For random positions, the zone of each bound of the probes "can the mover win?" and
    "can it lose?": with the stones of the side the bound is against (the mover's for an
    upper bound, the opponent's for a lower one) on every empty cell outside the zone at
    once, and then on each one alone, a brute force finds the statement still true: the
    mover cannot win, the opponent cannot win, the mover wins, the opponent wins. The zones
    must also leave cells out, or they would prove nothing."""
    rules = Rules(*shape)
    rng = random.Random(seed)
    prover = Prover(rules, engine=engine, table_bits=16, prunings=ZONED[zoned])
    brute = BruteForce(rules)
    checked = outside = 0
    for _ in range(60):
        position = random_walk(rules, rng, rng.randrange(fewest, rules.cells - 2))
        if position.is_terminal:
            continue
        me, opp = (position.x, position.o) if position.x_to_move else (position.o, position.x)
        for alpha, beta in ((0, 1), (-1, 0)):
            value, zone = prover.bound_zone(position, alpha, beta)
            left_out = position.empty & ~zone
            claim = (str(position), alpha, value)
            for filled in [left_out, *(1 << cell for cell in iter_cells(left_out))]:
                if value <= alpha:  # score <= value: the mover's stones fill the cells
                    mine, theirs = me | filled, opp
                    assert value > 0 or not brute.maker_can_win(mine, theirs, True), claim
                    assert value >= 0 or brute.maker_can_win(theirs, mine, False), claim
                else:  # score >= value: the opponent's stones fill them
                    mine, theirs = me, opp | filled
                    assert value < 0 or not brute.maker_can_win(theirs, mine, False), claim
                    assert value <= 0 or brute.maker_can_win(mine, theirs, True), claim
            checked += 1
            outside += left_out.bit_count()
    assert checked >= 60 and outside >= checked // 2


def test_a_zone_needs_relevance_zones_on() -> None:
    rules = Rules(3, 3, 3)
    with pytest.raises(ValueError, match="zones"):
        Prover(rules).cannot_win_zone(Position.start(rules))


# -- the breaker's proofs, checked against the exhaustive solver ---------------------------------


@pytest.mark.parametrize("flag", ["potential", "partial_pairings"])
def test_the_breakers_proofs_agree_with_the_exhaustive_solver(flag: str) -> None:
    """Wherever the potential (or a partial pairing with it) shows that a side cannot win,
    with either side to move, the exhaustive value of 4x4 k=4 and 3x5 k=3 positions agrees."""
    found = 0
    for rules in (Rules(4, 4, 4), Rules(3, 5, 3)):
        tables = _tables(rules, 4, False, Prunings(pairings=False, **{flag: True}))
        rows = [
            (key, score)
            for table in ExhaustiveSolver(rules).solve()
            for key, score in zip(table.keys.tolist(), table.scores.tolist())
        ]
        for key, score in random.Random(12).sample(rows, min(len(rows), 20000)):
            position = Position.from_key(rules, key)
            if position.is_terminal:
                continue
            root = root_of(position)
            if root.threats_me:  # the mover wins at once: the search never asks
                continue
            if negamax._breaker_holds(
                tables, root.me, root.opp, root.empty, root.empties, True
            ):  # the mover, the maker, cannot win
                found += 1
                assert score <= 0, str(position)
            if not root.threats_opp and negamax._breaker_holds(
                tables, root.opp, root.me, root.empty, root.empties, False
            ):  # the opponent, the maker, cannot win
                found += 1
                assert score >= 0, str(position)
    assert found >= 200


def test_a_partial_pairing_leaves_lines_to_the_potential() -> None:
    """(7,7,5) positions where the side to move has no whole pairing against it, nor a low
    enough potential, but a pairing of most of its lines leaves the rest with one: the
    partial pairing closes them alone (rare: 5 of 289 random positions)."""
    rules = Rules(7, 7, 5)
    found = 0
    rng = random.Random(75)
    for _ in range(400):
        position = random_walk(rules, rng, rng.randrange(8, 30))
        if position.is_terminal:
            continue
        root = root_of(position)
        if root.threats_me or root.threats_opp:
            continue
        partial = _tables(rules, 4, False, Prunings(pairings=False, partial_pairings=True))
        whole = _tables(rules, 4, False, Prunings())
        alone = _tables(rules, 4, False, Prunings(pairings=False, potential=True))
        arguments = (root.me, root.opp, root.empty, root.empties, True)
        if (
            negamax._breaker_holds(partial, *arguments)
            and not negamax._breaker_holds(whole, *arguments)
            and not negamax._breaker_holds(alone, *arguments)
        ):
            found += 1
    assert found >= 3


# -- vertex domination -------------------------------------------------------------------------


def dominated_pairs(position: Position) -> list[tuple[int, int]]:
    """``(a, b)``: empty cells such that every line through ``a`` that a side can still
    complete passes through ``b`` (read from the rules' lines, apart from the search)."""
    rules = position.rules
    pairs = []
    for a in iter_cells(position.empty):
        live = [
            line
            for line in rules.lines
            if line >> a & 1 and not (line & position.x and line & position.o)
        ]
        for b in iter_cells(position.empty):
            if b != a and all(line >> b & 1 for line in live):
                pairs.append((a, b))
    return pairs


def test_a_dominated_move_is_never_better_than_the_move_above_it() -> None:
    """The lemma behind vertex domination, on exhaustive 4x4 k=4 and 3x5 k=3 values: when
    every live line through ``a`` passes through ``b``, playing ``b`` is worth at least as
    much as ``a`` to the mover, remoteness included."""
    checked = 0
    for rules in (Rules(4, 4, 4), Rules(3, 5, 3)):
        scores = {
            key: score
            for table in ExhaustiveSolver(rules).solve()
            for key, score in zip(table.keys.tolist(), table.scores.tolist())
        }
        for key in random.Random(9).sample(sorted(scores), 3000):
            position = Position.from_key(rules, key)
            if position.is_terminal:
                continue
            for a, b in dominated_pairs(position):
                worth_a = move_score(scores[position.play(a).canonical_key])
                worth_b = move_score(scores[position.play(b).canonical_key])
                assert worth_a <= worth_b, (str(position), a, b)
                checked += 1
    assert checked >= 1000


def test_the_search_skips_only_dominated_moves() -> None:
    """The move order with domination on leaves out only moves that :func:`dominated_pairs`
    finds dominated (with a tie going to the lower cell), and keeps one of each tie."""
    rules = Rules(5, 5, 4)
    rng = random.Random(55)
    tables = _tables(rules, 4, False, Prunings(domination=True))
    skipped_any = 0
    for _ in range(200):
        position = random_walk(rules, rng, rng.randrange(4, 16))
        if position.is_terminal:
            continue
        root = root_of(position)
        if root.threats_me or root.threats_opp:
            continue
        tables.nodes[: negamax.NODE_FIELDS] = list(root[:8]) + [0]
        count = negamax._order_moves(tables, 0)
        if count < 0:
            continue
        kept = set(tables.orders[:count])
        left_out = set(iter_cells(tables.nodes[negamax.SKIPPED]))
        assert kept | left_out == set(iter_cells(position.empty))
        above = {}
        for a, b in dominated_pairs(position):
            above.setdefault(a, set()).add(b)
        for a in left_out:
            assert a in above, (str(position), a)
            assert tables.reps[a] in kept and tables.reps[a] in above[a]
        skipped_any += len(left_out)
    assert skipped_any >= 50


# -- the rest ----------------------------------------------------------------------------------


def test_the_compiled_kernels_dependencies_are_pinned() -> None:
    """The compiled search bakes in ``move_score`` and ``WIN_SCORE`` from solver.value, but
    Numba's cache only sees solver/prover/negamax.py change: a change there must come with a new
    ``KERNEL_DEPENDENCIES`` in negamax.py (which recompiles)."""
    source = inspect.getsource(move_score) + repr(WIN_SCORE)
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    assert negamax.KERNEL_DEPENDENCIES == digest


def test_technique_names_name_every_pruning() -> None:
    assert SearchCounters(nodes=5).technique == "search"
    assert SearchCounters(1, 1, 0, 2, 0, 0, 5).technique == "search+pairing+potential+zones"
    assert (
        SearchCounters(1, 0, 1, 0, 3, 4, 0).technique == "search+threats+partial-pairing+domination"
    )
    counts = SearchCounters(10, 1, 2, 3, 4, 5, 6) - SearchCounters(1, 1, 1, 1, 1, 1, 1)
    assert counts == SearchCounters(9, 0, 1, 2, 3, 4, 5)


def test_each_pruning_is_one_row() -> None:
    """Each row of the table has its own switch bit, its own counter, a field of
    ``Prunings`` and one of ``SearchCounters``, and the search's constants are those of the
    row they name."""
    names = [pruning.name for pruning in negamax.PRUNINGS]
    assert list(Prunings._fields) == names
    assert list(SearchCounters._fields) == ["nodes", *(p.counter for p in negamax.PRUNINGS)]
    flags = [negamax.flag(name) for name in names]
    assert sorted(flags) == [1 << row for row in range(len(names))]
    counters = [negamax.counter(name) for name in names]
    assert sorted(counters) == list(range(negamax.FIRST_PRUNING, negamax.COUNTERS))
    assert {negamax.NODES, negamax.TIMED_OUT}.isdisjoint(counters)
    assert Prunings.every().flags == sum(flags) and Prunings.none().flags == 0
    assert Prunings().names == [p.name for p in negamax.PRUNINGS if p.classic]
    assert (negamax.USE_ZONES, negamax.ZONE_SKIPPED_MOVES) == (
        negamax.flag("zones"),
        negamax.counter("zones"),
    )
    with pytest.raises(ValueError, match="no pruning named 'zone'"):
        negamax.flag("zone")
    with pytest.raises(TypeError, match="no field 'zone'"):
        Prunings(zone=True)


def test_prunings_and_counters_are_values() -> None:
    """They behave as the named tuples they replace: made by name, read by name, replaced,
    compared, hashed, printed and pickled (to a process pool's workers)."""
    every = Prunings.every()
    assert every._replace(zones=False) == Prunings.strongest() != every
    assert len({every, Prunings.every(), Prunings()}) == 2
    assert pickle.loads(pickle.dumps(every)) == every
    assert type(pickle.loads(pickle.dumps(every))) is Prunings
    counts = SearchCounters(nodes=3, zone_skipped=2)
    assert counts.zone_skipped == 2 and counts._asdict()["nodes"] == 3
    assert repr(counts) == (
        "SearchCounters(nodes=3, pairings=0, threats=0, potential=0, partial_pairings=0, "
        "dominated=0, zone_skipped=2)"
    )
    with pytest.raises(AttributeError):
        counts.zones  # noqa: B018 - the switch's name, not the counter's


def test_a_search_names_the_prunings_that_worked() -> None:
    rules = Rules(5, 5, 4)
    result = Prover(rules, weak=True, prunings=EVERY).solve(Position.start(rules))
    assert result.technique == "search+" + "+".join(
        name
        for name, count in zip(
            ("pairing", "threats", "potential", "partial-pairing", "domination", "zones"),
            result.counters[1:],
        )
        if count
    )
    assert result.counters.dominated and result.counters.zone_skipped
    assert Prunings.strongest().names == ["pairings", "threats"] + [
        name for name in NEW if getattr(Prunings.strongest(), name)
    ]
