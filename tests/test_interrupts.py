"""Stopping commands from outside, at awkward moments, in real processes: Ctrl-C while a
command is still starting, Ctrl-C at ``ttt play``'s prompt and in ``ttt curve``'s worker pool,
and ``kill -9`` of a solve whose workers are proving. Every way ends in one line (or silence,
for SIGKILL) and no process left behind."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import descendants, parents, running, stop_with

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = Path(sys.executable).parent
"""Where the virtualenv's console scripts ``ttt`` and ``ttt-solve`` are."""
TTT = [sys.executable, "-c", "from ttt_solve.cli.main import main; main()"]


needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")


# -- Ctrl-C in the first half second ----------------------------------------------------------


def before_ttt_runs(returncode: int, err: str) -> bool:
    """Whether a Ctrl-C came before the first lines of ttt-solve ran (those of
    ``cli/entry.py``, which take it over): while the interpreter starts (it says so, or dies
    of the signal without a word) or while the console script, which pip writes, imports
    them. That window of some milliseconds is Python's, and a trial that lands in it is not
    counted."""
    if returncode == -signal.SIGINT and not err:
        return True
    if "init_import_site" in err:
        return True
    started = ("cli/main.py", "cli/solve.py", "cli/common.py", "interrupted")
    return "from ttt_solve.cli.entry import" in err and not any(s in err for s in started)


