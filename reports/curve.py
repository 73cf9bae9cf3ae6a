"""Strength curves' report (:class:`~ttt_solve.agents.curve.CurveReport`): ``ttt curve``'s
tables, the notebook's HTML and the chart of accuracy and perfection against the parameter."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from tabulate import tabulate

from ttt_solve.presentation import charts, html
from ttt_solve.presentation.numbers import elo_interval, share_interval
from ttt_solve.reports.audit import game_rows
from ttt_solve.solver.value import BlunderKind

if TYPE_CHECKING:
    from ttt_solve.agents.curve import Curve, CurveReport, Point
    from ttt_solve.agents.intervals import Interval

LOG_SCALE_RATIO = 100
"""Values spanning this factor or more (two decades) are plotted on a log scale."""


def curve_lines(report: CurveReport) -> list[str]:
    """``ttt curve``'s report: what was audited, the seeds, a table per agent, and the value
    from which each kept the value."""
    seeds = report.seeds
    lines = [f"curve on {report.rules.name}, {report.mode}; truth: {report.truth}"]
    lines.append(
        f"seed {seeds[0]}"
        if len(seeds) == 1
        else f"seeds {seeds[0]} to {seeds[-1]}; shares are the mean over seeds "
        f"[95% interval]; blunders: mean per seed"
        + ("; games: summed over seeds" if report.games_mode else "")
    )
    for one in report.curves:
        lines.append("")
        lines.append(
            tabulate(
                curve_rows(one, report.games_mode),
                headers=curve_headers(one, report.games_mode),
                tablefmt="simple_outline",
                disable_numparse=True,
            )
        )
        lines.append(kept_sentence(one))
    return lines


def curve_html(report: CurveReport) -> str:
    """Strength curves: the chart and one table per agent, as the terminal's."""
    parts = [
        html.heading(f"Strength curves: {report.title}"),
        html.chart_or_nothing(report.chart),
    ]
    for one in report.curves:
        parts.append(
            html.table(curve_rows(one, report.games_mode), curve_headers(one, report.games_mode))
        )
        parts.append(f"<div>{escape(kept_sentence(one))}</div>")
    return html.frame("".join(parts))


def kept_sentence(one: Curve) -> str:
    kept = one.kept_value_from
    if kept is None:
        return f"{one.agent}: no value tried kept the value in every position asked, every seed."
    return (
        f"{one.agent}: kept the value in every position asked, every seed, from "
        f"{one.param}={kept.value} (the smallest such value tried)."
    )


def curve_headers(one: Curve, games_mode: bool) -> list[str]:
    headers = [one.param, "accuracy", "perfection", *BlunderKind]
    if curve_failed(one):
        headers.append("failed moves")
    if games_mode:
        headers += ["as X: won/drawn/lost", "as O: won/drawn/lost"]
    if one.points[0].rating is not None:
        headers.append("rating [95%]")
    return [f"{one.agent}: {one.param}", *headers[1:]]


def curve_failed(one: Curve) -> bool:
    """Whether any point of a curve failed a move (its tables then count them)."""
    return any(point.failed_moves() for point in one.points)


def curve_rows(one: Curve, games_mode: bool) -> list[list[str]]:
    """One row per point of a curve."""
    failed = curve_failed(one)
    return [curve_row(point, games_mode, failed) for point in one.points]


def curve_row(point: Point, games_mode: bool, failed: bool) -> list[str]:
    kinds = point.blunder_kinds()
    row = [
        point.value,
        share_interval(point.accuracy),
        share_interval(point.perfection),
        *(f"{kinds[kind]:,.1f}" for kind in BlunderKind),
    ]
    if failed:
        row.append(f"{point.failed_moves():,.1f}")
    if games_mode:
        for _label, _games, won, drawn, lost, *_ in game_rows(point.games()):
            row.append(f"{won}/{drawn}/{lost}")
    if point.rating is not None:
        row.append(elo_interval(*point.rating))
    return row


def curve_chart(curves: Sequence[Curve], title: str) -> charts.Figure:
    """Accuracy and perfection against the parameter, one line per agent, intervals drawn
    (and each point's rating, in a panel of its own, when the curves were rated)."""
    xs = [point.x for one in curves for point in one.points]
    log_x = min(xs) > 0 and max(xs) / min(xs) >= LOG_SCALE_RATIO
    params = list(dict.fromkeys(one.param for one in curves))

    def series(pick: Callable[[Any], Interval | None]) -> list[charts.Series]:
        out = []
        for one in curves:
            values = [value for value in map(pick, one.points) if value is not None]
            out.append(
                charts.Series(
                    one.agent,
                    [point.x for point in one.points],
                    [value.mean for value in values],
                    [value.low for value in values],
                    [value.high for value in values],
                )
            )
        return out

    panels = [
        charts.Panel("accuracy (value kept)", series(lambda point: point.accuracy)),
        charts.Panel("perfection", series(lambda point: point.perfection)),
    ]
    rated = all(point.rating is not None for one in curves for point in one.points)
    if rated:
        panels.append(
            charts.Panel("rating (Elo, random = 0)", series(lambda point: point.rating), False)
        )
    return charts.line_panels(
        panels,
        title=title,
        xlabel=" / ".join(params),
        log_x=log_x,
        percent=True,
        sharey=not rated,
    )
