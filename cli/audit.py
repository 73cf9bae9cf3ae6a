"""``ttt audit``: grade an agent's moves against the book (best / sound / blunder)."""

from __future__ import annotations

import csv
import json
import sys
from typing import Any

import click
from tabulate import tabulate

from ttt_solve import charts
from ttt_solve.agents import audit as grading
from ttt_solve.agents.audit import BLUNDER_KINDS, Failure, GameResult, Graded, Summary, Truth
from ttt_solve.agents.audit import graded_json as record_dict
from ttt_solve.agents.engine import FAILURE_KINDS
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.spec import describe_agents, parse_spec
from ttt_solve.book.reader import open_book
from ttt_solve.cli.common import (
    LazyProgress,
    count,
    db_option,
    friendly_errors,
    game_options,
    jobs_option,
)
from ttt_solve.cli.options import (
    agent_option,
    command,
    grading_mode_options,
    grading_sample,
    quiet_option,
    report_options,
    seed_option,
)
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome


def percent(share: float) -> str:
    return f"{100 * share:.2f}%"


def cells(rules: Rules, cells_: list[int] | tuple[int, ...]) -> str:
    return " ".join(rules.cell_name(c) for c in cells_) or "-"


def summary_rows(summary: Summary, weighted: bool, engine: bool = False) -> list[tuple[str, str]]:
    """The summary table; ``engine`` adds the failures by kind (shown anyway if there are any)."""
    graded = count(summary.moves) + (
        f" ({count(summary.graded)} up to symmetry)" if weighted else ""
    )
    none = "- (no move graded)"
    rows = [
        ("moves graded", graded),
        ("accuracy (value kept)", percent(summary.accuracy) if summary.moves else none),
        ("perfection (best moves)", percent(summary.perfection) if summary.moves else none),
        (
            "best / sound / blunder",
            f"{count(summary.best)} / {count(summary.sound)} / {count(summary.blunders)}",
        ),
    ]
    rows += [(f"  blunders {kind}", count(summary.kinds[kind])) for kind in BLUNDER_KINDS]
    if summary.ungraded:
        rows.append(("not in the book (ungraded)", count(summary.ungraded)))
    if engine or summary.failed:
        rows.append(
            (
                "engine failures (not graded)",
                count(sum(summary.failures.values()))
                + (f" ({count(summary.failed)} up to symmetry)" if weighted else ""),
            )
        )
        rows += [(f"  failures {kind}", count(summary.failures[kind])) for kind in FAILURE_KINDS]
    return rows


def nothing_graded(summary: Summary) -> str:
    """What an audit that graded no move says instead of figures (which would read 0%)."""
    why = []
    if summary.failed:
        why.append("every move asked of the agent failed (see the failures below)")
    if summary.ungraded:
        why.append("the book holds none of the positions reached")
    return "no move was graded" + (f": {'; '.join(why)}" if why else "") + "."


def ply_rows(summary: Summary) -> list[list[object]]:
    return [
        [
            row.ply,
            count(row.moves),
            count(row.best),
            count(row.sound),
            count(row.blunders),
            percent(row.accuracy),
            percent(row.perfection),
        ]
        for row in summary.by_ply
    ]


def ply_chart(summary: Summary, title: str) -> charts.Figure:
    """Accuracy and perfection by ply, for ``--plot``."""
    plies = [row.ply for row in summary.by_ply]
    return charts.line_chart(
        [
            charts.Series("accuracy (value kept)", plies, [r.accuracy for r in summary.by_ply]),
            charts.Series("perfection (best moves)", plies, [r.perfection for r in summary.by_ply]),
        ],
        title=title,
        xlabel="ply (moves already played)",
        ylabel="share of the agent's moves",
        percent=True,
    )


def describe_worst(truth: Truth, record: Graded, index: int) -> str:
    rules = truth.rules
    position = record.position
    best = truth.best_moves(position)
    best_value = truth.move_value(position, best[0]) if best else None
    verdict = record.grade.value + (f" {record.kind}" if record.kind else "")
    head = (
        f"#{index} ply {position.ply}, {position.to_move.upper()} to move, {position} "
        f"(value {record.value}; stands for {record.weight})\n"
        f"    agent played {rules.cell_name(record.cell)} ({record.move_value}: {verdict}); "
        f"best: {cells(rules, best)}" + (f" ({best_value})" if best_value else "")
    )
    diagram = position.diagram({record.cell: "*", **{c: "+" for c in best if c != record.cell}})
    return head + "\n" + "\n".join("    " + line for line in diagram.splitlines())