@pytest.mark.parametrize(
    "command",
    [
        ["ttt-solve", "--size", "4", "--win", "4"],
        ["ttt", "query", "x.o/.x./..."],
        ["ttt", "export"],
        ["ttt", "audit", "--agent", "mcts", "-q"],
        ["ttt", "curve", "--agent", "mcts", "--vary", "iterations=10,20", "-q"],
    ],
    ids=lambda command: " ".join(command[:2]),
)
def test_ctrl_c_while_a_command_starts_is_one_line_and_130(book_3x3, tmp_path, command):
    script = SCRIPTS / command[0]
    if not script.exists():
        pytest.skip(f"the console script {command[0]} is not installed (pip install -e .)")
    rng = random.Random(" ".join(command))
    counted = 0
    for trial in range(8):
        db = str(tmp_path / f"t{trial}.sqlite") if command[0] == "ttt-solve" else book_3x3
        process = subprocess.Popen(
            [str(script), *command[1:], "--db", db],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(rng.uniform(0.05, 0.5))
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
        if before_ttt_runs(process.returncode, err):
            continue
        counted += 1
        assert "Traceback" not in err and "Aborted!" not in err, err
        assert process.returncode in (0, 130), (process.returncode, err)
        if command[0] == "ttt-solve":  # its solve takes seconds: ending with 0 lost the Ctrl-C
            assert process.returncode == 130, err
        if process.returncode == 130:
            said = ("interrupted: nothing was written",)
            if err.startswith("method: "):  # ttt-solve began its solve: the solve's own line
                said += ("interrupted: the book is unchanged",)  # and where its work is kept
            assert err.strip().splitlines()[-1].startswith(said), err
    assert counted, "every Ctrl-C came while Python itself was starting"


# -- Ctrl-C at a prompt and in a pool ----------------------------------------------------------


def test_ctrl_c_at_the_play_prompt_exits_130(book_3x3):
    game = subprocess.Popen(
        [*TTT, "play", "--agent", "random", "--seed", "1", "--db", book_3x3],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert game.stdout is not None
    seen = b""
    deadline = time.monotonic() + 60
    while b"your move" not in seen and time.monotonic() < deadline:
        seen += os.read(game.stdout.fileno(), 4096)
    game.send_signal(signal.SIGINT)
    _, err = game.communicate(timeout=60)
    assert game.returncode == 130, (game.returncode, err)
    assert err.decode().strip().splitlines()[-1] == "interrupted: nothing was written"


@needs_proc
def test_ctrl_c_to_curve_alone_stops_it_and_its_workers(book_3x3):
    """SIGINT to ``ttt curve`` only (not to its process group, as a terminal's Ctrl-C is), as
    its pool starts: it must stop its workers itself and exit in one line. (A Ctrl-C that
    came amid a worker's fork was printed as "Exception ignored" and lost, the curve going on
    to exit 0; one that came as the pool wound down raced Python's exit for a pipe: "Bad file
    descriptor".)"""
    rng = random.Random(7)
    for _ in range(8):
        curve = subprocess.Popen(
            # montecarlo (pure Python) plays slowly enough that the pool always starts
            [*TTT, "curve", "--agent", "montecarlo", "--vary", "playouts=1000,1100,1200"]
            + ["--seeds", "3", "--jobs", "2", "--db", book_3x3, "-q"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # nothing else gets the signal
        )
        deadline = time.monotonic() + 60
        while not descendants(curve.pid) and time.monotonic() < deadline:
            time.sleep(0.001)  # until the pool forks its first worker
        assert curve.poll() is None, "the curve ended before its pool started"
        time.sleep(rng.uniform(0, 0.01))
        curve.send_signal(signal.SIGINT)
        workers = descendants(curve.pid)
        try:
            _, err = curve.communicate(timeout=60)
        except subprocess.TimeoutExpired:  # a worker outlived it, holding its stderr open
            for pid in descendants(curve.pid) + workers:
                os.kill(pid, signal.SIGKILL)
            raise
        assert curve.returncode == 130, (curve.returncode, err)
        assert err.strip().splitlines() == ["interrupted: nothing was written"], err
        assert not [pid for pid in workers if running(pid)], "workers outlived the curve"


# -- kill -9 of a solve with workers -----------------------------------------------------------

SMALL_CHUNKS = (
    "import ttt_solve.solver.prover.opening as opening\n"
    "opening.ROWS_PER_CHUNK = 4  # many chunks: the workers are used on a small book\n"
    "from ttt_solve.cli.solve import main\n"
    "if __name__ == '__main__':\n"
    "    main()\n"
)


def killed_if_left(processes: list[int]) -> list[int]:
    """Those of ``processes`` still running 10 s from now (or as soon as none is), killed."""
    deadline = time.monotonic() + 10
    while [pid for pid in processes if running(pid)] and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in processes if running(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


@needs_proc
def test_kill_9_of_a_solve_takes_its_workers_with_it(tmp_path):
    entry = tmp_path / "solve_in_small_chunks.py"
    entry.write_text(SMALL_CHUNKS)
    args = ["--size", "4", "--win", "4", "--method", "alphabeta", "--book-depth", "5"]
    solve = subprocess.Popen(
        [sys.executable, str(entry), *args, "--jobs", "2", "--db", str(tmp_path / "b.sqlite")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while len(descendants(solve.pid)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)  # the pool's server and its two workers
    time.sleep(1)  # the workers are proving their first chunks
    below = descendants(solve.pid)
    assert len(below) >= 3, "the solve started no workers"
    solve.kill()
    _, err = solve.communicate(timeout=120)  # until every writer of its stderr is gone
    left = killed_if_left(below)
    assert not left, "processes outlived the killed solve"
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert "leaked semaphore" not in err, err


# -- a signal amid a long proof ----------------------------------------------------------------


@pytest.mark.parametrize(
    "signum, status, said",
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_signal_amid_a_long_proof_stops_it_within_seconds(tmp_path, signum, status, said):
    """4x10 k=4 from the empty board is a proof of many minutes in one compiled search; the
    search looks for signals where it looks at the clock, so Ctrl-C or SIGTERM stops it within
    seconds (it ran on until the search ended, past ``timeout``'s SIGTERM), with its line."""
    db = tmp_path / "b.sqlite"
    args = ["--size", "4x10", "--win", "4", "--method", "alphabeta", "--book-depth", "0"]
    solve = subprocess.Popen(
        [str(SCRIPTS / "ttt-solve"), *args, "--db", str(db)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert solve.stderr is not None
    said_before = [solve.stderr.readline()]
    while said_before[-1] and not said_before[-1].startswith("method: "):  # as it starts
        said_before.append(solve.stderr.readline())
    assert said_before[-1], said_before
    time.sleep(8)  # a compile of the search (first use) and then the search itself
    took = stop_with(solve, signum, status, said, "proof")
    assert took < 20, f"the proof stopped only {took:.1f} s after the signal"


# -- SIGTERM as an opening book's pool starts --------------------------------------------------


def in_a_group_of_its_own(command: list[str]) -> subprocess.Popen[str]:
    """``command`` started in a process group of its own, which the signals sent to a group
    reach alone; its standard error is read as text."""
    return subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def its_stderr_once_ended(process: subprocess.Popen[str], seconds: float) -> str:
    """The standard error of ``process`` (started by :func:`in_a_group_of_its_own`) once it
    has ended; its whole group is killed if it runs on past ``seconds``."""
    try:
        return process.communicate(timeout=seconds)[1]
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise


def until_its_pool_starts(process: subprocess.Popen[str]) -> None:
    """Wait until ``process`` starts its first child (a pool's first process)."""
    deadline = time.monotonic() + 300
    while not descendants(process.pid) and time.monotonic() < deadline:
        time.sleep(0.002)
    assert process.poll() is None, "it ended before its pool started"


def threads_of(pid: int) -> list[int]:
    """The thread ids of a process (its main thread's is ``pid``)."""
    try:
        return sorted(int(tid) for tid in os.listdir(f"/proc/{pid}/task"))
    except FileNotFoundError:
        return []


@pytest.mark.slow
@needs_proc
def test_sigterm_as_the_pool_starts_always_stops_the_solve(tmp_path):
    """SIGTERM at random moments around the start of an opening book's pool (8x8 k=5, whose
    rows take minutes each, so no result comes to wake the command), as the system may hand
    it: to any thread of the process (the pool's own among them), alone or followed by the
    rest of its process group, as ``timeout`` sends it. Every run ends within seconds, exit
    143, its last line ``terminated: ...``, no traceback, no process left behind. (A SIGTERM
    taken by one of the pool's threads left the command waiting for its workers for ever,
    those that the same signal had ended; one that came while a worker started left that
    worker half-started, to print a ``FileNotFoundError`` traceback.)"""
    rng = random.Random(34)
    for trial in range(12):
        solve = in_a_group_of_its_own(
            [str(SCRIPTS / "ttt-solve"), "--size", "8", "--win", "5", "--jobs", "2"]
            + ["--db", str(tmp_path / f"b{trial}.sqlite")]
        )
        until_its_pool_starts(solve)
        time.sleep(rng.uniform(0, 1.5))  # the workers start, then prove
        below = descendants(solve.pid)
        os.kill(rng.choice(threads_of(solve.pid) or [solve.pid]), signal.SIGTERM)
        group = trial % 2 == 1
        if group:
            os.killpg(solve.pid, signal.SIGTERM)
        try:
            _, err = solve.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(solve.pid, signal.SIGKILL)
            solve.communicate()
            raise AssertionError(f"trial {trial}: the solve ran on 30 s after SIGTERM") from None
        finally:
            left = killed_if_left(below)
        assert solve.returncode == 143, (trial, solve.returncode, err)
        assert "Traceback" not in err, (trial, err)
        assert err.strip().splitlines()[-1].startswith("terminated: "), (trial, err)
        assert not left, f"trial {trial}: processes outlived the solve"


def test_sigterm_taken_in_a_finaliser_still_stops_the_command():
    """Python prints an exception raised in a finaliser or a weak reference's callback as
    "Exception ignored" and drops it: a SIGTERM taken there must come again (it was lost,
    and the command ran on to exit 0)."""
    import click
    from click.testing import CliRunner

    from ttt_solve.cli.common import friendly_errors

    class SignalsWhenDropped:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.01)  # the handler runs here, inside the finaliser

    def signal_in_callback(_reference: object) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.01)

    @click.command()
    @click.option("--where", type=click.Choice(["finaliser", "callback"]))
    @friendly_errors
    def command(where: str) -> None:
        if where == "finaliser":
            SignalsWhenDropped()  # dropped at once
        else:
            import weakref

            class Dropped:
                pass

            dropped = Dropped()
            reference = weakref.ref(dropped, signal_in_callback)
            del dropped
            assert reference() is None
        time.sleep(2)  # the signal comes again meanwhile
        click.echo("ran on")

    for where in ("finaliser", "callback"):
        result = CliRunner().invoke(command, ["--where", where])
        assert result.exit_code == 143, (where, result.output)
        assert "ran on" not in result.output
        assert result.stderr.strip().splitlines()[-1] == "terminated: nothing was written"


def test_a_stop_that_compiled_code_turned_into_a_system_error_is_still_a_stop():
    """A SIGTERM taken while a Numba kernel returns comes out as a ``SystemError`` whose
    context is the stop ("returned a result with an exception set"): it is the stop, not a
    bug of ours."""
    import click
    from click.testing import CliRunner

    from ttt_solve.cli.common import Terminated, friendly_errors

    @click.command()
    @click.option("--inner", type=click.Choice(["terminated", "other"]))
    @friendly_errors
    def command(inner: str) -> None:
        try:
            raise Terminated() if inner == "terminated" else ValueError("not a stop")
        except BaseException:
            raise SystemError("a kernel returned a result with an exception set")  # noqa: B904

    stopped = CliRunner().invoke(command, ["--inner", "terminated"])
    assert stopped.exit_code == 143
    assert stopped.stderr.strip() == "terminated: nothing was written"
    bug = CliRunner().invoke(command, ["--inner", "other"])
    assert bug.exit_code == 1 and "this is a bug in ttt-solve: SystemError" in bug.stderr


# -- Ctrl-C amid a ladder's games --------------------------------------------------------------


@needs_proc
@pytest.mark.parametrize(
    "command",
    [
        ["rate", "--games", "20000"],
        pytest.param(
            ["curve", "--agent", "mcts", "--vary", "iterations=1,2", "--rating"]
            + ["--rating-games", "20000", "--seeds", "1", "--positions", "sample:10"],
            marks=pytest.mark.slow,
        ),
    ],
    ids=["rate", "curve --rating"],
)
def test_ctrl_c_as_a_ladders_games_are_handed_out_is_one_line_and_130(book_3x3, tmp_path, command):
    """Ctrl-C, sent to the whole process group as a terminal sends it, as the ladder's games
    are handed to the workers (560,000 games in 140,000 chunks, seconds of hand-out): it used
    to be held over the hand-out and find the pool broken by its own end of the workers,
    which was reported as a bug (``BrokenProcessPool``, exit 1)."""
    db = tmp_path / "book.sqlite"
    db.write_bytes(Path(book_3x3).read_bytes())  # the ladder's games are cached in the book
    ttt = in_a_group_of_its_own([*TTT, *command, "--db", str(db), "--jobs", "2", "-q"])
    until_its_pool_starts(ttt)  # it forks its workers at the first chunk handed out
    os.killpg(ttt.pid, signal.SIGINT)
    err = its_stderr_once_ended(ttt, 120)
    assert ttt.returncode == 130, (ttt.returncode, err)
    assert err.strip().splitlines() == ["interrupted: nothing was written"], err


# -- a worker killed ---------------------------------------------------------------------------


@needs_proc
def test_a_killed_worker_of_the_atlas_ends_it_with_one_line(tmp_path):
    """A worker killed amid its game (as the system kills one out of memory): the atlas ends
    at once with a line saying so, exit 1, its other worker ended. (Its pool started another
    worker and waited for the lost game for ever, SIGTERM or not.)"""
    outputs = ["--json", str(tmp_path / "a.json"), "--markdown", str(tmp_path / "a.md")]
    args = ["atlas", "--max-cells", "64", "--seconds", "30", "--jobs", "2", *outputs]
    atlas = in_a_group_of_its_own([*TTT, *args])
    deadline = time.monotonic() + 120
    workers: list[int] = []
    while len(workers) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # the workers are the children of the pool's server
        below = parents()
        workers = [pid for pid in descendants(atlas.pid) if below.get(pid) != atlas.pid]
    assert len(workers) >= 2, "the atlas started no workers"
    time.sleep(1)  # each is deciding its first game
    os.kill(workers[0], signal.SIGKILL)
    err = its_stderr_once_ended(atlas, 60)
    assert atlas.returncode == 1, (atlas.returncode, err)
    assert err.strip().splitlines()[-1].startswith("Error: a worker process ended abruptly"), err
    assert "Traceback" not in err, err
    assert not killed_if_left(workers), "a worker outlived the atlas"
    assert not (tmp_path / "a.json").exists()
