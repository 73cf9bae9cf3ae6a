"""``ttt curve``: strength curves, an agent audited at many values of one parameter."""

from __future__ import annotations

import csv
import json
import sys
from typing import Any

import click

from ttt_solve.agents.curve import (
    Curve,
    CurvePlan,
    CurveReport,
    ReadOnceTruth,
    check_agents,
    parse_vary,
    plan_curve,
    rate_points,
    run_curves,
)
from ttt_solve.agents.spec import describe_agents
from ttt_solve.book.reader import open_book
from ttt_solve.cli import common, options
from ttt_solve.errors import install_hint
from ttt_solve.presentation import charts
from ttt_solve.reports.audit import game_rows
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import BlunderKind
from ttt_solve.solver.vocabulary import Side

MAX_SEEDS = 10_000
"""More audits per point than anyone waits for; a bound that --seeds states."""

EXAMPLES = """
\b
Examples:
  ttt curve --agent mcts --vary iterations=10,30,100,300,1000,3000 --seeds 5
  ttt curve --agent mcts --vary iterations=10,100,1000 \\
            --agent openspiel:mcts --vary simulations=10,100,1000 --plot mcts.svg
  ttt curve --agent alphabeta --vary depth=1,2,3,4 --size 4 --win 3 --positions sample:500
  ttt curve --agent heuristic --vary rules=0,1,2,3,4,5
  ttt curve --agent mcts --vary iterations=10,100,1000 --games 100 --opponent perfect
  ttt curve --agent perfect --vary error=0,0.1,0.2,0.5 --rating --plot graded.svg
"""


@options.command(
    "curve",
    epilog=EXAMPLES + "\n\b\nAgents (SPEC is name or name:key=value,...):\n" + describe_agents(),
)
@options.agent_option(
    "An agent to audit along the curve (repeat for one line per agent); its spec must "
    "not set the varied parameter.",
    required=True,
    multiple=True,
)
@click.option(
    "--vary",
    "varies",
    required=True,
    multiple=True,
    metavar="PARAM=V1,V2,...",
    help="The parameter and its values (two or more numbers), e.g. iterations=10,100,1000. "
    "One --vary for every agent, or one per --agent, in the same order.",
)
@common.game_options
@common.db_option
@options.grading_mode_options(
    positions_help="Grade one move from every reachable non-terminal position, or from N of "
    "them drawn at random (per seed). The default mode.",
    games_help="Instead: play N games per point and seed against --opponent, colours alternating.",
    per_class_help="Positions mode: one board per symmetry class, weighted, as ttt audit "
    "--per-class (exact only for an agent that plays the same way in every orientation).",
)
@options.count_option(
    "--seeds",
    3,
    "Audits per point, with seeds --seed, --seed+1, ...; the figures are their mean and 95% "
    "interval.",
    largest=MAX_SEEDS,
)
@options.seed_option(
    "The first seed (a point's figures for one seed are those of `ttt audit --seed`)."
)
@options.report_options(
    plot_help="Also draw accuracy and perfection against the parameter, one line per agent "
    f"(needs {install_hint('plot')}).",
    csv_help="Print one CSV row per point.",
)
@click.option(
    "--rating",
    is_flag=True,
    help="Also rate each point's agent against the reference ladder (ttt rate; the ladder "
    "is played once per game and cached in the book): a rating curve beside the accuracy.",
)
@click.option(
    "--rating-games",
    type=options.GAMES,
    default=None,
    metavar="N",
    help="With --rating: games per pair of the ladder and per rung for each point (default 100).",
)
@common.jobs_option("Processes for each audit (results do not depend on it).")
@options.quiet_option()
@common.friendly_errors
def curve(
    agent_specs: tuple[str, ...],
    varies: tuple[str, ...],
    rules: Rules,
    db: str,
    grading: options.Grading,
    seeds: int,
    seed: int,
    plot_path: str | None,
    rating: bool,
    rating_games: int | None,
    jobs: int,
    as_json: bool,
    as_csv: bool,
    quiet: bool,
) -> None:
    """Audit agents at many values of one parameter, several seeds each, as `ttt audit` does,
    and report per point accuracy and perfection (mean and 95% interval over seeds), blunders
    by kind and, in games mode, results by colour; name the smallest value at which an agent
    kept the value in every position asked, every seed. Optionally plot the curves; with
    --rating, rate each point against the reference ladder too (a rating with its 95%
    interval per point, on the scale of ttt rate).
    """
    sample = options.grading_sample(grading, plot_path, as_json, as_csv)
    plans = _plans(agent_specs, varies)
    seed_list = tuple(range(seed, seed + seeds))
    if rating_games is not None and not rating:
        raise common.CliError("--rating-games goes with --rating")
    games = grading.games
    with _open(db, rating) as book:
        check_agents(plans, book, db)
        with common.LazyProgress("curve", enabled=not quiet) as progress:
            truth = ReadOnceTruth(book, rules)  # read once for every point and seed
            curves = run_curves(
                plans,
                truth,
                db=db,
                seeds=seed_list,
                sample=sample,
                per_class=grading.per_class,
                games=games,
                opponent=grading.opponent if games is not None else None,
                jobs=jobs,
                progress=progress,
            )
        if rating:
            curves = _rated(curves, book, db, rules, rating_games, seed, jobs, quiet)
        report = CurveReport(
            rules,
            seed_list,
            tuple(curves),
            book=book.display_url,
            truth=book.describe(),
            sample=sample,
            per_class=grading.per_class,
            games=games,
            opponent=grading.opponent if games is not None else None,
        )
        _show(report, plot_path, as_json, as_csv)