def game_rows(results: list[GameResult]) -> list[list[object]]:
    """Per colour: games, won, drawn, lost, and (if any game was) stopped by an engine failure."""
    stopped = any(r.failure for r in results)
    rows = []
    for side in ("x", "o"):
        mine = [r for r in results if r.agent_side == side]
        tally = {o: sum(r.outcome is o for r in mine) for o in Outcome}
        rows.append(
            [
                f"agent as {side.upper()}",
                len(mine),
                tally[Outcome.WIN],
                tally[Outcome.DRAW],
                tally[Outcome.LOSS],
            ]
            + ([sum(r.failure is not None for r in mine)] if stopped else [])
        )
    return rows


def describe_failure(failure: Failure, index: int, weighted: bool) -> str:
    position = failure.position
    stands = f" (stands for {failure.weight})" if weighted else ""
    return (
        f"#{index} ply {position.ply}, {position.to_move.upper()} to move, {position}"
        f"{stands}: {failure.kind}: {failure.detail}"
    )


def failure_dict(failure: Failure) -> dict[str, object]:
    return {
        "ply": failure.ply,
        "position": str(failure.position),
        "to_move": failure.position.to_move,
        "weight": failure.weight,
        "kind": failure.kind,
        "detail": failure.detail,
        "engine": failure.spec,
    }


EXAMPLES = """
\b
Examples:
  ttt audit --agent heuristic --size 3 --win 3
  ttt audit --agent mcts:iterations=1000 --positions all
  ttt audit --agent alphabeta:depth=2 --size 4 --win 3 --positions sample:500
  ttt audit --agent mcts:iterations=200 --games 100 --opponent random --json
  ttt audit --agent 'cmd:"./my-engine --level 3",timeout=2'
  ttt audit --agent py:examples.plugin_agent:make --games 100 --opponent perfect
"""


