"""``ttt export``: the stored table of a game as CSV, JSON lines or Parquet, streamed.

One row per canonical position, or with ``--expand`` one row per reachable position (every
distinct symmetric image of each canonical one). Rows are read from the book and written a
chunk at a time (:mod:`book.frame`), so memory does not grow with the game: ply by ply, in key
order, except for a tablebase of more than 20 cells, read in the order of its index
(:mod:`book.table.rows`).

``--where`` filters with the words of :meth:`~book.rowfilter.RowFilter.parse`; the book binds
the numbers as parameters, so user text never becomes SQL.
"""

from __future__ import annotations

import sys
from contextlib import closing

import click

from ttt_solve.book.errors import RowFilterError
from ttt_solve.book.reader import open_book
from ttt_solve.book.records import ExportFormat
from ttt_solve.book.rowfilter import Condition, RowFilter
from ttt_solve.book.urls import book_files
from ttt_solve.cli.common import CliError, db_option, friendly_errors, game_options
from ttt_solve.cli.options import command
from ttt_solve.cli.output import output_file, refuse_book_as_output, write_all
from ttt_solve.errors import install_hint
from ttt_solve.presentation.numbers import count
from ttt_solve.solver.rules import Rules


def parse_where(text: str) -> list[Condition]:
    """Conditions from one ``--where``: ``ply<=4``, ``value=win``, ``ply>=2 and images=8``
    (see :meth:`RowFilter.parse`); :class:`CliError` quotes what is not understood."""
    try:
        return list(RowFilter.parse(text).conditions)
    except RowFilterError as error:
        raise CliError(f"--where {error}") from None


@command("export")
@game_options
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice([fmt.value for fmt in ExportFormat]),
    default="csv",
    show_default=True,
    help="CSV with a header row, one JSON object per line, or a Parquet file (needs "
    f"{install_hint('notebook')} for pyarrow; give --output).",
)
@click.option(
    "--expand",
    is_flag=True,
    help="One row per reachable position (every symmetric image), not per canonical.",
)
@click.option(
    "--where",
    "wheres",
    multiple=True,
    metavar="COND",
    help="Keep rows where COND holds: COLUMN OP VALUE on ply, value, remoteness, "
    "images, e.g. 'ply<=4', 'value=win'. Repeat to AND them.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True),
    default="-",
    show_default=True,
    help="File to write ('-': standard output); written whole at the end, or not at all.",
)
@click.option("--quiet", "-q", is_flag=True, help="No row count on stderr.")
@friendly_errors
def export(
    rules: Rules, db: str, fmt: str, expand: bool, wheres: tuple[str, ...], output: str, quiet: bool
) -> None:
    """Export a solved game's table: position, ply, side to move, value, remoteness, best moves.

    Values are for the side to move; best moves are cell names (space-separated in CSV);
    images is how many reachable positions the canonical one stands for. Terminal positions
    have remoteness 0. Rows come ply by ply, by key within a ply; a tablebase of more than
    20 cells (5x5) gives each ply in the order of its index, in bounded memory, and reads no
    ply that --where's conditions on the ply rule out.

    \b
    Examples:
      ttt export --size 3 --win 3 > 3x3.csv
      ttt export --size 3 --win 3 --expand --format jsonl -o 3x3.jsonl
      ttt export --size 4 --win 4 --where 'ply<=4' --where value=win
      ttt export --size 4 --win 4 --format parquet -o 4x4.parquet
      ttt export --size 5 --win 4 --where 'ply<=6' -o 5x5-ply6.csv
    """
    from ttt_solve.book.frame import text_chunks, write_parquet  # NumPy: not for --help

    where = RowFilter(tuple(c for text in wheres for c in parse_where(text)))
    refuse_book_as_output(output, book_files(db))  # before the book is opened
    if fmt == "parquet" and output == "-" and sys.stdout.isatty():
        raise CliError("Parquet is binary: give --output FILE.parquet (or redirect the output)")
    with open_book(db) as book:
        book.game(rules)  # a missing game is an error before any output
        with output_file(output, book_files(db)) as stream:
            if fmt == "parquet":
                stream.flush()
                binary = stream.buffer  # type: ignore[attr-defined] # a file opened as text
                written, terminal = write_parquet(book, rules, binary, where=where, expand=expand)
            else:
                counts: list[int] = []
                chunks = text_chunks(book, rules, fmt, where=where, expand=expand, counts=counts)
                stream.flush()
                with closing(chunks):
                    for chunk in chunks:
                        write_all(stream.buffer, chunk)  # type: ignore[attr-defined]
                written, terminal = counts
            stream.flush()  # here, where a failed write is an error: not at exit, unseen
    if not quiet:
        click.echo(
            f"{count(written)} rows ({count(terminal)} terminal) of {rules.name}"
            f"{', every reachable position' if expand else ', canonical positions'}",
            err=True,
        )


if __name__ == "__main__":  # pragma: no cover
    raise CliError("run as: ttt export")
