"""``cmd:`` agents and the line protocol: the reference engine, and engines broken on purpose.

The broken engine (tests/engines/broken_engine.py) fails in every position with a given number
of stones, so the expected failures follow from the 3x3 counts up to symmetry: canonical
non-terminal positions with 0, 1, 2 and 3 stones number 1, 3, 12 and 38 and stand for 1, 9, 72
and 252 reachable positions (docs/conventions.md); 627 canonical positions stand for 4,520 in all.
"""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from ttt_solve.agents import engine as engine_module
from ttt_solve.agents.audit import Truth, summarize
from ttt_solve.agents.engine import (
    EngineAgent,
    EngineError,
    EngineFailure,
    command_words,
    split_command,
)
from ttt_solve.agents.grading import audit_games, audit_positions
from ttt_solve.agents.match import play_game
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.spec import make_agent, parse_spec
from ttt_solve.book.reader import open_book
from ttt_solve.cli.main import ttt
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "examples" / "reference_engine.py"
BROKEN = ROOT / "tests" / "engines" / "broken_engine.py"
R3 = Rules(3, 3, 3)
CANONICAL_BY_PLY = {0: 1, 1: 3, 2: 12, 3: 38}
WEIGHT_BY_PLY = {0: 1, 1: 9, 2: 72, 3: 252}


def engine_spec(script: Path, args: tuple[str, ...], timeout: float | None) -> str:
    command = " ".join([sys.executable, str(script), *args])
    return f'cmd:"{command}"' + (f",timeout={timeout}" if timeout is not None else "")


def reference(*args: str) -> str:
    return engine_spec(REFERENCE, args, None)


def broken(*args: str, timeout: float | None = None) -> str:
    return engine_spec(BROKEN, args, timeout)


def gone(pid: int) -> bool:
    """Whether a process has ended (a zombie nobody reaped counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def pids(pidfile: Path, role: str = "engine") -> list[int]:
    return [
        int(line.split()[1])
        for line in pidfile.read_text().splitlines()
        if line.startswith(role + " ")
    ]


def wait_until(check, seconds: float = 5.0) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


@pytest.fixture()
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shorter grace and start-up limits, so that timeouts cost little test time."""
    monkeypatch.setattr(engine_module, "GRACE_SECONDS", 0.2)
    monkeypatch.setattr(engine_module, "STARTUP_SECONDS", 2.0)


@pytest.fixture(scope="module")
def truth(book_3x3: str):  # noqa: ANN201
    with open_book(book_3x3) as book:
        yield Truth(book, R3)


# -- the spec ----------------------------------------------------------------------------------


def test_command_and_options_split_at_the_first_comma_outside_quotes():
    assert split_command('"./e --w a,b",timeout=2') == ('"./e --w a,b"', "timeout=2")
    assert split_command("./e --level 3") == ("./e --level 3", "")
    assert command_words('"./e --level 3"') == ["./e", "--level", "3"]
    assert command_words("./e --level 3") == ["./e", "--level", "3"]
    assert command_words("\"'/opt/my engine/run' -q\"") == ["/opt/my engine/run", "-q"]
    spec = parse_spec('cmd:"./my-engine --level 3",timeout=2,book=true')
    assert spec.name == "cmd" and spec.external and spec.needs_book
    assert spec.params == {"argv": ("./my-engine", "--level", "3"), "timeout": 2.0, "book": True}
    assert parse_spec("CMD:./e").params["timeout"] == engine_module.DEFAULT_TIMEOUT


def test_a_missing_program_is_an_engine_error():
    with pytest.raises(EngineError, match="cannot start '/no/such/engine': No such file"):
        make_agent("cmd:/no/such/engine --x", random.Random(0)).select_move(Position.start(R3))


# -- the reference engine ----------------------------------------------------------------------


def test_the_reference_engine_imports_nothing_of_the_project_and_runs_isolated(truth):
    source = REFERENCE.read_text()
    assert not re.search(r"^\s*(from|import)\s+(agents|solver|book|cli)\b", source, re.M)
    # -I: no current directory, no PYTHONPATH: only the standard library is at hand.
    agent = make_agent(f'cmd:"{sys.executable} -I {REFERENCE}"', random.Random(0))
    with agent:
        assert agent.select_move(Position.parse("xx./oo./...", R3)) == 2
        assert agent.engine_id == "reference-engine 1.0"


