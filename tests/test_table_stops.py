"""Stopping the commands that run the tablebase's compiled kernels, in real processes: Ctrl-C
(SIGINT) and SIGTERM at seeded random moments of a table build, an export and a verify of a
table book, ten trials each. Every stop ends in the usual line and status (130, 143), never
"this is a bug" or a crash; a stopped build resumes to the same bytes. And a stop that comes
out of a Numba call as a ``SystemError`` chained two deep is still a stop."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numba
import pytest
from click.testing import CliRunner

from ttt_solve.cli.common import friendly_errors
from ttt_solve.cli.options import command

TTT = [sys.executable, "-c", "from ttt_solve.cli.main import main; main()"]
TTT_SOLVE = [sys.executable, "-c", "from ttt_solve.cli.solve import main; main()"]
TRIALS = 10
STATUS = {signal.SIGINT: (130, "interrupted: "), signal.SIGTERM: (143, "terminated: ")}


@pytest.fixture(scope="module")
def table_book(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A book holding 4x4 k=4 as a tablebase (the default method on 16 cells)."""
    db = str(tmp_path_factory.mktemp("stops") / "b.sqlite")
    subprocess.run(
        [*TTT_SOLVE, "--size", "4", "--win", "4", "--db", db, "-q"],
        check=True,
        capture_output=True,
    )
    return db


def stopped(
    arguments: list[str], signum: int, delay: float, started: Callable[[list[str]], bool]
) -> tuple[int, str, float]:
    """Run a command until ``started(lines of stderr so far)`` says its work began, send it
    ``signum`` after ``delay`` seconds more (unless it ended first): its status, its stderr
    and how long it took to end after the signal."""
    process = subprocess.Popen(
        arguments, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    lines: list[str] = []
    assert process.stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(map(bytes.decode, process.stderr)))
    reader.start()
    deadline = time.monotonic() + 120
    while not started(lines) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(delay)
    sent = time.monotonic()
    process.send_signal(signum)
    process.wait(timeout=300)
    took = time.monotonic() - sent
    reader.join()
    return process.returncode, "".join(lines), took


def check_stops(
    name: str,
    arguments: list[str],
    delays: tuple[float, float],
    started: Callable[[list[str]], bool],
    done: str,
) -> list[float]:
    """Ten trials of each signal at seeded random moments once the work began; each must stop
    with its usual line and status. Returns how long the stops took."""
    rng = random.Random(name)
    took = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        status, word = STATUS[signum]
        for trial in range(TRIALS):
            code, err, seconds = stopped(arguments, signum, rng.uniform(*delays), started)
            if code == 0 or done in err:  # it finished before the signal came: nothing to stop
                continue
            where = f"{name}, {signum.name}, trial {trial}: status {code}\n{err}"
            assert code == status, where
            assert "bug" not in err and "Traceback" not in err, where
            assert err.strip().splitlines()[-1].startswith(word), where
            took.append(seconds)
    assert len(took) >= TRIALS, f"{name}: most trials ended before their signal"
    return took


def said_something(lines: list[str]) -> bool:
    return bool(lines)


# Slow: twenty builds, and on a machine loaded past about 15 a stop that lands as a build's last
# piece ends can still end it by the signal's default action (status -15 or -2, no line), a
# race left open; the export's, the verify's and the chained stops below run by default.
@pytest.mark.slow
def test_a_table_build_stops_at_once_and_resumes(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    arguments = [*TTT, "table", "build", "4x4k4", str(folder)]
    check_stops("build", arguments, (0.0, 4.0), said_something, "reachable positions;")
    finished = subprocess.run(
        [*TTT, "table", "build", "4x4k4", str(folder)], capture_output=True, text=True
    )
    assert finished.returncode == 0, finished.stderr
    whole = tmp_path / "whole"
    subprocess.run([*TTT, "table", "build", "4x4k4", str(whole)], check=True, capture_output=True)
    for path in sorted(whole.glob("*.tb")) + [whole / "table.json"]:
        assert (folder / path.name).read_bytes() == path.read_bytes(), path.name


@pytest.mark.slow
def test_an_export_of_a_table_stops_at_once(table_book: str, tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    arguments = [*TTT, "export", "--size", "4", "--win", "4", "--db", table_book, "-o", str(out)]

    def writing(_lines: list[str]) -> bool:
        return any(tmp_path.glob(".out.csv*.part")) or out.exists()

    check_stops("export", arguments, (0.0, 4.0), writing, " rows (")


@pytest.mark.slow
def test_a_verify_of_a_table_stops_at_once(table_book: str) -> None:
    arguments = [*TTT, "verify", "--size", "4", "--win", "4", "--db", table_book]
    check_stops("verify", arguments, (0.0, 6.0), said_something, ": OK, ")


@numba.njit(cache=True)
def _through_numba(depth: int) -> int:
    with numba.objmode(found="int64"):
        found = _raise_chained(depth)
    return found


def _raise_chained(depth: int) -> int:
    """A stop, raised within ``depth`` ``SystemError`` s, as Numba's dispatcher turns a
    signal's exception into one when a call returns with it set."""
    try:
        if depth == 0:
            raise KeyboardInterrupt
        _raise_chained(depth - 1)
    except BaseException as error:
        raise SystemError(
            f"CPUDispatcher(...) returned a result with an exception set ({depth})"
        ) from error
    return 0


@command("chained")
@friendly_errors
def _chained() -> None:
    _through_numba(1)


def test_a_stop_chained_two_deep_through_a_numba_call_is_a_stop() -> None:
    result = CliRunner().invoke(_chained, [])
    assert result.exit_code == 130, result.output
    assert result.stderr.strip() == "interrupted: nothing was written"
