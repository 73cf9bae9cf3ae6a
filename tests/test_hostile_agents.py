"""Agents that defy their time limit or try to end, abort or move the session that grades them
(:mod:`tests.hostile_agents`), graded with a time limit through the notebook's ``ttt.audit``
and through a ``py:`` plug-in on ``ttt audit``'s command line. Every one must give an audit
that finishes, each of its moves that agent's failure of the right kind, and a caller that goes
on where it was.

Each runs in a process of its own, bounded by this test's timeout: in the test's own process,
an agent that cannot be stopped would hang the test run, and one that ends its process would
end it."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

import ttt_solve as ttt
from tests.support import running
from ttt_solve.agents import confinement
from ttt_solve.agents.engine import EngineFailure
from ttt_solve.book.reader import open_book
from ttt_solve.solver.rules import Rules

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 0.3
"""The agents' time limit per move, in seconds."""
POSITIONS = 3
"""Positions each audit asks about (a sample, up to symmetry)."""
BOUND = 60
"""Seconds a whole audit may take before the test calls it hung (it takes a few)."""

EXPECTED = {
    "sleeps_through_everything": ("timeout", f"no move within {LIMIT:g} s"),
    "answers_an_endless_index": ("timeout", f"no move within {LIMIT:g} s"),
    "cancels_the_timer": ("timeout", f"no move within {LIMIT:g} s"),
    "ignores_the_alarm": ("timeout", f"no move within {LIMIT:g} s"),
    "exits_from_a_thread": ("crash", "ended its process before answering, with status 0"),
    "raises_generator_exit": ("crash", "raised GeneratorExit"),
    "raises_its_own_base_exception": ("crash", "raised Mine: not an Exception"),
    "raises_keyboard_interrupt": ("crash", "raised KeyboardInterrupt"),
}
"""Each hostile agent's failure: its kind and words of its detail."""

CLI = "from ttt_solve.cli.main import main; main()"
NOTEBOOK = """
import json, os, sys
import ttt_solve as ttt
from tests import hostile_agents

name, db, positions = sys.argv[1], sys.argv[2], int(sys.argv[4])
limit = None if sys.argv[3] == "None" else float(sys.argv[3])
here = os.getcwd()
report = ttt.audit(
    getattr(hostile_agents, name), "3x3k3", db=db, board="flat", positions=positions,
    timeout=limit,
)
failed = [[f.kind, f.detail] for f in report.failures]
print(json.dumps({"failed": failed, "cwd": os.getcwd(), "was": here}))
"""


