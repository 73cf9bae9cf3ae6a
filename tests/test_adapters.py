"""Agents written against other boards, graded as written: every board shape and every way of
answering, both directions, checked by agents that read and answer in their own convention
(written here, independently of the adapters), and every way of failing counted, not raised."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ttt_solve as ttt
from tests.support import random_walk
from ttt_solve.agents.adapters import Adapter, AdapterError, CallableAgent
from ttt_solve.book.reader import open_book
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

T3 = Rules(3, 3, 3)
T34 = Rules(3, 4, 3)


# -- the boards as a lab would read them -------------------------------------------------------


def read_board(shape: str, rules: Rules, board: Any, symbols: tuple[Any, Any, Any]) -> Position:
    """The position an agent sees, read in the shape's own convention."""
    if shape == "position":
        return board
    if shape == "planes":
        observation = board["observation"]
        assert observation.shape == (rules.cols, rules.rows, 2)
        mover_stones = int(observation[:, :, 0].sum())
        other_stones = int(observation[:, :, 1].sum())
        mover_is_x = mover_stones == other_stones
        text = ""
        for row in range(rules.rows):
            for col in range(rules.cols):
                mine, theirs = observation[col, row, 0], observation[col, row, 1]
                x_here = mine if mover_is_x else theirs
                o_here = theirs if mover_is_x else mine
                text += "x" if x_here else "o" if o_here else "."
            text += "/"
        return Position.parse(text[:-1], rules)
    if shape == "flat":
        cells = list(board)
    elif shape == "grid":
        assert len(board) == rules.rows and all(len(row) == rules.cols for row in board)
        cells = [cell for row in board for cell in row]
    else:
        assert board.shape == (rules.rows, rules.cols)
        cells = [board[r, c].item() for r in range(rules.rows) for c in range(rules.cols)]
    x, o, _empty = symbols
    chars = ["x" if c == x else "o" if c == o else "." for c in cells]
    rows = ["".join(chars[r * rules.cols : (r + 1) * rules.cols]) for r in range(rules.rows)]
    return Position.parse("/".join(rows), rules)


def answer(shape: str, rules: Rules, board: Any, cell: int, form: str, mover: Any) -> Any:
    """A cell answered in one of the forms, as the shape numbers cells."""
    row, col = divmod(cell, rules.cols)
    if form == "index":
        return col * rules.rows + row if shape == "planes" else cell
    if form == "pair":
        return (row, col)
    if form == "name":
        return f"{chr(ord('a') + col)}{row + 1}"
    # form "write": the stone into the board handed
    if shape == "flat":
        board[cell] = mover
    elif shape == "grid":
        board[row][col] = mover
    else:
        board[row, col] = mover
    return None


def best_agent(
    db: str, rules: Rules, shape: str, form: str, symbols: Any, twist: Callable[[int], int] | None
) -> Callable[..., Any]:
    """A perfect agent in a lab's convention (or a wrong one: ``twist`` moves its cell)."""
    book_cm = open_book(db)
    book = book_cm.__enter__()

    def move(board: Any, *side: Any) -> Any:
        position = read_board(shape, rules, board, symbols)
        cell = min(book.find(position).best_moves)
        if twist is not None:
            cell = twist(cell)
        mover = symbols[0] if position.x_to_move else symbols[1]
        return answer(shape, rules, board, cell, form, mover)

    move.close = lambda: book_cm.__exit__(None, None, None)  # type: ignore[attr-defined]
    return move


FORMS = {
    "position": ["index", "pair", "name"],
    "flat": ["index", "pair", "name", "write"],
    "grid": ["index", "pair", "name", "write"],
    "numpy": ["index", "pair", "name", "write"],
    "planes": ["index", "pair", "name"],
}
CASES = [(shape, form) for shape, forms in FORMS.items() for form in forms]
SYMBOLS = {
    "position": (None, None, None),
    "planes": (None, None, None),
    "flat": ("X", "O", " "),
    "grid": ("X", "O", " "),
    "numpy": (1, -1, 0),
}


