"""``ttt tournament``: a round robin between agents, with a result matrix and standings."""

from __future__ import annotations

import json
from contextlib import ExitStack

import click

from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.spec import describe_agents, parse_spec
from ttt_solve.agents.tournament import TournamentResult, round_robin
from ttt_solve.book.reader import open_book
from ttt_solve.cli.common import CliError, LazyProgress, friendly_errors, game_options
from ttt_solve.cli.options import (
    MAX_GAMES,
    agents_run_options,
    command,
    count_option,
    quiet_option,
)
from ttt_solve.cli.rate import anchor_option, bootstrap_option
from ttt_solve.solver.rules import Rules

EXAMPLES = """
\b
Examples:
  ttt tournament --agents random,heuristic,mcts:iterations=500 --games 20
  ttt tournament --agents alphabeta:depth=2,mcts --size 4 --win 3 --games 10 --json
  ttt tournament --agents perfect,heuristic,mcts:iterations=200,rollout=heuristic --games 50
  ttt tournament --agents heuristic --agent 'cmd:"./my-engine --openings a1,b2",timeout=2'
"""


def split_specs(text: str) -> list[str]:
    """``a,b:x=1,y=2,c`` -> ``["a", "b:x=1,y=2", "c"]``: a comma starts a new agent unless
    what follows is a ``key=value`` of the agent before."""
    specs: list[str] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if specs and "=" in part and ":" not in part.split("=")[0]:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs


def labels(specs: list[str]) -> list[str]:
    """Spec strings, numbered where one appears twice."""
    return [f"{spec} #{i + 1}" if specs.count(spec) > 1 else spec for i, spec in enumerate(specs)]


@command(
    "tournament",
    epilog=EXAMPLES + "\n\b\nAgents:\n" + describe_agents(),
)
@click.option(
    "--agents",
    "agent_specs",
    default="",
    metavar="A,B,...",
    help="Agent specs, comma-separated (parameters may follow each: "
    "mcts:iterations=500,c=2,random).",
)
@click.option(
    "--agent",
    "whole_specs",
    multiple=True,
    metavar="SPEC",
    help="One more agent spec, taken whole, commas and all (repeatable): for "
    "engine commands (cmd:...) and plugin paths that hold commas.",
)
@count_option(
    "--games", 10, "Games per pair; colours alternate (the first-named is X in game 1).", MAX_GAMES
)
@game_options
@agents_run_options(
    "Seed of every random choice (same seed, same results).",
    "Processes for long tournaments (results do not depend on it).",
)
@anchor_option
@bootstrap_option
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@quiet_option()
@friendly_errors
def tournament(
    agent_specs: str,
    whole_specs: tuple[str, ...],
    games: int,
    rules: Rules,
    db: str,
    seed: int,
    jobs: int,
    anchor: str | None,
    bootstrap: int,
    as_json: bool,
    quiet: bool,
) -> None:
    """Round robin: every pair of agents plays N games, colours alternating. Prints a
    win/draw/loss matrix (row agent against column agent), the standings (a win scores 1,
    a draw 1/2) and ratings on the Elo scale with 95% intervals (draws and the first move
    modelled; random = 0 unless --anchor says otherwise). The book is opened only if an agent
    reads it (perfect, book=true).
    """
    from ttt_solve.agents.rating import RatingError, parse_anchor, rate  # NumPy: not for --help

    specs = split_specs(agent_specs) + [spec.strip() for spec in whole_specs if spec.strip()]
    if len(specs) < 2:
        raise CliError(
            f"{len(specs)} agent{'' if len(specs) == 1 else 's'} named; a "
            f"tournament needs at least two "
            f"(e.g. --agents random,heuristic, or --agent SPEC twice)"
        )
    parsed = [parse_spec(spec) for spec in specs]
    anchor_at = parse_anchor(anchor) if anchor is not None else None
    names = labels(specs)
    if anchor_at is not None and anchor_at[0] not in names:
        raise RatingError(
            f"--anchor {anchor} names no agent of this tournament; agents: {', '.join(names)}"
        )
    with ExitStack() as stack:
        book = None
        if any(p.needs_book for p in parsed):
            book = stack.enter_context(open_book(db, read_only=True))
            book.game(rules)
        makers = [AgentMaker(spec, db) for spec in specs]
        progress = LazyProgress("playing", enabled=not quiet)
        try:
            pairings = round_robin(
                makers, rules, games, seed=seed, book=book, jobs=jobs, progress=progress
            )
        finally:
            progress.close()
    ratings = rate(pairings, names, anchor=anchor_at, bootstrap=bootstrap, seed=seed)
    result = TournamentResult(rules, tuple(names), games, seed, tuple(pairings), ratings)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
    else:
        click.echo(result.text())
