"""A game's stored rows held in memory, for a server that answers many lookups of small games.

A :class:`MemoryTable` holds every row of one game as NumPy columns sorted by key (a key's
stones are its ply), about 15 bytes a row (4x4 k=4's 1,217,977 rows: 17 MiB).
:meth:`MemoryTable.family` finds a position and all its children in one compiled function
(Numba): the position's images under the board's symmetries by table look-ups of its key's
bytes, each child's canonical key as the smallest of its parent's images plus the images of the
new stone, and each row by a binary search. A position asks for a few dozen small integers, which
cost less compiled than in NumPy calls (microseconds each) or Python. No database is read and no
row is checked again (:func:`load_table` checks them all once); a position whose game is over
is found the same way, without children.

:meth:`Book.find_with_moves <book.reader.Book.find_with_moves>` answers from a game's table
when the book holds one in :attr:`Book.memory`; the answers are the same as from the database.
The rows are a copy: a game solved again (``--force``) after its table was loaded is still
answered from the copy, until the table is loaded again.
"""

from __future__ import annotations

import ctypes
import functools
import threading
import time
from collections.abc import Callable, Iterator
from itertools import chain, islice
from typing import TYPE_CHECKING, NamedTuple, cast

import numpy as np

from ttt_solve.errors import TttError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import KEY_CHUNK_BITS, KEY_CHUNK_MASK, Rules

if TYPE_CHECKING:
    from ttt_solve.book.reader import Book

DEFAULT_MAX_ROWS = 2_000_000
"""Rows ``ttt serve`` keeps in memory unless told otherwise: 4x4 k=4 and the smaller games,
about 30 MiB at most."""

_LOAD_BATCH = 10_000

_DTYPES = (np.int64, np.int8, np.uint8, np.uint32, np.uint8)
"""The columns of a table: key, value, remoteness, best moves, images."""
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
        # [chunk, byte, symmetry]: Rules.key_tables ([symmetry, chunk, byte]) reordered
        tables = np.array(rules.key_tables, dtype=np.int64)
        self._chunk_images = np.ascontiguousarray(tables.transpose(1, 2, 0))
        # [bit, symmetry]: the images of one stone of a key (bit cell for X, cells + cell for O)
        self._stone_images = np.array(rules.bit_images, dtype=np.int64)
        self._find = _compiled_family_rows()
        self.family(Position(rules))  # compiled now (or loaded from disk), not on a request

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
        """
        found = self._find(
            position.key,
            0 if terminal else position.empty,
            0 if position.x_to_move else self.rules.cells,  # where the mover's stones sit
            self._chunk_images,
            self._stone_images,
            self.keys,
            self.values,
            self.remoteness,
            self.best,
            self.images,
        ).tolist()
        if not found:
            return None
        symmetry, key, value, remoteness, best, images = found[:6]
        children = found[6:]  # cell, value, remoteness of each child, by cell
        row = (position.ply, key, value, remoteness, best, images)
        return Family(row, symmetry, children[0::3], children[1::3], children[2::3])


def _family_rows(
    key: int,
    empty: int,
    mover: int,
    chunk_images: np.ndarray,
    stone_images: np.ndarray,
    keys: np.ndarray,
    values: np.ndarray,
    remoteness: np.ndarray,
    best: np.ndarray,
    images: np.ndarray,
) -> np.ndarray:
    """:meth:`MemoryTable.family`'s rows, compiled (a position's few dozen keys cost less
    than one NumPy call each would): the first symmetry giving the canonical key, the
    position's row (key, value, remoteness, best moves, images), then cell, value and
    remoteness of each child by cell; empty if a row is not stored."""
    symmetries = chunk_images.shape[2]
    image = np.zeros(symmetries, dtype=np.int64)
    rest, chunk = key, 0
    while rest:
        for symmetry in range(symmetries):
            image[symmetry] |= chunk_images[chunk, rest & KEY_CHUNK_MASK, symmetry]
        rest >>= KEY_CHUNK_BITS
        chunk += 1
    first = 0  # the first symmetry giving the smallest key, as Rules.canonical's
    for symmetry in range(1, symmetries):
        if image[symmetry] < image[first]:
            first = symmetry
    cells = 0
    rest = empty
    while rest:
        rest &= rest - 1
        cells += 1
    found = np.empty(6 + 3 * cells, dtype=np.int64)
    at = np.searchsorted(keys, image[first])
    if at >= len(keys) or keys[at] != image[first]:
        return found[:0]
    found[0], found[1], found[2] = first, image[first], values[at]
    found[3], found[4], found[5] = remoteness[at], best[at], images[at]
    slot = 6
    for cell in range(stone_images.shape[0] // 2):
        if not empty >> cell & 1:
            continue
        child = np.int64(image[0] | stone_images[mover + cell, 0])
        for symmetry in range(1, symmetries):
            child = min(child, image[symmetry] | stone_images[mover + cell, symmetry])
        at = np.searchsorted(keys, child)
        if at >= len(keys) or keys[at] != child:
            return found[:0]
        found[slot], found[slot + 1], found[slot + 2] = cell, values[at], remoteness[at]
        slot += 3
    return found


@functools.cache
def _compiled_family_rows() -> Callable[..., np.ndarray]:
    """:func:`_family_rows` compiled by Numba (once; its machine code is kept on disk), on
    first need: commands that never keep a table in memory do not import Numba."""
    import numba

    compiled = numba.njit(nogil=True, cache=True)(_family_rows)
    return cast(Callable[..., np.ndarray], compiled)


def load_table(book: Book, rules: Rules, stop: threading.Event | None = None) -> MemoryTable:
    """Every stored row of a game read into a table, checked as :meth:`Book.rows` checks
    them; raises :class:`LoadStopped` once ``stop`` is set."""
    dtypes = _DTYPES
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


def compile_lookup() -> float:
    """Compile the tables' lookup now (or load its machine code from Numba's cache on disk),
    on an empty table of the columns' types; the seconds it took."""
    started = time.perf_counter()
    MemoryTable(Rules(1, 1, 1), *(np.zeros(0, dtype=dtype) for dtype in _DTYPES))
    return time.perf_counter() - started


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
