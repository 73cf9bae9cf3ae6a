"""Ratings' reports: the table of a fit (:class:`~ttt_solve.agents.rating.Ratings`), the model
and its fit in words, and the reference ladder's report (:class:`~ttt_solve.agents.ladder.
LadderRatings`, ``ttt rate``) for the terminal and a notebook, with its chart."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tabulate import tabulate

from ttt_solve.presentation import charts, html
from ttt_solve.presentation.numbers import elo, elo_interval, likelihood, percent, score

if TYPE_CHECKING:
    from ttt_solve.agents.ladder import AgentRating, LadderRatings
    from ttt_solve.agents.rating import Ratings

HEADERS = ["#", "agent", "rating", "95% interval", "games", "score", "stronger than next"]
TITLE = "ratings (Elo scale, Davidson model: draws and the first move modelled; 95% intervals):"


def ratings_rows(ratings: Ratings, marked: str | None = None) -> list[list[str]]:
    """One row per agent, best first; ``marked`` (an agent label) gets a ``*``."""
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
                score(one.score),
                likelihood(one.stronger_than_next),
            ]
        )
    return rows


def model_text(ratings: Ratings) -> str:
    """The fitted first-move advantage and draw parameter, the anchor and the intervals."""
    anchor = (
        f"{ratings.anchor} = {elo(ratings.anchor_rating)}"
        if ratings.anchor
        else f"the mean = {elo(ratings.anchor_rating)}"
    )
    parts = [f"anchor: {anchor}"]
    if ratings.first_move is not None:
        parts.append(f"first move worth {elo_interval(*ratings.first_move)}")
    parts.append(f"draw parameter nu {ratings.nu:.3g}")
    parts.append(f"prior: {ratings.prior_draws:g} virtual draws per pair")
    if ratings.method == "bootstrap":
        parts.append(f"intervals: bootstrap of {ratings.resamples} resamples (seed {ratings.seed})")
    else:
        parts.append("intervals: likelihood")
    return "; ".join(parts)


def fit_text(ratings: Ratings) -> str:
    """The model's goodness of fit to the games, and why the intervals shown were chosen."""
    fit = ratings.goodness
    if fit is None:
        return f"fit: not tested ({ratings.reason}); intervals: {ratings.method}"
    p = "p < 0.001" if fit.p_value < 0.001 else f"p = {fit.p_value:.3f}"
    if fit.simulated:
        if fit.p_value * (fit.simulated + 1) < 1.5:  # no simulation came as far: a bound
            p = f"p <= {fit.p_value:.3f}"
        p += f" (from {fit.simulated} simulations: cells too sparse for the chi-square)"
    return (
        f"fit: Pearson X² {fit.statistic:,.0f} on {fit.degrees:,} degrees of freedom over "
        f"{fit.cells:,} pair-and-colour cells, {p}; intervals: {ratings.method}, because "
        f"{ratings.reason}"
    )


def ratings_lines(ratings: Ratings, marked: str | None = None) -> list[str]:
    """The ratings as the commands print them: a title, the table, the model's figures."""
    return [
        TITLE,
        tabulate(
            ratings_rows(ratings, marked),
            headers=HEADERS,
            tablefmt="simple_outline",
            disable_numparse=True,
        ),
        model_text(ratings),
        fit_text(ratings),
    ]


def ratings_html(ratings: Ratings, marked: str | None = None) -> str:
    """The ratings' table and the model's figures in a notebook."""
    return html.table(ratings_rows(ratings, marked), HEADERS) + html.lines(
        [model_text(ratings), fit_text(ratings)]
    )


# -- the reference ladder -------------------------------------------------------------------------


def played_text(count: int) -> str:
    return f"{count:,} games played now" if count else "from the cache"


def _marked(result: LadderRatings) -> str | None:
    """The agent the table marks: the one rated, when one was."""
    return result.agents[0].agent if len(result.agents) == 1 else None


def ladder_lines(result: LadderRatings, where: str) -> list[str]:
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
    lines += ratings_lines(result.table, _marked(result))
    if len(result.agents) > 1 or (result.agents and result.agents[0].agent not in ladder.rungs):
        lines.append(
            "each agent is rated on its games against the rungs, the rungs' ratings held; "
            "its interval includes theirs"
        )
    for one in result.agents:
        lines += _agent_lines(result, one)
    return lines


def _place(result: LadderRatings, agent: str) -> str:
    """Where an agent's rating stands among the rungs'."""
    below, above = result.between(agent)
    if below is not None and above is not None:
        return (
            f"between {below.agent} ({elo(below.rating.mean)}) and {above.agent} "
            f"({elo(above.rating.mean)})"
        )
    if below is not None:
        return f"above every rung (the best: {below.agent}, {elo(below.rating.mean)})"
    assert above is not None
    return f"below every rung (the weakest: {above.agent}, {elo(above.rating.mean)})"


def _agent_lines(result: LadderRatings, one: AgentRating) -> list[str]:
    """One agent's rating and place, its forfeits, and its audit's figures."""
    rated = result.rating(one.agent)
    indent = " " * len(one.agent)
    lines = [f"{one.agent}: rating {elo_interval(*rated.rating)}, {_place(result, one.agent)}"]
    if one.forfeits:
        games = result.key.games * len(result.ladder.rungs)
        lines.append(
            f"{indent}  forfeited {one.forfeits:,} of its {games:,} games "
            f"by failing a move (each counted as lost; the rest were played)"
        )
    if one.failed_moves is not None:
        every = one.sample is None or one.graded < one.sample
        scope = "every position" if every else f"{one.graded:,} sampled positions"
        failed = (
            f"; {one.failed_moves:,} failed move{'s' if one.failed_moves != 1 else ''}, "
            "counted against it"
            if one.failed_moves
            else ""
        )
        lines.append(
            f"{indent}  accuracy {percent(one.accuracy)}, perfection "
            f"{percent(one.perfection)} ({scope}, seed {result.key.seed}{failed})"
        )
    return lines


def ratings_chart(result: LadderRatings) -> charts.Figure:
    """The table's ratings with their intervals, the rated agents highlighted."""
    anchor = result.table.anchor or "the mean"
    return charts.interval_chart(
        [charts.Estimate(*row) for row in result.estimates()],
        title=f"Ratings on {result.rules.name}, ladder {result.ladder.name}, "
        f"{result.key.games} games per pair",
        xlabel=f"rating (Elo, {anchor} = {elo(result.table.anchor_rating)}), 95% interval",
        legend=("ladder rungs", "rated agents"),
    )


def ladder_html(result: LadderRatings) -> str:
    """A ladder's ratings in a notebook: the chart, the table, and each agent's place."""
    lines = ladder_lines(result, result.book or "the book")
    return html.frame(
        html.heading(lines[0])
        + html.chart_or_nothing(lambda: ratings_chart(result))
        + html.table(ratings_rows(result.table, _marked(result)), HEADERS)
        + html.lines(line for line in lines[1:] if "\n" not in line)
    )


def ladder_text(result: LadderRatings) -> str:
    """The report ``ttt rate`` prints, with the book named as the result says."""
    return "\n".join(ladder_lines(result, result.book or "the book"))
