"""``ttt verify`` of a tablebase as boards of more than 20 cells are checked (digests, a seeded
sample of each ply, whole plies on request), taken by small boards here by lowering
``STREAM_CELLS_LIMIT``: a sound table passes, and one whose records were altered (its digests
made again, so that only the values can tell) fails at the altered positions."""

from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from ttt_solve.book.reader import open_book
from ttt_solve.book.table import rows as tablerows
from ttt_solve.book.table.catalogue import catalogue_table
from ttt_solve.book.table.rows import TableRows
from ttt_solve.book.table.verify import (
    TableCheck,
    sample_problems,
    sampled_positions,
    whole_ply_problems,
)
from ttt_solve.cli.main import ttt
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase import sample
from ttt_solve.solver.tablebase.build import build_table
from ttt_solve.solver.tablebase.classes import class_table
from ttt_solve.solver.tablebase.files import HEADER_SIZE, TableHeader, read_header
from ttt_solve.solver.tablebase.index import stone_counts
from ttt_solve.solver.tablebase.positions import stand_for
from ttt_solve.solver.tablebase.record import DECIDED, DRAW, NONE

RULES = Rules(4, 4, 3)
GAME = ["--size", "4", "--win", "3"]


@pytest.fixture(scope="module")
def sound(tmp_path_factory):
    """A table of 4x4 k=3, built once."""
    folder = tmp_path_factory.mktemp("sound") / RULES.name
    build_table(RULES, folder)
    return folder


@pytest.fixture
def book(tmp_path, sound, monkeypatch):
    """A book cataloguing a copy of the table, checked as a board over the stream limit."""
    monkeypatch.setattr(tablerows, "STREAM_CELLS_LIMIT", 8)
    folder = tmp_path / RULES.name
    shutil.copytree(sound, folder)
    book_file = str(tmp_path / "book.sqlite")
    with open_book(book_file, create=True) as opened:
        catalogue_table(opened, folder)
    return folder, book_file


def records_of(folder, ply: int) -> tuple[bytearray, int]:
    """A ply file's bytes and where its records start."""
    data = bytearray((folder / f"ply-{ply:02d}.tb").read_bytes())
    header = TableHeader.unpack(bytes(data[:HEADER_SIZE]), "ply")
    return data, header.records_at


def alter(folder, ply: int, changes: int) -> list[int]:
    """Turn the records of ``changes`` canonical positions of a ply whose game goes on into
    others (a draw into a win in 1, a won or lost one into a draw), and make the file's
    digest, and the manifest's, again. Returns the numbers altered."""
    data, start = records_of(folder, ply)
    numbers = np.arange(len(data) - start, dtype=np.int64)
    rep_ranks = class_table(RULES, stone_counts(ply)[0]).rep_ranks
    _, _, own, _ = stand_for(RULES, ply, rep_ranks, numbers)
    going_on = [int(n) for n in numbers[own] if data[start + n] not in (NONE, DECIDED)]
    altered = going_on[:: len(going_on) // changes][:changes]
    assert len(altered) == changes
    for number in altered:
        data[start + number] = DECIDED + 1 if data[start + number] == DRAW else DRAW
    data[56:88] = bytes(32)  # the header's digest field (docs/tablebase.md), zeroed ...
    digest = hashlib.blake2b(bytes(data), digest_size=32).digest()  # ... for the whole file's
    data[56:88] = digest
    path = folder / f"ply-{ply:02d}.tb"
    path.write_bytes(bytes(data))
    assert read_header(path, RULES, ply).digest == digest
    manifest = json.loads((folder / "table.json").read_text())
    manifest["plies"][ply]["blake2b"] = digest.hex()
    (folder / "table.json").write_text(json.dumps(manifest))
    return altered


def test_a_sound_table_passes_and_says_what_it_checked(book):
    folder, book_file = book
    widest = max(range(17), key=lambda ply: (folder / f"ply-{ply:02d}.tb").stat().st_size)
    result = CliRunner().invoke(
        ttt, ["verify", *GAME, "--db", book_file, "--sample", "300", "--whole-ply", "widest"]
    )
    assert result.exit_code == 0, result.output
    line = result.stdout.strip().splitlines()[-1]
    assert line.startswith("4x4 k=3: OK, digests of 17 files; ")
    assert "sampled positions in 17 plies" in line and f"every position of ply {widest} (" in line


def test_altered_values_are_found_by_the_sample_and_the_whole_ply(book):
    folder, book_file = book
    ply = 7
    altered = alter(folder, ply, 3)
    rows = TableRows(folder, RULES)
    try:
        whole = list(whole_ply_problems(rows, [ply], TableCheck()))
        sampled = list(sample_problems(rows, 10**6, 0, TableCheck()))  # every position
    finally:
        rows.close()
    assert len(whole) == 3 and all(problem.ply == ply for problem in whole)
    assert {problem.key for problem in whole} == {
        problem.key for problem in sampled if problem.ply == ply
    }
    assert all("its children say" in problem.message for problem in whole)
    result = CliRunner().invoke(
        ttt, ["verify", *GAME, "--db", book_file, "--sample", "50", "--whole-ply", str(ply)]
    )
    assert result.exit_code == 1
    assert "its children say" in result.stdout
    assert f"4x4 k=3: {len(whole)} problems" in result.stdout
    assert len(altered) == 3


def test_a_parent_of_altered_children_is_found(book):
    folder, _ = book
    alter(folder, 9, 40)
    rows = TableRows(folder, RULES)
    try:
        problems = list(whole_ply_problems(rows, [8, 9], TableCheck()))
    finally:
        rows.close()
    assert {problem.ply for problem in problems} == {8, 9}


def test_a_damaged_digest_and_a_bad_ply_are_one_line_errors(book):
    folder, book_file = book
    runner = CliRunner()
    bad = runner.invoke(ttt, ["verify", *GAME, "--db", book_file, "--whole-ply", "17"])
    assert bad.exit_code == 2 and "--whole-ply '17': give a ply from 0 to 16" in bad.output
    data, start = records_of(folder, 5)
    data[start] = NONE if data[start] != NONE else DRAW
    (folder / "ply-05.tb").write_bytes(bytes(data))
    result = runner.invoke(ttt, ["verify", *GAME, "--db", book_file])
    assert result.exit_code == 1
    assert "ply-05.tb" in result.stdout and "checksum" in result.stdout


def test_the_sample_is_seeded_and_drawn_from_the_whole_ply(sound, monkeypatch):
    monkeypatch.setattr(sample, "WHOLE", 100)  # a ply of 4x4 k=3 is "large"
    rows = TableRows(sound, RULES)
    try:
        count = len(rows.records(8))
        first = sampled_positions(rows, 8, 500, seed=1)
        again = sampled_positions(rows, 8, 500, seed=1)
        other = sampled_positions(rows, 8, 500, seed=2)
        everything = rows.positions_at(RULES, 8, np.arange(count, dtype=np.int64))
    finally:
        rows.close()
    assert count > 2 * sample.BATCH  # drawn at random numbers, not read whole
    keys = first[0] | first[1] << 16
    assert len(set(keys.tolist())) == len(keys) == 500
    assert set(keys.tolist()) <= set((everything[0] | everything[1] << 16).tolist())
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not np.array_equal(first[0] | first[1] << 16, other[0] | other[1] << 16)
    assert (first[2] != NONE).all()
    assert first[0].min() != first[0].max()  # more than one X set: spread over the ply
