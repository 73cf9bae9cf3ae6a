"""The HTML pages: the games, a position, a game's analysis, audits and play."""

from __future__ import annotations

import random
from typing import Any
from urllib.parse import parse_qs

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ttt_solve.agents.audit import Truth, grade_game, summarize
from ttt_solve.book.oracle import Analysis
from ttt_solve.charts import ChartsUnavailableError
from ttt_solve.solver.rules import Rules
from ttt_solve.web import links, plots
from ttt_solve.web.audits import AuditJob, AuditRequest, checked_spec, job_json
from ttt_solve.web.common import (
    Asked,
    RouteTable,
    answer,
    asked_position,
    audits_of,
    explorer_of,
    param,
)
from ttt_solve.web.explorer import game_name, symmetric_images

routes = RouteTable()

LETTERS = {"win": "W", "draw": "D", "loss": "L"}


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = request.app.state.templates.get_template(template).render(request=request, **context)
    return HTMLResponse(html, status_code=status)


def chart(draw: Any, *args: Any) -> str | None:
    """An inline SVG chart, or ``None`` where matplotlib is not installed (the page says so)."""
    try:
        return str(draw(*args))
    except ChartsUnavailableError:
        return None


@routes.get("/")
async def index(request: Request) -> Response:
    explorer = explorer_of(request)
    games = [(game_name(info.rules), info) for info in explorer.games()]
    return render(request, "index.html", games=games, book=explorer.book.display_url)


def source_note(analysis: Analysis, depth: int | None) -> str | None:
    """Where a live search stood in for the book, said in words (``None``: all from the book)."""
    if not analysis.searched:
        return None
    spent = f"{analysis.nodes:,} nodes, {analysis.seconds:.2f} s"
    if analysis.source == "book+search":
        return (
            f"value from the book; its moves searched live, past the opening book's depth "
            f"{depth} ({spent})"
        )
    return f"searched live: past the opening book's depth {depth} ({spent})"


def board_rows(
    asked: Asked, analysis: Analysis | None, mark: int | None, play: Any = None
) -> list[list[dict[str, Any]]]:
    """Rows of cells for the board template: stones, and each empty cell's move with its
    value for the mover and its link (``play(cell)`` gives the link on the play page)."""
    rules, position = asked.rules, asked.position
    moves = {m.cell: m for m in analysis.moves} if analysis is not None else {}
    best = set(analysis.best_moves) if analysis is not None else set()
    rows = []
    for row in range(rules.rows):
        cells = []
        for col in range(rules.cols):
            cell = row * rules.cols + col
            stone = position.cell(cell)
            entry = moves.get(cell)
            view: dict[str, Any] = {
                "name": rules.cell_name(cell),
                "stone": stone,
                "mark": cell == mark,
            }
            if play is not None and stone == "." and not position.is_terminal:
                view["href"] = play(cell)
            elif entry is not None:
                outcome = entry.value.outcome.value
                view.update(
                    value=outcome,
                    remoteness=entry.value.remoteness,
                    label=f"{LETTERS[outcome]}{entry.value.remoteness}",
                    best=cell in best,
                    href=links.position_url(
                        rules, asked.base, (*asked.move_names, rules.cell_name(cell))
                    ),
                )
            cells.append(view)
        rows.append(cells)
    return rows


@routes.get("/game/{game}")
async def position_page(request: Request) -> Response:
    explorer = explorer_of(request)
    asked = asked_position(request, request.path_params["game"])
    rules, position, names = asked.rules, asked.position, asked.move_names
    analysis = await answer(explorer, position)
    mark_text = param(request, "mark")
    mark = rules.parse_cell(mark_text) if mark_text else None
    line = None
    if param(request, "line") == "1":
        line = []
        walked = list(names)
        for step in await run_in_threadpool(explorer.line, position):
            walked.append(rules.cell_name(step.cell))
            line.append(
                (
                    rules.cell_name(step.cell),
                    step.value,
                    links.position_url(rules, asked.base, walked),
                )
            )
    history = None
    if asked.cells:
        answers = await run_in_threadpool(explorer.history, asked.start, list(asked.cells))
        urls = [links.position_url(rules, asked.base, names[:i]) for i in range(len(answers))]
        history = {"svg": chart(plots.value_history, answers, urls)}
    images = [(name, links.position_link(image)) for name, image in symmetric_images(position)]
    return render(
        request,
        "position.html",
        info=asked.info,
        name=game_name(rules),
        position=position,
        analysis=analysis,
        rows=board_rows(asked, analysis, mark),
        mark=rules.cell_name(mark) if mark is not None else None,
        source=source_note(analysis, asked.info.book_depth),
        moves=names,
        undo=links.position_url(rules, asked.base, names[:-1]) if names else None,
        here=links.position_url(rules, asked.base, names),
        line_url=links.position_url(rules, asked.base, names, line=1),
        line=line,
        images=images,
        written=links.position_link(position),
        history=history,
        api=links.api_position_url(rules, asked.base, names),
        move_links={
            m.cell: links.position_url(rules, asked.base, (*names, m.name)) for m in analysis.moves
        },
    )


@routes.get("/game/{game}/analysis")
async def analysis_page(request: Request) -> Response:
    info = explorer_of(request).game(request.path_params["game"])
    figures = info.figures
    plies = sorted(figures.by_ply["reachable"])
    depths = sorted(
        {
            r
            for w in ("reachable", "canonical")
            for o in plots.OUTCOMES
            for r in figures.remoteness[w][o]
        }
    )
    return render(
        request,
        "analysis.html",
        info=info,
        name=game_name(info.rules),
        figures=figures,
        plies=plies,
        depths=depths,
        outcomes=plots.OUTCOMES,
        by_ply_svg=chart(plots.positions_by_ply, info),
        remoteness_svg=chart(plots.remoteness, info),
    )


