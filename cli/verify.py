"""``ttt verify``: check a stored game against itself and report every inconsistency."""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator
from contextlib import closing

import click

from ttt_solve.book.reader import Book, open_book
from ttt_solve.book.records import GameInfo
from ttt_solve.book.verify import verify_game
from ttt_solve.cli.common import (
    BOOK_TABLE_BYTES,
    LazyProgress,
    db_option,
    friendly_errors,
    game_options,
    jobs_option,
)
from ttt_solve.cli.options import command
from ttt_solve.errors import TttError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.verify import Problem

SHOWN = 20


@command("verify")
@game_options
@db_option
@jobs_option(
    "Processes proving the last ply of an opening book (each holds a "
    f"{BOOK_TABLE_BYTES >> 20} MiB table).",
    memory_per_job=BOOK_TABLE_BYTES,
)
@click.option(
    "--sample",
    type=click.IntRange(1),
    default=10_000,
    show_default=True,
    metavar="N",
    help="A tablebase of more than 20 cells: positions checked in each ply (from seeded "
    "random games).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of that sample.")
@friendly_errors
def verify(rules: Rules, db: str, jobs: int, sample: int, seed: int) -> None:
    """Check a stored game: values, best moves, terminal positions and counts.

    Every position's value must be the best over its children's stored values (for the last
    ply of an opening book: the alpha-beta prover's), terminal positions must hold their fixed
    values, and the counts must match the game's summary. A game stored as a tablebase has
    its files' digests checked first, and on boards of more than 20 cells a seeded sample of
    each ply is checked instead of every position. Exits with status 1 if any check fails,
    listing the first problems.

    \b
    Example:
      ttt verify --size 3 --win 3
      ttt verify --size 4x9 --win 4 --jobs 2
    """
    with open_book(db) as book:
        rows_check = None
        info = book.game(rules)
        proving = LazyProgress("proving", enabled=False)
        if info.book_depth is not None:
            # The last ply of an opening book is proved again: minutes to hours on big boards.
            from ttt_solve.solver.opening import check_rows

            proving = LazyProgress("proving the last ply")
            rows_check = functools.partial(check_rows, rules, jobs=jobs, progress=proving)

        click.echo(
            f"verifying {rules.name} in {book.display_url} ({info.positions:,} positions)...",
            err=True,
        )
        problems: Iterator[Problem]
        if info.table_folder is not None:
            problems = _table_problems(book, info, sample, seed)
        else:
            info, problems = verify_game(book, rules, rows_check)
        found = 0
        with closing(problems):  # type: ignore[type-var]
            try:
                for problem in problems:
                    found += 1
                    if found <= SHOWN:
                        where = _where(rules, problem.ply, problem.key)
                        click.echo(f"{where}: {problem.message}")
            finally:
                proving.close()
        if found:
            more = f" (first {SHOWN} shown)" if found > SHOWN else ""
            click.echo(f"{rules.name}: {found} problem{'s' if found > 1 else ''}{more}")
            sys.exit(1)
        click.echo(
            f"{rules.name}: OK, {info.positions:,} positions consistent "
            f"({info.method}{'' if info.book_depth is None else f', depth {info.book_depth}'})"
        )


def _table_problems(book: Book, info: GameInfo, sample: int, seed: int) -> Iterator[Problem]:
    """The problems of a game stored as a tablebase: its digests, then every position
    (boards the book streams) or a sample of each ply."""
    from ttt_solve.book.table import Table
    from ttt_solve.book.tablerows import STREAM_CELLS_LIMIT
    from ttt_solve.book.tableverify import digest_problems, sample_problems

    folder = book.table_folder(info)
    assert folder is not None  # a game stored as a tablebase
    damaged = digest_problems(folder, info.rules)
    if damaged:
        yield from damaged
        return
    if info.rules.cells <= STREAM_CELLS_LIMIT:
        yield from verify_game(book, info.rules)[1]
        return
    table = Table(folder, info.rules)
    try:
        yield from sample_problems(table, sample, seed)
    finally:
        table.close()


def _where(rules: Rules, ply: int, key: int) -> str:
    """Where a problem is: the summary, a position, or a stored key that is no board at all."""
    if key < 0:
        return "summary"
    try:
        return f"ply {ply}, position {Position.from_key(rules, key)}"
    except TttError:
        return f"ply {ply}, key {key}"
