"""The OpenSpiel adapter: boards survive the trip, OpenSpiel's values agree with the book.

Skipped, with a message, where the optional extra is not installed
(``pip install -e '.[openspiel]'``); CI installs it.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys

import pytest
from click.testing import CliRunner

from tests.test_agents import ALL_3X3
from ttt_solve.agents.audit import Truth, summarize
from ttt_solve.agents.grading import audit_positions
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.spec import AgentSpecError, make_agent, parse_spec
from ttt_solve.book.reader import open_book
from ttt_solve.cli.main import ttt
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

HAVE_OPENSPIEL = importlib.util.find_spec("pyspiel") is not None
needs_openspiel = pytest.mark.skipif(
    not HAVE_OPENSPIEL, reason="open_spiel is not installed: pip install -e '.[openspiel]'"
)
R3 = Rules(3, 3, 3)


def random_positions(rules: Rules, games: int, seed: int) -> list[Position]:
    """Every position of ``games`` random games, the empty board and the ends included."""
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        position = Position.start(rules)
        out.append(position)
        while not position.is_terminal:
            position = position.play(rng.choice(position.legal_moves()))
            out.append(position)
    return out


# -- without OpenSpiel -------------------------------------------------------------------------


def test_specs_parse_without_openspiel():
    spec = parse_spec("openspiel:MCTS:simulations=100,uct_c=1.5,solve=false")
    assert spec.name == "openspiel" and spec.external
    assert spec.params == {
        "bot": "mcts",
        "simulations": 100,
        "uct_c": 1.5,
        "rollouts": 1,
        "solve": False,
        "book": False,
    }
    assert parse_spec("openspiel:alphabeta").params == {
        "bot": "alphabeta",
        "depth": 0,
        "book": False,
    }


@pytest.mark.parametrize(
    "spec, words",
    [
        ("openspiel", ["unknown OpenSpiel bot ''", "mcts, alphabeta, minimax"]),
        ("openspiel:ppo", ["unknown OpenSpiel bot 'ppo'"]),
        (
            "openspiel:mcts:iterations=5",
            [
                "unknown parameter 'iterations' for openspiel:mcts",
                "simulations (int, default 1000)",
                "uct_c (float",
            ],
        ),
        ("openspiel:mcts:simulations=0", ["simulations must be at least 1"]),
        ("openspiel:alphabeta:depth=-1", ["must not be negative"]),
    ],
)
def test_bad_openspiel_specs(spec, words):
    with pytest.raises(AgentSpecError) as caught:
        parse_spec(spec)
    for word in words:
        assert word in str(caught.value)


def test_missing_openspiel_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # makes "import pyspiel" fail
    with pytest.raises(AgentSpecError, match=r"pip install 'ttt-solve\[openspiel\]'"):
        make_agent("openspiel:mcts", random.Random(0))


# -- boards ------------------------------------------------------------------------------------


@needs_openspiel
def test_columns_are_m_and_rows_are_n():
    from ttt_solve.agents.openspiel import from_state, load_game, to_state

    rules = Rules(3, 4, 3)  # 3 rows, 4 columns
    game = load_game(rules)
    assert (game.get_parameters()["m"], game.get_parameters()["n"]) == (4, 3)
    position = Position.parse("x.../..o./...x", rules)
    state = to_state(game, position)
    assert str(state) == "x...\n..o.\n...x"
    assert from_state(state, rules) == position


@needs_openspiel
@pytest.mark.parametrize(
    "rules, positions",
    [
        (R3, ALL_3X3),
        (Rules(3, 4, 3), random_positions(Rules(3, 4, 3), 150, 1)),
        (Rules(4, 3, 3), random_positions(Rules(4, 3, 3), 150, 2)),
        (Rules(2, 5, 2), random_positions(Rules(2, 5, 2), 100, 3)),
        (Rules(4, 4, 4), random_positions(Rules(4, 4, 4), 60, 4)),
    ],
    ids=["3x3 all", "3x4", "4x3", "2x5 k=2", "4x4 k=4"],
)
def test_every_position_survives_the_round_trip(rules, positions):
    from ttt_solve.agents.openspiel import from_state, load_game, to_state

    game = load_game(rules)
    for position in positions:
        state = to_state(game, position)
        assert from_state(state, rules) == position
        assert state.is_terminal() == position.is_terminal
        if position.is_terminal:
            winner = position.winner
            assert state.returns() == {"x": [1.0, -1.0], "o": [-1.0, 1.0], None: [0.0, 0.0]}[winner]
        else:
            assert state.current_player() == (0 if position.x_to_move else 1)
            assert state.legal_actions() == position.legal_moves()


# -- OpenSpiel's values against the book -------------------------------------------------------

VALUED = {
    R3: [
        ".../.../...",
        "x.o/.x./...",
        "xo./.x./o..",
        "o.x/.../...",
        ".o./x../.x.",
        "x../.o./..x",
        "xx./oo./...",
    ],
    Rules(3, 4, 3): [
        "..../..../....",
        "x.../.o../....",
        ".x../o.../....",
        "xo../..../....",
        "o..x/..../..x.",
    ],
    Rules(4, 4, 3): [".o.x/...o/xo.x/....", "x.../.o../..x./...o", "xo../ox../..../...."],
}


@needs_openspiel
@pytest.mark.parametrize("rules", list(VALUED), ids=str)
def test_openspiel_values_agree_with_the_book(book_small, rules):
    from open_spiel.python.algorithms import minimax

    from ttt_solve.agents.openspiel import load_game, to_state

    game = load_game(rules)
    with open_book(book_small) as book:
        truth = Truth(book, rules)
        agent = make_agent("openspiel:alphabeta", random.Random(0))
        for text in VALUED[rules]:
            position = Position.parse(text, rules)
            state = to_state(game, position)
            value, action = minimax.alpha_beta_search(
                game,
                state=state,
                maximum_depth=position.empty_count,
                maximizing_player_id=state.current_player(),
            )
            assert value == truth.value(position).outcome.sign, text
            # And the adapter's move keeps that value.
            cell = agent.select_move(position)
            assert truth.move_value(position, cell).outcome == truth.value(position).outcome


# -- the bots as agents ------------------------------------------------------------------------


@needs_openspiel
def test_mcts_is_reproducible_and_seeded_by_the_injected_generator():
    position = Position.parse("x../.../...", R3)

    def moves(seed: int) -> list[int]:
        agent = make_agent("openspiel:mcts:simulations=20", random.Random(seed))
        return [agent.select_move(position) for _ in range(8)]

    assert moves(1) == moves(1)
    assert moves(1) != moves(2)


@needs_openspiel
def test_alphabeta_keeps_every_value_on_3x3(book_3x3):
    with open_book(book_3x3) as book:
        records, ungraded, _ = audit_positions(
            AgentMaker("openspiel:alphabeta"), Truth(book, R3), jobs=1
        )
    summary = summarize(records, ungraded)
    assert summary.moves == 4520 and summary.accuracy == 1.0
    assert summary.perfection < 1.0  # OpenSpiel's values ignore how fast a win comes


@needs_openspiel
def test_mcts_audit_is_the_same_on_one_core_and_two(book_3x3):
    with open_book(book_3x3) as book:
        truth = Truth(book, R3)
        maker = AgentMaker("openspiel:mcts:simulations=30")
        one, _, _ = audit_positions(maker, truth, sample=40, seed=3, jobs=1)
        two, _, _ = audit_positions(maker, truth, sample=40, seed=3, jobs=2, probe_seconds=0.0)
    assert [r.cell for r in one] == [r.cell for r in two]


@needs_openspiel
def test_cli_games_against_perfect(book_3x3):
    result = CliRunner().invoke(
        ttt,
        [
            "audit",
            "--agent",
            "openspiel:mcts:simulations=100",
            "--games",
            "4",
            "--opponent",
            "perfect",
            "--db",
            book_3x3,
            "--json",
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["agent"] == "openspiel:mcts:simulations=100" and len(data["games"]) == 4
    assert all(game["outcome"] != "win" for game in data["games"])