def _plans(agent_specs: tuple[str, ...], varies: tuple[str, ...]) -> list[CurvePlan]:
    """Each agent's curve, checked before any work: one --vary for all, or one each."""
    if len(varies) not in (1, len(agent_specs)):
        raise common.CliError(
            f"{len(varies)} --vary for {len(agent_specs)} --agent: give one --vary for every "
            f"agent, or one per agent in the same order"
        )
    parsed_varies = [parse_vary(text) for text in varies]
    return [
        plan_curve(spec, parsed_varies[index if len(parsed_varies) > 1 else 0])
        for index, spec in enumerate(agent_specs)
    ]


def _open(db: str, rating: bool) -> Any:
    """The book: opened so that the ladder's games can be cached in it when rating."""
    if rating:
        from ttt_solve.agents.ladder import open_ladder_book  # SQLAlchemy: not for --help

        return open_ladder_book(db)
    return open_book(db, read_only=True)


def _rated(
    curves: list[Curve],
    book: Any,
    db: str,
    rules: Rules,
    rating_games: int | None,
    seed: int,
    jobs: int,
    quiet: bool,
) -> list[Curve]:
    """The curves with each point's rating against the reference ladder."""
    from ttt_solve.agents.rungs import GAMES
    from ttt_solve.book.urls import unwritable_reason

    with common.LazyProgress("rating", enabled=not quiet) as progress:
        rated, _ = rate_points(
            curves,
            book,
            db,
            rules,
            games=rating_games or GAMES,
            seed=seed,
            cache=unwritable_reason(db) is None,
            jobs=jobs,
            progress=progress,
        )
    return rated


def _show(report: CurveReport, plot_path: str | None, as_json: bool, as_csv: bool) -> None:
    """The report as the options ask: JSON, CSV or text, and the plot."""
    if plot_path is not None:
        charts.save(report.chart(), plot_path)
    if as_json:
        click.echo(json.dumps(report.to_dict()))
    elif as_csv:
        _print_csv(list(report.curves), report.games_mode)
    else:
        click.echo(report.text())
    if plot_path is not None:
        click.echo(f"plot written to {plot_path}", err=True)


def _print_csv(curves: list[Curve], games_mode: bool) -> None:
    fields = ["agent", "param", "value", "spec", "seeds"]
    for share_name in ("accuracy", "perfection"):
        fields += [share_name, f"{share_name}_low", f"{share_name}_high"]
    fields += list(BlunderKind)
    if games_mode:
        fields += [f"{side}_{result}" for side in Side for result in ("won", "drawn", "lost")]
    rated = curves[0].points[0].rating is not None
    if rated:
        fields += ["rating", "rating_low", "rating_high"]
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(fields)
    for one in curves:
        for point in one.points:
            kinds = point.blunder_kinds()
            row: list[object] = [one.agent, one.param, point.value, point.spec, len(point.runs)]
            for share_value in (point.accuracy, point.perfection):
                row += list(share_value) if share_value is not None else ["", "", ""]
            row += [kinds[kind] for kind in BlunderKind]
            if games_mode:
                for _label, _n, won, drawn, lost, *_ in game_rows(point.games()):
                    row += [won, drawn, lost]
            if rated and point.rating is not None:
                row += [*point.rating]
            writer.writerow(row)