def test_the_exchange_in_protocol_md_is_what_the_reference_engine_says():
    text = (ROOT / "docs" / "PROTOCOL.md").read_text()
    block = text.split("```\n> ttt 1", 1)[1].split("```", 1)[0]
    lines = ("> ttt 1" + block).strip().splitlines()
    sent = "".join(line[2:] + "\n" for line in lines if line.startswith("> "))
    expected = [line[2:] for line in lines if line.startswith("< ")]
    answer = subprocess.run(
        [sys.executable, str(REFERENCE)],
        input=sent,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert answer.stdout.splitlines() == expected


def test_the_reference_engine_is_perfect_on_every_3x3_position(truth):
    records, ungraded, failures = audit_positions(AgentMaker(reference()), truth, per_class=True)
    summary = summarize(records, ungraded, failures)
    assert (summary.graded, summary.moves, summary.perfection) == (627, 4520, 1.0)
    assert failures == [] and summary.failures == dict.fromkeys(engine_module.FailureKind, 0)


def test_seeds_make_engine_audits_reproducible(truth):
    def moves(seed: int) -> list[int]:
        records, _, _ = audit_positions(AgentMaker(reference()), truth, sample=60, seed=seed)
        return [r.cell for r in records]

    assert moves(1) == moves(1)
    assert moves(1) != moves(2)  # the same positions, ties broken otherwise


def test_one_engine_follows_a_change_of_rules(book_small):
    with open_book(book_small) as book:
        with make_agent(reference(), random.Random(0)) as agent:
            for rules in (Rules(3, 3, 3), Rules(3, 4, 3), Rules(3, 3, 3)):
                truth = Truth(book, rules)
                for text in {
                    3: ["x.o/.x./...", "xo./.x./o.."],
                    4: ["xo../.x../....", "x.o./.xo./...."],
                }[rules.cols]:
                    position = Position.parse(text, rules)
                    assert agent.select_move(position) in truth.best_moves(position)
            assert agent.starts == 1


def test_games_against_the_reference_engine(truth):
    records, _, results, failures = audit_games(
        AgentMaker("heuristic"), AgentMaker(reference()), truth, games=4
    )
    assert failures == [] and all(r.failure is None for r in results)
    assert all(r.winner is None for r in results)  # neither loses 3x3


# -- broken engines ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, ply, reported, restarts",
    [
        ("illegal", 1, "illegal", 0),
        ("offboard", 2, "illegal", 0),
        ("timeout", 1, "timeout", 3),
        ("slow", 1, "timeout", 3),
        ("close", 1, "crash", 3),
        ("garbage", 2, "garbage", 12),
        ("binary", 2, "garbage", 12),
        ("longline", 1, "garbage", 3),
        ("crash", 2, "crash", 12),
        ("segv", 1, "crash", 3),
    ],
)
def test_each_failure_is_counted_with_its_position_and_the_audit_goes_on(
    truth, quick, tmp_path, kind, ply, reported, restarts
):
    pidfile = tmp_path / "pids"
    # A short limit only where it is the point: elsewhere a busy machine must not matter.
    spec = broken(
        f"--fail {kind}:{ply}",
        f"--pidfile {pidfile}",
        timeout=0.2 if reported == "timeout" else None,
    )
    records, ungraded, failures = audit_positions(AgentMaker(spec), truth, per_class=True)
    summary = summarize(records, ungraded, failures)
    assert summary.failures[reported] == WEIGHT_BY_PLY[ply]
    assert sum(summary.failures.values()) == WEIGHT_BY_PLY[ply]
    assert summary.failed == CANONICAL_BY_PLY[ply] and ungraded == 0
    assert {f.ply for f in failures} == {ply} and {f.kind for f in failures} == {reported}
    assert all(f.spec == spec and f.detail for f in failures)
    # Every other position was graded: nothing else was lost.
    assert summary.graded == 627 - CANONICAL_BY_PLY[ply]
    assert summary.moves == 4520 - WEIGHT_BY_PLY[ply]
    assert {r.position for r in records}.isdisjoint(f.position for f in failures)
    # Restarted once per failure (not after an illegal move), and no engine is left running.
    started = pids(pidfile)
    assert len(started) == 1 + restarts
    assert all(gone(pid) for pid in started)


