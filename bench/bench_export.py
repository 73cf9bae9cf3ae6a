"""Rows per second of a book's table as CSV, JSON lines, Parquet and a pandas DataFrame.

    python bench/bench_export.py --db4 4x4.sqlite [--db45 4x5.sqlite]

``--db4`` is a book holding 4x4 k=4 (``ttt-solve --size 4 --win 4 --db 4x4.sqlite``, seconds),
``--db45`` one holding 4 rows x 5 columns k=4 (``ttt-solve --size 4x5 --win 4 --db
4x5.sqlite``: minutes and 3 GiB of disk). Every output is made in this process, from the same
rows (:mod:`ttt_solve.book.frame`, what ``ttt export`` and ``book.frame`` run), and written to
/dev/null (Parquet to a file in a temporary folder); canonical rows, then every reachable
position (``--expand``) where it fits in time.

The peer, on 4x4 k=4 only: the same rows written one at a time by Python's ``csv`` and
``json`` modules, each position's text and best moves made from its key, as ``ttt export``
wrote them before (about 55,000 rows a second). The 4x5 DataFrame is of the first 12 plies
(``where="ply<=12"``): the whole game's 168.7 million rows would need about 30 GiB as a
DataFrame.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))

from common import load_average  # noqa: E402

from ttt_solve.book.frame import text_chunks, write_parquet  # noqa: E402
from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402

VALUES = {1: "win", 0: "draw", -1: "loss"}


def peer_rows(book, rules: Rules, fmt: str) -> int:
    """The row-at-a-time writer: each row's text and best moves made in Python."""
    names = [rules.cell_name(cell) for cell in range(rules.cells)]
    cols = rules.cols
    out = open(os.devnull, "w")  # noqa: SIM115 - closed below
    writer = csv.writer(out, lineterminator="\n")
    count = 0
    for row in book.rows(rules):
        x, o = row.key & rules.full, row.key >> rules.cells
        chars = "".join(
            "x" if x >> c & 1 else "o" if o >> c & 1 else "." for c in range(rules.cells)
        )
        text = "/".join(chars[i : i + cols] for i in range(0, rules.cells, cols))
        best = [names[c] for c in range(rules.cells) if row.best_moves >> c & 1]
        fields = (text, row.ply, "xo"[row.ply & 1], VALUES[row.value], row.remoteness)
        if fmt == "csv":
            writer.writerow((*fields, " ".join(best), row.images))
        else:
            keys = ("position", "ply", "to_move", "value", "remoteness", "best_moves", "images")
            out.write(json.dumps(dict(zip(keys, (*fields, best, row.images)))) + "\n")
        count += 1
    out.close()
    return count


def text(book, rules: Rules, fmt: str, expand: bool) -> int:
    counts: list[int] = []
    with open(os.devnull, "wb") as out:
        for chunk in text_chunks(book, rules, fmt, expand=expand, counts=counts):
            out.write(chunk)
    return counts[0]


def parquet(book, rules: Rules, folder: str, expand: bool) -> int:
    path = os.path.join(folder, "t.parquet")
    rows, _ = write_parquet(book, rules, path, expand=expand)
    size = os.path.getsize(path)
    os.remove(path)
    print(f"    (Parquet file: {size / 2**20:,.0f} MiB)")
    return rows


def frame(book, rules: Rules, where: str | None) -> int:
    table = book.frame(rules, where=where, cells=False)
    return len(table)


def cpu_seconds() -> float:
    """CPU time of this process, every thread: what the work costs whatever the load."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(label: str, work) -> float:  # noqa: ANN001
    started, cpu = time.perf_counter(), cpu_seconds()
    rows = work()
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    rate = rows / seconds
    print(
        f"  {label:<30} {rows:>12,} rows {seconds:7.1f} s {rate:>10,.0f} rows/s"
        f"  (CPU {cpu:6.1f} s, {rows / cpu:>10,.0f} rows/CPU s)"
    )
    return rate


def bench_game(db: str, rules: Rules, frame_where: str | None, folder: str) -> None:
    """Every output of one game; the peer and the expanded rows on boards of 16 cells."""
    print(f"{rules.name} ({db}):")
    small = rules.cells <= 16
    with open_book(db) as book:
        for fmt in ("csv", "jsonl"):
            ours = measure(fmt, lambda fmt=fmt: text(book, rules, fmt, False))
            if small:
                peer = measure(
                    f"{fmt}, row at a time (peer)", lambda f=fmt: peer_rows(book, rules, f)
                )
                print(f"    {ours / peer:.1f}x the peer's rows per second")
        measure("parquet", lambda: parquet(book, rules, folder, False))
        where = f" ({frame_where})" if frame_where else ""
        measure(f"DataFrame{where}", lambda: frame(book, rules, frame_where))
        if small:
            measure("csv --expand", lambda: text(book, rules, "csv", True))
            measure("jsonl --expand", lambda: text(book, rules, "jsonl", True))
            measure("parquet --expand", lambda: parquet(book, rules, folder, True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db4", required=True, help="a book holding 4x4 k=4")
    parser.add_argument("--db45", help="a book holding 4x5 k=4 (minutes)")
    args = parser.parse_args()
    import pandas  # noqa: F401 - imported before the clock starts, as in a notebook
    import pyarrow.parquet  # noqa: F401

    print(f"load average {load_average()} at the start")
    games = [(args.db4, Rules(4, 4, 4), None)]
    if args.db45:
        games.append((args.db45, Rules(4, 5, 4), "ply<=12"))
    with tempfile.TemporaryDirectory(prefix="ttt-bench-export-") as folder:
        for db, rules, frame_where in games:
            bench_game(db, rules, frame_where, folder)
    print(f"load average {load_average()} at the end")


if __name__ == "__main__":
    main()
