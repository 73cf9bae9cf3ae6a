"""Array-at-a-time operations on packed position keys (NumPy ``uint64``).

The exhaustive solver handles a ply of positions as one array. This module gives it, for
whole arrays at once, what :class:`~solver.position.Position` gives for one position: canonical
keys, orbit sizes (how many distinct positions a canonical key stands for), wins, children.

A symmetry permutes the bits of a packed key through the lookup tables of
:attr:`Rules.key_tables <solver.rules.Rules.key_tables>`, indexed by 8 bits of the key at a
time, so canonicalising costs ``symmetries * chunks`` table gathers per position instead of a
loop over cells.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.rules import KEY_CHUNK_BITS, KEY_CHUNK_MASK, Rules


class KeyArrays:
    """Vectorised key operations for one game's rules."""

    def __init__(self, rules: Rules) -> None:
        if not rules.fits_key:
            raise ValueError(f"{rules.name}: {rules.cells} cells do not fit a 64-bit key")
        self.rules = rules
        self.cells = rules.cells
        # tables[s, c, v]: the image under symmetry s of the key bits v placed at chunk c.
        self._tables = np.array(rules.key_tables, dtype=np.uint64)
        self.chunks = self._tables.shape[1]
        self._cell_bits = np.array([1 << c for c in range(rules.cells)], dtype=np.uint64)
        self._full = np.uint64(rules.full)
        self._lines = [np.uint64(m) for m in rules.lines]

    def _chunk_indexes(self, keys: NDArray[np.uint64]) -> list[NDArray[np.intp]]:
        mask = np.uint64(KEY_CHUNK_MASK)
        return [
            ((keys >> np.uint64(c * KEY_CHUNK_BITS)) & mask).astype(np.intp)
            for c in range(self.chunks)
        ]

    def _image(self, symmetry: int, chunk_indexes: list[NDArray[np.intp]]) -> NDArray[np.uint64]:
        table = self._tables[symmetry]
        image: NDArray[np.uint64] = table[0].take(chunk_indexes[0])
        for c in range(1, self.chunks):
            image |= table[c].take(chunk_indexes[c])
        return image

    def images(self, keys: NDArray[np.uint64]) -> NDArray[np.uint64]:
        """All symmetric images, shape ``(symmetries, len(keys))``; row 0 is ``keys``."""
        parts = self._chunk_indexes(keys)
        out = np.empty((len(self.rules.symmetries), len(keys)), dtype=np.uint64)
        out[0] = keys
        for s in range(1, len(self.rules.symmetries)):
            out[s] = self._image(s, parts)
        return out

    def canonical(self, keys: NDArray[np.uint64]) -> NDArray[np.uint64]:
        """The canonical key (minimum over images) of every key."""
        parts = self._chunk_indexes(keys)
        best: NDArray[np.uint64] = keys.copy()
        for s in range(1, len(self.rules.symmetries)):
            np.minimum(best, self._image(s, parts), out=best)
        return best

    def orbit_sizes(self, keys: NDArray[np.uint64]) -> NDArray[np.uint8]:
        """How many distinct positions each key's symmetry class holds (``uint8``)."""
        images = np.sort(self.images(keys), axis=0)
        distinct = 1 + np.count_nonzero(images[1:] != images[:-1], axis=0)
        return np.asarray(distinct, dtype=np.uint8)

    def stones(self, keys: NDArray[np.uint64], x: bool) -> NDArray[np.uint64]:
        """X's (or O's) bitboards."""
        stones: NDArray[np.uint64] = keys & self._full if x else keys >> np.uint64(self.cells)
        return stones

    def has_line(self, stones: NDArray[np.uint64]) -> NDArray[np.bool_]:
        """Boolean: the bitboard holds a complete line."""
        won = np.zeros(len(stones), dtype=bool)
        for line in self._lines:
            won |= (stones & line) == line
        return won

    def children(
        self, keys: NDArray[np.uint64], x_to_move: bool
    ) -> tuple[NDArray[np.uint64], NDArray[np.intp]]:
        """Every child of every key, all positions having the same number of stones.

        Returns ``(children, cells)``, both of shape ``(len(keys), empty cells)``: the child's
        packed key and the cell played, row by row in ascending cell order.
        """
        n = len(keys)
        if n == 0:
            return (np.empty((0, 0), dtype=np.uint64), np.empty((0, 0), dtype=np.intp))
        occupied = (keys | (keys >> np.uint64(self.cells))) & self._full
        free = (occupied[:, None] & self._cell_bits[None, :]) == 0
        empties = int(np.count_nonzero(free[0]))
        shift = np.uint64(0 if x_to_move else self.cells)
        move_bits = self._cell_bits << shift
        children = (keys[:, None] | move_bits[None, :])[free].reshape(n, empties)
        cells = np.nonzero(free)[1].reshape(n, empties)
        return children, cells


def sorted_unique(keys: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """Sorted distinct values; ``np.sort`` plus a neighbour mask (``np.unique`` was measured
    far slower on large integer arrays)."""
    if len(keys) == 0:
        return keys
    keys = np.sort(keys)
    keep = np.empty(len(keys), dtype=bool)
    keep[0] = True
    np.not_equal(keys[1:], keys[:-1], out=keep[1:])
    return keys[keep]
