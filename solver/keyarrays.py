"""Array-at-a-time operations on packed position keys (NumPy ``uint64``).

The exhaustive solver handles a ply of positions as one array. This module gives it, for
whole arrays at once, what :class:`~solver.position.Position` gives for one position: canonical
keys, orbit sizes (how many distinct positions a canonical key stands for), wins, children.
The work is done by the compiled kernels of :mod:`solver.kernels`, on every core; this class
holds one game's tables for them.

A symmetry permutes the bits of a packed key through the lookup tables of
:attr:`Rules.key_tables <solver.rules.Rules.key_tables>`, indexed by 8 bits of the key at a
time, so canonicalising costs ``symmetries * chunks`` table look-ups per position instead of a
loop over cells.
"""

from __future__ import annotations

import numba
import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver import kernels
from ttt_solve.solver.rules import Rules


class KeyArrays:
    """Vectorised key operations for one game's rules."""

    def __init__(self, rules: Rules) -> None:
        if not rules.fits_key:
            raise ValueError(f"{rules.name}: {rules.cells} cells do not fit a 64-bit key")
        self.rules = rules
        self.cells = rules.cells
        # tables[s, c, v]: the image under symmetry s of the key bits v placed at chunk c.
        self.tables = np.array(rules.key_tables, dtype=np.uint64)
        # moves[b, s]: the image under symmetry s of key bit b alone (a stone played).
        self.moves = np.ascontiguousarray(kernels.bit_images(self.tables, 2 * rules.cells).T)
        self.lines = np.array(rules.lines, dtype=np.uint64)
        # Slices sorted at once by sorted_unique: one per core.
        self.sort_slices = numba.get_num_threads()

    def canonical(self, keys: NDArray[np.uint64]) -> NDArray[np.uint64]:
        """The canonical key (minimum over images) of every key."""
        canonical: NDArray[np.uint64] = kernels.canonical_keys(keys, self.tables)
        return canonical

    def orbit_sizes(self, keys: NDArray[np.uint64]) -> NDArray[np.uint8]:
        """How many distinct positions each key's symmetry class holds (``uint8``)."""
        sizes: NDArray[np.uint8] = kernels.orbit_sizes(keys, self.tables)
        return sizes

    def won_by_last_mover(self, keys: NDArray[np.uint64], ply: int) -> NDArray[np.bool_]:
        """Whether the player who made the last move (X on odd plies) has a line, key by key."""
        if ply == 0:  # nobody has moved
            return np.zeros(len(keys), dtype=bool)
        won: NDArray[np.bool_] = kernels.won_keys(keys, self._shift(ply - 1), self.lines)
        return won

    def canonical_children(self, parents: NDArray[np.uint64], ply: int) -> NDArray[np.uint64]:
        """The canonical keys of every child of the ``ply`` positions ``parents``, in parent
        order (``cells - ply`` children each)."""
        children: NDArray[np.uint64] = kernels.canonical_children(
            parents, self.cells, self.cells - ply, self._shift(ply), self.tables, self.moves
        )
        return children

    def sorted_unique(self, keys: NDArray[np.uint64]) -> NDArray[np.uint64]:
        """The distinct values of ``keys``, sorted (``keys`` itself is reordered)."""
        distinct: NDArray[np.uint64] = kernels.sorted_unique_parallel(keys, self.sort_slices)
        return distinct

    def back_up(
        self,
        parents: NDArray[np.uint64],
        ply: int,
        next_keys: NDArray[np.uint64],
        next_scores: NDArray[np.int16],
    ) -> tuple[NDArray[np.int16], NDArray[np.uint64], NDArray[np.bool_]]:
        """Each ``ply`` parent's best move score from its children's scores in the sorted next
        ply (``kernels.NO_MOVE`` if no child is there), its best-move mask, and whether every
        child was found."""
        backed_up: tuple[NDArray[np.int16], NDArray[np.uint64], NDArray[np.bool_]] = (
            kernels.back_up(
                parents,
                self.cells,
                self._shift(ply),
                self.tables,
                self.moves,
                next_keys,
                *kernels.bucket_starts(next_keys, 2 * self.cells),
                next_scores,
            )
        )
        return backed_up

    def _shift(self, ply: int) -> int:
        """Where the stones of the player to move at ``ply`` sit in a key: X at bit 0 (even
        plies), O at bit ``cells``."""
        return 0 if ply % 2 == 0 else self.cells
