"""The HTML pages: the games, a position, a game's analysis, the board editor, audits and play.

Each page builds its data object (:mod:`ttt_solve.web.views`) and renders it through its
template, with the pictures (boards and value histories from :mod:`ttt_solve.svg`, charts from
:mod:`ttt_solve.web.plots`) drawn from the same answers; the same URL with ``.json`` after the
path (``/game/3x3k3.json?moves=b2``) answers the data object itself.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ttt_solve import palette, picture, svg
from ttt_solve.agents.audit import Truth, summary_json
from ttt_solve.agents.review import results_table, review_game
from ttt_solve.book.query import analysis_json
from ttt_solve.book.stats import report
from ttt_solve.charts import ChartsUnavailableError
from ttt_solve.solver.position import Position
from ttt_solve.solver.value import Value
from ttt_solve.web import links, plots, views
from ttt_solve.web.answers import json_response
from ttt_solve.web.audits import AuditJob, job_json
from ttt_solve.web.common import (
    Handler,
    RouteTable,
    answer,
    asked_position,
    audits_of,
    explorer_of,
    param,
)
from ttt_solve.web.explorer import game_name
from ttt_solve.web.forms import agent_spec, audit_request, job_of, once_each

routes = RouteTable()

SMALL_CELL = 34
"""The side of a cell of the small boards of an audit's costly moves, in pixels."""


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


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = request.app.state.templates.get_template(template).render(
        request=request, palette_css=PALETTE_CSS, **context
    )
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


def respond(
    request: Request, template: str, data: dict[str, Any], pictures: Callable[[], dict[str, Any]]
) -> Response:
    """The page: ``data`` as JSON for the ``.json`` twin, else rendered with the pictures
    (drawn only for HTML)."""
    if wants_json(request):
        return json_response(data)
    return render(
        request, template, data=data, json_url=links.json_twin(_path(request)), **pictures()
    )


def _path(request: Request) -> str:
    query = request.url.query
    return request.url.path + (f"?{query}" if query else "")


def chart(draw: Any, *args: Any) -> str | None:
    """An inline SVG chart, or ``None`` where matplotlib is not installed (the page says so)."""
    try:
        return str(draw(*args))
    except ChartsUnavailableError:
        return None


def width_of(cols: int) -> int:
    """The widest a board is drawn on a page, in pixels: large cells for small boards, the
    whole board within a phone's width for large ones (the board then scales to the page)."""
    return min(520, 40 + cols * 100)


# -- the games ---------------------------------------------------------------------------------


@routes.get("/")
async def index(request: Request) -> Response:
    explorer = explorer_of(request)
    games = [views.game_json(info) for info in explorer.games()]
    return render(
        request, "index.html", games=games, book=explorer.book.display_url, json_url="/api/games"
    )


# -- a position --------------------------------------------------------------------------------


@page("/game/{game}")
async def position_page(request: Request) -> Response:
    explorer = explorer_of(request)
    asked = asked_position(request, request.path_params["game"])
    rules = asked.rules
    state = views.state_of(request.query_params, rules, asked.base, asked.start, asked.cells)
    analysis = await answer(explorer, state.position)
    line = await run_in_threadpool(explorer.line, state.position) if state.line else None
    history = None
    if asked.cells:
        answers = await run_in_threadpool(explorer.history, asked.start, list(asked.cells))
        history = views.game_history(state, answers, state.side)
    audit = audit_banner(request, state)
    data = views.position_data(asked.info, state, analysis, line, history, audit)

    def pictures() -> dict[str, Any]:
        last = state.position.rules.parse_cell(data["last_move"]) if data["last_move"] else None
        drawn = picture.of_analysis(
            analysis,
            lastmove=last,
            marked=[state.mark] if state.mark is not None else (),
            line=[step.cell for step in line] if line else (),
            links={move.cell: state.play(move.cell) for move in analysis.moves},
            show_values=state.show_values,
        )
        shown = history if state.show_values else None
        return {
            "board_svg": svg.board(drawn),
            "board_width": width_of(rules.cols),
            "history_svg": (
                svg.value_history(shown, max_remoteness=rules.cells, current=state.ply, notes=False)
                if shown is not None
                else None
            ),
        }

    return respond(request, "position.html", data, pictures)


