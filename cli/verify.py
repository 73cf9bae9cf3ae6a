"""``ttt verify``: check a stored game against itself and report every inconsistency."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import closing
from typing import TYPE_CHECKING

import click

from ttt_solve.book.reader import Book, open_book
from ttt_solve.book.records import GameInfo
from ttt_solve.cli.common import (
    BOOK_TABLE_BYTES,
    CliError,
    LazyProgress,
    ProgressLines,
    db_option,
    friendly_errors,
    game_options,
    jobs_option,
)
from ttt_solve.cli.options import command, sample_option, seed_option
from ttt_solve.errors import TttError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

if TYPE_CHECKING:
    from ttt_solve.book.table.verify import TableCheck
    from ttt_solve.solver.verify import Problem, RowsCheck

SHOWN = 20


@command("verify")
@game_options
@db_option
@jobs_option(
    "Processes proving the last ply of an opening book (each holds a "
    f"{BOOK_TABLE_BYTES >> 20} MiB table).",
    memory_per_job=BOOK_TABLE_BYTES,
)
@sample_option(
    "A tablebase of more than 20 cells: positions checked in each ply, drawn at random from "
    "its canonical positions."
)
@seed_option("Seed of that sample.")
@click.option(
    "--whole-ply",
    "whole_plies",
    multiple=True,
    metavar="PLY",
    help="A tablebase of more than 20 cells: check every position of this ply too (a number, "
    "'widest' or 'all'; repeat for more). Long: progress and an ETA go to stderr.",
)
@friendly_errors
def verify(
    rules: Rules, db: str, jobs: int, sample: int, seed: int, whole_plies: tuple[str, ...]
) -> None:
    """Check a stored game: values, best moves, terminal positions and counts.

    Every position's value must be the best over its children's stored values (for the last
    ply of an opening book: the alpha-beta prover's), terminal positions must hold their fixed
    values, and the counts must match the game's summary. A game stored as a tablebase has
    its files' digests checked first, and on boards of more than 20 cells a seeded sample of
    each ply is checked instead of every position (plus the plies --whole-ply names). Exits
    with status 1 if any check fails, listing the first problems.

    \b
    Example:
      ttt verify --size 3 --win 3
      ttt verify --size 4x9 --win 4 --jobs 2
      ttt verify --size 5 --win 4 --sample 10000 --whole-ply widest
    """
    with open_book(db) as book:
        rows_check = None
        info = book.game(rules)
        proving = LazyProgress("proving", enabled=False)
        if info.book_depth is not None:
            # The last ply of an opening book is proved again: minutes to hours on big boards.
            from ttt_solve.solver.prover.opening import check_rows

            proving = LazyProgress("proving the last ply")
            rows_check = functools.partial(check_rows, rules, jobs=jobs, progress=proving)

        click.echo(
            f"verifying {rules.name} in {book.display_url} ({info.positions:,} positions)...",
            err=True,
        )
        table_check = None
        reading = ProgressLines("every position", "positions")
        if info.table_folder is not None and info.rules.cells > _stream_cells_limit():
            from ttt_solve.book.table.verify import TableCheck

            table_check = TableCheck()
        sampling = (sample, seed, whole_plies)
        info, problems = _problems(book, info, rows_check, sampling, table_check, reading)
        found = 0
        with closing(problems):  # type: ignore[type-var]
            try:
                for problem in problems:
                    found += 1
                    if found <= SHOWN:
                        where = _where(rules, problem.ply, problem.key)
                        click.echo(f"{where}: {problem.message}")
            finally:
                reading.close()
                proving.close()
        if found:
            more = f" (first {SHOWN} shown)" if found > SHOWN else ""
            click.echo(f"{rules.name}: {found} problem{'s' if found > 1 else ''}{more}")
            sys.exit(1)
        if table_check is not None:
            click.echo(f"{rules.name}: OK, {_checked(table_check)}")
            return
        click.echo(
            f"{rules.name}: OK, {info.positions:,} positions consistent "
            f"({info.method}{'' if info.book_depth is None else f', depth {info.book_depth}'})"
        )


def _problems(
    book: Book,
    info: GameInfo,
    rows_check: RowsCheck | None,
    sampling: tuple[int, int, tuple[str, ...]],
    table_check: TableCheck | None,
    reading: ProgressLines,
) -> tuple[GameInfo, Iterator[Problem]]:
    """The problems of a stored game, as it is stored: a tablebase sampled (given a
    ``table_check``, with ``sampling``: the sample, the seed, the whole plies), a tablebase
    read whole, or blocks (the game as read back with them); ``reading`` tells the positions
    read of a game read whole."""
    if table_check is not None:
        sample, seed, whole_plies = sampling
        return info, _sampled_table_problems(book, info, sample, seed, whole_plies, table_check)
    if info.table_folder is not None:
        return info, _table_problems(book, info, reading)
    from ttt_solve.book.verify import verify_game  # NumPy: not for --help

    return verify_game(book, info.rules, rows_check, reading)


def _stream_cells_limit() -> int:
    """The largest board whose table is checked whole, as blocks are."""
    from ttt_solve.book.table import rows as tablerows

    return tablerows.STREAM_CELLS_LIMIT


def _table_problems(book: Book, info: GameInfo, reading: ProgressLines) -> Iterator[Problem]:
    """The problems of a game stored as a tablebase on a board the book streams: its
    digests, then every position (``reading`` told the positions read)."""
    from ttt_solve.book.table.verify import digest_problems
    from ttt_solve.book.verify import verify_game

    folder = book.table_folder(info)
    assert folder is not None  # a game stored as a tablebase
    with closing(ProgressLines("digests", "bytes")) as progress:
        damaged = digest_problems(folder, info.rules, progress=progress)
    if damaged:
        yield from damaged
        return
    yield from verify_game(book, info.rules, progress=reading)[1]


def _sampled_table_problems(
    book: Book,
    info: GameInfo,
    sample: int,
    seed: int,
    whole_plies: tuple[str, ...],
    check: TableCheck,
) -> Iterator[Problem]:
    """The problems of a tablebase of more than 20 cells: its digests, a seeded sample of
    each ply, then the plies asked for whole; what was checked is counted in ``check``."""
    from ttt_solve.book.table.rows import TableRows
    from ttt_solve.book.table.verify import (
        digest_problems,
        sample_problems,
        whole_ply_problems,
        widest_ply,
    )

    folder = book.table_folder(info)
    assert folder is not None  # a game stored as a tablebase
    rules = info.rules
    with closing(ProgressLines("digests", "bytes")) as progress:
        damaged = digest_problems(folder, rules, check, progress)
    if damaged:
        yield from damaged
        return
    rows = TableRows(folder, rules)
    try:
        plies = _whole_plies(whole_plies, rules, lambda: widest_ply(rows))
        with closing(ProgressLines(f"a sample of {sample:,} positions a ply", "plies")) as progress:
            yield from sample_problems(rows, sample, seed, check, progress)
        if plies:
            label = f"ply {plies[0]} whole" if len(plies) == 1 else f"plies {_plies(plies)} whole"
            with closing(ProgressLines(label, "numbers")) as progress:
                yield from whole_ply_problems(rows, plies, check, progress)
    finally:
        rows.close()


def _whole_plies(asked: tuple[str, ...], rules: Rules, widest: Callable[[], int]) -> list[int]:
    """The plies ``--whole-ply`` names, in order, each once."""
    plies: set[int] = set()
    for text in asked:
        word = text.strip().lower()
        if word == "all":
            plies.update(range(rules.cells + 1))
        elif word == "widest":
            plies.add(widest())
        elif word.isdigit() and int(word) <= rules.cells:
            plies.add(int(word))
        else:
            raise CliError(
                f"--whole-ply {text!r}: give a ply from 0 to {rules.cells}, 'widest' or 'all'"
            )
    return sorted(plies)


def _plies(plies: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``0-2, 5``."""
    runs: list[list[int]] = []
    for ply in plies:
        if runs and runs[-1][-1] == ply - 1:
            runs[-1].append(ply)
        else:
            runs.append([ply])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def _checked(check: TableCheck) -> str:
    """What a sampled check of a table covered, in words."""
    sampled = sum(check.sampled.values())
    parts = [
        f"digests of {check.digests} files",
        f"{sampled:,} sampled positions in {len(check.sampled)} plies",
    ]
    if check.whole:
        whole = sum(check.whole.values())
        parts.append(f"every position of ply {_plies(sorted(check.whole))} ({whole:,})")
    return "; ".join(parts) + ": each position's value is the best of its children's (or its end's)"


def _where(rules: Rules, ply: int, key: int) -> str:
    """Where a problem is: the summary, a position, or a stored key that is no board at all."""
    if key < 0:
        return "summary"
    try:
        return f"ply {ply}, position {Position.from_key(rules, key)}"
    except TttError:
        return f"ply {ply}, key {key}"
