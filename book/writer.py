"""Writing a solved game into a book, atomically.

The whole game (its ``games`` row and every ``positions`` row) is written in one transaction:
a run that is interrupted (Ctrl-C, an exception, SIGKILL, a lost connection) leaves the book
as it was, and the next run starts clean. Two writers of the same game serialise: on SQLite
the transaction starts with ``BEGIN IMMEDIATE`` (one writer at a time per file), on PostgreSQL
with an advisory lock keyed on the rules (one writer at a time per game); either way the
second writer waits for the first and then sees its game instead of writing it twice.

Rows go in by each backend's fast path: PostgreSQL ``COPY ... FROM STDIN`` in binary format,
the rows packed by NumPy (psycopg 3 only); elsewhere the DB-API driver's ``executemany``.
While one ply is written, a thread solves the next (:func:`solved_ahead`).
"""

from __future__ import annotations

import json
import queue
import signal
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import closing, contextmanager
from datetime import datetime, timezone
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ttt_solve.book import schema
from ttt_solve.book.errors import BookError, GameExistsError
from ttt_solve.book.migrate import write_lock
from ttt_solve.book.reader import Book, GameInfo
from ttt_solve.book.widekeys import BOOK_CELLS_LIMIT, KEY_BYTES, fits_book, stored_key
from ttt_solve.solver import SOLVER_VERSION
from ttt_solve.solver.figures import Figures
from ttt_solve.solver.plytable import PlyTable, split_scores
from ttt_solve.solver.rules import Rules

BATCH_ROWS = 100_000
"""Rows handed to the database at a time: bounds the memory of a batch (a 4x5 ply holds tens
of millions of rows) and sets how often progress is reported."""


def game_lock(rules: Rules) -> int:
    """The PostgreSQL advisory-lock key of a game (``ttt`` then rows, columns, k)."""
    return 0x7474_7400_0000_0000 | rules.rows << 16 | rules.cols << 8 | rules.k


def _columns(game_id: int, table: PlyTable, empties: int) -> dict[str, np.ndarray]:
    """The ``positions`` columns of one ply as aligned arrays (canonical orientation)."""
    values, remoteness = split_scores(table.scores, empties)
    count = len(table.keys)
    return {
        "game_id": np.full(count, game_id, dtype=np.int64),
        "ply": np.full(count, table.ply, dtype=np.int64),
        "key": _stored_keys(table.keys),
        "value": values,
        "remoteness": remoteness,
        "best_moves": table.best_moves.astype(np.int64),  # 64 cells: the signed bit pattern
        "images": table.images,
    }


def _stored_keys(keys: np.ndarray) -> np.ndarray:
    """Keys as their table stores them: ``int64`` (at most 62 bits: the cast is exact), or,
    for boards of more than 31 cells (Python ints in an object array), 16 bytes big-endian
    (``V16``, whose items stay 16 bytes long as Python ``bytes``; see :mod:`book.widekeys`)."""
    if keys.dtype != object:
        return keys.astype(np.int64)
    return np.array([stored_key(key) for key in keys.tolist()], dtype=f"V{KEY_BYTES}")


def _insert_batches(conn: Connection, table: str, columns: dict[str, np.ndarray]) -> Iterator[int]:
    """Insert the rows into ``table`` with the driver's ``executemany``, a batch at a time;
    yield batch sizes.

    The game and the ply, one value for the whole ply, are literals of the statement rather
    than parameters of every row (measured: a tenth of the write's time)."""
    count = len(columns["key"])
    if not count:
        return
    varying = [name for name in schema.POSITION_COLUMNS if name not in ("game_id", "ply")]
    game_id, ply = int(columns["game_id"][0]), int(columns["ply"][0])  # plain decimal numbers
    marks = schema.placeholders(conn.engine, len(varying))
    insert = (
        f"INSERT INTO {table} (game_id, ply, {', '.join(varying)}) "
        f"VALUES ({game_id}, {ply}, {marks})"
    )
    for start in range(0, count, BATCH_ROWS):
        stop = min(start + BATCH_ROWS, count)
        # Python ints from tolist(), zipped lazily: no list of tuples for the batch.
        rows = zip(*(columns[name][start:stop].tolist() for name in varying))
        cursor = conn.connection.cursor()
        cursor.executemany(insert, rows)  # type: ignore[arg-type]  # the DB-API takes any iterable
        cursor.close()
        yield stop - start


