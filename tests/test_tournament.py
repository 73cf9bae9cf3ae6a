"""Round robin: bookkeeping, colours, reproducibility, the command."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.tournament import round_robin, standings
from ttt_solve.cli.main import ttt
from ttt_solve.cli.tournament import split_specs
from ttt_solve.solver.rules import Rules

R3 = Rules(3, 3, 3)


def test_split_specs_keeps_parameters_with_their_agent():
    assert split_specs("random,mcts:iterations=5,c=2,heuristic") == [
        "random",
        "mcts:iterations=5,c=2",
        "heuristic",
    ]


def test_round_robin_counts_and_standings():
    makers = [AgentMaker("random"), AgentMaker("heuristic"), AgentMaker("alphabeta:depth=9")]
    pairings = round_robin(makers, R3, 6, seed=1, jobs=1)
    assert [(p.a, p.b) for p in pairings] == [(0, 1), (0, 2), (1, 2)]
    assert all(p.a_wins + p.draws + p.b_wins == 6 for p in pairings)
    # Neither rule-follower nor exact search ever loses on 3x3; between them: all draws.
    assert pairings[0].a_wins == 0 and pairings[1].a_wins == 0
    assert pairings[2].draws == 6
    table = standings(pairings, 3)
    assert [s.games for s in table] == [12, 12, 12]
    assert table[-1].entrant == 0
    assert sum(s.won for s in table) == sum(s.lost for s in table)
    again = round_robin(makers, R3, 6, seed=1, jobs=2, probe_seconds=0.0)
    assert again == pairings


def test_cli_matrix_and_standings():
    result = CliRunner().invoke(
        ttt, ["tournament", "--agents", "random,heuristic,random", "--games", "4", "-q"]
    )
    assert result.exit_code == 0, result.output
    assert "random #1" in result.output and "random #3" in result.output
    assert "standings" in result.output and "wins-draws-losses" in result.output
    data = json.loads(
        CliRunner()
        .invoke(ttt, ["tournament", "--agents", "random,heuristic", "--games", "4", "--json", "-q"])
        .output
    )
    assert data["pairings"][0]["a_wins"] == 0
    assert data["standings"][0]["agent"] == "heuristic" and data["standings"][0]["games"] == 4


def test_cli_perfect_reads_the_book(book_3x3):
    result = CliRunner().invoke(
        ttt,
        [
            "tournament",
            "--agents",
            "perfect,alphabeta:depth=9",
            "--games",
            "2",
            "--db",
            book_3x3,
            "--json",
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["pairings"][0]["draws"] == 2


@pytest.mark.parametrize(
    "args, words",
    [
        (["--agents", "random"], "at least two"),
        ([], "0 agents named"),
        (["--agent", "random"], "1 agent named"),
        (["--agents", "random,bogus"], "unknown agent 'bogus'"),
        (["--agents", "random,perfect", "--db", "/nonexistent/x.sqlite"], "no book at"),
    ],
)
def test_cli_errors(args, words):
    result = CliRunner().invoke(ttt, ["tournament", *args])
    assert result.exit_code == 2 and words in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1


def test_cli_an_engine_spec_with_commas_of_its_own(tmp_path):
    import shutil
    import sys
    from pathlib import Path

    folder = tmp_path / "engines,v2"  # a comma inside the command: --agents would split it
    folder.mkdir()
    engine = folder / "engine.py"
    shutil.copy(Path(__file__).parents[1] / "examples" / "reference_engine.py", engine)
    spec = f"cmd:{sys.executable} '{engine}',timeout=10"
    result = CliRunner().invoke(
        ttt,
        ["tournament", "--agents", "heuristic", "--agent", spec, "--games", "2", "--json", "-q"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["agents"] == ["heuristic", spec]
    assert data["pairings"][0]["draws"] == 2  # both play 3x3 without a mistake


def test_round_robin_keeps_the_results_by_colour():
    makers = [AgentMaker("random"), AgentMaker("heuristic")]
    (pairing,) = round_robin(makers, R3, 8, seed=2, jobs=1)
    assert pairing.a_first is not None and pairing.b_first is not None
    assert sum(pairing.a_first) == sum(pairing.b_first) == 4  # colours alternate
    both = [x + y for x, y in zip(pairing.a_first, reversed(pairing.b_first))]
    assert both == [pairing.a_wins, pairing.draws, pairing.b_wins]


def test_cli_ratings_after_the_standings():
    args = ["tournament", "--agents", "random,heuristic,mcts:iterations=30", "--games", "6", "-q"]
    result = CliRunner().invoke(ttt, args)
    assert result.exit_code == 0, result.output
    assert "ratings (Elo scale" in result.output and "anchor: random = 0" in result.output
    data = json.loads(CliRunner().invoke(ttt, [*args, "--json"]).output)
    ratings = data["ratings"]
    assert ratings["anchor"] == {"agent": "random", "rating": 0.0}
    assert ratings["ratings"][0]["agent"] == "heuristic"  # it never loses
    assert {row["agent"] for row in ratings["ratings"]} == set(data["agents"])
    assert data["pairings"][0]["a_as_x"]["a_wins"] + data["pairings"][0]["a_as_x"]["draws"] <= 3
    moved = json.loads(
        CliRunner().invoke(ttt, [*args, "--json", "--anchor", "heuristic=1000"]).output
    )
    assert moved["ratings"]["ratings"][0]["rating"] == 1000.0
    bad = CliRunner().invoke(ttt, [*args, "--anchor", "perfect=0"])
    assert bad.exit_code == 2 and "names no agent of this tournament" in bad.output
