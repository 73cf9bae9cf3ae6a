"""The ratings of a game: its reference ladders cached in the book and the agents rated on
them (``ttt rate``), as a page and as JSON. The server only reads: a ladder not yet played is
played by ``ttt rate``, never by a visitor's request."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from ttt_solve.agents.ladder import LadderRatings, from_cache
from ttt_solve.agents.rating import likelihood_text
from ttt_solve.agents.rungs import GAMES, STANDARD
from ttt_solve.web.answers import json_response
from ttt_solve.web.common import RouteTable, explorer_of
from ttt_solve.web.explorer import game_name
from ttt_solve.web.pages import chart, page, respond
from ttt_solve.web.plots import _svg

routes = RouteTable()


def ladder_chart(result: LadderRatings) -> str:
    from ttt_solve import charts

    figure = charts.interval_chart(
        [charts.Estimate(*row) for row in result.estimates()],
        title=f"Ratings on {result.rules.name}, ladder {result.ladder.name}, "
        f"{result.key.games} games per pair, seed {result.key.seed}",
        xlabel="rating (Elo, random = 0), 95% interval",
        legend=("ladder rungs", "rated agents"),
    )
    return _svg(figure)


async def ratings_data(request: Request) -> tuple[Any, list[LadderRatings], dict[str, Any]]:
    """The game, its ladders cached in the book, and the page's object (as ``ttt rate
    --json`` prints each ladder)."""
    explorer = explorer_of(request)
    info = explorer.game(request.path_params["game"])
    ladders = await run_in_threadpool(from_cache, explorer.book, info.rules)
    data = {"game": game_name(info.rules), "ladders": [result.to_dict() for result in ladders]}
    return info, ladders, data


@page("/game/{game}/ratings", routes)
async def ratings_page(request: Request) -> Response:
    info, ladders, data = await ratings_data(request)

    def pictures() -> dict[str, Any]:
        return {
            "info": info,
            "name": data["game"],
            "ladders": [(result, chart(ladder_chart, result)) for result in ladders],
            "command": f"ttt rate --size {info.rules.size} --win {info.rules.k} "
            f"--db {explorer_of(request).book.db_argument}",
            "rungs": STANDARD.rungs,
            "games": GAMES,
            "likelihood": likelihood_text,
        }

    return respond(request, "ratings.html", data, pictures)


@routes.get("/api/games/{game}/ratings")
async def ratings_json(request: Request) -> Response:
    return json_response((await ratings_data(request))[2])
