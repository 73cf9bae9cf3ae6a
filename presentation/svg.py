"""Boards and value histories as SVG: pure functions from a picture model to an SVG string.

:func:`board` draws a :class:`~ttt_solve.presentation.picture.Board` (or a position, with the
options of :func:`ttt_solve.presentation.picture.board`): equal square cells, column letters
and row numbers, stones drawn as shapes, each empty cell's move in its value's colour with its
letter and remoteness, the best moves starred, the last move shaded, a winner's line struck
through, a marked cell framed, a line of moves numbered, and who is to move written under the
board.

:func:`value_history` draws a :class:`~ttt_solve.presentation.picture.History`: one row per
position from the top, remoteness counted from the edges toward a middle column of draws (X's
wins on the left, O's on the right), each point in its value's colour for the side to move,
moves named, and each move that changed its mover's value ringed and written out.

:func:`heatmap` draws a grid of shares (a benchmark's cells): each cell shaded on one hue by its
share, with the share and its 95% interval written in it; :func:`stack` puts pictures one above
the other in one document.

Built with the standard library alone; colours from :mod:`ttt_solve.presentation.palette`.
Elements carry ``data-`` attributes (cell, value, remoteness, ...) so that pages and tests can
read what is drawn without parsing shapes. The same input gives the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple
from xml.sax.saxutils import escape, quoteattr

from ttt_solve.presentation import picture as model
from ttt_solve.presentation.palette import BOARD, LETTERS, STONES, VALUES, heat
from ttt_solve.solver.position import Position
from ttt_solve.solver.value import Outcome

CELL = 50
"""The side of a cell in SVG units (pixels at the natural size)."""

_MARGIN = 18  # room for the coordinates
_CAPTION = 26  # room for the caption under the board
_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"


def _attrs(**attributes: Any) -> str:
    """`` name="value"`` for each attribute that is set (``data_cell`` is ``data-cell``)."""
    parts = []
    for name, value in attributes.items():
        if value is None or value is False:
            continue
        key = name.rstrip("_").replace("_", "-")
        parts.append(f" {key}={quoteattr('true' if value is True else str(value))}")
    return "".join(parts)


def _number(value: float) -> str:
    """A coordinate without a useless ``.0`` (shorter files, the same bytes every time)."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _stone(stone: str, cx: float, cy: float, size: float, opacity: float = 1.0) -> str:
    """X as a cross, O as a ring, centred on (cx, cy), ``size`` across."""
    colour = STONES[stone]
    width = _number(size * 0.14)
    fade = f' opacity="{_number(opacity)}"' if opacity < 1 else ""
    if stone == "x":
        half = size * 0.34
        a, b = _number(cx - half), _number(cx + half)
        c, d = _number(cy - half), _number(cy + half)
        return (
            f'<path d="M{a} {c}L{b} {d}M{b} {c}L{a} {d}" stroke="{colour}" '
            f'stroke-width="{width}" stroke-linecap="round" fill="none"{fade}/>'
        )
    return (
        f'<circle cx="{_number(cx)}" cy="{_number(cy)}" r="{_number(size * 0.32)}" '
        f'stroke="{colour}" stroke-width="{width}" fill="none"{fade}/>'
    )


def _star(cx: float, cy: float, radius: float, colour: str) -> str:
    """A five-pointed star (the best moves), as a polygon: no font needs a glyph for it."""
    import math

    points = []
    for i in range(10):
        r = radius if i % 2 == 0 else radius * 0.45
        angle = math.pi / 2 + i * math.pi / 5
        points.append(f"{_number(cx + r * math.cos(angle))},{_number(cy - r * math.sin(angle))}")
    return f'<polygon class="best-star" points="{" ".join(points)}" fill="{colour}"/>'


def _cell_title(cell: model.Cell) -> str:
    if cell.stone is not None:
        return f"{cell.name}: {cell.stone.upper()}"
    if cell.value is not None:
        best = " (best)" if cell.best else ""
        return f"{cell.name}: {cell.value.outcome.value} in {cell.value.remoteness}{best}"
    return cell.name


