"""``ttt-solve`` through click's CliRunner: summary, re-runs, bad arguments."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from ttt_solve.cli.main import ttt
from ttt_solve.cli.solve import solve
from ttt_solve.solver.rules import Rules


def run(args, **kwargs):
    return CliRunner().invoke(solve, args, **kwargs)


def test_solve_3x3_prints_the_summary(tmp_path):
    db = str(tmp_path / "t.sqlite")
    result = run(["--size", "3", "--win", "3", "--db", db])
    assert result.exit_code == 0, result.output
    for figure in (
        "draw (remoteness 9)",
        "5,478",
        "765",
        "958 (X wins 626, O wins 316, draws 16)",
        "2,836 / 1,068 / 1,574",
    ):
        assert figure in result.output
    again = run(["--size", "3", "--win", "3", "--db", db])
    assert again.exit_code == 0
    assert "already solved" in again.output and "5,478" in again.output
    forced = run(["--size", "3", "--win", "3", "--db", db, "--force", "--quiet"])
    assert forced.exit_code == 0 and forced.output == ""


def test_rectangular_board_and_the_group(tmp_path):
    db = str(tmp_path / "t.sqlite")
    result = CliRunner().invoke(ttt, ["solve", "--size", "3x4", "--win", "3", "--db", db])
    assert result.exit_code == 0, result.output
    assert (
        "win (remoteness" in result.output
        and "111,973" in result.output
        and "28,275" in result.output
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--size", "3", "--win", "4"], "need 1 <= k <= 3"),
        (["--size", "3", "--win", "0"], "need 1 <= k <= 3"),
        (["--size", "3x", "--win", "3"], "board size '3x'"),
        (["--size", "5", "--win", "4", "--method", "exhaustive"], "too large to enumerate"),
        (["--size", "9", "--win", "5"], "at most 64 cells"),
        (["--size", "6", "--win", "5", "--method", "exhaustive"], "exhaustive solve holds"),
        (["--size", "30", "--win", "5"], "each side must be 1..26"),
    ],
)
def test_bad_arguments_give_one_line_and_status_2(tmp_path, args, message):
    result = run(args + ["--db", str(tmp_path / "t.sqlite")])
    assert result.exit_code == 2
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_help_and_version():
    assert "Examples" in run(["--help"]).output
    result = CliRunner().invoke(ttt, ["--version"])
    assert result.exit_code == 0 and "ttt-solve" in result.output


def test_large_solves_keep_plies_on_disk_and_clean_up(tmp_path, monkeypatch):
    import os

    import ttt_solve.book.solving

    monkeypatch.setattr(
        ttt_solve.book.solving, "WORKDIR_POSITIONS", 0
    )  # treat 3x4 as a large solve
    db = str(tmp_path / "t.sqlite")
    workdir = ttt_solve.book.solving.work_directory(db, Rules(3, 4, 3))
    seen = []
    original = ttt_solve.book.solving.write_game

    def write_and_look(book, rules, plies, **kwargs):
        def watched():
            for table in plies:
                seen.append(os.path.isdir(workdir) and len(os.listdir(workdir)))
                yield table

        return original(book, rules, watched(), **kwargs)

    monkeypatch.setattr(ttt_solve.book.solving, "write_game", write_and_look)
    result = run(["--size", "3x4", "--win", "3", "--db", db])
    assert result.exit_code == 0, result.output
    assert seen and all(seen), "the plies were not kept in the work directory"
    assert not os.path.exists(workdir), "the work directory outlived a finished solve"
    assert "28,275" in result.output


def test_an_opening_book_keeps_its_work_until_written_and_leaves_nothing_behind(
    tmp_path, monkeypatch
):
    import os

    import ttt_solve.book.solving
    import ttt_solve.solver.prover.opening

    db = str(tmp_path / "t.sqlite")
    seen = []
    original = ttt_solve.book.solving.write_game

    def write_and_look(book, rules, plies, **kwargs):
        workdir = ttt_solve.book.solving.work_directory(db, rules) + "-book3"
        seen.append(sorted(os.listdir(workdir)))
        return original(book, rules, plies, **kwargs)

    monkeypatch.setattr(ttt_solve.book.solving, "write_game", write_and_look)
    monkeypatch.setattr(
        ttt_solve.solver.prover.opening, "ROWS_PER_CHUNK", 16
    )  # 14 chunks: worth 2 workers
    result = run(
        [
            "--size",
            "4",
            "--win",
            "4",
            "--method",
            "alphabeta",
            "--book-depth",
            "3",
            "--jobs",
            "2",
            "--db",
            db,
        ]
    )
    assert result.exit_code == 0, result.output
    assert "prover: compiled search (Numba)" in result.output
    assert re.search(
        r"prover: [\d,]+ nodes in [\d.]+ s \([\d,]+ nodes/s, 2 processes\)", result.output
    )
    assert "deepest-rows-0-16-scores.npy" in seen[0] and "identity.json" in seen[0]
    assert sorted(os.listdir(tmp_path)) == ["t.sqlite"], "work files outlived the solve"


def test_an_interruption_before_the_solve_begins_says_nothing_was_written(tmp_path, monkeypatch):
    """Ctrl-C while the book is being opened, before the solve's first line: the line says
    what was left (it said "interrupted: " and nothing more)."""
    import ttt_solve.book.solving as solving

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(solving, "open_book", interrupted)
    result = run(["--size", "3", "--win", "3", "--db", str(tmp_path / "t.sqlite")])
    assert result.exit_code == 130, result.output
    assert result.output.strip().splitlines()[-1] == "interrupted: nothing was written"
