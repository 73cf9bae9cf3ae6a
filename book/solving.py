"""Solving a game into a book: the method, the solver, the work folder, the write, recovery.

:class:`Solve` is what ``ttt-solve`` and ``ttt_solve.solve`` run: it chooses the method (an
exhaustive solve when its estimate fits this machine, else an opening book proved by
alpha-beta), solves, and writes the game in one transaction (:func:`~book.writer.write_game`).
Large solves keep their finished plies in a work folder beside the book, so a run that is
interrupted resumes where it stopped; the folder is removed once the game is stored.

It says what it is doing through ``note(text)`` (one line each: the method, the prover, a game
already stored), what a caller must hear even where it asked for quiet through ``warn(text)``
(a finished solve left unstored because another run stored the game meanwhile), and counts its
work through ``progress(done, total)`` and ``writing(done, total)``; the caller decides where
those go.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from ttt_solve.book.defaults import DEFAULT_BOOK_DEPTH
from ttt_solve.book.errors import BookError, ErrorKind, GameExistsError
from ttt_solve.book.reader import Book, open_book
from ttt_solve.book.records import GameInfo, SolveMethod
from ttt_solve.book.urls import sqlite_file, unwritable_reason
from ttt_solve.book.widekeys import BOOK_CELLS_LIMIT, fits_book
from ttt_solve.book.writer import holds_more, write_game
from ttt_solve.errors import TttError
from ttt_solve.solver.exhaustive.estimate import available_memory, exhaustive_estimate
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.rules import KEY_CELLS_LIMIT, Rules
from ttt_solve.solver.vocabulary import UnknownWordError

if TYPE_CHECKING:
    from ttt_solve.solver.exhaustive.distributed import DaskSolver
    from ttt_solve.solver.plytable import PlyTable
    from ttt_solve.solver.prover.opening import OpeningBookBuilder

    Solver = DaskSolver | ExhaustiveSolver | OpeningBookBuilder

WORKDIR_POSITIONS = 2_000_000
"""Solves estimated above this many canonical positions keep their plies on disk (resumable)."""

ENGINES = ("local", "dask")
ENGINE_NAMES = {"compiled": "compiled search (Numba)", "python": "pure-Python search"}

Counter = Callable[[int, int], None]


class SolveError(TttError, ValueError):
    """A solve that cannot run as asked: ``rules`` is the game, ``kind`` the problem (an
    :class:`~ttt_solve.book.errors.ErrorKind`: ``needs-opening-book``, too large for an
    exhaustive solve; ``depth-past-end``; ``unwritable``, ``database`` cannot be written; ...);
    the command line adds what to ask for instead."""

    def __init__(
        self,
        rules: Rules,
        reason: str,
        kind: ErrorKind = ErrorKind.SOLVE,
        database: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.rules = rules
        self.kind = kind
        self.database = database


def approx(n: float) -> str:
    """A rough count for people: ``765``, ``1.3 million``, ``2.0e+10``."""
    if n < 1e6:
        return f"{n:,.0f}"
    if n < 1e9:
        return f"{n / 1e6:.1f} million"
    return f"{n:.1e}"


TABLE_CELLS = (16, 25)
"""The boards a tablebase is made for by default, by cells: from 16 (4x4) a table is smaller
and faster to make than blocks (4x4 k=4: 1.5 MB against 20.3 MB; 4x5 k=4: 189 MB against
2.8 GB, docs/benchmarks.md); 25 is the most a table holds."""


def choose_method(rules: Rules, method: SolveMethod | None) -> tuple[SolveMethod, str]:
    """The method to use and why; :class:`SolveError` if the asked one cannot run here.

    Unasked, a board of :data:`TABLE_CELLS` that an exhaustive solve would handle gets a
    tablebase (its folder lies beside the book, :func:`table_directory`); a smaller board an
    exhaustive solve, and a larger one an opening book."""
    from ttt_solve.solver.tablebase.index import MAX_TABLE_CELLS

    if method == SolveMethod.TABLE:
        if rules.cells > MAX_TABLE_CELLS:
            raise SolveError(
                rules,
                f"{rules.name} has {rules.cells} cells; a table is made for boards of at most "
                f"{MAX_TABLE_CELLS} cells (larger boards: --method alphabeta)",
                ErrorKind.TOO_LARGE_FOR_TABLE,
            )
        return SolveMethod.TABLE, "asked for with --method table"
    if not fits_book(rules):
        raise SolveError(
            rules,
            f"{rules.name} has {rules.cells} cells; a book holds boards of at most "
            f"{BOOK_CELLS_LIMIT} cells",
        )
    estimate = exhaustive_estimate(rules)
    available = available_memory()
    size = (
        f"about {approx(estimate.canonical)} canonical positions, "
        f"{gibibytes(estimate.memory)} at peak; {available / 2**30:.0f} GiB available"
    )
    if not rules.fits_key:  # keys past 64 bits: no array solver, an opening book only
        if method == SolveMethod.EXHAUSTIVE:
            raise SolveError(
                rules,
                f"{rules.name} is too large to enumerate ({size}), and it has {rules.cells} "
                f"cells: an exhaustive solve holds boards of at most {KEY_CELLS_LIMIT}",
                ErrorKind.NEEDS_OPENING_BOOK,
            )
        return SolveMethod.ALPHABETA, f"too large to enumerate ({size}; {rules.cells} cells)"
    if method == SolveMethod.ALPHABETA:
        return SolveMethod.ALPHABETA, "asked for with --method alphabeta"
    if estimate.fits(available):
        if method is None and TABLE_CELLS[0] <= rules.cells <= TABLE_CELLS[1]:
            return SolveMethod.TABLE, (
                f"on a board of {TABLE_CELLS[0]} to {TABLE_CELLS[1]} cells a tablebase is "
                "smaller and faster to make than blocks (--method exhaustive for blocks)"
            )
        return SolveMethod.EXHAUSTIVE, (
            "asked for" if method else "the estimate fits this machine"
        ) + f" ({size})"
    if method == SolveMethod.EXHAUSTIVE:
        raise SolveError(
            rules,
            f"{rules.name} is too large to enumerate on this machine ({size})",
            ErrorKind.NEEDS_OPENING_BOOK,
        )
    table = (
        " (--method table builds every position's value in a tablebase)"
        if rules.cells <= MAX_TABLE_CELLS
        else ""
    )
    return SolveMethod.ALPHABETA, f"too large to enumerate ({size}){table}"


def table_directory(db: str, rules: Rules) -> str:
    """Where ``--method table`` builds a game's tablebase: beside a SQLite book's file
    (``BOOK.tables/RxCkK``), else in ``./ttt.tables/RxCkK``; a rerun resumes what is there."""
    base = sqlite_file(db) or os.path.abspath("ttt")
    return f"{base}.tables/{rules.rows}x{rules.cols}k{rules.k}"


def gibibytes(size: int) -> str:
    """``1.3 GiB``, ``1,131.7 GiB``; past a million GiB in powers of ten (``1.1e+09 GiB``)."""
    gib = size / 2**30
    return f"{gib:,.1f} GiB" if gib < 1e6 else f"{gib:.1e} GiB"


def work_directory(db: str, rules: Rules) -> str:
    """Where a large exhaustive solve keeps its plies, and an opening book its proved rows:
    beside a SQLite book's file (given as a path or a URL), else in ./"""
    base = sqlite_file(db) or "ttt-work"
    return f"{base}.work/{rules.rows}x{rules.cols}k{rules.k}"