def audit_banner(request: Request, state: views.State) -> dict[str, Any] | None:
    """What a page opened from an audit says about it: the audit, its agent, a way back. An
    audit the server no longer holds (audits live in memory: a link shared before a restart)
    is named, with ``url`` ``None`` and no agent: the page shows the game all the same."""
    if state.audit is None:
        return None
    job = audits_of(request).get(state.audit)
    about: dict[str, Any] = {"url": None, "agent": None, "opponent": None, "mode": None}
    if job is not None:
        games = job.request.mode == "games"
        about = {
            "url": f"/audits/{job.id}",
            "agent": job.request.agent,
            "opponent": job.request.opponent if games else None,
            "mode": job.request.mode,
        }
    return {"id": state.audit, **about, "game": state.audit_game, "side": state.side}


# -- a game's analysis -------------------------------------------------------------------------


@page("/game/{game}/analysis")
async def analysis_page(request: Request) -> Response:
    explorer = explorer_of(request)
    info = explorer.game(request.path_params["game"])
    stats = await run_in_threadpool(report, explorer.book, info)
    for found in (stats["longest_win"], stats["longest_loss"]):
        if found and found["example"]:
            found["url"] = links.position_url(info.rules, found["example"])
    data = {"game": views.game_json(info), "stats": stats}

    def pictures() -> dict[str, Any]:
        figures = info.figures
        return {
            "info": info,
            "plies": sorted(figures.by_ply["reachable"]),
            "depths": sorted(
                {
                    r
                    for w in ("reachable", "canonical")
                    for o in views.OUTCOMES
                    for r in figures.remoteness[w][o]
                }
            ),
            "figures": figures,
            "outcomes": views.OUTCOMES,
            "by_ply_svg": chart(plots.positions_by_ply, info),
            "remoteness_svg": chart(plots.remoteness, info),
        }

    return respond(request, "analysis.html", data, pictures)


# -- the board editor --------------------------------------------------------------------------


@page("/game/{game}/edit")
async def editor_page(request: Request) -> Response:
    info = explorer_of(request).game(request.path_params["game"])
    rules = info.rules
    setup, problem = views.setup_of(request.query_params, rules)
    data = views.editor_data(info, setup, problem)

    def pictures() -> dict[str, Any]:
        drawn = Position(
            rules,
            sum(1 << i for i, c in enumerate(setup.cells) if c == "x"),
            sum(1 << i for i, c in enumerate(setup.cells) if c == "o"),
        )
        cell_links = {c: setup.with_cell(c) for c in range(rules.cells)}
        return {
            "board_svg": svg.board(picture.board(drawn, links=cell_links), caption=data["legal"]),
            "board_width": width_of(rules.cols),
        }

    return respond(request, "edit.html", data, pictures)


# -- audits ------------------------------------------------------------------------------------


@page("/audits")
async def audits_page(request: Request) -> Response:
    explorer = explorer_of(request)
    games = [game_name(info.rules) for info in explorer.games()]
    jobs = [
        {
            "id": job.id,
            "agent": job.request.agent,
            "game": job.request.rules.name,
            "mode": job.request.mode,
            "status": job.status,
            "url": f"/audits/{job.id}",
        }
        for job in audits_of(request).recent()
    ]
    data = {"games": games, "jobs": jobs}

    def pictures() -> dict[str, Any]:
        return {
            "chosen": param(request, "game") or (games[0] if games else ""),
            "agent": param(request, "agent") or "heuristic",
        }

    return respond(request, "audits.html", data, pictures)


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
    job = job_of(request)
    # The values of the moves shown, read from the book as the page needs them (the audit
    # read the whole game's in its worker; the server's memory does not grow with audits).
    truth = Truth(explorer_of(request).book, job.request.rules, preload_limit=0)
    data = await run_in_threadpool(audit_data, job, truth, request.query_params)
    boards = {}
    if data["costly"] and not wants_json(request):
        rows = data["costly"]["rows"]
        drawn = await run_in_threadpool(lambda: [small_board(truth, row) for row in rows])
        boards = {row["url"]: board for row, board in zip(rows, drawn)}

    def pictures() -> dict[str, Any]:
        return {
            "job": job,
            "name": game_name(job.request.rules),
            "by_ply_svg": (
                chart(plots.audit_by_ply, job.summary, job.request.agent) if job.summary else None
            ),
            "boards": boards,
        }

    return respond(request, "audit.html", data, pictures)


