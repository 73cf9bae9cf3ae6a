"""``ttt export``: the stored table of a game as CSV or JSON lines, streamed.

One row per canonical position, or with ``--expand`` one row per reachable position (every
distinct symmetric image of each canonical one). Rows are read from the book in batches and
written as they come, so memory does not grow with the game.

``--where`` filters with a small language of its own (see :func:`parse_where`), read into the
book's :class:`~book.rowfilter.RowFilter`; the book binds the numbers as parameters, so user
text never becomes SQL.
"""

from __future__ import annotations

import csv
import json
import os
import re
import sys
from collections.abc import Generator, Iterator
from contextlib import closing
from typing import IO

import click

from ttt_solve.book.errors import RowFilterError
from ttt_solve.book.reader import Book, book_files, open_book
from ttt_solve.book.rowfilter import Condition, RowFilter
from ttt_solve.cli.common import (
    CliError,
    count,
    db_option,
    friendly_errors,
    game_options,
    quoted,
    whole_number,
)
from ttt_solve.cli.options import command
from ttt_solve.cli.output import output_file, refuse_book_as_output
from ttt_solve.solver.position import iter_cells
from ttt_solve.solver.rules import Rules

COLUMNS = ("position", "ply", "to_move", "value", "remoteness", "best_moves", "images")
_VALUE_NAMES = {"win": 1, "draw": 0, "loss": -1}
_CONDITION = re.compile(
    r"^\s*([a-z_]+)\s*(<=|>=|!=|==|=|<|>)\s*([a-z]+|[+-]?\d+)\s*$", re.IGNORECASE
)


def parse_where(text: str) -> list[Condition]:
    """Conditions from one ``--where``: ``ply<=4``, ``value=win``, ``ply>=2 and images=8``.

    Columns: ply, value (win, draw, loss, or 1, 0, -1; ordered loss < draw < win), remoteness,
    images. Operators: = (or ==), !=, <, <=, >, >=. Several conditions are joined by ``and``
    or commas. Raises :class:`CliError` quoting the part that is not understood; the book
    checks columns and ranges (:class:`~book.rowfilter.RowFilter`).
    """
    conditions = []
    shown = quoted(text)
    for part in re.split(r"\s+and\s+|,", text.strip(), flags=re.IGNORECASE):
        match = _CONDITION.match(part)
        if not match:
            raise CliError(
                f"--where {shown}: cannot read {quoted(part.strip())}; write COLUMN OP "
                f"VALUE, e.g. ply<=4 or value=win"
            )
        column, op, literal = match.group(1).lower(), match.group(2), match.group(3).lower()
        if literal.lstrip("+-").isdigit():
            number = whole_number(literal)
            if number is None:
                raise CliError(f"--where {shown}: {quoted(literal)} is out of range for {column}")
        elif column == "value" and literal in _VALUE_NAMES:
            number = _VALUE_NAMES[literal]
        else:
            expected = "win, draw, loss or 1, 0, -1" if column == "value" else "a whole number"
            raise CliError(
                f"--where {shown}: {column} compares with {expected}, not {quoted(literal)}"
            )
        condition = Condition(column, op, number)
        try:
            RowFilter((condition,))
        except RowFilterError as error:
            raise CliError(f"--where {shown}: {error}") from None
        conditions.append(condition)
    return conditions


class _RowTexts(dict):
    """Row code (X's cells, then O's shifted by the row length) -> text, made on first use."""

    def __init__(self, cols: int) -> None:
        super().__init__()
        self.cols = cols

    def __missing__(self, code: int) -> str:
        x, o = code & ((1 << self.cols) - 1), code >> self.cols
        text = "".join("x" if x >> c & 1 else "o" if o >> c & 1 else "." for c in range(self.cols))
        self[code] = text
        return text