def stored_as(game: GameInfo) -> str:
    """`` (an opening book to ply 2)`` for an opening book, nothing for an exhaustive game."""
    return "" if game.book_depth is None else f" (an opening book to ply {game.book_depth})"


def stored_meanwhile(book: Book, rules: Rules, before: GameInfo | None) -> bool:
    """Whether the game in the book now is not the one there before (``None``: none was):
    an interruption that came after the commit leaves the new game stored."""
    book.forget_game(rules)
    now = book.find_game(rules)
    return now is not None and (before is None or now.id != before.id)


def _quiet(_done: int, _total: int) -> None:
    pass


class Solve:
    """One solve of ``rules`` into the book ``db``, checked when made, run by :meth:`run`.

    ``method``: a :class:`SolveMethod` (or its name), or ``None`` (exhaustive when it fits);
    ``book_depth``: the last ply of an opening book; ``jobs``: processes proving an opening
    book; ``engine``: ``"local"`` or ``"dask"`` (with ``scheduler``, a Dask address);
    ``workdir``: where finished work is kept for a rerun; ``force``: solve again a game that
    is stored. Raises :class:`SolveError` before any work for what cannot run.
    """

    def __init__(
        self,
        rules: Rules,
        db: str,
        *,
        method: SolveMethod | str | None = None,
        book_depth: int | None = None,
        jobs: int = 2,
        engine: str = "local",
        scheduler: str | None = None,
        workdir: str | None = None,
        force: bool = False,
        note: Callable[[str], None] | None = None,
        warn: Callable[[str], None] | None = None,
        progress: Counter | None = None,
        writing: Counter | None = None,
    ) -> None:
        self.method, self.reason = _method(rules, method, engine)
        self.depth = _last_ply(rules, self.method, book_depth)
        """The last ply to store: ``None`` for every position (an exhaustive solve)."""
        unwritable = unwritable_reason(db)
        if unwritable is not None:  # found now, not after a solve of hours
            raise SolveError(
                rules,
                f"cannot write the book {db}: {unwritable}",
                ErrorKind.UNWRITABLE,
                database=db,
            )
        self.rules = rules
        self.db = db
        self.book_depth = book_depth
        self.jobs = jobs
        self.engine = engine
        self.scheduler = scheduler
        self.workdir = workdir
        self.force = force
        self.note = note or (lambda _text: None)
        self.warn = warn or self.note
        if (
            book_depth is not None and self.method == SolveMethod.EXHAUSTIVE
        ):  # never silently ignored
            self.note(
                f"note: --book-depth {book_depth} is not used: {rules.name} is solved "
                f"exhaustively (every position, past any depth); add --method alphabeta for "
                f"an opening book"
            )
        self.progress = progress or _quiet
        self.writing = writing or _quiet
        self._forward_done = False
        self.solved = False
        """Whether :meth:`run` solved the game (not: found it stored already)."""
        self.book_name = db
        """The book as a user names it (a path, or a URL without its password)."""
        self.stopped = "nothing was written"
        """After an interruption of :meth:`run`: what it left (nothing, before the solve
        began; the book unchanged, the work kept for a rerun, or the game stored just
        before)."""

    def run(self) -> GameInfo:
        """Solve and store the game, or return the stored one (unless ``force``).

        An interruption (``KeyboardInterrupt``) is raised again once the work is left in
        order, with :attr:`stopped` saying what was kept.
        """
        rules = self.rules
        with open_book(self.db, create=True) as book:
            self.book_name = book.display_url
            try:
                existing = book.find_game(rules)
            except (BookError, ValueError):
                if not self.force:
                    raise
                existing = None  # a games row that cannot be read: force replaces it
            if existing is not None and not self.force:
                if not holds_more(book, existing, self.depth):
                    self.note(
                        f"{rules.name} is already solved in {book.display_url}"
                        f"{stored_as(existing)}; --force solves it again."
                    )
                    return existing
                self.note(
                    f"{rules.name} is stored in {book.display_url}{stored_as(existing)}; "
                    f"this solve holds more and replaces it once done."
                )
            self.note(f"method: {self.method}, {self.reason}")
            try:
                return self._solve(book, existing)
            except KeyboardInterrupt:
                kept = (
                    f"; the work done is kept in {self.workdir} and the same command resumes "
                    f"from it"
                    if self.workdir
                    else ""
                )
                if stored_meanwhile(book, rules, existing):
                    self.stopped = (
                        f"{rules.name} was stored in {book.display_url} before the interruption"
                    )
                else:
                    self.stopped = "the book is unchanged" + kept
                raise

    def _forward(self, done: int, total: int) -> None:
        """The exhaustive solver's progress, passed on during its forward pass only."""
        if not self._forward_done:
            self.progress(done, total)

    def _solve(self, book: Book, existing: GameInfo | None) -> GameInfo:
        rules = self.rules
        started = time.perf_counter()
        if self.method == SolveMethod.TABLE:
            return self._solve_table(book, started)
        work = self._solver()
        try:
            # Solve first, write after: the book's write lock is then held only while writing.
            # (Large solves keep their plies on disk, so this list holds memory maps.) The
            # exhaustive solver's backward pass is the exception: it runs while the writer
            # stores the plies it has backed up (measured faster, see docs/solving.md).
            plies, rows = self._plies(work)
            info = self._write(book, plies, rows, started)
            self.solved = True
            self._clear(work)  # stored: the work kept for a rerun is no longer needed
        except GameExistsError as exists:  # stored meanwhile, holding at least as much
            self.warn(
                f"{rules.name} was solved by another run meanwhile{stored_as(exists.game)}, "
                f"which holds every position this one would; --force solves it again."
            )
            info = exists.game
            self._clear(work)
        finally:
            if self.engine != "dask":  # whatever happened: the work folder is free for the next run
                cast("ExhaustiveSolver | OpeningBookBuilder", work).store.release()
        if self.workdir is not None:
            with contextlib.suppress(OSError):  # the parent too, when nothing else is in it
                os.rmdir(os.path.dirname(self.workdir))
        return info

    def _solver(self) -> Solver:
        """What solves the game, as the method and the engine say, with its work folder: a
        Dask cluster's solver, the exhaustive solver, or an opening book's builder."""
        rules = self.rules
        if self.engine == "dask":
            from ttt_solve.solver.exhaustive.distributed import DaskSolver

            self.workdir = self.workdir or work_directory(self.db, rules) + "-dask"
            return DaskSolver(rules, self.workdir, scheduler=self.scheduler, progress=self.progress)
        if self.method == SolveMethod.EXHAUSTIVE:
            from ttt_solve.solver.exhaustive.keyarrays import uses_kernels

            if uses_kernels(rules):
                from ttt_solve.solver.compiling import announce_kernels

                announce_kernels()
            if self.workdir is None and exhaustive_estimate(rules).canonical > WORKDIR_POSITIONS:
                self.workdir = work_directory(self.db, rules)
            return ExhaustiveSolver(rules, progress=self._forward, workdir=self.workdir)
        from ttt_solve.solver.compiling import announce_search
        from ttt_solve.solver.prover.opening import OpeningBookBuilder

        announce_search()  # the builder's prover compiles (or loads) the search when made
        assert self.depth is not None  # an opening book's
        self.workdir = work_directory(self.db, rules) + f"-book{self.depth}"
        builder = OpeningBookBuilder(
            rules, self.depth, progress=self.progress, workdir=self.workdir, jobs=self.jobs
        )
        self.note(f"prover: {ENGINE_NAMES[builder.prover.engine]}")
        return builder

    def _plies(self, work: Solver) -> tuple[Iterable[PlyTable], int]:
        """The solved plies to write (those of an exhaustive solve as its backward pass backs
        them up) and how many rows they hold."""
        solving = time.perf_counter()
        if self.engine == "dask":  # the plies stay in the work directory until written
            dask = cast("DaskSolver", work)
            try:
                rows = dask.run()
            finally:
                dask.close()
            return dask.plies(), rows
        if isinstance(work, ExhaustiveSolver):
            rows = work.positions()  # the forward pass
            self._forward_done = True  # the writing counter shows the backward pass
            return work.solve(), rows
        builder = cast("OpeningBookBuilder", work)
        plies = list(builder.solve())
        seconds = time.perf_counter() - solving
        nodes, processes = builder.nodes, builder.processes
        self.note(
            f"prover: {nodes:,} nodes in {seconds:.1f} s "
            f"({nodes / max(seconds, 1e-9):,.0f} nodes/s, {processes} "
            f"process{'es' if processes > 1 else ''})"
        )
        return plies, sum(len(table.keys) for table in plies)

    def _clear(self, work: Solver) -> None:
        """Remove the work kept for a rerun."""
        if self.engine == "dask":
            cast("DaskSolver", work).clear()
        else:
            cast("ExhaustiveSolver | OpeningBookBuilder", work).store.clear()

    def _write(self, book: Book, plies: Iterable[PlyTable], rows: int, started: float) -> GameInfo:
        """The game written into the book in one transaction, its rows counted as they go."""
        written = 0

        def on_rows(count: int) -> None:
            nonlocal written
            written += count
            self.writing(written, rows)

        return write_game(
            book,
            self.rules,
            plies,
            method=self.method,
            book_depth=self.depth,
            force=self.force,
            started=started,
            on_rows=on_rows,
        )

    def _solve_table(self, book: Book, started: float) -> GameInfo:
        """Build (or finish building) the game's tablebase beside the book, then catalogue
        it: the estimate first (refused when the disk or memory cannot hold it), progress
        after each part, a file found damaged made again (and said), and the folder kept for
        a rerun when interrupted."""
        from pathlib import Path

        from ttt_solve.book.table.catalogue import catalogue_table
        from ttt_solve.solver.tablebase.build import build_table, describe_plan, plan_build

        rules = self.rules
        self.workdir = table_directory(self.db, rules)
        folder = Path(self.workdir)
        self.note(describe_plan(plan_build(rules, folder), folder))
        memory = int(available_memory() * 3 // 4)
        build_table(
            rules,
            folder,
            memory,
            lambda state: self.progress(state.done, state.total),
            note=self.warn,
        )
        seconds = time.perf_counter() - started
        info = catalogue_table(book, folder, force=True, seconds=seconds, checked=True)
        self.solved = True
        return info


def _method(rules: Rules, method: SolveMethod | str | None, engine: str) -> tuple[SolveMethod, str]:
    """The method of a solve on ``engine`` and why (:func:`choose_method`), or a
    :class:`SolveError` for a method or an engine that does not exist or cannot run it."""
    try:
        method = None if method is None else SolveMethod.parse(method, "method")
    except UnknownWordError as error:
        raise SolveError(rules, str(error)) from None
    if engine not in ENGINES:
        raise SolveError(rules, f"engine {engine!r} is not one of {', '.join(ENGINES)}")
    if engine != "dask":
        return choose_method(rules, method)
    if method in (SolveMethod.ALPHABETA, SolveMethod.TABLE):
        raise SolveError(rules, "the dask engine runs the exhaustive method only")
    return SolveMethod.EXHAUSTIVE, "asked for with --engine dask"


def _last_ply(rules: Rules, method: SolveMethod, book_depth: int | None) -> int | None:
    """The last ply an opening book stores, ``None`` for every position; a
    :class:`SolveError` for a depth past the end of every game."""
    if book_depth is not None and book_depth > rules.cells:
        raise SolveError(
            rules,
            f"book depth {book_depth} is past the end: every {rules.name} game ends by ply "
            f"{rules.cells} (its number of cells)",
            ErrorKind.DEPTH_PAST_END,
        )
    if method != SolveMethod.ALPHABETA:
        return None
    return DEFAULT_BOOK_DEPTH if book_depth is None else book_depth


def solve(rules: Rules, db: str, **options: Any) -> GameInfo:
    """Solve ``rules`` into the book ``db`` (unless it is stored there) and return the game:
    :class:`Solve` with ``options``, run."""
    return Solve(rules, db, **options).run()