def python(*args: str, what: str) -> subprocess.CompletedProcess:
    """A Python of its own, run from the repository (where ``tests`` imports), bounded by
    :data:`BOUND`: past it the test fails saying ``what`` still ran. It runs in a session of
    its own, so that an agent that signals its caller's process group reaches that Python's,
    never the test run's."""
    try:
        return subprocess.run(
            [sys.executable, *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=BOUND,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} still ran after {BOUND} s")


def notebook(name: str, db: str, limit: float | None = LIMIT) -> dict:
    """``ttt.audit`` of a hostile agent, in a Python of its own; what it reported."""
    what = f"ttt.audit of {name} with timeout={limit}"
    result = python("-c", NOTEBOOK, name, db, str(limit), str(POSITIONS), what=what)
    assert result.returncode == 0, (result.returncode, result.stdout[-2000:], result.stderr)
    lines = result.stdout.strip().splitlines()
    assert lines, f"the session ended silently (status {result.returncode}): {result.stderr}"
    return json.loads(lines[-1])


def command_line(*args: str) -> subprocess.CompletedProcess:
    """A real ``ttt`` process."""
    return python("-c", CLI, *args, what=f"ttt {' '.join(args)}")


def spec_of(name: str, limit: float = LIMIT) -> str:
    return f"py:tests.hostile_agents:{name},board=flat,timeout={limit:g}"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_hostile_agent_in_a_notebook_fails_its_moves_and_the_audit_goes_on(book_3x3, name):
    kind, words = EXPECTED[name]
    outcome = notebook(name, book_3x3)
    assert outcome["failed"], outcome
    for failure_kind, detail in outcome["failed"]:
        assert failure_kind == kind and words in detail, (failure_kind, detail)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_hostile_plugin_fails_its_moves_and_the_audit_goes_on(book_3x3, name):
    kind, words = EXPECTED[name]
    spec = spec_of(name)
    result = command_line(
        "audit", "--agent", spec, "--db", book_3x3, "--positions", f"sample:{POSITIONS}", "--json"
    )
    assert result.returncode == 0, (result.returncode, result.stdout[-2000:], result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    failed = json.loads(result.stdout)["failed"]
    assert failed, result.stdout
    for failure in failed:
        assert failure["kind"] == kind and words in failure["detail"], failure
        assert failure["detail"].startswith(spec), failure


def test_a_plugin_given_no_time_limit_has_the_default_one(book_3x3):
    spec = "py:tests.hostile_agents:sleeps_through_everything,board=flat"
    result = command_line(
        "audit", "--agent", spec, "--db", book_3x3, "--positions", "sample:1", "--json"
    )
    assert result.returncode == 0, (result.returncode, result.stdout[-2000:], result.stderr)
    (failure,) = json.loads(result.stdout)["failed"]
    assert failure["kind"] == "timeout" and "no move within 10 s" in failure["detail"], failure


def test_an_agents_chdir_stays_in_its_own_process(book_3x3):
    outcome = notebook("changes_directory", book_3x3, limit=10)
    assert outcome["cwd"] == outcome["was"] == str(ROOT), outcome
    assert outcome["failed"] == [], outcome  # and its moves are graded


# -- agents without a time limit, in the caller's process -------------------------------------


def test_an_agents_keyboard_interrupt_in_a_notebook_is_its_crash(book_3x3):
    outcome = notebook("raises_keyboard_interrupt", book_3x3, limit=None)
    assert outcome["failed"], outcome
    for kind, detail in outcome["failed"]:
        assert kind == "crash" and "raised KeyboardInterrupt, though no Ctrl-C came" in detail


def test_an_agents_chdir_in_the_callers_process_is_undone_after_its_move(book_3x3):
    outcome = notebook("changes_directory", book_3x3, limit=None)
    assert outcome["cwd"] == outcome["was"] == str(ROOT), outcome
    assert outcome["failed"] == [], outcome


def console(*args: str) -> subprocess.CompletedProcess:
    """A real ``ttt`` process started as its console script is, Ctrl-C handling included."""
    code = "from ttt_solve.cli.entry import ttt; ttt()"
    return python("-c", code, *args, what=f"ttt {' '.join(args)}")


def plugin_audit(book: str, name: str) -> subprocess.CompletedProcess:
    """``ttt audit`` of the agent ``name`` as a ``py:`` plug-in with no time limit."""
    spec = f"py:tests.hostile_agents:{name},board=flat,timeout=none"
    return console(
        "audit", "--agent", spec, "--db", book, "--positions", f"sample:{POSITIONS}", "--json"
    )


def test_a_plugins_keyboard_interrupt_is_its_crash_and_the_audit_goes_on(book_3x3):
    result = plugin_audit(book_3x3, "raises_keyboard_interrupt")
    assert result.returncode == 0, (result.returncode, result.stdout[-2000:], result.stderr)
    failed = json.loads(result.stdout)["failed"]
    assert len(failed) == POSITIONS, failed
    for failure in failed:
        assert failure["kind"] == "crash", failure
        assert "raised KeyboardInterrupt, though no Ctrl-C came" in failure["detail"], failure


CTRL_C = ["presses_ctrl_c", "swallows_ctrl_c", "swallows_ctrl_c_then_raises"]
"""Agents during whose move a SIGINT comes, as the user's Ctrl-C does."""


@pytest.mark.parametrize("name", CTRL_C)
def test_a_real_ctrl_c_during_a_plugins_move_still_stops_the_run(book_3x3, name):
    result = plugin_audit(book_3x3, name)
    assert result.returncode == 130, (result.returncode, result.stdout[-2000:], result.stderr)
    assert "Traceback" not in result.stderr, result.stderr


STOPPED = """
import sys
import ttt_solve as ttt
from tests import hostile_agents

try:
    ttt.audit(getattr(hostile_agents, sys.argv[1]), "3x3k3", db=sys.argv[2], board="flat",
              positions=1, timeout=None)
except KeyboardInterrupt:
    sys.exit(7)
"""
"""``ttt.audit`` of an agent with no time limit, exit status 7 where Ctrl-C reached it."""


@pytest.mark.parametrize("name", CTRL_C)
def test_a_real_ctrl_c_during_a_notebook_agents_move_reaches_the_caller(book_3x3, name):
    result = python("-c", STOPPED, name, book_3x3, what=f"ttt.audit of {name}")
    assert result.returncode == 7, (result.returncode, result.stdout[-2000:], result.stderr)


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(p) for p in (task / "children").read_text().split()]
    return found


def _started_audit(book: str, limit: float) -> tuple[subprocess.Popen, list[int]]:
    """``ttt audit`` of an agent that sleeps through everything, once it is in the agent's
    first move: its processes then (the agent's, where it has one of its own)."""
    audit = subprocess.Popen(
        [sys.executable, "-c", CLI, "audit"]
        + ["--agent", spec_of("sleeps_through_everything", limit), "--db", book, "-q"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    # the agent's process appears within seconds, but a loaded machine may take its time
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and audit.poll() is None and not _children(audit.pid):
        time.sleep(0.05)
    time.sleep(0.3)  # into its sleep
    return audit, _children(audit.pid)


def _gone(pid: int, seconds: float) -> bool:
    """Whether every thread of ``pid`` has ended within ``seconds``: its main thread is a
    zombie while another still runs its exit, and only then may its parent reap it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and _threads_running(pid):
        time.sleep(0.05)
    return not _threads_running(pid)


def _threads_running(pid: int) -> bool:
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return False
    return any(running(int(thread)) for thread in threads)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="finds processes through /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_signal_ends_the_audit_and_the_agent_with_it(book_3x3, signum):
    """``timeout 30 ttt audit ...`` must end the command however the agent sleeps; and an
    agent's process never outlives the command, even one killed outright."""
    audit, processes = _started_audit(book_3x3, 30)
    assert audit.poll() is None, audit.stderr.read() if audit.stderr else ""
    os.kill(audit.pid, signum)
    try:
        audit.wait(timeout=10)
    except subprocess.TimeoutExpired:
        audit.kill()
        audit.wait()
        pytest.fail(f"ttt audit still ran 10 s after {signal.Signals(signum).name}")
    finally:
        for process in processes:
            if not _gone(process, 10):
                os.kill(process, signal.SIGKILL)
                pytest.fail("the agent's process outlived the command")
    assert processes, "the agent had no process of its own"
    assert audit.returncode in (-signum, 128 + signum), audit.returncode


def _draws(board):  # noqa: ANN001, ANN202 - a notebook's agent drawing from random
    return random.choice([i for i, cell in enumerate(board) if cell == " "])


PLUGIN = "py:examples.plugin_agent:make"


@pytest.mark.parametrize("mode", [{"positions": 60}, {"games": 6}], ids=["positions", "games"])
@pytest.mark.parametrize(
    "agent, board, isolated",
    [(_draws, "flat", {"timeout": 10}), (PLUGIN, None, {"agent": f"{PLUGIN},timeout=10"})],
    ids=["notebook", "plug-in"],
)
def test_a_seeded_agent_plays_the_same_moves_in_its_own_process(
    book_3x3, mode, agent, board, isolated
):
    """The child's moves are the moves of the caller's process, seed for seed: a notebook's
    function drawing from ``random`` (seeded per move), and a plug-in drawing from the
    generator it was made with (seeded per position or game, followed from move to move)."""
    common = {"game": "3x3k3", "db": book_3x3, "board": board, "seed": 4, "jobs": 1, **mode}
    here = ttt.audit(agent, **common)
    child = ttt.audit(**{"agent": agent, **common, **isolated})
    assert here.records == child.records and here.games == child.games
    assert not here.failures and not child.failures


@pytest.mark.slow
def test_a_limited_plugin_runs_in_a_pools_workers_with_its_limit_held(book_3x3):
    """An agent with a time limit no longer keeps the audit in one process: each pool worker
    runs it in a child of its own, killed at the limit there too."""
    spec = spec_of("sleeps_in_a_pool_worker_at_the_last_cell", 0.2)
    result = command_line("audit", "--agent", spec, "--db", book_3x3, "--jobs", "2", "--json")
    assert result.returncode == 0, (result.returncode, result.stdout[-2000:], result.stderr)
    report = json.loads(result.stdout)
    assert report["failed"] and report["graded"], report["failures"]
    # (a move elsewhere may time out too on a machine busy enough: 0.2 s is short)
    assert {f["kind"] for f in report["failed"]} == {"timeout"}
    assert 8 in {f["ply"] for f in report["failed"]}


# -- the agent's process, from the caller's side -----------------------------------------------


def _agent(move, limit: float = 10.0):  # noqa: ANN001, ANN202
    from ttt_solve.agents.adapters import Adapter, CallableAgent

    return CallableAgent(random.Random(0), move, Adapter.make("flat"), timeout=limit)


def _empty_board():  # noqa: ANN202
    from ttt_solve.solver.position import Position
    from ttt_solve.solver.rules import Rules

    return Position(Rules(3, 3, 3), 0, 0)


_TOLD: list[Path] = []
"""A file whose appearance tells the agent below to end its process."""


def _exits_when_told(board):  # noqa: ANN001, ANN202
    import threading

    def wait_then_exit() -> None:
        while not _TOLD[0].exists():
            time.sleep(0.01)
        os._exit(0)

    threading.Thread(target=wait_then_exit, daemon=True).start()
    return board.index(" ")


def test_a_process_gone_between_moves_is_replaced_without_a_failure(tmp_path):
    _TOLD[:] = [tmp_path / "now"]
    agent = _agent(_exits_when_told)
    try:
        assert agent.select_move(_empty_board()) == 0
        first = agent.process.pid
        _TOLD[0].touch()  # its thread ends it, between two moves
        assert first is not None and _gone(first, 10)
        _TOLD[0].unlink()
        assert agent.select_move(_empty_board()) == 0
        assert agent.process.pid not in (None, first)
    finally:
        agent.close()


def _counts(board, calls=[]):  # noqa: ANN001, ANN202, B006 - state an agent keeps
    calls.append(1)
    if len(calls) == 2:
        time.sleep(10)
    return len(calls) - 1


def test_the_agents_state_lives_in_its_process_until_that_process_is_replaced():
    """Moves served by one process see what the agent kept from the ones before; after a
    timeout a fresh process starts from the caller's state, which the agent's never reached."""
    agent = _agent(_counts, limit=1.0)
    try:
        assert agent.select_move(_empty_board()) == 0  # a first call
        with pytest.raises(EngineFailure, match="timeout"):
            agent.select_move(_empty_board())  # a second call (it counted): sleeps, killed
        assert agent.select_move(_empty_board()) == 0  # a fresh process: a first call again
    finally:
        agent.close()


def test_closing_the_agent_or_dropping_it_ends_its_process():
    import gc

    agent = _agent(lambda board: board.index(" "))
    agent.select_move(_empty_board())
    pid = agent.process.pid
    agent.close()
    assert not running(pid)
    agent = _agent(lambda board: board.index(" "))
    agent.select_move(_empty_board())
    pid = agent.process.pid
    del agent
    gc.collect()
    assert not running(pid)


def _raises_a_long_message(board):  # noqa: ANN001, ANN202
    raise ValueError("x" * 1_000_000)


def test_a_long_exception_message_is_a_crash_quoted_in_part():
    agent = _agent(_raises_a_long_message)
    try:
        with pytest.raises(EngineFailure) as failed:
            agent.select_move(_empty_board())
        assert failed.value.kind == "crash" and "raised ValueError: xxx" in failed.value.detail
        assert len(failed.value.detail) <= 2000
    finally:
        agent.close()


# -- what the agent's process can reach of the caller's ----------------------------------------


def _fresh_copy(book: str, folder: Path) -> Path:
    copy = folder / "b.sqlite"
    shutil.copyfile(book, copy)
    return copy


def _intact(book: Path, before: bytes) -> None:
    assert book.read_bytes() == before
    with open_book(str(book)) as opened:
        assert opened.game(Rules(3, 3, 3)).positions == 765


def test_an_agent_writing_to_every_descriptor_leaves_a_notebooks_book_as_it_was(book_3x3, tmp_path):
    book = _fresh_copy(book_3x3, tmp_path)
    before = book.read_bytes()
    notebook("writes_to_every_descriptor", str(book), limit=5)
    _intact(book, before)


def test_an_agent_writing_to_every_descriptor_leaves_the_commands_book_as_it_was(
    book_3x3, tmp_path
):
    book = _fresh_copy(book_3x3, tmp_path)
    before = book.read_bytes()
    spec = spec_of("writes_to_every_descriptor", 5)
    for jobs in ("1", "2"):
        result = command_line(
            "audit", "--agent", spec, "--db", str(book), "--positions", "sample:40",
            "--jobs", jobs, "-q",
        )  # fmt: skip
        assert result.returncode == 0, (result.returncode, result.stdout[-2000:], result.stderr)
    _intact(book, before)


def test_an_agent_in_the_callers_process_cannot_write_the_book_through_its_connection(
    book_3x3, tmp_path
):
    """Grading only reads the book, so it opens it read-only: even an agent that runs in the
    command's own process (no time limit) finds no connection that writes."""
    book = _fresh_copy(book_3x3, tmp_path)
    spec = "py:tests.hostile_agents:writes_through_every_connection,board=flat,timeout=none"
    result = command_line(
        "audit", "--agent", spec, "--db", str(book), "--positions", "sample:3", "--json"
    )
    assert result.returncode == 0, (result.returncode, result.stdout[-2000:], result.stderr)
    with closing(sqlite3.connect(book)) as connection:
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master")}
    assert "written_by_an_agent" not in tables
    assert json.loads(result.stdout)["failed"] == []  # it looked, and answered


@pytest.mark.parametrize("front", ["notebook", "plug-in"])
def test_an_agent_cannot_signal_the_process_that_grades_it(book_3x3, front):
    """SIGTERM to its parent and SIGINT to its parent's process group are refused to the
    agent's process: the audit ends as usual, every move graded."""
    if front == "notebook":
        assert notebook("signals_its_grader", book_3x3, limit=5)["failed"] == []
        return
    result = command_line(
        "audit", "--agent", spec_of("signals_its_grader", 5), "--db", book_3x3,
        "--positions", f"sample:{POSITIONS}", "--json",
    )  # fmt: skip
    assert result.returncode == 0, (result.returncode, result.stdout[-2000:], result.stderr)
    assert json.loads(result.stdout)["failed"] == []


def test_an_agent_past_its_memory_limit_fails_its_move(book_3x3):
    outcome = notebook("takes_four_gigabytes", book_3x3, limit=10)
    assert len(outcome["failed"]) == POSITIONS, outcome
    for kind, detail in outcome["failed"]:
        assert kind == "crash" and "Cannot allocate memory" in detail, detail
        assert "may grow by 2048 MiB; memory= sets that" in detail, detail


def test_a_plugins_memory_limit_is_its_own_parameter(book_3x3):
    for memory, failed in (("256", POSITIONS), ("8192", 0)):
        spec = f"{spec_of('takes_four_gigabytes', 10)},memory={memory}"
        result = command_line(
            "audit", "--agent", spec, "--db", book_3x3, "--positions", f"sample:{POSITIONS}",
            "--json",
        )  # fmt: skip
        assert result.returncode == 0, (result.returncode, result.stdout[-2000:], result.stderr)
        assert len(json.loads(result.stdout)["failed"]) == failed, (memory, result.stdout)


def _pushes_a_ctrl_c_into_the_terminal(board):  # noqa: ANN001, ANN202
    """Answers 0 where the terminal refused the keystroke for want of permission, 1 where it
    refused it for another reason (no terminal), 2 where it took it."""
    import errno
    import fcntl
    import termios

    try:
        fcntl.ioctl(1, termios.TIOCSTI, b"\x03")
    except OSError as error:
        return 0 if error.errno == errno.EPERM else 1
    return 2


@pytest.mark.skipif(not confinement.AVAILABLE, reason="seccomp filters: Linux on x86-64, ARM64")
def test_an_agent_cannot_type_into_the_terminal():
    agent = _agent(_pushes_a_ctrl_c_into_the_terminal)
    try:
        assert agent.select_move(_empty_board()) == 0
    finally:
        agent.close()
