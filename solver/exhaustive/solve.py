"""Exhaustive (strong) solve: value, remoteness and best moves of every reachable position.

Retrograde analysis level by level, each ply an array of canonical keys (see
:mod:`solver.exhaustive.plies`):

1. **Forward**: enumerate the plies, from the empty board to the full one.
2. **Backward**: from the last ply to the first, back every ply up from the solved next one.

Every array is cut into chunks of bounded size, so memory is the plies' keys plus one chunk.
With a work directory every finished ply is also kept on disk, and a rerun resumes.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver import SOLVER_VERSION
from ttt_solve.solver.exhaustive.keyarrays import key_arrays
from ttt_solve.solver.exhaustive.plies import back_up_ply, enumerate_plies, ply_name
from ttt_solve.solver.exhaustive.plystore import PlyStore
from ttt_solve.solver.plytable import PlyTable, Progress
from ttt_solve.solver.rules import Rules


class ExhaustiveSolver:
    """Solves every reachable position of one game; :meth:`solve` yields the plies."""

    def __init__(
        self,
        rules: Rules,
        progress: Progress | None = None,
        children_per_chunk: int | None = None,
        workdir: str | None = None,
        compiled: bool | None = None,
    ) -> None:
        """``workdir``: keep every finished ply in this directory, so that an interrupted
        solve resumes where it stopped (see :mod:`solver.exhaustive.plystore`); ``None`` keeps all
        in
        memory. ``compiled``: solve with the compiled kernels (``None``: as
        :func:`~solver.exhaustive.keyarrays.key_arrays` chooses for the game's size)."""
        self.rules = rules
        self.store = PlyStore(
            workdir, identity={"rules": [rules.rows, rules.cols, rules.k], "solver": SOLVER_VERSION}
        )
        self.arrays = key_arrays(rules, compiled)
        self.progress: Progress = progress or (lambda done, total: None)
        self.children_per_chunk = children_per_chunk
        self._steps_total = 2 * (rules.cells + 1)
        self._steps_done = 0

    def _step(self, _ply: int = 0) -> None:
        self._steps_done += 1
        self.progress(self._steps_done, self._steps_total)

    def enumerate_plies(self) -> int:
        """Forward pass: store the canonical keys of each ply and which are won; returns the
        number of plies. Plies already in the store (a resumed run) are not made again."""
        return enumerate_plies(
            self.arrays, self.store, self.rules.cells, self.children_per_chunk, self._step
        )

    def positions(self) -> int:
        """The game's canonical positions, counted over the plies of the forward pass (made
        first if not yet)."""
        plies = self.enumerate_plies()
        return sum(len(self.store.load(ply_name("keys", ply))) for ply in range(plies))

    def solve(self) -> Iterator[PlyTable]:
        """Yields every ply, solved, from the last ply back to the empty board."""
        arrays, store = self.arrays, self.store
        self._steps_done = 0
        plies = self.enumerate_plies()
        self._steps_total = plies * 2
        next_keys: NDArray[np.uint64] | None = None
        next_scores: NDArray[np.int16] | None = None
        for ply in reversed(range(plies)):
            keys = store.load(ply_name("keys", ply))
            names = [ply_name(column, ply) for column in ("scores", "best", "images")]
            if all(store.has(name) for name in names):
                scores, best, images = (store.load(name) for name in names)
            else:
                scores, best = back_up_ply(
                    arrays,
                    ply,
                    keys,
                    store.load(ply_name("won", ply)),
                    next_keys,
                    next_scores,
                    self.children_per_chunk,
                )
                images = arrays.orbit_sizes(np.asarray(keys))
                scores = store.save(names[0], scores)
                best = store.save(names[1], best)
                images = store.save(names[2], images)
            yield PlyTable(ply, keys, scores, best, images)
            self._step()
            next_keys, next_scores = keys, scores
