"""``ttt atlas``: decide every small m,n,k-game and publish the table."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import click
from tabulate import tabulate

from ttt_solve.cli.common import CliError, LazyProgress, friendly_errors, jobs_option
from ttt_solve.cli.options import command
from ttt_solve.solver.prover.atlas import LARGEST_SIDE, Entry, atlas_games, decide_games

HEADERS = ["game", "--size --win", "value for X", "remoteness", "method", "nodes", "seconds"]
"""The table's columns (the JSON holds the same and more)."""


@command("atlas")
@click.option(
    "--seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    metavar="S",
    help="Time allowed to decide each game.",
)
@click.option(
    "--max-cells",
    type=click.IntRange(1, LARGEST_SIDE * LARGEST_SIDE),
    default=None,
    metavar="N",
    help="Stop at boards of N cells (a quick table). Default: every board up to 8x8.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, writable=True),
    default="atlas.json",
    show_default=True,
    help="Write the atlas here as JSON.",
)
@click.option(
    "--markdown",
    "markdown_path",
    type=click.Path(dir_okay=False, writable=True),
    default="atlas.md",
    show_default=True,
    help="Write the atlas here as a Markdown table.",
)
@jobs_option("Games decided at once, one process each.", memory_per_job=1 << 28)
@friendly_errors
def atlas(
    seconds: float, max_cells: int | None, json_path: str, markdown_path: str, jobs: int
) -> None:
    """Decide every game (R, C, k) with 1 <= R <= C <= 8 and 3 <= k <= 6.

    Each game is decided by the first method that does, within --seconds: a rule (k > C: no
    line fits, a draw), the exhaustive solver (boards of at most 16 cells), a pairing for
    each side, a win by continuous threats, or the alpha-beta prover (a draw needs only the
    proof that X cannot win: X never loses, by strategy stealing). Prints the table, writes
    it as JSON and Markdown, and checks every entry against the published values: a
    disagreement exits with status 1.

    \b
    Example:
      ttt atlas --max-cells 25 --seconds 10
      ttt atlas --jobs 2
    """
    for path in (json_path, markdown_path):
        _check_writable(path)
    games = atlas_games(max_cells)
    started = time.perf_counter()
    progress = LazyProgress("deciding")
    entries: list[Entry] = []
    try:
        for entry in decide_games(games, seconds, jobs):
            entries.append(entry)
            progress(len(entries), len(games))
    finally:
        progress.close()
    entries.sort(key=lambda entry: (entry.rows * entry.cols, entry.rows, entry.k))
    wall = time.perf_counter() - started
    click.echo(tabulate([_row(entry) for entry in entries], headers=HEADERS, disable_numparse=True))
    document = {
        "games": [entry.as_dict() for entry in entries],
        "seconds_per_game": seconds,
        "max_cells": max_cells,
        "jobs": jobs,
        "wall_seconds": round(wall, 1),
    }
    _write(json_path, json.dumps(document, indent=1) + "\n")
    _write(markdown_path, markdown(entries, seconds, max_cells, jobs, wall))
    decided = sum(entry.value != "unknown" for entry in entries)
    click.echo(
        f"{decided} of {len(entries)} games decided in {wall:,.0f} s; "
        f"written to {json_path} and {markdown_path}",
        err=True,
    )
    wrong = [entry for entry in entries if not entry.agrees]
    for entry in wrong:
        click.echo(
            f"({entry.rows}x{entry.cols}, k={entry.k}): found {entry.value}, "
            f"published {entry.published}",
            err=True,
        )
    if wrong:
        sys.exit(1)


def _row(entry: Entry) -> list[Any]:
    """One line of the printed table."""
    return [
        f"{entry.rows}x{entry.cols} k={entry.k}",
        _size_option(entry),
        entry.value,
        "" if entry.remoteness is None else entry.remoteness,
        entry.method,
        f"{entry.nodes:,}",
        f"{entry.seconds:.2f}",
    ]


def _size_option(entry: Entry) -> str:
    """The ``--size``/``--win`` options that name the game (none for a k the board cannot
    hold: the rules refuse it)."""
    if entry.k > entry.cols:
        return "-"
    size = str(entry.rows) if entry.rows == entry.cols else f"{entry.rows}x{entry.cols}"
    return f"--size {size} --win {entry.k}"


def markdown(
    entries: list[Entry], seconds: float, max_cells: int | None, jobs: int, wall: float
) -> str:
    """The atlas as a Markdown page: the command, the table and what each method rests on."""
    limit = "" if max_cells is None else f" --max-cells {max_cells}"
    lines = [
        "# m,n,k-games: the atlas",
        "",
        f"Made by `ttt atlas --seconds {seconds:g}{limit} --jobs {jobs}` in {wall:,.0f} s.",
        "Values are for X, who moves first; R rows, C columns, k in a row.",
        "",
        "| R | C | k | value for X | remoteness | method | note | nodes | seconds | published |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for entry in entries:
        lines.append(
            f"| {entry.rows} | {entry.cols} | {entry.k} | {entry.value} | "
            f"{'' if entry.remoteness is None else entry.remoteness} | {entry.method} | "
            f"{entry.note} | {entry.nodes:,} | {entry.seconds:.2f} | {entry.published or ''} |"
        )
    return "\n".join(lines) + "\n"


def _check_writable(path: str) -> None:
    """Refuse, before any game is decided, a file the atlas could not be written to at the
    end (the full atlas runs for hours)."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CliError(f"cannot write {path}: no folder {folder}")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise CliError(f"cannot write {path}: permission denied")


def _write(path: str, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temporary file, then a rename)."""
    temporary = f"{path}.tmp"
    try:
        with open(temporary, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except OSError as error:
        raise CliError(f"cannot write {path}: {error.strerror}") from error
