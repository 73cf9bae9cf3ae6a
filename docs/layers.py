"""Draw the floors of ttt_solve as SVG, from the import-graph test's own table of them.

    python docs/layers.py > docs/img/layers.svg

The test of the import graph checks the picture against this script, so the picture and the
rule it illustrates cannot drift apart. Standard library only.
"""

from __future__ import annotations

import sys
from html import escape
from pathlib import Path
from textwrap import wrap

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.import_graph import FLOORS  # noqa: E402

ROOMS = {
    "": ("ttt_solve/", "the version, TttError, child processes"),
    "errors": ("", ""),
    "processes": ("", ""),
    "solver": ("solver/", "rules, positions, values; exhaustive/, prover/, tablebase/"),
    "presentation": ("presentation/", "palette, boards, SVG, charts, HTML pieces, numbers"),
    "book": ("book/", "storage, reading API, oracle; table/"),
    "agents": ("agents/", "agents, grading, audits, curves, ratings"),
    "rl": ("rl/", "PettingZoo, Gymnasium, OpenSpiel"),
    "reports": ("reports/", "text and notebook HTML of the reports"),
    "cli": ("cli/", "ttt, ttt-solve"),
    "web": ("web/", "ttt serve"),
    "session": ("ttt_solve/session.py", "import ttt_solve as ttt"),
    "fixes": ("", ""),
}
"""What each floor's picture names: a room's folder and what it holds (empty: drawn with the
room before it on its floor)."""

WIDTH = 520
"""Narrow enough to stay legible on a phone (400 px shows it at seven tenths): the rooms of a
floor stand one under the other, and a room's line wraps."""
MARGIN = 12
GAP = 10  # between floors
PAD = 6  # inside a floor, around its rooms
LEFT = MARGIN + 116  # the floor's number and name
ROOM_WIDTH = WIDTH - MARGIN - PAD - LEFT
ROOM_CHARACTERS = 50  # of what a room holds, a line (12 px, about 7 px a character)
LINE = 15
COLOURS = ("#e8eef5", "#d7e4f0")
EDGE = "#4a5d73"
TEXT = "#1f2933"
QUIET = "#5f6b7a"
FLOOR_NAMES = ("root", "the game", "drawings", "the book", "play", "learning, reports", "fronts")
RULE = (
    "Each floor imports only the floors below it. A value reaches a drawing or a report "
    "above it only from the method that shows it (_repr_svg_, _repr_html_, __repr__, text), "
    "when it is called."
)


def rooms_of(floor: tuple[str, ...]) -> list[tuple[str, str]]:
    """The rooms a floor shows, top to bottom."""
    return [ROOMS[name] for name in floor if ROOMS[name][0]]


def room_height(what: str) -> int:
    return 32 + LINE * len(wrap(what, ROOM_CHARACTERS))


def room(y: int, folder: str, what: str) -> str:
    """One room: its folder, and what it holds under it."""
    middle = LEFT + ROOM_WIDTH / 2
    lines = "".join(
        f'<text x="{middle:.1f}" y="{y + 36 + LINE * number}" text-anchor="middle" '
        f'font-size="12" fill="{QUIET}">{escape(line)}</text>'
        for number, line in enumerate(wrap(what, ROOM_CHARACTERS))
    )
    return (
        f'<rect x="{LEFT}" y="{y}" width="{ROOM_WIDTH}" height="{room_height(what) - 4}" '
        f'rx="6" fill="#ffffff" stroke="{EDGE}"/>'
        f'<text x="{middle:.1f}" y="{y + 19}" text-anchor="middle" font-weight="600" '
        f'fill="{TEXT}">{escape(folder)}</text>{lines}'
    )


def floor_height(floor: tuple[str, ...]) -> int:
    return max(44, sum(room_height(what) for _, what in rooms_of(floor))) + 2 * PAD


def svg() -> str:
    """The floors, the ground at the bottom, with the rule of their imports."""
    rule = wrap(RULE, 64)
    height = MARGIN * 2 + sum(floor_height(f) + GAP for f in FLOORS) + LINE * len(rule) + 4
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="system-ui, sans-serif" font-size="14">',
        "<title>The floors of ttt_solve: each imports only the floors below it</title>",
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
    ]
    y = MARGIN
    for level in reversed(range(len(FLOORS))):
        floor = FLOORS[level]
        parts.append(
            f'<rect x="{MARGIN}" y="{y}" width="{WIDTH - 2 * MARGIN}" '
            f'height="{floor_height(floor)}" rx="8" fill="{COLOURS[level % 2]}"/>'
            f'<text x="{MARGIN + 10}" y="{y + PAD + 18}" font-weight="600" fill="{TEXT}">'
            f"floor {level}</text>"
            f'<text x="{MARGIN + 10}" y="{y + PAD + 35}" font-size="12" fill="{QUIET}">'
            f"{escape(FLOOR_NAMES[level])}</text>"
        )
        top = y + PAD
        for folder, what in rooms_of(floor):
            parts.append(room(top, folder, what))
            top += room_height(what)
        y += floor_height(floor) + GAP
    for number, line in enumerate(rule):
        parts.append(
            f'<text x="{MARGIN}" y="{y + 12 + LINE * number}" font-size="13" fill="{TEXT}">'
            f"{escape(line)}</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    sys.stdout.write(svg())
