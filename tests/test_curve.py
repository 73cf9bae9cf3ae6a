"""Strength curves: ``ttt curve``, its figures against single audits, its plot, bad input."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from ttt_solve.agents.curve import (
    CurveError,
    interval,
    parse_vary,
    plan_curve,
    point_spec,
)
from ttt_solve.agents.heuristic import RULES, HeuristicAgent
from ttt_solve.agents.spec import AgentSpecError
from ttt_solve.cli.main import ttt
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

R3 = Rules(3, 3, 3)


def run(*args: str):
    return CliRunner().invoke(ttt, list(args))


def curve_json(book: str, *args: str) -> dict:
    result = run("curve", "--db", book, "--json", "-q", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def audit_json(book: str, *args: str) -> dict:
    result = run("audit", "--db", book, "--json", "-q", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


# -- the curve's figures ---------------------------------------------------------------------


def test_alphabeta_by_depth_ends_perfect(book_3x3):
    data = curve_json(
        book_3x3, "--agent", "alphabeta", "--vary", "depth=1,2,3,4,5,6,7,8,9", "--seeds", "1"
    )
    (curve,) = data["curves"]
    assert [p["value"] for p in curve["points"]] == [str(d) for d in range(1, 10)]
    last = curve["points"][-1]
    # Depth 9 searches every 3x3 position to the end: exact, so every move is best.
    assert last["accuracy"]["mean"] == 1.0 and last["perfection"]["mean"] == 1.0
    assert last["runs"][0]["moves"] == 4520 and last["runs"][0]["blunders"] == 0
    assert curve["points"][0]["accuracy"]["mean"] < 1.0  # depth 1 still blunders
    assert curve["kept_value_from"] is not None
    assert int(curve["kept_value_from"]) <= 9


def test_a_point_equals_the_matching_audit(book_3x3):
    data = curve_json(
        book_3x3, "--agent", "mcts", "--vary", "iterations=5,20", "--seeds", "2", "--seed", "7"
    )
    point = data["curves"][0]["points"][1]
    assert point["spec"] == "mcts:iterations=20"
    for run_ in point["runs"]:
        single = audit_json(book_3x3, "--agent", "mcts:iterations=20", "--seed", str(run_["seed"]))
        for figure in ("moves", "best", "sound", "blunders", "accuracy", "perfection"):
            assert run_[figure] == single[figure], figure
        assert run_["blunder_kinds"] == single["blunder_kinds"]
    assert [r["seed"] for r in point["runs"]] == [7, 8]
    # Different seeds give different MCTS moves at 20 iterations: the interval has a width.
    assert point["accuracy"]["low"] < point["accuracy"]["mean"] < point["accuracy"]["high"]


def test_games_mode_point_equals_the_matching_audit(book_3x3):
    data = curve_json(
        book_3x3,
        "--agent",
        "heuristic",
        "--vary",
        "rules=0,5",
        "--games",
        "6",
        "--opponent",
        "random",
        "--seeds",
        "2",
    )
    assert data["mode"] == "games" and data["description"] == "6 games against random"
    point = data["curves"][0]["points"][0]
    games = {"x": [0, 0, 0], "o": [0, 0, 0]}
    for run_ in point["runs"]:
        single = audit_json(
            book_3x3,
            "--agent",
            "heuristic:rules=0",
            "--games",
            "6",
            "--opponent",
            "random",
            "--seed",
            str(run_["seed"]),
        )
        assert (run_["moves"], run_["accuracy"]) == (single["moves"], single["accuracy"])
        for game in single["games"]:
            games[game["agent_side"]][("win", "draw", "loss").index(game["outcome"])] += 1
    for side in "xo":
        tally = point["games"][side]
        assert tally["games"] == 6  # 3 per seed and colour
        assert [tally["won"], tally["drawn"], tally["lost"]] == games[side]
    # The full rule list never loses a 3x3 game.
    full = data["curves"][0]["points"][1]
    assert full["games"]["x"]["lost"] == full["games"]["o"]["lost"] == 0


def test_heuristic_rules_zero_is_a_random_player(book_3x3):
    rng = random.Random(1)
    position = Position.start(R3)
    agent = HeuristicAgent(random.Random(0), rules=0)
    while not position.is_terminal:
        assert agent.candidates(position) == position.legal_moves()
        position = position.play(agent.select_move(position))
        if not position.is_terminal:
            position = position.play(rng.choice(position.legal_moves()))
    data = curve_json(book_3x3, "--agent", "heuristic", "--vary", "rules=0,5", "--seeds", "3")
    rules0, full = data["curves"][0]["points"]
    random_agent = audit_json(book_3x3, "--agent", "random")
    assert abs(rules0["accuracy"]["mean"] - random_agent["accuracy"]) < 0.03
    assert full["accuracy"]["mean"] > rules0["accuracy"]["mean"] + 0.3
    assert full["accuracy"]["mean"] > 0.98


def test_heuristic_each_rule_adds_accuracy(book_3x3):
    data = curve_json(
        book_3x3, "--agent", "heuristic", "--vary", "rules=0,1,2,3,4,5", "--seeds", "2"
    )
    means = [p["accuracy"]["mean"] for p in data["curves"][0]["points"]]
    assert means == sorted(means), means
    assert len(RULES) == 5


def test_heuristic_default_is_every_rule():
    position = Position.parse("xx./o../...", R3)
    assert HeuristicAgent(random.Random(0)).rules == len(RULES)
    assert HeuristicAgent(random.Random(0), rules=2).candidates(position) == [2]  # block
    assert HeuristicAgent(random.Random(0), rules=1).candidates(position) == [2, 4, 5, 6, 7, 8]
    with pytest.raises(ValueError, match="0 to 5"):
        HeuristicAgent(random.Random(0), rules=6)


def test_two_agents_share_one_run(book_3x3):
    data = curve_json(
        book_3x3,
        "--agent",
        "alphabeta",
        "--vary",
        "depth=1,9",
        "--agent",
        "montecarlo",
        "--vary",
        "playouts=5,10",
        "--positions",
        "sample:40",
        "--seeds",
        "1",
    )
    assert data["mode"] == "positions" and data["description"] == "40 sampled positions"
    assert [c["agent"] for c in data["curves"]] == ["alphabeta", "montecarlo"]
    assert [c["param"] for c in data["curves"]] == ["depth", "playouts"]
    assert data["curves"][0]["points"][1]["runs"][0]["moves"] == 40  # 40 positions asked


def test_table_and_csv(book_3x3):
    args = ["--agent", "alphabeta", "--vary", "depth=1,9", "--seeds", "1"]
    table = run("curve", "--db", book_3x3, "-q", *args)
    assert table.exit_code == 0, table.output
    assert "alphabeta: depth" in table.output and "100.00%" in table.output
    assert "kept the value in every position asked, every seed, from depth=9" in table.output
    rows = run("curve", "--db", book_3x3, "-q", "--csv", *args).output.splitlines()
    assert rows[0].startswith("agent,param,value,spec,seeds,accuracy,accuracy_low")
    assert rows[2].startswith("alphabeta,depth,9,alphabeta:depth=9,1,1.0,1.0,1.0")


# -- the plot --------------------------------------------------------------------------------


def test_plot_svg_names_the_agents(book_3x3, tmp_path):
    plot = tmp_path / "curve.svg"
    result = run(
        "curve",
        "--db",
        book_3x3,
        "-q",
        "--agent",
        "alphabeta",
        "--vary",
        "depth=1,2,9",
        "--agent",
        "heuristic",
        "--vary",
        "rules=1,2,5",
        "--seeds",
        "1",
        "--plot",
        str(plot),
    )
    assert result.exit_code == 0, result.output
    root = ET.parse(plot).getroot()  # well-formed XML
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    text = plot.read_text()
    for words in ("alphabeta", "heuristic", "3x3 k=3", "accuracy", "perfection", "depth"):
        assert words in text, words


def test_plot_png(book_3x3, tmp_path):
    from PIL import Image

    plot = tmp_path / "curve.png"
    result = run(
        "curve", "--db", book_3x3, "-q", "--agent", "alphabeta", "--vary", "depth=1,9",
        "--seeds", "1", "--plot", str(plot),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    with Image.open(plot) as image:
        assert image.format == "PNG" and image.size[0] > 400


def test_audit_plot(book_3x3, tmp_path):
    plot = tmp_path / "audit.svg"
    result = run("audit", "--db", book_3x3, "-q", "--agent", "heuristic", "--plot", str(plot))
    assert result.exit_code == 0, result.output
    text = plot.read_text()
    ET.fromstring(text)
    assert "audit of heuristic on 3x3 k=3" in text and "ply" in text and "perfection" in text


# -- bad input: one line, exit 2, before any work --------------------------------------------


@pytest.mark.parametrize(
    "args, words",
    [
        (["--agent", "random", "--vary", "iterations=1,2"], "unknown parameter 'iterations'"),
        (["--agent", "mcts", "--vary", "iterations=10,abc"], "'abc' is not a number"),
        (["--agent", "mcts", "--vary", "iterations"], "is not PARAM=V1,V2"),
        (["--agent", "mcts", "--vary", "iterations=10,,30"], "is not PARAM=V1,V2"),
        (["--agent", "mcts", "--vary", "iterations=10"], "single value"),
        (["--agent", "mcts", "--vary", "iterations=10,10"], "repeats a value"),
        (["--agent", "alphabeta", "--vary", "depth=1.5,2"], "whole number"),
        (["--agent", "mcts:iterations=5", "--vary", "iterations=1,2"], "already sets"),
        (["--agent", "mtcs", "--vary", "iterations=1,2"], "unknown agent 'mtcs'"),
        (
            ["--agent", "mcts", "--agent", "alphabeta",
             "--vary", "depth=1,2", "--vary", "c=1,2", "--vary", "x=1,2"],
            "3 --vary for 2 --agent",
        ),
        (["--agent", "mcts", "--vary", "c=1,2", "--plot", "curve.txt"], "must end in .svg or .png"),
        (["--agent", "mcts", "--vary", "c=1,2", "--plot", "/no/such/folder/c.svg"], "no folder"),
        (["--agent", "mcts", "--vary", "c=1,2", "--games", "4", "--positions", "all"], "two modes"),
        (["--agent", "mcts", "--vary", "c=1,2", "--positions", "some"], "--positions"),
        (["--agent", "mcts", "--vary", "c=1,2", "--games", "4", "--opponent", "nobody"],
         "unknown agent"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_before_any_work(tmp_path, args, words):
    # No book exists at --db: an error about the input proves nothing was read or run.
    missing = str(tmp_path / "absent.sqlite")
    result = run("curve", "--db", missing, *args)
    assert result.exit_code == 2, result.output
    assert words in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert not os.path.exists(missing)


@pytest.mark.parametrize(
    "agent, vary, words",
    [
        ("heuristic", "rules=0,6", "heuristic rules must be 0 to 5, got 6"),
        ("mcts", "iterations=0,10", "at least 1"),
    ],
)
def test_values_the_agent_refuses_are_reported_before_any_audit(book_3x3, agent, vary, words):
    started = time.perf_counter()
    result = run("curve", "--db", book_3x3, "--agent", agent, "--vary", vary, "--seeds", "50")
    assert result.exit_code == 2 and words in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert time.perf_counter() - started < 5  # 50 seeds of audits would take far longer


def test_unwritable_plot_folder(book_3x3, tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root may write anywhere")
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    result = run("curve", "--db", book_3x3, "--agent", "mcts", "--vary", "c=1,2",
                 "--plot", str(folder / "c.svg"))  # fmt: skip
    assert result.exit_code == 2 and "not writable" in result.output


def test_parse_vary_and_point_specs():
    assert parse_vary("Iterations=10, 30,100") == ("iterations", ("10", "30", "100"), (10, 30, 100))
    assert point_spec("mcts", "iterations", "10") == "mcts:iterations=10"
    assert point_spec("mcts:c=2", "iterations", "10") == "mcts:c=2,iterations=10"
    assert point_spec("openspiel:mcts", "simulations", "5") == "openspiel:mcts:simulations=5"
    assert (
        point_spec("openspiel:mcts:uct_c=1", "simulations", "5")
        == "openspiel:mcts:uct_c=1,simulations=5"
    )
    assert point_spec("py:examples.plugin_agent:make", "x", "1") == (
        "py:examples.plugin_agent:make,x=1"
    )
    plan = plan_curve("alphabeta", parse_vary("depth=1,3"))
    assert [p.spec for p in plan.points] == ["alphabeta:depth=1", "alphabeta:depth=3"]
    with pytest.raises(AgentSpecError):
        plan_curve("random", parse_vary("depth=1,3"))
    with pytest.raises(CurveError):
        parse_vary("depth=1,inf")


def test_interval():
    assert interval([0.5]) == (0.5, 0.5, 0.5)
    mean, low, high = interval([0.8, 0.9, 1.0])
    # sd 0.1, t(2) = 4.303: half width 0.1 * 4.303 / sqrt(3) = 0.2484, clipped at 1.
    assert mean == pytest.approx(0.9)
    assert low == pytest.approx(0.9 - 0.24844, abs=1e-4) and high == 1.0
    assert interval([0.7, 0.7, 0.7]) == pytest.approx((0.7, 0.7, 0.7))


# -- Ctrl-C ----------------------------------------------------------------------------------


def test_ctrl_c_writes_nothing(book_3x3, tmp_path):
    plot = tmp_path / "out" / "curve.svg"
    plot.parent.mkdir()
    stderr = tmp_path / "stderr"
    with open(stderr, "w") as err_file:
        process = subprocess.Popen(
            [sys.executable, "-c", "from ttt_solve.cli.main import main; main()", "curve",
             "--db", book_3x3, "--agent", "mcts", "--vary", "iterations=20000,30000",
             "--seeds", "5", "--plot", str(plot)],
            stdout=subprocess.PIPE, stderr=err_file, text=True, start_new_session=True,
        )  # fmt: skip
    try:
        # The progress bar's label shows once the audits have run for a second: well into the
        # work, far from its end (ten audits of 20,000 or 30,000 iterations a move).
        deadline = time.monotonic() + 120
        while "curve" not in stderr.read_text() and time.monotonic() < deadline:
            assert process.poll() is None, stderr.read_text()
            time.sleep(0.1)
        os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
        interrupted = time.perf_counter()
        out, _ = process.communicate(timeout=60)
        # Promptly: the workers end at once, the queued work is dropped.
        assert time.perf_counter() - interrupted < 20
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    err = stderr.read_text()
    assert process.returncode == 130, err
    assert "interrupted: nothing was written" in err
    assert out == ""
    assert list(plot.parent.iterdir()) == []


def test_plot_without_matplotlib_is_one_line_before_any_work(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the plot extra were missing
    missing = str(tmp_path / "absent.sqlite")
    for command in (
        ["curve", "--agent", "mcts", "--vary", "c=1,2"],
        ["audit", "--agent", "mcts"],
    ):
        result = run(*command, "--db", missing, "--plot", str(tmp_path / "c.svg"))
        assert result.exit_code == 2, result.output
        assert "pip install 'ttt-solve[plot]'" in result.output
        assert len(result.output.strip().splitlines()) == 1
    assert not os.path.exists(missing)
