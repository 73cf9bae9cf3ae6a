"""The GamesCrafters universal web API (the routes GamesmanUni reads), under ``/uwapi/``.

One game, ``mnk``, whose variants are the games of the book (``3x3k3``, ...). The mapping:

* values: win and loss are ``win`` and ``lose``; a draw (the board fills without a line) is
  ``tie``, because in GamesCrafters' terms a ``draw`` is a game that never ends, with the
  infinite remoteness -200; a tie has its finite remoteness, the plies to the full board.
* positions: ``<turn>_<cells>``, turn ``1`` when X is to move and ``2`` when O is, the cells row
  by row from the top, ``x``, ``o`` or ``-`` (``1_----x----``). The AutoGUI position is the same
  string, followed on boards other than 3x3 by the pieces that draw the grid (``g``).
  ``?p=`` also takes the explorer's own ``x.o/.x./...``.
* the board: GamesCrafters' tic-tac-toe pieces and grid, which their client ships.
* ``instructions/``: the variant's rules in Markdown, as their server gives a game's.

The game's id stays ``mnk`` rather than GamesCrafters' ``tictactoe``: their client draws a game
with that id with a 3x3 board of its own (a cell's index read as one digit), whatever the
variant, so the boards of other sizes would be drawn wrong.
* moves: the cell name (``b2``), and the AutoGUI move ``A_-_<cell index>_x`` (a circle button
  on that cell).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ttt_solve.book.errors import GameNotFoundError
from ttt_solve.book.oracle import Analysis
from ttt_solve.book.records import GameInfo
from ttt_solve.solver.errors import InvalidPositionError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome, Value
from ttt_solve.web.answers import json_response
from ttt_solve.web.common import RouteTable, answer, explorer_of, param
from ttt_solve.web.explorer import game_name

routes = RouteTable()

GAME_ID = "mnk"
VALUES = {Outcome.WIN: "win", Outcome.DRAW: "tie", Outcome.LOSS: "lose"}


def board_string(position: Position) -> str:
    """``1_----x----``: the turn (1: X to move, 2: O), then the cells row by row."""
    cells = "".join(position.cell(c).replace(".", "-") for c in range(position.rules.cells))
    return f"{1 if position.x_to_move else 2}_{cells}"


def parse_board_string(text: str, rules: Rules) -> Position:
    """A position from :func:`board_string`'s form or the explorer's ``x.o/.x./...``."""
    turn, underscore, cells = text.partition("_")
    if not underscore:
        return Position.parse(text, rules)
    position = Position.parse(cells.replace("-", "."), rules)
    if turn != ("1" if position.x_to_move else "2"):
        raise InvalidPositionError(
            f"position {text!r}: turn {turn!r} does not match the board, where "
            f"{'1 (X)' if position.x_to_move else '2 (O)'} is to move"
        )
    return position


GRID_IMAGE = "ttt/3x3grid.svg"
"""The tic-tac-toe grid GamesmanUni ships (its lines split a square in three each way), and the
pieces: what GamesCrafters' own server draws its tic-tac-toe variants with."""
PIECES = {"x": "ttt/x.svg", "o": "ttt/o.svg"}
GRID_CHAR = "g"


def grid_centers(rules: Rules) -> list[list[float]]:
    """Where to put copies of the 3x3 grid image, three cells wide, so that together they
    draw the lines between the cells of any board: one on each cell away from the edges (its
    lines are that cell's sides, and reach one cell further each way). A side of fewer than
    three cells takes one on each of its cells (its lines then frame the board on that side)."""

    def inner(n: int) -> range:
        return range(1, n - 1) if n >= 3 else range(n)

    return [[col + 0.5, row + 0.5] for row in inner(rules.rows) for col in inner(rules.cols)]


def autogui_position(position: Position) -> str:
    """The AutoGUI position: the board string, then one grid piece a copy of the grid image
    (none on 3x3, whose grid is the background)."""
    rules = position.rules
    extra = 0 if (rules.rows, rules.cols) == (3, 3) else len(grid_centers(rules))
    return board_string(position) + GRID_CHAR * extra


