"""Opening books of boards too big to enumerate: every canonical position up to a ply, proved.

:class:`OpeningBookBuilder` lists the canonical positions of plies ``0 .. depth`` with the
exhaustive solver's enumeration (:func:`solver.exhaustive.plies.enumerate_plies`), then solves them
with
one shared :class:`~ttt_solve.solver.prover.search.Prover`, from the deepest ply back:

* at ply ``depth`` the prover gives each position's exact score; a move is best when its
  child's score is the one that yields that score, which one null-window probe of the child
  decides (its exact score is not needed);
* at shallower plies every child is in the next ply's table, so scores and best moves are
  backed up from it by the exhaustive solver's :func:`solver.exhaustive.plies.back_up_ply`.

The output is the exhaustive solver's: :class:`~solver.plytable.PlyTable` values with the
same fields, dtypes and meaning, yielded from the deepest ply back to ply 0.

Boards of more than 31 cells have keys past 64 bits, which the array machinery of
:mod:`solver.exhaustive.keyarrays` cannot hold. Their books are listed and backed up one position
at a
time in plain Python (:func:`wide_plies`, :func:`back_up_position`), with keys as Python
integers in ``object`` arrays; such a book is a few plies of a big board, so its positions
are few and the prover's time is all that counts. Best moves stay ``uint64`` masks, which
hold boards of up to :data:`MASK_CELLS_LIMIT` cells.

Nearly all the time goes into the deepest ply, so that ply is cut into chunks of
:data:`ROWS_PER_CHUNK` rows (:data:`WIDE_ROWS_PER_CHUNK` past 31 cells). With ``jobs > 1``
the chunks are shared out to worker processes, each with its own prover (the values proved
do not depend on who proves them, so the book is the same). A lone position left to prove
(a book of depth 0: the empty board; or the last row of a resumed build) that this process
has not proved within
:data:`RACE_AFTER_SECONDS` is raced instead: two workers prove it by the two exact searches
of the prover (:data:`~ttt_solve.solver.prover.search.EXACT_SEARCHES`), and the first answer is
kept. With a work directory each
finished chunk is kept on disk (:mod:`solver.exhaustive.plystore`), so an interrupted build resumes
from the chunks it has.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ttt_solve.processes import results_as_done, submit_all, worker_pool
from ttt_solve.solver import SOLVER_VERSION
from ttt_solve.solver.errors import InvalidRulesError, SearchTimeout
from ttt_solve.solver.exhaustive.keyarrays import KeyArrays
from ttt_solve.solver.exhaustive.plies import NO_MOVE, back_up_ply, enumerate_plies, ply_name
from ttt_solve.solver.exhaustive.plystore import PlyStore
from ttt_solve.solver.plytable import PlyTable, Progress
from ttt_solve.solver.position import Position, iter_cells
from ttt_solve.solver.prover.search import EXACT_SEARCHES, Prover, Prunings, default_engine
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import WIN_SCORE, best_child_score, move_score

MASK_CELLS_LIMIT = 64
"""The largest board of an opening book: a best-move mask is a ``uint64``."""

ROWS_PER_CHUNK = 64
"""Deepest-ply rows proved between two saves to the work directory (1 to 5 s on (5,5,4))."""

WIDE_ROWS_PER_CHUNK = 1
"""The same for boards of more than 31 cells, whose positions take seconds to minutes each
((9,4,4) at ply 2: 0.7 s to minutes): a row a chunk, so an interrupted build loses one
position's proof at most, and worker processes share the work out evenly."""


def rows_per_chunk(rules: Rules) -> int:
    """Deepest-ply rows proved (or checked) as one chunk on this board."""
    return ROWS_PER_CHUNK if rules.fits_key else WIDE_ROWS_PER_CHUNK


def pool_pays(jobs: int, chunks: int) -> bool:
    """Whether worker processes are worth it: a few chunks are not worth a pool, whose start
    and the search the workers' tables cannot share (a small book's rows are shallow, and
    share most of it) cost more."""
    return jobs > 1 and chunks >= 4 * jobs


RACE_AFTER_SECONDS = 5.0
"""How long a lone position left to prove is proved in the builder's own process before two
worker processes race the prover's two exact searches on it: most such positions are proved
sooner, and starting the workers costs more than a second."""