def _cell(cell: model.Cell, x: float, y: float, named: bool = False) -> str:
    """One cell: its background, its stone or value, and its marks, in a group that carries
    its data (and a link when it has one); ``named``: the group is an image of its own with an
    accessible name (its title), which names its link too."""
    size = CELL
    ghost = cell.number is not None and cell.stone is None
    value = None if ghost else cell.value
    if value is not None:
        background = VALUES[value.outcome].fill
    elif cell.last:
        background = BOARD["lastmove"]
    else:
        background = BOARD["cell"]
    classes = ["cell"]
    if cell.stone is not None:
        classes += ["stone", cell.stone]
    elif value is not None:
        classes += ["move", value.outcome.value]
    if cell.best and value is not None:
        classes.append("best")
    for flag in ("last", "winning", "marked"):
        if getattr(cell, flag):
            classes.append(flag)
    parts = [
        f"<title>{escape(_cell_title(cell))}</title>",
        f'<rect x="{_number(x)}" y="{_number(y)}" width="{size}" height="{size}" '
        f'fill="{background}" stroke="{BOARD["grid"]}" stroke-width="1.5"/>',
    ]
    cx, cy = x + size / 2, y + size / 2
    if cell.stone is not None:
        parts.append(_stone(cell.stone, cx, cy, size))
    elif ghost and cell.ghost is not None:
        parts.append(_stone(cell.ghost, cx, cy, size, opacity=0.45))
        parts.append(
            f'<text x="{_number(x + size - 5)}" y="{_number(y + size - 6)}" text-anchor="end" '
            f'font-size="{_number(size * 0.3)}" font-weight="bold" '
            f'fill="{STONES[cell.ghost]}">{cell.number}</text>'
        )
    elif value is not None:
        ink = VALUES[value.outcome].ink
        parts.append(
            f'<text x="{_number(cx)}" y="{_number(cy)}" text-anchor="middle" '
            f'dominant-baseline="central" font-size="{_number(size * 0.34)}" '
            f'font-weight="bold" fill="{ink}">{escape(cell.label or "")}</text>'
        )
        if cell.best:
            parts.append(_star(x + size - 9, y + 9, 6, ink))
    if cell.marked:
        parts.append(
            f'<rect x="{_number(x + 3.5)}" y="{_number(y + 3.5)}" width="{size - 7}" '
            f'height="{size - 7}" fill="none" stroke="{BOARD["mark"]}" stroke-width="5"/>'
            f'<rect x="{_number(x + 7)}" y="{_number(y + 7)}" width="{size - 14}" '
            f'height="{size - 14}" fill="none" stroke="#ffffff" stroke-width="1.5"/>'
        )
    group = (
        f"<g{_attrs(class_=' '.join(classes), data_cell=cell.name, data_index=cell.cell)}"
        f"{_attrs(data_stone=cell.stone, data_value=value and value.outcome.value)}"
        f"{_attrs(data_remoteness=value and value.remoteness)}"
        f"{_attrs(data_best=cell.best and value is not None)}"
        f"{_attrs(data_number=cell.number)}"
        f"{_attrs(role='img', aria_label=_cell_title(cell)) if named else ''}>"
        + "".join(parts)
        + "</g>"
    )
    if cell.link is not None:
        return f"<a{_attrs(href=cell.link)}>{group}</a>"
    return group


