"""Inputs past every limit, and small promises of the command line: numbers of thousands of
digits, boards too large to enumerate, an audit that grades nothing, the temporary files of a
killed export, a file-size limit, and the test command that says what it skips."""

from __future__ import annotations

import glob
import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from ttt_solve.cli.main import ttt
from ttt_solve.cli.solve import solve

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
HUGE = "9" * 23
"""Past 64 bits."""
ENORMOUS = "7" * 5000
"""Past the 4,300 digits Python agrees to read as a number."""


def run(*args: str):
    return CliRunner().invoke(ttt, list(args))


def assert_one_line_error(result, *words: str) -> None:
    """Exit 2 with one line on stderr that holds every one of ``words``; never "a bug"."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "bug" not in lines[0] and len(lines[0]) < 600, lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])


# -- numbers of any size are input errors, quoting the input -----------------------------------


@pytest.mark.parametrize("number", [HUGE, ENORMOUS], ids=["23 digits", "5000 digits"])
def test_a_huge_move_is_no_cell(book_3x3, number):
    for moves in (number, f"a{number}", f"b2,{number}"):
        result = run("query", "--moves", moves, "--db", book_3x3)
        assert_one_line_error(result, number[:10], "cell", "3x3" if number == HUGE else "0..8")


def test_a_huge_move_typed_in_a_game_is_refused_and_the_game_goes_on(book_3x3):
    result = CliRunner().invoke(
        ttt, ["play", "--db", book_3x3, "--seed", "1"], input=f"{ENORMOUS}\nquit\n"
    )
    assert result.exit_code == 0, result.output
    assert "(5,000 characters) is not a cell" in result.output
    assert "game left unfinished" in result.output


@pytest.mark.parametrize("number", [HUGE, ENORMOUS], ids=["23 digits", "5000 digits"])
@pytest.mark.parametrize("where", ["ply<={}", "value={}", "remoteness>-{}"])
def test_a_huge_number_in_where_is_out_of_range(book_3x3, number, where):
    result = run("export", "--db", book_3x3, "--where", where.format(number))
    assert_one_line_error(result, "--where", number[:10], "out of range")


@pytest.mark.parametrize("number", [HUGE, ENORMOUS], ids=["23 digits", "5000 digits"])
def test_a_huge_sample_is_refused(book_3x3, number):
    result = run("audit", "--agent", "random", "--positions", f"sample:{number}", "--db", book_3x3)
    assert_one_line_error(result, "--positions", f"sample:{number[:10]}", "N < 10**18")


def test_curve_seeds_are_bounded(book_3x3):
    result = run(
        "curve", "--agent", "mcts", "--vary", "iterations=1,2", "--seeds", HUGE, "--db", book_3x3
    )
    assert_one_line_error(result, "--seeds", HUGE, "1 to 10,000")


CURVE = ["curve", "--agent", "mcts", "--vary", "iterations=1,2"]
TOURNAMENT = ["tournament", "--agents", "random,heuristic"]


@pytest.mark.parametrize(
    "command, option, bound",
    [
        (["rate"], "--games", "1 to 100,000"),
        (["rate"], "--seed", "0 to 2**63-1"),
        (["rate"], "--bootstrap", "0 to 10,000"),
        ([*CURVE, "--rating"], "--rating-games", "1 to 100,000"),
        (CURVE, "--games", "1 to 100,000"),
        (CURVE, "--seed", "0 to 2**63-1"),
        (["audit", "--agent", "random"], "--games", "1 to 100,000"),
        (["audit", "--agent", "random"], "--seed", "0 to 2**63-1"),
        (TOURNAMENT, "--games", "1 to 100,000"),
        (TOURNAMENT, "--bootstrap", "0 to 10,000"),
        (TOURNAMENT, "--seed", "0 to 2**63-1"),
    ],
    ids=lambda part: " ".join(part) if isinstance(part, list) else part,
)
@pytest.mark.parametrize(
    "number", [HUGE, ENORMOUS, "-1", "ten"], ids=["23 digits", "5000 digits", "-1", "a word"]
)
def test_every_count_and_seed_is_bounded_before_any_work(book_3x3, command, option, bound, number):
    """Counts and seeds past what a book keeps (a 64-bit integer: "OverflowError ... SQLite
    INTEGER", a bug) or past anyone's patience (games and resamples by the 10**23, which ran
    until killed) are one-line errors naming the option and its range, before any work."""
    if number == "-1" and option != "--seed" and bound.startswith("0 "):
        number = "10001"  # -1 is refused as below the range; 10001 is above this one
    result = run(*command, option, number, "--db", book_3x3)
    assert_one_line_error(result, option, number[:10], bound)


def test_the_largest_seed_is_taken_and_a_book_keeps_it(book_3x3, tmp_path):
    from ttt_solve.book.ladder import LadderKey, LadderRow, read_rows, write_batch
    from ttt_solve.book.reader import open_book
    from ttt_solve.cli.options import MAX_SEED
    from ttt_solve.solver.rules import Rules

    result = run(*TOURNAMENT, "--games", "2", "--seed", str(MAX_SEED), "--db", book_3x3)
    assert result.exit_code == 0, result.output
    db = tmp_path / "book.sqlite"
    db.write_bytes(Path(book_3x3).read_bytes())
    key = LadderKey("standard", 1, MAX_SEED)  # what ttt rate --seed MAX_SEED caches
    rows = [LadderRow("random", "heuristic", 0, 0, 1), LadderRow("heuristic", "random", 1, 0, 0)]
    with open_book(str(db)) as book:
        assert write_batch(book, Rules(3, 3, 3), key, "", rows)
        assert sorted(read_rows(book, Rules(3, 3, 3), key)) == sorted(rows)


@pytest.mark.parametrize("anchor", ["random=1e308", "random=-10001", "random=inf", "random=nan"])
def test_an_anchors_rating_is_bounded(book_3x3, anchor):
    for command in (["rate"], TOURNAMENT):
        result = run(*command, "--anchor", anchor, "--db", book_3x3)
        assert_one_line_error(result, "--anchor", anchor)


# -- boards too large to enumerate -------------------------------------------------------------


@pytest.mark.parametrize("size, win", [("6", "5"), ("7", "5"), ("8", "8"), ("5x7", "4")])
def test_an_exhaustive_solve_past_31_cells_is_refused_with_its_estimate(tmp_path, size, win):
    db = str(tmp_path / "big.sqlite")
    result = CliRunner().invoke(
        solve, ["--size", size, "--win", win, "--method", "exhaustive", "--db", db]
    )
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert "\n" not in line
    # The estimate: canonical positions and the memory they would take, beside what there is.
    assert re.search(r"about [\d.]+e\+\d+ canonical positions, [\d.,e+]+ GiB at peak", line), line
    assert re.search(r"\d+ GiB available", line), line
    assert "an exhaustive solve holds boards of at most 31" in line
    assert "--method alphabeta --book-depth D" in line
    assert not os.path.exists(db)


# -- an audit that grades no move --------------------------------------------------------------


def never_in_time(rng):  # noqa: ANN001, ANN201 - a py: factory
    """An agent that never answers within its time limit: every move is a failure."""

    class Sleeper:
        def select_move(self, position):  # noqa: ANN001, ANN202
            time.sleep(30)

    return Sleeper()


def test_an_audit_that_grades_no_move_says_so(book_3x3):
    spec = "py:tests.test_limits:never_in_time,timeout=0.05"
    result = run("audit", "--agent", spec, "--positions", "sample:3", "--db", book_3x3, "-q")
    assert result.exit_code == 0, result.output
    # every failed move counts against the grade: none kept the value
    assert re.search(r"accuracy \(value kept\)\s+│ 0\.00%", result.output), result.output
    assert re.search(r"moves graded\s+│ 0 ", result.output), result.output
    assert re.search(r"failed moves \(count against accuracy\)\s+│ 3 ", result.output)
    assert "every graded move was best" not in result.output


# -- the temporary files of an export killed outright -----------------------------------------


def test_a_killed_exports_temporary_file_is_removed_by_the_next(book_4x4k4, book_3x3, tmp_path):
    target = tmp_path / "rows.csv"
    ours = str(tmp_path / ".rows.csv.*.part")
    command = [sys.executable, "-c", "from ttt_solve.cli.main import main; main()", "export"]
    long_export = [*command, "--size", "4", "--win", "4", "--expand", "--db", book_4x4k4]

    def start_export() -> tuple[subprocess.Popen, str]:
        before = set(glob.glob(ours))
        process = subprocess.Popen(
            [*long_export, "-o", str(target)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            new = set(glob.glob(ours)) - before
            if new:
                return process, new.pop()
            time.sleep(0.01)
        raise AssertionError("the export wrote no temporary file")

    killed, stale = start_export()
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    assert os.path.exists(stale) and not target.exists()
    running, live = start_export()  # another export of the same target, still writing
    others = [tmp_path / ".rows.csv.part", tmp_path / ".other.csv.abcdefgh.part"]
    for other in others:  # not named as this target's temporary files are
        other.write_text("not ours")
    try:
        result = run("export", "--db", book_3x3, "-o", str(target), "-q")
        assert result.exit_code == 0, result.output
        assert not os.path.exists(stale), "the killed export's temporary file is still there"
        assert all(other.exists() for other in others)
        if running.poll() is None:  # (on a machine fast enough to finish it, nothing to see)
            assert os.path.exists(live), "the running export's temporary file was removed"
        assert target.read_text().startswith("position,ply")
    finally:
        running.kill()
        running.wait()


# -- the README's test command says what it skips ---------------------------------------------


def test_the_test_command_lists_every_skip_with_its_reason():
    addopts = re.search(r'^addopts = "(.*)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert addopts and "-rs" in addopts.group(1).split()
    readme = (ROOT / "README.md").read_text()
    assert ".venv/bin/python -m pytest\n" in readme
    assert "lists every skip with its reason" in readme


def test_no_test_prints_among_the_dots():
    """What a test prints stays in pytest's capture, shown only for a failure: none writes
    past it, as a summary line among the dots would."""
    past_the_capture = re.compile(r"capsys\.disabled\(\)|capfd\.disabled\(\)|sys\.__stdout__")
    writers = [
        path.name
        for path in sorted((ROOT / "tests").glob("*.py"))
        if path.name != Path(__file__).name and past_the_capture.search(path.read_text())
    ]
    assert writers == []


# -- a file-size limit -----------------------------------------------------------------------

FILE_SIZE_LIMIT = 64 * 1024
"""Bytes a file of the export below may reach: the book's own files are smaller."""


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))


@pytest.mark.parametrize("to", ["stdout", "file"])
def test_an_export_past_the_file_size_limit_says_so(book_3x3, tmp_path, to):
    """``ulimit -f``: the export fails in one line naming the limit, never stops short of
    its rows with exit 0 (as a write to standard output did)."""
    out = tmp_path / "out.jsonl"
    command = [str(BIN / "ttt"), "export", "--db", book_3x3, "--expand", "--format", "jsonl"]
    with open(out, "w") as stdout:
        done = subprocess.run(
            command + (["-o", str(out)] if to == "file" else []),
            stdout=subprocess.DEVNULL if to == "file" else stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            preexec_fn=_limited,
        )
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: cannot write "), done.stderr
    assert f"file-size limit of {FILE_SIZE_LIMIT:,} bytes (ulimit -f)" in lines[0], lines[0]
