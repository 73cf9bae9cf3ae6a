"""What a board picture shows, cell by cell: one model for the text, HTML and SVG boards.

:func:`board` turns a position, and what is known about it (each move's value, the best moves,
the last move, a marked cell, a line of moves to draw as numbered stones, links), into a
:class:`Board`: the cells in row-major order, each with everything a drawing needs. The
drawings read only this model: :func:`text` for the terminal (here),
:func:`ttt_solve.presentation.svg.board` for notebooks, the web explorer and the docs. Nothing
here imports more than the standard library and the solver's value types, so the terminal pays
nothing for it.

:func:`history` is the model of a value history: one point per position of a game, with the
moves between them graded, for :func:`ttt_solve.presentation.svg.value_history`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from ttt_solve.presentation.palette import VALUES, label
from ttt_solve.solver.position import Position, iter_cells
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome, Value


class Cell(NamedTuple):
    """One cell of a board picture."""

    cell: int  # its index, row-major from 0 (as a move's ``cell``)
    name: str  # "b2"
    row: int
    col: int
    stone: str | None  # "x", "o", or None for an empty cell
    value: Value | None  # an empty cell's move: its value for the mover, when known and shown
    best: bool  # one of the best moves
    last: bool  # the last move played
    winning: bool  # on a completed line of the winner
    marked: bool  # the cell under review (an agent's move, a blunder)
    number: int | None  # its place in a line of moves drawn on the board (1, 2, ...)
    ghost: str | None  # the stone of that line's move ("x" or "o")
    link: str | None  # where a click on the cell leads

    @property
    def label(self) -> str | None:
        """The value written short (``W3``), or ``None`` for a cell without one."""
        return None if self.value is None else label(self.value.outcome, self.value.remoteness)


class Board(NamedTuple):
    """A board picture: the rules, the cells in row-major order, and who is to move."""

    rules: Rules
    cells: tuple[Cell, ...]
    to_move: str | None  # "x" or "o"; None once the game is over
    winner: str | None  # "x" or "o" once a side has a line
    lines: tuple[tuple[int, int], ...]  # the winner's completed lines: (first cell, last cell)
    show_values: bool

    @property
    def rows(self) -> list[tuple[Cell, ...]]:
        cols = self.rules.cols
        return [self.cells[start : start + cols] for start in range(0, len(self.cells), cols)]

    @property
    def caption(self) -> str:
        """``X to move``, ``X has won`` or ``drawn``."""
        if self.winner is not None:
            return f"{self.winner.upper()} has won"
        if self.to_move is None:
            return "drawn: the board is full"
        return f"{self.to_move.upper()} to move"


def board(
    position: Position,
    *,
    values: Mapping[int, Value] | None = None,
    best: Iterable[int] = (),
    lastmove: int | None = None,
    marked: Iterable[int] = (),
    line: Sequence[int] = (),
    links: Mapping[int, str] | None = None,
    show_values: bool = True,
) -> Board:
    """The picture of ``position``.

    ``values`` gives empty cells' move values (for the mover), ``best`` the best moves,
    ``lastmove`` the cell played last, ``marked`` cells to frame, ``line`` moves played from
    here in order (drawn as numbered stones of the side that plays each), ``links`` where each
    cell leads. With ``show_values=False`` the values and best moves are left out (for play and
    teaching) and everything else is kept.
    """
    rules = position.rules
    values = values if (values is not None and show_values) else {}
    best_cells = set(best) if show_values else set()
    marked_cells = set(marked)
    links = links or {}
    ghosts: dict[int, tuple[int | None, str | None]] = {}
    side = position.to_move
    for step, cell in enumerate(line, start=1):
        ghosts[cell] = (step, side)
        side = side.other
    winner = position.winner
    completed = winning_lines(position) if winner else ()
    on_lines: set[int] = set()
    for mask in completed:
        on_lines.update(iter_cells(mask))
    cells = []
    for index in range(rules.cells):
        stone = position.cell(index)
        number, ghost = ghosts.get(index, (None, None))
        row, col = divmod(index, rules.cols)
        cells.append(
            Cell(
                cell=index,
                name=rules.cell_name(index),
                row=row,
                col=col,
                stone=None if stone == "." else stone,
                value=values.get(index),
                best=index in best_cells,
                last=index == lastmove,
                winning=index in on_lines,
                marked=index in marked_cells,
                number=number,
                ghost=ghost,
                link=links.get(index),
            )
        )
    ends = tuple((_lowest(mask), mask.bit_length() - 1) for mask in completed)
    return Board(
        rules=rules,
        cells=tuple(cells),
        to_move=None if position.is_terminal else position.to_move,
        winner=winner,
        lines=ends,
        show_values=show_values,
    )


def of_analysis(analysis: Any, **options: Any) -> Board:
    """The picture of an analysed position (an :class:`~ttt_solve.book.oracle.Analysis`):
    every move's value and the best moves; ``options`` as for :func:`board`."""
    values = {move.cell: move.value for move in analysis.moves}
    return board(analysis.position, values=values, best=analysis.best_moves, **options)


