"""Opening books of boards too big to enumerate: every canonical position up to a ply, proved.

:class:`OpeningBookBuilder` lists the canonical positions of plies ``0 .. depth`` exactly as
the exhaustive solver does (array-at-a-time, :class:`~solver.keyarrays.KeyArrays`), then
solves them with one shared :class:`~solver.alphabeta.Prover`, from the deepest ply back:

* at ply ``depth`` the prover gives each position's exact score; a move is best when its
  child's score is the one that yields that score, which one null-window probe of the child
  decides (its exact score is not needed);
* at shallower plies every child is in the next ply's table, so scores and best moves are
  backed up from it as in :mod:`solver.exhaustive`.

The output is the exhaustive solver's: :class:`~solver.exhaustive.PlyTable` values with the
same fields, dtypes and meaning, yielded from the deepest ply back to ply 0.

Nearly all the time goes into the deepest ply. With a work directory its rows are kept on disk
in chunks of :data:`ROWS_PER_CHUNK` as they are proved (:mod:`solver.plystore`), so an
interrupted build resumes from the last finished chunk.
"""

from __future__ import annotations

from typing import Callable, Iterator

import numpy as np

from solver import SOLVER_VERSION
from solver.alphabeta import Prover, default_engine
from solver.errors import InvalidRulesError
from solver.exhaustive import PlyTable, Progress
from solver.keyarrays import KeyArrays, sorted_unique
from solver.plystore import PlyStore
from solver.position import Position, iter_cells
from solver.rules import KEY_CELLS_LIMIT, Rules
from solver.value import WIN_SCORE

ROWS_PER_CHUNK = 64
"""Deepest-ply rows proved between two saves to the work directory (1 to 5 s on (5,5,4))."""

BOOK_TABLE_BITS = {"compiled": 24, "python": 22}
"""Table size of a book's own prover: a book runs many searches through one table, and a
bigger one saved a third of the nodes of (5,5,4) to ply 4 (233 M instead of 340 M); 512 MiB
for the compiled engine, whose slots are small, the default for the Python one."""


def best_child_score(score: int) -> int:
    """The score a child must have for the move to it to be worth ``score`` to the mover.

    The inverse of :func:`solver.value.move_score` on real scores. Since no move is worth more
    than the position, a move is best exactly when its child's score is at most this.
    """
    if score > 0:
        return -score - 1
    if score < 0:
        return 1 - score
    return 0


