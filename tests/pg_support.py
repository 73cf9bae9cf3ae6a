"""Test support for running the storage tests on both backends, and for killing writers.

PostgreSQL tests need a server. They run when ``TTT_TEST_POSTGRES_URL`` names a database on
one that the tests may create databases on, e.g.::

    TTT_TEST_POSTGRES_URL=postgresql+psycopg://postgres@127.0.0.1:54329/ttt_test pytest

(``.ci/run`` installs PostgreSQL, starts a throwaway server on loopback and sets it.) Without
it they are skipped with :data:`SKIP_REASON`. Each test gets a database of its own, created
empty and dropped afterwards.

Import the fixtures into a test module to use them (``from tests.pg_support import ...``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest

from tests.kill_writer import KILL_HOOK

URL_VARIABLE = "TTT_TEST_POSTGRES_URL"
SKIP_REASON = (
    f"PostgreSQL tests need a server: set {URL_VARIABLE}="
    f"postgresql+psycopg://USER@HOST:PORT/DB (a database the tests may create "
    f"databases beside) and install psycopg (pip install 'psycopg[binary]'); "
    f".ci/run starts a throwaway server and does both"
)
BACKENDS = ("sqlite", "postgresql")


def postgres_url() -> str | None:
    """The server URL of the environment, or ``None``."""
    return os.environ.get(URL_VARIABLE) or None


def _require_postgres() -> str:
    url = postgres_url()
    if url is None:
        pytest.skip(SKIP_REASON)
    pytest.importorskip("psycopg", reason=SKIP_REASON)
    return url


def _admin_engine(url: str):  # noqa: ANN202 - a SQLAlchemy engine
    import sqlalchemy as sa

    return sa.create_engine(url, isolation_level="AUTOCOMMIT")


def create_database(url: str) -> str:
    """Create a new empty database on the server of ``url``; return its URL."""
    import sqlalchemy as sa

    base = sa.make_url(url)
    name = f"ttt_{uuid.uuid4().hex[:12]}"
    engine = _admin_engine(url)
    with engine.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    engine.dispose()
    return base.set(database=name).render_as_string(hide_password=False)


def drop_database(url: str) -> None:
    """Drop a database made by :func:`create_database` (connections to it are ended)."""
    import sqlalchemy as sa

    target = sa.make_url(url)
    engine = _admin_engine(os.environ[URL_VARIABLE])
    with engine.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{target.database}" WITH (FORCE)')
    engine.dispose()


@pytest.fixture
def postgres_db() -> Iterator[str]:
    """URL of a fresh, empty PostgreSQL database (skips without a server)."""
    url = create_database(_require_postgres())
    try:
        yield url
    finally:
        drop_database(url)


@pytest.fixture(params=BACKENDS)
def book_db(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:  # noqa: ANN001
    """A ``--db`` argument for an empty book on each backend: a SQLite file path, then the URL
    of a fresh PostgreSQL database (skipped without a server)."""
    if request.param == "sqlite":
        yield str(tmp_path / "book.sqlite")
        return
    url = create_database(_require_postgres())
    try:
        yield url
    finally:
        drop_database(url)


def solve_into(db: str, rules) -> None:  # noqa: ANN001 - solver.rules.Rules
    """Solve a game into the book ``db`` in this process (exhaustive), as ``ttt-solve`` does."""
    from ttt_solve.book.solving import solve

    solve(rules, db, method="exhaustive")


KILL_WRITER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kill_writer.py")
"""The entry script that runs ``ttt-solve`` with a kill injected into the writer, when the
environment names a checkpoint (see :mod:`tests.kill_writer`)."""


def ttt_solve_command(*args: str, kill: bool = False) -> list[str]:
    """The command line of a real ``ttt-solve`` process run by this interpreter; with
    ``kill``, through :data:`KILL_WRITER`."""
    entry = [KILL_WRITER] if kill else ["-c", "from ttt_solve.cli.solve import main; main()"]
    return [sys.executable, *entry, *args]


def run_ttt_solve(
    args: list[str], env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run ``ttt-solve`` to the end in a subprocess; output captured as text."""
    environment = {**os.environ, **(env or {})}
    return subprocess.run(
        ttt_solve_command(*args, kill=KILL_HOOK in environment),
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def killed_by_sigkill(result: subprocess.CompletedProcess | subprocess.Popen) -> bool:
    return result.returncode == -signal.SIGKILL


def start_ttt_solve(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start ``ttt-solve`` in a subprocess and return at once."""
    environment = {**os.environ, **(env or {})}
    return subprocess.Popen(
        ttt_solve_command(*args, kill=KILL_HOOK in environment),
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )


def wait_until(condition, timeout: float = 30.0, step: float = 0.02) -> bool:  # noqa: ANN001
    """Poll ``condition()`` until it is true or ``timeout`` seconds pass; return its last value."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
