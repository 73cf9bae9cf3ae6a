"""``ttt stats``: the analysis of a solved game, from the figures stored with it."""

from __future__ import annotations

import json

import click
from tabulate import tabulate

from ttt_solve.book.reader import open_book
from ttt_solve.book.records import GameInfo
from ttt_solve.book.stats import WEIGHTS, report
from ttt_solve.cli.common import db_option, friendly_errors, game_options
from ttt_solve.cli.options import command
from ttt_solve.presentation.numbers import count
from ttt_solve.solver.figures import Figures
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome


def text_report(info: GameInfo, data: dict, db: str) -> str:
    """The report for people: a heading, then one table per figure."""
    figures = info.figures
    return "\n\n".join(
        [
            *_heading(info, db),
            "Positions by ply\n" + _plies(figures),
            "Outcomes\n" + _outcomes(figures),
            "Terminal positions\n" + _terminal(figures),
            "Remoteness (plies to the end under perfect play), for the side to move\n"
            + _remoteness(figures),
            _longest(data),
        ]
    )


def _heading(info: GameInfo, db: str) -> list[str]:
    """The game and its value; the book, how the game was solved and when."""
    rules = info.rules
    return [
        f"{rules.name} ({rules.rows} rows x {rules.cols} columns, {rules.k} in a row): "
        f"{info.value.outcome.value} for X, remoteness {info.value.remoteness}",
        f"book {db}: {info.method}"
        + (
            f", opening book to ply {info.book_depth}: the figures cover plies 0..{info.book_depth}"
            if info.book_depth is not None
            else ", every reachable position"
        )
        + f"; solved {info.solved_at:%Y-%m-%d %H:%M} UTC in {info.seconds:.2f} s",
    ]


def _plies(figures: Figures) -> str:
    by_ply = figures.by_ply
    rows: list[tuple[object, ...]] = [
        (
            p,
            "X" if p % 2 == 0 else "O",
            count(by_ply["reachable"][p]),
            count(by_ply["canonical"].get(p, 0)),
        )
        for p in sorted(by_ply["reachable"])
    ]
    rows.append(("total", "", count(figures.reachable), count(figures.canonical)))
    return tabulate(
        rows,
        headers=("ply", "to move", "reachable", "canonical"),
        colalign=("right", "center", "right", "right"),
    )


def _outcomes(figures: Figures) -> str:
    rows = [
        (
            f"{outcome} for {label}",
            count(source["reachable"][outcome]),
            count(source["canonical"][outcome]),
        )
        for label, source in (("side to move", figures.values), ("X", figures.values_for_x))
        for outcome in Outcome
    ]
    return tabulate(
        rows, headers=("", "reachable", "canonical"), colalign=("left", "right", "right")
    )


def _terminal(figures: Figures) -> str:
    terminal = figures.terminal
    rows = [
        (label, count(terminal["reachable"][key]), count(terminal["canonical"][key]))
        for label, key in (("X wins", "x"), ("O wins", "o"), ("draws", "draw"))
    ]
    rows.append(
        (
            "total",
            count(sum(terminal["reachable"].values())),
            count(sum(terminal["canonical"].values())),
        )
    )
    return tabulate(
        rows, headers=("", "reachable", "canonical"), colalign=("left", "right", "right")
    )


def _remoteness(figures: Figures) -> str:
    table = figures.remoteness
    depths = sorted({r for w in WEIGHTS for o in Outcome for r in table[w][o]})
    rows = [
        (r, *(count(table[w][o].get(r, 0)) for w in WEIGHTS for o in ("win", "loss", "draw")))
        for r in depths
    ]
    return tabulate(
        rows,
        headers=("r", "win", "loss", "draw", "win (canon.)", "loss (canon.)", "draw (canon.)"),
        colalign=("right",) * 7,
    )


def _longest(data: dict) -> str:
    lines = []
    for outcome in (Outcome.WIN, Outcome.LOSS):
        found = data[f"longest_{outcome}"]
        if found is None:
            lines.append(f"longest {outcome}: none (no position is a {outcome} for its mover)")
        else:
            lines.append(
                f"longest {outcome}: remoteness {found['remoteness']} "
                f"({count(found['positions'])} positions), e.g. {found['example']}"
            )
    return "\n".join(lines)


@command("stats")
@game_options
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@friendly_errors
def stats(rules: Rules, db: str, as_json: bool) -> None:
    """Analyse a solved game: positions by ply, outcomes, terminal results, remoteness.

    Counts are over every reachable position and over the canonical ones (up to symmetry).
    Values are for the side to move unless said "for X". The longest win and loss are the
    largest remoteness of a won and of a lost position, with an example.

    \b
    Examples:
      ttt stats --size 3 --win 3
      ttt stats --size 4 --win 4 --db 4x4.sqlite --json
    """
    with open_book(db) as book:
        info = book.game(rules)
        data = report(book, info)
        if as_json:
            click.echo(json.dumps(data))
        else:
            click.echo(text_report(info, data, book.display_url))
