"""``py:`` agents: parsing, loading, the factory's parameters, and use in every command."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner

import ttt_solve
from tests.support import run_audit
from tests.test_audit import FirstEmptyMaker
from ttt_solve.agents.audit import Truth, summarize
from ttt_solve.agents.engine import EngineFailure
from ttt_solve.agents.grading import audit_positions
from ttt_solve.agents.match import play_game
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.plugin import PluginAgent
from ttt_solve.agents.spec import make_agent, parse_spec
from ttt_solve.book.reader import open_book
from ttt_solve.cli.main import ttt
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

R3 = Rules(3, 3, 3)
EXAMPLE = "py:examples.plugin_agent:make"


# -- factories the tests load through py: ------------------------------------------------------


class FirstEmpty:
    """Not an Agent subclass: any object with select_move will do."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def select_move(self, position: Position) -> int:
        return position.legal_moves()[0]


def first_empty(rng: random.Random) -> FirstEmpty:
    return FirstEmpty(rng)


RECEIVED: list[dict] = []


def recorder(rng: random.Random, **params) -> FirstEmpty:
    RECEIVED.append({"rng": rng, **params})
    return FirstEmpty(rng)


class Broken:
    def __init__(self, answer: object) -> None:
        self.answer = answer

    def select_move(self, position: Position) -> object:
        return self.answer


def taken_cell(rng: random.Random) -> Broken:
    return Broken(0)  # a1, taken after the first move


def no_cell(rng: random.Random) -> Broken:
    return Broken("b2")


def not_an_agent(rng: random.Random) -> object:
    return 42


class Player:
    """A lab's agent class: made with its own parameters, its move a method."""

    def __init__(self, depth: int = 1) -> None:
        self.depth = depth

    def move(self, board: list[str]) -> int:
        return board.index(" ")

    def move_in(self, position: Position) -> int:
        return position.legal_moves()[0]


player = Player(depth=4)


# -- parsing and building ----------------------------------------------------------------------


def test_parameters_are_typed_and_reach_the_factory():
    spec = parse_spec("py:tests.test_plugin:recorder,depth=3,c=1.5,greedy=TRUE,name=bob,Book=false")
    assert spec.name == "py" and spec.external and not spec.needs_book
    rng = random.Random(5)
    agent = make_agent(spec, rng)
    assert isinstance(agent, PluginAgent) and agent.rng is rng
    assert RECEIVED[-1] == {"rng": rng, "depth": 3, "c": 1.5, "greedy": True, "name": "bob"}
    assert agent.spec == spec.text and "recorder" in repr(agent)


def test_a_file_path_loads_too(tmp_path):
    plugin = tmp_path / "my_agent.py"
    plugin.write_text(
        "def make(rng, cell=4):\n"
        "    class A:\n"
        "        def select_move(self, position):\n"
        "            return cell\n"
        "    return A()\n"
    )
    agent = make_agent(f"py:{plugin}:make,cell=8", random.Random(0))
    assert agent.select_move(Position.start(R3)) == 8


def test_the_example_takes_a_win_and_is_reproducible():
    agent = make_agent(EXAMPLE, random.Random(3))
    assert agent.select_move(Position.parse("xx./oo./...", R3)) == 2
    games = [
        play_game(
            make_agent(EXAMPLE, random.Random(seed)), make_agent("random", random.Random(9)), R3
        ).moves
        for seed in (1, 1, 2)
    ]
    assert games[0] == games[1] != games[2]


def test_bad_answers_are_that_moves_failure():
    """A taken cell, a name of a taken cell: the failure of that move, naming the agent (the
    audit counts it and goes on; a game between two agents stops there)."""
    position = Position.from_moves(R3, ["b2"])
    with pytest.raises(EngineFailure) as caught:
        play_game(
            make_agent("random", random.Random(0)),
            make_agent("py:tests.test_plugin:taken_cell", random.Random(0)),
            R3,
        )
    assert caught.value.kind == "illegal"
    assert caught.value.detail.startswith(
        "py:tests.test_plugin:taken_cell played a1, which is taken"
    )
    with pytest.raises(EngineFailure, match="played b2, which is taken") as caught:
        make_agent("py:tests.test_plugin:no_cell", random.Random(0)).select_move(position)
    assert caught.value.spec == "py:tests.test_plugin:no_cell"


def raises(rng, **params):
    class Broken:
        def select_move(self, position):
            if position.ply == 3:
                raise ValueError("math domain error")
            return position.legal_moves()[0]

    return Broken()


def flat_first_empty(board):
    return board.index(" ")


def test_a_plugin_that_raises_is_audited_with_its_failures(book_3x3):
    result = run_audit("--agent", "py:tests.test_plugin:raises", "--db", book_3x3, "-q")
    assert result.exit_code == 0, result.output
    assert "failures crash" in result.output and "math domain error" in result.output
    data = json.loads(
        run_audit("--agent", "py:tests.test_plugin:raises", "--db", book_3x3, "-q", "--json").output
    )
    assert data["failures"]["crash"] == 252 and data["moves"] == 4520 - 252  # ply 3, weighted


