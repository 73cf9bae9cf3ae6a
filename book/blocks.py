"""How a book packs a game's positions: blocks of the ``position_blocks`` table.

A row of ``position_blocks`` holds one block: up to :data:`BLOCK_POSITIONS` positions of one
ply of one game, in ascending order of canonical key. ``first_key`` is the block's smallest key
as 16 bytes big-endian, so that blocks sort by it as the numbers they hold (bytes compare in
order on SQLite and PostgreSQL alike) and the block that may hold a key is the last one whose
``first_key`` is not above it. ``keys`` and ``data`` are the block's columns, packed:

* ``keys``: ``count`` keys, each little-endian, of :attr:`Layout.key_bytes` bytes (8 for
  boards of at most 31 cells, 16 for 32 to 64 cells);
* ``data``: ``count`` values (int8: 1, 0, -1 for the side to move), then ``count``
  remoteness (uint8), then ``count`` images (uint8), then ``count`` best-moves cell masks,
  each little-endian, of :attr:`Layout.mask_bytes` bytes (4 or 8 by the same board sizes).

``docs/storage.md`` gives the layout byte by byte. One row a block rather than one a position:
a database inserts rows at a few hundred thousand a second, so a game of 168 million positions
would spend minutes in the insert alone; a block goes in as two byte strings NumPy has made.

No NumPy or SQLAlchemy on the lookup path (:func:`checked_block`, :func:`find_in_block`): a
one-shot ``ttt query`` reads a SQLite book without them.
"""

from __future__ import annotations

import bisect
import operator
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ttt_solve.book.backend import StorageDamage
from ttt_solve.solver.rules import KEY_CELLS_LIMIT

if TYPE_CHECKING:
    import numpy as np

BLOCK_POSITIONS = 1024
"""The most positions a block holds (the last block of a ply holds the rest). Chosen by
measuring the write against one lookup: see ``docs/storage.md``."""

FIRST_KEY_BYTES = 16
"""The width of ``first_key``: a key of the largest board (64 cells, 128 bits)."""

TABLE = "position_blocks"
BLOCK_COLUMNS = ("game_id", "ply", "first_key", "count", "keys", "data")


class Layout(NamedTuple):
    """The widths of a block's packed columns for one board size."""

    key_bytes: int
    mask_bytes: int

    @property
    def data_bytes(self) -> int:
        """Bytes of ``data`` a position takes: value, remoteness, images and best moves."""
        return 3 + self.mask_bytes


NARROW = Layout(8, 4)
WIDE = Layout(16, 8)


def layout(cells: int) -> Layout:
    """The layout of the blocks of a board of ``cells`` cells."""
    return NARROW if cells <= KEY_CELLS_LIMIT else WIDE


def first_key(key: int) -> bytes:
    """A key as ``first_key`` stores it (and as a lookup compares with it): 16 bytes big-endian."""
    return key.to_bytes(FIRST_KEY_BYTES, "big")


_NATIVE_KEYS = sys.byteorder == "little"
"""Whether 8-byte little-endian keys can be read in place as the machine's unsigned ints."""


def block_keys(shape: Layout, keys: bytes) -> Sequence[int]:
    """The keys of a block (``keys`` of a length checked by :func:`checked_block`): read in
    place where the machine's own integers are the stored ones, else unpacked."""
    width = shape.key_bytes
    if width == 8 and _NATIVE_KEYS:
        return memoryview(keys).cast("Q")
    return [int.from_bytes(keys[at : at + width], "little") for at in range(0, len(keys), width)]


class BlockDamage(StorageDamage):
    """A stored block that no writer makes; the message says what is wrong with it."""


def checked_block(
    shape: Layout, ply: Any, first: Any, count: Any, keys: Any, data: Any
) -> Sequence[int]:
    """The keys of a stored block whose columns have the types and lengths a writer makes.

    Raises :class:`BlockDamage` for columns of the wrong type, a count that does not match
    the lengths of the packed columns, or a ``first_key`` that is not its first key. The order
    of the keys is checked around the key a lookup finds (:func:`find_in_block`: a lookup
    reads one position of a block), and of every key where every position is read."""
    for column in (ply, count):
        if type(column) is not int:
            raise BlockDamage(f"a position block holds {column!r} where a whole number belongs")
    where = f"a position block of ply {ply}"
    if not all(isinstance(blob, bytes) for blob in (first, keys, data)):
        raise BlockDamage(f"{where} holds a column that is not bytes")
    if count < 1 or len(keys) != count * shape.key_bytes or len(data) != count * shape.data_bytes:
        raise BlockDamage(
            f"{where} holds {len(keys)} bytes of keys and {len(data)} of data, "
            f"not {count} positions"
        )
    stored = block_keys(shape, keys)
    if len(first) != FIRST_KEY_BYTES or int.from_bytes(first, "big") != stored[0]:
        raise BlockDamage(f"{where} has a first_key that is not its first key")
    return stored


