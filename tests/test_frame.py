"""A game's table as data: CSV and JSON lines written byte for byte as Python's csv and json
modules write the rows, DataFrames and Parquet files holding the published figures."""

from __future__ import annotations

import csv
import io
import json
import sys

import pytest

from ttt_solve.book.frame import ExtraMissingError, text_chunks, write_parquet
from ttt_solve.book.reader import open_book
from ttt_solve.book.rowfilter import RowFilter
from ttt_solve.errors import TttError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

T3, T34 = Rules(3, 3, 3), Rules(3, 4, 3)
FILTERS = ["", "ply<=4 and value=win", "remoteness=0", "ply>99", "images<8, value!=draw"]


def reference_rows(book, rules, where, expand):
    """The rows, each made one at a time from Position and the rules' symmetries."""
    for row in book.rows(rules, where=where):
        images = {}
        for symmetry in range(len(rules.symmetries) if expand else 1):
            key = rules.permute(row.key, symmetry)
            images.setdefault(key, rules.permute(row.best_moves, symmetry))
        for key in sorted(images):
            position = Position.from_key(rules, key)
            best = [rules.cell_name(c) for c in range(rules.cells) if images[key] >> c & 1]
            yield {
                "position": str(position),
                "ply": row.ply,
                "to_move": position.to_move,
                "value": {1: "win", 0: "draw", -1: "loss"}[row.value],
                "remoteness": row.remoteness,
                "best_moves": best,
                "images": row.images,
            }


@pytest.mark.parametrize(
    ("rules", "expand"),
    [(T3, False), (T3, True), (T34, False), pytest.param(T34, True, marks=pytest.mark.slow)],
    ids=["3x3-canonical", "3x3-expanded", "3x4-canonical", "3x4-expanded"],
)
@pytest.mark.parametrize("where", FILTERS)
def test_text_is_what_csv_and_json_write(book_small, rules, expand, where):
    condition = RowFilter.parse(where) if where else RowFilter()
    with open_book(book_small) as book:
        rows = list(reference_rows(book, rules, condition, expand))
        csv_text = io.StringIO()
        writer = csv.writer(csv_text, lineterminator="\n")
        writer.writerow(rows[0].keys() if rows else [])
        for row in rows:
            writer.writerow({**row, "best_moves": " ".join(row["best_moves"])}.values())
        counts: list[int] = []
        made = b"".join(
            text_chunks(book, rules, "csv", where=condition, expand=expand, counts=counts)
        )
        header, _, body = made.decode().partition("\n")
        assert header == "position,ply,to_move,value,remoteness,best_moves,images"
        assert body == csv_text.getvalue().partition("\n")[2]
        assert counts == [len(rows), sum(row["remoteness"] == 0 for row in rows)]
        lines = "".join(json.dumps(row) + "\n" for row in rows)
        made = b"".join(text_chunks(book, rules, "jsonl", where=condition, expand=expand))
        assert made.decode() == lines


def test_the_3x3_frame_holds_the_published_figures(book_3x3):
    pytest.importorskip("pandas", reason="pip install -e '.[notebook]'")
    with open_book(book_3x3) as book:
        everything = book.frame("3x3k3", expand=True)
        canonical = book.frame(T3, cells=False)
        first = book.frame(T3, where="ply=1", expand=True)
    assert len(everything) == 5478 and len(canonical) == 765
    assert everything["value"].value_counts().to_dict() == {"win": 2836, "loss": 1574, "draw": 1068}
    assert int((everything["remoteness"] == 0).sum()) == 958
    assert int(canonical["images"].sum()) == 5478
    assert list(everything["value"].cat.categories) == ["loss", "draw", "win"]
    by_ply = everything.groupby("ply").size().tolist()
    assert by_ply == [1, 9, 72, 252, 756, 1260, 1520, 1140, 390, 78]
    # the cells' columns say what the position's text says
    for _, row in everything.sample(200, random_state=1).iterrows():
        assert "".join(
            row[name] for name in ("a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3")
        ) == row["position"].replace("/", "")
    # every first move draws: O's value after it is a draw
    assert len(first) == 9 and set(first["value"]) == {"draw"}
    assert set(first["to_move"]) == {"o"}
    assert "x" not in set(canonical.columns) and "a1" not in canonical.columns


def test_parquet_holds_what_the_frame_holds(book_small, tmp_path):
    pd = pytest.importorskip("pandas", reason="pip install -e '.[notebook]'")
    pytest.importorskip("pyarrow", reason="pip install -e '.[notebook]'")
    path = str(tmp_path / "t.parquet")
    with open_book(book_small) as book:
        rows, terminal = write_parquet(book, T34, path, expand=True)
        table = book.frame(T34, expand=True, cells=False)
    read = pd.read_parquet(path)
    assert rows == len(table) == 111973
    assert terminal == int((table["remoteness"] == 0).sum())
    for name in table.columns:
        assert [str(v) for v in read[name]] == [str(v) for v in table[name]], name
    assert list(tmp_path.iterdir()) == [tmp_path / "t.parquet"]  # no temporary file left


def test_a_missing_extra_is_one_line_naming_it(book_3x3, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if not installed: import fails
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with open_book(book_3x3) as book:
        with pytest.raises(ExtraMissingError) as caught:
            book.frame(T3)
        assert isinstance(caught.value, TttError)
        assert str(caught.value) == "a DataFrame needs pandas: pip install 'ttt-solve[notebook]'"
        with pytest.raises(ExtraMissingError, match=r"Parquet needs pyarrow: pip install"):
            write_parquet(book, T3, str(tmp_path / "t.parquet"))


def test_a_filter_in_words_is_checked(book_3x3):
    with open_book(book_3x3) as book, pytest.raises(ValueError, match="cannot read 'plies'"):
        book.frame(T3, where="plies")
