"""The explorer's charts of counts and rates, drawn by :mod:`ttt_solve.presentation.charts` as
SVG and put inline in the pages, in the palette's colours (a value's series in that value's colour).
Boards and value histories are drawn by :mod:`ttt_solve.presentation.svg`."""

from __future__ import annotations

from typing import Any

from ttt_solve.agents.audit import Summary
from ttt_solve.book.records import GameInfo
from ttt_solve.solver.value import Outcome


def _svg(figure: object) -> str:
    from ttt_solve.presentation import charts

    svg = charts.render(figure, "svg").decode()  # type: ignore[arg-type]
    return svg[svg.index("<svg") :]  # inline: without the XML prolog and doctype


def _counts(figure: Any) -> Any:
    """The figure with its counts written out in full (``1,200,000``), not in units of a
    power of ten written above the axis (``1.2`` under ``1e6``)."""
    from matplotlib.ticker import FuncFormatter

    for axes in figure.axes:
        axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    return figure


def positions_by_ply(info: GameInfo) -> str:
    from ttt_solve.presentation import charts

    figures = info.figures
    plies = sorted(figures.by_ply["reachable"])
    return _svg(
        _counts(
            charts.bar_chart(
                [str(p) for p in plies],
                {
                    weight: [figures.by_ply[weight].get(p, 0) for p in plies]
                    for weight in ("reachable", "canonical")
                },
                title=f"{info.rules.name}: positions by ply",
                xlabel="ply",
                ylabel="positions",
            )
        )
    )


def remoteness(info: GameInfo) -> str:
    from ttt_solve.presentation import charts

    table = info.figures.remoteness["reachable"]
    depths = sorted({r for outcome in Outcome for r in table[outcome]})
    return _svg(
        _counts(
            charts.bar_chart(
                [str(r) for r in depths],
                {outcome: [table[outcome].get(r, 0) for r in depths] for outcome in Outcome},
                title=f"{info.rules.name}: reachable positions by remoteness, for the side to move",
                xlabel="remoteness (plies to the end under perfect play)",
                ylabel="positions",
                stacked=True,
            )
        )
    )


def audit_by_ply(summary: Summary, agent: str) -> str:
    from ttt_solve.presentation import charts

    plies = [row.ply for row in summary.by_ply]
    return _svg(
        charts.line_chart(
            [
                charts.Series("accuracy", plies, [row.accuracy for row in summary.by_ply]),
                charts.Series("perfection", plies, [row.perfection for row in summary.by_ply]),
            ],
            title=f"{agent}: accuracy and perfection by ply",
            xlabel="ply",
            ylabel="share of moves",
            percent=True,
            ylim=(0, 1.02),
        )
    )
