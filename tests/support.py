"""Helpers the test modules share: random positions, refused agent specs, the audit command,
and a test run over several boards."""

from __future__ import annotations

import importlib.util
import os
import random
import subprocess
import time
from types import ModuleType

import pytest
from click.testing import CliRunner, Result

from ttt_solve.agents.spec import AgentSpecError, make_agent
from ttt_solve.cli.main import ttt
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules


def bench_script(name: str) -> ModuleType:
    """The script ``bench/NAME.py`` as a module (bench/ is not a package)."""
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "bench", f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def random_walk(rules: Rules, rng: random.Random, plies: int) -> Position:
    """The position after ``plies`` uniformly random moves from the empty board, or the end of
    the game if that comes first."""
    position = Position.start(rules)
    for _ in range(plies):
        if position.is_terminal:
            break
        position = position.play(rng.choice(position.legal_moves()))
    return position


def refused_spec(spec: str, words: list[str]) -> AgentSpecError:
    """Build an agent from ``spec``, which must fail with a message holding every one of
    ``words``; the error, for further checks."""
    with pytest.raises(AgentSpecError) as caught:
        make_agent(spec, random.Random(0))
    for word in words:
        assert word in str(caught.value), f"{word!r} is not in: {caught.value}"
    return caught.value


def run_audit(*args: str) -> Result:
    """``ttt audit`` with these arguments, run in this process."""
    return CliRunner().invoke(ttt, ["audit", *args])


def run_audit_games(agent: str, db: str, games: int, *args: str) -> Result:
    """``ttt audit`` of ``agent`` in games mode against ``random``, quiet."""
    return run_audit(
        "--agent", agent, "--games", str(games), "--opponent", "random", "--db", db, *args, "-q"
    )


def over_boards(*names: str) -> pytest.MarkDecorator:
    """Run a test once for each game, named as the project prints it (``"4x5 k=4"``, the
    test's id too); the test takes the game as ``rules``."""
    games = []
    for name in names:
        size, k = name.split(" k=")
        games.append(Rules.from_size(size, int(k)))
    assert [rules.name for rules in games] == list(names), "names as Rules.name spells them"
    return pytest.mark.parametrize("rules", games, ids=names)


# -- processes, as Linux's /proc shows them ----------------------------------------------------


def parents() -> dict[int, int]:
    """Every process's parent, by pid."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                found[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return found


def descendants(root: int) -> list[int]:
    """Every process below ``root``: its children, their children..."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents().items():
        children.setdefault(parent, []).append(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead and waiting for its reaper, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def stop_with(
    process: subprocess.Popen[str], signum: int, status: int, said: str, what: str
) -> float:
    """Send ``signum`` to a running ``process`` (its standard error a text pipe) and wait for
    it: it must end with ``status``, no traceback, and a last line starting ``said:``; the
    seconds it took (a minute at most: past it, the process is killed and the test fails)."""
    assert process.poll() is None, f"the {what} ended before the signal"
    process.send_signal(signum)
    sent = time.monotonic()
    try:
        rest = process.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"the {what} went on a minute after the signal") from None
    took = time.monotonic() - sent
    assert process.returncode == status, (process.returncode, rest)
    assert "Traceback" not in rest, rest
    assert rest.strip().splitlines()[-1].startswith(f"{said}: "), rest
    print(f"stopped {took:.2f} s after the signal")
    return took
