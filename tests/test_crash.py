"""Crash safety: a real ``ttt-solve`` killed with SIGKILL while it writes leaves a book that
opens, holds no partial game, and that the next ``ttt-solve`` (without ``--force``) completes.

On both backends (PostgreSQL only with a server, see :mod:`tests.pg_support`). The kills come
from the writer at fixed points (:mod:`tests.kill_writer` injects them, named by
:data:`tests.kill_writer.KILL_HOOK`), and from outside
after timed delays that spread over a whole run.
"""

from __future__ import annotations

import os
import time

import pytest
import sqlalchemy as sa

from tests.kill_writer import KILL_HOOK
from tests.pg_support import killed_by_sigkill, run_ttt_solve, solve_into, start_ttt_solve
from ttt_solve.book import schema
from ttt_solve.book.reader import open_book
from ttt_solve.book.verify import verify_game
from ttt_solve.solver.rules import Rules

T3 = Rules(3, 3, 3)
T34 = Rules(3, 4, 3)
T34_ROWS = 28_275


def solve_args(rules: Rules, db: str) -> list[str]:
    return ["--size", rules.size, "--win", str(rules.k), "--db", db, "--quiet"]


def check_book(db: str, killed: Rules, kept: Rules) -> bool:
    """The book opens; ``kept`` is whole; ``killed`` is absent or whole; no stray rows.

    Returns whether ``killed`` is stored.
    """
    with open_book(db) as book:
        stored = {info.rules: info for info in book.games()}
        assert kept in stored
        for rules in stored:
            _, problems = verify_game(book, rules)
            assert list(problems) == [], f"{rules.name} is damaged"
        with book.engine.connect() as conn:
            blocks = schema.position_blocks
            total = conn.execute(
                sa.select(sa.func.coalesce(sa.func.sum(blocks.c.count), 0))
            ).scalar()
            stray = conn.execute(
                sa.select(sa.func.count())
                .select_from(blocks)
                .where(blocks.c.game_id.not_in(sa.select(schema.games.c.id)))
            ).scalar()
        assert stray == 0
        assert total == sum(info.positions for info in stored.values())
        return killed in stored


def sqlite_wal(db: str) -> str | None:
    return f"{db}-wal" if "://" not in db else None


@pytest.mark.parametrize("point", ["0", "8000", str(T34_ROWS), "commit"])
def test_killed_at_a_checkpoint_leaves_no_game_and_the_rerun_completes(book_db, point):
    solve_into(book_db, T3)
    killed = run_ttt_solve(solve_args(T34, book_db), env={KILL_HOOK: point})
    assert killed_by_sigkill(killed), (killed.returncode, killed.stderr)
    wal = sqlite_wal(book_db)
    if wal is not None:
        assert os.path.exists(wal)  # left by the dead writer: the next open recovers from it
    assert not check_book(book_db, killed=T34, kept=T3)
    rerun = run_ttt_solve(solve_args(T34, book_db))
    assert rerun.returncode == 0, rerun.stderr
    assert check_book(book_db, killed=T34, kept=T3)
    with open_book(book_db) as book:
        assert book.game(T34).positions == T34_ROWS


def test_sqlite_recovers_a_wal_full_of_uncommitted_frames(tmp_path):
    """4x4 k=3 (756,387 rows) overflows SQLite's page cache, so the dead writer's pages are in
    the WAL file without a commit frame; opening the book must ignore them."""
    db = str(tmp_path / "b.sqlite")
    solve_into(db, T3)
    # --method: on 16 cells and more ttt-solve would build a table, not write rows
    args = solve_args(Rules(4, 4, 3), db) + ["--method", "exhaustive"]
    killed = run_ttt_solve(args, env={KILL_HOOK: "commit"})
    assert killed_by_sigkill(killed), killed.stderr
    assert os.path.getsize(sqlite_wal(db)) > 1 << 20
    assert not check_book(db, killed=Rules(4, 4, 3), kept=T3)
    assert os.path.getsize(db) < 1 << 20  # the uncommitted pages never reached the database


def test_the_hook_is_inert_when_unset_and_refuses_nonsense(tmp_path):
    db = str(tmp_path / "b.sqlite")
    bad = run_ttt_solve(solve_args(T3, db), env={KILL_HOOK: "later"})
    assert bad.returncode == 2 and f"{KILL_HOOK}='later'" in bad.stderr
    assert run_ttt_solve(solve_args(T3, db), env={KILL_HOOK: ""}).returncode == 0


def test_killed_after_timed_delays_anywhere_in_a_run(book_db):
    """Kills spread over the length of a whole run (imports, solve, write, commit)."""
    solve_into(book_db, T3)
    started = time.perf_counter()
    full = run_ttt_solve(solve_args(T34, book_db) + ["--force"])
    length = time.perf_counter() - started
    assert full.returncode == 0, full.stderr
    outcomes = []
    for fraction in (0.35, 0.6, 0.8, 0.95):
        process = start_ttt_solve(solve_args(T34, book_db) + ["--force"])
        time.sleep(length * fraction)
        process.kill()
        process.communicate()
        outcomes.append(process.returncode)
        check_book(book_db, killed=T34, kept=T3)
    assert any(code == -9 for code in outcomes)  # not every run finished before its kill
    rerun = run_ttt_solve(solve_args(T34, book_db))
    assert rerun.returncode == 0, rerun.stderr
    assert check_book(book_db, killed=T34, kept=T3)
