"""The tool under hostile conditions: outputs that would destroy the book, interrupted writes,
damaged books, misbehaving agents. Each case runs through the command line and ends in a
clear one-line message (exit 2), a correct answer, or a reported problem, never a traceback."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import threading

import pytest
from click.testing import CliRunner

import ttt_solve.book.frame
from tests import booksurgery
from ttt_solve.cli.main import ttt
from ttt_solve.cli.solve import solve


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(ttt, list(args), input=input)


@pytest.fixture
def book(book_3x3, tmp_path) -> str:
    """A private copy of the 3x3 book, free to damage."""
    path = str(tmp_path / "B.sqlite")
    shutil.copy(book_3x3, path)
    return path


def sql(db: str, statement: str) -> None:
    """Run one statement that must change at least one row."""
    connection = sqlite3.connect(db)
    with connection:
        assert connection.execute(statement).rowcount >= 1, statement
    connection.close()


def assert_one_line_error(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "bug in ttt-solve" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, result.output
    for word in words:
        assert word in lines[0], result.output


# -- outputs --------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["{db}", "./{name}", "sqlite:///{db}", "{db}-wal"])
def test_export_refuses_to_write_over_the_book_it_reads(book, form, monkeypatch):
    monkeypatch.chdir(os.path.dirname(book))
    before = pathlib.Path(book).read_bytes()
    db_argument = f"sqlite:///{book}" if form.startswith("sqlite") else book
    output = form.format(db=book, name=os.path.basename(book)).removeprefix("sqlite:///")
    result = run("export", "--db", db_argument, "-o", output)
    assert_one_line_error(result, "overwrite the book")
    assert pathlib.Path(book).read_bytes() == before
    assert run("stats", "--db", book).exit_code == 0


def test_an_interrupted_export_leaves_no_partial_file(book, tmp_path, monkeypatch):
    original = ttt_solve.book.frame.text_chunks

    def interrupted(*args, **kwargs):
        chunks = original(*args, **kwargs)
        yield next(chunks)  # the header
        yield next(chunks)[:1000]
        raise KeyboardInterrupt

    target = tmp_path / "ex.csv"
    target.write_text("the previous export\n")
    monkeypatch.setattr(ttt_solve.book.frame, "text_chunks", interrupted)
    result = run("export", "--db", book, "-o", str(target))
    assert result.exit_code == 130
    assert target.read_text() == "the previous export\n"
    new = tmp_path / "new.csv"
    assert run("export", "--db", book, "-o", str(new)).exit_code == 130
    assert not new.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["B.sqlite", "ex.csv"]
    monkeypatch.setattr(ttt_solve.book.frame, "text_chunks", original)
    assert run("export", "--db", book, "-o", str(new)).exit_code == 0
    assert len(new.read_text().splitlines()) == 766


# -- agents ---------------------------------------------------------------------------------

PLUGIN = """
class Agent:
    def __init__(self, rng, answer):
        self.rng, self.answer = rng, answer
    def select_move(self, position):
        if self.answer == "raise":
            raise RuntimeError("the agent's own bug")
        if self.answer == "none-on-odd-plies" and position.ply % 2:
            return None
        if self.answer in ("none", "b2"):
            return None if self.answer == "none" else "b2"
        return min(position.legal_moves())
def make(rng, answer="first"):
    return Agent(rng, answer)
def broken(rng):
    raise RuntimeError("the factory's own bug")
