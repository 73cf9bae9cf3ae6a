"""Array-at-a-time operations on packed position keys (NumPy ``uint64``).

The exhaustive solver handles a ply of positions as one array. This module gives it, for
whole arrays at once, what :class:`~solver.position.Position` gives for one position: canonical
keys, orbit sizes (how many distinct positions a canonical key stands for), wins, children,
and the back-up of a ply from the solved next one.

A symmetry permutes the bits of a packed key through the lookup tables of
:attr:`Rules.key_tables <solver.rules.Rules.key_tables>`, indexed by 8 bits of the key at a
time, so canonicalising costs ``symmetries * chunks`` table gathers per position instead of a
loop over cells.

Two implementations of the same operations:

* :class:`KeyArrays`: NumPy, one array operation at a time. Nothing to load: the small games
  are solved in less time than the compiled kernels take to load.
* :class:`CompiledKeyArrays`: the compiled kernels of :mod:`solver.exhaustive.kernels` on every
core,
  about ten times faster per position, but loading them costs most of a second per process
  (Numba itself and the cached machine code); they are imported only when first used.

:func:`key_arrays` chooses between them by the size of the game (:func:`uses_kernels`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.rules import KEY_CHUNK_BITS, KEY_CHUNK_MASK, Rules
from ttt_solve.solver.value import WIN_SCORE, move_score

Keys = NDArray[np.uint64]
Scores = NDArray[np.int16]
BackUp = tuple[NDArray[np.int16], NDArray[np.uint64], NDArray[np.bool_]]
"""What :meth:`KeyArrays.back_up` gives: scores, best-move masks, whether all children were
found."""

NO_MOVE = -2 * WIN_SCORE
"""The move score given to a child missing from the next ply: below every real score."""

COMPILED_FROM_CELLS = 16
"""Games of k >= 4 on boards of at least this many cells are solved by the compiled kernels,
smaller ones by NumPy. Measured whole process (``bench/bench_solve.py --engines``): loading
Numba and the kernels costs a few seconds on a busy machine, which the kernels win back from
about a million canonical positions on (4x4 k=4: 1,217,977), not below (3x4 k=3: 28,275)."""

COMPILED_FROM_CELLS_K3 = 20
"""Games of k <= 3 end within a few moves, so a board holds fewer positions than a k=4 game
on it (4x4 k=3: 756,387, below the crossover): the kernels are chosen from this many cells."""


def uses_kernels(rules: Rules) -> bool:
    """Whether :func:`key_arrays` chooses the compiled kernels for a game."""
    return rules.cells >= (COMPILED_FROM_CELLS if rules.k >= 4 else COMPILED_FROM_CELLS_K3)


def key_arrays(rules: Rules, compiled: bool | None = None) -> KeyArrays:
    """The key operations for a game: compiled where :func:`uses_kernels` says (or as
    ``compiled`` says)."""
    if compiled is None:
        compiled = uses_kernels(rules)
    return CompiledKeyArrays(rules) if compiled else KeyArrays(rules)


class KeyArrays:
    """Vectorised key operations for one game's rules."""

    chunk: int = 1 << 21
    """Children made and canonicalised at once: bounds the working memory (about 100 MB)."""

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

    def won_by_last_mover(self, keys: NDArray[np.uint64], ply: int) -> NDArray[np.bool_]:
        """Whether the player who made the last move (X on odd plies) has a line, key by key."""
        if ply == 0:  # nobody has moved
            return np.zeros(len(keys), dtype=bool)
        return self.has_line(self.stones(keys, x=ply % 2 == 1))

    def canonical_children(self, parents: NDArray[np.uint64], ply: int) -> NDArray[np.uint64]:
        """The canonical keys of every child of the ``ply`` positions ``parents``, in parent
        order (``cells - ply`` children each)."""
        children, _ = self.children(np.asarray(parents), x_to_move=ply % 2 == 0)
        return self.canonical(children.ravel())

    def sorted_unique(self, keys: NDArray[np.uint64]) -> NDArray[np.uint64]:
        """The distinct values of ``keys``, sorted (``keys`` itself may be reordered)."""
        return sorted_unique(keys)

    def back_up(self, parents: Keys, ply: int, next_keys: Keys, next_scores: Scores) -> BackUp:
        """Each ``ply`` parent's best move score from its children's scores in the sorted next
        ply (:data:`NO_MOVE` if no child is there), its best-move mask, and whether every
        child was found."""
        children, cells = self.children(np.asarray(parents), x_to_move=ply % 2 == 0)
        child_keys = self.canonical(children.ravel())
        if len(next_keys):
            where = np.minimum(np.searchsorted(next_keys, child_keys), len(next_keys) - 1)
            found = next_keys[where] == child_keys
            child_scores = np.asarray(next_scores).take(where)
        else:  # no child is stored at all
            found = np.zeros(len(child_keys), dtype=bool)
            child_scores = np.zeros(len(child_keys), dtype=np.int16)
        move_scores = move_score(child_scores.reshape(children.shape))
        if found.all():  # the usual case, and a flat test is far cheaper than one per row
            complete = np.ones(len(parents), dtype=bool)
        else:
            found = found.reshape(children.shape)
            complete = np.asarray(found.all(axis=1), dtype=bool)
            move_scores = np.where(found, move_scores, np.int16(NO_MOVE))
        top = move_scores.max(axis=1, initial=NO_MOVE)
        bits = np.left_shift(np.uint64(1), cells.astype(np.uint64))
        # A move found reaching the top score (none when no child was found at all).
        best_move = (move_scores == top[:, None]) & (move_scores > NO_MOVE)
        best = np.bitwise_or.reduce(np.where(best_move, bits, np.uint64(0)), axis=1)
        return (
            top.astype(np.int16, copy=False),
            best.astype(np.uint64, copy=False),
            complete,
        )

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