def audit_data(job: AuditJob, truth: Truth, params: Any) -> dict[str, Any]:
    """The audit page's object: the job (as ``/api/audits/{id}`` gives it), its progress in
    words, and once done the won/drawn/lost table and the games (games mode) and every costly
    move, one row a position, a page of each at a time."""
    data: dict[str, Any] = {
        "job": job_json(job),
        "progress": views.progress_text(job.done, job.total, job.seconds or _elapsed(job)),
        "costly": None,
        "games": None,
    }
    if job.status != "done" or job.summary is None:
        return data
    rules = job.request.rules
    costly_page = views.number(params.get("costly"), "costly page", 1) or 1
    shown, pages = views.page_of(job.costly, costly_page, views.COSTLY_PAGE)
    page_number = min(costly_page, pages)
    data["costly"] = {
        "all": len(job.costly) == job.costly_count,
        "count": job.costly_count,
        "kept": len(job.costly),
        "page": page_number,
        "pages": pages,
        "first": (page_number - 1) * views.COSTLY_PAGE + 1,
        "rows": [views.costly_json(truth, row, job.id) for row in shown],
        "links": _pager(job, "costly", page_number, pages, params),
    }
    if job.results is not None and job.blunders is not None:
        games_page = views.number(params.get("games"), "games page", 1) or 1
        results, pages = views.page_of(job.results, games_page, views.GAMES_PAGE)
        page_number = min(games_page, pages)
        first = (page_number - 1) * views.GAMES_PAGE
        data["games"] = {
            "table": results_table(job.results),
            "count": len(job.results),
            "page": page_number,
            "pages": pages,
            "rows": views.game_rows(
                rules, results, job.blunders[first : first + len(results)], job.id, first + 1
            ),
            "links": _pager(job, "games", page_number, pages, params),
        }
    return data


def _elapsed(job: AuditJob) -> float:
    import time

    return time.monotonic() - job.started


def _pager(job: AuditJob, name: str, page_: int, pages: int, params: Any) -> dict[str, Any]:
    """The links to the other pages of one of an audit's lists (the other list's page kept)."""
    other = "games" if name == "costly" else "costly"
    keep = {other: params.get(other)} if params.get(other) else {}

    def url(number_: int) -> str:
        return f"/audits/{job.id}" + links.query(**keep, **{name: str(number_)}) + f"#{name}"

    return {
        "previous": url(page_ - 1) if page_ > 1 else None,
        "next": url(page_ + 1) if page_ < pages else None,
    }


def small_board(truth: Truth, row: dict[str, Any]) -> str:
    """A costly move's position as a small board: every move's value, the best moves starred,
    the agent's move framed, the whole board a link to its page."""
    rules = truth.rules
    position = Position.parse(row["position"], rules)
    values: dict[int, Value] = truth.move_values(position) or {}
    best = [rules.parse_cell(c) for c in row["best_moves"]]
    drawn = picture.board(
        position, values=values, best=best, marked=[rules.parse_cell(row["move"])]
    )
    return svg.board(
        drawn,
        size=SMALL_CELL * rules.cols + 20,
        caption=False,
        title=f"{row['position']}: {row['to_move'].upper()} played {row['move']}",
    )


# -- play --------------------------------------------------------------------------------------


