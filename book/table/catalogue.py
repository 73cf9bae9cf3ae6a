"""Cataloguing a built tablebase in a book: a ``games`` row of method ``table`` naming its
folder, so that every reader finds the game through the book (:mod:`book.table.rows`).

The row's figures are those a solve into blocks records (positions by ply, values, terminal
results, the remoteness table), read from the counts in the files' headers: the build counts
the positions holding each record, canonical and reachable, as it makes them. No row is read.

    ttt table catalogue FOLDER --db BOOK [--force]
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import sqlalchemy as sa

from ttt_solve.book import schema
from ttt_solve.book.errors import GameExistsError
from ttt_solve.book.migrate import write_lock
from ttt_solve.book.reader import Book
from ttt_solve.book.records import GameInfo, SolveMethod
from ttt_solve.book.table.rows import recorded_folder
from ttt_solve.book.urls import sqlite_file
from ttt_solve.book.writer import delete_game, game_lock, insert_game
from ttt_solve.solver.figures import Figures
from ttt_solve.solver.plytable import split_scores
from ttt_solve.solver.position import Position
from ttt_solve.solver.tablebase.probe import Tablebase, open_tablebase
from ttt_solve.solver.tablebase.record import RecordCounts, value_of_record
from ttt_solve.solver.value import Outcome
from ttt_solve.solver.vocabulary import Side


def table_figures(table: Tablebase) -> Figures:
    """The summary figures of ``table``, from the counts its files' headers (or a release's
    manifest) hold: each record's positions, canonical and reachable, as the build counted
    them."""
    figures = Figures(table.rules.cells)
    for ply in range(table.rules.cells + 1):
        add_counts(figures, ply, table.record_counts(ply))
    return figures


def add_counts(figures: Figures, ply: int, counts: RecordCounts) -> None:
    """Count one ply's positions in ``figures`` from how many hold each record: what
    :meth:`Figures.add` counts from the ply's rows."""
    x_to_move = ply % 2 == 0
    empty = figures.cells - ply
    for kind, name in enumerate(("canonical", "reachable")):
        by_record = counts.by_record[kind]
        figures.by_ply[name][ply] = int(by_record.sum())
        for record in np.flatnonzero(by_record).tolist():
            value = value_of_record(record, empty)
            count = int(by_record[record])
            figures.values[name][value.outcome] += count
            for_x = value.outcome if x_to_move else Outcome.from_sign(-value.outcome.sign)
            figures.values_for_x[name][for_x] += count
            table = figures.remoteness[name][value.outcome]
            table[value.remoteness] = table.get(value.remoteness, 0) + count
            if value.remoteness == 0 and value.outcome == Outcome.LOSS:
                figures.terminal[name][Side.O if x_to_move else Side.X] += count
            elif value.remoteness == 0:
                figures.terminal[name]["draw"] += count


def catalogue_table(
    book: Book,
    folder: Path | str,
    *,
    force: bool = False,
    seconds: float = 0.0,
    checked: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> GameInfo:
    """Record the finished table in ``folder`` as its game's row in ``book`` (every digest
    checked first, unless ``checked``: the build that just made or checked every file).
    Raises :class:`~book.errors.GameExistsError` if the book holds the game and ``force`` is
    false (with ``force`` the stored game is replaced), and
    :class:`~solver.tablebase.files.TableError` for a folder that holds no sound table.
    ``seconds``: how long the build took, recorded as the solve's time; ``progress(done,
    total)`` is told the bytes whose digests are checked."""
    folder = Path(folder)
    with open_tablebase(folder) as table:  # refused in one line if it is no sound table
        if not checked:
            table.verify(progress)
        rules = table.rules
        value = table.probe(Position.start(rules))
        figures = table_figures(table)
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