def test_a_move_function_with_a_board_is_a_plugin_too(book_3x3):
    spec = "py:tests.test_plugin:flat_first_empty,board=flat"
    data = json.loads(run_audit("--agent", spec, "--db", book_3x3, "-q", "--json").output)
    here = ttt_solve.audit(flat_first_empty, "3x3k3", db=book_3x3, board="flat").to_dict()
    assert data["moves"] == 4520 and not data["failed"]
    assert {k: v for k, v in data.items() if k != "agent"} == {
        k: v for k, v in here.items() if k != "agent"
    }
    for bad, words in [
        ("board=hex", "not one of"),
        ("board=flat,symbols=X/O", "three"),
        ("side=name", "need board="),
        ("board=flat,depth=2", "takes no parameters"),
    ]:
        result = run_audit(
            "--agent", f"py:tests.test_plugin:flat_first_empty,{bad}", "--db", book_3x3
        )
        assert result.exit_code == 2 and words in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1


def test_a_method_of_an_instance_is_a_move_function(book_3x3):
    """``Class().method`` makes the instance with the spec's parameters; ``instance.method``
    takes a module's own; either is graded as the function it names (without ``board=``,
    handed the position)."""
    expected = ttt_solve.audit(
        flat_first_empty, "3x3k3", db=book_3x3, board="flat", positions=300
    ).to_dict()
    for spec, depth in [
        ("py:tests.test_plugin:Player().move,board=flat", 1),
        ("py:tests.test_plugin:Player().move,board=flat,depth=3", 3),
        ("py:tests.test_plugin:player.move,board=flat", 4),
        ("py:tests.test_plugin:Player().move_in", 1),
    ]:
        agent = make_agent(spec)
        assert agent.move.__self__.depth == depth  # type: ignore[attr-defined]
        found = run_audit(
            "--agent", spec, "--db", book_3x3, "--positions", "sample:300", "-q", "--json"
        )
        data = json.loads(found.output)
        assert {k: v for k, v in data.items() if k != "agent"} == {
            k: v for k, v in expected.items() if k != "agent"
        }
    for bad, words in [
        ("Player()", "does not name a factory"),
        ("Player().jump,board=flat", "Player() (Player) has no attribute 'jump'"),
        ("Player().depth,board=flat", "Player().depth is no function (int)"),
        ("Player().move,board=flat,speed=2", "Player(speed=2) failed: TypeError"),
        ("player.move,board=flat,depth=2", "takes no parameters"),
    ]:
        result = run_audit("--agent", f"py:tests.test_plugin:{bad}", "--db", book_3x3)
        assert result.exit_code == 2 and words in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1


def test_book_true_plays_the_books_moves(book_3x3):
    with open_book(book_3x3) as book:
        agent = make_agent("py:tests.test_plugin:first_empty,book=true", random.Random(0), book)
        game = play_game(agent, make_agent("perfect", random.Random(1), book), R3)
    assert game.winner is None and agent.book_moves == 5


# -- in the commands ---------------------------------------------------------------------------


def test_audit_of_a_plugin_equals_the_audit_of_the_same_agent_built_here(book_3x3):
    with open_book(book_3x3) as book:
        truth = Truth(book, R3)
        direct, _, _ = audit_positions(FirstEmptyMaker(), truth, jobs=1)
        # Two processes: the workers import the plugin themselves.
        plugged, _, _ = audit_positions(
            AgentMaker("py:tests.test_plugin:first_empty"), truth, jobs=2, probe_seconds=0.0
        )
    assert [(r.position, r.cell) for r in plugged] == [(r.position, r.cell) for r in direct]
    assert summarize(plugged) == summarize(direct)


def test_cli_audit_tournament_and_play(book_3x3):
    runner = CliRunner()
    args = ["audit", "--agent", EXAMPLE, "--db", book_3x3, "--positions", "sample:500", "--json"]
    args += ["-q", "-j", "1"]
    first, again = runner.invoke(ttt, args), runner.invoke(ttt, args)
    assert first.exit_code == 0, first.output
    data = json.loads(first.output)
    assert data["agent"] == EXAMPLE and data["moves"] == 500 and first.output == again.output
    assert 0.5 < data["accuracy"] < 1  # random elsewhere: blunders, but every win taken

    result = runner.invoke(
        ttt, ["tournament", "--agents", f"{EXAMPLE},heuristic", "--games", "4", "--json", "-q"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["agents"] == [EXAMPLE, "heuristic"]

    result = runner.invoke(
        ttt, ["play", "--agent", EXAMPLE, "--db", book_3x3, "--seed", "1"], input="b2\nquit\n"
    )
    assert result.exit_code == 0, result.output
    assert f"{EXAMPLE} plays" in result.output and "your moves, graded" in result.output


def test_cli_bad_plugin_is_one_line_exit_2(book_3x3):
    result = CliRunner().invoke(
        ttt, ["audit", "--agent", "py:no_such_package.agent:make", "--db", book_3x3]
    )
    assert result.exit_code == 2 and "cannot load" in result.output
    assert len(result.output.strip().splitlines()) == 1
