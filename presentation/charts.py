"""The one chart module: line and bar charts as SVG or PNG, for every command that draws.

``ttt audit --plot``, ``ttt curve --plot`` and the web explorer all draw through these few
functions, so a chart looks the same wherever it appears. matplotlib is an optional extra
(``pip install 'ttt-solve[plot]'``): it is about 30 MB and only plots need it, so it is imported
inside the functions, importing this module costs nothing, and a missing matplotlib raises
:class:`ChartsUnavailableError` naming the extra.

Charts are deterministic: the SVG ids come from a fixed salt and no date is written, so the same
figures give the same bytes and tests can compare them. They are accessible: every chart has a
title, labelled axes and a legend; SVG text stays text (not glyph outlines), so it can be
searched, read aloud and copied.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from ttt_solve.errors import TttError, install_hint
from ttt_solve.presentation.palette import SERIES, value_colours

if TYPE_CHECKING:
    from matplotlib.figure import Figure as Figure  # re-exported for annotations elsewhere

FORMATS = ("svg", "png")

# Applied while a figure is built and while it is written: a fixed hash salt makes SVG ids
# repeatable; fonttype "none" keeps SVG text as text.
_STYLE: dict[str, Any] = {
    "svg.hashsalt": "ttt-solve",
    "svg.fonttype": "none",
    "font.size": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    # the series' colours from the project's palette, in its order (values: see _colour)
    "axes.prop_cycle": f"cycler('color', {list(SERIES)!r})",
}

# No date, no software version: the bytes depend on the figures alone.
_METADATA: dict[str, dict[str, Any]] = {
    "svg": {"Date": None, "Creator": None},
    "png": {"Software": None},
}

# Room above the tallest bar, as a share of its height: bars and the legend stay inside the frame.
_HEADROOM = 0.22

# Ticks are placed at the data's own x values when there are at most this many of them
# (a parameter swept over 10,30,100,... reads best with exactly those ticks).
_MAX_EXPLICIT_TICKS = 12


class ChartsUnavailableError(TttError):
    """matplotlib, which only plots need, is not installed."""

    def __init__(self) -> None:
        super().__init__(f"plots need matplotlib: {install_hint('plot')}")


class ChartFormatError(TttError, ValueError):
    """A chart file name whose extension names no format this module writes."""


class Series(NamedTuple):
    """One line of a line chart."""

    label: str  # legend entry (an agent spec, "accuracy", ...)
    x: Sequence[float]
    y: Sequence[float]  # shares are given as fractions 0..1 when percent=True
    low: Sequence[float] | None = None  # 95% interval, drawn as a band, if given
    high: Sequence[float] | None = None
    links: Sequence[str] | None = None  # one URL per point: SVG hyperlinks on the markers


SHARE_LIMITS = (0.0, 1.02)
"""The y axis of shares unless a chart says otherwise: 0 to 100%, whatever the points, so that
a chart never magnifies a small difference (matplotlib's own scale runs from 96% to 104% when
every point is 100%), with room above 100% for the markers drawn there."""


def _matplotlib() -> Any:
    """Import matplotlib with the non-interactive Agg backend, or say how to install it."""
    try:
        import matplotlib
    except ImportError as exc:
        raise ChartsUnavailableError() from exc
    matplotlib.use("Agg")
    return matplotlib


def require() -> None:
    """Raise :class:`ChartsUnavailableError` now, before any work, if charts cannot be drawn."""
    _matplotlib()


@contextmanager
def _style() -> Iterator[None]:
    matplotlib = _matplotlib()
    with matplotlib.rc_context(_STYLE):
        yield


def format_of(path: str) -> str:
    """The format a chart file name asks for, from its extension (``.svg`` or ``.png``)."""
    extension = os.path.splitext(path)[1].lower().lstrip(".")
    if extension not in FORMATS:
        raise ChartFormatError(
            f"cannot write a chart as {path!r}: the file name must end in "
            + " or ".join("." + fmt for fmt in FORMATS)
        )
    return extension


def check_target(path: str) -> str:
    """Check, before any work, that a chart can be saved at ``path``; return its format.

    Raises :class:`ChartFormatError` for an unknown extension or a folder that is missing or not
    writable, and :class:`ChartsUnavailableError` if matplotlib is missing.
    """
    fmt = format_of(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ChartFormatError(f"cannot write a chart as {path!r}: no folder {folder!r}")
    if not os.access(folder, os.W_OK):
        raise ChartFormatError(f"cannot write a chart as {path!r}: {folder!r} is not writable")
    if os.path.isdir(path):
        raise ChartFormatError(f"cannot write a chart as {path!r}: it is a folder")
    require()
    return fmt


def _new_figure(title: str, width: float = 7.5) -> Figure:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, 4.5), layout="constrained")
    figure.suptitle(title)
    return figure


def _check_lengths(series: Series) -> None:
    n = len(series.x)
    for name in ("y", "low", "high", "links"):
        values = getattr(series, name)
        if values is not None and len(values) != n:
            raise ValueError(
                f"series {series.label!r}: {len(values)} {name} values for {n} x values"
            )


class Panel(NamedTuple):
    """One of the side-by-side plots of :func:`line_panels`: its y label and its lines;
    ``percent`` overrides the chart's for this panel (a rating beside shares)."""

    ylabel: str
    series: Sequence[Series]
    percent: bool | None = None


