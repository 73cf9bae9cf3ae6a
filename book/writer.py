"""Writing a solved game into a book, atomically.

The whole game (its ``games`` row and every block of positions) is written in one transaction:
a run that is interrupted (Ctrl-C, an exception, SIGKILL, a lost connection) leaves the book
as it was, and the next run starts clean. Two writers of the same game serialise: on SQLite
the transaction starts with ``BEGIN IMMEDIATE`` (one writer at a time per file), on PostgreSQL
with an advisory lock keyed on the rules (one writer at a time per game); either way the
second writer waits for the first and then sees its game instead of writing it twice.

Positions go in as blocks (:mod:`book.blocks`), packed from each ply's sorted arrays by NumPy,
by the DB-API driver's ``executemany`` on every backend: a block of a thousand positions is one
row, so the database's per-row cost is paid a thousand times less often. While one ply is
written, a thread solves the next (:func:`solved_ahead`).
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from datetime import datetime, timezone
from itertools import islice
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ttt_solve.book import schema
from ttt_solve.book.ahead import made_ahead as solved_ahead
from ttt_solve.book.blocks import BLOCK_COLUMNS, TABLE, pack_ply
from ttt_solve.book.errors import BookError, GameExistsError
from ttt_solve.book.migrate import write_lock
from ttt_solve.book.reader import Book, GameInfo
from ttt_solve.book.widekeys import BOOK_CELLS_LIMIT, fits_book
from ttt_solve.solver import SOLVER_VERSION
from ttt_solve.solver.figures import Figures
from ttt_solve.solver.plytable import PlyTable, split_scores
from ttt_solve.solver.rules import Rules

BATCH_BLOCKS = 64
"""Blocks handed to the database at a time (64 Ki positions): bounds the memory of a batch (a
4x5 ply holds tens of millions of positions) and sets how often progress is reported."""


def game_lock(rules: Rules) -> int:
    """The PostgreSQL advisory-lock key of a game (``ttt`` then rows, columns, k)."""
    return 0x7474_7400_0000_0000 | rules.rows << 16 | rules.cols << 8 | rules.k


def ply_blocks(rules: Rules, table: PlyTable) -> Iterator[tuple[bytes, int, bytes, bytes]]:
    """The blocks of one solved ply, ``(first_key, count, keys, data)`` each (canonical
    orientation; see :mod:`book.blocks`)."""
    values, remoteness = split_scores(table.scores, rules.cells - table.ply)
    return pack_ply(rules.cells, table.keys, values, remoteness, table.images, table.best_moves)


def insert_blocks(conn: Connection, game_id: int, ply: int, blocks: Iterable[Any]) -> Iterator[int]:
    """Insert the blocks of one ply with the driver's ``executemany``, a batch at a time;
    yield the positions of each batch.

    The game and the ply, one value for the whole ply, are literals of the statement rather
    than parameters of every block."""
    marks = schema.placeholders(conn.engine, 4)
    insert = (
        f"INSERT INTO {TABLE} ({', '.join(BLOCK_COLUMNS)}) "
        f"VALUES ({int(game_id)}, {int(ply)}, {marks})"
    )
    taken = iter(blocks)  # batches are cut from one iterator, whatever iterable is given
    cursor = conn.connection.cursor()
    try:
        for batch in iter(lambda: list(islice(taken, BATCH_BLOCKS)), []):
            cursor.executemany(insert, batch)
            yield sum(block[1] for block in batch)
    finally:
        cursor.close()


def write_game(
    book: Book,
    rules: Rules,
    plies: Iterable[PlyTable],
    *,
    method: str,
    book_depth: int | None = None,
    force: bool = False,
    on_rows: Callable[[int], None] | None = None,
    started: float | None = None,
) -> GameInfo:
    """Store a game from its solved plies (consumed as they come) in one transaction.

    Raises :class:`GameExistsError` if the game is already stored and ``force`` is false;
    with ``force`` the old game is replaced in the same transaction. The check is made under
    the write lock and before ``plies`` is first consumed, so a run that waited for another
    writer of the same game does not solve it again. ``on_rows(n)`` is told of every batch
    written; ``started`` (a ``time.perf_counter()``) dates the solve for its recorded duration.
    """
    if not fits_book(rules):
        raise BookError(
            f"{rules.name} has {rules.cells} cells; a book holds boards of at most "
            f"{BOOK_CELLS_LIMIT} cells"
        )
    started = time.perf_counter() if started is None else started
    figures = Figures(rules.cells)
    games, blocks = schema.games, schema.position_blocks
    same_rules = sa.and_(
        games.c.rows == rules.rows, games.c.cols == rules.cols, games.c.k == rules.k
    )
    conn = book.engine.connect().execution_options(write=True)
    transaction = conn.begin()
    try:
        write_lock(conn, game_lock(rules))
        existing = conn.execute(sa.select(games.c.id).where(same_rules)).scalar()
        if existing is not None:
            if not force:
                book.forget_game(rules)
                raise GameExistsError(
                    f"{rules.name} is already in {book.describe()}", book.game(rules)
                )
            conn.execute(sa.delete(blocks).where(blocks.c.game_id == existing))
            conn.execute(sa.delete(games).where(games.c.id == existing))
        game_id = conn.execute(
            sa.insert(games)
            .values(
                rows=rules.rows,
                cols=rules.cols,
                k=rules.k,
                method=method,
                book_depth=book_depth,
                solver_version=SOLVER_VERSION,
                value=0,
                remoteness=0,
                positions=0,
                reachable=0,
                figures="{}",
                seconds=0.0,
                solved_at=datetime.now(timezone.utc),
            )
            .returning(games.c.id)
        ).scalar_one()
        with closing(solved_ahead(plies)) as ahead:  # its thread ends with the loop
            for table in ahead:
                figures.add(table)
                for count in insert_blocks(conn, game_id, table.ply, ply_blocks(rules, table)):
                    if on_rows:
                        on_rows(count)
        _write_summary(conn, game_id, rules, figures, started, book_depth)
    except BaseException:
        with interrupts_deferred():
            transaction.rollback()
            conn.close()
        raise
    # Once the commit starts it finishes: a Ctrl-C now is acted on after it (the caller then
    # finds the game stored), never in the middle of the commit or of closing the connection.
    with interrupts_deferred():
        transaction.commit()
        conn.close()
    book.forget_game(rules)
    return book.game(rules)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold back Ctrl-C (SIGINT) for the block: it raises ``KeyboardInterrupt`` once the block
    has finished. Only the main thread can handle signals; elsewhere the block just runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, _frame: received.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


def _write_summary(
    conn: Connection,
    game_id: int,
    rules: Rules,
    figures: Figures,
    started: float,
    book_depth: int | None = None,
) -> None:
    """Fill in the ``games`` row of a game whose positions are written: the last statement of
    the transaction before its commit. An opening book's depth is its last stored ply: a
    depth past the end of every game stores no more plies."""
    start_score = figures.start_score
    if start_score is None:
        raise ValueError("the solved plies did not include the empty board")
    values, remoteness = split_scores(np.array([start_score]), rules.cells)
    stored_plies = figures.by_ply["canonical"]
    games = schema.games
    conn.execute(
        sa.update(games)
        .where(games.c.id == game_id)
        .values(
            value=int(values[0]),
            remoteness=int(remoteness[0]),
            positions=figures.canonical,
            reachable=figures.reachable,
            figures=json.dumps(figures.to_dict()),
            seconds=time.perf_counter() - started,
            solved_at=datetime.now(timezone.utc),
            **({} if book_depth is None else {"book_depth": min(book_depth, max(stored_plies))}),
        )
    )
