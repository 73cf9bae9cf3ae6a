"""How a book stores the positions of boards of 32 to 64 cells: the ``wide_positions`` table.

A packed key takes two bits a cell (see :mod:`solver.position`), so a board of at most
:data:`~solver.rules.KEY_CELLS_LIMIT` (31) cells has keys that fit a signed 64-bit integer:
its rows go to ``positions``, keyed by a ``BIGINT``. A board of 32 to :data:`BOOK_CELLS_LIMIT`
(64) cells has keys of up to 128 bits: its rows go to ``wide_positions``, whose key is 16 bytes
big-endian (a ``BLOB`` on SQLite, a ``BYTEA`` on PostgreSQL; both compare bytewise, so keys
sort as the numbers they hold). Its ``best_moves`` is a cell bitmask of up to 64 bits, stored
in the ``BIGINT`` as its signed 64-bit pattern (cell 63 makes it negative).

Only these few conversions differ between the two tables: every reader and writer of a book
passes through them, and sees keys and best moves as non-negative Python integers.

No NumPy or SQLAlchemy here: a one-shot ``ttt query`` reads a SQLite book without them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ttt_solve.solver.rules import KEY_CELLS_LIMIT, Rules

BOOK_CELLS_LIMIT = 64
"""The largest board a book stores: a key of ``2 * 64`` bits fills the 16 bytes of a wide key."""

KEY_BYTES = 16
"""The width of a stored wide key."""

NARROW_TABLE = "positions"
WIDE_TABLE = "wide_positions"

_MASK_BITS = (1 << 64) - 1


def is_wide(rules: Rules) -> bool:
    """Whether the rows of this game go to ``wide_positions`` (more than 31 cells)."""
    return rules.cells > KEY_CELLS_LIMIT


def positions_table(rules: Rules) -> str:
    """The name of the table that holds this game's rows."""
    return WIDE_TABLE if is_wide(rules) else NARROW_TABLE


def fits_book(rules: Rules) -> bool:
    """Whether a book can store this game's positions at all (at most 64 cells)."""
    return rules.cells <= BOOK_CELLS_LIMIT


def stored_key(key: int) -> bytes:
    """A wide key as it is stored: 16 bytes, big-endian."""
    return key.to_bytes(KEY_BYTES, "big")


def stored_mask(mask: int) -> int:
    """A wide best-moves mask as it is stored: its signed 64-bit pattern."""
    return mask - (1 << 64) if mask >> 63 else mask


def read_wide_row(row: Sequence[Any]) -> tuple[Any, ...]:
    """A selected ``(ply, key, value, remoteness, best_moves, images)`` row of
    ``wide_positions`` with its key and best moves as the numbers they stand for.

    A column that is not what the writer stores (a key of another width, a text) is left as
    it is, so that the book's row checks report it as damage."""
    ply, key, value, remoteness, best, images = row
    if isinstance(key, (bytes, memoryview)) and len(key) == KEY_BYTES:  # drivers differ
        key = int.from_bytes(key, "big")
    if type(best) is int and -(1 << 63) <= best < 1 << 63:
        best &= _MASK_BITS
    return (ply, key, value, remoteness, best, images)
