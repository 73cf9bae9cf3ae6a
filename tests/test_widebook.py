"""Books of boards of 32 to 64 cells: keys past 64 bits, kept in blocks of 16-byte keys.

Built with the plain-Python prover on boards it proves in seconds (3x11 k=3, 8x8 k=3: X wins);
the Python paths of the builder and the checker are held against the array paths, which the
exhaustive solver checks, on small boards.
"""

from __future__ import annotations

import csv
import io
import shutil
import sqlite3
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from tests import booksurgery
from ttt_solve.book.errors import BookError
from ttt_solve.book.reader import open_book
from ttt_solve.book.verify import check_wide_plies
from ttt_solve.book.writer import write_game
from ttt_solve.cli.main import ttt
from ttt_solve.cli.solve import solve
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.plytable import PlyTable
from ttt_solve.solver.position import Position
from ttt_solve.solver.prover.opening import OpeningBookBuilder
from ttt_solve.solver.prover.search import Prover
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.verify import check_plies

WIDE = Rules(3, 11, 3)  # 33 cells: 66-bit keys
FULL = Rules(8, 8, 3)  # 64 cells: 128-bit keys, cell 63 in the best-move masks


def build(db: str, rules: Rules, depth: int) -> None:
    args = ["--size", rules.size, "--win", str(rules.k), "--method", "alphabeta"]
    result = CliRunner().invoke(solve, [*args, "--book-depth", str(depth), "--db", db])
    assert result.exit_code == 0, result.output


def ttt_run(*args: str):
    return CliRunner().invoke(ttt, list(args))


@pytest.fixture(scope="module")
def wide_book(tmp_path_factory: pytest.TempPathFactory) -> str:
    db = str(tmp_path_factory.mktemp("wide") / "wide.sqlite")
    build(db, WIDE, 2)
    build(db, FULL, 1)
    return db


def as_python_keys(table: PlyTable) -> PlyTable:
    return table._replace(keys=np.array(table.keys.tolist(), dtype=object))


@pytest.mark.parametrize("shape,depth", [((3, 3, 3), 9), ((3, 4, 3), 3), ((4, 4, 3), 2)])
def test_the_python_path_of_the_builder_gives_the_exhaustive_rows(shape, depth):
    rules = Rules(*shape)
    builder = OpeningBookBuilder(rules, depth)
    builder.arrays = None  # as on a board of more than 31 cells
    truth = {t.ply: t for t in ExhaustiveSolver(rules).solve() if t.ply <= depth}
    book = list(builder.solve())
    assert [table.ply for table in book] == sorted(truth, reverse=True)
    for table in book:
        expected = truth[table.ply]
        assert table.keys.dtype == object
        assert table.keys.tolist() == expected.keys.tolist(), table.ply
        for field in ("scores", "best_moves", "images"):
            got, want = getattr(table, field), getattr(expected, field)
            assert got.dtype == want.dtype and np.array_equal(got, want), (table.ply, field)


def test_the_python_checker_finds_what_the_array_checker_finds():
    rules = Rules(3, 3, 3)
    plies = sorted(ExhaustiveSolver(rules).solve(), key=lambda table: table.ply)
    assert list(check_wide_plies(rules, map(as_python_keys, plies))) == []
    broken = list(plies)
    scores, best, images = (broken[4].scores.copy(), broken[5].best_moves.copy(), broken[6].images)
    scores[3] = -scores[3]
    best[7] ^= 1 << 8 if best[7] != 1 << 8 else 1
    broken[4] = broken[4]._replace(scores=scores)
    broken[5] = broken[5]._replace(best_moves=best)
    broken[6] = broken[6]._replace(images=images + 1)
    keys = broken[2].keys.copy()
    keys[-1] |= np.uint64(1 << 9 + 8)  # an O on a cell X holds (the last key: still sorted)
    broken[2] = broken[2]._replace(keys=keys)
    expected = sorted(check_plies(rules, broken))
    assert len(expected) >= 4
    assert sorted(check_wide_plies(rules, map(as_python_keys, broken))) == expected
    del broken[5]  # a ply missing: the open positions of ply 4 have no stored children
    found = list(check_wide_plies(rules, map(as_python_keys, broken)))
    assert [p for p in found if "not stored" in p.message] == [
        p for p in check_plies(rules, broken) if "not stored" in p.message
    ]


