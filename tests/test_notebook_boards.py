"""The notebook's calls take the notebook's boards: ``ttt.analyse``, ``ttt.play_game``,
``ttt.audit`` and ``ttt.rate`` read ``board=``/``symbols=`` alike, refuse a wrong one in one
line that names it, and a rating is seeded by what the agent is, not by how it is written."""

from __future__ import annotations

import json
import shutil
import time

import numpy as np
import pytest
from click.testing import CliRunner

import ttt_solve as ttt
from tests.lab_agents import buggy_agent
from ttt_solve.agents.identity import identity
from ttt_solve.agents.makers import agent_maker
from ttt_solve.cli.main import ttt as ttt_command
from ttt_solve.session import read_board

GRID = [["X", "O", " "], [" ", "X", " "], [" ", " ", " "]]


def test_analyse_reads_a_board_as_audit_hands_it(book_3x3):
    text = ttt.analyse("xo./.x./...", "3x3k3", db=book_3x3)
    assert ttt.analyse(GRID, "3x3k3", db=book_3x3) == text
    assert ttt.analyse(GRID, db=book_3x3) == text  # 3x3 k=3 from the board's shape
    flat = [cell for row in GRID for cell in row]
    assert ttt.analyse(flat, "3x3k3", board="flat", db=book_3x3) == text
    numbers = np.array([[1, 2, 0], [0, 1, 0], [0, 0, 0]])
    symbols = {"x": 1, "o": 2, "empty": 0}
    assert ttt.analyse(numbers, "3x3k3", symbols=symbols, db=book_3x3) == text
    assert ttt.analyse(numbers, "3x3k3", symbols=(1, 2, 0), db=book_3x3) == text


