"""``ttt solve`` (also installed as ``ttt-solve``): solve a game and store it in the book."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import TYPE_CHECKING

import click
from tabulate import tabulate

from ttt_solve.book.errors import BookError, GameExistsError
from ttt_solve.book.reader import Book, GameInfo, open_book, sqlite_file, unwritable_reason
from ttt_solve.book.widekeys import BOOK_CELLS_LIMIT, fits_book
from ttt_solve.book.writer import holds_more, write_game
from ttt_solve.cli.common import (
    BOOK_TABLE_BYTES,
    CliError,
    LazyProgress,
    approx,
    count,
    db_option,
    debug_option,
    friendly_errors,
    game_options,
    jobs_option,
    run_entry,
    stopped_by,
)
from ttt_solve.cli.options import command
from ttt_solve.solver.estimate import available_memory, exhaustive_estimate
from ttt_solve.solver.exhaustive import ExhaustiveSolver
from ttt_solve.solver.rules import KEY_CELLS_LIMIT, Rules

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ttt_solve.solver.distributed import DaskSolver
    from ttt_solve.solver.opening import OpeningBookBuilder
    from ttt_solve.solver.plytable import PlyTable


def summary_table(info: GameInfo, db: str) -> str:
    """The summary a solve prints: value, counts, outcome split, time, database."""
    figures = info.figures
    scope = "" if info.book_depth is None else f" to ply {info.book_depth}"
    values = figures.values["reachable"]
    canonical_values = figures.values["canonical"]
    terminal = figures.terminal["reachable"]
    rows = [
        (
            "game",
            f"{info.rules.name} ({info.rules.rows} rows x {info.rules.cols} columns, "
            f"{info.rules.k} in a row)",
        ),
        ("value for X", f"{info.value.outcome.value} (remoteness {info.value.remoteness})"),
        (
            "method",
            info.method
            + (f" (opening book to ply {info.book_depth})" if info.book_depth is not None else ""),
        ),
        (f"reachable positions{scope}", count(info.reachable)),
        (f"canonical positions{scope}", count(info.positions)),
        (
            "terminal positions",
            f"{count(sum(terminal.values()))} (X wins {count(terminal['x'])}, "
            f"O wins {count(terminal['o'])}, draws {count(terminal['draw'])})",
        ),
        (
            "side to move: win / draw / loss",
            f"{count(values['win'])} / {count(values['draw'])} / {count(values['loss'])}",
        ),
        (
            "canonical: win / draw / loss",
            f"{count(canonical_values['win'])} / "
            f"{count(canonical_values['draw'])} / {count(canonical_values['loss'])}",
        ),
        (
            "time",
            f"{info.seconds:.2f} s (solver {info.solver_version}, "
            f"{info.solved_at:%Y-%m-%d %H:%M} UTC)",
        ),
        ("database", db),
    ]
    return tabulate(rows, tablefmt="simple_outline")


DEFAULT_BOOK_DEPTH = 2
WORKDIR_POSITIONS = 2_000_000
"""Solves estimated above this many canonical positions keep their plies on disk (resumable)."""


ENGINE_NAMES = {"compiled": "compiled search (Numba)", "python": "pure-Python search"}


def choose_method(rules: Rules, method: str | None) -> tuple[str, str]:
    """The method to use and why, or a :class:`CliError` if the asked one cannot run here."""
    if not fits_book(rules):
        raise CliError(
            f"{rules.name} has {rules.cells} cells; a book holds boards of at most "
            f"{BOOK_CELLS_LIMIT} cells"
        )
    estimate = exhaustive_estimate(rules)
    available = available_memory()
    size = (
        f"about {approx(estimate.canonical)} canonical positions, "
        f"{gibibytes(estimate.memory)} at peak; {available / 2**30:.0f} GiB available"
    )
    if not rules.fits_key:  # keys past 64 bits: no array solver, an opening book only
        if method == "exhaustive":
            raise CliError(
                f"{rules.name} is too large to enumerate ({size}), and it has {rules.cells} "
                f"cells: an exhaustive solve holds boards of at most {KEY_CELLS_LIMIT}; build an "
                f"opening book instead: --method alphabeta --book-depth D"
            )
        return "alphabeta", f"too large to enumerate ({size}; {rules.cells} cells)"
    if method == "alphabeta":
        return "alphabeta", "asked for with --method alphabeta"
    if estimate.fits(available):
        return "exhaustive", (
            "asked for" if method else "the estimate fits this machine"
        ) + f" ({size})"
    if method == "exhaustive":
        raise CliError(
            f"{rules.name} is too large to enumerate on this machine ({size}); "
            f"build an opening book instead: --method alphabeta --book-depth D"
        )
    return "alphabeta", f"too large to enumerate ({size})"


def gibibytes(size: int) -> str:
    """``1.3 GiB``, ``1,131.7 GiB``; past a million GiB in powers of ten (``1.1e+09 GiB``)."""
    gib = size / 2**30
    return f"{gib:,.1f} GiB" if gib < 1e6 else f"{gib:.1e} GiB"


def work_directory(db: str, rules: Rules) -> str:
    """Where a large exhaustive solve keeps its plies, and an opening book its proved rows:
    beside a SQLite book's file (given as a path or a URL), else in ./"""
    base = sqlite_file(db) or "ttt-work"
    return f"{base}.work/{rules.rows}x{rules.cols}k{rules.k}"


