"""``ttt audit``: grade an agent's moves against the book (best / sound / blunder)."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Sequence

import click

from ttt_solve.agents.audit import Graded, Truth, graded_json
from ttt_solve.agents.grading import evaluate
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.spec import describe_agents, parse_spec
from ttt_solve.book.reader import open_book
from ttt_solve.cli.common import (
    LazyProgress,
    db_option,
    friendly_errors,
    game_options,
    jobs_option,
)
from ttt_solve.cli.options import (
    Grading,
    agent_option,
    command,
    grading_mode_options,
    grading_sample,
    quiet_option,
    report_options,
    seed_option,
)
from ttt_solve.errors import install_hint
from ttt_solve.presentation import charts
from ttt_solve.reports.audit import chart_title, ply_chart, text_lines
from ttt_solve.solver.rules import Rules

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
    per_class_help="Positions mode: pose one board per symmetry class (in the project's "
    "orientation) and weight it by the positions it stands for, instead of every position in "
    "its own orientation: exact only for an agent that plays the same way in every orientation.",
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
    plot_help=f"Also draw accuracy and perfection by ply (needs {install_hint('plot')}).",
    csv_help="Print every graded move as CSV.",
)
@quiet_option()
@friendly_errors
def audit(
    agent_spec: str,
    rules: Rules,
    db: str,
    grading: Grading,
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
    sample = grading_sample(grading, plot_path, as_json, as_csv)
    games = grading.games
    engine = parse_spec(agent_spec).name == "cmd"
    with open_book(db, read_only=True) as book:
        truth = Truth(book, rules)
        progress = LazyProgress("auditing", enabled=not quiet)
        try:
            report = evaluate(
                AgentMaker(agent_spec, db),
                truth,
                sample=sample,
                per_class=grading.per_class,
                games=games,
                opponent=None if games is None else AgentMaker(grading.opponent, db),
                seed=seed,
                jobs=jobs,
                worst_moves=n_worst,
                progress=progress,
            )
        finally:
            progress.close()
        if plot_path is not None:
            charts.save(ply_chart(report.summary, chart_title(report)), plot_path)
        if as_csv:
            _print_csv(truth, report.records)
        elif as_json:
            click.echo(json.dumps(report.to_dict(), indent=2))
        else:
            click.echo(
                f"audit of {agent_spec} on {rules.name} (seed {seed}), truth: {book.describe()}"
            )
            click.echo("\n".join(text_lines(report, engine, n_worst)))


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
        row = graded_json(truth, record)
        best_moves = row["best_moves"]
        assert isinstance(best_moves, list)
        row["best_moves"] = " ".join(best_moves)
        row["kind"] = row["kind"] or ""
        writer.writerow(row)
