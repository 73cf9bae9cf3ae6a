"""Charts take their colours from the project's palette: a series named for a value in that
value's colours, the others in the palette's series colours, and every bar below the frame."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from matplotlib.colors import to_hex  # noqa: E402

from ttt_solve.presentation import charts  # noqa: E402
from ttt_solve.presentation.palette import SERIES, VALUES, value_colours  # noqa: E402
from ttt_solve.solver.value import Outcome  # noqa: E402


def test_value_series_are_drawn_in_their_values_colours():
    assert value_colours("draw") == VALUES[Outcome.DRAW] and value_colours("reachable") is None
    for stacked in (True, False):
        figure = charts.bar_chart(
            ["0", "1", "2"],
            {"win": [0, 2358, 0], "draw": [16, 80, 200], "loss": [942, 0, 508]},
            title="t",
            xlabel="x",
            ylabel="y",
            stacked=stacked,
        )
        axes = figure.axes[0]
        fills = [to_hex(bar.get_facecolor()) for bar in axes.patches]
        assert fills == [VALUES[o].fill for o in Outcome for _ in range(3)]
        tallest = max(bar.get_y() + bar.get_height() for bar in axes.patches)
        assert axes.get_ylim()[1] >= tallest * 1.15  # room above it for the legend
        labels = [text.get_text() for text in axes.get_legend().get_texts()]
        assert labels == ["win", "draw", "loss"]


def test_other_series_take_the_palettes_series_colours_in_order():
    figure = charts.bar_chart(
        ["a", "b"], {"reachable": [5, 9], "canonical": [2, 3]}, title="t", xlabel="x", ylabel="y"
    )
    fills = [to_hex(bar.get_facecolor()) for bar in figure.axes[0].patches]
    assert fills == [SERIES[0]] * 2 + [SERIES[1]] * 2
    lines = charts.line_chart(
        [charts.Series(name, [0, 1], [0.5, 0.7]) for name in ("accuracy", "perfection", "win")],
        title="t",
        xlabel="x",
        ylabel="y",
    )
    colours = [to_hex(line.get_color()) for line in lines.axes[0].get_lines()]
    assert colours == [SERIES[0], SERIES[1], VALUES[Outcome.WIN].edge]