@pytest.mark.parametrize(("shape", "form"), CASES)
def test_a_perfect_agent_of_every_shape_and_answer_is_perfect(book_small, shape, form):
    """On 3 rows x 4 columns, where a row and a column differ in length: a row/column mix-up
    anywhere would show as wrong moves or failures."""
    move = best_agent(book_small, T34, shape, form, SYMBOLS[shape], None)
    try:
        report = ttt.audit(move, T34, db=book_small, board=shape, positions=300, seed=1)
    finally:
        move.close()
    assert not report.failures, report.failures[:3]
    assert report.summary.graded == 300
    assert report.accuracy == 1.0 and report.perfection == 1.0


@pytest.mark.parametrize("shape", ["flat", "grid", "numpy", "planes"])
@pytest.mark.parametrize("twist", ["mirror", "transpose"])
def test_a_mirrored_or_transposed_answer_is_caught(book_3x3, shape, twist):
    """An agent that answers the mirror image (or the transpose) of the best cell is graded
    on that cell, as played: never silently the right one."""

    def moved(cell: int) -> int:
        row, col = divmod(cell, 3)
        return row * 3 + (2 - col) if twist == "mirror" else col * 3 + row

    move = best_agent(book_3x3, T3, shape, "pair", SYMBOLS[shape], moved)
    try:
        report = ttt.audit(move, T3, db=book_3x3, board=shape)
    finally:
        move.close()
    # some twisted cells are taken (failures), others free but wrong (graded, not best)
    assert report.failures and all(f.kind == "illegal" for f in report.failures)
    assert report.perfection < 0.9 and report.blunders > 0


