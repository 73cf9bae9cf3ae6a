"""The JSON API under ``/api/``: games, positions (the object of ``ttt query --json``), the
mainline, and audits (start, progress, result)."""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ttt_solve.book.errors import OutOfReachError
from ttt_solve.web import links, views
from ttt_solve.web.answers import encode_analysis, json_response
from ttt_solve.web.audits import job_json
from ttt_solve.web.common import RouteTable, asked_position, audits_of, explorer_of, game_json
from ttt_solve.web.explorer import Explorer
from ttt_solve.web.forms import RepeatedField, audit_request, job_of, once_each

routes = RouteTable()


class PositionAnswers:
    """``/api/games/{game}/position``, the route asked most, as a bare ASGI app: the book's
    answers come from the explorer's kept bytes (:meth:`Explorer.position_json`), without a
    Starlette request or handler around them (they would cost a sixth of the route's time);
    an answer past the book is searched live, each time."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        explorer: Explorer = scope["app"].state.explorer
        game, query = scope["path_params"]["game"], scope["query_string"]
        try:
            body = explorer.position_json(game, query)
        except OutOfReachError:
            asked = explorer.asked(game, QueryParams(query))
            body = encode_analysis(await run_in_threadpool(explorer.search, asked.position))
        await Response(body, media_type="application/json")(scope, receive, send)


routes.get_asgi("/api/games/{game}/position", PositionAnswers())  # first: the route asked most


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
        fields: Any = json.loads(  # numbers checked when read
            body or b"{}", parse_int=str, object_pairs_hook=lambda pairs: once_each(pairs, "field")
        )
    except RepeatedField:
        raise
    except ValueError:
        raise ValueError(
            'the body is not JSON: send an object like {"game": "3x3k3", "agent": "heuristic"}'
        ) from None
    except RecursionError:
        raise ValueError("the body is JSON nested too deeply: send a flat object") from None
    if not isinstance(fields, dict):
        raise ValueError("the body is not a JSON object")
    book = explorer_of(request).book
    request_ = audit_request(
        {key: str(value) for key, value in fields.items() if value is not None}, book
    )
    book.game(request_.rules)
    job = audits_of(request).start(request_)
    return json_response(
        job_json(job), status_code=202, headers={"Location": f"/api/audits/{job.id}"}
    )


@routes.get("/api/audits/{job}")
async def audit(request: Request) -> Response:
    job = job_of(request)
    return json_response(job_json(job, views.worst_link(job.request.rules, job.id)))
