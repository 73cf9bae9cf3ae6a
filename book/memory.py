"""A game's stored rows held in memory, for a server that answers many lookups of small games.

A :class:`MemoryTable` holds every row of one game as NumPy columns sorted by key (a key's
stones are its ply), about 15 bytes a row (4x4 k=4's 1,217,977 rows: 17 MiB).
:meth:`MemoryTable.family` finds a position and all its children: the position's images under
the board's symmetries by table look-ups of its key's bytes, each child's canonical key as the
smallest of its parent's images plus the images of the new stone, and their rows by one binary
search. No database is read and no row is checked again (:func:`load_table` checks them all once).

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
from operator import or_
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ttt_solve.errors import TttError
from ttt_solve.solver.position import Position, iter_cells
from ttt_solve.solver.rules import KEY_CHUNK_BITS, KEY_CHUNK_MASK, Rules

if TYPE_CHECKING:
    from ttt_solve.book.reader import Book

BYTES_PER_ROW = 15
"""Memory of one row: an 8-byte key, 4-byte best moves, a byte each for value, remoteness and
images."""

DEFAULT_MAX_ROWS = 2_000_000
"""Rows ``ttt serve`` keeps in memory unless told otherwise: 4x4 k=4 and the smaller games,
about 30 MiB at most."""

_LOAD_BATCH = 10_000
"""Rows turned into NumPy columns at a time while loading."""


class LoadStopped(Exception):
    """Loading a table was stopped before its end (the server is stopping)."""


class Family(NamedTuple):
    """A position's stored row and its children's, as :meth:`MemoryTable.family` finds them."""

    row: tuple[int, int, int, int, int, int]  # as a ``positions`` row: ply, key, value, ...
    symmetry: int  # the first symmetry that takes the position to its canonical key
    cells: list[int]  # the legal moves
    values: list[int]  # the stored value of each move's child (for the opponent)
    remoteness: list[int]  # and its remoteness


class MemoryTable:
    """Every stored row of one game (keys of at most 62 bits: boards of up to 31 cells)."""

    def __init__(
        self,
        rules: Rules,
        keys: np.ndarray,
        values: np.ndarray,
        remoteness: np.ndarray,
        best: np.ndarray,
        images: np.ndarray,
    ) -> None:
        self.rules = rules
        self.keys, self.values, self.remoteness = keys, values, remoteness
        self.best, self.images = best, images
        tables = rules.key_tables
        # [chunk][byte]: the images of one byte of a key under each symmetry, as Rules.key_tables
        self._chunk_images = tuple(
            tuple(tuple(table[chunk][byte] for table in tables) for byte in range(256))
            for chunk in range(len(tables[0]))
        )
        # [bit]: the images of one stone of a key (bit cell for X, cells + cell for O)
        self._stone_images = rules.bit_images

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def nbytes(self) -> int:
        """Memory held by the columns."""
        columns = (self.keys, self.values, self.remoteness, self.best, self.images)
        return sum(column.nbytes for column in columns)

    def family(self, position: Position, terminal: bool = False) -> Family | None:
        """The rows of a position and of every child (none if ``terminal``: the game is
        over), or ``None`` if one is not stored (the database path then says what is missing).

        One position's keys are a few dozen small integers: plain Python ints make them
        faster than NumPy calls would, which cost microseconds each; only the binary search
        in the table's columns is NumPy's, once for all the keys."""
        key = position.key
        chunk_images = self._chunk_images
        images = chunk_images[0][key & KEY_CHUNK_MASK]
        for chunk in chunk_images[1:]:
            key >>= KEY_CHUNK_BITS
            if not key:
                break
            images = tuple(map(or_, images, chunk[key & KEY_CHUNK_MASK]))
        canonical = min(images)
        cells = [] if terminal else list(iter_cells(position.empty))
        mover = 0 if position.x_to_move else self.rules.cells  # where the mover's stones sit
        stones = self._stone_images
        wanted = [canonical]
        wanted += [min(map(or_, images, stones[mover + cell])) for cell in cells]
        keys = self.keys
        if not len(keys):
            return None
        at = keys.searchsorted(wanted)
        if keys.take(at, mode="clip").tolist() != wanted:
            return None
        values, remoteness = self.values.take(at).tolist(), self.remoteness.take(at).tolist()
        parent = at[0]
        row = (
            position.ply,
            canonical,
            values[0],
            remoteness[0],
            int(self.best[parent]),
            int(self.images[parent]),
        )
        # the first symmetry giving the smallest key, as Rules.canonical's
        return Family(row, images.index(canonical), cells, values[1:], remoteness[1:])


def fits_memory(rules: Rules) -> bool:
    """Whether a game's keys fit a table (two bitboards of at most 31 cells: 62 bits)."""
    return rules.fits_key


def load_table(book: Book, rules: Rules, stop: threading.Event | None = None) -> MemoryTable:
    """Every stored row of a game read into a table, checked as :meth:`Book.rows` checks
    them; raises :class:`LoadStopped` once ``stop`` is set."""
    dtypes = (np.int64, np.int8, np.uint8, np.uint32, np.uint8)  # key, value, remoteness, ...
    parts: list[list[np.ndarray]] = [[] for _ in dtypes]
    rows = book.rows(rules, batch=_LOAD_BATCH)
    try:
        for batch in _batches(rows):
            if stop is not None and stop.is_set():
                raise LoadStopped(f"loading {rules.name} was stopped")
            flat = np.fromiter(chain.from_iterable(batch), dtype=np.int64, count=6 * len(batch))
            table = flat.reshape(-1, 6)
            # A key's stones are its ply, so one column of keys sorted serves every ply.
            if (np.bitwise_count(table[:, 1]) != table[:, 0]).any():
                raise book.damaged("a positions row's ply is not its count of stones", rules)
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
    answers from the database meanwhile). ``report`` is told of each game loaded or not."""

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

    def _run(self) -> None:
        try:
            games = self.book.games()
        except TttError as error:
            self.report(f"no game kept in memory: {error}")
            return
        left = self.max_rows
        for info in sorted(games, key=lambda info: info.positions):
            rules = info.rules
            if not fits_memory(rules) or info.positions > left:
                continue
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
                f"({table.nbytes / 2**20:.1f} MiB, loaded in {time.perf_counter() - started:.1f} s)"
            )


def _give_back_scratch_memory() -> None:
    """Hand the memory a load used for its rows on the way back to the system: the C library's
    allocator keeps freed blocks of the process's heap otherwise (on 4x4 k=4, about 20 MiB
    beside the table's 17 MiB). Only where the C library is glibc."""
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is not None:
        trim(0)