def test_custom_symbols_and_the_side_to_move(book_3x3):
    """A list of rows of 0/1/2 integers, where the player writes its own number: given the
    side as its symbol. And ``None`` as the empty cell of a flat list, with the side named."""
    seen_sides = set()

    def writer(board: list[list[int]], me: int) -> None:
        seen_sides.add(me)
        position = read_board("grid", T3, board, (1, 2, 0))
        assert me == (1 if position.x_to_move else 2)
        with open_book(book_3x3) as book:
            cell = min(book.find(position).best_moves)
        board[cell // 3][cell % 3] = me

    # no time limit: the agent runs in this process, where seen_sides can watch it
    report = ttt.audit(
        writer, T3, db=book_3x3, board="grid", symbols=(1, 2, 0), side="symbol", timeout=None
    )
    assert report.accuracy == 1.0 and not report.failures
    assert seen_sides == {1, 2}

    def named(board: list[Any], side: str) -> int:
        position = read_board("flat", T3, board, ("x", "o", None))
        assert side == position.to_move.upper()
        return board.index(None)

    report = ttt.audit(named, T3, db=book_3x3, board="flat", symbols=("x", "o", None), side="name")
    assert not report.failures and report.moves == 4520


def failing(kind: str) -> Callable[..., Any]:
    """An agent on a flat board that fails one way in positions where X is to move at ply 2,
    and plays the first empty cell elsewhere."""

    def agent(board: list[str]) -> Any:
        stones = sum(cell != " " for cell in board)
        empty = board.index(" ")
        if stones != 2:
            return empty
        if kind == "nothing":
            return None
        if kind == "two stones":
            board[empty] = "X"
            board[board.index(" ")] = "X"
            return None
        if kind == "wrong side":
            board[empty] = "O"
            return None
        if kind == "taken":
            return next(i for i, cell in enumerate(board) if cell != " ")
        if kind == "raises":
            return 1 / 0
        if kind == "exits":
            sys.exit(2)
        if kind == "float":
            return float(empty)
        if kind == "bool":
            return True
        if kind == "off board":
            return 9
        if kind == "not a cell":
            return "middle"
        if kind == "bytes":
            return b"b2"
        if kind == "written elsewhere":
            board[empty] = "X"  # X is to move at ply 2
            return board.index(" ")
        if kind == "written otherwise":
            board[empty] = "O"
            return empty
        raise AssertionError(kind)

    agent.__qualname__ = f"lab_agent_{kind.replace(' ', '_')}"
    return agent


@pytest.mark.parametrize(
    ("kind", "failure", "words"),
    [
        ("nothing", "garbage", "wrote no stone"),
        ("two stones", "garbage", "changed 2 cells"),
        ("wrong side", "illegal", "X (written 'X') is to move"),
        ("taken", "illegal", "which is taken"),
        ("raises", "crash", "ZeroDivisionError: division by zero"),
        ("exits", "crash", "called sys.exit(2), which would end ttt"),
        ("float", "garbage", "(float), not a move"),
        ("bool", "illegal", "a bool"),
        ("off board", "illegal", "off the board"),
        ("not a cell", "garbage", "'middle'"),
        ("bytes", "garbage", "returned b'b2', bytes, not a move"),
        ("written elsewhere", "garbage", "but changed"),
        ("written otherwise", "garbage", "but wrote 'O' there, not X's 'X'"),
    ],
)
def test_every_other_answer_is_that_moves_failure_and_the_audit_goes_on(
    book_3x3, kind, failure, words
):
    report = ttt.audit(failing(kind), T3, db=book_3x3, board="flat")
    at_ply_2 = [f for f in report.failures]
    assert at_ply_2 and all(f.ply == 2 and f.kind == failure for f in at_ply_2)
    name = f"lab_agent_{kind.replace(' ', '_')}"
    for f in at_ply_2:
        assert f.spec == name and f.detail.startswith(name) and words in f.detail
        assert "\n" not in f.detail
    assert report.summary.failures[failure] == 72  # the 72 positions of ply 2, by weight
    assert report.moves == 4520 - 72  # every other position graded
    assert report.to_dict()["failed"][0]["kind"] == failure


def test_a_stone_written_into_the_cell_answered_is_that_move(book_3x3):
    def writes_and_answers(board: list[str]) -> int:
        empty = board.index(" ")
        board[empty] = "X" if board.count("X") == board.count("O") else "O"
        return empty

    report = ttt.audit(writes_and_answers, T3, db=book_3x3, board="flat")
    assert not report.failures and report.moves == 4520


@pytest.mark.parametrize(
    "symbols",
    [{"x": 2, "o": 1, "empty": 0}, {"X": 2, "O": 1, "Empty": 0}, {2: "x", 1: "o", 0: "empty"}],
)
def test_symbols_may_be_a_mapping_of_x_o_and_empty(symbols):
    assert Adapter.make("flat", symbols).symbols == (2, 1, 0)


@pytest.mark.parametrize(
    ("symbols", "words"),
    [
        ({"x": 2, "o": 1}, "a mapping names the symbols of x, o and empty"),
        ({"me": 2, "you": 1, "none": 0}, "a mapping names the symbols of x, o and empty"),
        ({"x": 2, "o": 1, "empty": 0, "blocked": 3}, "a mapping names the symbols"),
        ({"X", "O", " "}, "a set has no order"),
    ],
)
def test_symbols_that_name_no_order_are_refused_in_one_line(symbols, words):
    with pytest.raises(AdapterError, match=words) as refused:
        Adapter.make("grid", symbols)
    assert "\n" not in str(refused.value)


def test_a_timeout_is_a_failure(book_3x3):
    import time

    def slow(board: list[str]) -> int:
        if sum(cell != " " for cell in board) == 7:
            time.sleep(5)
        return board.index(" ")

    report = ttt.audit(slow, T3, db=book_3x3, board="flat", timeout=0.2, positions=40, seed=3)
    kinds = {f.kind for f in report.failures}
    assert kinds == {"timeout"} and all(f.ply == 7 for f in report.failures)
    assert report.summary.graded + len(report.failures) == 40


def test_games_stop_at_a_failure_and_go_on(book_3x3):
    report = ttt.audit(failing("raises"), T3, db=book_3x3, board="flat", games=6)
    assert report.games is not None and len(report.games) == 6
    stopped = [g for g in report.games if g.failure]
    assert stopped and all(g.failure == "crash" for g in stopped)
    assert len(report.failures) == len(stopped)


def test_the_global_generators_are_seeded_per_move_and_put_back(book_3x3):
    """An agent drawing from ``random`` or ``numpy.random`` plays the same moves for the same
    seed, and the caller's own sequences go on as if nothing had run."""

    def lucky(board: list[str]) -> int:
        empty = [i for i, cell in enumerate(board) if cell == " "]
        return random.choice(empty) if len(empty) % 2 else int(np.random.choice(empty))

    random.seed(5)
    np.random.seed(5)
    expected = random.random(), np.random.random()
    random.seed(5)
    np.random.seed(5)
    first = ttt.audit(lucky, T3, db=book_3x3, board="flat", positions=500, seed=2).to_dict()
    assert (random.random(), np.random.random()) == expected
    again = ttt.audit(lucky, T3, db=book_3x3, board="flat", positions=500, seed=2).to_dict()
    other = ttt.audit(lucky, T3, db=book_3x3, board="flat", positions=500, seed=3).to_dict()
    assert first == again and first["accuracy"] != other["accuracy"]


def test_adapters_refuse_what_cannot_work():
    with pytest.raises(AdapterError, match="not one of"):
        Adapter.make("hex")
    with pytest.raises(AdapterError, match="must differ"):
        Adapter.make("flat", ("X", "X", " "))
    with pytest.raises(AdapterError, match="three"):
        Adapter.make("grid", ("X", "O"))
    with pytest.raises(AdapterError, match="symbols of its own"):
        Adapter.make("planes", (1, 2, 0))
    with pytest.raises(TypeError, match="no agent"):
        ttt.audit(42, "3x3k3")


def test_encoding_is_what_the_agent_reads_back():
    rng = random.Random(3)
    for rules in (T3, T34, Rules(2, 5, 2)):
        for _ in range(30):
            position = random_walk(rules, rng, rng.randrange(rules.cells))
            for shape in ("flat", "grid", "numpy", "planes"):
                adapter = Adapter.make(shape)
                handed = adapter.encode(position)
                symbols = adapter.symbols or (None, None, None)
                assert read_board(shape, rules, handed, symbols) == position
            agent = CallableAgent(random.Random(0), lambda board: None, Adapter.make("numpy"))
            assert agent.spec.endswith("<lambda>")


# -- PettingZoo's own tic-tac-toe --------------------------------------------------------------


def test_planes_are_pettingzoos_observation_and_actions():
    """Random games in PettingZoo's tic-tac-toe environment: at every turn its observation and
    action mask are the adapter's encoding of the same position, and its action, read back
    by the adapter, is the cell the environment marks."""
    pytest.importorskip("pygame", reason="PettingZoo's tic-tac-toe needs pygame")
    tictactoe = pytest.importorskip(
        "pettingzoo.classic.tictactoe_v3", reason="pip install -e '.[notebook]' (pettingzoo)"
    )
    adapter = Adapter.make("planes")
    rng = random.Random(11)
    for game in range(40):
        env = tictactoe.env()
        env.reset(seed=game)
        position = Position.start(T3)
        while True:
            observation, _reward, done, truncated, _info = env.last()
            if done or truncated:
                assert position.is_terminal
                break
            ours = adapter.encode(position)
            assert np.array_equal(ours["observation"], observation["observation"])
            assert ours["observation"].dtype == observation["observation"].dtype
            assert np.array_equal(ours["action_mask"], observation["action_mask"])
            action = rng.choice(np.flatnonzero(observation["action_mask"]).tolist())
            cell = adapter.decode(position, ours, ours, action)
            env.step(action)
            position = position.play(cell)
            squares = env.unwrapped.board.squares  # 1: player_1 (X), 2: player_2 (O)
            for index, mark in enumerate(squares):
                stone = position.cell(adapter.cell_of(T3, index))
                assert {0: ".", 1: "x", 2: "o"}[mark] == stone
        env.close()
