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

Nearly all the time goes into the deepest ply, so that ply is cut into chunks of
:data:`ROWS_PER_CHUNK` rows. With ``jobs > 1`` the chunks are shared out to worker processes,
each with its own prover (the values proved do not depend on who proves them, so the book is
the same). With a work directory each finished chunk is kept on disk
(:mod:`solver.plystore`), so an interrupted build resumes from the chunks it has.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Iterator

import numpy as np

from ttt_solve.solver import SOLVER_VERSION
from ttt_solve.solver.errors import InvalidRulesError
from ttt_solve.solver.keyarrays import KeyArrays, sorted_unique
from ttt_solve.solver.plystore import PlyStore
from ttt_solve.solver.plytable import PlyTable, Progress
from ttt_solve.solver.position import Position, iter_cells
from ttt_solve.solver.rules import KEY_CELLS_LIMIT, Rules
from ttt_solve.solver.search import Prover, default_engine
from ttt_solve.solver.value import WIN_SCORE

ROWS_PER_CHUNK = 64
"""Deepest-ply rows proved between two saves to the work directory (1 to 5 s on (5,5,4))."""

BOOK_TABLE_BITS = {"compiled": 24, "python": 22}
"""Table size of a book's own prover: a book runs many searches through one table, and a
bigger one saves a third of the nodes of (5,5,4) to ply 4 (229 M and 141 s instead of 329 M
and 196 s with the default); 512 MiB for the compiled engine, whose slots are small, the
default for the Python one."""


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

    def __init__(
        self,
        rules: Rules,
        depth: int,
        progress: Progress | None = None,
        prover: Prover | None = None,
        workdir: str | None = None,
        jobs: int = 1,
    ) -> None:
        """``progress(done, total)`` is called as positions are solved (``total``: all the
        book's positions); ``prover``: an exact prover to share (one is made otherwise);
        ``workdir``: keep the deepest ply's proved rows there, so that an interrupted build
        resumes (``None``: nothing is kept); ``jobs``: processes proving the deepest ply
        (1: this one, with ``prover``; more: worker processes, each with a prover of its
        own)."""
        if not rules.fits_key:
            raise InvalidRulesError(
                f"{rules.name}: {rules.cells} cells do not fit a 64-bit book key "
                f"(books hold boards of at most {KEY_CELLS_LIMIT} cells)"
            )
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
            raise ValueError(f"opening book depth must be a whole number >= 0, got {depth!r}")
        if prover is not None and (prover.weak or prover.rules != rules):
            raise ValueError("the opening book needs an exact prover of the same rules")
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ValueError(f"jobs must be a whole number >= 1, got {jobs!r}")
        self.rules = rules
        self.depth = min(depth, rules.cells)
        self.jobs = jobs
        self.worker_nodes = 0
        self.processes = 1
        """Processes that proved the deepest ply: 1, or the workers of a pool."""
        self.progress = progress or (lambda done, total: None)
        self.prover = prover or Prover(rules, table_bits=BOOK_TABLE_BITS[default_engine(rules)])
        self.arrays = KeyArrays(rules)
        self.store = PlyStore(
            workdir,
            identity={
                "rules": [rules.rows, rules.cols, rules.k],
                "solver": SOLVER_VERSION,
                "opening_book_depth": self.depth,
            },
        )

    @property
    def nodes(self) -> int:
        """Nodes searched so far, by this process's prover and by the workers'."""
        return self.prover.nodes + self.worker_nodes

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

    def _prove_ply(
        self, keys: np.ndarray, won: np.ndarray, solved: Callable[[int], None]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Scores and best moves of the deepest ply, from the prover; ``solved(rows)`` is
        called as rows are done (this is where the time goes)."""
        store = self.store
        scores = np.zeros(len(keys), dtype=np.int16)
        best = np.zeros(len(keys), dtype=np.uint64)
        pending = []
        done = 0
        for start in range(0, len(keys), ROWS_PER_CHUNK):
            stop = min(start + ROWS_PER_CHUNK, len(keys))
            name = _chunk_name(start, stop)
            if store.has(name + "-scores") and store.has(name + "-best"):
                scores[start:stop] = store.load(name + "-scores")
                best[start:stop] = store.load(name + "-best")
                done += stop - start
            else:
                pending.append((start, stop))
        solved(done)

        def keep(start: int, stop: int, chunk_scores: np.ndarray, chunk_best: np.ndarray) -> None:
            nonlocal done
            scores[start:stop] = store.save(_chunk_name(start, stop) + "-scores", chunk_scores)
            best[start:stop] = store.save(_chunk_name(start, stop) + "-best", chunk_best)
            done += stop - start
            solved(done)

        # A few chunks are not worth a pool: its start and the search the workers' tables
        # cannot share (a small book's rows are shallow, and share most of it) cost more.
        if self.jobs > 1 and len(pending) >= 4 * self.jobs:
            self._prove_in_workers(keys, won, pending, keep)
        else:
            for start, stop in pending:
                keep(
                    start,
                    stop,
                    *prove_rows(
                        self.prover,
                        keys[start:stop],
                        won[start:stop],
                        lambda row: solved(done + row),
                    ),
                )
        return scores, best

    def _prove_in_workers(
        self,
        keys: np.ndarray,
        won: np.ndarray,
        pending: list[tuple[int, int]],
        keep: Callable[[int, int, np.ndarray, np.ndarray], None],
    ) -> None:
        """Prove the ``pending`` chunks in ``self.jobs`` worker processes; ``keep`` each one
        as it comes back (in any order)."""
        tasks = [(start, stop, keys[start:stop], won[start:stop]) for start, stop in pending]
        # Neighbouring rows share much of their search, which only one table can reuse: a
        # worker takes runs of neighbouring chunks (yet small enough to balance the load).
        run = max(1, min(8, len(tasks) // (4 * self.jobs)))
        self.processes = min(self.jobs, len(tasks))
        with multiprocessing.Pool(
            self.processes, initializer=_start_worker, initargs=(self.rules,)
        ) as pool:
            # leaving the block (done, an error, Ctrl-C) terminates the workers
            for start, stop, chunk_scores, chunk_best, nodes in pool.imap_unordered(
                _prove_task, tasks, chunksize=run
            ):
                self.worker_nodes += nodes
                keep(start, stop, chunk_scores, chunk_best)

    def _back_up_ply(
        self,
        ply: int,
        keys: np.ndarray,
        won: np.ndarray,
        next_keys: np.ndarray,
        next_scores: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
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
            np.where(move_scores == top[:, None], bits, np.uint64(0)), axis=1
        )
        scores[rows] = top
        return scores, best


def _chunk_name(start: int, stop: int) -> str:
    return f"deepest-rows-{start}-{stop}"


def prove_rows(
    prover: Prover, keys: np.ndarray, won: np.ndarray, on_row: Callable[[int], None] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Exact scores (``int16``) and best-move masks (``uint64``, canonical orientation) of
    positions given by canonical keys and whether their last mover has won; ``on_row(i)`` is
    called before row ``i``."""
    scores = np.zeros(len(keys), dtype=np.int16)
    best = np.zeros(len(keys), dtype=np.uint64)
    for row, (key, is_won) in enumerate(zip(keys.tolist(), won.tolist())):
        if on_row is not None and row:
            on_row(row)
        if is_won:
            scores[row] = -WIN_SCORE
            continue
        position = Position.from_key(prover.rules, key)
        if position.empty == 0:
            continue
        score = prover.solve(position).score
        target = best_child_score(score)
        mask = 0
        for cell in iter_cells(position.empty):
            if prover.bound(position.play(cell), target, target + 1) <= target:
                mask |= 1 << cell
        scores[row] = score
        best[row] = mask
    return scores, best


_worker_prover: Prover | None = None
"""The prover of a worker process (see :meth:`OpeningBookBuilder._prove_in_workers`)."""


def _start_worker(rules: Rules) -> None:
    global _worker_prover
    # Ctrl-C is for the parent, which stops the pool; a worker would only print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker_prover = Prover(rules, table_bits=BOOK_TABLE_BITS[default_engine(rules)])


def _prove_task(
    task: tuple[int, int, np.ndarray, np.ndarray],
) -> tuple[int, int, np.ndarray, np.ndarray, int]:
    start, stop, keys, won = task
    before = _worker_prover.nodes
    scores, best = prove_rows(_worker_prover, keys, won)
    return start, stop, scores, best, _worker_prover.nodes - before