def test_failure_details_quote_what_happened(quick):
    position = Position.parse("x../.../...", R3)
    expected = {
        "illegal": "played a1, which is taken",
        "offboard": "played z9, off the 3x3 board",
        "timeout": "no move within 0.2 s",
        "garbage": "answered 'I think b2 is nice' (expected move CELL)",
        "binary": "not UTF-8",
        "longline": "longer than 4096 bytes",
        "crash": "exited with status 3; last words on stderr: "
        "'broken engine: ZeroDivisionError at ply 1'",
        "segv": "killed by SIGSEGV",
    }
    for kind, words in expected.items():
        spec = broken(f"--fail {kind}:1", timeout=0.2 if kind == "timeout" else None)
        with make_agent(spec, random.Random(0)) as agent:
            with pytest.raises(EngineFailure) as caught:
                agent.select_move(position)
            assert words in caught.value.detail and caught.value.position == position
            assert f"in {position}" in str(caught.value)
            assert agent.select_move(Position.start(R3)) == 0  # and it plays on


def test_an_engine_that_dies_after_answering_is_a_crash_at_the_next_request(truth, tmp_path):
    pidfile = tmp_path / "pids"
    spec = broken("--fail exit:0", f"--pidfile {pidfile}")
    _, _, failures = audit_positions(AgentMaker(spec), truth, per_class=True)
    # Ply 0 is the first request: the engine answers and exits; the first ply-1 position
    # finds it dead. Every time the same.
    assert [(f.kind, f.ply) for f in failures] == [("crash", 1)]
    assert "exited with status 0" in failures[0].detail
    assert len(pids(pidfile)) == 2 and all(gone(pid) for pid in pids(pidfile))


def test_all_kinds_in_one_audit(truth, quick, tmp_path):
    pidfile = tmp_path / "pids"
    spec = broken(
        "--fail illegal:0 --fail timeout:1 --fail crash:2 --fail garbage:3",
        f"--pidfile {pidfile}",
        timeout=0.5,
    )
    records, ungraded, failures = audit_positions(AgentMaker(spec), truth, per_class=True)
    summary = summarize(records, ungraded, failures)
    assert summary.failures == {"illegal": 1, "timeout": 9, "garbage": 252, "crash": 72}
    assert summary.graded == 627 - 54 and summary.moves == 4520 - 334
    assert len(pids(pidfile)) == 1 + 3 + 12 + 38


def test_a_failure_forfeits_the_game_and_the_moves_before_it_are_graded(truth, tmp_path):
    # The engine fails with 3 stones on the board: O's second move, so only as O.
    records, ungraded, results, failures = audit_games(
        AgentMaker(broken("--fail crash:3")),
        AgentMaker("random"),
        truth,
        games=6,
    )
    assert [r.failure for r in results] == [None, "crash"] * 3
    assert [r.forfeited_by for r in results] == [None, "agent"] * 3
    assert all(r.outcome.value == "loss" and r.winner == "x" for r in results[1::2])
    assert [len(r.moves) for r in results[1::2]] == [3, 3, 3]
    assert len(failures) == 3 and all(f.ply == 3 and f.weight == 1 for f in failures)
    as_o = [r for r in records if r.position.to_move == "o"]
    assert len(as_o) == 3 and all(r.ply == 1 for r in as_o)
    assert summarize(records, ungraded, failures).failures["crash"] == 3


@pytest.mark.parametrize(
    "args, words",
    [
        (
            ["--start crash"],
            ["failed its handshake", "crash", "exited with status 4", "crashing at start"],
        ),
        (["--start garbage"], ["failed its handshake", "garbage", "'hello there'"]),
        (["--start noid"], ["failed its handshake", "without id name and id version"]),
        (["--start silent"], ["failed its handshake", "timeout"]),
        (["--start refuse"], ["refuses protocol 1", "I only speak protocol 0"]),
        (["--start norules"], ["cannot play 3x3 k=3", "boards are too big for me"]),
    ],
)
def test_an_engine_that_cannot_start_stops_the_audit(truth, quick, args, words):
    with pytest.raises(EngineError) as caught:
        audit_positions(AgentMaker(broken(*args)), truth)
    for word in words:
        assert word in str(caught.value)