@pytest.mark.parametrize("rules", [WIDE, FULL])
def test_a_wide_book_verifies_and_answers_as_the_prover(wide_book, rules):
    result = ttt_run("verify", "--size", rules.size, "--win", str(rules.k), "--db", wide_book)
    assert result.exit_code == 0, result.output
    assert "OK" in result.output
    prover = Prover(rules)
    with open_book(wide_book) as book:
        info = book.game(rules)
        start = Position.start(rules)
        assert info.value == book.find(start).value == prover.solve(start).value
        corner = start.play(rules.cells - 1)  # a key with O to move and X on the last cell
        assert book.find(corner).value == prover.solve(corner).value
        asked = corner if info.book_depth == 2 else start  # its children are stored
        by_cell = dict(prover.move_values(asked))
        assert {m.cell: m.value for m in book.moves(asked)} == by_cell
        assert set(book.find(asked).best_moves) == {
            cell
            for cell, value in by_cell.items()
            if value == min(by_cell.values(), key=lambda v: v.sort_key)
        }
        assert book.find_with_moves(asked) == (book.find(asked), book.moves(asked))
        children = {start.play(cell) for cell in start.legal_moves()}
        assert set(book.find_many(children)) == children


def test_query_of_a_wide_book(wide_book):
    args = ("query", "--size", WIDE.size, "--win", "3", "--db", wide_book, "--moves", "k3")
    result = ttt_run(*args)
    assert result.exit_code == 0, result.output
    assert "O to move (ply 1)" in result.output and "best" in result.output


