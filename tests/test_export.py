"""``ttt export``: row counts, expansion to every reachable position, filters, formats."""

from __future__ import annotations

import csv
import io
import json
import sqlite3

import pytest
from click.testing import CliRunner

from tests.test_book_api import all_positions
from ttt_solve.book.reader import open_book
from ttt_solve.cli.export import Condition, parse_where
from ttt_solve.cli.main import ttt
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

T3 = Rules(3, 3, 3)


def export(*args: str):
    return CliRunner().invoke(ttt, ["export", *args])


def csv_rows(*args: str) -> list[dict[str, str]]:
    result = export(*args)
    assert result.exit_code == 0, result.output + result.stderr
    return list(csv.DictReader(io.StringIO(result.stdout)))


def test_canonical_rows(book_3x3):
    rows = csv_rows("--db", book_3x3)
    assert len(rows) == 765
    assert sum(int(r["images"]) for r in rows) == 5478
    assert sum(r["remoteness"] == "0" for r in rows) == 138
    assert rows[0] == {
        "position": ".../.../...",
        "ply": "0",
        "to_move": "x",
        "value": "draw",
        "remoteness": "9",
        "best_moves": "a1 b1 c1 a2 b2 c2 a3 b3 c3",
        "images": "1",
    }


def test_expanded_rows_are_the_reachable_positions(book_3x3):
    result = export("--db", book_3x3, "--expand")
    assert result.exit_code == 0
    assert "5,478 rows (958 terminal)" in result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 5478
    assert sum(r["remoteness"] == "0" for r in rows) == 958
    assert {r["position"] for r in rows} == {str(p) for p in all_positions(T3)}
    # Each row is the book's answer for that position, in that orientation.
    with open_book(book_3x3) as book:
        for row in rows[::37]:
            position = Position.parse(row["position"], T3)
            entry = book.find(position)
            assert (row["value"], int(row["remoteness"])) == (
                entry.value.outcome.value,
                entry.value.remoteness,
            )
            assert row["best_moves"].split() == [T3.cell_name(c) for c in entry.best_moves]
            assert int(row["ply"]) == position.ply and row["to_move"] == position.to_move


def test_jsonl_and_filters(book_3x3):
    result = export(
        "--db", book_3x3, "--format", "jsonl", "--where", "ply<=2", "--where", "value = draw"
    )
    assert result.exit_code == 0
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == 1 + 3 + 12 - sum(  # the losing ply-2 positions are left out
        1 for r in csv_rows("--db", book_3x3, "--where", "ply=2") if r["value"] != "draw"
    )
    assert all(r["ply"] <= 2 and r["value"] == "draw" for r in records)
    assert records[1]["best_moves"] == ["b2"]
    wins = csv_rows("--db", book_3x3, "--expand", "--where", "value=win and remoteness<=1")
    assert len(wins) == 2358
    assert len(csv_rows("--db", book_3x3, "--where", "images=1,ply>=1")) == len(
        [r for r in csv_rows("--db", book_3x3) if r["images"] == "1" and r["ply"] != "0"]
    )
    assert csv_rows("--db", book_3x3, "--where", "ply>9") == []


def test_output_file(book_3x3, tmp_path):
    target = tmp_path / "out.jsonl"
    result = export("--db", book_3x3, "--format", "jsonl", "-o", str(target), "-q")
    assert result.exit_code == 0 and result.stdout == "" and result.stderr == ""
    assert len(target.read_text().splitlines()) == 765


def test_parse_where():
    assert parse_where("ply<=4") == [Condition("ply", "<=", 4)]
    assert parse_where(" value = LOSS and images!=8 ") == [
        Condition("value", "=", -1),
        Condition("images", "!=", 8),
    ]
    assert parse_where("remoteness>-1") == [Condition("remoteness", ">", -1)]


@pytest.mark.parametrize(
    "text, message",
    [
        ("ply<=x", "ply compares with a whole number, not 'x'"),
        ("value=maybe", "value compares with win, draw, loss"),
        ("key=1", "unknown column 'key'"),
        ("ply", "cannot read 'ply'"),
        ("ply=1; DROP TABLE position_blocks", "cannot read"),
        ("ply=1 or 1=1", "cannot read"),
        ("value=win) OR (1=1", "cannot read"),
        ("ply<=99999999999999999999999", "out of range for ply"),
    ],
)
def test_bad_filters_are_refused_and_never_reach_sql(book_3x3, text, message):
    result = export("--db", book_3x3, "--where", text)
    assert result.exit_code == 2
    assert message in result.stderr and result.stdout == ""
    with sqlite3.connect(book_3x3) as conn:
        assert conn.execute("SELECT sum(count) FROM position_blocks").fetchone() == (765,)


def test_missing_game_writes_nothing(book_3x3):
    result = export("--db", book_3x3, "--size", "4", "--win", "3")
    assert result.exit_code == 2 and result.stdout == ""
    assert "ttt-solve --size 4 --win 3" in result.stderr


@pytest.mark.slow
def test_expanded_4x4k4_row_count(book_4x4k4):
    result = export(
        "--db", book_4x4k4, "--size", "4", "--win", "4", "--expand", "--format", "jsonl", "-q"
    )
    assert result.exit_code == 0
    assert result.stdout.count("\n") == 9_722_011


@pytest.mark.parametrize("to", ["file", "stdout"])
def test_a_table_folder_that_is_no_folder_is_named_not_the_output(tmp_path, to):
    from ttt_solve.book.table.catalogue import catalogue_table
    from ttt_solve.solver.tablebase.build import build_table

    build_table(T3, tmp_path / "3x3k3")
    db = str(tmp_path / "t.sqlite")
    with open_book(db, create=True) as book:
        catalogue_table(book, tmp_path / "3x3k3")
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE games SET table_folder = '/dev/null'")
    connection.close()
    out = tmp_path / "out.csv"
    result = export("--db", db, "-q", *(["-o", str(out)] if to == "file" else []))
    assert result.exit_code == 2, result.output
    assert "/dev/null" in result.stderr and "out.csv" not in result.stderr, result.stderr
    assert "cannot write" not in result.stderr and len(result.stderr.splitlines()) == 1
    assert not out.exists()