def board(
    picture: model.Board | Position,
    *,
    size: int | None = None,
    coordinates: bool = True,
    caption: bool = True,
    title: str | None = None,
    **options: Any,
) -> str:
    """The SVG of a board picture (or of a position drawn with ``options``, the keywords of
    :func:`ttt_solve.presentation.picture.board`).

    ``size`` is the width in pixels (the natural size is 50 a cell); ``coordinates`` draws the
    column letters and row numbers, ``caption`` the side to move (or the result) under the
    board; ``title`` is the picture's accessible name (the position by default).

    A board whose cells are links is a group (ARIA ``role="group"``) whose cells are images,
    each named as its tooltip (``b2: win in 3 (best)``), so that a screen reader reaches each
    link by its name; a board without links is one image (``role="img"``)."""
    if isinstance(picture, Position):
        picture = model.board(picture, **options)
    elif options:
        raise TypeError(f"options {sorted(options)} apply to a position, not to a picture")
    rules = picture.rules
    left = top = _MARGIN if coordinates else 0
    width = left + rules.cols * CELL + 2
    height = top + rules.rows * CELL + 2 + (_CAPTION if caption else 0)
    shown = (
        f' width="{size}" height="{_number(size * height / width)}"'
        if size
        else (f' width="{width}" height="{height}"')
    )
    name = title or _position_text(picture)
    linked = any(cell.link is not None for cell in picture.cells)
    hidden = ' aria-hidden="true"' if linked else ""  # the cells' names say it already
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}"{shown} '
        f'role="{"group" if linked else "img"}" aria-label={quoteattr(name)} class="board" '
        f'font-family="{_FONT}"{_attrs(data_rows=rules.rows, data_cols=rules.cols)}>',
        f"<title>{escape(name)}</title>",
    ]
    if coordinates:
        for col in range(rules.cols):
            parts.append(
                f'<text x="{_number(left + 1 + col * CELL + CELL / 2)}" y="{top - 5}" '
                f'text-anchor="middle" font-size="12" fill="{BOARD["coordinate"]}"{hidden}>'
                f"{chr(ord('a') + col)}</text>"
            )
        for row in range(rules.rows):
            parts.append(
                f'<text x="{left - 5}" y="{_number(top + 1 + row * CELL + CELL / 2)}" '
                f'text-anchor="end" dominant-baseline="central" font-size="12" '
                f'fill="{BOARD["coordinate"]}"{hidden}>{row + 1}</text>'
            )
    for cell in picture.cells:
        x, y = left + 1 + cell.col * CELL, top + 1 + cell.row * CELL
        parts.append(_cell(cell, x, y, named=linked))
    if picture.winner is not None:
        colour = STONES[picture.winner]
        for first, last in picture.lines:
            (r1, c1), (r2, c2) = divmod(first, rules.cols), divmod(last, rules.cols)
            x1, y1 = left + 1 + (c1 + 0.5) * CELL, top + 1 + (r1 + 0.5) * CELL
            x2, y2 = left + 1 + (c2 + 0.5) * CELL, top + 1 + (r2 + 0.5) * CELL
            parts.append(
                f'<line class="winning-line" x1="{_number(x1)}" y1="{_number(y1)}" '
                f'x2="{_number(x2)}" y2="{_number(y2)}" stroke="{colour}" stroke-width="7" '
                f'stroke-linecap="round" opacity="0.55"/>'
            )
    if caption:
        baseline = top + rules.rows * CELL + 2 + _CAPTION / 2 + 2
        text_x = left + 1
        side = picture.to_move or picture.winner
        if side is not None:
            parts.append(_stone(side, left + 9, baseline, 18))
            text_x = left + 22
        parts.append(
            f'<text class="caption" x="{text_x}" y="{_number(baseline)}" '
            f'dominant-baseline="central" font-size="13" fill="{BOARD["text"]}"'
            f"{_attrs(data_to_move=picture.to_move, data_winner=picture.winner)}>"
            f"{escape(picture.caption)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _position_text(picture: model.Board) -> str:
    chars = "".join(c.stone or "." for c in picture.cells)
    cols = picture.rules.cols
    written = "/".join(chars[i : i + cols] for i in range(0, len(chars), cols))
    return f"{picture.rules.name} {written}: {picture.caption}"


# -- the value history -------------------------------------------------------------------------

_ROW = 24  # the height of one position's row
_HEAD = 40  # room for the side labels and the remoteness ticks
_LABELS = 64  # room on the left for the ply and the move
_NOTES = 150  # room on the right for the changes of value
_PLOT = 300  # the width of the plotting area, both sides and the draw column
_MARGIN = 14  # room on the right for a ring on the edge, without the notes


_TICK_DIGIT = 0.62 * 11  # the width of a digit of a tick's label (11 px), about
_TICK_GAP = 6  # the least room between two tick labels


def _ticks(limit: int, step: float) -> list[int]:
    """Whole-number remoteness ticks from 0 to ``limit``, ``step`` apart a unit: every 1, 2,
    5, 10, 20 or 50, the first whose labels stand apart, and none so near the middle that it
    meets the other side's innermost label."""
    label = len(str(limit)) * _TICK_DIGIT
    every = next((n for n in (1, 2, 5, 10, 20, 50) if n * step >= label + _TICK_GAP), 100)
    room = _PLOT / 2 - (label + _TICK_GAP) / 2  # from an edge to the last label's centre
    return [tick for tick in range(0, limit + 1, every) if tick * step <= room]


def _side(point: model.Point) -> str | None:
    """Whose win a point shows (``None``: a draw)."""
    outcome = point.value.outcome
    if outcome is Outcome.DRAW:
        return None
    other = "o" if point.to_move == "x" else "x"
    return point.to_move if outcome is Outcome.WIN else other


def value_history(
    history: model.History,
    *,
    max_remoteness: int | None = None,
    title: str | None = None,
    current: int | None = None,
    notes: bool = True,
) -> str:
    """The SVG of a value history: rows of positions from the top, each point at its
    remoteness counted from its winner's edge (X on the left, O on the right), draws in the
    middle column ``D``; ``max_remoteness`` fixes the scale (by default the game's largest
    remoteness of a won position), so charts of one game compare; ``current``, a ply, is the
    position being looked at: its row is shaded. ``notes``: each change of value named at
    the right; without them the chart is narrow enough to read on a phone (a web page lists
    the changes under it)."""
    points = history.points
    decisive = [p.value.remoteness for p in points if p.value.outcome is not Outcome.DRAW]
    limit = max_remoteness if max_remoteness is not None else max([1, *decisive])
    step = _PLOT / (2 * limit + 2)
    middle = _LABELS + _PLOT / 2

    def x_of(point: model.Point) -> float:
        side = _side(point)
        r = min(point.value.remoteness, limit)
        if side is None:
            return middle
        return _LABELS + r * step if side == "x" else _LABELS + _PLOT - r * step

    width = _LABELS + _PLOT + (_NOTES if notes else _MARGIN)
    legend = 54
    height = _HEAD + max(1, len(points)) * _ROW + legend
    name = title or f"Value history of a {history.rules.name} game"
    linked = any(point.link for point in points)  # a group of named points, as a board
    hidden = ' aria-hidden="true"' if linked else ""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="{"group" if linked else "img"}" '
        f"aria-label={quoteattr(name)} "
        f'class="value-history" font-family="{_FONT}"{_attrs(data_limit=limit)}>',
        f"<title>{escape(name)}</title>",
        f'<text x="{_LABELS}" y="13" font-size="12" fill="{STONES["x"]}" font-weight="bold">'
        f"← X wins</text>",
        f'<text x="{_number(middle)}" y="13" font-size="12" text-anchor="middle" '
        f'font-weight="bold" fill="{VALUES[Outcome.DRAW].edge}">D</text>',
        f'<text x="{_LABELS + _PLOT}" y="13" font-size="12" text-anchor="end" '
        f'fill="{STONES["o"]}" font-weight="bold">O wins →</text>',
    ]
    bottom = _HEAD + max(1, len(points)) * _ROW - _ROW / 2
    for tick in _ticks(limit, step):
        for x in {_LABELS + tick * step, _LABELS + _PLOT - tick * step}:
            parts.append(
                f'<line x1="{_number(x)}" y1="{_HEAD - 8}" x2="{_number(x)}" '
                f'y2="{_number(bottom)}" stroke="#d9e2ec" stroke-width="1"/>'
                f'<text class="tick" x="{_number(x)}" y="{_HEAD - 12}" font-size="11" '
                f'text-anchor="middle" fill="{BOARD["coordinate"]}"{hidden}>{tick}</text>'
            )
    parts.append(
        f'<line x1="{_number(middle)}" y1="{_HEAD - 8}" x2="{_number(middle)}" '
        f'y2="{_number(bottom)}" stroke="{VALUES[Outcome.DRAW].edge}" stroke-width="1.5" '
        f'stroke-dasharray="4 3"/>'
    )
    coords = [(x_of(p), _HEAD + i * _ROW + _ROW / 2) for i, p in enumerate(points)]
    for point, (_, y) in zip(points, coords):
        if point.ply == current:
            parts.insert(
                2,  # under everything else drawn, after the title
                f'<rect class="current" x="0" y="{_number(y - _ROW / 2)}" width="{width}" '
                f'height="{_ROW}" fill="{BOARD["lastmove"]}"{_attrs(data_ply=point.ply)}/>',
            )
    if len(coords) > 1:
        path = " ".join(f"{_number(x)},{_number(y)}" for x, y in coords)
        parts.append(f'<polyline points="{path}" fill="none" stroke="#7b8794" stroke-width="1.5"/>')
    changed_at = {change.ply + 1: change for change in history.changes}
    for i, (point, (x, y)) in enumerate(zip(points, coords)):
        colours = VALUES[point.value.outcome]
        label = f"{point.ply}" + (f" {point.move}" if point.move else " start")
        parts.append(
            f'<text x="{_LABELS - 10}" y="{_number(y)}" text-anchor="end" '
            f'dominant-baseline="central" font-size="11" fill="{BOARD["text"]}"{hidden}>'
            f"{escape(label)}</text>"
        )
        change = changed_at.get(point.ply) if i > 0 else None
        ring = ""
        if change is not None:
            ring = (
                f'<circle cx="{_number(x)}" cy="{_number(y)}" r="10" fill="none" '
                f'stroke="{BOARD["mark"]}" stroke-width="2"/>'
            )
        if change is not None and notes:
            parts.append(
                f'<text class="change" x="{_LABELS + _PLOT + 10}" y="{_number(y)}" '
                f'dominant-baseline="central" font-size="11" font-weight="bold" '
                f'fill="{VALUES[change.after].edge}">'
                f"{change.player.upper()} {escape(change.text)}</text>"
            )
        value = point.value
        tip = (
            f"ply {point.ply}"
            + (f", after {point.move}" if point.move else "")
            + f": {point.to_move.upper()} to move, {value.outcome.value} in {value.remoteness}"
        )
        dot = (
            f"<g{_attrs(class_='point', data_ply=point.ply, data_move=point.move)}"
            f"{_attrs(data_to_move=point.to_move, data_value=value.outcome.value)}"
            f"{_attrs(data_remoteness=value.remoteness, data_changed=change is not None)}"
            f"{_attrs(role='img', aria_label=tip) if linked else ''}>"
            f"<title>{escape(tip)}</title>{ring}"
            f'<circle cx="{_number(x)}" cy="{_number(y)}" r="6.5" fill="{colours.fill}" '
            f'stroke="{colours.edge}" stroke-width="1.5"/></g>'
        )
        parts.append(f"<a{_attrs(href=point.link)}>{dot}</a>" if point.link else dot)
    parts.append(_legend(12, height - legend + 14))
    parts.append("</svg>")
    return "".join(parts)


