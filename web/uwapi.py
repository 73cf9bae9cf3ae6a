"""The GamesCrafters universal web API (the routes GamesmanUni reads), under ``/uwapi/``.

One game, ``mnk``, whose variants are the games of the book (``3x3k3``, ...). The mapping:

* values: win and loss are ``win`` and ``lose``; a draw (the board fills without a line) is
  ``tie``, because in GamesCrafters' terms a ``draw`` is a game that never ends, with the
  infinite remoteness -200; a tie has its finite remoteness, the plies to the full board.
* positions: ``<turn>_<cells>``, turn ``1`` when X is to move and ``2`` when O is, the cells row
  by row from the top, ``x``, ``o`` or ``-`` (``1_----x----``). The same string is the AutoGUI
  position. ``?p=`` also takes the explorer's own ``x.o/.x./...``.
* moves: the cell name (``b2``), and the AutoGUI move ``A_-_<cell index>_x`` (a circle button
  on that cell).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ttt_solve.book.errors import GameNotFoundError
from ttt_solve.book.oracle import Analysis
from ttt_solve.book.reader import GameInfo
from ttt_solve.solver.errors import InvalidPositionError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome, Value
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


def image_autogui_data(rules: Rules) -> dict[str, Any]:
    """How GamesmanUni draws the board: one centre per cell, a piece image per mark."""
    return {
        "defaultTheme": "regular",
        "themes": {
            "regular": {
                "space": [rules.cols, rules.rows],
                "centers": [
                    [c % rules.cols + 0.5, c // rules.cols + 0.5] for c in range(rules.cells)
                ],
                "charImages": {
                    "x": {"image": "general/blackpiece.svg", "scale": 0.8},
                    "o": {"image": "general/whitepiece.svg", "scale": 0.8},
                },
                "circleButtonRadius": 0.3,
                "sounds": {"x": "general/place.mp3"},
                "animationType": "entityFade",
            }
        },
    }


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
    return JSONResponse([{"id": GAME_ID, "name": "m,n,k-games", "type": "twoPlayer", "gui": "v3"}])


@routes.get("/uwapi/{game_id}/")
async def game(request: Request) -> Response:
    if request.path_params["game_id"] != GAME_ID:
        raise GameNotFoundError(
            f"no game {request.path_params['game_id']!r}: this server has {GAME_ID!r}"
        )
    return JSONResponse(
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
    start = board_string(Position.start(info.rules))
    return JSONResponse(
        {
            **variant(info),
            "startPosition": start,
            "autoguiStartPosition": start,
            "imageAutoGUIData": image_autogui_data(info.rules),
        }
    )


def _fields(position: Position, value: Value) -> dict[str, Any]:
    text = board_string(position)
    return {
        "position": text,
        "autoguiPosition": text,
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
    return JSONResponse(position_json(analysis))
