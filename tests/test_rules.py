"""Rules: winning lines, symmetries, sizes and cell names."""

import itertools

import pytest

from tests.support import over_boards
from ttt_solve.solver.errors import IllegalMoveError, InvalidRulesError
from ttt_solve.solver.rules import Rules, parse_size


@pytest.mark.parametrize(
    "rows, cols, k, lines",
    [
        (3, 3, 3, 8),  # 3 rows, 3 columns, 2 diagonals
        (4, 4, 4, 10),
        (4, 4, 3, 24),  # 8 + 8 + 4 + 4
        (3, 4, 3, 3 * 2 + 4 + 2 * 2),
        (4, 5, 4, 4 * 2 + 5 + 2 * 2),
        (1, 5, 5, 1),
        (3, 3, 1, 9),  # every cell is a line of one
    ],
)
def test_line_counts(rows, cols, k, lines):
    assert len(Rules(rows, cols, k).lines) == lines


def test_every_line_has_k_cells_and_lines_through_are_consistent():
    rules = Rules(4, 5, 4)
    for mask in rules.lines:
        assert mask.bit_count() == 4
    for cell in range(rules.cells):
        assert set(rules.lines_through[cell]) == {m for m in rules.lines if m >> cell & 1}


@pytest.mark.parametrize(
    "rows, cols, order", [(3, 3, 8), (4, 4, 8), (3, 4, 4), (4, 5, 4), (1, 3, 4)]
)
def test_symmetries_form_a_group_of_distinct_permutations(rows, cols, order):
    rules = Rules(rows, cols, 2 if max(rows, cols) > 1 else 1)
    perms = rules.symmetries
    assert len(perms) == order
    assert perms[0] == tuple(range(rules.cells))
    for perm in perms:
        assert sorted(perm) == list(range(rules.cells))
    group = set(perms)
    for a, b in itertools.product(perms, repeat=2):
        assert tuple(a[b[c]] for c in range(rules.cells)) in group
    for s in range(order):
        inv = rules.inverse(s)
        assert all(perms[inv][perms[s][c]] == c for c in range(rules.cells))


def test_symmetries_map_lines_to_lines():
    for rules in (Rules(3, 3, 3), Rules(4, 5, 4), Rules(4, 4, 3)):
        lines = set(rules.lines)
        for s in range(len(rules.symmetries)):
            assert {rules.permute(m, s) for m in lines} == lines


@pytest.mark.parametrize("text, expected", [("3", (3, 3)), ("4x5", (4, 5)), (" 4 X 5 ", (4, 5))])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "x", "4x", "3x3x3", "-3", "three"])
def test_parse_size_rejects(text):
    with pytest.raises(InvalidRulesError, match="board size"):
        parse_size(text)


@pytest.mark.parametrize("rows, cols, k", [(3, 3, 0), (3, 3, 4), (4, 5, 6), (0, 3, 1), (27, 1, 1)])
def test_impossible_rules(rows, cols, k):
    with pytest.raises(InvalidRulesError):
        Rules(rows, cols, k)


def test_cell_names_round_trip():
    rules = Rules(3, 4, 3)
    assert rules.cell_name(0) == "a1"
    assert rules.cell_name(11) == "d3"
    assert rules.cell_name(5) == "b2"
    for cell in range(rules.cells):
        assert rules.parse_cell(rules.cell_name(cell)) == cell
        assert rules.parse_cell(str(cell)) == cell
    assert rules.parse_cell("B2") == 5


@pytest.mark.parametrize("text", ["e1", "a4", "12", "zz", "", "b"])
def test_bad_cells(text):
    with pytest.raises(IllegalMoveError):
        Rules(3, 4, 3).parse_cell(text)


def test_key_width():
    assert Rules(4, 5, 4).fits_key and Rules(5, 6, 4).fits_key
    assert not Rules(6, 6, 5).fits_key


def naive_permute(rules: Rules, cells: int, symmetry: int) -> int:
    """The oracle: move each cell by the permutation, one at a time."""
    perm = rules.symmetries[symmetry]
    return sum(1 << perm[c] for c in range(rules.cells) if cells >> c & 1)


@over_boards("3x3 k=3", "3x4 k=3", "4x4 k=4", "5x6 k=4", "2x2 k=2", "6x6 k=5", "1x9 k=3")
def test_table_permutations_and_canonical_keys_agree_with_a_naive_oracle(rules):
    import random

    rng = random.Random(rules.cells)
    order = len(rules.symmetries)
    for _ in range(300):
        cells = rng.getrandbits(rules.cells)
        other = rng.getrandbits(rules.cells) & ~cells
        for symmetry in range(order):
            assert rules.permute(cells, symmetry) == naive_permute(rules, cells, symmetry)
            assert rules.permute(rules.permute(cells, symmetry), rules.inverse(symmetry)) == cells
        images = [
            naive_permute(rules, cells, s) | naive_permute(rules, other, s) << rules.cells
            for s in range(order)
        ]
        key, symmetry = rules.canonical(cells, other)
        assert key == min(images) and images.index(key) == symmetry
        for s in range(order):  # a packed key permutes its X and O bits together
            assert rules.permute(cells | other << rules.cells, s) == images[s]


@pytest.mark.parametrize("rules", [Rules(3, 3, 3), Rules(4, 5, 4), Rules(3, 11, 3), Rules(8, 8, 5)])
def test_bit_images_are_the_images_of_one_stone(rules):
    symmetries = range(len(rules.symmetries))
    expected = [[rules.permute(1 << bit, s) for s in symmetries] for bit in range(2 * rules.cells)]
    assert [list(images) for images in rules.bit_images] == expected
