"""The servers a solve depends on failing under it: a PostgreSQL server that drops the
connection mid-write, and the Dask engine's scheduler, work folder and workers. Each is one
line naming what failed (never "this is a bug", never a traceback), the book as it was, and
whatever was done kept for the same command to resume from."""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.pg_support import postgres_db  # noqa: F401 - a fixture
from tests.support import parents
from tests.test_resources import mount_tmpfs, remount

SOLVE = [sys.executable, "-c", "from ttt_solve.cli.solve import main; main()"]
TTT = [sys.executable, "-c", "from ttt_solve.cli.main import main; main()"]


def run(command: list[str], env: dict[str, str] | None = None, timeout: float = 300):
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


def assert_one_line(result, *words: str, status: int = 2) -> str:
    """Exit ``status``, one line on stderr holding every one of ``words``; the line."""
    assert result.returncode == status, (result.returncode, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "bug" not in lines[0] and "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


# -- PostgreSQL stopped mid-write --------------------------------------------------------------


def test_a_server_that_drops_the_write_leaves_the_book_unchanged(postgres_db):  # noqa: F811
    import sqlalchemy as sa

    url = sa.make_url(postgres_db)
    admin = sa.create_engine(postgres_db, isolation_level="AUTOCOMMIT")
    # --method: on 16 cells and more ttt-solve would build a table, not write rows
    game = ["--size", "4", "--win", "3", "--db", postgres_db]
    exhaustive = ["--method", "exhaustive"]
    solve = subprocess.Popen(
        [*SOLVE, *game, *exhaustive, "-q"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # What a server stop does to its sessions (pg_ctl stop -m fast), done to the writer's only:
    # its session is ended in the middle of the positions' inserts.
    writer = sa.text(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid() AND query LIKE 'INSERT INTO position_blocks%'"
    )
    ended = False
    deadline = time.monotonic() + 120
    with admin.connect() as conn:
        while not ended and solve.poll() is None and time.monotonic() < deadline:
            for (pid,) in conn.execute(writer):
                ended = conn.execute(sa.text(f"SELECT pg_terminate_backend({pid})")).scalar()
            time.sleep(0.01)
    _, err = solve.communicate(timeout=120)
    admin.dispose()
    assert ended, "the write was not caught in the act"
    line = assert_one_line(
        subprocess.CompletedProcess(solve.args, solve.returncode, "", err),
        f"the connection to the database server at {url.host}:{url.port} was lost",
        "while writing 4x4 k=3",
        "the book is unchanged",
        "run the same command again",
    )
    assert "secret" not in line
    stats = run([*TTT, "stats", *game])
    assert stats.returncode == 2 and "4x4 k=3" in stats.stderr  # no part of the game is there
    again = run([*SOLVE, *game, *exhaustive, "-q"])
    assert again.returncode == 0, again.stderr
    assert run([*TTT, "verify", *game]).returncode == 0


# -- the Dask engine ---------------------------------------------------------------------------


def installed(*modules: str) -> bool:
    return all(importlib.util.find_spec(module) is not None for module in modules)


needs_dask = pytest.mark.skipif(
    not installed("distributed", "pyarrow"),
    reason="the dask extra is not installed: pip install -e '.[dask]'",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@needs_dask
def test_a_scheduler_address_that_is_no_address_is_named(tmp_path):
    db = str(tmp_path / "d.sqlite")
    result = run([*SOLVE, "--engine", "dask", "--scheduler", "nonsense", "--db", db, "-q"])
    assert_one_line(result, "cannot connect to the Dask scheduler 'nonsense'", "tcp://HOST:PORT")


@needs_dask
def test_an_unreachable_scheduler_is_named(tmp_path):
    db = str(tmp_path / "d.sqlite")
    address = f"tcp://127.0.0.1:{free_port()}"
    result = run(
        [*SOLVE, "--engine", "dask", "--scheduler", address, "--db", db, "-q"],
        env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"},
    )
    assert_one_line(result, f"cannot connect to the Dask scheduler '{address}'", "Timed out")


@needs_dask
def test_a_work_folder_on_a_file_system_without_its_package_is_named(tmp_path):
    if installed("s3fs"):
        pytest.skip("s3fs is installed: s3:// is a file system here")
    db = str(tmp_path / "d.sqlite")
    result = run([*SOLVE, "--engine", "dask", "--workdir", "s3://bucket/work", "--db", db, "-q"])
    assert_one_line(result, "cannot use the work folder s3://bucket/work", "s3fs")


@pytest.mark.slow
@needs_dask
def test_a_full_work_folder_is_named_and_the_run_resumes_once_there_is_room(tmp_path):
    disk = tmp_path / "disk"
    mount_tmpfs(disk, size="150k")
    try:
        db = str(tmp_path / "d.sqlite")
        args = ["--engine", "dask", "--size", "3x4", "--workdir", str(disk / "work"), "--db", db]
        full = run([*SOLVE, *args, "-q"])
        assert_one_line(
            full,
            f"no space left on the disk of the work folder {disk / 'work'}",
            "the plies finished so far are kept",
            "the same command resumes from them",
        )
        kept = sorted(path.name for path in (disk / "work").iterdir())
        assert "ply-00" in kept and "identity.json" in kept
        remount(disk, "size=50m")
        resumed = run([*SOLVE, *args, "-q"])
        assert resumed.returncode == 0, resumed.stderr
        assert run([*TTT, "verify", "--size", "3x4", "--db", db]).returncode == 0
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def worker_processes(solve: int) -> list[int]:
    """The local cluster's worker processes of a solve (its children started by spawn)."""
    found = []
    for pid, parent in parents().items():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if parent == solve and b"spawn_main" in cmdline.read():
                    found.append(pid)
        except OSError:
            continue
    return found


@needs_dask
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="finds the workers through /proc")
@pytest.mark.parametrize(
    "moment",
    ["as the cluster starts", pytest.param("in the middle of the run", marks=pytest.mark.slow)],
)
def test_a_killed_worker_never_ends_the_run_with_a_traceback(tmp_path, moment):
    db = str(tmp_path / "d.sqlite")
    work = tmp_path / "work"
    args = ["--engine", "dask", "--size", "3x4", "--workdir", str(work), "--db", db, "-q"]
    solve = subprocess.Popen(
        [*SOLVE, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    if moment == "as the cluster starts":
        while not worker_processes(solve.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
    else:
        while not (work / "ply-03" / "keys.done").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    workers = worker_processes(solve.pid)
    assert workers and solve.poll() is None, "no worker to kill"
    os.kill(workers[0], signal.SIGKILL)
    _, err = solve.communicate(timeout=300)
    assert "Traceback" not in err and "bug" not in err and "distributed." not in err, err
    if solve.returncode == 0:  # Dask ran the dead worker's tasks again elsewhere
        assert not err.strip(), err
        assert run([*TTT, "verify", "--size", "3x4", "--db", db]).returncode == 0
    else:  # or the run stopped, saying which part of Dask failed and how to go on
        assert_one_line(subprocess.CompletedProcess(args, solve.returncode, "", err), "Dask")


class Cluster:
    """A Dask scheduler and two single-threaded workers in processes of their own, on
    loopback (the ``dask`` command of this environment)."""

    def __init__(self) -> None:
        dask = Path(sys.executable).parent / "dask"
        if not dask.exists():
            pytest.skip("no dask command in this environment (the dask extra)")
        self.address = f"tcp://127.0.0.1:{free_port()}"
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        port = self.address.rsplit(":", 1)[1]
        self.scheduler = subprocess.Popen(
            [str(dask), "scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"],
            **quiet,
        )
        self.workers = subprocess.Popen(
            [str(dask), "worker", self.address, "--nworkers", "2", "--nthreads", "1"]
            + ["--no-dashboard"],
            **quiet,
        )

    def stop(self) -> None:
        for process in (self.workers, self.scheduler):
            process.kill()
            process.wait()


@pytest.mark.slow
@needs_dask
def test_a_scheduler_lost_mid_run_is_named_and_the_run_resumes_on_another(tmp_path):
    db = str(tmp_path / "d.sqlite")
    work = tmp_path / "work"
    args = ["--engine", "dask", "--size", "3x4", "--workdir", str(work), "--db", db, "-q"]
    first = Cluster()
    try:
        solve = subprocess.Popen(
            [*SOLVE, *args, "--scheduler", first.address],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while not (work / "ply-03" / "keys.done").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        first.scheduler.kill()
        _, err = solve.communicate(timeout=300)
    finally:
        first.stop()
    assert_one_line(
        subprocess.CompletedProcess(solve.args, solve.returncode, "", err),
        f"lost the connection to the Dask scheduler '{first.address}'",
        "the same command resumes from them",
    )
    second = Cluster()
    try:
        resumed = run([*SOLVE, *args, "--scheduler", second.address])
    finally:
        second.stop()
    assert resumed.returncode == 0, resumed.stderr
    assert run([*TTT, "verify", "--size", "3x4", "--db", db]).returncode == 0
