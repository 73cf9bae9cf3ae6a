"""Draw proofs by pairing (ttt_solve.solver.prover.pairing)."""

from __future__ import annotations

import random

import pytest

from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.position import Position
from ttt_solve.solver.prover.pairing import find_pairing, pairing_for
from ttt_solve.solver.prover.search import Prover, Prunings
from ttt_solve.solver.rules import Rules


def blocks_every_open_line(
    rules: Rules, position: Position, defender_is_x: bool, pairs: list[tuple[int, int]]
) -> bool:
    """Checked apart from the code under test: the pairs (lines may share one) are disjoint
    pairs of empty cells, and every line with no defender stone holds both cells of one pair."""
    defender = position.x if defender_is_x else position.o
    pairs = sorted(set(pairs))
    cells = [cell for pair in pairs for cell in pair]
    if len(set(cells)) != len(cells):
        return False
    if any(not position.empty >> cell & 1 for cell in cells):
        return False
    for line in rules.lines:
        if line & defender:
            continue
        if not any(line >> a & 1 and line >> b & 1 for a, b in pairs):
            return False
    return True


def checked_pairings(rules: Rules, position: Position, exact: Prover | int) -> int:
    """How many sides have a pairing in ``position``, each checked: it blocks every open line
    (:func:`blocks_every_open_line`), and the defender does not lose by the exact score for the
    side to move: ``exact`` itself, or a prover's (asked only when a pairing is found)."""
    found = 0
    for defender_is_x in (True, False):
        pairing = pairing_for(position, defender_is_x)
        if pairing is None:
            continue
        found += 1
        assert blocks_every_open_line(rules, position, defender_is_x, list(pairing.values()))
        value = exact if isinstance(exact, int) else exact.solve(position).score
        defender_to_move = position.x_to_move == defender_is_x
        assert (value if defender_to_move else -value) >= 0, str(position)
    return found


@pytest.mark.parametrize("shape", [(5, 5, 5), (6, 6, 6), (8, 8, 8)])
def test_pairing_of_an_empty_board_blocks_every_line(shape: tuple[int, int, int]) -> None:
    rules = Rules(*shape)
    position = Position.start(rules)
    pairing = pairing_for(position, defender_is_x=False)
    assert pairing is not None
    assert blocks_every_open_line(rules, position, False, list(pairing.values()))


@pytest.mark.parametrize("shape", [(3, 3, 3), (4, 4, 4), (7, 7, 5)])
def test_no_pairing_where_the_lines_need_more_cells_than_the_board_has(
    shape: tuple[int, int, int],
) -> None:
    rules = Rules(*shape)
    assert 2 * len(rules.lines) > rules.cells
    assert pairing_for(Position.start(rules), defender_is_x=False) is None


def test_a_completed_or_nearly_completed_open_line_has_no_pair() -> None:
    rules = Rules(5, 5, 5)
    row = rules.lines[0]
    cells = [cell for cell in range(rules.cells) if row >> cell & 1]
    stones = sum(1 << cell for cell in cells[:4])
    assert find_pairing(rules.lines, stones, 0, rules.full & ~stones) is None


def test_every_pairing_found_is_sound_on_random_positions() -> None:
    """Wherever a pairing is found the defender does not lose (the prover's exact value),
    and the pairing blocks every open line."""
    rng = random.Random(7)
    found = 0
    for shape in [(4, 4, 4), (4, 5, 4), (5, 5, 5)]:
        rules = Rules(*shape)
        prover = Prover(rules, table_bits=16)
        for _ in range(60):
            position = Position.start(rules)
            for _ in range(rng.randrange(1, rules.cells // 2)):
                moves = position.legal_moves()
                if not moves or position.winner is not None:
                    break
                position = position.play(rng.choice(moves))
            if position.winner is not None or not position.empty:
                continue
            found += checked_pairings(rules, position, prover)
    assert found >= 20


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_a_pairing_draw_is_proved_without_search(engine: str) -> None:
    """(5,5,5): each side has a pairing from the empty board; the prover closes the proof by
    pairing with no node searched, and its value is the published draw."""
    rules = Rules(5, 5, 5)
    result = Prover(rules, engine=engine).solve(Position.start(rules))
    assert result.technique == "pairing"
    assert result.nodes == 0
    assert result.value.outcome.value == "draw"


def test_a_position_without_pairing_is_searched() -> None:
    rules = Rules(4, 4, 3)  # a win for X, found with no pairing
    # the threat search would close some of its nodes (technique "search+threats"): off
    result = Prover(rules, prunings=Prunings(threats=False)).solve(Position.start(rules))
    assert result.technique == "search"
    assert result.nodes > 0


def test_pairings_found_agree_with_the_exhaustive_solver() -> None:
    """Soundness apart from the prover (which uses pairings itself): on 20,000 canonical 4x4
    k=4 positions (a seeded sample), wherever a pairing is found, the exhaustive value says
    the defender does not lose."""
    rules = Rules(4, 4, 4)
    rows = [
        (key, score)
        for table in ExhaustiveSolver(rules).solve()
        for key, score in zip(table.keys.tolist(), table.scores.tolist())
    ]
    found = 0
    for key, score in random.Random(5).sample(rows, 20000):
        position = Position.from_key(rules, key)
        if position.winner is not None or not position.empty:
            continue
        found += checked_pairings(rules, position, score)
    assert found >= 1000


def test_a_shared_pair_blocks_two_overlapping_lines() -> None:
    """A row of six with k=5 holds two lines; one pair among their four common cells blocks
    both (the classic pattern), so (6,6,5)'s rows need six pairs, not twelve."""
    rules = Rules(6, 6, 5)
    rows = [line for line in rules.lines if line < 1 << 6]  # the two lines of the first row
    assert len(rows) == 2
    pairing = find_pairing(tuple(rows), 0, 0, rules.full)
    assert pairing is not None
    assert pairing[rows[0]] == pairing[rows[1]]
    assert set(pairing[rows[0]]) <= {1, 2, 3, 4}


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_a_pairing_closes_a_node_with_no_search_below_it(engine: str) -> None:
    """(6,6,5) after X c3, O d4: O holds a pairing against X. The probe "can X win?" is
    closed at its root by that pairing: one node, and no search below it."""
    rules = Rules(6, 6, 5)
    position = Position.from_moves(rules, ["c3", "d4"])
    assert pairing_for(position, defender_is_x=False) is not None
    prover = Prover(rules, engine=engine)
    assert prover.bound(position, 0, 1) <= 0  # X cannot win
    assert prover.nodes == 1
    assert prover.pairings == 1


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_6x6k5_is_a_draw_by_pairings_at_the_leaves(engine: str) -> None:
    """(6,6,5), a published draw: no pairing from the empty board, but a short search whose
    leaves are closed by pairings proves it."""
    rules = Rules(6, 6, 5)
    start = Position.start(rules)
    assert pairing_for(start, defender_is_x=False) is None
    result = Prover(rules, weak=True, engine=engine).solve(start)
    assert result.value.outcome.value == "draw"
    assert result.technique == "search+pairing"
    assert 0 < result.pairings < result.nodes < 1000
