"""The JSON API under ``/api/``: games, positions (the object of ``ttt query --json``), the
mainline, and audits (start, progress, result)."""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ttt_solve.book.query import analysis_json
from ttt_solve.web.audits import job_json
from ttt_solve.web.common import answer, asked_position, audits_of, explorer_of, game_json
from ttt_solve.web.pages import audit_request, job_of, worst_link


async def games(request: Request) -> Response:
    return JSONResponse([game_json(info) for info in explorer_of(request).games()])


async def game(request: Request) -> Response:
    info = explorer_of(request).game(request.path_params["game"])
    return JSONResponse({**game_json(info), "figures": info.figures.to_dict()})


async def position(request: Request) -> Response:
    asked = asked_position(request, request.path_params["game"])
    analysis = await answer(explorer_of(request), asked.position)
    return JSONResponse(analysis_json(analysis))


async def mainline(request: Request) -> Response:
    asked = asked_position(request, request.path_params["game"])
    rules = asked.rules
    line = await run_in_threadpool(explorer_of(request).line, asked.position)
    return JSONResponse(
        {
            "position": str(asked.position),
            "moves": [
                {
                    "cell": rules.cell_name(step.cell),
                    "index": step.cell,
                    "value": step.value.outcome.value,
                    "remoteness": step.value.remoteness,
                    "position": str(step.position),
                }
                for step in line
            ],
        }
    )


async def start_audit(request: Request) -> Response:
    body = (await request.body())[:10_000]
    try:
        fields: Any = json.loads(body or b"{}")
    except ValueError:
        raise ValueError(
            'the body is not JSON: send an object like {"game": "3x3k3", "agent": "heuristic"}'
        ) from None
    if not isinstance(fields, dict):
        raise ValueError("the body is not a JSON object")
    request_ = audit_request(
        {key: str(value) for key, value in fields.items() if value is not None}
    )
    explorer_of(request).book.game(request_.rules)
    job = audits_of(request).start(request_)
    return JSONResponse(
        job_json(job), status_code=202, headers={"Location": f"/api/audits/{job.id}"}
    )


async def audit(request: Request) -> Response:
    job = job_of(request)
    return JSONResponse(job_json(job, worst_link(job)))