@page("/play/{game}")
async def play_page(request: Request) -> Response:
    explorer = explorer_of(request)
    agent = agent_spec(param(request, "agent") or "heuristic", "agent", explorer.book)
    side = (param(request, "side") or "x").lower()
    if side not in ("x", "o"):
        raise ValueError(f"side {side!r} is not x or o")
    seed = views.number(param(request, "seed"), "seed", 0, 2**63)
    show_values = param(request, "values") == "1"
    hint = param(request, "hint") == "1"
    asked = asked_position(request, request.path_params["game"])
    rules, position = asked.rules, asked.position
    if asked.base is not None:
        raise ValueError("a game is played from the empty board: give moves, not a position")
    options = {"values": "1" if show_values else None}
    twin = links.json_twin if wants_json(request) else str
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
        url = links.play_url(rules, agent, side, seed, asked.move_names, **options)
        return RedirectResponse(twin(url), 303)
    if not position.is_terminal and position.to_move != side:
        reply = await run_in_threadpool(explorer.agent_move, agent, seed, position)
        names = (*asked.move_names, rules.cell_name(reply))
        url = links.play_url(rules, agent, side, seed, names, **options)
        return RedirectResponse(twin(url), 303)
    analysis = None
    if (show_values or hint) and not position.is_terminal:
        analysis = await answer(explorer, position)
    review = None
    if position.is_terminal:
        review = await run_in_threadpool(
            review_game, Truth(explorer.book, rules, preload_limit=0), rules, asked.cells, side
        )

    def play(names: tuple[str, ...], **extra: object) -> str:
        return links.play_url(rules, agent, side, seed, names, **{**options, **extra})

    mine = [i for i in range(len(asked.cells)) if (i % 2 == 0) == (side == "x")]
    undo = asked.move_names[: mine[-1]] if mine else None
    data = {
        "game": views.game_json(asked.info),
        "agent": agent,
        "side": side,
        "seed": seed,
        "moves": list(asked.move_names),
        "numbered": views.numbered_moves(asked.move_names),
        "position": str(position),
        "to_move": None if position.is_terminal else position.to_move,
        "winner": position.winner,
        "result": _result(position, side, agent),
        "show_values": show_values,
        "hint": ([rules.cell_name(c) for c in analysis.best_moves] if hint and analysis else None),
        "hint_every_move": bool(
            hint and analysis and len(analysis.best_moves) == len(analysis.moves)
        ),
        "answer": analysis_json(analysis) if analysis is not None and show_values else None,
        "graded": (
            {
                "moves": views.review_rows(
                    review,
                    lambda r: links.position_url(
                        rules, None, asked.move_names, ply=str(r.ply), mark=rules.cell_name(r.cell)
                    ),
                ),
                "summary": summary_json(review.summary),
            }
            if review is not None
            else None
        ),
        "links": {
            "undo": play(undo) if undo is not None else None,
            "hint": play(asked.move_names, hint="1") if not position.is_terminal else None,
            "values_toggle": links.play_url(
                rules,
                agent,
                side,
                seed,
                asked.move_names,
                values=None if show_values else "1",
            ),
            "new_game": links.play_url(
                rules, agent, side, random.SystemRandom().randrange(2**32), values=options["values"]
            ),
            "explore": links.position_url(rules, None, asked.move_names),
        },
    }

    def pictures() -> dict[str, Any]:
        cells = {}
        if not position.is_terminal:
            cells = {
                c: play((*asked.move_names, rules.cell_name(c))) for c in position.legal_moves()
            }
        values = {m.cell: m.value for m in analysis.moves} if analysis and show_values else None
        drawn = picture.board(
            position,
            values=values,
            best=analysis.best_moves if analysis and show_values else (),
            lastmove=asked.cells[-1] if asked.cells else None,
            marked=analysis.best_moves if analysis and hint else (),
            links=cells,
        )
        return {"board_svg": svg.board(drawn), "board_width": width_of(rules.cols)}

    return respond(request, "play.html", data, pictures)


def _result(position: Position, side: str, agent: str) -> str | None:
    if not position.is_terminal:
        return None
    if position.winner is None:
        return "Draw: the board is full."
    return "You win." if position.winner == side else f"{agent} wins."