def _legend(x: float, y: float) -> str:
    """The value colours named, for the side to move, and what a ring means."""
    parts = []
    for outcome in (Outcome.WIN, Outcome.DRAW, Outcome.LOSS):
        colours = VALUES[outcome]
        parts.append(
            f'<circle cx="{_number(x + 6)}" cy="{_number(y)}" r="6" fill="{colours.fill}" '
            f'stroke="{colours.edge}" stroke-width="1.5"/>'
            f'<text x="{_number(x + 16)}" y="{_number(y)}" dominant-baseline="central" '
            f'font-size="11" fill="{BOARD["text"]}">{LETTERS[outcome]} {outcome.value}</text>'
        )
        x += 62
    parts.append(
        f'<text x="{_number(x + 4)}" y="{_number(y)}" dominant-baseline="central" '
        f'font-size="11" fill="{BOARD["text"]}">for the side to move</text>'
        f'<circle cx="18" cy="{_number(y + 20)}" r="8" fill="none" stroke="{BOARD["mark"]}" '
        f'stroke-width="2"/><text x="34" y="{_number(y + 20)}" dominant-baseline="central" '
        f'font-size="11" fill="{BOARD["text"]}">ringed: a blunder (it changed its player\'s '
        f"value)</text>"
    )
    return "".join(parts)


