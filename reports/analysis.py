"""A position's analysis (:class:`~ttt_solve.book.oracle.Analysis`) as a notebook shows it: the
board with every move's value, and the moves grouped winning / drawing / losing, each group
best first (syzygy-tables.info's grouping)."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from ttt_solve.presentation import html, picture, svg
from ttt_solve.presentation.palette import VALUES
from ttt_solve.solver.value import Outcome

if TYPE_CHECKING:
    from ttt_solve.book.oracle import Analysis

_GROUPS = ((Outcome.WIN, "winning"), (Outcome.DRAW, "drawing"), (Outcome.LOSS, "losing"))


def analysis_html(analysis: Analysis) -> str:
    """A position's board with every move's value, and its moves grouped by value."""
    board = svg.board(picture.of_analysis(analysis))
    lines = [_head(analysis)]
    best = set(analysis.best_moves)
    for outcome, word in _GROUPS:
        moves = [m for m in analysis.moves if m.value.outcome is outcome]
        if not moves:
            continue
        entries = ", ".join(
            f"<b>{escape(m.name)}</b>" + ("★" if m.cell in best else "") + f" {m.value.remoteness}"
            for m in moves
        )
        lines.append(
            f'<div><span style="color: {VALUES[outcome].edge}; font-weight: 600;">'
            f"{word} ({len(moves)}):</span> {entries}</div>"
        )
    if analysis.moves:
        lines.append(
            f'<div style="{html.QUIET} font-size: 12px;">each move: its cell and the plies to '
            "the end under perfect play; ★ best</div>"
        )
    return html.frame(
        f'<div style="{html.SIDE_BY_SIDE}"><div>{board}</div><div>{"".join(lines)}</div></div>'
    )


def _head(analysis: Analysis) -> str:
    """Who is to move and the value, or that the game is over; and where the answer came from."""
    position, value = analysis.position, analysis.value
    if position.is_terminal:
        head = escape(f"{picture.board(position).caption}: the game is over")
    else:
        head = escape(f"{position.to_move.upper()} to move (ply {position.ply}): ")
        head += html.value_text(value.outcome, value.remoteness)
    return f'<div>{head} <span style="{html.QUIET}">({escape(_source(analysis))})</span></div>'


def _source(analysis: Analysis) -> str:
    if analysis.source == "book":
        return "from the book"
    searched = f"searched live: {analysis.nodes:,} nodes, {analysis.seconds:.2f} s"
    return searched if analysis.source == "search" else "value from the book; moves " + searched
