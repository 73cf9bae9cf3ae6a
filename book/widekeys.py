"""Which boards a book stores (those whose keys pass 64 bits: not ``Rules.fits_key``).

A packed key takes two bits a cell (see :mod:`solver.position`), so a board of at most
:data:`~solver.rules.KEY_CELLS_LIMIT` (31) cells has keys that fit a signed 64-bit integer; a
board of 32 to :data:`BOOK_CELLS_LIMIT` (64) cells has keys of up to 128 bits, and best-moves
masks of up to 64. Both are stored in the same blocks (:mod:`book.blocks`), whose packed
columns are wider for the larger boards; every reader of a book sees keys and best moves as
non-negative Python integers.

No NumPy or SQLAlchemy here: a one-shot ``ttt query`` reads a SQLite book without them.
"""

from __future__ import annotations

from ttt_solve.solver.rules import Rules

BOOK_CELLS_LIMIT = 64
"""The largest board a book stores: a key of ``2 * 64`` bits fills the 16 bytes of a wide key."""


def fits_book(rules: Rules) -> bool:
    """Whether a book can store this game's positions at all (at most 64 cells)."""
    return rules.cells <= BOOK_CELLS_LIMIT
