"""What the page and API handlers share: their routes, reading a request's position, answering
it without blocking the server, and the plain data of a game."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, NamedTuple

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ttt_solve.book.errors import OutOfReachError
from ttt_solve.book.oracle import Analysis
from ttt_solve.book.reader import GameInfo
from ttt_solve.solver.errors import IllegalMoveError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.web.audits import AuditRunner
from ttt_solve.web.explorer import Explorer, game_name

MAX_QUERY = 2_000
"""Longest ``position`` or ``moves`` parameter read (a board of 64 cells needs far less)."""


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


class Asked(NamedTuple):
    """A position as a URL asks for it: a starting position, then moves played on it."""

    info: GameInfo
    base: str | None  # the ``position`` parameter, as written (None: the empty board)
    start: Position
    cells: tuple[int, ...]
    position: Position  # after the moves

    @property
    def rules(self) -> Rules:
        return self.info.rules

    @property
    def move_names(self) -> tuple[str, ...]:
        return tuple(self.rules.cell_name(c) for c in self.cells)


def param(request: Request, name: str, default: str | None = None) -> str | None:
    value = request.query_params.get(name, default)
    if value is not None and len(value) > MAX_QUERY:
        raise ValueError(f"the {name} parameter is longer than {MAX_QUERY} characters")
    return value


def asked_position(request: Request, game: str) -> Asked:
    """The game and position of a request's path and ``position``/``moves`` parameters."""
    explorer = explorer_of(request)
    info = explorer.game(game)
    rules = info.rules
    base = param(request, "position")
    start = explorer.position(rules, base, None)
    position = start
    cells: list[int] = []
    for token in re.split(r"[,\s]+", param(request, "moves") or ""):
        if token:
            cell = rules.parse_cell(token)
            try:
                position = position.play(cell)
            except IllegalMoveError as error:
                raise IllegalMoveError(f"move {len(cells) + 1} ({token}): {error}") from None
            cells.append(cell)
    return Asked(info, base, start, tuple(cells), position)


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