@command("solve")
@game_options
@db_option
@click.option(
    "--method",
    type=click.Choice(["exhaustive", "alphabeta"]),
    default=None,
    help="exhaustive: every reachable position; alphabeta: an opening book to "
    "--book-depth. Default: exhaustive when it fits this machine.",
)
@click.option(
    "--book-depth",
    type=click.IntRange(0, 31),
    default=None,
    metavar="D",
    help=f"Last ply of an opening book (alphabeta). Default {DEFAULT_BOOK_DEPTH}.",
)
@jobs_option(
    "Processes proving an opening book's positions (alphabeta only; each holds a "
    f"{BOOK_TABLE_BYTES >> 20} MiB table).",
    memory_per_job=BOOK_TABLE_BYTES,
)
@click.option(
    "--engine",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="Where an exhaustive solve runs: in this process, or on a Dask cluster "
    "(needs the dask extra: pip install 'ttt-solve[dask]').",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    default=None,
    help="Dask scheduler to use (tcp://host:8786). Default: a local cluster of 2 workers.",
)
@click.option(
    "--workdir",
    metavar="URL",
    default=None,
    help="Where the solved plies are kept until written, so that a rerun resumes from them "
    "(the dask engine: Parquet at a path or any fsspec URL every worker reaches). "
    "Default: beside the book, for large solves.",
)
@click.option("--force", is_flag=True, help="Solve again and replace the game if it is stored.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
@debug_option
@friendly_errors
def solve(
    rules: Rules,
    db: str,
    method: str | None,
    book_depth: int | None,
    jobs: int,
    engine: str,
    scheduler: str | None,
    workdir: str | None,
    force: bool,
    quiet: bool,
) -> None:
    """Solve a game and store it in the book.

    Exhaustive: the value (win/draw/loss for the side to move), remoteness and best moves of
    every reachable position, up to symmetry. Boards too large for that get an opening book:
    every position up to ply D solved exactly by alpha-beta. Prints a summary.
    An interrupted run leaves the book as it was; a large solve resumes where it stopped.

    \b
    Examples:
      ttt-solve --size 3 --win 3
      ttt-solve --size 4 --win 4 --db books/4x4.sqlite
      ttt-solve --size 3x4 --win 3 --force
      ttt-solve --size 4x5 --win 4 --engine dask --workdir /data/ttt-work
      ttt-solve --size 5 --win 4 --book-depth 4
      ttt-solve --size 5 --win 4 --book-depth 5 --jobs 4
    """
    if book_depth is not None and (method == "exhaustive" or engine == "dask"):
        asked = "--method exhaustive" if method == "exhaustive" else "--engine dask"
        raise CliError(
            f"--book-depth is the last ply of an opening book (--method alphabeta); "
            f"{asked} solves every position: drop one of the two"
        )
    if engine == "dask":
        if method == "alphabeta":
            raise CliError("--engine dask runs the exhaustive method only")
        method, reason = "exhaustive", "asked for with --engine dask"
    else:
        method, reason = choose_method(rules, method)
    if book_depth is not None and book_depth > rules.cells:
        raise CliError(
            f"--book-depth {book_depth}: every {rules.name} game ends by ply {rules.cells} "
            f"(its number of cells); give --book-depth {rules.cells} or less"
        )
    if book_depth is not None and method == "exhaustive" and not quiet:
        click.echo(
            f"note: --book-depth {book_depth} is not used: {rules.name} is solved exhaustively "
            f"(every position, past any depth); add --method alphabeta for an opening book",
            err=True,
        )
    depth = None  # the last ply stored: None for every position
    if method == "alphabeta":
        depth = DEFAULT_BOOK_DEPTH if book_depth is None else book_depth
    unwritable = unwritable_reason(db)
    if unwritable is not None:  # found now, not after a solve of hours
        raise CliError(
            f"cannot write the book {db}: {unwritable}; make it writable or give another --db"
        )
    with open_book(db, create=True) as book:
        try:
            existing = book.find_game(rules)
        except (BookError, ValueError):
            if not force:
                raise
            existing = None  # a games row that cannot be read: --force replaces it
        if existing is not None and not force:
            if not holds_more(book, existing, depth):
                if not quiet:
                    click.echo(
                        f"{rules.name} is already solved in {book.display_url}"
                        f"{stored_as(existing)}; --force solves it again.",
                        err=True,
                    )
                    click.echo(summary_table(existing, book.display_url))
                return
            if not quiet:
                click.echo(
                    f"{rules.name} is stored in {book.display_url}{stored_as(existing)}; "
                    f"this solve holds more and replaces it once done.",
                    err=True,
                )
        if not quiet:
            click.echo(f"method: {method}, {reason}", err=True)
        started = time.perf_counter()
        progress = LazyProgress(f"solving {rules.name}", enabled=not quiet)
        dask_solver: DaskSolver | None = None
        if engine == "dask":
            from ttt_solve.solver.distributed import DaskSolver

            workdir = workdir or work_directory(db, rules) + "-dask"
            dask_solver = DaskSolver(rules, workdir, scheduler=scheduler, progress=progress)
            builder = None
        elif method == "exhaustive":
            if workdir is None and exhaustive_estimate(rules).canonical > WORKDIR_POSITIONS:
                workdir = work_directory(db, rules)
            solver: ExhaustiveSolver | OpeningBookBuilder = ExhaustiveSolver(
                rules, progress=progress, workdir=workdir
            )
            builder = None
        else:
            from ttt_solve.solver.opening import OpeningBookBuilder

            assert depth is not None  # an opening book's
            workdir = work_directory(db, rules) + f"-book{depth}"
            builder = OpeningBookBuilder(
                rules, depth, progress=progress, workdir=workdir, jobs=jobs
            )
            solver = builder
            if not quiet:
                click.echo(f"prover: {ENGINE_NAMES[builder.prover.engine]}", err=True)
        writing = LazyProgress("writing", enabled=not quiet, delay=0.5)

        def clear_work() -> None:
            if dask_solver is not None:
                dask_solver.clear()
            else:
                solver.store.clear()

        try:
            # Solve first, write after: the book's write lock is then held only while writing.
            # (Large solves keep their plies on disk, so this list holds memory maps.) The
            # exhaustive solver's backward pass is the exception: it runs while the writer
            # stores the plies it has backed up (measured faster, see docs/solving.md).
            solving = time.perf_counter()
            plies: Iterable[PlyTable]
            if dask_solver is not None:  # the plies stay in the work directory until written
                try:
                    rows = dask_solver.run()
                finally:
                    dask_solver.close()
                plies = dask_solver.plies()
            elif isinstance(solver, ExhaustiveSolver):
                rows = solver.positions()  # the forward pass
                plies = solver.solve()
                progress.enabled = False  # the writing bar shows the backward pass's progress
            else:
                plies = list(solver.solve())
                rows = sum(len(table.keys) for table in plies)
            progress.close()
            if builder is not None and not quiet:
                seconds = time.perf_counter() - solving
                nodes = builder.nodes
                processes = builder.processes
                click.echo(
                    f"prover: {nodes:,} nodes in {seconds:.1f} s "
                    f"({nodes / max(seconds, 1e-9):,.0f} nodes/s, {processes} "
                    f"process{'es' if processes > 1 else ''})",
                    err=True,
                )
            written = 0

            def on_rows(count: int) -> None:
                nonlocal written
                written += count
                writing(written, rows)

            info = write_game(
                book,
                rules,
                plies,
                method=method,
                book_depth=depth,
                force=force,
                started=started,
                on_rows=on_rows,
            )
            clear_work()  # stored: the work kept for a rerun is no longer needed
        except GameExistsError as exists:  # stored meanwhile, holding at least as much
            progress.close()
            writing.close()
            click.echo(
                f"{rules.name} was solved by another run meanwhile{stored_as(exists.game)}, "
                f"which holds every position this one would; --force solves it again.",
                err=True,
            )
            info = exists.game
            clear_work()
        except KeyboardInterrupt as interrupt:
            progress.close()
            writing.close()
            word, status = stopped_by(interrupt)
            kept = (
                f"; the work done is kept in {workdir} and the same command resumes from it"
                if workdir
                else ""
            )
            if stored_meanwhile(book, rules, existing):
                kept = ""
                state = f"{rules.name} was stored in {book.display_url} before the interruption"
            else:
                state = "the book is unchanged"
            click.echo(f"{word}: {state}{kept}", err=True)
            sys.exit(status)
        finally:
            progress.close()
            writing.close()
            if dask_solver is None:  # whatever happened: the work folder is free for the next run
                solver.store.release()
        if workdir is not None:
            with contextlib.suppress(OSError):  # the parent too, when nothing else is in it
                os.rmdir(os.path.dirname(workdir))
        if not quiet:
            click.echo(summary_table(info, book.display_url))


def stored_as(game: GameInfo) -> str:
    """`` (an opening book to ply 2)`` for an opening book, nothing for an exhaustive game."""
    return "" if game.book_depth is None else f" (an opening book to ply {game.book_depth})"


def stored_meanwhile(book: Book, rules: Rules, before: GameInfo | None) -> bool:
    """Whether the game in the book now is not the one there before (``None``: none was):
    an interruption that came after the commit leaves the new game stored."""
    book.forget_game(rules)
    now = book.find_game(rules)
    return now is not None and (before is None or now.id != before.id)


def main() -> None:
    """Entry point of the ``ttt-solve`` script."""
    run_entry(solve, "ttt-solve")