@pytest.mark.parametrize(
    "call, words",
    [
        (
            lambda db: ttt.analyse([["X", "O"], [" ", " "]], "3x3k3", db=db),
            ["board='grid'", "2 rows"],
        ),
        (lambda db: ttt.analyse(GRID, "3x3k3", board="flat", db=db), ["board='flat'"]),
        (lambda db: ttt.analyse([["X", "?", " "]] * 3, "3x3k3", db=db), ["'?'", "symbols="]),
        (
            lambda db: ttt.audit(buggy_agent, "3x3k3", db=db, board="grid", symbols={"x": 1}),
            ["symbols=", "a mapping names the symbols of x, o and empty"],
        ),
        (lambda db: ttt.analyse(GRID, "3x3k3", symbols="XO ", db=db), ["symbols='XO '"]),
    ],
)
def test_a_wrong_board_or_symbols_is_one_line_naming_it(book_3x3, call, words):
    with pytest.raises(ValueError) as caught:
        call(book_3x3)
    message = str(caught.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_symbols_as_a_mapping_are_understood(book_3x3):
    def first_empty(board):  # a board of numbers, as many labs write it
        return [cell for row in board for cell in row].index(0)

    named = ttt.audit(
        first_empty, "3x3k3", db=book_3x3, board="grid", symbols={"X": 2, "O": 1, "empty": 0}
    )
    listed = ttt.audit(first_empty, "3x3k3", db=book_3x3, board="grid", symbols=(2, 1, 0))
    assert named.failed_moves == 0 and named.to_dict()["accuracy"] == listed.to_dict()["accuracy"]


def grid_agent(board):
    return next((r, c) for r, row in enumerate(board) for c, v in enumerate(row) if v == " ")


@pytest.mark.parametrize(
    "call",
    [
        lambda db: ttt.play_game(grid_agent, "perfect", "3x3k3", db=db),
        lambda db: ttt.play_game("random", grid_agent, "3x3k3", db=db),
        lambda db: ttt.audit(grid_agent, "3x3k3", db=db, positions=20),
        lambda db: ttt.audit(grid_agent, "3x3k3", db=db, positions=20, timeout=None),
        lambda db: ttt.audit(grid_agent, "3x3k3", db=db, games=2),
    ],
)
def test_a_function_given_no_board_that_reads_another_is_one_line_naming_board(book_3x3, call):
    with pytest.raises(ValueError) as caught:
        call(book_3x3)
    message = str(caught.value)
    assert "\n" not in message
    assert "grid_agent" in message and "no board= was given" in message
    assert "board='flat', 'grid', 'numpy' or 'planes'" in message


def test_play_game_hands_a_function_the_board_it_names(book_3x3):
    played = ttt.play_game(grid_agent, "perfect", "3x3k3", db=book_3x3, board="grid")
    assert played.record.failure is None and len(played.moves) >= 5
    numbers = ttt.play_game(
        grid_agent, "perfect", "3x3k3", db=book_3x3, board="grid", symbols=(1, 2, " ")
    )
    assert numbers.moves == played.moves  # " " stays the empty cell's symbol
    start = [[1, 2, " "], [" ", " ", " "], [" ", " ", " "]]
    later = ttt.play_game(
        grid_agent,
        "perfect",
        "3x3k3",
        db=book_3x3,
        board="grid",
        symbols=(1, 2, " "),
        start=start,
    )
    assert later.record.failure is None and later.moves[0] == "c1"


def test_a_position_agent_keeps_its_own_failures(book_3x3):
    def misspelt(position):  # the Position's own method, misspelt: the agent's failure
        return position.legal_move()[0]

    game = ttt.play_game(misspelt, "perfect", "3x3k3", db=book_3x3)
    assert game.record.failure is not None and game.record.failure.kind == "crash"
    assert "X forfeits at move 1" in game.result


def test_every_front_has_the_same_default_time_limit_per_move():
    import inspect

    from ttt_solve.agents.isolation import DEFAULT_MOVE_SECONDS
    from ttt_solve.agents.spec import parse_spec

    for function in (ttt.audit, ttt.rate, ttt.play_game, ttt.curve, ttt.evaluate):
        assert inspect.signature(function).parameters["timeout"].default == DEFAULT_MOVE_SECONDS
    assert parse_spec("py:lab.py:first_empty,board=flat").params["timeout"] == DEFAULT_MOVE_SECONDS
    assert parse_spec("py:lab:make,timeout=none").params["timeout"] is None
    assert 0 < DEFAULT_MOVE_SECONDS < 60


def _hangs(board):  # noqa: ANN001, ANN202
    time.sleep(10**6)


def test_a_game_stops_an_agent_that_never_answers():
    started = time.monotonic()
    game = ttt.play_game(_hangs, "random", "3x3k3", db=None, board="flat", timeout=0.5)
    assert game.record.failure is not None and game.record.failure.kind == "timeout"
    assert "X forfeits at move 1, timeout" in game.result
    assert time.monotonic() - started < 30


def test_identity_is_what_an_agent_runs_not_how_it_is_spelled(tmp_path, monkeypatch):
    engine = tmp_path / "engine.py"
    shutil.copy("examples/reference_engine.py", engine)
    monkeypatch.chdir(tmp_path)
    spellings = [
        "cmd:python3 engine.py",
        "cmd:python3 ./engine.py",
        f"cmd:python3 {engine}",
        f"cmd:python3 {tmp_path}/../{tmp_path.name}/engine.py",
    ]
    assert len({identity(spec) for spec in spellings}) == 1
    other = tmp_path / "other.py"
    other.write_text(engine.read_text() + "\n# another engine\n")
    assert identity("cmd:python3 other.py") != identity(spellings[0])
    assert identity("py:tests.lab_agents:buggy_agent,board=grid") == identity(
        agent_maker(buggy_agent, db=None, board="grid")
    )


def test_rate_in_a_notebook_rates_as_ttt_rate_does(book_3x3, tmp_path):
    db = str(tmp_path / "rate.sqlite")
    shutil.copy(book_3x3, db)
    spec = "py:tests.lab_agents:buggy_agent,board=grid"
    result = CliRunner().invoke(
        ttt_command, ["rate", "--agent", spec, "--games", "2", "--db", db, "--json", "-q"]
    )
    assert result.exit_code == 0, result.output
    cli = json.loads(result.output)["agents"][0]
    rated = ttt.rate(buggy_agent, "3x3k3", db=db, board="grid", games=2)
    (mine,) = rated.agents
    assert mine.played == 18 and mine.forfeits == cli["forfeits"] > 0
    assert rated.rating(mine.agent).rating.mean == pytest.approx(cli["rating"])
    assert mine.accuracy == pytest.approx(cli["accuracy"])
    assert "buggy_agent" in rated._repr_html_() and "forfeited" in repr(rated)


@pytest.mark.parametrize("cells", [[], [" "] * 8])
def test_a_flat_board_without_its_game_must_be_square(cells: list) -> None:
    with pytest.raises(ValueError, match="give the game too") as caught:
        read_board(cells, None, board="flat")
    assert "\n" not in str(caught.value)
