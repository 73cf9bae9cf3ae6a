"""Cataloguing a built tablebase in a book: a ``games`` row of method ``table`` naming its
folder, so that every reader finds the game through the book (:mod:`book.tablerows`).

The row's figures are those a solve into blocks records: on boards that
:mod:`book.tablerows` streams (up to 20 cells) they are counted from the rows the table gives,
the same rows as blocks would hold, so ``ttt stats`` answers alike; on larger boards they come
from the counts in the files' headers (positions by ply, values, terminal results), without the
remoteness table, which would need every position streamed.

    python -m ttt_solve.book.tablecatalogue FOLDER --db BOOK [--force]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import sqlalchemy as sa

from ttt_solve.book import schema
from ttt_solve.book.errors import GameExistsError
from ttt_solve.book.migrate import write_lock
from ttt_solve.book.reader import Book, open_book
from ttt_solve.book.records import GameInfo, SolveMethod
from ttt_solve.book.tablerows import STREAM_CELLS_LIMIT, TableRows, recorded_folder
from ttt_solve.book.urls import sqlite_file
from ttt_solve.book.writer import delete_game, game_lock, insert_game
from ttt_solve.errors import TttError
from ttt_solve.solver.figures import Figures
from ttt_solve.solver.plytable import PlyTable, split_scores
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.probe import open_tablebase
from ttt_solve.solver.value import Outcome, score_of
from ttt_solve.solver.vocabulary import Side


def table_figures(folder: Path, rules: Rules) -> Figures:
    """The summary figures of the table in ``folder`` (see the module's note)."""
    figures = Figures(rules.cells)
    if rules.cells <= STREAM_CELLS_LIMIT:
        rows = TableRows(folder, rules)
        try:
            for columns in rows.counted_plies(rules):  # no best moves: figures count none
                ply = int(columns["ply"][0])
                scores = score_of(columns["value"], columns["remoteness"]).astype(np.int16)
                best = np.zeros(len(scores), dtype=np.uint64)
                figures.add(PlyTable(ply, columns["key"], scores, best, columns["images"]))
        finally:
            rows.close()
        return figures
    return _header_figures(folder, rules)


def _header_figures(folder: Path, rules: Rules) -> Figures:
    """Figures from the counts the manifest holds, ``[outcome][terminal][kind]`` per ply
    (outcome win, draw, loss for the side to move); no remoteness table."""
    manifest = json.loads((folder / "table.json").read_text())
    figures = Figures(rules.cells)
    for entry in manifest["plies"]:
        ply = entry["ply"]
        counts = np.array(entry["counts"], dtype=np.int64).reshape(3, 2, 2)
        x_to_move = ply % 2 == 0
        for kind, name in enumerate(("canonical", "reachable")):
            figures.by_ply[name][ply] = int(counts[..., kind].sum())
            for index, outcome in enumerate(Outcome):
                count = int(counts[index, :, kind].sum())
                figures.values[name][outcome] += count
                for_x = outcome if x_to_move else Outcome.from_sign(-outcome.sign)
                figures.values_for_x[name][for_x] += count
            figures.terminal[name][Side.O if x_to_move else Side.X] += int(counts[2, 1, kind])
            figures.terminal[name]["draw"] += int(counts[1, 1, kind])
    return figures


def catalogue_table(
    book: Book, folder: Path | str, *, force: bool = False, seconds: float = 0.0
) -> GameInfo:
    """Record the finished table in ``folder`` as its game's row in ``book`` (every digest
    checked first). Raises :class:`~book.errors.GameExistsError` if the book holds the game
    and ``force`` is false (with ``force`` the stored game is replaced), and
    :class:`~solver.tablebase.files.TableError` for a folder that holds no sound table.
    ``seconds``: how long the build took, recorded as the solve's time."""
    folder = Path(folder)
    with open_tablebase(folder) as table:
        table.verify()
        rules = table.rules
        value = table.probe(Position.start(rules))
    figures = table_figures(folder, rules)
    games = schema.games
    same_rules = sa.and_(
        games.c.rows == rules.rows, games.c.cols == rules.cols, games.c.k == rules.k
    )
    recorded = recorded_folder(folder, sqlite_file(str(book.url)))
    with book.engine.connect().execution_options(write=True) as conn, conn.begin():
        write_lock(conn, game_lock(rules))
        existing = conn.execute(sa.select(games.c.id).where(same_rules)).scalar()
        if existing is not None:
            if not force:
                book.forget_game(rules)
                raise GameExistsError(
                    f"{rules.name} is already in {book.describe()}", book.game(rules)
                )
            delete_game(conn, existing)
        start_values, start_remoteness = split_scores(np.array([value.score]), rules.cells)
        figures.start_score = value.score
        insert_game(
            conn,
            rules,
            method=SolveMethod.TABLE,
            book_depth=None,
            value=int(start_values[0]),
            remoteness=int(start_remoteness[0]),
            positions=figures.canonical,
            reachable=figures.reachable,
            figures=json.dumps(figures.to_dict()),
            seconds=seconds,
            table_folder=recorded,
        )
    book.forget_game(rules)
    return book.game(rules)


def main(argv: list[str] | None = None) -> int:
    """``python -m ttt_solve.book.tablecatalogue FOLDER --db BOOK``: catalogue a finished
    table (one built by ``ttt-solve --method table`` is catalogued already)."""
    parser = argparse.ArgumentParser(
        prog="python -m ttt_solve.book.tablecatalogue",
        description="Record a finished tablebase folder as its game in a book.",
    )
    parser.add_argument("folder", help="the table's folder (holds table.json)")
    parser.add_argument("--db", default="ttt.sqlite", help="the book (path or URL)")
    parser.add_argument("--force", action="store_true", help="replace the game if stored")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        with open_book(args.db, create=True) as book:
            info = catalogue_table(book, args.folder, force=args.force)
    except TttError as error:
        print(f"Error: {error}", file=sys.stderr)
        return 1
    print(
        f"{info.rules.name}: {info.value} for X, {info.positions:,} canonical positions "
        f"({info.reachable:,} reachable), catalogued in {args.db} "
        f"in {time.perf_counter() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
