"""The project's colours and value letters, named once for every picture it draws.

The boards and value histories of :mod:`ttt_solve.presentation.svg`, the web explorer's pages
and charts, the notebook displays and the terminal's coloured boards all take their colours
from here, so a win looks the same wherever it is shown.

The three value colours are the bluish green, yellow and vermillion of Okabe and Ito's palette
("Color Universal Design", 2002), chosen so that people with the common forms of colour
blindness still tell them apart; the letters W, D and L are written on them anyway, so no
reading depends on colour alone. Text on each fill is black: at least 5:1 contrast on all
three (WCAG AA asks 4.5:1). Yellow is too light to stand on white by itself, so each value also
has an ``edge``, a darker shade of the same hue for outlines and lines on a white background.
"""

from __future__ import annotations

from typing import NamedTuple

from ttt_solve.solver.value import Outcome, Value


class ValueColours(NamedTuple):
    """How one value is drawn: ``fill`` for cells, points and bars, ``ink`` for text on the
    fill, ``edge`` for outlines and lines on a white background, ``terminal`` the colour name
    a terminal knows (as ``click.style`` spells it)."""

    fill: str
    ink: str
    edge: str
    terminal: str


VALUES: dict[Outcome, ValueColours] = {
    Outcome.WIN: ValueColours(fill="#009e73", ink="#000000", edge="#006b4e", terminal="green"),
    Outcome.DRAW: ValueColours(fill="#f0e442", ink="#000000", edge="#8a7d00", terminal="yellow"),
    Outcome.LOSS: ValueColours(fill="#d55e00", ink="#000000", edge="#9a4400", terminal="red"),
}
"""The colours of each value, for the side to move (or, for a move, for its mover)."""

LETTERS: dict[Outcome, str] = {outcome: outcome.letter for outcome in Outcome}
"""The letter of each value: ``W3`` is a win in 3 plies, ``D6`` a draw, ``L2`` a loss in 2."""

STONES: dict[str, str] = {"x": "#1f3a93", "o": "#7b2d8e"}
"""The colours of X's and O's stones (navy and purple: apart from the three value colours)."""

BOARD: dict[str, str] = {
    "cell": "#ffffff",  # an empty cell without a value
    "grid": "#9aa5b1",  # the lines between cells
    "coordinate": "#5f6b7a",  # the column letters and row numbers
    "lastmove": "#cfe0f5",  # the background of the last move's cell
    "mark": "#000000",  # the frame of a marked cell (drawn with a white inner ring)
    "text": "#1d1d1f",  # captions
    "ghost": "#ffffff",  # the background of a numbered stone of a line drawn on the board
}
"""The colours of the board itself."""

SERIES: tuple[str, ...] = ("#0072b2", "#cc79a7", "#e69f00", "#56b4e9", "#000000")
"""The colours of a chart's series that are not values (positions reachable and canonical, an
audit's accuracy and perfection, one agent after another): the rest of Okabe and Ito's palette
in order, blue, reddish purple, orange, sky blue and black, apart from the three value colours."""


HEAT: tuple[str, str] = ("#f2f6fb", "#0b3c6f")
"""The ends of a heatmap's scale, a share of 0 and of 1: one hue (blue, apart from the value
colours), light to dark, so that the order reads without telling hues apart; the share is
written in every cell too."""


def _luminance(rgb: tuple[int, ...]) -> float:
    """The relative luminance of a colour (WCAG 2)."""
    linear = [c / 255 / 12.92 if c <= 10 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def heat(share: float) -> tuple[str, str]:
    """``(fill, ink)`` of a heatmap cell for a share from 0 to 1: the fill between the ends of
    :data:`HEAT`, the ink black or white, whichever contrasts more with it (at least 4.5:1
    everywhere on the scale)."""
    share = min(1.0, max(0.0, share))
    low, high = (tuple(int(end[i : i + 2], 16) for i in (1, 3, 5)) for end in HEAT)
    rgb = tuple(round(a + (b - a) * share) for a, b in zip(low, high))
    lightness = _luminance(rgb)
    on_black, on_white = (lightness + 0.05) / 0.05, 1.05 / (lightness + 0.05)
    return "#" + "".join(f"{c:02x}" for c in rgb), "#000000" if on_black >= on_white else "#ffffff"


def value_colours(name: str) -> ValueColours | None:
    """The colours of a value named ``win``, ``draw`` or ``loss`` (``None`` for any other name):
    a chart's series of a value is drawn in that value's colours."""
    for outcome, colours in VALUES.items():
        if outcome.value == name:
            return colours
    return None


def label(outcome: Outcome, remoteness: int) -> str:
    """A value written short: ``W3``, ``D6``, ``L2``."""
    return Value(outcome, remoteness).label