class OpeningBookBuilder:
    """Solves every canonical position of plies ``0 .. depth`` of one game exactly."""

    def __init__(self, rules: Rules, depth: int, progress: Progress | None = None,
                 prover: Prover | None = None, workdir: str | None = None) -> None:
        """``progress(done, total)`` is called as positions are solved (``total``: all the
        book's positions); ``prover``: an exact prover to share (one is made otherwise);
        ``workdir``: keep the deepest ply's proved rows there, so that an interrupted build
        resumes (``None``: nothing is kept)."""
        if not rules.fits_key:
            raise InvalidRulesError(
                f"{rules.name}: {rules.cells} cells do not fit a 64-bit book key "
                f"(books hold boards of at most {KEY_CELLS_LIMIT} cells)")
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
            raise ValueError(f"opening book depth must be a whole number >= 0, got {depth!r}")
        if prover is not None and (prover.weak or prover.rules != rules):
            raise ValueError("the opening book needs an exact prover of the same rules")
        self.rules = rules
        self.depth = min(depth, rules.cells)
        self.progress = progress or (lambda done, total: None)
        self.prover = prover or Prover(rules, table_bits=BOOK_TABLE_BITS[default_engine(rules)])
        self.arrays = KeyArrays(rules)
        self.store = PlyStore(workdir, identity={
            "rules": [rules.rows, rules.cols, rules.k], "solver": SOLVER_VERSION,
            "opening_book_depth": self.depth})

    def enumerate_plies(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(keys, won)`` of every ply ``0 .. depth`` that has positions: the canonical keys
        (sorted) and whether the last mover has won there."""
        arrays = self.arrays
        plies = []
        keys = np.zeros(1, dtype=np.uint64)
        for ply in range(self.depth + 1):
            last_mover_is_x = ply % 2 == 1
            won = arrays.has_line(arrays.stones(keys, x=last_mover_is_x))
            plies.append((keys, won))
            parents = keys[~won]
            if ply == self.depth or ply == self.rules.cells or len(parents) == 0:
                break
            children, _ = arrays.children(parents, x_to_move=ply % 2 == 0)
            keys = sorted_unique(arrays.canonical(children.ravel()))
        return plies

    def solve(self) -> Iterator[PlyTable]:
        """Yields every ply of the book, solved, from the deepest back to the empty board."""
        plies = self.enumerate_plies()
        total = sum(len(keys) for keys, _ in plies)
        done = 0
        self.progress(done, total)
        next_keys = next_scores = None
        for ply in reversed(range(len(plies))):
            keys, won = plies[ply]
            if next_keys is None:
                scores, best = self._prove_ply(keys, won, lambda row: self.progress(row, total))
            else:
                scores, best = self._back_up_ply(ply, keys, won, next_keys, next_scores)
            done += len(keys)
            self.progress(done, total)
            yield PlyTable(ply, keys, scores, best, self.arrays.orbit_sizes(keys))
            next_keys, next_scores = keys, scores

    def _prove_ply(self, keys: np.ndarray, won: np.ndarray,
                   solved: Callable[[int], None]) -> tuple[np.ndarray, np.ndarray]:
        """Scores and best moves of the deepest ply, from the prover; ``solved(rows)`` is
        called as rows are done (this is where the time goes)."""
        store = self.store
        scores = np.zeros(len(keys), dtype=np.int16)
        best = np.zeros(len(keys), dtype=np.uint64)
        for start in range(0, len(keys), ROWS_PER_CHUNK):
            stop = min(start + ROWS_PER_CHUNK, len(keys))
            name = f"deepest-rows-{start}-{stop}"
            if store.has(name + "-scores") and store.has(name + "-best"):
                scores[start:stop] = store.load(name + "-scores")
                best[start:stop] = store.load(name + "-best")
            else:
                for row in range(start, stop):
                    if row:
                        solved(row)
                    scores[row], best[row] = self._prove(int(keys[row]), bool(won[row]))
                store.save(name + "-scores", scores[start:stop])
                store.save(name + "-best", best[start:stop])
            solved(stop)
        return scores, best

    def _prove(self, key: int, won: bool) -> tuple[int, int]:
        """The exact score of one position and its best-move mask (canonical orientation)."""
        if won:
            return -WIN_SCORE, 0
        position = Position.from_key(self.rules, key)
        if position.empty == 0:
            return 0, 0
        prover = self.prover
        score = prover.solve(position).score
        target = best_child_score(score)
        mask = 0
        for cell in iter_cells(position.empty):
            if prover.bound(position.play(cell), target, target + 1) <= target:
                mask |= 1 << cell
        return score, mask

    def _back_up_ply(self, ply: int, keys: np.ndarray, won: np.ndarray, next_keys: np.ndarray,
                     next_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Scores and best moves of a ply whose children are all in the next (solved) ply."""
        arrays = self.arrays
        scores = np.zeros(len(keys), dtype=np.int16)
        best = np.zeros(len(keys), dtype=np.uint64)
        scores[won] = -WIN_SCORE
        rows = np.flatnonzero(~won)
        if len(rows) == 0 or ply == self.rules.cells:
            return scores, best
        children, cells = arrays.children(keys[rows], x_to_move=ply % 2 == 0)
        child_keys = arrays.canonical(children.ravel())
        where = np.searchsorted(next_keys, child_keys)
        found = next_keys[np.minimum(where, len(next_keys) - 1)]
        if not np.array_equal(found, child_keys):
            raise AssertionError(f"ply {ply}: a child is missing from ply {ply + 1}")
        child_scores = next_scores[where].astype(np.int32).reshape(children.shape)
        move_scores = np.sign(child_scores) - child_scores
        top = move_scores.max(axis=1)
        bits = np.left_shift(np.uint64(1), cells.astype(np.uint64))
        best[rows] = np.bitwise_or.reduce(
            np.where(move_scores == top[:, None], bits, np.uint64(0)), axis=1)
        scores[rows] = top
        return scores, best
