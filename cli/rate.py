"""``ttt rate``: ratings against the reference ladder; and how every command shows ratings."""

from __future__ import annotations

import json
from typing import Any

import click
from tabulate import tabulate

from ttt_solve.cli.common import (
    CliError,
    LazyProgress,
    db_option,
    friendly_errors,
    game_options,
    jobs_option,
)
from ttt_solve.cli.options import (
    Decorator,
    agent_option,
    command,
    quiet_option,
    seed_option,
)
from ttt_solve.errors import TttError
from ttt_solve.solver.rules import Rules

anchor_option: Decorator = click.option(
    "--anchor",
    default=None,
    metavar="SPEC=RATING",
    help="The agent whose rating is fixed, and its rating (default: random=0 when random "
    "plays, else the mean rating is 0).",
)
bootstrap_option: Decorator = click.option(
    "--bootstrap",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    metavar="N",
    help="Rating intervals from N refits on resampled games (seeded with --seed) instead of "
    "the likelihood's curvature.",
)


def elo(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 0.5 else "0"


def ratings_rows(ratings: Any, marked: str | None = None) -> list[list[str]]:
    """One row per agent, best first; ``marked`` (an agent label) gets a ``*``."""
    from ttt_solve.agents.rating import likelihood_text

    rows = []
    for rank, one in enumerate(ratings.rated, 1):
        low, high = one.rating.low, one.rating.high
        shown = "-" if low == high else f"{elo(low)} to {elo(high)}"
        rows.append(
            [
                str(rank),
                one.agent + (" *" if one.agent == marked else ""),
                elo(one.rating.mean),
                shown,
                f"{one.games:,}",
                f"{100 * one.score:.1f}%",
                likelihood_text(one.stronger_than_next),
            ]
        )
    return rows


HEADERS = ["#", "agent", "rating", "95% interval", "games", "score", "stronger than next"]


def model_text(ratings: Any) -> str:
    """The fitted first-move advantage and draw parameter, the anchor and the intervals."""
    anchor = (
        f"{ratings.anchor} = {elo(ratings.anchor_rating)}"
        if ratings.anchor
        else f"the mean = {elo(ratings.anchor_rating)}"
    )
    parts = [f"anchor: {anchor}"]
    if ratings.first_move is not None:
        first = ratings.first_move
        parts.append(f"first move worth {elo(first.mean)} [{elo(first.low)} to {elo(first.high)}]")
    parts.append(f"draw parameter nu {ratings.nu:.3g}")
    parts.append(f"prior: {ratings.prior_draws:g} virtual draws per pair")
    if ratings.method == "bootstrap":
        parts.append(f"intervals: bootstrap of {ratings.resamples} resamples (seed {ratings.seed})")
    else:
        parts.append("intervals: likelihood")
    return "; ".join(parts)


def ratings_lines(ratings: Any, marked: str | None = None) -> list[str]:
    """The ratings as the commands print them: a title, the table, the model's figures."""
    return [
        "ratings (Elo scale, Davidson model: draws and the first move modelled; 95% intervals):",
        tabulate(
            ratings_rows(ratings, marked),
            headers=HEADERS,
            tablefmt="simple_outline",
            disable_numparse=True,
        ),
        model_text(ratings),
    ]


EXAMPLES = """
\b
Examples:
  ttt rate --size 3 --win 3                       # the ladder's ratings (played once, cached)
  ttt rate --agent heuristic --agent mcts:iterations=300
  ttt rate --agent 'cmd:"./my-engine",timeout=2' --size 4 --win 3 --json
  ttt rate --agent alphabeta:depth=2 --plot ratings.svg --positions all
"""


def ladder_help() -> str:
    import textwrap

    from ttt_solve.agents.rungs import GAMES, STANDARD

    text = (
        f"The ladder {STANDARD.name} (weakest first, random = 0): {', '.join(STANDARD.rungs)}; "
        f"{GAMES} games per pair unless --games says otherwise; --anchor must name a rung."
    )
    return "\b\n" + "\n".join(textwrap.wrap(text, 78))


@command("rate", epilog=EXAMPLES + "\n" + ladder_help())
@agent_option(
    "An agent to rate against the ladder (repeatable); without one, the ladder alone.",
    multiple=True,
)
@click.option(
    "--games",
    type=click.IntRange(1),
    default=None,
    metavar="N",
    help="Games per pair of rungs, and per rung for each agent (default 100); a ladder of "
    "another N or seed is a ladder of its own, played and cached apart.",
)
@game_options
@db_option
@seed_option("Seed of the ladder's games, the agents' games and the audits.")
@anchor_option
@bootstrap_option
@click.option(
    "--positions",
    default="sample:1000",
    show_default=True,
    metavar="all|sample:N",
    help="The positions each rated agent is audited on for its accuracy and perfection.",
)
@click.option(
    "--plot",
    "plot_path",
    default=None,
    metavar="FILE.svg|FILE.png",
    help="Also draw the ratings with their intervals (needs pip install 'ttt-solve[plot]').",
)
@click.option("--json", "as_json", is_flag=True, help="Print the ratings as JSON.")
@jobs_option("Processes for the games and audits (results do not depend on it).")
@quiet_option()
@friendly_errors
def rate_command(
    agent_specs: tuple[str, ...],
    games: int | None,
    rules: Rules,
    db: str,
    seed: int,
    anchor: str | None,
    bootstrap: int,
    positions: str,
    plot_path: str | None,
    as_json: bool,
    jobs: int,
    quiet: bool,
) -> None:
    """Rate agents on the Elo scale against the reference ladder: agents of known strength,
    from random to perfect play and MCTS, that play each other once per game (the games are
    cached in the book); an agent then plays only the rungs. Prints the ladder's ratings with
    each agent placed on it (rating, 95% interval, the likelihood of being stronger than the
    next), and each agent's accuracy and perfection against the book.
    """
    from ttt_solve import charts
    from ttt_solve.agents.ladder import rate_on_ladder
    from ttt_solve.agents.rating import parse_anchor
    from ttt_solve.agents.rungs import GAMES
    from ttt_solve.agents.spec import parse_spec
    from ttt_solve.book.reader import unwritable_reason
    from ttt_solve.cli.options import parse_positions

    for spec in agent_specs:
        parse_spec(spec)
    anchor_at = parse_anchor(anchor) if anchor is not None else None
    sample = parse_positions(positions)
    if plot_path is not None:
        try:
            charts.check_target(plot_path)
        except TttError as error:
            raise CliError(str(error)) from None
    games = games if games is not None else GAMES
    with open_ladder_book(db) as book:
        book.game(rules)
        progress = LazyProgress("playing", enabled=not quiet)
        try:
            result = rate_on_ladder(
                book,
                db,
                rules,
                list(agent_specs),
                games=games,
                seed=seed,
                anchor=anchor_at,
                bootstrap=bootstrap,
                sample=sample,
                jobs=jobs,
                progress=progress,
                cache=unwritable_reason(db) is None,
            )
        finally:
            progress.close()
        where = book.describe()
    if plot_path is not None:
        charts.save(ratings_chart(result), plot_path)
    if as_json:
        click.echo(json.dumps({"book": where, **result.to_dict()}, indent=2))
    else:
        for line in ladder_lines(result, where):
            click.echo(line)
    if plot_path is not None:
        click.echo(f"plot written to {plot_path}", err=True)


def open_ladder_book(db: str) -> Any:
    """The book, opened so that the ladder's games can be cached in it: a book of an older
    schema is upgraded (its games kept), as a write by ``ttt-solve`` would. A book that
    cannot be written is only read (its games are then played but not cached)."""
    import os

    from ttt_solve.book.reader import open_book, sqlite_file, unwritable_reason

    path = sqlite_file(db)
    exists = path is None or os.path.exists(path)
    return open_book(db, create=exists and unwritable_reason(db) is None)


def played_text(count: int) -> str:
    return f"{count:,} games played now" if count else "from the cache"


def ladder_lines(result: Any, where: str) -> list[str]:
    """``ttt rate``'s report: what was played, the table, each agent's place and audit."""
    key, ladder = result.key, result.ladder
    lines = [
        f"ladder {ladder.name} on {result.rules.name}: {len(ladder.rungs)} rungs, "
        f"{key.games} games per pair (seed {key.seed}); {where}; ladder games: "
        f"{played_text(result.played)}",
    ]
    if not result.cached and (result.played or any(one.played for one in result.agents)):
        lines.append("(the book cannot be written: the games played now are not cached)")
    for one in result.agents:
        lines.append(
            f"{one.agent}: "
            + (
                "a rung of the ladder"
                if one.agent in ladder.rungs
                else f"{key.games} games against each rung, {played_text(one.played)}"
            )
        )
    marked = result.agents[0].agent if len(result.agents) == 1 else None
    lines += ratings_lines(result.table, marked)
    if len(result.agents) > 1 or (result.agents and result.agents[0].agent not in ladder.rungs):
        lines.append(
            "each agent is rated on its games against the rungs, the rungs' ratings held; "
            "its interval includes theirs"
        )
    for one in result.agents:
        rated = result.rating(one.agent)
        below, above = result.between(one.agent)
        place = (
            f"between {below.agent} ({elo(below.rating.mean)}) and {above.agent} "
            f"({elo(above.rating.mean)})"
            if below is not None and above is not None
            else f"above every rung (the best: {below.agent}, {elo(below.rating.mean)})"
            if below is not None
            else f"below every rung (the weakest: {above.agent}, {elo(above.rating.mean)})"
        )
        lines.append(
            f"{one.agent}: rating {elo(rated.rating.mean)} [{elo(rated.rating.low)} to "
            f"{elo(rated.rating.high)}], {place}"
        )
        if one.forfeits:
            lines.append(
                f"{' ' * len(one.agent)}  forfeited {one.forfeits:,} of its {one.played:,} games "
                f"by failing a move (each counted as lost; the rest were played)"
            )
        if one.failed_moves is not None:
            from ttt_solve.agents.audit import share_text

            every = one.sample is None or one.graded < one.sample
            scope = "every position" if every else f"{one.graded:,} sampled positions"
            failed = (
                f"; {one.failed_moves:,} failed moves, counted against it"
                if one.failed_moves
                else ""
            )
            lines.append(
                f"{' ' * len(one.agent)}  accuracy {share_text(one.accuracy)}, perfection "
                f"{share_text(one.perfection)} ({scope}, seed {key.seed}{failed})"
            )
    return lines


def ratings_chart(result: Any) -> Any:
    """The table's ratings with their intervals, the rated agents highlighted."""
    from ttt_solve import charts

    anchor = result.table.anchor or "the mean"
    return charts.interval_chart(
        [charts.Estimate(*row) for row in result.estimates()],
        title=f"Ratings on {result.rules.name}, ladder {result.ladder.name}, "
        f"{result.key.games} games per pair",
        xlabel=f"rating (Elo, {anchor} = {elo(result.table.anchor_rating)}), 95% interval",
        legend=("ladder rungs", "rated agents"),
    )