def _int(text: str | None, what: str, default: int | None = None) -> int | None:
    if text is None or not text.strip():
        return default
    if len(text) > 40:  # Python refuses to read numbers of thousands of digits
        raise ValueError(f"{what} {text[:12]}... ({len(text):,} characters) is out of range")
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not a whole number") from None


def audit_request(fields: dict[str, str]) -> AuditRequest:
    """An audit request from form or JSON fields (game, agent, mode, sample, games, ...)."""
    from ttt_solve.web.explorer import parse_game_name

    mode = fields.get("mode") or "positions"
    return AuditRequest(
        rules=parse_game_name(fields.get("game") or "3x3k3"),
        agent=fields.get("agent") or "",
        mode=mode,
        sample=_int(fields.get("sample"), "sample") if mode == "positions" else None,
        games=_int(fields.get("games"), "games", 100) or 0,  # 0 (refused) stays 0
        opponent=fields.get("opponent") or "random",
        seed=_int(fields.get("seed"), "seed", 0) or 0,
    )


@routes.get("/audits")
async def audits_page(request: Request) -> Response:
    explorer = explorer_of(request)
    games = [game_name(info.rules) for info in explorer.games()]
    chosen = param(request, "game") or (games[0] if games else "")
    return render(
        request,
        "audits.html",
        games=games,
        chosen=chosen,
        agent=param(request, "agent") or "heuristic",
        jobs=audits_of(request).recent(),
    )


@routes.post("/audits")
async def start_audit(request: Request) -> Response:
    body = (await request.body())[:10_000].decode(errors="replace")
    fields = {key: values[-1] for key, values in parse_qs(body).items()}
    request_ = audit_request(fields)
    explorer_of(request).book.game(request_.rules)
    job = audits_of(request).start(request_)
    return RedirectResponse(f"/audits/{job.id}", status_code=303)


def job_of(request: Request) -> AuditJob:
    try:
        job_id = int(request.path_params["job"])
    except ValueError:
        job_id = -1
    job = audits_of(request).get(job_id)
    if job is None:
        raise LookupError(f"no audit {request.path_params['job']!r} on this server")
    return job


def worst_link(job: AuditJob) -> Any:
    rules = job.request.rules

    def link(record: Any) -> str:
        return links.position_link(record.position, mark=rules.cell_name(record.cell))

    return link


@routes.get("/audits/{job}")
async def audit_page(request: Request) -> Response:
    job = job_of(request)
    data = job_json(job, worst_link(job))
    by_ply = chart(plots.audit_by_ply, job.summary, job.request.agent) if job.summary else None
    return render(
        request,
        "audit.html",
        job=job,
        data=data,
        by_ply_svg=by_ply,
        name=game_name(job.request.rules),
    )


@routes.get("/play/{game}")
async def play_page(request: Request) -> Response:
    explorer = explorer_of(request)
    agent = checked_spec(param(request, "agent") or "heuristic")
    side = (param(request, "side") or "x").lower()
    if side not in ("x", "o"):
        raise ValueError(f"side {side!r} is not x or o")
    seed = _int(param(request, "seed"), "seed")
    asked = asked_position(request, request.path_params["game"])
    rules, position = asked.rules, asked.position
    if asked.base is not None:
        raise ValueError("a game is played from the empty board: give moves, not a position")
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
        return RedirectResponse(links.play_url(rules, agent, side, seed, asked.move_names), 303)
    if not position.is_terminal and position.to_move != side:
        reply = await run_in_threadpool(explorer.agent_move, agent, seed, position)
        names = (*asked.move_names, rules.cell_name(reply))
        return RedirectResponse(links.play_url(rules, agent, side, seed, names), 303)
    graded = None
    if position.is_terminal:
        graded = await run_in_threadpool(grade_player, explorer.book, rules, asked.cells, side)
    return render(
        request,
        "play.html",
        name=game_name(rules),
        info=asked.info,
        agent=agent,
        side=side,
        seed=seed,
        position=position,
        rows=board_rows(
            asked,
            None,
            None,
            play=lambda cell: links.play_url(
                rules, agent, side, seed, (*asked.move_names, rules.cell_name(cell))
            ),
        ),
        moves=asked.move_names,
        graded=graded,
        undo=links.play_url(
            rules, agent, side, seed, asked.move_names[: undo_length(asked.cells, side)]
        ),
        new_game=links.play_url(rules, agent, side, random.SystemRandom().randrange(2**32)),
        explore=links.position_url(rules, None, asked.move_names),
    )


def undo_length(cells: tuple[int, ...], side: str) -> int:
    """How many moves stay when the player takes back their last move (and the reply)."""
    mine = [i for i in range(len(cells)) if (i % 2 == 0) == (side == "x")]
    return mine[-1] if mine else 0


def grade_player(book: Any, rules: Rules, cells: tuple[int, ...], side: str) -> dict[str, Any]:
    """The player's moves graded against the book, as ``ttt play`` grades them."""
    truth = Truth(book, rules, preload_limit=0)
    records, ungraded = grade_game(truth, rules, list(cells), side)
    summary = summarize(records, ungraded)
    rows = [
        {
            "number": r.ply + 1,
            "move": rules.cell_name(r.cell),
            "grade": r.grade.value + (f" {r.kind}" if r.kind else ""),
            "class": r.grade.value,
            "value": f"{r.value} -> {r.move_value}",
            "best": " ".join(rules.cell_name(c) for c in truth.best_moves(r.position)),
            "url": links.position_link(r.position, mark=rules.cell_name(r.cell)),
        }
        for r in records
    ]
    return {"rows": rows, "summary": summary, "ungraded": ungraded}