# -- the heatmap of shares ---------------------------------------------------------------------


class HeatCell(NamedTuple):
    """One cell of a heatmap: a share (``None``: nothing to count) with its interval, and how
    many it was counted over."""

    share: float | None
    low: float
    high: float
    counted: int


_HEAT_LABELS = 128  # room on the left for the row labels
_HEAT_HEAD = 64  # room above for the title and the column labels
_HEAT_CELL = (100, 60)  # a cell's width and height


def heatmap(
    cells: Sequence[Sequence[HeatCell]],
    rows: Sequence[str],
    columns: Sequence[str],
    *,
    title: str,
    row_notes: Sequence[str] = (),
    column_notes: Sequence[str] = (),
) -> str:
    """The SVG of a grid of shares: a row per ``rows`` label, a column per ``columns`` label
    (each with its note under it, such as the plies or the remoteness it covers), each cell
    shaded by its share on one hue (:func:`~ttt_solve.presentation.palette.heat`) with the share
    and its interval written in it. Each cell's ``data-`` attributes carry its figures."""
    width_, height_ = _HEAT_CELL
    width = _HEAT_LABELS + len(columns) * width_ + 2
    height = _HEAT_HEAD + len(rows) * height_ + 2
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label={quoteattr(title)} '
        f'class="heatmap" font-family="{_FONT}">',
        f"<title>{escape(title)}</title>",
        f'<text x="0" y="15" font-size="13" font-weight="bold" fill="{BOARD["text"]}">'
        f"{escape(title)}</text>",
    ]
    for index, name in enumerate(columns):
        x = _HEAT_LABELS + index * width_ + width_ / 2
        note = column_notes[index] if index < len(column_notes) else ""
        parts.append(
            f'<text x="{_number(x)}" y="{_HEAT_HEAD - 22}" text-anchor="middle" font-size="12" '
            f'font-weight="bold" fill="{BOARD["text"]}">{escape(name)}</text>'
            f'<text x="{_number(x)}" y="{_HEAT_HEAD - 7}" text-anchor="middle" font-size="10" '
            f'fill="{BOARD["coordinate"]}">{escape(note)}</text>'
        )
    for r, name in enumerate(rows):
        y = _HEAT_HEAD + r * height_
        note = row_notes[r] if r < len(row_notes) else ""
        parts.append(
            f'<text x="{_HEAT_LABELS - 8}" y="{_number(y + height_ / 2 - 7)}" text-anchor="end" '
            f'dominant-baseline="central" font-size="12" font-weight="bold" '
            f'fill="{BOARD["text"]}">{escape(name)}</text>'
            f'<text x="{_HEAT_LABELS - 8}" y="{_number(y + height_ / 2 + 9)}" text-anchor="end" '
            f'dominant-baseline="central" font-size="10" fill="{BOARD["coordinate"]}">'
            f"{escape(note)}</text>"
        )
        for c, cell in enumerate(cells[r]):
            parts.append(_heat_cell(cell, _HEAT_LABELS + c * width_, y, rows[r], columns[c]))
    parts.append("</svg>")
    return "".join(parts)


