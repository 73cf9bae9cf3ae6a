"""A book's games held in memory, for a server that answers many lookups of small games:
:func:`load_table` reads a game's rows into a :class:`~book.memtable.MemoryTable`, checked
once; :class:`MemoryLoader` loads the smaller games in the background.

:meth:`Book.find_with_moves <book.reader.Book.find_with_moves>` answers from a game's table
when the book holds one in :attr:`Book.memory`; the answers are the same as from the database.
The rows are a copy: a game solved again (``--force``) after its table was loaded is still
answered from the copy, until the table is loaded again.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable, Iterator
from itertools import chain, islice
from typing import TYPE_CHECKING

import numpy as np

from ttt_solve.book.memtable import COLUMN_TYPES, MemoryTable, compile_lookup
from ttt_solve.errors import TttError
from ttt_solve.solver.rules import Rules

if TYPE_CHECKING:
    from ttt_solve.book.reader import Book
    from ttt_solve.book.records import GameInfo


_LOAD_BATCH = 10_000
"""Rows turned into NumPy columns at a time while loading."""


class LoadStopped(Exception):
    """Loading a table was stopped before its end (the server is stopping)."""


def load_table(book: Book, rules: Rules, stop: threading.Event | None = None) -> MemoryTable:
    """Every stored row of a game read into a table, checked as :meth:`Book.rows` checks
    them; raises :class:`LoadStopped` once ``stop`` is set."""
    dtypes = COLUMN_TYPES
    parts: list[list[np.ndarray]] = [[] for _ in dtypes]
    rows = book.rows(rules, batch=_LOAD_BATCH)
    try:
        for batch in _batches(rows):
            if stop is not None and stop.is_set():
                raise LoadStopped(f"loading {rules.name} was stopped")
            flat = np.fromiter(chain.from_iterable(batch), dtype=np.int64, count=6 * len(batch))
            table = flat.reshape(-1, 6)
            for column, (part, dtype) in enumerate(zip(parts, dtypes), start=1):
                part.append(table[:, column].astype(dtype))
    finally:
        rows.close()
    columns = [
        np.concatenate(part) if part else np.zeros(0, dtype=dtype)
        for part, dtype in zip(parts, dtypes)
    ]
    order = columns[0].argsort()
    keys, values, remoteness, best, images = (column[order] for column in columns)
    return MemoryTable(rules, keys, values, remoteness, best, images)


def _batches(rows: Iterator[tuple[int, ...]]) -> Iterator[list[tuple[int, ...]]]:
    while batch := list(islice(rows, _LOAD_BATCH)):
        yield batch


class MemoryLoader:
    """Loads the tables of a book's games in a background thread, smallest game first, while
    their rows fit ``max_rows`` in all; each table serves as soon as it is loaded (the book
    answers from the database meanwhile). ``report`` is told of each game loaded, and of each
    that could not be read (a game that does not fit is passed over in silence)."""

    def __init__(self, book: Book, max_rows: int, report: Callable[[str], None]) -> None:
        self.book = book
        self.max_rows = max_rows
        self.report = report
        self.stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memory-loader", daemon=True)

    def start(self) -> MemoryLoader:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop loading (at the next batch of rows) and wait for the thread to end."""
        self.stopping.set()
        self._thread.join()

    def join(self, timeout: float | None = None) -> None:
        """Wait until every table that fits is loaded."""
        self._thread.join(timeout)

    def _compile_probe(self, info: GameInfo) -> None:
        """Switch the probe of a game stored as a table to its compiled kernels."""
        started = time.perf_counter()
        try:
            table = self.book.tablebase(info.rules)
            if table is not None:
                table.compile()
        except TttError as error:  # a damaged table: its look-ups report it
            self.report(f"{info.rules.name}: its table is not probed compiled: {error}")
            return
        self.report(
            f"{info.rules.name}: probed from its table, compiled in "
            f"{time.perf_counter() - started:.1f} s"
        )

    def _run(self) -> None:
        try:
            games = self.book.games()
        except TttError as error:
            self.report(f"no game kept in memory: {error}")
            return
        left = self.max_rows
        compiled = False
        for info in sorted(games, key=lambda info: info.positions):
            rules = info.rules
            if info.table_folder is not None:  # probed directly, as fast as rows in memory
                self._compile_probe(info)
                continue
            if not rules.fits_key or info.positions > left:
                continue
            if not compiled:  # said apart: the first time on a machine it takes seconds
                self.report(f"lookup in memory compiled in {compile_lookup():.1f} s (Numba)")
                compiled = True
            started = time.perf_counter()
            try:
                table = load_table(self.book, rules, self.stopping)
            except LoadStopped:
                return
            except TttError as error:  # a damaged row: the database path reports it
                self.report(f"{rules.name}: not kept in memory: {error}")
                continue
            self.book.memory[info.id] = table
            left -= len(table)
            _give_back_scratch_memory()
            self.report(
                f"{rules.name}: {len(table):,} positions in memory "
                f"({table.nbytes / 2**20:.1f} MiB, read in {time.perf_counter() - started:.1f} s)"
            )


def _give_back_scratch_memory() -> None:
    """Hand the memory a load used for its rows on the way back to the system: the C library's
    allocator keeps freed blocks of the process's heap otherwise (on 4x4 k=4, about 20 MiB
    beside the table's 17 MiB). Only where the C library is glibc."""
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is not None:
        trim(0)
