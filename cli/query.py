"""``ttt query``: the value of a position and of each of its moves, from the book.

Answers come through :class:`book.oracle.Oracle`: from the book when it holds them, else by a
short live search (the output says so), else an error naming the ``ttt-solve`` command that
would build the book. Kept light to import: one query is one process.
"""

from __future__ import annotations

import json
import math

import click

from ttt_solve.book.oracle import DEFAULT_SEARCH_SECONDS, Analysis, Oracle
from ttt_solve.book.query import analysis_json as as_json
from ttt_solve.book.query import parse_query
from ttt_solve.book.reader import open_book
from ttt_solve.cli.common import CliError, db_option, friendly_errors, game_options
from ttt_solve.cli.options import command, search_seconds_option
from ttt_solve.solver.rules import Rules

_SOURCES = {
    "book": "from the book",
    "book+search": "value from the book; moves searched live (past the opening book)",
    "search": "searched live: the book holds no such game",
}


def board_drawing(analysis: Analysis, colour: bool) -> str:
    """The board with each legal move's outcome and remoteness written in its cell (``D7``)."""
    from ttt_solve.presentation import picture

    return picture.text(picture.of_analysis(analysis), colour)


def summary_line(analysis: Analysis) -> str:
    """``X to move (ply 2): draw, remoteness 7`` or the result of a finished game."""
    position, value = analysis.position, analysis.value
    if position.is_terminal:
        winner = position.winner
        result = f"{winner.upper()} has won" if winner else "drawn, the board is full"
        return (
            f"game over after {position.ply} moves: {result} "
            f"({position.to_move.upper()} to move: {value.outcome.value}, remoteness 0)"
        )
    return (
        f"{position.to_move.upper()} to move (ply {position.ply}): "
        f"{value.outcome.value}, remoteness {value.remoteness}"
    )


def moves_table(analysis: Analysis) -> str:
    """The moves, best first: cell, value for the mover, remoteness, and which are best."""
    best = set(analysis.best_moves)
    rows = [("move", "value", "remoteness", "")]
    for move in analysis.moves:
        rows.append(
            (
                move.name,
                move.value.outcome.value,
                str(move.value.remoteness),
                "best" if move.cell in best else "",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    # A fixed four-column table: formatting it here spares the query path tabulate's import.
    return "\n".join(
        "  ".join(text.ljust(w) for text, w in zip(row, widths)).rstrip() for row in rows
    )


@command("query")
@click.argument("position", required=False)
@click.option(
    "--moves",
    "-m",
    metavar="CELLS",
    help="Moves played from POSITION (or the empty board): b2,a1,c3 or 4,0,8.",
)
@game_options
@db_option
@click.option("--json", "as_json_flag", is_flag=True, help="Print one JSON object.")
@search_seconds_option(
    DEFAULT_SEARCH_SECONDS,
    "Time allowed to search a position the book does not hold (0: never search).",
)
@click.option(
    "--color/--no-color",
    "colour",
    default=None,
    help="Colour the board. Default: only on a terminal.",
)
@friendly_errors
def query(
    position: str | None,
    moves: str | None,
    rules: Rules,
    db: str,
    as_json_flag: bool,
    search_seconds: float,
    colour: bool | None,
) -> None:
    """Show the value of POSITION and of every legal move, best first.

    POSITION is written row by row from the top, rows separated by '/', cells x, o or '.'
    (no POSITION: the empty board). Values are for the player to move (win/draw/loss) with
    the remoteness: plies to the end under perfect play. Each empty cell of the board shows
    its move's outcome and remoteness (W3: wins in 3, D7: draw, L4: loses in 4).

    \b
    Examples:
      ttt query x.o/.x./... --size 3 --win 3
      ttt query --moves b2,a1,c3 --size 3 --win 3
      ttt query ..../.x../..o./.... --size 4 --win 4 --db 4x4.sqlite --json
    """
    if not math.isfinite(search_seconds) or search_seconds < 0:
        raise CliError(f"--search-seconds {search_seconds} must be a number of seconds >= 0")
    asked = parse_query(rules, position, moves)
    with open_book(db) as book:
        analysis = Oracle(rules, book, search_seconds=search_seconds).analyse(asked)
        game = book.find_game(rules)
    if as_json_flag:
        click.echo(json.dumps(as_json(analysis)))
        return
    click.echo(board_drawing(analysis, colour is not False), color=colour)
    click.echo(summary_line(analysis))
    if analysis.searched:
        source = _SOURCES[analysis.source]
        if analysis.source == "search" and game is not None:
            source = f"searched live: past the opening book's depth {game.book_depth}"
        click.echo(f"{source} ({analysis.nodes:,} nodes, {analysis.seconds:.2f} s)")
    if analysis.moves:
        click.echo(moves_table(analysis))
