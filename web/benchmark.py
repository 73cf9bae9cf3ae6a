"""The benchmark's published sets and leaderboard, as pages and JSON: ``/benchmark`` lists each
board's set (its grid, size and checksum) with its leaderboard's best agents, and
``/benchmark/{game}`` shows one board: its grid, its leaderboard, and the heatmaps of one agent
(``?agent=SPEC``, by default the first). The server only reads: the figures are those that
``ttt benchmark leaderboard --out data/benchmarks/leaderboard.json`` wrote, and a visitor's
request runs no agent."""

from __future__ import annotations

from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ttt_solve.agents.benchmark import BenchmarkReport, published_leaderboard
from ttt_solve.agents.benchset import (
    DATA,
    DIFFICULTIES,
    STAGES,
    BenchmarkSetError,
    Grid,
    game_name,
    published,
    read_header,
    set_path,
)
from ttt_solve.solver.rules import Rules, parse_game
from ttt_solve.web.common import RouteTable, param
from ttt_solve.web.pages import page, respond
from ttt_solve.web.views import Page

routes = RouteTable()


def set_json(rules: Rules) -> dict[str, Any]:
    """A board's published set: its game, grid, size, seed and checksum, and the command that
    scores an agent on it."""
    try:
        path = set_path(rules, DATA)
    except BenchmarkSetError as error:
        raise LookupError(str(error)) from None
    header = read_header(path)
    grid = Grid.from_dict(header)
    return {
        "game": game_name(rules),
        "name": rules.name,
        "rules": rules.as_dict(),
        "file": path.name,
        "sha256": published(path.parent).get(path.name),
        "positions": header["positions"],
        "per_cell": header["per_cell"],
        "seed": header["seed"],
        "stages": [{"name": s, "plies": list(span)} for s, span in zip(STAGES, grid.stages)],
        "difficulties": [
            {"name": d, "remoteness": list(span)} for d, span in zip(DIFFICULTIES, grid.bands)
        ],
        "command": f"ttt benchmark --agent SPEC --size {rules.size} --win {rules.k}",
    }


def report_row(report: BenchmarkReport, game: str) -> dict[str, Any]:
    """One agent's line of a leaderboard: each split's totals with intervals, its time."""
    totals = {t.split: t.to_dict() for t in report.totals}
    return {
        "agent": report.agent,
        "link": f"/benchmark/{game}?agent={report.agent}",
        "totals": totals,
        "failed": len(report.failures),
        "cpu_seconds": report.cpu_seconds,
        "seconds": report.seconds,
    }


def index_view() -> Page:
    boards = published_leaderboard(DATA)
    sets = []
    for path in sorted(DATA.glob("*.jsonl")):
        rules = parse_game(path.stem)
        reports, _ = boards.get(game_name(rules), ([], []))
        sets.append({**set_json(rules), "agents": len(reports)})
    return Page({"sets": sets}, dict)


def board_view(game: str, agent: str | None) -> Page:
    """One board: its set, its leaderboard, and the chosen agent's cells and heatmaps."""
    rules = parse_game(game)
    name = game_name(rules)
    data = set_json(rules)
    reports, left_out = published_leaderboard(DATA).get(name, ([], []))
    chosen = None
    if reports:
        chosen = next((r for r in reports if r.agent == agent), None)
        if chosen is None and agent is not None:
            raise LookupError(f"no agent {agent!r} on the leaderboard of {rules.name}")
        chosen = chosen or reports[0]
    data.update(
        leaderboard=[report_row(report, name) for report in reports],
        left_out=left_out,
        agent=None if chosen is None else chosen.to_dict(),
        summary=None if chosen is None else chosen.summary(),
    )
    return Page(data, partial(heatmaps, chosen))


def heatmaps(report: BenchmarkReport | None) -> dict[str, Any]:
    from ttt_solve.reports.benchmark import benchmark_svgs

    return {"heatmaps": [] if report is None else benchmark_svgs(report)}


@page("/benchmark", routes)
async def benchmark_index(request: Request) -> Response:
    return respond(request, "benchmarks.html", index_view())


@page("/benchmark/{game}", routes)
async def benchmark_board(request: Request) -> Response:
    view = board_view(request.path_params["game"], param(request, "agent"))
    return respond(request, "benchmark.html", view)