def _heat_cell(cell: HeatCell, x: float, y: float, row: str, column: str) -> str:
    width, height = _HEAT_CELL
    if cell.share is None:
        fill, ink, text, span, tip = BOARD["cell"], BOARD["text"], "-", "", "nothing counted"
    else:
        fill, ink = heat(cell.share)
        text = f"{100 * cell.share:.1f}%"
        span = f"{100 * cell.low:.1f}-{100 * cell.high:.1f}"
        tip = f"{text} (95% interval {span}) of {cell.counted:,}"
    figures = _attrs(
        data_row=row,
        data_column=column,
        data_share=None if cell.share is None else f"{cell.share:.6f}",
        data_low=f"{cell.low:.6f}",
        data_high=f"{cell.high:.6f}",
        data_count=cell.counted,
    )
    return (
        f'<g class="heat-cell"{figures}><title>{escape(f"{row}, {column}: {tip}")}</title>'
        f'<rect x="{_number(x)}" y="{_number(y)}" width="{width}" height="{height}" '
        f'fill="{fill}" stroke="#ffffff" stroke-width="2"/>'
        f'<text x="{_number(x + width / 2)}" y="{_number(y + height / 2 - 8)}" '
        f'text-anchor="middle" dominant-baseline="central" font-size="15" font-weight="bold" '
        f'fill="{ink}">{text}</text>'
        f'<text x="{_number(x + width / 2)}" y="{_number(y + height / 2 + 12)}" '
        f'text-anchor="middle" dominant-baseline="central" font-size="10" fill="{ink}">'
        f"{escape(span)}</text></g>"
    )


def stack(pictures: Sequence[str], gap: int = 12) -> str:
    """SVG pictures made here one above the other, ``gap`` apart, in one SVG document."""
    parts: list[str] = []
    y = width = 0.0
    for picture in pictures:
        size = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', picture)
        if size is None:
            raise ValueError("a picture to stack has no viewBox")
        w, h = float(size.group(1)), float(size.group(2))
        parts.append(picture.replace("<svg ", f'<svg x="0" y="{_number(y)}" ', 1))
        y += h + gap
        width = max(width, w)
    height = _number(max(0, y - gap))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_number(width)} {height}" '
        f'width="{_number(width)}" height="{height}">' + "".join(parts) + "</svg>"
    )
