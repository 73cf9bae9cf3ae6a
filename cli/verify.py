"""``ttt verify``: check a stored game against itself and report every inconsistency."""

from __future__ import annotations

import sys
from contextlib import closing

import click

from ttt_solve.book.reader import open_book
from ttt_solve.book.verify import verify_game
from ttt_solve.cli.common import LazyProgress, db_option, friendly_errors, game_options
from ttt_solve.cli.options import command
from ttt_solve.errors import TttError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

SHOWN = 20


@command("verify")
@game_options
@db_option
@friendly_errors
def verify(rules: Rules, db: str) -> None:
    """Check a stored game: values, best moves, terminal positions and counts.

    Every position's value must be the best over its children's stored values (for the last
    ply of an opening book: the alpha-beta prover's), terminal positions must hold their fixed
    values, and the counts must match the game's summary. Exits with status 1 if any check
    fails, listing the first problems.

    \b
    Example:
      ttt verify --size 3 --win 3
    """
    with open_book(db) as book:
        row_check = None
        info = book.game(rules)
        # An opening book's last ply is checked by the prover: minutes to hours on a big board.
        by_ply = info.figures.by_ply["canonical"]
        last_ply = max(by_ply, default=0)
        proving = LazyProgress(f"proving ply {last_ply}")
        if info.book_depth is not None:
            from ttt_solve.solver.opening import BOOK_TABLE_BITS, check_row
            from ttt_solve.solver.search import Prover, default_engine

            prover = Prover(rules, table_bits=BOOK_TABLE_BITS[default_engine(rules)])
            proved = 0

            def row_check(position: Position, score: int, best: int) -> str | None:
                nonlocal proved
                message = check_row(prover, position, score, best)
                proved += 1  # open positions only: finished games need no proof
                proving(proved, by_ply[last_ply])
                return message

        click.echo(
            f"verifying {rules.name} in {book.display_url} ({info.positions:,} positions)...",
            err=True,
        )
        info, problems = verify_game(book, rules, row_check)
        found = 0
        with closing(problems):
            try:
                for problem in problems:
                    found += 1
                    if found <= SHOWN:
                        where = _where(rules, problem.ply, problem.key)
                        click.echo(f"{where}: {problem.message}")
                if row_check is not None:  # the terminal positions count as done
                    proving(by_ply.get(last_ply, 0), by_ply.get(last_ply, 0))
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


def _where(rules: Rules, ply: int, key: int) -> str:
    """Where a problem is: the summary, a position, or a stored key that is no board at all."""
    if key < 0:
        return "summary"
    try:
        return f"ply {ply}, position {Position.from_key(rules, key)}"
    except TttError:
        return f"ply {ply}, key {key}"
