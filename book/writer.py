"""Writing a solved game into a book, atomically.

The whole game (its ``games`` row and every ``positions`` row) is written in one transaction:
a run that is interrupted leaves the book as it was, and the next run starts clean. On SQLite
the transaction starts with ``BEGIN IMMEDIATE``, so a second writer waits for the first and
then sees its game instead of writing it twice.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from itertools import repeat
from typing import Callable, Iterable, Iterator

import numpy as np
import sqlalchemy as sa

from book import schema
from book.errors import GameExistsError
from book.reader import Book, GameInfo
from solver import SOLVER_VERSION
from solver.exhaustive import PlyTable
from solver.figures import Figures
from solver.rules import Rules
from solver.value import split_scores

def _rows(game_id: int, table: PlyTable, empties: int) -> Iterator[tuple]:
    """The ``positions`` rows of one ply, made one at a time from the arrays."""
    values, remoteness = split_scores(table.scores, empties)
    return zip(repeat(game_id), repeat(table.ply), table.keys.astype(np.int64).tolist(),
               values.tolist(), remoteness.tolist(), table.best_moves.astype(np.int64).tolist(),
               table.images.tolist())


def write_game(book: Book, rules: Rules, plies: Iterable[PlyTable], *, method: str,
               book_depth: int | None = None, force: bool = False,
               on_rows: Callable[[int], None] | None = None,
               started: float | None = None) -> GameInfo:
    """Store a game from its solved plies (consumed as they come) in one transaction.

    Raises :class:`GameExistsError` if the game is already stored and ``force`` is false;
    with ``force`` the old game is replaced in the same transaction. ``on_rows(n)`` is told of
    every batch written; ``started`` (a ``time.perf_counter()``) dates the solve for its
    recorded duration.
    """
    started = time.perf_counter() if started is None else started
    figures = Figures(rules.cells)
    games, positions = schema.games, schema.positions
    insert = (f"INSERT INTO positions ({', '.join(schema.POSITION_COLUMNS)}) "
              f"VALUES ({schema.placeholders(book.engine, len(schema.POSITION_COLUMNS))})")
    same_rules = sa.and_(games.c.rows == rules.rows, games.c.cols == rules.cols,
                         games.c.k == rules.k)
    with book.engine.connect().execution_options(write=True) as conn, conn.begin():
        existing = conn.execute(sa.select(games.c.id).where(same_rules)).scalar()
        if existing is not None:
            if not force:
                book._games.pop(rules, None)
                raise GameExistsError(f"{rules.name} is already in {book.describe()}",
                                      book.find_game(rules))
            conn.execute(sa.delete(positions).where(positions.c.game_id == existing))
            conn.execute(sa.delete(games).where(games.c.id == existing))
        game_id = conn.execute(sa.insert(games).values(
            rows=rules.rows, cols=rules.cols, k=rules.k, method=method, book_depth=book_depth,
            solver_version=SOLVER_VERSION, value=0, remoteness=0, positions=0, reachable=0,
            figures="{}", seconds=0.0, solved_at=datetime.now(timezone.utc),
        ).returning(games.c.id)).scalar_one()
        for table in plies:
            figures.add(table)
            # The driver's executemany over a row iterator: no list of tuples per ply.
            cursor = conn.connection.cursor()
            cursor.executemany(insert, _rows(game_id, table, rules.cells - table.ply))
            cursor.close()
            if on_rows:
                on_rows(len(table.keys))
        start_score = figures.start_score
        if start_score is None:
            raise ValueError("the solved plies did not include the empty board")
        values, remoteness = split_scores(np.array([start_score]), rules.cells)
        conn.execute(sa.update(games).where(games.c.id == game_id).values(
            value=int(values[0]), remoteness=int(remoteness[0]),
            positions=figures.canonical, reachable=figures.reachable,
            figures=json.dumps(figures.to_dict()), seconds=time.perf_counter() - started,
            solved_at=datetime.now(timezone.utc),
        ))
    book._games.pop(rules, None)
    return book.game(rules)
