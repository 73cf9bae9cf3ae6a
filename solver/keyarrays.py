"""Array-at-a-time operations on packed position keys (NumPy ``uint64``).

The exhaustive solver handles a ply of positions as one array. This module gives it, for
whole arrays at once, what :class:`~solver.position.Position` gives for one position: canonical
keys, orbit sizes (how many distinct positions a canonical key stands for), wins, children.

A symmetry permutes cells, hence the bits of a packed key (bit ``i`` of X and bit
``cells + i`` of O move together). Each permutation is applied through lookup tables indexed
by 8 bits of the key at a time, so canonicalising costs ``symmetries * chunks`` table gathers
per position instead of a loop over cells.
"""

from __future__ import annotations

import numpy as np

from ttt_solve.solver.rules import Rules

_CHUNK_BITS = 8


class KeyArrays:
    """Vectorised key operations for one game's rules."""

    def __init__(self, rules: Rules) -> None:
        if not rules.fits_key:
            raise ValueError(f"{rules.name}: {rules.cells} cells do not fit a 64-bit key")
        self.rules = rules
        self.cells = rules.cells
        key_bits = 2 * rules.cells
        self.chunks = (key_bits + _CHUNK_BITS - 1) // _CHUNK_BITS
        size = 1 << _CHUNK_BITS
        # tables[s, c, v]: the image under symmetry s of the key bits v placed at chunk c.
        tables = np.zeros((len(rules.symmetries), self.chunks, size), dtype=np.uint64)
        for s, perm in enumerate(rules.symmetries):
            bit_image = [
                perm[b] if b < rules.cells else rules.cells + perm[b - rules.cells]
                for b in range(key_bits)
            ]
            for c in range(self.chunks):
                for v in range(size):
                    image = 0
                    for j in range(_CHUNK_BITS):
                        bit = c * _CHUNK_BITS + j
                        if v >> j & 1 and bit < key_bits:
                            image |= 1 << bit_image[bit]
                    tables[s, c, v] = image
        self._tables = tables
        self._cell_bits = np.array([1 << c for c in range(rules.cells)], dtype=np.uint64)
        self._full = np.uint64(rules.full)
        self._lines = [np.uint64(m) for m in rules.lines]

    def _chunk_indexes(self, keys: np.ndarray) -> list[np.ndarray]:
        mask = np.uint64((1 << _CHUNK_BITS) - 1)
        return [
            ((keys >> np.uint64(c * _CHUNK_BITS)) & mask).astype(np.intp)
            for c in range(self.chunks)
        ]

    def _image(self, symmetry: int, chunk_indexes: list[np.ndarray]) -> np.ndarray:
        table = self._tables[symmetry]
        image = table[0].take(chunk_indexes[0])
        for c in range(1, self.chunks):
            image |= table[c].take(chunk_indexes[c])
        return image

    def images(self, keys: np.ndarray) -> np.ndarray:
        """All symmetric images, shape ``(symmetries, len(keys))``; row 0 is ``keys``."""
        parts = self._chunk_indexes(keys)
        out = np.empty((len(self.rules.symmetries), len(keys)), dtype=np.uint64)
        out[0] = keys
        for s in range(1, len(self.rules.symmetries)):
            out[s] = self._image(s, parts)
        return out

    def canonical(self, keys: np.ndarray) -> np.ndarray:
        """The canonical key (minimum over images) of every key."""
        parts = self._chunk_indexes(keys)
        best = keys.copy()
        for s in range(1, len(self.rules.symmetries)):
            np.minimum(best, self._image(s, parts), out=best)
        return best

    def orbit_sizes(self, keys: np.ndarray) -> np.ndarray:
        """How many distinct positions each key's symmetry class holds (``uint8``)."""
        images = np.sort(self.images(keys), axis=0)
        return (1 + np.count_nonzero(images[1:] != images[:-1], axis=0)).astype(np.uint8)

    def stones(self, keys: np.ndarray, x: bool) -> np.ndarray:
        """X's (or O's) bitboards."""
        return keys & self._full if x else keys >> np.uint64(self.cells)

    def has_line(self, stones: np.ndarray) -> np.ndarray:
        """Boolean: the bitboard holds a complete line."""
        won = np.zeros(len(stones), dtype=bool)
        for line in self._lines:
            won |= (stones & line) == line
        return won

    def children(self, keys: np.ndarray, x_to_move: bool) -> tuple[np.ndarray, np.ndarray]:
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


def sorted_unique(keys: np.ndarray) -> np.ndarray:
    """Sorted distinct values; ``np.sort`` plus a neighbour mask (``np.unique`` is far slower
    on large integer arrays, see MEASURED.md)."""
    if len(keys) == 0:
        return keys
    keys = np.sort(keys)
    keep = np.empty(len(keys), dtype=bool)
    keep[0] = True
    np.not_equal(keys[1:], keys[:-1], out=keep[1:])
    return keys[keep]
