"""Draw proofs by pairing (ttt_solve.solver.pairing)."""

from __future__ import annotations

import random

import pytest

from ttt_solve.solver.pairing import find_pairing, pairing_for
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.search import Prover


def blocks_every_open_line(
    rules: Rules, position: Position, defender_is_x: bool, pairs: list[tuple[int, int]]
) -> bool:
    """Checked apart from the code under test: the pairs are disjoint pairs of empty cells,
    and every line with no defender stone holds both cells of one pair."""
    defender = position.x if defender_is_x else position.o
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
            for defender_is_x in (True, False):
                pairing = pairing_for(position, defender_is_x)
                if pairing is None:
                    continue
                found += 1
                assert blocks_every_open_line(
                    rules, position, defender_is_x, list(pairing.values())
                )
                score = prover.solve(position).score  # for the side to move
                defender_to_move = position.x_to_move == defender_is_x
                assert (score if defender_to_move else -score) >= 0
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
    rules = Rules(4, 4, 4)
    result = Prover(rules).solve(Position.start(rules))
    assert result.technique == "search"
    assert result.nodes > 0