def image_autogui_data(rules: Rules) -> dict[str, Any]:
    """How GamesmanUni draws the board: GamesCrafters' tic-tac-toe pieces on one centre per
    cell, the lines of the grid between them (the 3x3 grid image as the background of 3x3,
    copies of it as pieces on other boards), a circle button per free cell."""
    cells = [[c % rules.cols + 0.5, c // rules.cols + 0.5] for c in range(rules.cells)]
    theme: dict[str, Any] = {
        "space": [rules.cols, rules.rows],
        "centers": cells,
        "charImages": {stone: {"image": image, "scale": 1} for stone, image in PIECES.items()},
        "circleButtonRadius": 0.22,
        "sounds": {"x": "general/place.mp3"},
        "animationType": "entityFade",
    }
    if (rules.rows, rules.cols) == (3, 3):
        theme["background"] = GRID_IMAGE
    else:
        theme["centers"] = cells + grid_centers(rules)
        theme["charImages"][GRID_CHAR] = {"image": GRID_IMAGE, "scale": 3}
    return {"defaultTheme": "regular", "themes": {"regular": theme}}


def variant(info: GameInfo) -> dict[str, Any]:
    rules = info.rules
    return {
        "id": game_name(rules),
        "name": f"{rules.rows}x{rules.cols}, {rules.k} in a row",
        "gui": "v3",
    }


def _variant_info(request: Request) -> GameInfo:
    if request.path_params["game_id"] != GAME_ID:
        raise GameNotFoundError(
            f"no game {request.path_params['game_id']!r}: this server has {GAME_ID!r}"
        )
    return explorer_of(request).game(request.path_params["variant_id"])


@routes.get("/uwapi/")
async def games(request: Request) -> Response:
    return json_response([{"id": GAME_ID, "name": "m,n,k-games", "type": "twoPlayer", "gui": "v3"}])


@routes.get("/uwapi/{game_id}/")
async def game(request: Request) -> Response:
    if request.path_params["game_id"] != GAME_ID:
        raise GameNotFoundError(
            f"no game {request.path_params['game_id']!r}: this server has {GAME_ID!r}"
        )
    return json_response(
        {
            "id": GAME_ID,
            "name": "m,n,k-games",
            "allowCustomVariantCreation": False,
            "supportsWinBy": False,
            "variants": [variant(info) for info in explorer_of(request).games()],
        }
    )


@routes.get("/uwapi/{game_id}/{variant_id}/")
async def variant_page(request: Request) -> Response:
    info = _variant_info(request)
    start = Position.start(info.rules)
    return json_response(
        {
            **variant(info),
            "startPosition": board_string(start),
            "autoguiStartPosition": autogui_position(start),
            "imageAutoGUIData": image_autogui_data(info.rules),
        }
    )


def _fields(position: Position, value: Value) -> dict[str, Any]:
    return {
        "position": board_string(position),
        "autoguiPosition": autogui_position(position),
        "positionValue": VALUES[value.outcome],
        "remoteness": value.remoteness,
    }


def position_json(analysis: Analysis) -> dict[str, Any]:
    """A position as the universal API gives it: its fields, then the moves best first, each
    with the child's fields and how much longer it takes than the best move of its value."""
    position = analysis.position
    best: dict[Outcome, int] = {}  # moves come best first: the first of each value is its best
    for move in analysis.moves:
        best.setdefault(move.value.outcome, move.value.remoteness)
    moves = []
    for move in analysis.moves:
        child_value = Value(Outcome.from_sign(-move.value.outcome.sign), move.value.remoteness - 1)
        moves.append(
            {
                **_fields(position.play(move.cell), child_value),
                "move": move.name,
                "autoguiMove": f"A_-_{move.cell}_x",
                "moveValue": VALUES[move.value.outcome],
                "deltaRemoteness": abs(move.value.remoteness - best[move.value.outcome]),
            }
        )
    return {**_fields(position, analysis.value), "moves": moves}


@routes.get("/uwapi/{game_id}/{variant_id}/positions/")
async def position(request: Request) -> Response:
    info = _variant_info(request)
    text = param(request, "p")
    if not text:
        raise InvalidPositionError("give the position as ?p=1_--------- (turn, then the cells)")
    analysis = await answer(explorer_of(request), parse_board_string(text, info.rules))
    return json_response(position_json(analysis))


def instructions(info: GameInfo) -> str:
    """The rules of a variant in Markdown, laid out as GamesCrafters' explainers are (the
    board, the pieces, the rules, then what perfect play gives, from the book)."""
    rules = info.rules
    value = info.value
    moves = f"{value.remoteness} move{'s' if value.remoteness != 1 else ''}"
    result = {
        "win": f"won by X in {moves}",
        "draw": f"a tie: the board fills in {moves}",
        "loss": f"won by O in {moves}",
    }[value.outcome.value]
    return (
        f"# {rules.rows}x{rules.cols}, {rules.k} in a row\n\n"
        f"## The Board\n---\nA grid of {rules.rows} row{'s' if rules.rows != 1 else ''} and "
        f"{rules.cols} column{'s' if rules.cols != 1 else ''}, empty at the start.\n\n"
        f"## The Pieces\nX and O: each player places their own, X first.\n\n"
        f"## Rules\n**To Move:** Place one of your pieces on any empty cell. Players take turns, "
        f"X first; a piece never moves once placed.\n\n"
        f"**To Win:** Be the first to have {rules.k} of your pieces in a row: across, down or "
        f"diagonally. If the board fills before anyone does, the game is a tie.\n\n"
        f"## Strategies\n- **Perfect play:** with both players playing perfectly, the game is "
        f"{result} ({info.method} solve of {info.positions:,} "
        f"positions up to symmetry). The move values shown come from this book.\n"
    )


@routes.get("/uwapi/{game_id}/{variant_id}/instructions/")
async def instructions_route(request: Request) -> Response:
    """The variant's rules, as GamesCrafters' server answers them: ``{"instructions": "..."}``
    in Markdown. Every ``?locale=`` gets the English text (their server falls back to English
    too)."""
    return json_response({"instructions": instructions(_variant_info(request))})