"""


@pytest.fixture
def plugin(tmp_path, monkeypatch) -> str:
    (tmp_path / "hostile_agent.py").write_text(PLUGIN)
    monkeypatch.chdir(tmp_path)
    return "py:hostile_agent.py:make"


@pytest.mark.parametrize(
    ("answer", "failed"),
    [("none", 4520), ("none-on-odd-plies", 9 + 252 + (1260 - 120) + (1140 - 444))],
)
def test_an_agent_answering_none_fails_those_moves_never_is_perfect(book, plugin, answer, failed):
    result = run("audit", "--db", book, "--agent", f"{plugin},answer={answer}", "--jobs", "1")
    assert result.exit_code == 0, result.output
    # every reachable position to move in (4,520), or those of odd plies (less the games won)
    assert re.search(rf"failures garbage +│ {failed:,}", result.output), result.output
    assert "returned None, not a move" in result.output and "hostile_agent" in result.output
    assert "every graded move was best" not in result.output


@pytest.mark.parametrize(
    ("command", "spec", "words"),
    [
        ("audit", "py:hostile_agent.py:broken", ("broken", "the factory's own bug")),
        ("play", "py:hostile_agent.py:make,answer=raise", ("raised", "the agent's own bug")),
        ("play", "py:hostile_agent.py:make,answer=none", ("returned None", "not a move")),
    ],
)
def test_a_failing_plugin_is_one_line_naming_the_agent(book, plugin, command, spec, words):
    if command == "play":
        args = ["play", "--db", book, "--agent", spec, "--as", "o"]
    else:
        args = ["audit", "--db", book, "--agent", spec, "--jobs", "2"]
    result = run(*args, input="quit\n")
    assert_one_line_error(result, "hostile_agent", *words)


@pytest.mark.parametrize("mode", [(), ("--games", "4")])
def test_a_plugin_that_raises_is_audited_with_the_failures_counted(book, plugin, mode):
    """In worker processes too: the failures come back from them as failures."""
    spec = "py:hostile_agent.py:make,answer=raise"
    result = run("audit", "--db", book, "--agent", spec, "--jobs", "2", *mode)
    assert result.exit_code == 0, result.output
    assert "failures crash" in result.output and "the agent's own bug" in result.output


# -- verify's coverage ----------------------------------------------------------------------


def positions_set(ply: int, key: int | None = None, only=None, **fields):
    """A damage: change ``fields`` of the stored positions of ``ply`` (of one ``key``; those
    ``only`` selects), through the block layout; a field given as a function is computed from
    the row, and ``key_`` and ``ply_`` are a new key and ply."""

    def damage(db: str) -> None:
        rows = booksurgery.matching(db, ply=ply, **({} if key is None else {"key": key}))
        rows = [row for row in rows if only is None or only(row)]
        assert rows, (ply, key)
        for row in rows:
            new = {name.rstrip("_"): f(row) if callable(f) else f for name, f in fields.items()}
            booksurgery.change(db, row, **new)

    return damage


def game_set(statement: str):
    """A damage: one SQL statement on the games table."""
    return lambda db: sql(db, statement)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            positions_set(1, key=16, remoteness=2),
            "a draw's remoteness is not its number of empty cells (8)",
        ),
        (
            positions_set(0, remoteness=-9),  # stored as its bit pattern: 247
            "holds a remoteness past the end of the game",
        ),
        (
            positions_set(0, value=1, remoteness=255),
            "holds a remoteness past the end of the game",
        ),
        (
            positions_set(8, only=lambda row: row.value == 1, value=5),
            "holds a value other than 1, 0, -1",
        ),
        (positions_set(1, images=255), "holds an images count no board has"),
        (positions_set(2, key=514, ply_=3), "stones do not fit ply"),
        (positions_set(2, key=514, key_=3), "ply 2, position xx./.../...: stones"),
        (game_set("UPDATE games SET value = -1, remoteness = 8"), "the game row says loss in 8"),
        (
            game_set("UPDATE games SET reachable = 5477"),
            "the game row counts 5477 reachable positions",
        ),
        (
            game_set("UPDATE games SET figures = replace(figures, '\"x\": 626', '\"x\": 625')"),
            "the summary's terminal figures differ",
        ),
    ],
)
def test_verify_reports_every_stored_column_it_can_derive(book, damage, message):
    damage(book)
    result = run("verify", "--db", book)
    assert result.exit_code == 1, result.output
    assert message in result.output
    assert "bug in ttt-solve" not in result.output


# -- interruptions --------------------------------------------------------------------------


def test_ctrl_c_during_the_commit_lets_it_finish_and_says_so(tmp_path, monkeypatch):
    import sqlalchemy.engine.base

    import ttt_solve.book.writer

    commit = sqlalchemy.engine.base.RootTransaction.commit
    write_summary = ttt_solve.book.writer._write_summary
    summary_written = []

    def interrupted_commit(self):
        if summary_written:  # the commit of the game, not of the schema
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C as the commit starts
        commit(self)

    def noted_summary(*args, **kwargs):
        write_summary(*args, **kwargs)
        summary_written.append(True)

    monkeypatch.setattr(sqlalchemy.engine.base.RootTransaction, "commit", interrupted_commit)
    monkeypatch.setattr(ttt_solve.book.writer, "_write_summary", noted_summary)
    db = str(tmp_path / "new.sqlite")
    result = CliRunner().invoke(solve, ["--size", "3", "--db", db])
    assert result.exit_code == 130
    assert "3x3 k=3 was stored in" in result.output
    assert "Traceback" not in result.output and "unchanged" not in result.output
    monkeypatch.undo()
    assert run("verify", "--db", db).exit_code == 0


def test_ctrl_c_just_after_the_commit_reports_the_game_stored(tmp_path, monkeypatch):
    import ttt_solve.book.writer

    forget = ttt_solve.book.writer.Book.forget_game
    calls = []

    def interrupted_once(self, rules):
        calls.append(rules)
        if len(calls) == 1:  # the writer's first act after its commit
            raise KeyboardInterrupt
        forget(self, rules)

    monkeypatch.setattr(ttt_solve.book.writer.Book, "forget_game", interrupted_once)
    db = str(tmp_path / "new.sqlite")
    result = CliRunner().invoke(solve, ["--size", "3", "--db", db])
    assert result.exit_code == 130
    assert "3x3 k=3 was stored in" in result.output and "unchanged" not in result.output
    monkeypatch.undo()
    assert run("query", "--db", db, ".../.../...").exit_code == 0
    assert (
        CliRunner()
        .invoke(solve, ["--size", "3", "--db", db])
        .output.startswith("3x3 k=3 is already solved")
    )


def test_ctrl_c_before_the_commit_still_leaves_the_book_unchanged(book, monkeypatch):
    import ttt_solve.book.writer

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ttt_solve.book.writer, "_write_summary", interrupted)
    result = CliRunner().invoke(solve, ["--size", "3", "--db", book, "--force"])
    assert result.exit_code == 130
    assert "interrupted: the book is unchanged" in result.output
    monkeypatch.undo()
    assert run("verify", "--db", book).exit_code == 0
    assert run("stats", "--db", book).exit_code == 0


# -- opening books past the end of the game ---------------------------------------------------


def test_a_book_depth_past_the_last_cell_is_refused(tmp_path):
    db = str(tmp_path / "deep.sqlite")
    result = CliRunner().invoke(
        solve, ["--size", "3", "--method", "alphabeta", "--book-depth", "10", "--db", db]
    )
    assert_one_line_error(result, "book depth 10", "by ply 9", "--book-depth 9 or less")
    assert not os.path.exists(db)


def test_an_opening_book_deeper_than_every_game_passes_its_own_check(tmp_path):
    db = str(tmp_path / "deep.sqlite")
    args = ["--size", "3", "--win", "2", "--db", db]
    solved = CliRunner().invoke(solve, [*args, "--method", "alphabeta", "--book-depth", "9"])
    assert solved.exit_code == 0, solved.output
    assert "opening book to ply 7" in run("stats", *args).output  # every game ends by ply 7
    result = run("verify", *args)
    assert result.exit_code == 0, result.output


# -- a book that lacks what it should hold --------------------------------------------------

MISSING = "oox/x../..."
"""A reachable position of ply 4 of 3x3 (canonical), deleted from the book below."""


@pytest.mark.parametrize(
    "args",
    [
        ("query", MISSING),
        ("query", "o.x/x../..."),  # its parent: the move b1 leads to it
        ("audit", "--agent", "random"),
    ],
)
def test_a_missing_row_is_reported_as_damage_not_as_unreachable(book, args):
    booksurgery.delete(book, [booksurgery.first(book, ply=4)])
    result = run(*args, "--db", book)
    assert_one_line_error(result, "looks damaged", "ttt verify --size 3 --win 3", "--force")
    assert "not reachable" not in result.output


def test_an_unreachable_position_is_still_called_unreachable(book):
    result = run("query", "xxx/ooo/...", "--db", book)
    assert result.exit_code == 2 and "damaged" not in result.output


# -- damaged books --------------------------------------------------------------------------

READ_COMMANDS = [
    ("stats",),
    ("query", ".../.x./..."),
    ("export", "-q", "-o", "-"),
    ("verify",),
    ("audit", "--agent", "random", "--jobs", "1"),
]


def overwrite(path: str, offset: int, length: int) -> None:
    with open(path, "r+b") as file:
        file.seek(offset)
        file.write(b"\xff" * length)


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda args: args[0])
def test_a_book_with_damaged_pages_is_one_line_in_every_command(book, command):
    overwrite(book, 20_000, 3_000)  # pages of the positions table
    result = run(*command, "--db", book)
    assert_one_line_error(result, "looks damaged", "malformed", "B.sqlite")


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda args: args[0])
@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (
            "DROP TABLE position_blocks; DROP TABLE games",
            ("no games and no position_blocks table",),
        ),
        ("UPDATE games SET figures = '{}'", ("games row of 3x3 k=3 cannot be read",)),
        ("UPDATE games SET value = 7", ("games row of 3x3 k=3", "value 7")),
        (
            "UPDATE position_blocks SET count = 'abc' WHERE ply = 1",
            ("'abc' where a whole number belongs",),
        ),
        (positions_set(1, best_moves=-1), ("best moves off the board",)),
        (positions_set(1, key=16, best_moves=16), ("off the board",)),
    ],
    ids=["meta-only", "figures", "game-value", "text", "best-negative", "best-taken"],
)
def test_half_a_book_is_one_line_naming_the_damage(book, command, damage, words):
    if isinstance(damage, str):
        connection = sqlite3.connect(book)
        connection.executescript(damage)
        connection.close()
    else:
        damage(book)
    result = run(*command, "--db", book)
    if command[0] == "verify" and result.exit_code == 1:  # found as a problem of the rows
        assert "bug in ttt-solve" not in result.output and "problem" in result.output
        return
    if result.exit_code == 0:  # the damage is in what this command does not read
        assert command[0] in ("stats", "query") and "position" in str(damage)
        return
    assert_one_line_error(result, "looks damaged", *words)


@pytest.mark.parametrize(
    "damage", ["UPDATE games SET table_folder = ''", "UPDATE games SET value = 7"]
)
def test_a_damaged_games_row_names_its_game_in_the_fix_and_the_fix_works(book, damage):
    sql(book, damage)
    result = run("query", ".../.x./...", "--db", book)
    assert_one_line_error(
        result,
        "games row of 3x3 k=3",
        f"check it with: ttt verify --size 3 --win 3 --db {book}; solve the game again with: "
        f"ttt-solve --size 3 --win 3 --db {book} --force",
    )
    assert "--size N" not in result.output
    assert run("solve", "--size", "3", "--win", "3", "--db", book, "--force", "-q").exit_code == 0
    assert run("query", ".../.x./...", "--db", book).exit_code == 0


def test_a_book_damaged_past_opening_says_what_to_do_once(book):
    overwrite(book, 3_000, 1_096)  # the end of the first page: the tables' own definitions
    result = run("stats", "--db", book)
    assert_one_line_error(result, "looks damaged", "restore it from a copy")
    assert result.output.count("restore it") == 1 and "--size N" not in result.output


def test_a_book_path_with_an_escape_is_quoted_escaped(tmp_path):
    result = run("stats", "--db", str(tmp_path / "a\x1b[2Jb" / "x.sqlite"))
    assert_one_line_error(result, "no book at", "a\\x1b[2Jb")
    assert "\x1b" not in result.output


def test_a_table_folder_with_nul_and_escape_is_quoted_escaped(tmp_path):
    from ttt_solve.book.reader import open_book
    from ttt_solve.book.table.catalogue import catalogue_table
    from ttt_solve.solver.rules import Rules
    from ttt_solve.solver.tablebase.build import build_table

    build_table(Rules(3, 3, 3), tmp_path / "3x3k3")
    db = str(tmp_path / "t.sqlite")
    with open_book(db, create=True) as book:
        catalogue_table(book, tmp_path / "3x3k3")
    sql(db, "UPDATE games SET table_folder = '/tmp/a' || char(27) || '[31mred' || char(0) || 'b'")
    for command in (("query", ".../.x./..."), ("stats",), ("export", "-q", "-o", "-")):
        result = run(*command, "--db", db)
        assert_one_line_error(result, "/tmp/a\\x1b[31mred\\x00b")
        assert "\x1b" not in result.output and "\x00" not in result.output


# -- outputs that cannot be written ---------------------------------------------------------

FULL = "/dev/full"


@pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full on this machine")
@pytest.mark.parametrize(
    "args",
    [
        ("ttt", "--help"),
        ("ttt", "stats", "--help"),
        ("ttt-solve", "--help"),
        ("ttt", "stats"),
        ("ttt", "query", ".../.x./..."),
        ("ttt", "export"),
        ("ttt", "audit", "--agent", "random", "--jobs", "1"),
    ],
    ids=" ".join,
)
def test_a_full_output_is_one_line_and_exit_2(book, args):
    script = os.path.join(os.path.dirname(sys.executable), args[0])
    db = [] if "--help" in args else ["--db", book]
    with open(FULL, "w") as full:
        done = subprocess.run(
            [script, *args[1:], *db], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        line for line in done.stderr.strip().splitlines() if line.startswith("Error:")
    ], done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "no space left" in done.stderr.lower()


@pytest.mark.parametrize(
    "args",
    [
        ("ttt", "--help"),
        ("ttt", "stats"),
        ("ttt", "query", ".../.x./..."),
        ("ttt", "export"),
        ("ttt", "export", "--format", "parquet"),
    ],
    ids=" ".join,
)
def test_a_reader_that_stopped_reading_is_no_error(book, args):
    """``ttt ... | head`` where head has left: no line, exit 1 (the output cut short), as
    click does for ``--help``; a full disk (above) is an error of one line, exit 2."""
    if "parquet" in args:
        pytest.importorskip("pyarrow", reason="pip install -e '.[notebook]'")
    script = os.path.join(os.path.dirname(sys.executable), args[0])
    db = [] if "--help" in args else ["--db", book]
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader gone before the first write: every write fails (EPIPE)
    try:
        done = subprocess.run(
            [script, *args[1:], *db],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (1, "")


def test_export_to_a_pipe_writes_into_it_and_leaves_it_a_pipe(book, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = run("export", "--db", book, "-q", "-o", str(fifo))
    reader.join(timeout=60)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert len(received[0].decode().splitlines()) == 766


@pytest.mark.parametrize("command", [("query", ".../.../..."), ("stats",)])
def test_a_size_of_thousands_of_digits_is_one_line(book, command):
    result = run(*command, "--size", "9" * 5000, "--db", book)
    assert_one_line_error(result, "is not a board size", "5,000 characters")
    assert "set_int_max_str_digits" not in result.output and len(result.output) < 400


def test_ttt_solve_with_a_size_of_thousands_of_digits_is_one_line(tmp_path):
    result = CliRunner().invoke(solve, ["--size", "9" * 5000, "--db", str(tmp_path / "b.sqlite")])
    assert_one_line_error(result, "is not a board size")