BOOK_TABLE_BITS = {"compiled": 24, "python": 22}
"""Table size of a book's own prover: a book runs many searches through one table, and a
bigger one saves a third of the nodes of (5,5,4) to ply 4 (229 M and 141 s instead of 329 M
and 196 s with the default); 1.25 GiB for the compiled engine, whose slots are small (40
bytes with relevance zones), the default for the Python one."""

BOOK_PRUNINGS = Prunings.every()
"""The prunings of a book's prover: every one (docs/prover.md measures each); the values are
those of the classic search, in fewer nodes ((9,4,4) exactly from the empty board: 8.4 M
nodes instead of 15.3 M)."""


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
        if rules.cells > MASK_CELLS_LIMIT:
            raise InvalidRulesError(
                f"{rules.name}: {rules.cells} cells do not fit a 64-bit best-move mask "
                f"(opening books hold boards of at most {MASK_CELLS_LIMIT} cells)"
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
        self.prover = prover or book_prover(rules)
        self.arrays = KeyArrays(rules) if rules.fits_key else None
        """Array operations on keys; ``None`` for a board whose keys pass 64 bits."""
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

    def enumerate_plies(self) -> list[tuple[NDArray[Any], NDArray[np.bool_]]]:
        """``(keys, won)`` of every ply ``0 .. depth`` that has positions: the canonical keys
        (sorted; ``uint64``, or Python ints past 31 cells) and whether the last mover has won
        there."""
        if self.arrays is None:
            return wide_plies(self.rules, self.depth)
        plies = PlyStore()  # in memory: only the deepest ply's proofs are worth keeping
        count = enumerate_plies(self.arrays, plies, self.depth)
        return [
            (plies.load(ply_name("keys", ply)), plies.load(ply_name("won", ply)))
            for ply in range(count)
        ]

    def solve(self) -> Iterator[PlyTable]:
        """Yields every ply of the book, solved, from the deepest back to the empty board."""
        plies = self.enumerate_plies()
        total = sum(len(keys) for keys, _ in plies)
        done = 0
        self.progress(done, total)
        next_keys: NDArray[Any] | None = None
        next_scores: NDArray[np.int16] | None = None
        for ply in reversed(range(len(plies))):
            keys, won = plies[ply]
            if next_keys is None or next_scores is None:  # the deepest ply
                scores, best = self._prove_ply(keys, won, lambda row: self.progress(row, total))
            elif self.arrays is None:
                scores, best = back_up_wide_ply(self.rules, keys, won, next_keys, next_scores)
            else:
                scores, best = back_up_ply(self.arrays, ply, keys, won, next_keys, next_scores)
            done += len(keys)
            self.progress(done, total)
            images = (
                wide_orbit_sizes(self.rules, keys)
                if self.arrays is None
                else self.arrays.orbit_sizes(keys)
            )
            yield PlyTable(ply, keys, scores, best, images)
            next_keys, next_scores = keys, scores

    def _prove_ply(
        self, keys: NDArray[np.uint64], won: NDArray[np.bool_], solved: Callable[[int], None]
    ) -> tuple[NDArray[np.int16], NDArray[np.uint64]]:
        """Scores and best moves of the deepest ply, from the prover; ``solved(rows)`` is
        called as rows are done (this is where the time goes)."""
        store = self.store
        scores = np.zeros(len(keys), dtype=np.int16)
        best = np.zeros(len(keys), dtype=np.uint64)
        pending = []
        done = 0
        chunk = rows_per_chunk(self.rules)
        for start in range(0, len(keys), chunk):
            stop = min(start + chunk, len(keys))
            name = _chunk_name(start, stop)
            if store.has(name + "-scores") and store.has(name + "-best"):
                scores[start:stop] = store.load(name + "-scores")
                best[start:stop] = store.load(name + "-best")
                done += stop - start
            else:
                pending.append((start, stop))
        solved(done)

        def keep(
            start: int, stop: int, chunk_scores: NDArray[np.int16], chunk_best: NDArray[np.uint64]
        ) -> None:
            nonlocal done
            scores[start:stop] = store.save(_chunk_name(start, stop) + "-scores", chunk_scores)
            best[start:stop] = store.save(_chunk_name(start, stop) + "-best", chunk_best)
            done += stop - start
            solved(done)

        one_row_left = len(pending) == 1 and pending[0][1] - pending[0][0] == 1
        if self.jobs > 1 and one_row_left:
            keep(*self._prove_lone_row(keys, won, *pending[0]))
        elif pool_pays(self.jobs, len(pending)):
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
        keys: NDArray[np.uint64],
        won: NDArray[np.bool_],
        pending: list[tuple[int, int]],
        keep: Callable[[int, int, NDArray[np.int16], NDArray[np.uint64]], None],
    ) -> None:
        """Prove the ``pending`` chunks in ``self.jobs`` worker processes; ``keep`` each one
        as it comes back (in any order)."""
        tasks = [
            (start, stop, keys[start:stop], won[start:stop], "bisection") for start, stop in pending
        ]
        # Neighbouring rows share much of their search, which only one table can reuse: a
        # worker takes runs of neighbouring chunks (yet small enough to balance the load). A
        # run comes back whole, so where a chunk is one row, which can take minutes, a run is
        # one chunk: each proof is kept as soon as it is done.
        run = (
            1 if rows_per_chunk(self.rules) == 1 else max(1, min(8, len(tasks) // (4 * self.jobs)))
        )
        self.processes = min(self.jobs, len(tasks))
        with _worker_pool(self.rules, self.processes) as (pool, held):
            runs = [tasks[first : first + run] for first in range(0, len(tasks), run)]
            for proved in results_as_done(submit_all(pool, _prove_tasks, runs), held=held):
                for start, stop, chunk_scores, chunk_best, nodes in proved:
                    self.worker_nodes += nodes
                    keep(start, stop, chunk_scores, chunk_best)

    def _prove_lone_row(
        self, keys: NDArray[np.uint64], won: NDArray[np.bool_], start: int, stop: int
    ) -> tuple[int, int, NDArray[np.int16], NDArray[np.uint64]]:
        """Prove the one row left of the deepest ply (a book of depth 0: the empty board): in
        this process if that takes at most :data:`RACE_AFTER_SECONDS`, else by the race of
        :meth:`_race`."""
        try:
            scores, best = prove_rows(
                self.prover,
                keys[start:stop],
                won[start:stop],
                deadline=time.perf_counter() + RACE_AFTER_SECONDS,
            )
        except SearchTimeout:
            return self._race(keys, won, start, stop)
        return start, stop, scores, best

    def _race(
        self, keys: NDArray[np.uint64], won: NDArray[np.bool_], start: int, stop: int
    ) -> tuple[int, int, NDArray[np.int16], NDArray[np.uint64]]:
        """Prove a ply of one row by each exact search at once, in two worker processes, and
        keep the first answer (the other process is stopped): which of the two is faster
        depends on the position (solver.prover.search's ``EXACT_SEARCHES``), and a lone row leaves
        the other processes idle anyway."""
        tasks = [
            (start, stop, keys[start:stop], won[start:stop], exact_search)
            for exact_search in EXACT_SEARCHES
        ]
        self.processes = len(tasks)
        with _worker_pool(self.rules, self.processes) as (pool, held):
            batches = [[task] for task in tasks]
            ((start, stop, scores, best, nodes),) = next(
                results_as_done(submit_all(pool, _prove_tasks, batches), held=held)
            )
        self.worker_nodes += nodes
        return start, stop, scores, best


def _chunk_name(start: int, stop: int) -> str:
    return f"deepest-rows-{start}-{stop}"


# -- boards of more than 31 cells: one position at a time, keys as Python ints ---------------


def won_by_last_mover(position: Position) -> bool:
    """Whether the player who made the last move has a line."""
    if position.ply == 0:  # nobody has moved
        return False
    return position.rules.has_line(position.o if position.x_to_move else position.x)


def wide_plies(rules: Rules, depth: int) -> list[tuple[NDArray[Any], NDArray[np.bool_]]]:
    """``(keys, won)`` of every ply ``0 .. depth`` that has positions, as
    :meth:`OpeningBookBuilder.enumerate_plies` gives them, keys as Python ints (``object``
    arrays): the children of every position not won, canonical, sorted, distinct."""
    plies = []
    keys = [Position.start(rules).canonical_key]
    for _ply in range(depth + 1):
        positions = [Position.from_key(rules, key) for key in keys]
        won = [won_by_last_mover(position) for position in positions]
        plies.append((np.array(keys, dtype=object), np.array(won, dtype=bool)))
        children = {
            position.play(cell).canonical_key
            for position, is_won in zip(positions, won)
            if not is_won
            for cell in iter_cells(position.empty)
        }
        if not children:
            break
        keys = sorted(children)
    return plies


def wide_orbit_sizes(rules: Rules, keys: NDArray[Any]) -> NDArray[np.uint8]:
    """How many distinct positions each key's symmetry class holds (``uint8``)."""
    return np.array(
        [len(set(Position.from_key(rules, key).image_keys())) for key in keys.tolist()],
        dtype=np.uint8,
    )


def back_up_position(position: Position, child_scores: Mapping[int, int]) -> tuple[int, int, bool]:
    """``(score, best-move mask, complete)`` of an open position from the scores of its
    children by canonical key: a position's score is the best of its move scores (see
    :mod:`solver.value`), its best moves the cells that reach it. ``complete``: every child
    was in ``child_scores`` (else the two are over the children found; ``NO_MOVE`` if none)."""
    top, best, complete = NO_MOVE, 0, True
    for cell in iter_cells(position.empty):
        child = child_scores.get(position.play(cell).canonical_key)
        if child is None:
            complete = False
            continue
        score = move_score(child)
        if score > top:
            top, best = score, 1 << cell
        elif score == top:
            best |= 1 << cell
    return top, best, complete


def back_up_wide_ply(
    rules: Rules,
    keys: NDArray[Any],
    won: NDArray[np.bool_],
    next_keys: NDArray[Any],
    next_scores: NDArray[np.int16],
) -> tuple[NDArray[np.int16], NDArray[np.uint64]]:
    """Scores and best-move masks of a whole ply of Python-int keys, as
    :func:`solver.exhaustive.plies.back_up_ply` gives them, from the solved next ply."""
    child_scores = dict(zip(next_keys.tolist(), next_scores.tolist()))
    scores = np.zeros(len(keys), dtype=np.int16)
    best = np.zeros(len(keys), dtype=np.uint64)
    for row, (key, is_won) in enumerate(zip(keys.tolist(), won.tolist())):
        position = Position.from_key(rules, key)
        if is_won:
            scores[row] = -WIN_SCORE
        elif position.empty:  # a full board is a draw: score 0, no best move
            score, mask, complete = back_up_position(position, child_scores)
            if not complete:
                raise AssertionError(f"ply {position.ply}: a child is missing from the next ply")
            scores[row], best[row] = score, mask
    return scores, best


def prove_rows(
    prover: Prover,
    keys: NDArray[np.uint64],
    won: NDArray[np.bool_],
    on_row: Callable[[int], None] | None = None,
    exact_search: str = "bisection",
    deadline: float | None = None,
) -> tuple[NDArray[np.int16], NDArray[np.uint64]]:
    """Exact scores (``int16``) and best-move masks (``uint64``, canonical orientation) of
    positions given by canonical keys and whether their last mover has won; ``on_row(i)`` is
    called before row ``i``; ``exact_search`` and ``deadline``: as :meth:`Prover.solve` takes
    them (past the deadline :class:`SearchTimeout` is raised)."""
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
        score = prover.solve(position, deadline, exact_search=exact_search).score
        mask = 0
        for cell in iter_cells(position.empty):
            if is_best_move(prover, position, cell, score, deadline):
                mask |= 1 << cell
        scores[row] = score
        best[row] = mask
    return scores, best


def is_best_move(
    prover: Prover, position: Position, cell: int, score: int, deadline: float | None = None
) -> bool:
    """Whether the move to ``cell`` keeps ``score``, the exact score of ``position``: one
    null-window probe of the child (a move is never worth more than its position)."""
    target = best_child_score(score)
    return prover.bound(position.play(cell), target, target + 1, deadline) <= target


def check_row(prover: Prover, position: Position, score: int, best: int) -> str | None:
    """What is wrong with an open position's ``score`` and best-move mask ``best``, by the
    prover (``None``: nothing).

    Not :func:`prove_rows`'s path (the score first, then a probe of each child at it): one
    probe of each child with a window around the score the child must have for its move to be
    worth ``score`` tells whether the move is worth more, exactly that, or less. ``score`` is
    right when no move is worth more and some move is worth exactly that, ``best`` when it
    holds exactly those moves. Far cheaper than each child's exact score."""
    target = best_child_score(score)
    reaching = 0
    for cell in iter_cells(position.empty):
        child = _probe_around(prover, position.play(cell), target)
        if child < target:  # the move is worth more than the score
            return "score differs from the prover's"
        if child == target:
            reaching |= 1 << cell
    if not reaching:
        return "score differs from the prover's"
    if best != reaching:
        return "best moves differ from the prover's"
    return None


def _probe_around(prover: Prover, position: Position, target: int) -> int:
    """``target`` if the position's score is exactly that, else a bound on the side of it
    where the score lies."""
    if target:
        return prover.bound(position, target - 1, target + 1)
    # Around a draw, two null windows, as Prover.solve does: a window holding 0 closes no
    # node by a pairing (a pairing shows a bound on one side of 0 only).
    above = prover.bound(position, 0, 1)
    if above >= 1:
        return above
    below = prover.bound(position, -1, 0)
    return below if below <= -1 else 0


def check_rows(
    rules: Rules,
    rows: list[tuple[int, int, int]],
    jobs: int = 1,
    progress: Progress | None = None,
) -> Iterator[str | None]:
    """:func:`check_row` of each ``(canonical key, score, best-move mask)`` of open positions,
    in order, by a fresh prover (a book's own size), or by ``jobs`` worker processes, each
    with its own; ``progress(done, total)`` as rows are checked."""
    report = progress or (lambda done, total: None)
    report(0, len(rows))
    chunk = rows_per_chunk(rules)
    if not pool_pays(jobs, len(rows) // chunk):
        prover = book_prover(rules)
        for done, (key, score, best) in enumerate(rows, 1):
            message = check_row(prover, Position.from_key(rules, key), score, best)
            report(done, len(rows))
            yield message
        return
    with _worker_pool(rules, min(jobs, len(rows))) as (pool, held):
        chunks = [rows[first : first + chunk] for first in range(0, len(rows), chunk)]
        done = 0
        futures = submit_all(pool, _check_tasks, chunks)
        for messages in results_as_done(futures, ordered=True, held=held):
            for message in messages:
                done += 1
                report(done, len(rows))
                yield message


def _worker_pool(
    rules: Rules, processes: int
) -> contextlib.AbstractContextManager[tuple[ProcessPoolExecutor, list[int]]]:
    """A pool of ``processes`` workers, each with a prover of ``rules``, for the ``with``
    block, and the list of the signals that came meanwhile (held back, then raised:
    :func:`~ttt_solve.processes.worker_pool`); leaving it, done, on an error, on Ctrl-C or on
    SIGTERM, ends them at once (a worker may be minutes into a proof). The workers start as
    work is handed out (:func:`~ttt_solve.processes.submit_all`)."""
    return worker_pool(processes, _start_prover, (rules,))


def book_prover(rules: Rules) -> Prover:
    """An exact prover with a book's table size and prunings (:data:`BOOK_TABLE_BITS`,
    :data:`BOOK_PRUNINGS`)."""
    return Prover(rules, table_bits=BOOK_TABLE_BITS[default_engine(rules)], prunings=BOOK_PRUNINGS)


_worker_prover: Prover | None = None
"""The prover of a worker process (see :func:`_worker_pool`)."""


def _start_prover(rules: Rules) -> None:
    global _worker_prover
    _worker_prover = book_prover(rules)


def _worker() -> Prover:
    if _worker_prover is None:
        raise RuntimeError("a worker's task ran outside a worker process")
    return _worker_prover


def _prove_tasks(
    tasks: list[tuple[int, int, NDArray[np.uint64], NDArray[np.bool_], str]],
) -> list[tuple[int, int, NDArray[np.int16], NDArray[np.uint64], int]]:
    """Each task's ``(start, stop, scores, best moves, nodes searched)``."""
    prover = _worker()
    proved = []
    for start, stop, keys, won, exact_search in tasks:
        before = prover.nodes
        scores, best = prove_rows(prover, keys, won, exact_search=exact_search)
        proved.append((start, stop, scores, best, prover.nodes - before))
    return proved


def _check_tasks(rows: list[tuple[int, int, int]]) -> list[str | None]:
    prover = _worker()
    return [
        check_row(prover, Position.from_key(prover.rules, key), score, best)
        for key, score, best in rows
    ]
