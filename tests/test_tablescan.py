"""Reading a tablebase in the order of its index (:meth:`TableRows.scanned_rows`), as boards
of more than 20 cells are streamed: the same rows as the key-ordered stream, in another order.

Small boards take the scanned path here by lowering ``STREAM_CELLS_LIMIT``; the key-ordered
stream they are held to is itself held to the blocks' rows in tests/test_tablebase_book.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from ttt_solve.book.reader import open_book
from ttt_solve.book.rowfilter import RowFilter
from ttt_solve.book.table import rows as tablerows
from ttt_solve.book.table.catalogue import catalogue_table
from ttt_solve.book.table.rows import TableRows
from ttt_solve.cli.main import ttt
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.build import build_table

BOARDS = [Rules(3, 3, 3), Rules(3, 4, 3), Rules(4, 4, 3)]


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """A table of each board, and a book cataloguing them."""
    folder = tmp_path_factory.mktemp("tables")
    book_file = str(folder / "tables.sqlite")
    with open_book(book_file, create=True) as book:
        for rules in BOARDS:
            build_table(rules, folder / rules.name)
            catalogue_table(book, folder / rules.name)
    return folder, book_file


def joined(pieces) -> dict[str, np.ndarray]:
    pieces = list(pieces)
    return {name: np.concatenate([piece[name] for piece in pieces]) for name in pieces[0]}


def in_key_order(columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    order = np.lexsort((columns["key"], columns["ply"]))
    return {name: column[order] for name, column in columns.items()}


@pytest.mark.parametrize("rules", BOARDS, ids=lambda r: r.name)
@pytest.mark.parametrize("where", ["", "ply<=4", "ply>=3 and value=win and images>=4"])
def test_scanned_rows_are_the_key_ordered_rows(tables, rules, where):
    folder, _ = tables
    rows = TableRows(folder / rules.name, rules)
    chosen = RowFilter.parse(where) if where else RowFilter()
    try:
        expected = joined(rows.plies(rules))
        if chosen.conditions:
            keep = chosen.holds(expected)
            expected = {name: column[keep] for name, column in expected.items()}
        scanned = joined(rows.scanned_rows(rules, chosen))
    finally:
        rows.close()
    assert len(scanned["key"]) == len(expected["key"]) > 0
    assert not np.array_equal(scanned["key"], expected["key"]) or len(expected["key"]) < 3
    got = in_key_order(scanned)
    for name, column in expected.items():
        assert np.array_equal(got[name], column), name


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_an_export_in_index_order_holds_the_rows_of_one_in_key_order(tables, monkeypatch, fmt):
    _, book_file = tables
    runner = CliRunner()
    args = ["export", "--size", "3x4", "--win", "3", "--db", book_file, "-q", "--format", fmt]
    args += ["--where", "ply<=7"]
    by_key = runner.invoke(ttt, args)
    monkeypatch.setattr(tablerows, "STREAM_CELLS_LIMIT", 8)
    by_number = runner.invoke(ttt, args)
    assert by_key.exit_code == 0 and by_number.exit_code == 0, by_number.output
    key_lines = by_key.stdout.splitlines()
    number_lines = by_number.stdout.splitlines()
    assert number_lines != key_lines
    assert number_lines[: fmt == "csv"] == key_lines[: fmt == "csv"]  # the CSV header first
    assert sorted(number_lines) == sorted(key_lines)


def test_a_filter_on_the_ply_reads_no_other_ply(tables, monkeypatch):
    folder, _ = tables
    rules = BOARDS[1]
    rows = TableRows(folder / rules.name, rules)
    read = []
    scan = rows.scan
    monkeypatch.setattr(rows, "scan", lambda r, ply, *rest: read.append(ply) or scan(r, ply, *rest))
    try:
        found = joined(rows.scanned_rows(rules, RowFilter.parse("ply>=5 and ply<7")))
    finally:
        rows.close()
    assert set(read) == {5, 6} and set(found["ply"].tolist()) == {5, 6}


def test_a_scan_reads_a_ply_in_pieces_of_bounded_size(tables, monkeypatch):
    folder, _ = tables
    rules = BOARDS[2]
    monkeypatch.setattr(tablerows, "SCAN_NUMBERS", 1000)
    rows = TableRows(folder / rules.name, rules)
    try:
        pieces = list(rows.scanned_rows(rules, RowFilter.parse("ply=8")))
        numbers = rows.table._ply(8).header.count
    finally:
        rows.close()
    assert len(pieces) > numbers // 2000
    assert max(len(piece["key"]) for piece in pieces) <= 1000


def test_closing_while_arrays_still_view_the_table_is_no_error(tables):
    folder, _ = tables
    rules = BOARDS[0]
    rows = TableRows(folder / rules.name, rules)
    records = rows.records(4)  # a view of the memory map, alive past the close
    rows.close()
    assert len(records) > 0
