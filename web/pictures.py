"""The pictures of the pages: boards and value histories (:mod:`ttt_solve.presentation.svg`)
and charts (:mod:`ttt_solve.web.plots`), drawn from the same answers as a page's data object,
only for its HTML (the ``.json`` twin draws nothing). Each function gives the ``pictures`` its
template reads: inline SVG, and the width a board is drawn at; never a figure of the data."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ttt_solve.agents.audit import Truth
from ttt_solve.book.oracle import Analysis
from ttt_solve.book.query import LineMove
from ttt_solve.book.records import GameInfo
from ttt_solve.presentation import picture, svg
from ttt_solve.presentation.charts import ChartsUnavailableError
from ttt_solve.solver.position import Position
from ttt_solve.solver.value import Value
from ttt_solve.web import plots

if TYPE_CHECKING:
    from ttt_solve.web.views import Setup, State

SMALL_CELL = 34
"""The side of a cell of the small boards of an audit's costly moves, in pixels."""


def chart(draw: Any, *args: Any) -> str | None:
    """An inline SVG chart, or ``None`` where matplotlib is not installed (the page says so)."""
    try:
        return str(draw(*args))
    except ChartsUnavailableError:
        return None


def width_of(cols: int) -> int:
    """The widest a board is drawn on a page, in pixels: large cells for small boards, the
    whole board within a phone's width for large ones (the board then scales to the page)."""
    return min(520, 40 + cols * 100)


def position(
    state: State,
    analysis: Analysis,
    line: Sequence[LineMove] | None,
    history: picture.History | None,
) -> dict[str, Any]:
    """A position page's board (every move a link, the optimal line numbered) and value
    history."""
    rules = state.rules
    drawn = picture.of_analysis(
        analysis,
        lastmove=rules.parse_cell(state.moves[state.ply - 1]) if state.ply else None,
        marked=[state.mark] if state.mark is not None else (),
        line=[step.cell for step in line] if line else (),
        links={move.cell: state.play(move.cell) for move in analysis.moves},
        show_values=state.show_values,
    )
    shown = history if state.show_values else None
    return {
        "board_svg": svg.board(drawn),
        "board_width": width_of(rules.cols),
        "history_svg": (
            svg.value_history(shown, max_remoteness=rules.cells, current=state.ply, notes=False)
            if shown is not None
            else None
        ),
    }


def analysis(info: GameInfo) -> dict[str, Any]:
    """A game's charts: its positions by ply and by remoteness."""
    return {
        "by_ply_svg": chart(plots.positions_by_ply, info),
        "remoteness_svg": chart(plots.remoteness, info),
    }


def editor(setup: Setup, legal: bool) -> dict[str, Any]:
    """The board being set up, each cell a link that places or takes away the tool's stone."""
    rules = setup.rules
    drawn = Position(
        rules,
        sum(1 << i for i, c in enumerate(setup.cells) if c == "x"),
        sum(1 << i for i, c in enumerate(setup.cells) if c == "o"),
    )
    cell_links = {c: setup.with_cell(c) for c in range(rules.cells)}
    return {
        "board_svg": svg.board(picture.board(drawn, links=cell_links), caption=legal),
        "board_width": width_of(rules.cols),
    }


def small_board(truth: Truth, row: dict[str, Any]) -> str:
    """A costly move's position as a small board: every move's value, the best moves starred,
    the agent's move framed, the whole board a link to its page."""
    rules = truth.rules
    position_ = Position.parse(row["position"], rules)
    values: dict[int, Value] = truth.move_values(position_) or {}
    best = [rules.parse_cell(c) for c in row["best_moves"]]
    drawn = picture.board(
        position_, values=values, best=best, marked=[rules.parse_cell(row["move"])]
    )
    return svg.board(
        drawn,
        size=SMALL_CELL * rules.cols + 20,
        caption=False,
        title=f"{row['position']}: {row['to_move'].upper()} played {row['move']}",
    )


def small_boards(truth: Truth, rows: Sequence[dict[str, Any]]) -> dict[str, str]:
    """The small boards of an audit's costly moves, by the URL of each move's page."""
    return {row["url"]: small_board(truth, row) for row in rows}


def audit(summary: Any, agent: str, boards: dict[str, str]) -> dict[str, Any]:
    """An audit's chart by ply (once it has figures) and its costly moves' small boards."""
    return {
        "by_ply_svg": chart(plots.audit_by_ply, summary, agent) if summary else None,
        "boards": boards,
    }


def play(
    position_: Position,
    analysis_: Analysis | None,
    show_values: bool,
    hint: bool,
    last: int | None,
    move_url: Callable[[int], str],
) -> dict[str, Any]:
    """The board of a game against an agent: each empty cell a link that plays it, the values
    when shown, the best moves framed for a hint."""
    cells = {}
    if not position_.is_terminal:
        cells = {c: move_url(c) for c in position_.legal_moves()}
    values = {m.cell: m.value for m in analysis_.moves} if analysis_ and show_values else None
    drawn = picture.board(
        position_,
        values=values,
        best=analysis_.best_moves if analysis_ and show_values else (),
        lastmove=last,
        marked=analysis_.best_moves if analysis_ and hint else (),
        links=cells,
    )
    return {"board_svg": svg.board(drawn), "board_width": width_of(position_.rules.cols)}
