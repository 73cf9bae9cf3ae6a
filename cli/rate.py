"""``ttt rate``: ratings against the reference ladder; and how every command shows ratings."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from ttt_solve.cli.common import (
    LazyProgress,
    db_option,
    duration_text,
    friendly_errors,
    game_options,
    jobs_option,
)
from ttt_solve.cli.options import (
    ANCHOR,
    BOOTSTRAP,
    GAMES,
    Decorator,
    agent_option,
    command,
    quiet_option,
    seed_option,
)
from ttt_solve.errors import install_hint
from ttt_solve.reports.ratings import ladder_lines, ratings_chart
from ttt_solve.solver.rules import Rules

if TYPE_CHECKING:
    from ttt_solve.agents.ladder import LadderRatings

anchor_option: Decorator = click.option(
    "--anchor",
    type=ANCHOR,
    default=None,
    metavar="SPEC=RATING",
    help="The agent whose rating is fixed, and its rating (default: random=0 when random "
    "plays, else the mean rating is 0).",
)
bootstrap_option: Decorator = click.option(
    "--bootstrap",
    type=BOOTSTRAP,
    default=0,
    show_default=True,
    metavar="N",
    help="Rating intervals from N refits on resampled games (seeded with --seed). Without it: "
    "the likelihood's curvature where the model fits the games, 200 refits where it misfits "
    "them (the report's fit line says which).",
)


class EstimatedProgress(LazyProgress):
    """The games' progress bar, whose time left is the ladder's estimate (each game weighted
    by the cost of its pair), not the bar's own count of games, or says it cannot estimate."""

    left = "time left: cannot estimate yet"

    def estimate(self, seconds: float | None) -> None:
        self.left = (
            "time left: cannot estimate yet"
            if seconds is None
            else f"about {duration_text(seconds)} left"
        )

    def __call__(self, done: int, total: int) -> None:
        fresh = self._bar is None
        super().__call__(done, total)
        if fresh and self._bar is not None:
            self._bar.show_eta = False
            self._bar.item_show_func = lambda _item: self.left
            self._bar.render_progress()


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
    type=GAMES,
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
    help=f"Also draw the ratings with their intervals (needs {install_hint('plot')}).",
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
    from ttt_solve.agents.ladder import open_ladder_book, rate_on_ladder
    from ttt_solve.agents.rating import parse_anchor
    from ttt_solve.agents.rungs import GAMES
    from ttt_solve.agents.spec import parse_spec
    from ttt_solve.book.urls import unwritable_reason
    from ttt_solve.cli.options import check_plot, parse_positions

    for spec in agent_specs:
        parse_spec(spec)
    anchor_at = parse_anchor(anchor) if anchor is not None else None
    sample = parse_positions(positions)
    check_plot(plot_path)
    with open_ladder_book(db) as book:
        book.game(rules)
        with EstimatedProgress("playing", enabled=not quiet) as progress:
            result = rate_on_ladder(
                book,
                db,
                rules,
                list(agent_specs),
                games=games if games is not None else GAMES,
                seed=seed,
                anchor=anchor_at,
                bootstrap=bootstrap,
                sample=sample,
                jobs=jobs,
                progress=progress,
                estimate=progress.estimate,
                cache=unwritable_reason(db) is None,
            )
        where = book.describe()
    _show(result, where, plot_path, as_json)


def _show(result: LadderRatings, where: str, plot_path: str | None, as_json: bool) -> None:
    """The ratings as the options ask: JSON or text, and the plot."""
    if plot_path is not None:
        from ttt_solve.presentation import charts

        charts.save(ratings_chart(result), plot_path)
    if as_json:
        click.echo(json.dumps({"book": where, **result.to_dict()}, indent=2))
    else:
        for line in ladder_lines(result, where):
            click.echo(line)
    if plot_path is not None:
        click.echo(f"plot written to {plot_path}", err=True)
