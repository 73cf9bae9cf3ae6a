"""Agents that try to take the tool down with them: a ``py:`` plug-in that calls ``sys.exit``
or ``os._exit`` or answers ``True``, and an engine whose child leaves its process group. Each is
that move's failure in an audit (which goes on), reported in one line where a command cannot go
on (or killed), never a silent end of the command.

The plug-ins run in a real ``ttt`` process: ``os._exit`` would end the test run itself. They run
with ``timeout=none``, in the command's own process, which is what these tests hold: a
plug-in given a time limit runs in a process of its own (``tests/test_hostile_agents.py``)."""

from __future__ import annotations

import multiprocessing
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import running

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "engines" / "hostile_engine.py"


class _Agent:
    """A plug-in's agent whose move is ``move(position)``."""

    def __init__(self, move) -> None:  # noqa: ANN001
        self.move = move

    def select_move(self, position):  # noqa: ANN001, ANN201
        return self.move(position)


def _exit_hard(position):  # noqa: ANN001, ANN202
    os._exit(0)


def _exit_hard_inside_a_try(position):  # noqa: ANN001, ANN202
    try:
        os._exit(0)
    except Exception:  # noqa: BLE001 - what a careless plug-in does
        return 0


_ENDINGS = {
    "exits": lambda position: sys.exit(3),
    "exits_hard": _exit_hard,
    "exits_hard_inside_a_try": _exit_hard_inside_a_try,
}


def ends(rng, how: str, in_a_worker: bool = False):  # noqa: ANN001, ANN201 - a py: factory
    """An agent that ends its process ``how`` (a name of :data:`_ENDINGS`); ``in_a_worker``:
    only in a pool's worker, after playing slowly enough in the first process for the audit
    to start its pool."""
    end = _ENDINGS[how]
    if not in_a_worker:
        return _Agent(end)

    def move(position):  # noqa: ANN001, ANN202
        if multiprocessing.parent_process() is not None:
            return end(position)
        time.sleep(0.005)
        return position.legal_moves()[0]

    return _Agent(move)


def answers_true(rng):  # noqa: ANN001, ANN201 - a py: factory
    return _Agent(lambda position: True)


def exits_when_made(rng):  # noqa: ANN001, ANN201 - a py: factory
    sys.exit(4)


def forks(rng):  # noqa: ANN001, ANN201 - a py: factory
    """An agent whose every move forks two processes that end with ``os._exit(7)`` and
    ``sys.exit(8)``: theirs to end as they ask, not to report (nor to go on running ttt)."""

    def move(position):  # noqa: ANN001, ANN202
        statuses = []
        for end in (lambda: os._exit(7), lambda: sys.exit(8)):
            child = os.fork()
            if child == 0:
                end()
            statuses.append(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]))
        if statuses != [7, 8]:
            raise AssertionError(f"the forked processes ended with {statuses}")
        return position.legal_moves()[0]

    return _Agent(move)


def ttt(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """A real ``ttt`` process, run from the repository (where ``tests`` imports)."""
    return subprocess.run(
        [sys.executable, "-c", "from ttt_solve.cli.main import main; main()", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def assert_failed_moves(result: subprocess.CompletedProcess, *words: str) -> None:
    """An audit that finished (exit 0, nothing on stderr) with failures holding every one of
    ``words`` in its report."""
    assert result.returncode == 0, (result.returncode, result.stdout[-500:], result.stderr)
    assert not result.stderr, result.stderr
    failures = [line for line in result.stdout.splitlines() if line.startswith("#")]
    for word in words:
        assert any(word in line for line in failures), (word, result.stdout[-1000:])


def assert_reported(result: subprocess.CompletedProcess, *words: str) -> None:
    """Exit 2 and one line on stderr holding every one of ``words``."""
    assert result.returncode == 2, (result.returncode, result.stdout[-500:], result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.mark.parametrize(
    "how, called",
    [
        ("exits", "sys.exit(3)"),
        ("exits_hard", "os._exit(0)"),
        ("exits_hard_inside_a_try", "os._exit(0)"),
    ],
)
@pytest.mark.parametrize("in_a_worker", [False, True], ids=["in process", "in a pool"])
def test_a_plugin_that_ends_the_process_fails_that_move(book_3x3, how, called, in_a_worker):
    spec = (
        f"py:tests.test_containment:ends,how={how},in_a_worker={str(in_a_worker).lower()},"
        "timeout=none"
    )
    result = ttt("audit", "--agent", spec, "--db", book_3x3, "--jobs", "2", "-q")
    assert_failed_moves(result, f"crash: {spec} called {called}, which would end ttt")
    if in_a_worker:  # the moves made in the first process are graded
        assert "by ply:" in result.stdout
    else:
        assert re.search(r"accuracy \(value kept\) +│ 0\.00%", result.stdout), result.stdout
        assert re.search(r"moves graded +│ 0 ", result.stdout), result.stdout


def test_a_plugin_that_ends_the_process_in_a_game_is_reported(book_3x3):
    spec = "py:tests.test_containment:ends,how=exits,timeout=none"
    result = ttt("play", "--agent", spec, "--as", "o", "--db", book_3x3)
    assert_reported(result, spec, "crash", "called sys.exit(3), which would end ttt")


def test_a_plugin_that_ends_the_process_as_it_is_made_is_reported(book_3x3):
    spec = "py:tests.test_containment:exits_when_made"
    result = ttt("audit", "--agent", spec, "--db", book_3x3, "-q")
    assert_reported(result, spec, "exits_when_made(rng) called sys.exit(4)")


def test_a_plugin_module_that_exits_as_it_loads_is_reported(book_3x3, tmp_path):
    plugin = tmp_path / "quits.py"
    plugin.write_text("import sys\nsys.exit(5)\n")
    spec = f"py:{plugin}:make"
    result = ttt("tournament", "--agent", spec, "--agent", "random", "--db", book_3x3)
    assert_reported(result, f"loading {str(plugin)!r} called sys.exit(5)")


def test_true_is_no_cell(book_3x3):
    spec = "py:tests.test_containment:answers_true,timeout=none"
    result = ttt("audit", "--agent", spec, "--positions", "sample:3", "--db", book_3x3, "-q")
    assert_failed_moves(result, f"illegal: {spec} returned True, a bool, not a move")
    result = ttt("play", "--agent", spec, "--as", "o", "--db", book_3x3)
    assert_reported(result, spec, "illegal", "returned True, a bool, not a move")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")
def test_a_plugins_own_processes_end_as_they_ask(book_3x3):
    spec = "py:tests.test_containment:forks,timeout=none"
    result = ttt("audit", "--agent", spec, "--positions", "sample:3", "--db", book_3x3, "-q")
    assert result.returncode == 0, result.stderr
    assert "3 positions asked" in result.stdout and not result.stderr
    assert re.search(r"moves graded +│ 3 ", result.stdout), result.stdout


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="finds processes through /proc")
def test_an_engines_child_that_leaves_its_process_group_is_killed_too(book_3x3, tmp_path):
    pid_file = tmp_path / "escaped.pid"
    spec = f"cmd:{sys.executable} {HOSTILE} --escape {pid_file}"
    result = ttt("audit", "--agent", spec, "--positions", "sample:3", "--db", book_3x3, "-q")
    assert result.returncode == 0, result.stderr
    escaped = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and running(escaped):
        time.sleep(0.05)
    if running(escaped):
        os.kill(escaped, 9)
        pytest.fail("the engine's escaped child outlived the command")
