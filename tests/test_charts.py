"""The chart module: deterministic, accessible SVG and PNG; matplotlib only when drawing."""

from __future__ import annotations

import io
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from ttt_solve.errors import TttError
from ttt_solve.presentation import charts

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"


def curve() -> charts.Figure:
    return charts.line_chart(
        [
            charts.Series(
                "mcts",
                [10, 100, 1000],
                [0.9, 0.98, 1.0],
                low=[0.88, 0.97, 1.0],
                high=[0.92, 0.99, 1.0],
                links=["/audit?i=10", "/audit?i=100", "/audit?i=1000"],
            ),
            charts.Series("openspiel:mcts", [10, 100, 1000], [0.8, 0.95, 0.99]),
        ],
        title="3x3 k=3, every position",
        xlabel="iterations",
        ylabel="accuracy",
        log_x=True,
        percent=True,
        ylim=(0, 1),
    )


def test_importing_the_module_does_not_import_matplotlib():
    code = "import sys, ttt_solve.presentation.charts; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_svg_is_deterministic_and_accessible():
    first, second = charts.render(curve(), "svg"), charts.render(curve(), "svg")
    assert first == second
    root = ET.fromstring(first)
    assert root.find(f"{SVG}title").text == "3x3 k=3, every position"
    text = first.decode()
    # Text stays text: the title, both axis labels, the legend's entries and percent ticks.
    for words in ("3x3 k=3, every position", "iterations", "accuracy", "openspiel:mcts", "100%"):
        assert f">{words}<" in text, words
    assert "<dc:date>" not in text  # no date: the bytes depend on the figures alone
    links = [a.get(f"{XLINK}href") for a in root.iter(f"{SVG}a")]
    assert links == ["/audit?i=10", "/audit?i=100", "/audit?i=1000"]


def test_png_is_deterministic():
    from PIL import Image

    first, second = charts.render(curve(), "png"), charts.render(curve(), "png")
    assert first == second and first.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(first)) as image:
        assert image.size == (750, 450)


@pytest.mark.parametrize(
    "shares", [[1.0, 1.0, 1.0], [0.97, 0.99, 1.0]], ids=["all 100%", "near 100%"]
)
def test_share_axes_run_from_0_to_100_percent(shares):
    figure = charts.line_chart(
        [charts.Series("accuracy", [1, 2, 3], shares)],
        title="every move kept the value",
        xlabel="ply",
        ylabel="share of moves",
        percent=True,
    )
    low, high = figure.axes[0].get_ylim()
    assert low == 0 and 1 <= high <= 1.05
    ticks = [tick for tick in figure.axes[0].get_yticks() if low <= tick <= high]
    assert max(ticks) == pytest.approx(1.0)  # the top tick is 100%, none above it


def test_panels_share_one_legend():
    series = [charts.Series(name, [1, 2], [0.5, 0.6]) for name in ("alpha", "beta")]
    figure = charts.line_panels(
        [charts.Panel("accuracy", series), charts.Panel("perfection", series)],
        title="two panels",
        xlabel="depth",
    )
    assert len(figure.axes) == 2
    assert figure.axes[0].get_legend() is not None and figure.axes[1].get_legend() is None
    text = charts.render(figure, "svg").decode()
    assert text.count(">alpha<") == 1 and ">perfection<" in text


def test_bar_chart():
    for stacked in (False, True):
        figure = charts.bar_chart(
            ["X wins", "draw", "O wins"],
            {"mcts": [3, 5, 2], "perfect": [0, 10, 0]},
            title="results",
            xlabel="outcome",
            ylabel="games",
            stacked=stacked,
        )
        heights = sorted(round(p.get_height()) for p in figure.axes[0].patches)
        assert heights == [0, 0, 2, 3, 5, 10]
        text = charts.render(figure, "svg").decode()
        for words in ("X wins", "O wins", "mcts", "perfect", "results", "games"):
            assert f">{words}<" in text, words


def test_save_picks_the_format_from_the_extension(tmp_path):
    charts.save(curve(), str(tmp_path / "a.SVG"))
    charts.save(curve(), str(tmp_path / "a.png"))
    assert (tmp_path / "a.SVG").read_bytes().startswith(b"<?xml")
    assert (tmp_path / "a.png").read_bytes().startswith(b"\x89PNG")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.SVG", "a.png"]  # no temporary left
    with pytest.raises(charts.ChartFormatError, match=r"\.svg or \.png"):
        charts.save(curve(), str(tmp_path / "a.pdf"))
    with pytest.raises(charts.ChartFormatError):
        charts.render(curve(), "pdf")


def test_check_target(tmp_path):
    assert charts.check_target(str(tmp_path / "c.png")) == "png"
    for bad, words in [
        (tmp_path / "c.jpeg", "must end in"),
        (tmp_path / "missing" / "c.svg", "no folder"),
    ]:
        with pytest.raises(charts.ChartFormatError, match=words) as caught:
            charts.check_target(str(bad))
        assert isinstance(caught.value, TttError) and isinstance(caught.value, ValueError)
    (tmp_path / "d.svg").mkdir()
    with pytest.raises(charts.ChartFormatError, match="is a folder"):
        charts.check_target(str(tmp_path / "d.svg"))


def test_lengths_must_match():
    with pytest.raises(ValueError, match="2 y values for 3 x values"):
        charts.line_chart(
            [charts.Series("a", [1, 2, 3], [0.1, 0.2])], title="t", xlabel="x", ylabel="y"
        )
    with pytest.raises(ValueError, match="1 values for 2 bars"):
        charts.bar_chart(["a", "b"], {"g": [1]}, title="t", xlabel="x", ylabel="y")


def test_a_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    with pytest.raises(charts.ChartsUnavailableError, match=r"pip install 'ttt-solve\[plot\]'"):
        charts.line_chart([], title="t", xlabel="x", ylabel="y")
    with pytest.raises(TttError):
        charts.require()
