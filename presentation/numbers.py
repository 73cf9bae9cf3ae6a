"""Numbers as people read them, written once for every report, table and page: counts with
thousands separators, shares as percentages, ratings on the Elo scale.

A share that could not be measured (nothing was judged) is ``-``, never ``0%``.
"""

from __future__ import annotations

from collections.abc import Sequence


def count(n: int) -> str:
    """``1234567`` -> ``1,234,567``."""
    return f"{n:,}"


def percent(share: float | None) -> str:
    """A share as a percentage to two decimals, or ``-`` where there is none: the same in the
    repr, the tables, the HTML and the web pages."""
    return "-" if share is None else f"{100 * share:.2f}%"


def share_interval(share: Sequence[float] | None) -> str:
    """A share over seeds with its interval, ``(mean, low, high)``: ``96.50% [95.1-97.9]``
    (the interval left out where it is a point; ``-`` for ``None``, nothing judged)."""
    if share is None:
        return percent(None)
    mean, low, high = share
    if low == high:
        return percent(mean)
    return f"{percent(mean)} [{100 * low:.1f}-{100 * high:.1f}]"


def elo(value: float) -> str:
    """A rating on the Elo scale, to the point (never ``-0``)."""
    return f"{value:.0f}" if abs(value) >= 0.5 else "0"


def elo_interval(mean: float, low: float, high: float) -> str:
    """A rating with its interval: ``312 [280 to 344]``."""
    return f"{elo(mean)} [{elo(low)} to {elo(high)}]"


def likelihood(share: float | None) -> str:
    """A likelihood of superiority as people read it: a percentage, never rounded up (or
    down) to a certainty."""
    if share is None:
        return ""
    if share > 0.999:
        return ">99.9%"
    if share < 0.001:
        return "<0.1%"
    return f"{100 * share:.1f}%"


def score(share: float) -> str:
    """A score (points per game) as a percentage to one decimal."""
    return f"{100 * share:.1f}%"