def line_chart(
    series: Sequence[Series], *, title: str, xlabel: str, ylabel: str, **style: Any
) -> Figure:
    """Lines with markers, one per series, each with its interval band if it has one;
    ``style``: the keywords of :func:`line_panels` (log_x, percent, ylim)."""
    return line_panels([Panel(ylabel, series)], title=title, xlabel=xlabel, **style)


def line_panels(
    panels: Sequence[Panel],
    *,
    title: str,
    xlabel: str,
    log_x: bool = False,
    percent: bool = False,
    ylim: tuple[float, float] | None = None,
    sharey: bool = True,
) -> Figure:
    """Line charts side by side sharing the x axis (say accuracy and perfection of the same
    agents) and, unless ``sharey`` is false, the y axis; the series of each panel keep their
    colours from panel to panel, so one legend, in the first panel, names them all (even a
    single series: the legend is where a chart names what it shows)."""
    for panel in panels:
        for one in panel.series:
            _check_lengths(one)
    with _style():
        figure = _new_figure(title, width=4.2 * len(panels) + 1.2 if len(panels) > 1 else 7.5)
        # One y scale for all panels, so that they compare at a glance (when they measure alike).
        axes_list = figure.subplots(1, len(panels), squeeze=False, sharex=True, sharey=sharey)[0]
        if not sharey:  # the panels of shares still share their scale
            shared = [
                a
                for a, p in zip(axes_list, panels)
                if (percent if p.percent is None else p.percent)
            ]
            for axes in shared[1:]:
                axes.sharey(shared[0])
        for index, (axes, panel) in enumerate(zip(axes_list, panels)):
            shares = percent if panel.percent is None else panel.percent
            _draw_lines(axes, panel.series, log_x=log_x, percent=shares, ylim=ylim)
            axes.set_xlabel(xlabel)
            axes.set_ylabel(panel.ylabel)
            if index == 0 and panel.series:
                axes.legend(loc="best")
    return figure


def _draw_lines(
    axes: Any,
    series: Sequence[Series],
    *,
    log_x: bool,
    percent: bool,
    ylim: tuple[float, float] | None,
) -> None:
    from matplotlib.ticker import NullFormatter, PercentFormatter, ScalarFormatter

    for one in series:
        value = value_colours(one.label)
        (line,) = axes.plot(
            one.x, one.y, label=one.label, linewidth=1.5, color=value.edge if value else None
        )
        color = line.get_color()
        markers = axes.scatter(one.x, one.y, color=color, s=18, zorder=3)
        if one.links is not None:
            markers.set_urls(list(one.links))
        if one.low is not None and one.high is not None:
            axes.fill_between(one.x, one.low, one.high, color=color, alpha=0.15, linewidth=0)
    if log_x:
        axes.set_xscale("log")
    xs = sorted({float(x) for one in series for x in one.x})
    if 0 < len(xs) <= _MAX_EXPLICIT_TICKS:
        axes.set_xticks(xs)
        axes.xaxis.set_major_formatter(ScalarFormatter())
        axes.xaxis.set_minor_formatter(NullFormatter())
    if percent:
        axes.yaxis.set_major_formatter(PercentFormatter(xmax=1.0))
        if ylim is None:
            ylim = SHARE_LIMITS
    if ylim is not None:
        axes.set_ylim(*ylim)


