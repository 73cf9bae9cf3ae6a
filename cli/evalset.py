"""``ttt evalset``: write a frozen, seeded evaluation set of decisive positions."""

from __future__ import annotations

from pathlib import Path

import click

from ttt_solve.book.reader import open_book
from ttt_solve.cli.common import LazyProgress, db_option, friendly_errors, game_options
from ttt_solve.cli.options import command, count_option, quiet_option, seed_option
from ttt_solve.presentation.numbers import count as with_commas
from ttt_solve.rl.evalset import DEFAULT_COUNT, TEST_SHARE, build
from ttt_solve.solver.rules import Rules

FORMATS = ("jsonl", "parquet")
MAX_SET_POSITIONS = 1_000_000
"""The most positions one set holds: each is a labelled line, and a set is read whole."""


@command("evalset")
@game_options
@db_option
@count_option(
    "--count",
    DEFAULT_COUNT,
    "Positions in the set (fewer if the game has fewer).",
    MAX_SET_POSITIONS,
)
@seed_option("The order in which positions are drawn.")
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Folder to write the set into.",
)
@click.option(
    "--format",
    "formats",
    type=click.Choice(FORMATS),
    multiple=True,
    default=FORMATS,
    show_default=True,
    help="File formats to write (repeat for both).",
)
@quiet_option()
@friendly_errors
def evalset(
    rules: Rules,
    db: str,
    count: int,
    seed: int,
    out: Path,
    formats: tuple[str, ...],
    quiet: bool,
) -> None:
    """Write an evaluation set: decisive positions (where some move loses the value) with
    their value, remoteness, best moves and every move's value, from the book.

    One position per symmetry class, drawn in the order SEED gives; each is in the train or
    the test split by a hash of its key alone (test: about {test}%). Prints the files and the
    set's checksum (SHA-256 of its JSON lines), which names the set. See docs/rl.md.

    \b
    Examples:
      ttt evalset --size 3 --win 3
      ttt evalset --size 4 --win 4 --count 5000 --seed 1 --out sets --format jsonl
    """
    progress = LazyProgress("decisive positions", enabled=not quiet)
    with open_book(db) as book:
        try:
            made = build(book, rules, count=count, seed=seed, progress=progress)
        finally:
            progress.close()
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"{rules.rows}x{rules.cols}k{rules.k}-seed{seed}-n{count}"
    for kind in dict.fromkeys(formats):
        path = stem.with_suffix(f".{kind}")
        made.write_jsonl(path) if kind == "jsonl" else made.write_parquet(path)
        click.echo(f"wrote {path}")
    test = len(made.split("test"))
    click.echo(
        f"{rules.name}: {with_commas(len(made))} decisive positions "
        f"({with_commas(len(made) - test)} train, {with_commas(test)} test), seed {seed}"
    )
    click.echo(f"sha256 {made.checksum}")


evalset.help = (evalset.help or "").replace("{test}", f"{TEST_SHARE * 100:g}")
