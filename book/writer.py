"""Writing a solved game into a book, atomically.

The whole game (its ``games`` row and every block of positions) is written in one transaction:
a run that is interrupted (Ctrl-C, an exception, SIGKILL, a lost connection) leaves the book
as it was, and the next run starts clean. Two writers of the same game serialise: on SQLite
the transaction starts with ``BEGIN IMMEDIATE`` (one writer at a time per file), on PostgreSQL
with an advisory lock keyed on the rules (one writer at a time per game); either way the
second writer waits for the first and then sees its game instead of writing it twice.

A lost connection to a database server (PostgreSQL stopped mid-write) is a
:class:`~book.errors.BookError` (``kind`` ``"server-failed"``, or ``"server-failed-commit"``
when the commit itself was cut) naming the server and saying the book is unchanged. A game is
replaced only with ``force``, or by one that holds more: a deeper opening book, or an exhaustive
solve of a game stored as an opening book (:func:`holds_more`).

Positions go in as blocks (:mod:`book.blocks`), packed from each ply's sorted arrays by NumPy,
by the DB-API driver's ``executemany`` on every backend: a block of a thousand positions is one
row, so the database's per-row cost is paid a thousand times less often. While one ply is
written, a thread solves the next (:func:`solved_ahead`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from datetime import datetime, timezone

import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ttt_solve.book import schema
from ttt_solve.book.ahead import made_ahead as solved_ahead
from ttt_solve.book.blocks import pack_ply
from ttt_solve.book.blockwrites import insert_blocks
from ttt_solve.book.errors import BookError, ErrorKind, GameExistsError
from ttt_solve.book.migrate import write_lock
from ttt_solve.book.reader import Book
from ttt_solve.book.records import GameInfo, SolveMethod
from ttt_solve.book.rowfilter import RowFilter
from ttt_solve.book.widekeys import BOOK_CELLS_LIMIT, fits_book
from ttt_solve.processes import interrupts_deferred
from ttt_solve.solver import SOLVER_VERSION
from ttt_solve.solver.figures import Figures
from ttt_solve.solver.plytable import PlyTable, split_scores
from ttt_solve.solver.rules import Rules


def game_lock(rules: Rules) -> int:
    """The PostgreSQL advisory-lock key of a game (``ttt`` then rows, columns, k)."""
    return 0x7474_7400_0000_0000 | rules.rows << 16 | rules.cols << 8 | rules.k


def ply_blocks(rules: Rules, table: PlyTable) -> Iterator[tuple[bytes, int, bytes, bytes]]:
    """The blocks of one solved ply, ``(first_key, count, keys, data)`` each (canonical
    orientation; see :mod:`book.blocks`)."""
    values, remoteness = split_scores(table.scores, rules.cells - table.ply)
    return pack_ply(rules.cells, table.keys, values, remoteness, table.images, table.best_moves)


def write_game(
    book: Book,
    rules: Rules,
    plies: Iterable[PlyTable],
    *,
    method: SolveMethod,
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
    conn = book.engine.connect().execution_options(write=True)
    transaction = conn.begin()
    try:
        _make_room(conn, book, rules, force, book_depth)
        game_id = insert_game(
            conn,
            rules,
            method=method,
            book_depth=book_depth,
            value=0,
            remoteness=0,
            positions=0,
            reachable=0,
            figures="{}",
            seconds=0.0,
        )
        with closing(solved_ahead(plies)) as ahead:  # its thread ends with the loop
            for table in ahead:
                figures.add(table)
                for count in insert_blocks(conn, game_id, table.ply, ply_blocks(rules, table)):
                    if on_rows:
                        on_rows(count)
        _write_summary(conn, game_id, rules, figures, started, book_depth)
    except BaseException as error:
        with interrupts_deferred():
            lost = _abandon(transaction, conn)
        _raise_server_failure(book, rules, error, lost)
        raise
    _commit(book, rules, transaction, conn)
    book.forget_game(rules)
    return book.game(rules)


def _raise_server_failure(
    book: Book, rules: Rules, error: BaseException, lost: bool, committing: bool = False
) -> None:
    """Raise a :class:`BookError` saying so when ``error``, met while writing (or
    ``committing``), is the database server's failure (or ``lost`` its connection); else
    return, for the caller to raise ``error`` itself."""
    problem = _server_error(book, error, lost)
    if problem is None:
        return
    if committing:
        message = (
            f"{problem} while committing {rules.name} into {book.describe()}: whether the "
            f"server stored it is not known"
        )
    else:
        message = (
            f"{problem} while writing {rules.name} into {book.describe()}; the book is "
            f"unchanged (nothing of the game was committed)"
        )
    kind = ErrorKind.SERVER_FAILED_COMMIT if committing else ErrorKind.SERVER_FAILED
    raise BookError(message, database=book.db_argument, rules=rules, kind=kind) from None


def _make_room(
    conn: Connection, book: Book, rules: Rules, force: bool, book_depth: int | None
) -> None:
    """Take the game's write lock and delete the game stored before, if any: refused with a
    :class:`GameExistsError` unless ``force`` or this solve holds more."""
    games = schema.games
    same_rules = sa.and_(
        games.c.rows == rules.rows, games.c.cols == rules.cols, games.c.k == rules.k
    )
    write_lock(conn, game_lock(rules))
    existing = conn.execute(sa.select(games.c.id).where(same_rules)).scalar()
    if existing is None:
        return
    if not force:  # (with force, a games row that does not even parse is replaced)
        book.forget_game(rules)
        stored = book.game(rules)
        if not holds_more(book, stored, book_depth):
            raise GameExistsError(f"{rules.name} is already in {book.describe()}", stored)
    delete_game(conn, existing)


def _commit(book: Book, rules: Rules, transaction: sa.engine.Transaction, conn: Connection) -> None:
    """Commit the game's transaction and close its connection. Once the commit starts it
    finishes: a Ctrl-C now is acted on after it (the caller then finds the game stored), never
    in the middle of the commit or of closing the connection."""
    with interrupts_deferred():
        try:
            transaction.commit()
        except BaseException as error:
            _raise_server_failure(book, rules, error, _abandon(transaction, conn), committing=True)
            raise
        conn.close()


def delete_game(conn: Connection, game_id: int) -> None:
    """Remove a stored game: its blocks, then its ``games`` row."""
    blocks, games = schema.position_blocks, schema.games
    conn.execute(sa.delete(blocks).where(blocks.c.game_id == game_id))
    conn.execute(sa.delete(games).where(games.c.id == game_id))


def insert_game(conn: Connection, rules: Rules, **values: object) -> int:
    """Insert a ``games`` row for ``rules``, by this solver version, dated now, with the other
    columns from ``values``; its id."""
    games = schema.games
    game_id: int = conn.execute(
        sa.insert(games)
        .values(
            rows=rules.rows,
            cols=rules.cols,
            k=rules.k,
            solver_version=SOLVER_VERSION,
            solved_at=datetime.now(timezone.utc),
            **values,
        )
        .returning(games.c.id)
    ).scalar_one()
    return game_id


def holds_more(book: Book, stored: GameInfo, book_depth: int | None) -> bool:
    """Whether writing a game solved to ``book_depth`` (``None``: every position, an
    exhaustive solve) would store positions that the ``stored`` game of the same rules lacks:
    ``stored`` is an opening book, the new one is deeper or exhaustive, and some game goes on
    past the stored book's last ply. Such a write replaces the stored game without ``force``;
    any other keeps it (it answers every question the new one would)."""
    if stored.book_depth is None:
        return False  # every reachable position is stored
    if book_depth is not None and book_depth <= stored.book_depth:
        return False
    # A book is stored to the last ply that has positions: past it, no game goes on.
    still_open = RowFilter.of(ply=stored.book_depth, open_only=True)
    with closing(book.rows(stored.rules, where=still_open, batch=1)) as rows:
        return next(rows, None) is not None


def _abandon(transaction: sa.engine.Transaction, conn: Connection) -> bool:
    """Roll back and close; returns whether the connection was found lost. (A server that
    drops the connection rolls the transaction back itself: nothing is left to undo.)"""
    lost = False
    try:
        transaction.rollback()
    except sa.exc.DBAPIError:
        conn.invalidate()
        lost = True
    conn.close()
    return lost


def _server_error(book: Book, error: BaseException, lost: bool) -> str | None:
    """What a database server did to the write, for one line (``the connection to the
    database server at 127.0.0.1:5432 was lost (...)``); ``None`` for anything else, and for
    a SQLite book, whose errors (a full disk above all) are reported as they are."""
    url = book.engine.url
    if url.get_backend_name() == "sqlite":
        return None
    driver_error = getattr(error, "orig", None) or error
    if not isinstance(driver_error, book.engine.dialect.loaded_dbapi.Error):
        return None
    lines = str(driver_error).strip().splitlines()  # libpq adds a paragraph of guesses
    reason = lines[0].strip() if lines else type(driver_error).__name__
    server = f"the database server at {url.host or 'localhost'}" + (
        f":{url.port}" if url.port else ""
    )
    if lost:
        return f"the connection to {server} was lost ({reason})"
    return f"{server} refused the write ({reason})"


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