def test_an_engine_that_fails_to_restart_three_times_stops_the_audit(truth, quick, tmp_path):
    pidfile = tmp_path / "pids"
    spec = broken("--fail crash:1 --start crash --start-after 1", f"--pidfile {pidfile}")
    with pytest.raises(EngineError, match="failed to restart 3 times in a row"):
        audit_positions(AgentMaker(spec), truth, per_class=True)
    assert all(gone(pid) for pid in pids(pidfile))


# -- processes ---------------------------------------------------------------------------------


def test_the_whole_process_group_is_killed(quick, tmp_path):
    pidfile = tmp_path / "pids"
    agent = make_agent(
        broken("--fail timeout:0", f"--pidfile {pidfile}", "--grandchild", timeout=0.5),
        random.Random(0),
    )
    with pytest.raises(EngineFailure):
        agent.select_move(Position.start(R3))
    assert wait_until(lambda: all(gone(p) for p in pids(pidfile) + pids(pidfile, "grandchild")))
    agent.select_move(Position.parse("x../.../...", R3))  # a new engine, a new grandchild
    agent.close()
    assert wait_until(lambda: all(gone(p) for p in pids(pidfile) + pids(pidfile, "grandchild")))
    assert len(pids(pidfile)) == 2


def run_audit_process(spec: str, db: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from ttt_solve.cli.main import main; main()",
            "audit",
            "--agent",
            spec,
            "--db",
            db,
            "-q",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill"])
def test_no_engine_outlives_an_interrupted_audit(book_3x3, tmp_path, how):
    pidfile = tmp_path / "pids"
    args = [f"--fail timeout:{ply}" for ply in range(9)] + [f"--pidfile {pidfile}"]
    if how == signal.SIGINT:
        args.append("--grandchild")
    audit = run_audit_process(broken(*args, timeout=60), book_3x3)
    try:
        assert wait_until(lambda: pidfile.exists() and pids(pidfile), 20)
        time.sleep(0.3)  # past the handshake: waiting for a move
        audit.send_signal(how)
        _, err = audit.communicate(timeout=20)
    finally:
        audit.kill()
    everyone = pids(pidfile) + pids(pidfile, "grandchild")
    assert wait_until(lambda: all(gone(pid) for pid in everyone)), everyone
    if how == signal.SIGINT:
        assert audit.returncode == 130 and "interrupted" in err


def test_cli_audit_tournament_and_play_with_engines(book_3x3):
    runner = CliRunner()
    result = runner.invoke(ttt, ["audit", "--agent", reference(), "--db", book_3x3, "--json", "-q"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["moves"], data["perfection"]) == (4520, 1.0)

    result = runner.invoke(
        ttt, ["tournament", "--agents", f"{reference()},heuristic", "--games", "2", "--json", "-q"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["pairings"][0]["draws"] == 2

    result = runner.invoke(
        ttt,
        ["play", "--agent", reference(), "--db", book_3x3, "--seed", "1"],
        input="a1\nb1\nquit\n",
    )
    assert result.exit_code == 0, result.output
    assert "graded against the book" in result.output


def test_cli_tournament_forfeits_and_play_stops_with_one_line(book_3x3):
    spec = broken("--fail garbage:1")
    result = CliRunner().invoke(
        ttt, ["tournament", "--agents", f"random,{spec}", "--games", "2", "--json", "-q"]
    )
    assert result.exit_code == 0, result.output
    (pairing,) = json.loads(result.output)["pairings"]
    # The engine answers garbage at ply 1: as O, every game; as X, never.
    assert pairing["b_forfeits"] == 1 and pairing["a_wins"] >= 1
    result = CliRunner().invoke(ttt, ["play", "--agent", spec, "--db", book_3x3], input="b2\n")
    assert result.exit_code == 2, result.output
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and "garbage in" in error[0] and "I think b2 is nice" in error[0]


def test_play_game_raises_a_failure_unless_told_to_stop(quick):
    x = make_agent("random", random.Random(0))
    with make_agent(broken("--fail garbage:1"), random.Random(0)) as o:
        with pytest.raises(EngineFailure):
            play_game(x, o, R3)
        record = play_game(x, o, R3, stop_on_failure=True)
    assert len(record.moves) == 1 and record.failure.kind == "garbage"
    assert isinstance(o, EngineAgent) and o.process is None
