"""The JSON API under ``/api/``: games, positions (the object of ``ttt query --json``), the
mainline, and audits (start, progress, result)."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote_plus

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ttt_solve.book.errors import OutOfReachError
from ttt_solve.errors import TttError
from ttt_solve.web import links, views
from ttt_solve.web.answers import encode_analysis, json_response
from ttt_solve.web.audits import job_json
from ttt_solve.web.common import (
    MAX_QUERY,
    RouteTable,
    asked_position,
    audits_of,
    explorer_of,
    game_json,
)
from ttt_solve.web.explorer import Explorer
from ttt_solve.web.forms import audit_request, job_of

routes = RouteTable()


@routes.get("/api/games/{game}/position")  # first: the route asked most
async def position(request: Request) -> Response:
    asked = asked_position(request, request.path_params["game"])
    explorer = explorer_of(request)
    try:
        body = explorer.read_json(asked.position)  # from the book, kept encoded
    except OutOfReachError:  # past the book (read_json tried it): searched live, each time
        searched = await run_in_threadpool(explorer.search, asked.position)
        body = encode_analysis(searched)
    return Response(body, media_type="application/json")


POSITION_PATH = re.compile(r"/api/games/([^/]+)/position")
"""The path of :func:`position`, as Starlette matches it."""


class BookAnswers:
    """In front of the routes: a request of the position route asked most, a position
    written out (or the empty board) whose answer the book holds, is answered at once, as
    :func:`position` answers it (the same status, headers and bytes) but without Starlette's
    routing, request and response objects. Anything else (moves, other parameters, a live
    search, an error) goes on to the routes."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = book_answer(scope) if scope["type"] == "http" else None
        if body is None:
            await self.app(scope, receive, send)
            return
        length = str(len(body)).encode()
        headers = [(b"content-length", length), (b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def book_answer(scope: Scope) -> bytes | None:
    """The body of :func:`position`'s answer to a request with no parameter but ``position``,
    from the book; ``None`` for any other request."""
    if scope["method"] != "GET" or scope.get("root_path"):
        return None
    game = POSITION_PATH.fullmatch(scope["path"])
    if game is None:
        return None
    query = scope["query_string"]
    if not query:
        text = None  # the empty board
    elif query.startswith(b"position=") and b"&" not in query:
        text = unquote_plus(query[len(b"position=") :].decode("latin-1"))  # as Starlette reads it
        if len(text) > MAX_QUERY:
            return None
    else:
        return None
    explorer: Explorer = scope["app"].state.explorer
    try:
        info = explorer.game(game[1])
        return explorer.read_json(explorer.position(info.rules, text, None))
    except (TttError, ValueError, LookupError):  # for position() to say (or to search live)
        return None


@routes.get("/api/games")
async def games(request: Request) -> Response:
    return json_response([game_json(info) for info in explorer_of(request).games()])


@routes.get("/api/games/{game}")
async def game(request: Request) -> Response:
    info = explorer_of(request).game(request.path_params["game"])
    return json_response({**game_json(info), "figures": info.figures.to_dict()})


@routes.get("/api/games/{game}/mainline")
async def mainline(request: Request) -> Response:
    asked = asked_position(request, request.path_params["game"])
    rules = asked.rules
    line = await run_in_threadpool(explorer_of(request).line, asked.position)
    names = [rules.cell_name(step.cell) for step in line]

    def url(steps: int) -> str:
        return links.position_url(rules, asked.base, (*asked.move_names, *names[:steps]))

    return json_response(views.mainline_json(rules, asked.position, line, url))


@routes.post("/api/audits")
async def start_audit(request: Request) -> Response:
    body = (await request.body())[:10_000]
    try:
        fields: Any = json.loads(body or b"{}", parse_int=str)  # numbers checked when read
    except ValueError:
        raise ValueError(
            'the body is not JSON: send an object like {"game": "3x3k3", "agent": "heuristic"}'
        ) from None
    except RecursionError:
        raise ValueError("the body is JSON nested too deeply: send a flat object") from None
    if not isinstance(fields, dict):
        raise ValueError("the body is not a JSON object")
    request_ = audit_request(
        {key: str(value) for key, value in fields.items() if value is not None}
    )
    explorer_of(request).book.game(request_.rules)
    job = audits_of(request).start(request_)
    return json_response(
        job_json(job), status_code=202, headers={"Location": f"/api/audits/{job.id}"}
    )


@routes.get("/api/audits/{job}")
async def audit(request: Request) -> Response:
    job = job_of(request)
    return json_response(job_json(job, views.worst_link(job.request.rules, job.id)))
