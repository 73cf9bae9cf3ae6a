"""Positions: the validating parser, moves, winners and canonical keys."""

import random

import pytest

from tests.support import over_boards, random_walk
from ttt_solve.solver.errors import IllegalMoveError, InvalidPositionError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

T3 = Rules(3, 3, 3)


def test_parse_and_print_round_trip():
    position = Position.parse("x.o/.x./..o", T3)
    assert str(position) == "x.o/.x./..o"
    assert position.to_move == "x" and position.ply == 4
    assert Position.parse("X.O.X...O", T3) == position
    assert Position.parse("x-o/_x_/--o", T3) == position


@pytest.mark.parametrize(
    "text, message",
    [
        ("x.o/.x.", "rows"),
        ("x.o.x", "has 5 cells"),
        ("x.o/.z./...", "'z'"),
        ("oo./.../...", "O is ahead"),
        ("xxx/o../...", "more than one move ahead"),
        ("xxx/ooo/...", "both players"),
        ("xxx/oo./o..", "O moved after X had already won"),
        ("ooo/xx./x.x", "X moved after O had already won"),
    ],
)
def test_parse_rejects(text, message):
    with pytest.raises(InvalidPositionError, match=message):
        Position.parse(text, T3)


def test_play_continued_after_a_win_is_caught_on_a_larger_board():
    # X completed a row, then O and X both moved on: every X stone removed still leaves a line.
    rules = Rules(4, 4, 3)
    with pytest.raises(InvalidPositionError, match="before its last move"):
        Position.parse("xxx./xxx./oo.o/o..o", rules)


def test_a_legal_win_parses():
    position = Position.parse("xxx/oo./...", T3)
    assert position.winner == "x" and position.is_terminal and position.legal_moves() == []


def test_play_and_illegal_moves():
    position = Position.from_moves(T3, ["b2", "a1", 8])
    assert str(position) == "o../.x./..x"
    with pytest.raises(IllegalMoveError, match="already taken"):
        position.play(4)
    with pytest.raises(IllegalMoveError, match="off the"):
        position.play(9)
    won = Position.parse("xxx/oo./...", T3)
    with pytest.raises(IllegalMoveError, match="over"):
        won.play(8)


def test_positions_are_immutable_values():
    position = Position.start(T3)
    with pytest.raises(AttributeError):
        position.x = 1
    assert position.play(4) == Position.parse(".../.x./...", T3)
    assert len({position.play(4), position.play(4)}) == 1


@over_boards("3x3 k=3", "4x4 k=4", "3x4 k=3", "4x5 k=4", "5x5 k=4")
def test_canonical_key_is_the_same_for_every_image(rules):
    rng = random.Random(20261121)
    for _ in range(200):
        position = random_walk(rules, rng, rng.randrange(rules.cells + 1))
        key, symmetry = position.canonical()
        assert position.transform(symmetry).key == key
        images = [position.transform(s) for s in range(len(rules.symmetries))]
        assert key == min(image.key for image in images)
        for image in images:
            assert image.canonical_key == key
            assert image.ply == position.ply and image.winner == position.winner


def test_key_round_trip():
    position = Position.parse("x.o/.x./..o", T3)
    assert Position.from_key(T3, position.key) == position


def test_positions_and_rules_pickle():
    import pickle

    position = Position.parse("x.o/.x./..o", T3)
    copy = pickle.loads(pickle.dumps(position))
    assert copy == position and copy.rules == T3 and copy.canonical() == position.canonical()
