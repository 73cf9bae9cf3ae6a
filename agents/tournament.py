"""Round robin between agents: every pair meets in ``games`` games, colours alternating.

The games are played by :func:`agents.grading.play`: an agent that fails a move (crash,
timeout, garbage, illegal) forfeits that game, which counts as its loss, and the tournament
goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ttt_solve.agents.grading import play
from ttt_solve.agents.match import derive_seed
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.vocabulary import Side


class Pairing(NamedTuple):
    """Results of agent ``a`` against agent ``b`` (indexes into the entrants).

    ``a_first`` splits them by colour: ``(a's wins, draws, b's wins)`` of the games in which
    ``a`` was X (the rest had ``b`` as X); ``None`` when the colours are not known.
    ``a_forfeits`` and ``b_forfeits`` are the games each lost by failing a move (counted among
    the other's wins).
    """

    a: int
    b: int
    a_wins: int
    draws: int
    b_wins: int
    a_first: tuple[int, int, int] | None = None
    a_forfeits: int = 0
    b_forfeits: int = 0

    @property
    def games(self) -> int:
        return self.a_wins + self.draws + self.b_wins

    @property
    def b_first(self) -> tuple[int, int, int] | None:
        """``(b's wins, draws, a's wins)`` of the games in which ``b`` was X."""
        if self.a_first is None:
            return None
        a_wins, draws, b_wins = self.a_first
        return (self.b_wins - b_wins, self.draws - draws, self.a_wins - a_wins)


class Standing(NamedTuple):
    """An entrant's totals; ``forfeits`` are the games it lost by failing a move (among
    ``lost``)."""

    entrant: int
    games: int
    won: int
    drawn: int
    lost: int
    forfeits: int = 0

    @property
    def points(self) -> float:
        """A win is 1, a draw 1/2."""
        return self.won + self.drawn / 2

    @property
    def score(self) -> float:
        return self.points / self.games if self.games else 0.0


def round_robin(
    makers: Sequence[Any],
    rules: Rules,
    games: int,
    *,
    seed: int = 0,
    book: Any = None,
    jobs: int = 2,
    progress: Callable[[int, int], None] | None = None,
    probe_seconds: float | None = None,
) -> list[Pairing]:
    """Play every pair ``games`` times (the first of the pair is X in even-numbered games).

    Each game's generators are seeded from ``seed``, the pair and the game number, so the
    results do not depend on ``jobs``.
    """
    if len(makers) < 2:
        raise ValueError("a tournament needs at least two agents")
    pairs = [(i, j) for i in range(len(makers)) for j in range(i + 1, len(makers))]
    return play_pairs(
        makers,
        rules,
        pairs,
        games,
        seed=seed,
        book=book,
        jobs=jobs,
        progress=progress,
        probe_seconds=probe_seconds,
    )


def play_pairs(
    makers: Sequence[Any],
    rules: Rules,
    pairs: Sequence[tuple[int, int]],
    games: int,
    *,
    seed: int = 0,
    names: Sequence[object] | None = None,
    salt: str = "tournament",
    book: Any = None,
    jobs: int = 2,
    progress: Callable[[int, int], None] | None = None,
    probe_seconds: float | None = None,
) -> list[Pairing]:
    """Play each pair ``(i, j)`` of ``makers`` ``games`` times, ``i`` X in even-numbered games.

    A game's generators are seeded from ``seed``, ``salt``, the pair's ``names`` (default:
    their indexes) and the game number: naming agents by their specs makes a pair's games the
    same whichever other agents are played in the same run.
    """
    label = list(names) if names is not None else list(range(len(makers)))
    tasks = []
    for i, j in pairs:
        for game in range(games):
            x, o = (i, j) if game % 2 == 0 else (j, i)
            tasks.append(
                (
                    x,
                    o,
                    derive_seed(seed, salt, label[i], label[j], game, "x"),
                    derive_seed(seed, salt, label[i], label[j], game, "o"),
                )
            )
    played = play(
        makers, rules, tasks, book=book, jobs=jobs, progress=progress, probe_seconds=probe_seconds
    )
    tally = {pair: [0, 0, 0, 0, 0] for pair in pairs}  # wins, draws, losses, forfeits of a, b
    first = {pair: [0, 0, 0] for pair in pairs}  # the games the pair's first agent was X
    for (x, o, _, _), one in zip(tasks, played):
        pair = (x, o) if (x, o) in tally else (o, x)
        winner = one.winner
        result = 1 if winner is None else 0 if (x if winner == Side.X else o) == pair[0] else 2
        tally[pair][result] += 1
        if one.failure is not None:
            tally[pair][3 if result == 2 else 4] += 1
        if x == pair[0]:
            first[pair][result] += 1
    out = []
    for i, j in pairs:
        wins, draws, losses, a_forfeits, b_forfeits = tally[(i, j)]
        first_wins, first_draws, first_losses = first[(i, j)]
        colours = (first_wins, first_draws, first_losses)
        out.append(Pairing(i, j, wins, draws, losses, colours, a_forfeits, b_forfeits))
    return out


def standings(pairings: Sequence[Pairing], entrants: int) -> list[Standing]:
    """Each entrant's totals, best first (points, then wins, then entry order)."""
    totals = [[0, 0, 0, 0, 0] for _ in range(entrants)]
    for p in pairings:
        played = p.a_wins + p.draws + p.b_wins
        for who, won, lost, forfeits in (
            (p.a, p.a_wins, p.b_wins, p.a_forfeits),
            (p.b, p.b_wins, p.a_wins, p.b_forfeits),
        ):
            totals[who][0] += played
            totals[who][1] += won
            totals[who][2] += p.draws
            totals[who][3] += lost
            totals[who][4] += forfeits
    table = [Standing(i, *t) for i, t in enumerate(totals)]
    return sorted(table, key=lambda s: (-s.points, -s.won, s.entrant))


