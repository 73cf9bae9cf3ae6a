"""Opening books of different depths of one game: a book is replaced without ``--force`` only
by one that holds more (a deeper opening book, or the exhaustive solve), whether the shallower
one was stored before the deeper run started or while it ran; a shallower run never throws a
deeper book away. And ``--book-depth`` is never silently ignored."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from click.testing import CliRunner

from ttt_solve.cli.main import ttt
from ttt_solve.cli.solve import solve

SOLVE = [sys.executable, "-c", "from ttt_solve.cli.solve import main; main()"]
GAME = ["--size", "3x4", "--win", "3", "--method", "alphabeta"]


def build(db: str, depth: int) -> str:
    """Build an opening book of 3x4 k=3 to ``depth`` in this process; its stderr and stdout."""
    result = CliRunner().invoke(solve, [*GAME, "--book-depth", str(depth), "--db", db])
    assert result.exit_code == 0, result.output
    return result.output


def stored_depth(db: str) -> int | None:
    result = CliRunner().invoke(ttt, ["stats", "--size", "3x4", "--win", "3", "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["book_depth"]


def verified(db: str) -> bool:
    result = CliRunner().invoke(ttt, ["verify", "--size", "3x4", "--win", "3", "--db", db])
    return result.exit_code == 0


def paused_build(db: str, depth: int) -> subprocess.Popen:
    """A real ``ttt-solve`` of 3x4 k=3 to ``depth``, stopped (SIGSTOP) once it is past its
    check of the book (its work folder made) and before it writes."""
    build = subprocess.Popen(
        [*SOLVE, *GAME, "--book-depth", str(depth), "--db", db, "-q"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    identity = f"{db}.work/3x4k3-book{depth}/identity.json"
    deadline = time.monotonic() + 120
    while not os.path.exists(identity) and build.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    build.send_signal(signal.SIGSTOP)
    assert build.poll() is None, build.communicate()
    return build


def resume(build: subprocess.Popen) -> tuple[int, str]:
    build.send_signal(signal.SIGCONT)
    _, err = build.communicate(timeout=300)
    return build.returncode, err


def test_a_deeper_build_replaces_a_shallower_book_stored_while_it_ran(tmp_path):
    db = str(tmp_path / "b.sqlite")
    deeper = paused_build(db, 4)
    try:
        build(db, 2)  # finishes first
        assert stored_depth(db) == 2
    finally:
        status, err = resume(deeper)
    assert status == 0, err
    assert stored_depth(db) == 4, "the deeper book was thrown away"
    assert verified(db)


def test_a_shallower_build_keeps_a_deeper_book_stored_while_it_ran(tmp_path):
    db = str(tmp_path / "b.sqlite")
    shallower = paused_build(db, 2)
    try:
        build(db, 4)
    finally:
        status, err = resume(shallower)
    assert status == 0, err
    assert "was solved by another run meanwhile (an opening book to ply 4)" in err
    assert stored_depth(db) == 4
    assert verified(db)


def test_a_deeper_build_replaces_a_stored_shallower_book_and_says_so(tmp_path):
    db = str(tmp_path / "b.sqlite")
    build(db, 2)
    output = build(db, 3)
    assert "is stored in" in output and "(an opening book to ply 2)" in output
    assert "this solve holds more and replaces it" in output
    assert stored_depth(db) == 3
    again = build(db, 2)  # shallower: the deeper book stays
    assert "is already solved in" in again and "(an opening book to ply 3)" in again
    assert stored_depth(db) == 3


def test_the_exhaustive_solve_replaces_an_opening_book(tmp_path):
    db = str(tmp_path / "b.sqlite")
    build(db, 2)
    result = CliRunner().invoke(solve, ["--size", "3x4", "--win", "3", "--db", db])
    assert result.exit_code == 0, result.output
    assert stored_depth(db) is None and verified(db)


def test_a_book_that_reaches_every_end_is_not_built_again(tmp_path):
    db = str(tmp_path / "b.sqlite")
    args = ["--size", "3", "--win", "2", "--method", "alphabeta", "--book-depth", "9", "--db", db]
    first = CliRunner().invoke(solve, args)
    assert first.exit_code == 0, first.output  # stored to ply 7: every game ends by then
    again = CliRunner().invoke(solve, args)
    assert again.exit_code == 0 and "is already solved" in again.output, again.output


def test_book_depth_is_never_silently_ignored(tmp_path):
    db = str(tmp_path / "b.sqlite")
    for asked in (["--method", "exhaustive"], ["--engine", "dask"]):
        result = CliRunner().invoke(solve, ["--size", "3", "--book-depth", "2", *asked, "--db", db])
        assert result.exit_code == 2, result.output
        assert "--book-depth is the last ply of an opening book" in result.stderr
        assert asked[0] in result.stderr and not os.path.exists(db)
    chosen = CliRunner().invoke(solve, ["--size", "3", "--book-depth", "2", "--db", db])
    assert chosen.exit_code == 0, chosen.output
    assert "note: --book-depth 2 is not used: 3x3 k=3 is solved exhaustively" in chosen.stderr
    assert "--method alphabeta" in chosen.stderr
