"""The HTML pages: the games, a position, a game's analysis, the board editor, audits and play.

A route here only reads its request, calls the page's view (:mod:`ttt_solve.web.views`) and
answers what the view built: its data object rendered by the page's template, with the
pictures (:mod:`ttt_solve.web.pictures`) drawn from the same answers, or, at the same URL with
``.json`` after the path (``/game/3x3k3.json?moves=b2``), the data object itself. A template
reads nothing but that object, its pictures and the link to its twin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ttt_solve.presentation import palette
from ttt_solve.presentation.numbers import likelihood
from ttt_solve.solver.vocabulary import Side
from ttt_solve.web import links, views
from ttt_solve.web.answers import json_response
from ttt_solve.web.common import (
    Handler,
    RouteTable,
    asked_position,
    audits_of,
    explorer_of,
    param,
)
from ttt_solve.web.forms import agent_spec, audit_request, job_of, once_each

routes = RouteTable()


def palette_css() -> str:
    """The project's palette as CSS variables, so the style sheet colours values, stones and
    marks as the boards and charts do (``--win``, ``--win-edge``, ``--x``, ...)."""
    names = {f"--{o.value}": c.fill for o, c in palette.VALUES.items()}
    names.update({f"--{o.value}-edge": c.edge for o, c in palette.VALUES.items()})
    names.update({f"--{o.value}-ink": c.ink for o, c in palette.VALUES.items()})
    names.update({f"--{stone}": colour for stone, colour in palette.STONES.items()})
    names.update({f"--board-{name}": colour for name, colour in palette.BOARD.items()})
    return ":root{" + ";".join(f"{name}:{value}" for name, value in names.items()) + "}"


PALETTE_CSS = palette_css()

EVERY_PAGE = {"palette_css": PALETTE_CSS, "likelihood": likelihood}
"""What every template may read beside its page's data: the palette, and how a likelihood of
superiority is written."""


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = request.app.state.templates.get_template(template).render(**EVERY_PAGE, **context)
    return HTMLResponse(html, status_code=status)


def page(path: str, table: RouteTable = routes) -> Callable[[Handler], Handler]:
    """Declares a page at ``path`` and its JSON twin at ``path.json`` (the twin first: the
    page's path would take the ``.json`` as part of its last parameter), in ``table``."""

    def declare(handler: Handler) -> Handler:
        table.get(path + ".json")(handler)
        table.get(path)(handler)
        return handler

    return declare


def wants_json(request: Request) -> bool:
    return request.url.path.endswith(".json")


def respond(request: Request, template: str, view: views.Page) -> Response:
    """The page: its view's data object as JSON for the ``.json`` twin, else rendered by its
    template with the view's pictures (drawn only for HTML)."""
    if wants_json(request):
        return json_response(view.data)
    return render(
        request,
        template,
        data=view.data,
        pictures=view.pictures(),
        json_url=links.json_twin(_path(request)),
    )


def _path(request: Request) -> str:
    query = request.url.query
    return request.url.path + (f"?{query}" if query else "")


# -- the games ---------------------------------------------------------------------------------


@routes.get("/")
async def index(request: Request) -> Response:
    explorer = explorer_of(request)
    games = [views.game_json(info) for info in explorer.games()]
    return render(
        request, "index.html", games=games, book=explorer.book.display_url, json_url="/api/games"
    )


# -- a game, a position, the board editor ------------------------------------------------------


@page("/game/{game}")
async def position_page(request: Request) -> Response:
    asked = asked_position(request, request.path_params["game"])
    view = await views.position_view(
        explorer_of(request), audits_of(request), asked, request.query_params
    )
    return respond(request, "position.html", view)


@page("/game/{game}/analysis")
async def analysis_page(request: Request) -> Response:
    view = await views.analysis_view(explorer_of(request), request.path_params["game"])
    return respond(request, "analysis.html", view)


@page("/game/{game}/edit")
async def editor_page(request: Request) -> Response:
    view = views.editor_view(
        explorer_of(request), request.path_params["game"], request.query_params
    )
    return respond(request, "edit.html", view)


# -- audits ------------------------------------------------------------------------------------


@page("/audits")
async def audits_page(request: Request) -> Response:
    view = views.audits_view(explorer_of(request), audits_of(request), request.query_params)
    return respond(request, "audits.html", view)


@routes.post("/audits")
async def start_audit(request: Request) -> Response:
    body = (await request.body())[:10_000].decode(errors="replace")
    fields = once_each(parse_qsl(body, keep_blank_values=True), "the form's field")
    book = explorer_of(request).book
    request_ = audit_request({key: str(value) for key, value in fields.items()}, book)
    book.game(request_.rules)
    job = audits_of(request).start(request_)
    return RedirectResponse(f"/audits/{job.id}", status_code=303)


@page("/audits/{job}")
async def audit_page(request: Request) -> Response:
    view = await views.audit_view(
        explorer_of(request), job_of(request), request.query_params, not wants_json(request)
    )
    return respond(request, "audit.html", view)


# -- play --------------------------------------------------------------------------------------


@page("/play/{game}")
async def play_page(request: Request) -> Response:
    explorer = explorer_of(request)
    agent = agent_spec(param(request, "agent") or "heuristic", "agent", explorer.book)
    side = Side.parse(param(request, "side") or "x", "side")
    game = views.Game(
        agent=agent,
        side=side,
        seed=views.number(param(request, "seed"), "seed", 0, 2**63),
        show_values=param(request, "values") == "1",
        hint=param(request, "hint") == "1",
    )
    asked = asked_position(request, request.path_params["game"])
    view = await views.play_view(explorer, asked, game)
    if isinstance(view, str):  # a seed chosen, or the agent's reply played
        return RedirectResponse(links.json_twin(view) if wants_json(request) else view, 303)
    return respond(request, "play.html", view)
