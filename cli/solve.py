"""``ttt solve`` (also installed as ``ttt-solve``): solve a game and store it in the book."""

from __future__ import annotations

import time

import click
from tabulate import tabulate

from book.errors import GameExistsError
from book.reader import GameInfo, open_book
from book.writer import write_game
from cli.common import CliError, LazyProgress, count, db_option, friendly_errors, game_options
from solver.estimate import available_memory, exhaustive_estimate
from solver.exhaustive import ExhaustiveSolver
from solver.rules import Rules


def summary_table(info: GameInfo, db: str) -> str:
    """The summary a solve prints: value, counts, outcome split, time, database."""
    figures = info.figures
    values = figures.values["reachable"]
    canonical_values = figures.values["canonical"]
    terminal = figures.terminal["reachable"]
    rows = [
        ("game", f"{info.rules.name} ({info.rules.rows} rows x {info.rules.cols} columns, "
                 f"{info.rules.k} in a row)"),
        ("value for X", f"{info.value.outcome.value} (remoteness {info.value.remoteness})"),
        ("method", info.method + (f" (opening book to ply {info.book_depth})"
                                  if info.book_depth is not None else "")),
        ("reachable positions", count(info.reachable)),
        ("canonical positions", count(info.positions)),
        ("terminal positions", f"{count(sum(terminal.values()))} (X wins {count(terminal['x'])}, "
                               f"O wins {count(terminal['o'])}, draws {count(terminal['draw'])})"),
        ("side to move: win / draw / loss",
         f"{count(values['win'])} / {count(values['draw'])} / {count(values['loss'])}"),
        ("  up to symmetry", f"{count(canonical_values['win'])} / "
                             f"{count(canonical_values['draw'])} / {count(canonical_values['loss'])}"),
        ("time", f"{info.seconds:.2f} s (solver {info.solver_version}, "
                 f"{info.solved_at:%Y-%m-%d %H:%M} UTC)"),
        ("database", db),
    ]
    return tabulate(rows, tablefmt="simple_outline")


def check_feasible(rules: Rules) -> None:
    """Refuse, with the reason, a board this machine cannot enumerate."""
    if not rules.fits_key:
        raise CliError(f"{rules.name} has {rules.cells} cells; the book's 64-bit keys hold at "
                       f"most 31 cells")
    estimate = exhaustive_estimate(rules)
    available = available_memory()
    if not estimate.fits(available):
        raise CliError(
            f"{rules.name} is too large to enumerate on this machine: about "
            f"{estimate.canonical:.2e} canonical positions would need about "
            f"{estimate.memory / 2**30:,.0f} GiB of memory, and {available / 2**30:.0f} GiB "
            f"is available")


@click.command("solve", context_settings={"help_option_names": ["-h", "--help"]})
@game_options
@db_option
@click.option("--force", is_flag=True, help="Solve again and replace the game if it is stored.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
@friendly_errors
def solve(rules: Rules, db: str, force: bool, quiet: bool) -> None:
    """Solve every reachable position of a game and store it in the book.

    Computes the value (win/draw/loss for the side to move) and remoteness of every
    reachable position, up to symmetry, with its best moves, then prints a summary.

    \b
    Examples:
      ttt-solve --size 3 --win 3
      ttt-solve --size 4 --win 4 --db books/4x4.sqlite
      ttt-solve --size 3x4 --win 3 --force
    """
    check_feasible(rules)
    with open_book(db, create=True) as book:
        existing = book.find_game(rules)
        if existing is not None and not force:
            if not quiet:
                click.echo(f"{rules.name} is already solved in {book.display_url}; "
                           f"--force solves it again.", err=True)
                click.echo(summary_table(existing, book.display_url))
            return
        started = time.perf_counter()
        progress = LazyProgress(f"solving {rules.name}", enabled=not quiet)
        try:
            solver = ExhaustiveSolver(rules, progress=progress)
            info = write_game(book, rules, solver.solve(), method="exhaustive", force=force,
                              started=started)
        except GameExistsError as exists:
            progress.close()
            click.echo(f"{rules.name} was solved by another run meanwhile; --force solves it "
                       f"again.", err=True)
            info = exists.game
        finally:
            progress.close()
        if not quiet:
            click.echo(summary_table(info, book.display_url))


def main() -> None:
    """Entry point of the ``ttt-solve`` script."""
    solve(prog_name="ttt-solve")
