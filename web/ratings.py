"""The ratings of a game: its reference ladders cached in the book and the agents rated on
them (``ttt rate``), as a page and as JSON. The server only reads: a ladder not yet played is
played by ``ttt rate``, never by a visitor's request."""

from __future__ import annotations

from functools import partial
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from ttt_solve.agents.ladder import LadderRatings, from_cache
from ttt_solve.agents.rungs import GAMES, STANDARD
from ttt_solve.web.answers import json_response
from ttt_solve.web.common import RouteTable, explorer_of
from ttt_solve.web.explorer import Explorer, game_name
from ttt_solve.web.pages import page, respond
from ttt_solve.web.pictures import chart
from ttt_solve.web.plots import _svg
from ttt_solve.web.views import Page

routes = RouteTable()


def ladder_chart(result: LadderRatings) -> str:
    from ttt_solve.presentation import charts

    figure = charts.interval_chart(
        [charts.Estimate(*row) for row in result.estimates()],
        title=f"Ratings on {result.rules.name}, ladder {result.ladder.name}, "
        f"{result.key.games} games per pair, seed {result.key.seed}",
        xlabel="rating (Elo, random = 0), 95% interval",
        legend=("ladder rungs", "rated agents"),
    )
    return _svg(figure)


def ladder_charts(ladders: list[LadderRatings]) -> dict[str, Any]:
    """Each ladder's ratings as a chart (``None`` each without matplotlib)."""
    return {"charts": [chart(ladder_chart, result) for result in ladders]}


async def ratings_view(explorer: Explorer, game: str) -> Page:
    """The game, its ladders cached in the book (as ``ttt rate --json`` prints each, with the
    model's goodness of fit to the games as ``ttt rate`` words it), and the command that plays
    them, with its games per pair and its rungs."""
    from ttt_solve.reports.ratings import fit_text

    info = explorer.game(game)
    rules = info.rules
    ladders = await run_in_threadpool(from_cache, explorer.book, rules)
    data = {
        "game": game_name(rules),
        "rules": rules.as_dict(),
        "ladders": [{**result.to_dict(), "fit": fit_text(result.table)} for result in ladders],
        "rate": {
            "command": f"ttt rate --size {rules.size} --win {rules.k} "
            f"--db {explorer.book.db_argument}",
            "games_per_pair": GAMES,
            "rungs": list(STANDARD.rungs),
        },
    }
    return Page(data, partial(ladder_charts, ladders))


@page("/game/{game}/ratings", routes)
async def ratings_page(request: Request) -> Response:
    view = await ratings_view(explorer_of(request), request.path_params["game"])
    return respond(request, "ratings.html", view)


@routes.get("/api/games/{game}/ratings")
async def ratings_json(request: Request) -> Response:
    view = await ratings_view(explorer_of(request), request.path_params["game"])
    return json_response(view.data)
