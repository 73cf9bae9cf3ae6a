"""A game's stored rows held in memory, and the lookup of a position and its children in them.

A :class:`MemoryTable` holds every row of one game as NumPy columns sorted by key (a key's
stones are its ply), about 15 bytes a row (4x4 k=4's 1,217,977 rows: 17 MiB).
:meth:`MemoryTable.family` finds a position and all its children in one compiled function
(Numba): the position's images under the board's symmetries by table look-ups of its key's
bytes, each child's canonical key as the smallest of its parent's images plus the images of the
new stone, and each row by a binary search. A position asks for a few dozen small integers, which
cost less compiled than in NumPy calls (microseconds each) or Python. No database is read and no
row is checked again (:func:`book.memory.load_table` checks them all once); a position whose
game is over is found the same way, without children.

:meth:`Book.find_with_moves <book.reader.Book.find_with_moves>` answers from a game's table
when the book holds one in :attr:`Book.memory`; the answers are the same as from the database.
:mod:`book.memory` loads the tables from a book.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import NamedTuple, cast

import numpy as np

from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import KEY_CHUNK_BITS, KEY_CHUNK_MASK, Rules

COLUMN_TYPES = (np.int64, np.int8, np.uint8, np.uint32, np.uint8)
"""The columns of a table: key, value, remoteness, best moves, images."""


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


def compile_lookup() -> float:
    """Compile the tables' lookup now (or load its machine code from Numba's cache on disk),
    on an empty table of the columns' types; the seconds it took."""
    started = time.perf_counter()
    MemoryTable(Rules(1, 1, 1), *(np.zeros(0, dtype=dtype) for dtype in COLUMN_TYPES))
    return time.perf_counter() - started
