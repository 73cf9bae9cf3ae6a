"""The explorer's charts, drawn by :mod:`ttt_solve.charts` as SVG and put inline in the pages
(inline, so that the links on a chart's points can be followed)."""

from __future__ import annotations

from collections.abc import Sequence

from ttt_solve.agents.audit import Summary
from ttt_solve.book.oracle import Analysis
from ttt_solve.book.reader import GameInfo
from ttt_solve.solver.value import Outcome

OUTCOMES = ("win", "draw", "loss")


def _svg(figure: object) -> str:
    from ttt_solve import charts

    svg = charts.render(figure, "svg").decode()  # type: ignore[arg-type]
    return svg[svg.index("<svg") :]  # inline: without the XML prolog and doctype


def value_for_x(analysis: Analysis) -> int:
    """The value history's y: remoteness when X wins, minus it when O wins, 0 for a draw."""
    value = analysis.value
    sign = value.outcome.sign if analysis.position.x_to_move else -value.outcome.sign
    return sign * value.remoteness if value.outcome is not Outcome.DRAW else 0


def value_history(answers: Sequence[Analysis], links: Sequence[str]) -> str:
    """GamesmanUni's "visual value history": one point per ply, each a link to its position."""
    from ttt_solve import charts

    cells = answers[0].position.rules.cells if answers else 1
    series = charts.Series(
        "value for X",
        [a.position.ply for a in answers],
        [value_for_x(a) for a in answers],
        links=list(links),
    )
    return _svg(
        charts.line_chart(
            [series],
            title="Value history for X (above 0: X wins in N; below: O wins in N; 0: draw)",
            xlabel="ply",
            ylabel="remoteness, signed for X",
            ylim=(-cells - 0.5, cells + 0.5),  # the whole range: a draw sits in the middle
        )
    )


def positions_by_ply(info: GameInfo) -> str:
    from ttt_solve import charts

    figures = info.figures
    plies = sorted(figures.by_ply["reachable"])
    return _svg(
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


def remoteness(info: GameInfo) -> str:
    from ttt_solve import charts

    table = info.figures.remoteness["reachable"]
    depths = sorted({r for outcome in OUTCOMES for r in table[outcome]})
    return _svg(
        charts.bar_chart(
            [str(r) for r in depths],
            {outcome: [table[outcome].get(r, 0) for r in depths] for outcome in OUTCOMES},
            title=f"{info.rules.name}: reachable positions by remoteness, for the side to move",
            xlabel="remoteness (plies to the end under perfect play)",
            ylabel="positions",
            stacked=True,
        )
    )


def audit_by_ply(summary: Summary, agent: str) -> str:
    from ttt_solve import charts

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
