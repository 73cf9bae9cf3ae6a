"""``ttt solve`` (also installed as ``ttt-solve``): solve a game and store it in the book."""

from __future__ import annotations

import sys

import click
from tabulate import tabulate

from ttt_solve.book.defaults import DEFAULT_BOOK_DEPTH
from ttt_solve.book.records import GameInfo, SolveMethod
from ttt_solve.cli.common import (
    BOOK_TABLE_BYTES,
    CliError,
    LazyProgress,
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
from ttt_solve.errors import install_hint
from ttt_solve.solver.rules import Rules


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


@command("solve")
@game_options
@db_option
@click.option(
    "--method",
    type=click.Choice([method.value for method in SolveMethod]),
    default=None,
    help="exhaustive: every reachable position; alphabeta: an opening book to "
    "--book-depth; table: every position's value in a tablebase beside the book "
    "(BOOK.tables/RxCkK, boards of at most 25 cells; a rerun resumes it). "
    "Default: exhaustive when it fits this machine, else alphabeta.",
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
    f"(needs the dask extra: {install_hint('dask')}).",
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
      ttt-solve --size 4x5 --win 4 --method table
      ttt-solve --size 5 --win 4 --book-depth 4
      ttt-solve --size 5 --win 4 --book-depth 5 --jobs 4
    """
    if book_depth is not None and (method == "exhaustive" or engine == "dask"):
        asked = "--method exhaustive" if method == "exhaustive" else "--engine dask"
        raise CliError(
            f"--book-depth is the last ply of an opening book (--method alphabeta); "
            f"{asked} solves every position: drop one of the two"
        )
    from ttt_solve.book.solving import Solve  # SQLAlchemy and the solvers: not for --help

    progress = LazyProgress(f"solving {rules.name}", enabled=not quiet)
    writing = LazyProgress("writing", enabled=not quiet, delay=0.5)

    def warn(text: str) -> None:
        progress.close()  # a line of its own, not in the middle of a bar
        click.echo(text, err=True)

    def note(text: str) -> None:
        if not quiet:
            warn(text)

    job = Solve(
        rules,
        db,
        method=method,
        book_depth=book_depth,
        jobs=jobs,
        engine=engine,
        scheduler=scheduler,
        workdir=workdir,
        force=force,
        note=note,
        warn=warn,
        progress=progress,
        writing=writing,
    )
    try:
        info = job.run()
    except KeyboardInterrupt as interrupt:
        progress.close()
        writing.close()
        word, status = stopped_by(interrupt)
        click.echo(f"{word}: {job.stopped}", err=True)
        sys.exit(status)
    finally:
        progress.close()
        writing.close()
    if not quiet:
        click.echo(summary_table(info, job.book_name))


def main() -> None:
    """Entry point of the ``ttt-solve`` script."""
    run_entry(solve, "ttt-solve")