class CompiledKeyArrays(KeyArrays):
    """The same operations by the compiled kernels of :mod:`solver.exhaustive.kernels`, on every
    core.
    Making one imports Numba and loads the kernels (most of a second the first time in a
    process)."""

    chunk = 1 << 23
    """Children made and canonicalised at once: about 70 MB of keys, plus the sorted distinct
    ones (a kernel makes no temporary arrays per child)."""

    def __init__(self, rules: Rules) -> None:
        super().__init__(rules)
        import numba

        from ttt_solve.solver.exhaustive import kernels

        self._kernels = kernels
        self.tables = np.ascontiguousarray(self._tables)
        # moves[b, s]: the image under symmetry s of key bit b alone (a stone played).
        self.moves = np.array(rules.bit_images, dtype=np.uint64)
        self.lines = np.array(rules.lines, dtype=np.uint64)
        # Slices sorted at once by sorted_unique: one per core.
        self.sort_slices = numba.get_num_threads()
        self._index: tuple[tuple[int, int], NDArray[np.uint64], NDArray[np.int64], int] | None = (
            None
        )

    def canonical(self, keys: NDArray[np.uint64]) -> NDArray[np.uint64]:
        canonical: NDArray[np.uint64] = self._kernels.canonical_keys(_flat(keys), self.tables)
        return canonical

    def orbit_sizes(self, keys: NDArray[np.uint64]) -> NDArray[np.uint8]:
        sizes: NDArray[np.uint8] = self._kernels.orbit_sizes(_flat(keys), self.tables)
        return sizes

    def won_by_last_mover(self, keys: NDArray[np.uint64], ply: int) -> NDArray[np.bool_]:
        if ply == 0:  # nobody has moved
            return np.zeros(len(keys), dtype=bool)
        won: NDArray[np.bool_] = self._kernels.won_keys(
            _flat(keys), self._shift(ply - 1), self.lines
        )
        return won

    def canonical_children(self, parents: NDArray[np.uint64], ply: int) -> NDArray[np.uint64]:
        children: NDArray[np.uint64] = self._kernels.canonical_children(
            _flat(parents), self.cells, self.cells - ply, self._shift(ply), self.tables, self.moves
        )
        return children

    def sorted_unique(self, keys: NDArray[np.uint64]) -> NDArray[np.uint64]:
        distinct: NDArray[np.uint64] = self._kernels.sorted_unique_parallel(
            _flat(keys), self.sort_slices
        )
        return distinct

    def back_up(self, parents: Keys, ply: int, next_keys: Keys, next_scores: Scores) -> BackUp:
        next_keys, starts, shift = self._indexed(_flat(next_keys))
        backed_up: BackUp = self._kernels.back_up(
            _flat(parents),
            self.tables,
            self.moves,
            self.cells,
            self._shift(ply),
            next_keys,
            starts,
            shift,
            np.ascontiguousarray(next_scores, dtype=np.int16),
        )
        return backed_up

    def _indexed(
        self, keys: NDArray[np.uint64]
    ) -> tuple[NDArray[np.uint64], NDArray[np.int64], int]:
        """A ply's sorted keys with their bucket index (:func:`kernels.bucket_starts`), made
        once for the many chunks of parents backed up from the same ply. The index is kept
        with the keys it was made from, so their memory is not reused while it is kept."""
        where = (keys.__array_interface__["data"][0], len(keys))
        if self._index is None or self._index[0] != where:
            starts, shift = self._kernels.bucket_starts(keys, 2 * self.cells)
            self._index = (where, keys, starts, shift)
        _, kept, starts, shift = self._index
        return kept, starts, shift

    def _shift(self, ply: int) -> int:
        """Where the stones of the player to move at ``ply`` sit in a key: X at bit 0 (even
        plies), O at bit ``cells``."""
        return 0 if ply % 2 == 0 else self.cells


def _flat(keys: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """Keys as the kernels take them: one contiguous ``uint64`` array (a memory map or a
    slice is copied only if it is not one already)."""
    return np.ascontiguousarray(keys, dtype=np.uint64)