class Images:
    """Distinct symmetric images of stored positions, their texts and move names, fast.

    Permutations come from :meth:`solver.rules.Rules.permute` (byte lookup tables); row texts
    and move-name lists are cached as they recur.
    """

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self._row_texts = _RowTexts(rules.cols)
        self._full, self._cells = rules.full, rules.cells
        self._row_mask = (1 << rules.cols) - 1
        self._shifts = tuple(row * rules.cols for row in range(rules.rows))
        self._names: dict[int, tuple[str, ...]] = {}
        self._cell_names = [rules.cell_name(c) for c in range(rules.cells)]

    def images(self, key: int, best: int) -> list[tuple[int, int]]:
        """``(key, best moves)`` of every distinct image of a stored position, by key."""
        cells = self.rules.cells
        x, o = key & self.rules.full, key >> cells
        found = {}
        permute = self.rules.permute
        for symmetry in range(len(self.rules.symmetries)):
            image = permute(x, symmetry) | permute(o, symmetry) << cells
            if image not in found:
                found[image] = permute(best, symmetry)
        return sorted(found.items())

    def text(self, key: int) -> str:
        """The position string (``x.o/.x./..o``) of a packed key."""
        x, o = key & self._full, key >> self._cells
        mask, cols, texts = self._row_mask, self.rules.cols, self._row_texts
        return "/".join(
            [texts[(x >> shift & mask) | (o >> shift & mask) << cols] for shift in self._shifts]
        )

    def names(self, cells: int) -> tuple[str, ...]:
        """Cell names of a bitmask, in index order."""
        names = self._names.get(cells)
        if names is None:
            names = tuple(self._cell_names[c] for c in iter_cells(cells))
            self._names[cells] = names
        return names


_VALUE_TEXT = {1: "win", 0: "draw", -1: "loss"}


def export_rows(
    book: Book, rules: Rules, where: RowFilter, expand: bool
) -> Generator[tuple, None, None]:
    """Rows ``(position, ply, to_move, value, remoteness, best_moves, images)``, streamed.

    ``best_moves`` is a tuple of cell names. Canonical rows come in (ply, key) order; with
    ``expand`` each is replaced by its distinct images in key order.
    """
    images = Images(rules)
    for ply, key, sign, remoteness, best, weight in book.rows(rules, where=where):
        to_move = "x" if ply % 2 == 0 else "o"
        value = _VALUE_TEXT[sign]
        if expand:
            for image, image_best in images.images(key, best):
                yield (
                    images.text(image),
                    ply,
                    to_move,
                    value,
                    remoteness,
                    images.names(image_best),
                    weight,
                )
        else:
            yield (images.text(key), ply, to_move, value, remoteness, images.names(best), weight)


def write_rows(rows: Iterator[tuple], stream: IO[str], fmt: str) -> tuple[int, int]:
    """Write rows as CSV (with a header; best moves space-separated) or JSON lines.

    Returns ``(rows written, terminal rows)``.
    """
    written = terminal = 0
    if fmt == "csv":
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow((*row[:5], " ".join(row[5]), row[6]))
            written += 1
            terminal += row[4] == 0
    else:
        for row in rows:
            record = dict(zip(COLUMNS, row))
            record["best_moves"] = list(row[5])
            stream.write(json.dumps(record) + "\n")
            written += 1
            terminal += row[4] == 0
    return written, terminal


@command("export")
@game_options
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "jsonl"]),
    default="csv",
    show_default=True,
    help="CSV with a header row, or one JSON object per line.",
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
    have remoteness 0.

    \b
    Examples:
      ttt export --size 3 --win 3 > 3x3.csv
      ttt export --size 3 --win 3 --expand --format jsonl -o 3x3.jsonl
      ttt export --size 4 --win 4 --where 'ply<=4' --where value=win
    """
    where = RowFilter(tuple(c for text in wheres for c in parse_where(text)))
    refuse_book_as_output(output, book_files(db))  # before the book is opened
    with open_book(db) as book:
        book.game(rules)  # a missing game is an error before any output
        with output_file(output, book_files(db)) as stream:
            try:
                with closing(export_rows(book, rules, where, expand)) as rows:
                    written, terminal = write_rows(rows, stream, fmt)
            except BrokenPipeError:
                # The reader stopped early (| head): not an error. Point stdout at nothing so
                # that Python's exit flush does not fail again.
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return
    if not quiet:
        click.echo(
            f"{count(written)} rows ({count(terminal)} terminal) of {rules.name}"
            f"{', every reachable position' if expand else ', canonical positions'}",
            err=True,
        )


if __name__ == "__main__":  # pragma: no cover
    raise CliError("run as: ttt export")