def test_the_read_path_of_a_wide_book_imports_no_numpy_or_sqlalchemy(wide_book):
    code = (
        "import sys; from ttt_solve.book.reader import open_book;"
        "from ttt_solve.solver.position import Position; from ttt_solve.solver.rules import Rules\n"
        f"with open_book({wide_book!r}) as b: "
        "print(b.find(Position.start(Rules(8, 8, 3)).play(63)).value)\n"
        "print(sorted(m for m in ('sqlalchemy', 'numpy', 'numba') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.split("\n")[1] == "[]", result.stderr


def test_export_round_trips_the_wide_keys(wide_book):
    args = ("export", "--size", WIDE.size, "--win", "3", "--db", wide_book, "--format", "csv")
    result = ttt_run(*args)
    assert result.exit_code == 0, result.output
    exported = list(csv.DictReader(io.StringIO(result.stdout)))
    with open_book(wide_book) as book:
        stored = [(row.ply, row.key) for row in book.rows(WIDE)]
    keys = [(int(r["ply"]), Position.parse(r["position"], WIDE).canonical_key) for r in exported]
    assert keys == stored and len(stored) == 306
    assert max(key for _, key in stored) >> WIDE.cells  # O's stones, past the 33 bits of X


@pytest.mark.parametrize("rules", [WIDE, FULL, Rules(3, 4, 3)])
def test_a_book_of_depth_0_holds_the_proven_start(tmp_path, rules):
    db = str(tmp_path / "depth0.sqlite")
    build(db, rules, 0)
    with open_book(db) as book:
        rows = list(book.rows(rules))
        info = book.game(rules)
    assert [(row.ply, row.key) for row in rows] == [(0, 0)]
    assert info.book_depth == 0 and info.positions == 1
    assert info.value == Prover(rules).solve(Position.start(rules)).value
    result = ttt_run("verify", "--size", rules.size, "--win", str(rules.k), "--db", db)
    assert result.exit_code == 0, result.output


def wide_game(db: str) -> int:
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT id FROM games WHERE cols = 11").fetchone()[0]


def test_a_corrupted_wide_row_is_caught(wide_book, tmp_path):
    verify = ("verify", "--size", WIDE.size, "--win", "3")
    wrong_value = str(tmp_path / "value.sqlite")
    shutil.copy(wide_book, wrong_value)
    row = booksurgery.first(wrong_value, game_id=wide_game(wrong_value), ply=1)
    booksurgery.change(wrong_value, row, value=-row.value, remoteness=row.remoteness + 1)
    result = ttt_run(*verify, "--db", wrong_value)
    assert result.exit_code == 1
    assert "score is not the best over the children" in result.output
    assert "ply 1, position x........../.........../..........." in result.output

    cut_key = str(tmp_path / "key.sqlite")
    shutil.copy(wide_book, cut_key)
    with sqlite3.connect(cut_key) as connection:
        cut = connection.execute(
            "UPDATE position_blocks SET keys = X'0102' WHERE game_id = ? AND ply = 0",
            (wide_game(cut_key),),
        )
        assert cut.rowcount == 1
    result = ttt_run(*verify, "--db", cut_key)
    assert result.exit_code == 2
    assert "looks damaged: a position block of ply 0 holds 2 bytes of keys" in result.output
    result = ttt_run("query", "--size", WIDE.size, "--win", "3", "--db", cut_key)
    assert result.exit_code == 2 and "looks damaged" in result.output

    off_board = str(tmp_path / "board.sqlite")
    shutil.copy(wide_book, off_board)
    for row in booksurgery.matching(off_board, game_id=wide_game(off_board), ply=1):
        booksurgery.change(off_board, row, best_moves=1)
    result = ttt_run("query", "--size", WIDE.size, "--win", "3", "--db", off_board)
    assert result.exit_code == 2 and "best moves off the board" in result.output


def test_a_board_past_64_cells_is_refused_by_the_writer(tmp_path):
    rules = Rules(5, 13, 4)  # 65 cells
    with open_book(str(tmp_path / "big.sqlite"), create=True) as book:
        with pytest.raises(
            BookError, match="5x13 k=4 has 65 cells; a book holds boards of at most 64"
        ):
            write_game(book, rules, iter(()), method="alphabeta", book_depth=0)


@pytest.mark.parametrize("rules", [Rules(3, 4, 3), pytest.param(WIDE, marks=pytest.mark.slow)])
def test_verify_checks_the_last_ply_by_the_prover(wide_book, tmp_path, rules):
    """The last ply of an opening book has no stored children: the prover's probes check its
    rows, on the array path (up to 31 cells) and the Python one."""
    source = wide_book
    if rules != WIDE:
        source = str(tmp_path / "small.sqlite")
        build(source, rules, 2)
    with sqlite3.connect(source) as connection:
        (game_id,) = connection.execute(
            "SELECT id FROM games WHERE rows = ? AND cols = ? AND k = ?",
            (rules.rows, rules.cols, rules.k),
        ).fetchone()
    last_ply = booksurgery.matching(source, game_id=game_id, ply=2)
    row = next(r for r in last_ply if r.value != 0 and 0 < r.remoteness <= rules.cells - 4)
    position = Position.from_key(rules, row.key)
    other_cell = next(c for c in position.legal_moves() if not row.best_moves >> c & 1)
    jobs = "2" if rules == WIDE else "1"  # worker processes, or this one
    verify = ("verify", "--size", rules.size, "--win", str(rules.k), "--jobs", jobs)
    for damage, message in [
        ({"remoteness": row.remoteness + 2}, "score differs from the prover's"),
        ({"best_moves": row.best_moves | 1 << other_cell}, "best moves differ from the prover's"),
    ]:
        db = str(tmp_path / "damaged.sqlite")
        shutil.copy(source, db)
        booksurgery.change(db, row, **damage)
        result = ttt_run(*verify, "--db", db)
        assert result.exit_code == 1, result.output
        assert f"ply 2, position {position}: {message}" in result.output
    assert ttt_run(*verify, "--db", source).exit_code == 0


def test_a_wide_build_keeps_each_position_it_proves(tmp_path):
    """Past 31 cells a position can take minutes to prove: each one is kept as it is done."""

    class Interrupt(Exception):
        pass

    def stop_after_three(done: int, total: int) -> None:
        if 3 <= done < total - 1:
            raise Interrupt

    workdir = tmp_path / "work"
    builder = OpeningBookBuilder(WIDE, 1, progress=stop_after_three, workdir=str(workdir))
    with pytest.raises(Interrupt):
        list(builder.solve())
    kept = sorted(p.name for p in workdir.iterdir() if p.name.endswith("-scores.npy"))
    assert kept == [f"deepest-rows-{row}-{row + 1}-scores.npy" for row in range(3)]
    resumed = OpeningBookBuilder(WIDE, 1, workdir=str(workdir))
    fresh = OpeningBookBuilder(WIDE, 1)
    for got, want in zip(resumed.solve(), fresh.solve(), strict=True):
        assert got.keys.tolist() == want.keys.tolist()
        assert np.array_equal(got.scores, want.scores)
        assert np.array_equal(got.best_moves, want.best_moves)
    assert resumed.nodes < fresh.nodes
