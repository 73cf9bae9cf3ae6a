"""A question to the book and its answer as plain data, shared by ``ttt query`` and ``ttt serve``.

:func:`parse_query` reads the position asked about (a position string, then moves played on
it); :func:`analysis_json` is the JSON object of an :class:`~book.oracle.Analysis` (the output
of ``ttt query --json`` and of the web API); :func:`mainline` follows best moves to the end.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ttt_solve.book.oracle import Analysis, Oracle
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Value


def parse_query(rules: Rules, text: str | None, moves: str | None) -> Position:
    """The position asked about: ``text`` (or the empty board), then ``moves`` played on it.

    ``moves`` are cell names or indexes separated by commas or spaces (``b2,a1,c3``).
    """
    position = Position.start(rules) if text is None else Position.parse(text, rules)
    for token in re.split(r"[,\s]+", moves or ""):
        if token:
            position = position.play(rules.parse_cell(token))
    return position


def analysis_json(analysis: Analysis) -> dict[str, Any]:
    """The answer as plain data for scripts."""
    position = analysis.position
    rules = position.rules
    best = set(analysis.best_moves)
    # Every position that is not over has a legal move, so the answer's moves say whether it
    # is over, and only a position that is over may have a winner: the lines are looked at
    # once, not three times.
    terminal = not analysis.moves
    return {
        "game": rules.as_dict(),
        "position": str(position),
        "ply": position.ply,
        "to_move": position.to_move,
        "terminal": terminal,
        "winner": position.winner if terminal else None,
        "value": analysis.value.outcome.value,
        "remoteness": analysis.value.remoteness,
        "source": analysis.source,
        "searched_live": analysis.searched,
        "search_nodes": analysis.nodes,
        "search_seconds": round(analysis.seconds, 4),
        "moves": [
            {
                "cell": m.name,
                "index": m.cell,
                "value": m.value.outcome.value,
                "remoteness": m.value.remoteness,
                "best": m.cell in best,
            }
            for m in analysis.moves
        ],
    }


class LineMove(NamedTuple):
    """One move of a line: the position before it, the cell, and its value for the mover."""

    position: Position
    cell: int
    value: Value


def mainline(oracle: Oracle, position: Position) -> list[LineMove]:
    """The optimal line from ``position`` to the end of the game: at each ply the first of
    the best moves (fastest win, slowest loss; the lowest cell among equals)."""
    line = []
    while not position.is_terminal:
        analysis = oracle.analyse(position)
        best = analysis.moves[0]
        line.append(LineMove(position, best.cell, best.value))
        position = position.play(best.cell)
    return line
