"""What the page and API handlers share: their routes, reading a request's position, answering
it without blocking the server, and the plain data of a game."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp

from ttt_solve.book.errors import OutOfReachError
from ttt_solve.book.oracle import Analysis
from ttt_solve.book.records import GameInfo
from ttt_solve.solver.position import Position
from ttt_solve.web.audits import AuditRunner
from ttt_solve.web.explorer import Asked, Explorer, game_name, url_param

Handler = Callable[[Request], Awaitable[Response]]


class RouteTable:
    """The routes of one module: each handler declares its own above it, with
    ``@routes.get(path)`` or ``@routes.post(path)``; the app joins the modules' tables."""

    def __init__(self) -> None:
        self.routes: list[Route] = []

    def __iter__(self) -> Iterator[Route]:
        return iter(self.routes)

    def get(self, path: str) -> Callable[[Handler], Handler]:
        return self._declare(path, "GET")

    def get_asgi(self, path: str, app: ASGIApp) -> None:
        """A GET route answered by a bare ASGI app (an object, not a function: Starlette
        would take a function for a handler): no request or response object is made for
        it, and its errors reach the application's handlers all the same."""
        self.routes.append(Route(path, app, methods=["GET"]))

    def post(self, path: str) -> Callable[[Handler], Handler]:
        return self._declare(path, "POST")

    def _declare(self, path: str, method: str) -> Callable[[Handler], Handler]:
        def declare(handler: Handler) -> Handler:
            self.routes.append(Route(path, handler, methods=[method]))
            return handler

        return declare


def explorer_of(request: Request) -> Explorer:
    explorer: Explorer = request.app.state.explorer
    return explorer


def audits_of(request: Request) -> AuditRunner:
    runner: AuditRunner = request.app.state.audits
    return runner


LONGEST_WORD = 48
"""The longest word of a message quoted whole (a cell list, a position written out); a longer
one is quoted shortened, so that a page never grows wider than a phone for a visitor's input."""
LONGEST_MESSAGE = 300
"""The longest message shown whole."""


def shortened(text: str) -> str:
    """``text`` with each word longer than :data:`LONGEST_WORD` cut in the middle (its start
    and end kept: ``'xxxxxxxx…xxx'``), and the whole cut after :data:`LONGEST_MESSAGE`."""
    words = [
        f"{word[: LONGEST_WORD - 9]}…{word[-8:]}" if len(word) > LONGEST_WORD else word
        for word in text.split(" ")
    ]
    joined = " ".join(words)
    return joined if len(joined) <= LONGEST_MESSAGE else joined[: LONGEST_MESSAGE - 1] + "…"


def param(request: Request, name: str, default: str | None = None) -> str | None:
    return url_param(request.query_params, name, default)


def asked_position(request: Request, game: str) -> Asked:
    """The game and position of a request's path and ``position``/``moves`` parameters."""
    return explorer_of(request).asked(game, request.query_params)


async def answer(explorer: Explorer, position: Position) -> Analysis:
    """The position's answer: a book read in the event loop (fast), a live search in a
    worker thread (so the server keeps answering meanwhile)."""
    try:
        return explorer.read(position)
    except OutOfReachError:
        return await run_in_threadpool(explorer.search, position)


def game_json(info: GameInfo) -> dict[str, Any]:
    rules = info.rules
    return {
        "name": game_name(rules),
        "game": rules.as_dict(),
        "value_for_x": info.value.outcome.value,
        "remoteness": info.value.remoteness,
        "method": info.method,
        "book_depth": info.book_depth,
        "positions": info.positions,
        "reachable": info.reachable,
        "solved_at": info.solved_at.isoformat(),
    }
