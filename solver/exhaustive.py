"""Exhaustive (strong) solve: value, remoteness and best moves of every reachable position.

Retrograde analysis level by level, each ply an array of canonical keys:

1. **Forward**: from the empty board, make the children of every non-terminal position of ply
   ``p`` at once, canonicalise them, sort and deduplicate: that is ply ``p + 1``.
2. **Backward**: from the last ply to the first, look every child up in the (sorted) next ply
   with ``searchsorted`` and take the best move score (see :mod:`solver.value`).

Every array is cut into chunks of bounded size, so memory is the plies' keys plus one chunk.
With a work directory every finished ply is also kept on disk, and a rerun resumes.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ttt_solve.solver import SOLVER_VERSION
from ttt_solve.solver.keyarrays import KeyArrays, sorted_unique
from ttt_solve.solver.plystore import PlyStore
from ttt_solve.solver.plytable import PlyTable, Progress
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import WIN_SCORE

CHILDREN_PER_CHUNK = 1 << 21
"""Children made and canonicalised at once: bounds the working memory (about 100 MB)."""


class ExhaustiveSolver:
    """Solves every reachable position of one game; :meth:`solve` yields the plies."""

    def __init__(
        self,
        rules: Rules,
        progress: Progress | None = None,
        children_per_chunk: int = CHILDREN_PER_CHUNK,
        workdir: str | None = None,
    ) -> None:
        """``workdir``: keep every finished ply in this directory, so that an interrupted
        solve resumes where it stopped (see :mod:`solver.plystore`); ``None`` keeps all in
        memory."""
        self.rules = rules
        self.store = PlyStore(
            workdir, identity={"rules": [rules.rows, rules.cols, rules.k], "solver": SOLVER_VERSION}
        )
        self.arrays = KeyArrays(rules)
        self.progress = progress or (lambda done, total: None)
        self.children_per_chunk = children_per_chunk
        self._steps_total = 2 * (rules.cells + 1)
        self._steps_done = 0

    def _step(self) -> None:
        self._steps_done += 1
        self.progress(self._steps_done, self._steps_total)

    def _won_by_last_mover(self, keys: np.ndarray, ply: int) -> np.ndarray:
        if ply < 2 * self.rules.k - 1:
            return np.zeros(len(keys), dtype=bool)
        last_mover_is_x = ply % 2 == 1
        return self.arrays.has_line(self.arrays.stones(keys, x=last_mover_is_x))

    def _chunks(self, count: int, empties: int) -> Iterator[slice]:
        step = max(1, self.children_per_chunk // max(1, empties))
        for start in range(0, count, step):
            yield slice(start, min(count, start + step))

    def enumerate_plies(self) -> int:
        """Forward pass: store the canonical keys of each ply and which are won; returns the
        number of plies. Plies already in the store (a resumed run) are not made again."""
        rules, arrays, store = self.rules, self.arrays, self.store
        keys = (
            store.load("keys-0")
            if store.has("keys-0")
            else store.save("keys-0", np.zeros(1, dtype=np.uint64))
        )
        for ply in range(rules.cells + 1):
            won = (
                store.load(f"won-{ply}")
                if store.has(f"won-{ply}")
                else store.save(f"won-{ply}", self._won_by_last_mover(keys, ply))
            )
            self._step()
            if ply == rules.cells:
                return ply + 1
            if store.has(f"keys-{ply + 1}"):
                keys = store.load(f"keys-{ply + 1}")
                continue
            parents = keys[~won]
            parts = []
            for part in self._chunks(len(parents), rules.cells - ply):
                children, _ = arrays.children(np.asarray(parents[part]), x_to_move=ply % 2 == 0)
                parts.append(sorted_unique(arrays.canonical(children.ravel())))
            if not parts:
                return ply + 1
            keys = store.save(f"keys-{ply + 1}", sorted_unique(np.concatenate(parts)))
            del parts
        raise AssertionError("unreachable")  # pragma: no cover

    def solve(self) -> Iterator[PlyTable]:
        """Yields every ply, solved, from the last ply back to the empty board."""
        arrays, store = self.arrays, self.store
        self._steps_done = 0
        plies = self.enumerate_plies()
        self._steps_total = plies * 2
        next_keys = next_scores = None
        for ply in reversed(range(plies)):
            keys = store.load(f"keys-{ply}")
            names = [f"{column}-{ply}" for column in ("scores", "best", "images")]
            if all(store.has(name) for name in names):
                scores, best, images = (store.load(name) for name in names)
            else:
                scores, best = self._solve_ply(
                    ply, keys, store.load(f"won-{ply}"), next_keys, next_scores
                )
                images = arrays.orbit_sizes(np.asarray(keys))
                scores, best, images = (
                    store.save(name, array) for name, array in zip(names, (scores, best, images))
                )
            yield PlyTable(ply, keys, scores, best, images)
            self._step()
            next_keys, next_scores = keys, scores

    def _solve_ply(
        self,
        ply: int,
        keys: np.ndarray,
        won: np.ndarray,
        next_keys: np.ndarray | None,
        next_scores: np.ndarray | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Scores and best-move masks of one ply, from the solved next ply."""
        rules, arrays = self.rules, self.arrays
        scores = np.zeros(len(keys), dtype=np.int16)
        best = np.zeros(len(keys), dtype=np.uint64)
        scores[won] = -WIN_SCORE
        open_rows = np.flatnonzero(~won) if ply < rules.cells else np.empty(0, np.intp)
        for part in self._chunks(len(open_rows), rules.cells - ply):
            rows = open_rows[part]
            children, cells = arrays.children(np.asarray(keys[rows]), x_to_move=ply % 2 == 0)
            child_keys = arrays.canonical(children.ravel())
            where = np.searchsorted(next_keys, child_keys)
            if not np.array_equal(next_keys[np.minimum(where, len(next_keys) - 1)], child_keys):
                raise AssertionError(f"ply {ply}: a child is missing from ply {ply + 1}")
            child_scores = next_scores[where].astype(np.int32).reshape(children.shape)
            move_scores = np.sign(child_scores) - child_scores
            top = move_scores.max(axis=1)
            is_best = move_scores == top[:, None]
            bits = np.left_shift(np.uint64(1), cells.astype(np.uint64))
            best[rows] = np.bitwise_or.reduce(np.where(is_best, bits, np.uint64(0)), axis=1)
            scores[rows] = top
        return scores, best
