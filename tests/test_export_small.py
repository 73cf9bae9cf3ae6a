"""An export of a table's small plies reads them without kernels
(:mod:`solver.tablebase.smallply`), with no Numba loaded, and gives the bytes the kernels give;
an export that selects a larger ply reads every ply with the kernels, whose bytes are held to
the blocks' in tests/test_tablebase_book.py.

On 4x4 k=4, plies 0 to 7 and the next of each hold at most 131,072 numbers; ply 9 holds 185,185.
Each export here is made twice, the second time on the other path (the size that chooses it
moved), and the bytes compared.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ttt_solve.book.reader import open_book
from ttt_solve.book.rowfilter import RowFilter
from ttt_solve.book.table.catalogue import catalogue_table
from ttt_solve.book.table.rows import TableRows
from ttt_solve.cli.main import ttt
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase import smallply
from ttt_solve.solver.tablebase.build import build_table
from ttt_solve.solver.tablebase.probe import open_tablebase

K4 = Rules(4, 4, 4)
GAME = ["--size", "4", "--win", "4", "-q"]
SMALL = "ply>=2 and ply<=5 and remoteness>=1"
LARGE = "ply=8 and value=win"  # ply 9, read for ply 8's best moves, is too large


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> tuple[str, Path]:
    """A book of 4x4 k=4 as a table, and the table's folder."""
    folder = tmp_path_factory.mktemp("table44") / K4.name
    build_table(K4, folder)
    db = str(folder.parent / "t.sqlite")
    with open_book(db, create=True) as book:
        catalogue_table(book, folder)
    return db, folder


@pytest.mark.parametrize(("where", "small"), [(SMALL, True), (LARGE, False)])
def test_a_where_takes_the_path_of_its_plies_size(where, small):
    plies = TableRows.selected_plies(K4, RowFilter.parse(where))
    assert smallply.small_enough(K4, plies) is small


FORMATS = [("csv", []), ("jsonl", []), ("csv", ["--expand"]), ("parquet", [])]


def exports(db: str, where: str, folder: Path, formats: list) -> list[bytes]:
    """The export's bytes in each of ``formats`` (a format and more options), the files
    written in ``folder``."""
    made = []
    for fmt, extra in formats:
        if fmt == "parquet" and importlib.util.find_spec("pyarrow") is None:
            continue  # pip install -e '.[notebook]'
        out = folder / f"out.{fmt}"
        args = ["export", *GAME, "--db", db, "--where", where, "--format", fmt, *extra]
        result = CliRunner().invoke(ttt, [*args, "-o", str(out)])
        assert result.exit_code == 0, result.output
        made.append(out.read_bytes())
    return made


@pytest.mark.parametrize(
    ("where", "other", "formats"), [(SMALL, 0, FORMATS), (LARGE, 1 << 30, FORMATS[:1])]
)
def test_either_path_gives_the_same_bytes(table, tmp_path, monkeypatch, where, other, formats):
    db, _ = table
    chosen = exports(db, where, tmp_path, formats)
    monkeypatch.setattr(smallply, "SMALL_NUMBERS", other)  # the other path
    again = exports(db, where, tmp_path, formats)
    assert chosen == again and all(chosen)


LOADED = """
import sys
from click.testing import CliRunner
from ttt_solve.cli.main import ttt

db = sys.argv[1]
for command in (["stats"], ["export", "-q", "--where", sys.argv[2]]):
    result = CliRunner().invoke(ttt, [*command, "--size", "4", "--win", "4", "--db", db])
    assert result.exit_code == 0, result.output
    print(command[0], "numba" in sys.modules)
"""


def test_stats_and_an_export_of_small_plies_load_no_numba(table):
    db, _ = table
    found = subprocess.run(
        [sys.executable, "-c", LOADED, db, SMALL], capture_output=True, text=True, timeout=300
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.split() == ["stats", "False", "export", "False"]


def test_a_small_export_stops_at_a_damaged_record(table, tmp_path):
    """A record of ply 4 turned into a win in 1 that its moves contradict: the export read
    without kernels names the file, as the kernels' does (tests/test_tableprobe.py)."""
    folder = tmp_path / K4.name
    shutil.copytree(table[1], folder)
    db = str(tmp_path / "damaged.sqlite")
    with open_book(db, create=True) as book:
        catalogue_table(book, folder)
    position = Position.parse("xx../o.../..../...o", K4)  # its X stones fixed by no symmetry
    with open_tablebase(folder) as opened:
        assert opened.probe(position).outcome.value == "draw"
        ply_file = opened.ply_file(4)
        at = ply_file.records_at + ply_file.index.index(position.x, position.o)
    path = folder / "ply-04.tb"
    data = bytearray(path.read_bytes())
    data[at] = 3  # a win in 1
    path.write_bytes(bytes(data))
    result = CliRunner().invoke(ttt, ["export", *GAME, "--db", db, "--where", "ply<=4"])
    assert result.exit_code == 1, result.output
    assert "the table is damaged" in result.output and "ply-04.tb" in result.output
