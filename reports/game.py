"""A played game's report: its last position, its moves and its value history, as a notebook
shows a :class:`~ttt_solve.session.PlayedGame` and an audit its games."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from ttt_solve.presentation import html, picture, svg


def game_html(game: Any) -> str:
    """A played game (a :class:`~ttt_solve.session.PlayedGame`): its last position with the
    last move shaded and any winning line struck, its moves, and its value history when the
    values of its positions are known."""
    record = game.record
    heading = f"{game.x_name} (X) against {game.o_name} (O) on {record.rules.name}: {game.result}"
    return html.frame(html.heading(heading) + game_view(record, game.values))


def numbered_moves(record: Any) -> str:
    """A game's moves named by cell and numbered as from the empty board (``1. b2 a1 2. ...``),
    after the position it started from when that is not the empty board."""
    rules = record.rules
    first = record.positions()[0]
    names = [rules.cell_name(cell) for cell in record.moves]
    if not first.x_to_move:  # numbered as a game from the empty board: O's move ends a pair
        names.insert(0, "...")
    numbered = " ".join(
        f"{(first.ply + index) // 2 + 1}. {' '.join(names[index : index + 2])}"
        for index in range(0, len(names), 2)
    )
    return f"from {first}: {numbered}" if first.ply else numbered


def game_view(record: Any, values: Sequence[Any] | None, *, size: int | None = None) -> str:
    """A game (a :class:`~ttt_solve.agents.match.GameRecord`) drawn: its last position, its
    moves named by cell and numbered, and its value history when ``values`` (one per
    position) are known."""
    positions = record.positions()
    last = record.moves[-1] if record.moves else None
    drawn = picture.board(positions[-1], lastmove=last)
    board = svg.board(drawn) if size is None else svg.board(drawn, size=size)
    numbered = numbered_moves(record)
    parts = [
        f'<div style="{html.SIDE_BY_SIDE}">'
        f'<div style="max-width: 100%;">{board}<div>{escape(numbered) or "no moves"}</div></div>'
    ]
    if values is not None:
        history = picture.history(record.rules, list(zip(positions, values)), moves=record.moves)
        parts.append(
            f'<div style="max-width: 100%;">{html.fluid(svg.value_history(history))}</div>'
        )
    parts.append("</div>")
    return "".join(parts)