@command(
    "audit",
    epilog=EXAMPLES + "\n\b\nAgents (SPEC is name or name:key=value,...; every "
    "agent also takes book=true):\n" + describe_agents(),
)
@agent_option("The agent to grade, e.g. heuristic or mcts:iterations=1000,c=1.4.", required=True)
@game_options
@db_option
@grading_mode_options(
    positions_help="Move once from every reachable non-terminal position (up to symmetry, "
    "weighted by the positions each stands for), or from N of them drawn at "
    "random. The default mode.",
    games_help="Instead: play N games against --opponent, colours alternating.",
)
@seed_option("Seed of every random choice (same seed, same figures).")
@click.option(
    "--worst",
    "n_worst",
    type=click.IntRange(0),
    default=5,
    show_default=True,
    help="How many of the costliest moves to show.",
)
@jobs_option("Processes for long audits (results do not depend on it).")
@report_options(
    plot_help="Also draw accuracy and perfection by ply (needs pip install 'ttt-solve[plot]').",
    csv_help="Print every graded move as CSV.",
)
@quiet_option()
@friendly_errors
def audit(
    agent_spec: str,
    rules: Rules,
    db: str,
    positions: str | None,
    games: int | None,
    opponent_spec: str,
    seed: int,
    n_worst: int,
    jobs: int,
    plot_path: str | None,
    as_json: bool,
    as_csv: bool,
    quiet: bool,
) -> None:
    """Grade an agent's moves against the book, by the project's grading conventions
    (docs/conventions.md in the ttt-solve sources): best (keeps the
    value with the best remoteness), sound (keeps the value), or a blunder (win->draw,
    win->loss, draw->loss). Prints accuracy, perfection, blunders by kind, a by-ply table and
    the costliest moves with the best moves beside them.
    """
    sample = grading_sample(positions, games, opponent_spec, plot_path, as_json, as_csv)
    engine = parse_spec(agent_spec).name == "cmd"
    failures: list[Failure] = []
    with open_book(db) as book:
        truth = Truth(book, rules)
        progress = LazyProgress("auditing", enabled=not quiet)
        shared: dict[str, Any] = {
            "seed": seed,
            "jobs": jobs,
            "progress": progress,
            "failures": failures,
        }
        agent = AgentMaker(agent_spec, db)
        try:
            if games is None:
                records, ungraded = grading.audit_positions(agent, truth, sample=sample, **shared)
                results = None
            else:
                opponent = AgentMaker(opponent_spec, db)
                records, ungraded, results = grading.audit_games(
                    agent, opponent, truth, games=games, **shared
                )
        finally:
            progress.close()
        summary = grading.summarize(records, ungraded, failures)
        if games is None:
            scope = (
                "every reachable non-terminal position"
                if sample is None
                else f"a uniform random sample (up to symmetry) of {count(sample)} reachable "
                f"non-terminal positions"
            )
            mode = (
                f"{scope}, once each: "
                f"{count(summary.graded)} positions up to symmetry standing for "
                f"{count(summary.moves)} reachable positions; figures are weighted by the "
                f"reachable positions each canonical one stands for"
            )
        else:
            mode = (
                f"{games} games against {opponent_spec}, colours alternating (game 1: the "
                f"agent is X); the agent's own moves are graded"
            )
        if plot_path is not None:
            where = "every position" if games is None else f"{games} games against {opponent_spec}"
            title = f"audit of {agent_spec} on {rules.name}, {where} (seed {seed})"
            charts.save(ply_chart(summary, title), plot_path)
        if as_csv:
            _print_csv(truth, records)
        elif as_json:
            _print_json(
                truth,
                agent_spec,
                seed,
                mode,
                summary,
                records,
                results,
                n_worst,
                games is None,
                book.display_url,
                failures,
            )
        else:
            click.echo(
                f"audit of {agent_spec} on {rules.name} (seed {seed}), truth: {book.describe()}"
            )
            click.echo(f"mode: {mode}.")
            click.echo(
                tabulate(summary_rows(summary, games is None, engine), tablefmt="simple_outline")
            )
            if results is not None:
                click.echo("\ngames (results for the agent):")
                stopped = ["stopped by a failure"] if any(r.failure for r in results) else []
                click.echo(
                    tabulate(
                        game_rows(results),
                        headers=["", "games", "won", "drawn", "lost", *stopped],
                        tablefmt="simple_outline",
                    )
                )
            if not summary.moves:
                click.echo(f"\n{nothing_graded(summary)}")
            else:
                click.echo("\nby ply:")
                click.echo(
                    tabulate(
                        ply_rows(summary),
                        headers=[
                            "ply",
                            "moves",
                            "best",
                            "sound",
                            "blunders",
                            "accuracy",
                            "perfection",
                        ],
                        tablefmt="simple_outline",
                        disable_numparse=True,
                    )
                )
            costly = grading.worst(records, n_worst)
            if costly:
                click.echo("\ncostliest moves (* the agent's move, + best moves):")
                for index, record in enumerate(costly, 1):
                    click.echo(describe_worst(truth, record, index))
            elif n_worst and summary.moves:
                click.echo("\nevery graded move was best.")
            if failures:
                shown = failures[: max(n_worst, 1) * 2]
                click.echo(
                    f"\nengine failures ({count(len(failures))}, not graded; the "
                    f"engine was restarted after each timeout, garbage or crash)"
                    + (f", the first {len(shown)}:" if len(shown) < len(failures) else ":")
                )
                for index, failure in enumerate(shown, 1):
                    click.echo(describe_failure(failure, index, games is None))


def _print_csv(truth: Truth, records: list[Graded]) -> None:
    fields = [
        "ply",
        "position",
        "to_move",
        "weight",
        "move",
        "grade",
        "kind",
        "value",
        "move_value",
        "best_moves",
    ]
    writer = csv.DictWriter(sys.stdout, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for record in records:
        row = record_dict(truth, record)
        best_moves = row["best_moves"]
        assert isinstance(best_moves, list)
        row["best_moves"] = " ".join(best_moves)
        row["kind"] = row["kind"] or ""
        writer.writerow(row)


def _print_json(
    truth: Truth,
    agent_spec: str,
    seed: int,
    mode: str,
    summary: Summary,
    records: list[Graded],
    results: list[GameResult] | None,
    n_worst: int,
    weighted: bool,
    db: str,
    failures: list[Failure],
) -> None:
    rules = truth.rules
    out: dict[str, object] = {
        "agent": agent_spec,
        "game": rules.as_dict(),
        "book": db,
        "seed": seed,
        "mode": "positions" if weighted else "games",
        "description": mode,
        **grading.summary_json(summary),
        "worst": [record_dict(truth, r) for r in grading.worst(records, n_worst)],
        "failures": summary.failures,
        "failed": [failure_dict(f) for f in failures],
    }
    if results is not None:
        out["games"] = [grading.game_result_json(rules, r) for r in results]
    click.echo(json.dumps(out, indent=2))
