"""Draw the floors of ttt_solve as SVG, from the import-graph test's own table of them.

    python docs/layers.py > docs/img/layers.svg

The test of the import graph checks the picture against this script, so the picture and the
rule it illustrates cannot drift apart. Standard library only.
"""

from __future__ import annotations

import sys
from html import escape
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.import_graph import FLOORS  # noqa: E402

ROOMS = {
    "": ("ttt_solve/", "the version, TttError, child processes"),
    "errors": ("", ""),
    "processes": ("", ""),
    "solver": ("solver/", "rules, positions, values; exhaustive/, prover/, tablebase/"),
    "presentation": ("presentation/", "palette, boards, SVG, charts, HTML pieces, numbers"),
    "book": ("book/", "storage, reading API, oracle, tablebase books"),
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

WIDTH = 760
FLOOR_HEIGHT = 58
GAP = 14
MARGIN = 16
LEFT = 150  # the floor's number and name
COLOURS = ("#e8eef5", "#d7e4f0")
EDGE = "#4a5d73"
TEXT = "#1f2933"
QUIET = "#5f6b7a"
FLOOR_NAMES = ("root", "the game", "drawings", "the book", "play", "learning, reports", "fronts")


def rooms_of(floor: tuple[str, ...]) -> list[tuple[str, str]]:
    """The rooms a floor shows, left to right."""
    return [ROOMS[name] for name in floor if ROOMS[name][0]]


def room(x: float, y: float, width: float, folder: str, what: str) -> str:
    """One room: its folder, and what it holds under it."""
    return (
        f'<rect x="{x:.1f}" y="{y}" width="{width:.1f}" height="{FLOOR_HEIGHT - 12}" rx="6" '
        f'fill="#ffffff" stroke="{EDGE}"/>'
        f'<text x="{x + width / 2:.1f}" y="{y + 19}" text-anchor="middle" font-weight="600" '
        f'fill="{TEXT}">{escape(folder)}</text>'
        f'<text x="{x + width / 2:.1f}" y="{y + 36}" text-anchor="middle" font-size="11" '
        f'fill="{QUIET}">{escape(what)}</text>'
    )


def svg() -> str:
    """The floors, the ground at the bottom, with the rule of their imports."""
    height = MARGIN * 2 + len(FLOORS) * (FLOOR_HEIGHT + GAP) + 40
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="system-ui, sans-serif" font-size="13">',
        "<title>The floors of ttt_solve: each imports only the floors below it</title>",
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
    ]
    for level, floor in enumerate(FLOORS):
        y = MARGIN + (len(FLOORS) - 1 - level) * (FLOOR_HEIGHT + GAP)
        parts.append(
            f'<rect x="{MARGIN}" y="{y - 6}" width="{WIDTH - 2 * MARGIN}" '
            f'height="{FLOOR_HEIGHT}" rx="8" fill="{COLOURS[level % 2]}"/>'
            f'<text x="{MARGIN + 12}" y="{y + 16}" font-weight="600" fill="{TEXT}">'
            f"floor {level}</text>"
            f'<text x="{MARGIN + 12}" y="{y + 33}" font-size="11" fill="{QUIET}">'
            f"{escape(FLOOR_NAMES[level])}</text>"
        )
        shown = rooms_of(floor)
        space = WIDTH - MARGIN - 10 - LEFT
        width = (space - 10 * (len(shown) - 1)) / len(shown)
        for index, (folder, what) in enumerate(shown):
            parts.append(room(LEFT + index * (width + 10), y, width, folder, what))
    bottom = MARGIN + len(FLOORS) * (FLOOR_HEIGHT + GAP) + 4
    parts.append(
        f'<text x="{MARGIN}" y="{bottom}" fill="{TEXT}">Each floor imports only the floors '
        "below it. A value reaches a drawing or a report above it</text>"
        f'<text x="{MARGIN}" y="{bottom + 18}" fill="{TEXT}">only from the method that shows '
        "it (_repr_svg_, _repr_html_, __repr__, text), when it is called.</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    sys.stdout.write(svg())