def out_of_order(ply: int) -> BlockDamage:
    return BlockDamage(f"a position block of ply {ply} holds keys not in increasing order")


def block_row(
    shape: Layout, ply: int, key: int, data: bytes, count: int, index: int
) -> tuple[int, int, int, int, int, int]:
    """The ``(ply, key, value, remoteness, best_moves, images)`` row of position ``index``."""
    value = data[index]
    at = 3 * count + index * shape.mask_bytes
    best = int.from_bytes(data[at : at + shape.mask_bytes], "little")
    signed = value - 256 if value > 127 else value
    return (ply, key, signed, data[count + index], best, data[2 * count + index])


def find_in_block(
    shape: Layout, ply: int, keys: Sequence[int], data: bytes, wanted: int
) -> tuple[int, int, int, int, int, int] | None:
    """The row of key ``wanted`` in a block whose keys are ``keys``, or ``None``. Raises
    :class:`BlockDamage` if the keys beside the one found are not below and above it."""
    index = bisect.bisect_left(keys, wanted)
    count = len(keys)
    if index == count or keys[index] != wanted:
        return None
    if (index and keys[index - 1] >= wanted) or (index + 1 < count and keys[index + 1] <= wanted):
        raise out_of_order(ply)
    return block_row(shape, ply, wanted, data, count, index)


def check_order(ply: int, keys: Sequence[int]) -> None:
    """Raise :class:`BlockDamage` unless a block's keys strictly increase."""
    if not all(map(operator.lt, keys, keys[1:])):
        raise out_of_order(ply)


def block_columns(
    shape: Layout, ply: int, count: int, keys: bytes, data: bytes
) -> dict[str, np.ndarray]:
    """A narrow block's columns as NumPy arrays (``key`` ``uint64``, the rest ``int64``);
    raises :class:`BlockDamage` if its keys do not strictly increase."""
    import numpy as np

    mask = np.dtype(f"<u{shape.mask_bytes}")
    stored = np.frombuffer(keys, dtype="<u8")
    if not (stored[1:] > stored[:-1]).all():
        raise out_of_order(ply)
    return {
        "key": stored,
        "value": np.frombuffer(data, dtype=np.int8, count=count).astype(np.int64),
        "remoteness": np.frombuffer(data, np.uint8, count, count).astype(np.int64),
        "images": np.frombuffer(data, np.uint8, count, 2 * count).astype(np.int64),
        "best_moves": np.frombuffer(data, mask, count, 3 * count).astype(np.int64),
    }


def pack_ply(
    cells: int,
    keys: np.ndarray,
    values: np.ndarray,
    remoteness: np.ndarray,
    images: np.ndarray,
    best_moves: np.ndarray,
    size: int | None = None,
) -> Iterator[tuple[bytes, int, bytes, bytes]]:
    """The blocks of one ply, ``(first_key, count, keys, data)`` each, from its columns sorted
    by key (keys ``uint64``, or Python ints in an ``object`` array for a wide board). Packed a
    block at a time as they are taken: a ply's blocks are never all held at once. ``size``:
    positions a block, :data:`BLOCK_POSITIONS` unless given."""
    import numpy as np

    size = size or BLOCK_POSITIONS
    shape = layout(cells)
    columns = (
        values.astype(np.int8, copy=False),
        remoteness.astype(np.uint8),
        images.astype(np.uint8, copy=False),
        best_moves.astype(f"<u{shape.mask_bytes}"),
    )
    narrow_keys = keys.astype("<u8", copy=False) if shape is NARROW else None
    for start in range(0, len(keys), size):
        stop = min(start + size, len(keys))
        if narrow_keys is not None:
            packed = narrow_keys[start:stop].tobytes()
        else:
            packed = b"".join(
                int(key).to_bytes(WIDE.key_bytes, "little") for key in keys[start:stop]
            )
        data = b"".join(column[start:stop].tobytes() for column in columns)
        yield first_key(int(keys[start])), stop - start, packed, data
