"""``ttt rate``: ratings against the reference ladder; and how every command shows ratings."""

from __future__ import annotations

from typing import Any

import click
from tabulate import tabulate

from ttt_solve.cli.options import Decorator

anchor_option: Decorator = click.option(
    "--anchor",
    default=None,
    metavar="SPEC=RATING",
    help="The agent whose rating is fixed, and its rating (default: random=0 when random "
    "plays, else the mean rating is 0).",
)
bootstrap_option: Decorator = click.option(
    "--bootstrap",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    metavar="N",
    help="Rating intervals from N refits on resampled games (seeded with --seed) instead of "
    "the likelihood's curvature.",
)


def elo(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 0.5 else "0"


def likelihood_text(share: float | None) -> str:
    """A likelihood of superiority as a percentage, never rounded up to a certainty."""
    if share is None:
        return ""
    if share > 0.999:
        return ">99.9%"
    if share < 0.001:
        return "<0.1%"
    return f"{100 * share:.1f}%"


def ratings_rows(ratings: Any, marked: str | None = None) -> list[list[str]]:
    """One row per agent, best first; ``marked`` (an agent label) gets a ``*``."""
    rows = []
    for rank, one in enumerate(ratings.rated, 1):
        low, high = one.rating.low, one.rating.high
        shown = "-" if low == high else f"{elo(low)} to {elo(high)}"
        rows.append(
            [
                str(rank),
                one.agent + (" *" if one.agent == marked else ""),
                elo(one.rating.mean),
                shown,
                f"{one.games:,}",
                f"{100 * one.score:.1f}%",
                likelihood_text(one.stronger_than_next),
            ]
        )
    return rows


HEADERS = ["#", "agent", "rating", "95% interval", "games", "score", "stronger than next"]


def model_text(ratings: Any) -> str:
    """The fitted first-move advantage and draw parameter, the anchor and the intervals."""
    anchor = (
        f"{ratings.anchor} = {elo(ratings.anchor_rating)}"
        if ratings.anchor
        else f"the mean = {elo(ratings.anchor_rating)}"
    )
    parts = [f"anchor: {anchor}"]
    if ratings.first_move is not None:
        first = ratings.first_move
        parts.append(
            f"first move worth {elo(first.mean)} [{elo(first.low)} to {elo(first.high)}]"
        )
    parts.append(f"draw parameter nu {ratings.nu:.3g}")
    parts.append(f"prior: {ratings.prior_draws:g} virtual draws per pair")
    if ratings.method == "bootstrap":
        parts.append(f"intervals: bootstrap of {ratings.resamples} resamples (seed {ratings.seed})")
    else:
        parts.append("intervals: likelihood")
    return "; ".join(parts)


def ratings_lines(ratings: Any, marked: str | None = None) -> list[str]:
    """The ratings as the commands print them: a title, the table, the model's figures."""
    return [
        "ratings (Elo scale, Davidson model: draws and the first move modelled; 95% intervals):",
        tabulate(
            ratings_rows(ratings, marked),
            headers=HEADERS,
            tablefmt="simple_outline",
            disable_numparse=True,
        ),
        model_text(ratings),
    ]