@dataclass(frozen=True)
class TournamentResult:
    """A round robin's results: ``ttt tournament`` prints :meth:`text`, its ``--json`` is
    :meth:`to_dict`, a notebook shows :meth:`_repr_html_`. ``names`` label the entrants;
    ``ratings`` (an :class:`agents.rating.Ratings`) come from the same games."""

    rules: Rules
    names: tuple[str, ...]
    games: int  # per pair
    seed: int
    pairings: tuple[Pairing, ...]
    ratings: Any

    @property
    def standings(self) -> list[Standing]:
        return standings(self.pairings, len(self.names))

    def to_dict(self) -> dict[str, Any]:
        names = self.names
        return {
            "game": self.rules.as_dict(),
            "games_per_pair": self.games,
            "seed": self.seed,
            "agents": list(names),
            "pairings": [
                {
                    "a": names[p.a],
                    "b": names[p.b],
                    "a_wins": p.a_wins,
                    "draws": p.draws,
                    "b_wins": p.b_wins,
                    "a_as_x": dict(zip(("a_wins", "draws", "b_wins"), p.a_first or ())),
                    "a_forfeits": p.a_forfeits,
                    "b_forfeits": p.b_forfeits,
                }
                for p in self.pairings
            ],
            "standings": [
                {
                    "agent": names[s.entrant],
                    "games": s.games,
                    "won": s.won,
                    "drawn": s.drawn,
                    "lost": s.lost,
                    "forfeits": s.forfeits,
                    "points": s.points,
                    "score": s.score,
                }
                for s in self.standings
            ],
            "ratings": self.ratings.to_dict(),
        }

    def text(self) -> str:
        """The report ``ttt tournament`` prints: the matrix, the standings, the ratings."""
        from ttt_solve.reports.tournament import tournament_lines

        return "\n".join(tournament_lines(self))

    def __repr__(self) -> str:
        return f"<TournamentResult on {self.rules.name}:\n{self.text()}>"

    def _repr_html_(self) -> str:
        from ttt_solve.reports.tournament import tournament_html

        return tournament_html(self)