def winning_lines(position: Position) -> tuple[int, ...]:
    """The masks of the lines the winner has completed (none when nobody has won)."""
    winner = position.winner
    if winner is None:
        return ()
    stones = position.x if winner == "x" else position.o
    return tuple(mask for mask in position.rules.lines if stones & mask == mask)


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


# -- the terminal ------------------------------------------------------------------------------


def text(picture: Board, colour: bool = False, stones: Mapping[int, str] | None = None) -> str:
    """The board as lines of text: column letters on top, row numbers on the left, stones as
    ``x``/``o``, empty cells as ``.`` or their move's value (``W3``), coloured as the palette
    says when ``colour``. ``stones`` overrides what a cell shows (``*`` for a move under
    review)."""
    import click  # the command line's own dependency; imported here, where a board is drawn

    stones = stones or {}
    shown = [stones.get(c.cell) or c.label or c.stone or "." for c in picture.cells]
    width = max([1] + [len(text) for text in shown])
    cols = picture.rules.cols
    head = "    " + " ".join(chr(ord("a") + c).center(width) for c in range(cols))
    lines = [head.rstrip()]
    for row in picture.rows:
        texts = []
        for cell in row:
            shown_text = shown[cell.cell]
            style: dict[str, Any] = {}
            if colour and cell.cell not in stones:
                if cell.value is not None:
                    style = {"fg": VALUES[cell.value.outcome].terminal}
                elif cell.stone is not None:
                    style = {"bold": True}
            styled = click.style(shown_text, **style) if style else shown_text
            texts.append(_centred(shown_text, width, styled))
        lines.append(f"{row[0].row + 1:>3} " + " ".join(texts))
    return "\n".join(line.rstrip() for line in lines)


def _centred(plain: str, width: int, styled: str) -> str:
    """``styled`` placed where ``plain.center(width)`` puts ``plain`` (so trailing blanks strip
    and cells sit under their column letters whatever the colour codes)."""
    left = plain.center(width).find(plain)
    return " " * left + styled + " " * (width - len(plain) - left)


# -- the value history -------------------------------------------------------------------------


class Point(NamedTuple):
    """One position of a game in its value history."""

    ply: int
    to_move: str  # "x" or "o" (the side that would move; at the end, the side that cannot)
    value: Value  # for the side to move
    move: str | None  # the move that led here ("c3"), None for the first position
    link: str | None


class Change(NamedTuple):
    """A move that changed the value for its mover: a blunder (``win→draw``, ``win→loss``,
    ``draw→loss``)."""

    ply: int  # the ply of the position the move was played in
    player: str  # "x" or "o"
    move: str
    before: Outcome  # the mover's value before the move
    after: Outcome  # the mover's value after it

    @property
    def text(self) -> str:
        return f"{self.move}: {self.before.value}→{self.after.value}"


class History(NamedTuple):
    """A value history: the points of a game, in order, and the moves that changed a value."""

    rules: Rules
    points: tuple[Point, ...]
    changes: tuple[Change, ...]

    @property
    def max_remoteness(self) -> int:
        return max([1] + [p.value.remoteness for p in self.points])


def history(
    rules: Rules,
    points: Iterable[tuple[Position, Value]],
    *,
    moves: Sequence[int] | None = None,
    links: Sequence[str | None] | None = None,
) -> History:
    """The value history of a game from its positions and their values (for the side to move),
    in order; ``moves`` are the cells played between them (found from the positions when not
    given), ``links`` one URL per position."""
    pairs = list(points)
    made: list[Point] = []
    changes: list[Change] = []
    for index, (position, value) in enumerate(pairs):
        move = None
        if index > 0:
            cell = moves[index - 1] if moves is not None else _played(pairs[index - 1][0], position)
            move = rules.cell_name(cell)
            before_position, before_value = pairs[index - 1]
            mover_after = _flip(value.outcome)
            if mover_after != before_value.outcome:
                changes.append(
                    Change(
                        ply=before_position.ply,
                        player=before_position.to_move,
                        move=move,
                        before=before_value.outcome,
                        after=mover_after,
                    )
                )
        link = links[index] if links is not None else None
        made.append(Point(position.ply, position.to_move, value, move, link))
    return History(rules, tuple(made), tuple(changes))


def _played(before: Position, after: Position) -> int:
    added = after.occupied & ~before.occupied
    if added.bit_count() != 1:
        raise ValueError(f"{after} does not follow {before} by one move")
    return _lowest(added)


def _flip(outcome: Outcome) -> Outcome:
    return Outcome.from_sign(-outcome.sign)
