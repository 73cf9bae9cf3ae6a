"""``ttt audit``: grade an agent's moves against the book (best / sound / blunder)."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Sequence

import click
from tabulate import tabulate

from ttt_solve.agents import audit as grading
from ttt_solve.agents.audit import (
    CostlyMove,
    Failure,
    Graded,
    Truth,
    all_best,
)
from ttt_solve.agents.audit import graded_json as record_dict
from ttt_solve.agents.grading import evaluate
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
from ttt_solve.presentation import charts
from ttt_solve.presentation.display import (
    ACCURACY_COUNTS,
    PLY_HEADERS,
    forfeit_sentence,
    game_headers,
    game_rows,
    nothing_graded,
    ply_chart,
    ply_rows,
    summary_rows,
)
from ttt_solve.solver.rules import Rules


def cells(rules: Rules, cells_: list[int] | tuple[int, ...]) -> str:
    return " ".join(rules.cell_name(c) for c in cells_) or "-"


def describe_worst(costly: CostlyMove, index: int, weighted: bool) -> str:
    """One of the costliest moves: what was played, what was best, and the board with the
    agent's move (``*``) and the best moves (``+``) marked."""
    from ttt_solve.presentation import picture

    record, best = costly.graded, costly.best_moves
    position = record.position
    rules = position.rules
    best_value = costly.move_values.get(best[0]) if best else None
    verdict = record.grade.value + (f" {record.kind}" if record.kind else "")
    stands = f"; stands for {record.weight}" if weighted else ""
    head = (
        f"#{index} ply {position.ply}, {position.to_move.upper()} to move, {position} "
        f"(value {record.value}{stands})\n"
        f"    agent played {rules.cell_name(record.cell)} ({record.move_value}: {verdict}); "
        f"best: {cells(rules, best)}" + (f" ({best_value})" if best_value else "")
    )
    marks = {record.cell: "*", **{c: "+" for c in best if c != record.cell}}
    board = picture.text(picture.board(position, marked=[record.cell], best=best), stones=marks)
    return head + "\n" + "\n".join("    " + line for line in board.splitlines())


def describe_failure(failure: Failure, index: int, weighted: bool) -> str:
    position = failure.position
    stands = f" (stands for {failure.weight})" if weighted else ""
    return (
        f"#{index} ply {position.ply}, {position.to_move.upper()} to move, {position}"
        f"{stands}: {failure.kind}: {failure.detail}"
    )


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
    positions_help="Move once from every reachable non-terminal position, each in its own "
    "orientation, or from N of them drawn at random. The default mode.",
    games_help="Instead: play N games against --opponent, colours alternating.",
)
@click.option(
    "--per-class",
    is_flag=True,
    help="Positions mode: pose one board per symmetry class (in the project's orientation) "
    "and weight it by the positions it stands for, instead of every position in its own "
    "orientation: exact only for an agent that plays the same way in every orientation.",
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
    per_class: bool,
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
    with open_book(db, read_only=True) as book:
        truth = Truth(book, rules)
        progress = LazyProgress("auditing", enabled=not quiet)
        try:
            report = evaluate(
                AgentMaker(agent_spec, db),
                truth,
                sample=sample,
                per_class=per_class,
                games=games,
                opponent=None if games is None else AgentMaker(opponent_spec, db),
                seed=seed,
                jobs=jobs,
                worst_moves=n_worst,
                progress=progress,
            )
        finally:
            progress.close()
        if plot_path is not None:
            where = "every position" if games is None else f"{games} games against {opponent_spec}"
            title = f"audit of {agent_spec} on {rules.name}, {where} (seed {seed})"
            charts.save(ply_chart(report.summary, title), plot_path)
        if as_csv:
            _print_csv(truth, report.records)
        elif as_json:
            click.echo(json.dumps(report.to_dict(), indent=2))
        else:
            click.echo(
                f"audit of {agent_spec} on {rules.name} (seed {seed}), truth: {book.describe()}"
            )
            _print_report(report, engine, n_worst)


def _print_report(report: grading.AuditReport, engine: bool, n_worst: int) -> None:
    """The report as tables: summary, games, by ply, the costliest moves, the failures."""
    summary, results, failures = report.summary, report.games, report.failures
    click.echo(f"mode: {report.description}.")
    rows = summary_rows(summary, report.weighted, engine, report.mode == "games")
    click.echo(tabulate(rows, tablefmt="simple_outline"))
    click.echo(f"({ACCURACY_COUNTS}.)")
    if results is not None:
        click.echo("\ngames (results for the agent):")
        click.echo(
            tabulate(game_rows(results), headers=game_headers(results), tablefmt="simple_outline")
        )
        forfeits = forfeit_sentence(results)
        if forfeits:
            click.echo(forfeits)
    if summary.by_ply:
        click.echo("\nby ply:")
        click.echo(
            tabulate(
                ply_rows(summary),
                headers=PLY_HEADERS,
                tablefmt="simple_outline",
                disable_numparse=True,
            )
        )
    else:
        click.echo(f"\n{nothing_graded(summary)}")
    if report.worst:
        click.echo("\ncostliest moves (* the agent's move, + best moves):")
        for index, costly in enumerate(report.worst, 1):
            click.echo(describe_worst(costly, index, report.weighted))
    elif n_worst and summary.moves:
        click.echo(f"\n{all_best(summary)}")
    if failures:
        shown = failures[: max(n_worst, 1) * 2]
        restarted = "; the engine was restarted after each timeout, garbage or crash"
        click.echo(
            f"\n{'engine failures' if engine else 'failed moves'} "
            f"({count(summary.failures_total)}, counted against accuracy"
            f"{restarted if engine else ''})"
            + (f", the first {len(shown)}:" if len(shown) < len(failures) else ":")
        )
        for index, failure in enumerate(shown, 1):
            click.echo(describe_failure(failure, index, report.weighted))


def _print_csv(truth: Truth, records: Sequence[Graded]) -> None:
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