_COPY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + bytes(8)  # signature, flags 0, no header extension
_COPY_TRAILER = b"\xff\xff"  # a tuple of -1 fields ends the data
_COPY_FIELDS = (
    (sa.BigInteger, ">i8"),
    (sa.SmallInteger, ">i2"),
    (sa.Integer, ">i4"),
    (sa.LargeBinary, f"V{KEY_BYTES}"),  # a wide key's 16 bytes, as they are
)  # subclasses first


def copy_dtype(table: sa.Table = schema.positions) -> np.dtype:
    """One row of PostgreSQL's binary COPY format for ``table`` (``positions`` or
    ``wide_positions``), as a packed NumPy dtype.

    A row is the field count (int16), then for each column its byte length (int32) and its
    big-endian value. Widths follow the column types of :mod:`book.schema`, so a type change
    there changes the format here.
    """
    fields: list[tuple[str, str]] = [("fields", ">i2")]
    for name in schema.POSITION_COLUMNS:
        column_type = table.c[name].type
        field = next(form for kind, form in _COPY_FIELDS if isinstance(column_type, kind))
        fields += [(f"{name}_length", ">i4"), (name, field)]
    return np.dtype(fields)


def copy_payload(
    columns: dict[str, np.ndarray], start: int, stop: int, table: sa.Table = schema.positions
) -> bytes:
    """Rows ``start:stop`` of ``table`` in binary COPY format (without signature or trailer)."""
    dtype = copy_dtype(table)
    rows = np.empty(stop - start, dtype=dtype)
    rows["fields"] = len(schema.POSITION_COLUMNS)
    for name in schema.POSITION_COLUMNS:
        rows[f"{name}_length"] = dtype[name].itemsize
        rows[name] = columns[name][start:stop]
    return rows.tobytes()


def _copy_batches(conn: Connection, table: str, columns: dict[str, np.ndarray]) -> Iterator[int]:
    """``COPY table FROM STDIN`` in binary format on the transaction's own psycopg
    connection, a batch at a time; yield batch sizes."""
    sql = f"COPY {table} ({', '.join(schema.POSITION_COLUMNS)}) FROM STDIN WITH (FORMAT BINARY)"
    count = len(columns["key"])
    driver = conn.connection.driver_connection
    assert driver is not None, "an open transaction has its driver's connection"
    with driver.cursor() as cursor, cursor.copy(sql) as copy:
        copy.write(_COPY_SIGNATURE)
        for start in range(0, count, BATCH_ROWS):
            stop = min(start + BATCH_ROWS, count)
            copy.write(copy_payload(columns, start, stop, schema.metadata.tables[table]))
            yield stop - start
        copy.write(_COPY_TRAILER)


def solved_ahead(plies: Iterable[PlyTable]) -> Generator[PlyTable, None, None]:
    """The plies, made by a thread of their own one ply ahead of the consumer: the solver's
    kernels release the GIL, so the next ply is solved while this one is written. An error
    of the solver is raised here; a consumer that stops early (closing this generator) stops
    the thread at its next ply and waits for it, so that nothing of the solve runs on once
    the consumer has given up."""
    handoff: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=1)
    stopped = threading.Event()

    def hand(kind: str, item: Any) -> bool:
        while not stopped.is_set():
            try:
                handoff.put((kind, item), timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for table in plies:
                if not hand("ply", table):
                    return
            hand("end", None)
        except BaseException as error:  # noqa: BLE001  # handed to the consumer, raised there
            hand("error", error)

    thread = threading.Thread(target=produce, name="ttt-solve-ahead", daemon=True)
    thread.start()
    try:
        while True:
            kind, item = handoff.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield item
    finally:
        stopped.set()
        thread.join()


def uses_copy(conn: Connection) -> bool:
    """Whether rows go in by COPY: PostgreSQL through psycopg 3 (other drivers lack its API)."""
    return conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg"


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
    games, positions = schema.games, schema.positions_of(rules)
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
            conn.execute(sa.delete(positions).where(positions.c.game_id == existing))
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
        batches = _copy_batches if uses_copy(conn) else _insert_batches
        with closing(solved_ahead(plies)) as ahead:  # its thread ends with the loop
            for table in ahead:
                figures.add(table)
                columns = _columns(game_id, table, rules.cells - table.ply)
                for count in batches(conn, positions.name, columns):
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
