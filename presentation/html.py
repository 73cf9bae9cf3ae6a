"""The pieces of a notebook's HTML: tables, charts and pictures inline, headings and frames.

Every report's ``_repr_html_`` (:mod:`ttt_solve.reports`) is put together from these, so that a
notebook shows one style: self-contained fragments (inline styles, no script), the same for the
same input, that shrink to a narrow screen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from html import escape

from ttt_solve.presentation import charts
from ttt_solve.presentation.palette import VALUES
from ttt_solve.solver.value import Outcome

SMALL_BOARD = 150
"""The width of a board among several (an audit's costliest moves and games), in pixels."""

FONT = "font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; font-size: 14px;"
TABLE = "border-collapse: collapse; margin: 4px 0 12px 0;"
CELL = "padding: 2px 10px; border-bottom: 1px solid #d9e2ec; text-align: left;"
NUMBER = "padding: 2px 10px; border-bottom: 1px solid #d9e2ec; text-align: right;"
QUIET = "color: #5f6b7a;"
"""Text beside the figures: where they come from, what they count."""
SIDE_BY_SIDE = "display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start;"


def table(rows: Iterable[Sequence[object]], headers: Sequence[str] = ()) -> str:
    """A plain HTML table; numbers and percentages right-aligned."""
    head = ""
    if headers:
        head = "<tr>" + "".join(
            f'<th style="{CELL} font-weight: 600;">{escape(str(h))}</th>' for h in headers
        )
        head += "</tr>"
    body = []
    for row in rows:
        cells = []
        for index, value in enumerate(row):
            text = str(value)
            numeric = index > 0 and text.replace(",", "").replace("%", "").replace(".", "")
            style = NUMBER if numeric and numeric.split(" ")[0].isdigit() else CELL
            cells.append(f'<td style="{style}">{escape(text)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table style="{TABLE}">{head}{"".join(body)}</table>'


def figure_svg(figure: charts.Figure) -> str:
    """A chart as inline SVG (its XML prolog left out, so that it sits inside HTML)."""
    text = charts.render(figure, "svg").decode("utf-8")
    start = text.find("<svg")
    return text[start:] if start >= 0 else text


def chart_or_nothing(make: Callable[[], charts.Figure]) -> str:
    """``make()``'s chart as inline SVG, or ``""`` when matplotlib is not installed."""
    try:
        return f'<div style="max-width: 720px;">{fluid(figure_svg(make()))}</div>'
    except charts.ChartsUnavailableError:
        return ""


def fluid(picture_svg: str) -> str:
    """An SVG that shrinks to a narrow screen (a phone) instead of being cut off there."""
    return picture_svg.replace("<svg ", '<svg style="max-width: 100%; height: auto;" ', 1)


def tiles(items: Iterable[tuple[str, str]]) -> str:
    """Pictures side by side, each with its caption under it, wrapping on narrow screens."""
    parts = [
        f'<figure style="margin: 0; width: {SMALL_BOARD + 20}px;">{picture}'
        f'<figcaption style="font-size: 12px; line-height: 1.35;">{caption}</figcaption></figure>'
        for picture, caption in items
    ]
    return (
        '<div style="display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start;">'
        + "".join(parts)
        + "</div>"
    )


def frame(body: str) -> str:
    """A report's outer box: the notebook's font."""
    return f'<div style="{FONT} line-height: 1.4;">{body}</div>'


def heading(text: str) -> str:
    return f'<div style="font-weight: 600; font-size: 15px; margin: 6px 0;">{escape(text)}</div>'


def lines(texts: Iterable[str]) -> str:
    """Sentences, one a line."""
    return "".join(f"<div>{escape(text)}</div>" for text in texts)


def value_text(outcome: Outcome, remoteness: int) -> str:
    """``win in 3``, in the value's colour."""
    colour = VALUES[outcome].edge
    return (
        f'<span style="color: {colour}; font-weight: 600;">{outcome.value} in {remoteness}</span>'
    )
