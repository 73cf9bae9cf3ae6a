"""A round robin's report (:class:`~ttt_solve.agents.tournament.TournamentResult`,
``ttt tournament``): the matrix of results, the standings, the forfeits and the ratings, for
the terminal and a notebook."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tabulate import tabulate

from ttt_solve.presentation import html
from ttt_solve.presentation.numbers import score
from ttt_solve.reports.ratings import ratings_html, ratings_lines

if TYPE_CHECKING:
    from ttt_solve.agents.tournament import TournamentResult


def tournament_rows(result: TournamentResult) -> tuple[list[list[str]], list[str]]:
    """The matrix of a round robin: each row agent's wins-draws-losses against each column."""
    names = result.names
    matrix = [[""] * len(names) for _ in names]
    for p in result.pairings:
        matrix[p.a][p.b] = f"{p.a_wins}-{p.draws}-{p.b_wins}"
        matrix[p.b][p.a] = f"{p.b_wins}-{p.draws}-{p.a_wins}"
    for i in range(len(names)):
        matrix[i][i] = "-"
    return [[names[i], *row] for i, row in enumerate(matrix)], ["", *names]


def standing_rows(result: TournamentResult) -> tuple[list[list[object]], list[str]]:
    """The standings, best first, with a forfeits column when an agent forfeited a game."""
    table = result.standings
    forfeited = any(s.forfeits for s in table)
    rows: list[list[object]] = [
        [
            rank,
            result.names[s.entrant],
            s.games,
            s.won,
            s.drawn,
            s.lost,
            *([s.forfeits] if forfeited else []),
            f"{s.points:g}",
            score(s.score),
        ]
        for rank, s in enumerate(table, 1)
    ]
    headers = ["#", "agent", "games", "won", "drawn", "lost"]
    headers += ["lost by forfeit"] if forfeited else []
    return rows, [*headers, "points", "score"]


def forfeit_lines(result: TournamentResult) -> list[str]:
    """Each agent that forfeited games, in words."""
    return [
        f"{result.names[s.entrant]} forfeited {s.forfeits:,} of its {s.games:,} games by "
        f"failing a move (crash, timeout, garbage or an illegal move): each counts as lost, "
        f"and the tournament went on."
        for s in result.standings
        if s.forfeits
    ]


def tournament_title(result: TournamentResult) -> str:
    return (
        f"round robin on {result.rules.name}, {result.games} games per pair, colours "
        f"alternating (seed {result.seed}); cells: row agent's wins-draws-losses against the "
        f"column agent"
    )


def tournament_lines(result: TournamentResult) -> list[str]:
    """``ttt tournament``'s report: the matrix, the standings, the forfeits, the ratings."""
    matrix, matrix_headers = tournament_rows(result)
    rows, headers = standing_rows(result)
    return [
        tournament_title(result),
        tabulate(matrix, headers=matrix_headers, tablefmt="simple_outline", disable_numparse=True),
        "",
        "standings (win 1, draw 1/2):",
        tabulate(rows, headers=headers, tablefmt="simple_outline"),
        *forfeit_lines(result),
        "",
        *ratings_lines(result.ratings),
    ]


def tournament_html(result: TournamentResult) -> str:
    """A round robin in a notebook: the matrix, the standings, the forfeits, the ratings."""
    matrix, matrix_headers = tournament_rows(result)
    rows, headers = standing_rows(result)
    return html.frame(
        html.heading(tournament_title(result))
        + html.table(matrix, matrix_headers)
        + html.heading("Standings (win 1, draw 1/2)")
        + html.table(rows, headers)
        + html.lines(forfeit_lines(result))
        + html.heading("Ratings (Elo scale, 95% intervals)")
        + ratings_html(result.ratings)
    )