class Estimate(NamedTuple):
    """One row of :func:`interval_chart`: a label, a value and its interval."""

    label: str
    value: float
    low: float
    high: float
    highlight: bool = False  # drawn in the second colour (an agent among reference ones)


def interval_chart(
    rows: Sequence[Estimate], *, title: str, xlabel: str, legend: tuple[str, str]
) -> Figure:
    """One row per estimate, the first at the top: a dot at the value and a bar across its
    interval (ratings with their 95% intervals); highlighted rows in a colour of their own.
    ``legend`` names the plain rows and the highlighted ones."""
    with _style():
        figure = _new_figure(title, width=7.5)
        figure.set_figheight(max(2.5, 0.45 * len(rows) + 1.4))
        axes = figure.add_subplot()
        colors = _matplotlib().rcParams["axes.prop_cycle"].by_key()["color"][:2]
        named: set[bool] = set()
        for place, row in enumerate(rows):
            y = len(rows) - 1 - place
            color = colors[1] if row.highlight else colors[0]
            axes.plot([row.low, row.high], [y, y], color=color, linewidth=2)
            label = legend[row.highlight] if row.highlight not in named else None
            named.add(row.highlight)
            axes.scatter([row.value], [y], color=color, s=28, zorder=3, label=label)
        axes.set_yticks(range(len(rows)), [row.label for row in reversed(rows)])
        axes.legend(loc="lower right")
        axes.grid(axis="y", visible=False)
        axes.set_xlabel(xlabel)
    return figure


def bar_chart(
    categories: Sequence[str],
    groups: Mapping[str, Sequence[float]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    stacked: bool = False,
) -> Figure:
    """One bar per category and group: side by side, or stacked when ``stacked``."""
    for name, values in groups.items():
        if len(values) != len(categories):
            raise ValueError(f"group {name!r}: {len(values)} values for {len(categories)} bars")
    with _style():
        figure = _new_figure(title)
        axes = figure.add_subplot()
        positions = list(range(len(categories)))
        count = max(len(groups), 1)
        width = 0.8 if stacked else 0.8 / count
        bottoms = [0.0] * len(categories)
        tallest = 0.0
        for index, (name, values) in enumerate(groups.items()):
            colours = _bar_colours(name, index)
            if stacked:
                axes.bar(positions, values, width, bottom=bottoms, label=name, **colours)
                bottoms = [bottom + value for bottom, value in zip(bottoms, values)]
                tallest = max([tallest, *bottoms])
            else:
                offset = (index - (count - 1) / 2) * width
                axes.bar([p + offset for p in positions], values, width, label=name, **colours)
                tallest = max([tallest, *values])
        if tallest > 0:
            axes.set_ylim(0, tallest * (1 + _HEADROOM))
        axes.set_xticks(positions, list(categories))
        axes.grid(axis="x", visible=False)
        axes.set_xlabel(xlabel)
        axes.set_ylabel(ylabel)
        if groups:
            axes.legend(loc="best")
    return figure


def _bar_colours(name: str, index: int) -> dict[str, Any]:
    """A group's bar colours: a value's fill with its darker edge (the yellow of a draw needs
    an edge on white), else the palette's series colours in order."""
    value = value_colours(name)
    if value is not None:
        return {"color": value.fill, "edgecolor": value.edge, "linewidth": 0.8}
    return {"color": SERIES[index % len(SERIES)]}


def render(figure: Figure, fmt: str) -> bytes:
    """The chart's file contents as ``fmt`` ("svg" or "png"); the figure is closed after."""
    import io

    if fmt not in FORMATS:
        raise ChartFormatError(f"unknown chart format {fmt!r}: use one of {', '.join(FORMATS)}")
    metadata = dict(_METADATA[fmt])
    if fmt == "svg":
        metadata["Title"] = figure.get_suptitle()
    buffer = io.BytesIO()
    try:
        with _style():
            figure.savefig(buffer, format=fmt, metadata=metadata, dpi=100)
    finally:
        figure.clear()
    return buffer.getvalue()


def save(figure: Figure, path: str) -> None:
    """Write the chart to ``path``, its format from the extension (``.svg`` or ``.png``).

    The bytes go to a temporary file in the same folder, renamed over ``path`` at the end, so
    that an interrupted save leaves no half-written chart.
    """
    data = render(figure, format_of(path))
    # Beside the target (a rename is atomic only within one file system); opened as any new
    # file is, so the chart gets the permissions the user's umask gives.
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
