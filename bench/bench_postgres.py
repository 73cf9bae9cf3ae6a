"""Benchmark of writing 4x4 k=4 (1,217,977 positions) into PostgreSQL.

Needs a server: ``--url`` (or ``TTT_TEST_POSTGRES_URL``) names a database there on which this
script may create and drop databases. Each measurement runs on a new database:

* ``ttt-solve`` as a whole process (start-up, solve, the blocks' insert, commit), as a user
  would run it;
* the write alone, in this process: plies solved beforehand, then :func:`book.writer.write_game`
  (blocks of positions by the DB-API ``executemany``).

    python bench/bench_postgres.py --url postgresql+psycopg://postgres@127.0.0.1:5432/postgres
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid

import sqlalchemy as sa
from tabulate import tabulate

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import measure, script  # noqa: E402

from ttt_solve.book import writer  # noqa: E402
from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402

RULES = Rules(4, 4, 4)
CANONICAL = 1_217_977
TARGET_SECONDS = 60.0


class Database:
    """A new database on the server of ``url``, dropped on leaving the block."""

    def __init__(self, url: str) -> None:
        self.admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
        self.name = f"ttt_bench_{uuid.uuid4().hex[:8]}"
        self.url = sa.make_url(url).set(database=self.name).render_as_string(hide_password=False)

    def __enter__(self) -> str:
        with self.admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{self.name}"')
        return self.url

    def __exit__(self, *exc: object) -> None:
        with self.admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        self.admin.dispose()


def stored_rows(url: str) -> int:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        count = conn.execute(sa.text("SELECT sum(count) FROM position_blocks")).scalar()
    engine.dispose()
    return count


def time_write(url: str, plies: list) -> float:
    """Seconds of one ``write_game`` of the solved plies."""
    with open_book(url, create=True) as book:
        started = time.perf_counter()
        writer.write_game(book, RULES, plies, method="exhaustive")
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--url",
        default=os.environ.get("TTT_TEST_POSTGRES_URL"),
        help="a database on the server (default: $TTT_TEST_POSTGRES_URL)",
    )
    args = parser.parse_args()
    if not args.url:
        sys.exit("no server: pass --url postgresql+psycopg://USER@HOST:PORT/DB")
    engine = sa.create_engine(args.url)
    with engine.connect() as conn:
        version = conn.execute(sa.text("SHOW server_version")).scalar()
        settings = {
            name: conn.execute(sa.text(f"SHOW {name}")).scalar()
            for name in ("fsync", "synchronous_commit", "shared_buffers")
        }
    engine.dispose()
    print(f"PostgreSQL {version}, " + ", ".join(f"{k}={v}" for k, v in settings.items()))

    table = []
    with Database(args.url) as url:
        run = measure([script("ttt-solve"), "--size", "4", "--win", "4", "--db", url, "--quiet"])
        if run.returncode != 0:
            sys.exit(f"ttt-solve failed:\n{run.output}")
        rows = stored_rows(url)
        table.append(
            [
                "ttt-solve, whole process",
                f"{run.seconds:.2f}",
                f"{rows:,}",
                f"{rows / run.seconds / 1e6:.2f}",
                f"{TARGET_SECONDS:g}",
                "yes" if rows == CANONICAL else "NO",
            ]
        )
    plies = list(ExhaustiveSolver(RULES).solve())
    for label in ["write_game, blocks by executemany"]:
        with Database(args.url) as url:
            seconds = time_write(url, plies)
            rows = stored_rows(url)
        table.append(
            [
                label,
                f"{seconds:.2f}",
                f"{rows:,}",
                f"{rows / seconds / 1e6:.2f}",
                "-",
                "yes" if rows == CANONICAL else "NO",
            ]
        )
    print(
        tabulate(
            table,
            headers=[
                "4x4 k=4 into PostgreSQL",
                "wall s",
                "positions",
                "M positions/s",
                "target s",
                "count ok",
            ],
            tablefmt="github",
        )
    )


if __name__ == "__main__":
    main()
