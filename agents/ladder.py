"""The reference ladder: agents of known strength that rate any other on one scale.

A ladder is a fixed, named set of rungs (:data:`STANDARD`: ``random``, the graded perfect
players and MCTS from 10 to 10,000 iterations). On a game it is played once, every pair of
rungs ``games`` times with colours alternating, and cached in the book
(:mod:`book.ladder`); an agent is then rated by playing the rungs alone, ``games`` times each,
and its games are cached too. Its rating comes from the ladder's games and its own
(:func:`agents.rating.rate`), anchored where the ladder is (``random`` = 0 unless told
otherwise), so rating one agent changes no other agent's rating and every agent rated on the
same ladder, game, games per pair and seed shares one scale.

Every game is seeded from the seed, what the two agents are (:mod:`agents.identity`: an
engine by its program's contents, not by how its path is spelled) and the game's number, so
a rung's games against an agent are the same whichever other agents are rated in the same run.
"""

from __future__ import annotations

import itertools
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ttt_solve.agents.audit import Truth
from ttt_solve.agents.eta import seconds_left
from ttt_solve.agents.grading import evaluate
from ttt_solve.agents.identity import identity
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.rating import Rated, Ratings, extend, rate
from ttt_solve.agents.rungs import GAMES, LADDERS, STANDARD, LadderSpec
from ttt_solve.agents.spec import parse_spec
from ttt_solve.agents.tournament import Pairing, play_pairs
from ttt_solve.book.ladder import (
    LADDER,
    NO_AGENT,
    LadderKey,
    LadderRow,
    cached_ladders,
    forfeits_of,
    read_rows,
    write_batch,
)
from ttt_solve.errors import TttError
from ttt_solve.solver.rules import Rules

SALT = "ladder"


class LadderError(TttError, ValueError):
    """A game the ladder cannot be played on, or a cache that does not add up."""


@dataclass(frozen=True)
class AgentRating:
    """One agent rated on the ladder: the games played now (0: all from the cache) and how
    many of its games it forfeited by failing a move (``None`` where a cache written before it
    kept them does not say), and its audit's accuracy and perfection over the positions asked
    and its failed moves there (``None`` when not audited). Its rating is in
    :attr:`LadderRatings.table`."""

    agent: str
    played: int
    accuracy: float | None = None
    perfection: float | None = None
    graded: int = 0  # positions the audit asked (up to symmetry)
    sample: int | None = None  # the positions audited: None for all
    forfeits: int | None = None
    failed_moves: int | None = None  # in the audit, weighted as its positions


@dataclass(frozen=True)
class LadderRatings:
    """A game's ladder and the agents rated on it: ``fit`` rates the rungs from their own
    games; ``table`` adds each agent, fitted to its games against the rungs with the rungs
    held (:func:`agents.rating.extend`)."""

    rules: Rules
    ladder: LadderSpec
    key: LadderKey
    fit: Ratings
    table: Ratings
    played: int  # ladder games played now (0: from the cache)
    agents: tuple[AgentRating, ...]
    cached: bool = True  # whether the games played now were stored
    book: str = ""  # the book's description, for the report

    def text(self) -> str:
        """The report ``ttt rate`` prints."""
        from ttt_solve.reports.ratings import ladder_text

        return ladder_text(self)

    def __repr__(self) -> str:
        return f"<LadderRatings of {self.rules.name}, ladder {self.ladder.name}:\n{self.text()}>"

    def _repr_html_(self) -> str:
        from ttt_solve.reports.ratings import ladder_html

        return ladder_html(self)

    def rating(self, agent: str) -> Rated:
        return self.table.of(agent)

    def estimates(self) -> list[tuple[str, float, float, float, bool]]:
        """``(agent, rating, low, high, rated)`` best first, ``rated`` for the agents rated
        on the ladder (not rungs): what a chart of the table draws."""
        rated = {one.agent for one in self.agents if one.agent not in self.ladder.rungs}
        return [
            (one.agent, one.rating.mean, one.rating.low, one.rating.high, one.agent in rated)
            for one in self.table.rated
        ]

    def between(self, agent: str) -> tuple[Rated | None, Rated | None]:
        """The rungs just below and just above an agent's rating (``None`` past an end)."""
        rating = self.rating(agent).rating.mean
        rungs = [one for one in self.fit.rated if one.agent != agent]
        below = [one for one in rungs if one.rating.mean <= rating]
        above = [one for one in rungs if one.rating.mean > rating]
        return (below[0] if below else None), (above[-1] if above else None)

    def to_dict(self) -> dict[str, Any]:
        agents = []
        for one in self.agents:
            rated = self.rating(one.agent)
            below, above = self.between(one.agent)
            agents.append(
                {
                    "agent": one.agent,
                    "played": one.played,
                    "rating": rated.rating.mean,
                    "low": rated.rating.low,
                    "high": rated.rating.high,
                    "games": rated.games,
                    "score": rated.score,
                    "below": None if below is None else below.agent,
                    "above": None if above is None else above.agent,
                    "accuracy": one.accuracy,
                    "perfection": one.perfection,
                    "graded_positions": one.graded,
                    "positions": "all" if one.sample is None else one.sample,
                    "failed_moves": one.failed_moves,
                    "forfeits": one.forfeits,
                }
            )
        return {
            "game": self.rules.as_dict(),
            "ladder": {
                "name": self.ladder.name,
                "rungs": list(self.ladder.rungs),
                "games_per_pair": self.key.games,
                "seed": self.key.seed,
                "played": self.played,
                "ratings": self.fit.to_dict(),
            },
            "agents": agents,
            "table": self.table.to_dict(),
        }


def pairings_of(rows: Sequence[LadderRow], names: Sequence[str]) -> list[Pairing]:
    """The cached rows among ``names`` as one :class:`Pairing` per pair (colours kept)."""
    index = {name: i for i, name in enumerate(names)}
    by_pair: dict[tuple[int, int], list[list[int]]] = {}
    for row in rows:
        if row.x_agent not in index or row.o_agent not in index:
            continue
        x, o = index[row.x_agent], index[row.o_agent]
        a, b = min(x, o), max(x, o)
        first, total = by_pair.setdefault((a, b), [[0, 0, 0], [0, 0, 0]])
        results = (
            (row.x_wins, row.draws, row.o_wins) if x == a else (row.o_wins, row.draws, row.x_wins)
        )
        for i, count in enumerate(results):
            total[i] += count
            if x == a:
                first[i] += count
    return [
        Pairing(a, b, total[0], total[1], total[2], (first[0], first[1], first[2]))
        for (a, b), (first, total) in sorted(by_pair.items())
    ]


def rows_of(pairings: Sequence[Pairing], names: Sequence[str]) -> list[LadderRow]:
    """Pairings as cache rows, one per pair and colour."""
    rows = []
    for p in pairings:
        assert p.a_first is not None and p.b_first is not None  # played here: colours known
        rows.append(LadderRow(names[p.a], names[p.b], *p.a_first))
        rows.append(LadderRow(names[p.b], names[p.a], *p.b_first))
    return rows


def check_game(book: Any, rules: Rules) -> None:
    """The ladder's perfect rungs play every position: the game must be solved whole."""
    info = book.game(rules)
    if not info.is_complete:
        raise LadderError(
            f"{rules.name} in {book.describe()} is an opening book (to ply {info.book_depth}); "
            f"the ladder's perfect players need every position: solve it exhaustively"
        )


def rate_on_ladder(
    book: Any,
    db: str | None,
    rules: Rules,
    specs: Sequence[Any] = (),
    *,
    ladder: LadderSpec = STANDARD,
    games: int = GAMES,
    seed: int = 0,
    anchor: tuple[str, float] | None = None,
    bootstrap: int = 0,
    audit: bool = True,
    sample: int | None = 1000,
    cache: bool = True,
    jobs: int = 2,
    progress: Callable[[int, int], None] | None = None,
    estimate: Callable[[float | None], None] | None = None,
) -> LadderRatings:
    """The ladder's ratings on ``rules`` and those of ``specs`` against it: games not in the
    cache are played (the ladder's first, if needed) and cached, each batch in one transaction.
    An agent is a spec string, or a maker made in a Python session (``ttt.rate``), whose
    games are played each time and never cached. Games are seeded by what each agent is
    (:func:`agents.identity.identity`), not by how its spec is spelled.

    ``audit``: also audit each agent in positions mode (every position, or ``sample`` of them,
    seeded with ``seed``). ``cache=False`` plays what the cache lacks without storing it (a
    book that cannot be written). ``progress(done, total)`` counts the games played now;
    ``estimate(seconds)``, called before it, says how long the rest should take, each game
    weighted by the cost of its pair measured so far (:mod:`agents.eta`; ``None``: not yet
    known).
    """
    check_game(book, rules)
    makers = _makers(specs, db)
    rungs = list(ladder.rungs)
    if anchor is not None and anchor[0] not in rungs:
        known = ", ".join(rungs)
        raise LadderError(
            f"--anchor {anchor[0]} is no rung of the ladder {ladder.name}; rungs: {known}"
        )
    key = LadderKey(ladder.name, games, seed)
    cached = read_rows(book, rules, key)
    ladder_rows = _ladder_rows(book, rules, ladder, key, cached)
    plan = _plan(makers, rungs, cached, not ladder_rows)
    now = _GamesNow(book, db, rules, key, makers, plan, cache, jobs, progress, estimate)
    played = 0
    if not ladder_rows:
        ladder_rows, played = now.ladder(rungs)
    fit = rate(
        pairings_of(ladder_rows, rungs), rungs, anchor=anchor, bootstrap=bootstrap, seed=seed
    )
    truth = Truth(book, rules) if audit and makers else None
    results, games_of = [], []
    for spec in makers:
        rating, own = _rated_agent(now, spec, rungs, cached, truth, sample, seed, jobs)
        results.append(rating)
        if own is not None:
            games_of.append((spec, pairings_of(own, [*rungs, rated_name(own, rungs)])))
    return LadderRatings(
        rules, ladder, key, fit, extend(fit, games_of), played, tuple(results), book=book.describe()
    )


def _makers(specs: Sequence[Any], db: str | None) -> dict[str, Any]:
    """What makes each agent, by the name the tables give it: a spec string's maker, or the
    maker made in a Python session (named by its spec, never cached: its code may change)."""
    makers = {}
    for agent in specs:
        if isinstance(agent, str):
            parse_spec(agent)
            makers[agent] = AgentMaker(agent, db)
        else:
            makers[agent.spec] = agent
    return makers


def _plan(
    makers: dict[str, Any], rungs: list[str], cached: Sequence[LadderRow], ladder: bool
) -> list[tuple[str, str]]:
    """The pairs that play now, in order: the ladder's own (when ``ladder``), then each agent
    not a rung against each rung, unless its games are cached (and may be)."""
    plan = list(itertools.combinations(rungs, 2)) if ladder else []
    cached_agents = {row.rated for row in cached}
    new_agents = [
        spec
        for spec in makers
        if spec not in rungs and _stored_as(makers[spec]) not in cached_agents
    ]
    return plan + [(spec, rung) for spec in new_agents for rung in rungs]


def _stored_as(maker: Any) -> str | None:
    """The name a rated agent's games are cached under: what it runs (an edited file is
    another agent), found again however its spec is spelled; ``None`` for one never cached."""
    return identity(maker) if _cacheable(maker) else None


def _ladder_rows(
    book: Any, rules: Rules, ladder: LadderSpec, key: LadderKey, cached: Sequence[LadderRow]
) -> list[LadderRow]:
    """The ladder's own games among the cached rows: none, or one row per pair and colour."""
    rows = [row for row in cached if row.rated == LADDER]
    expected = len(ladder.rungs) * (len(ladder.rungs) - 1)
    if rows and len(rows) != expected:
        raise book.damaged(
            f"its cached ladder {ladder.name} of {rules.name} has {len(rows)} rows of {expected}",
            rules,
        )
    return rows


def _rated_agent(
    now: _GamesNow,
    spec: str,
    rungs: list[str],
    cached: Sequence[LadderRow],
    truth: Truth | None,
    sample: int | None,
    seed: int,
    jobs: int,
) -> tuple[AgentRating, list[LadderRow] | None]:
    """One agent against the rungs: its games from the cache or played now (``None`` for a
    rung, whose games are the ladder's), and its audit when there is a ``truth``."""
    played, forfeits, own = 0, None, None
    if spec not in rungs:
        name = _stored_as(now.makers[spec])
        own = [row for row in cached if name is not None and row.rated == name]
        if not own:
            row_name = spec if name is None else _row_name(spec, name)
            pairs = [(len(rungs), k) for k in range(len(rungs))]
            own, forfeits = now.play([*rungs, spec], pairs, row_name)
            if name is not None:
                own = now.stored(name, [*own, LadderRow(row_name, NO_AGENT, forfeits, 0, 0)])
            played = len(rungs) * now.key.games
        else:
            forfeits = forfeits_of(own)
    if truth is None:
        return AgentRating(spec, played, sample=sample, forfeits=forfeits), own
    summary = evaluate(
        now.makers[spec], truth, sample=sample, seed=seed, jobs=jobs, worst_moves=0
    ).summary
    rating = AgentRating(
        spec,
        played,
        summary.accuracy,
        summary.perfection,
        summary.graded + summary.failed,
        sample,
        forfeits,
        summary.failures_total,
    )
    return rating, own


class _GamesNow:
    """The games a rating plays now (``plan``: one pair of agents per ``key.games`` games, in
    the order played), counted for the progress and the estimate of the time left, and cached
    a batch at a time."""

    def __init__(
        self,
        book: Any,
        db: str | None,
        rules: Rules,
        key: LadderKey,
        makers: dict[str, Any],
        plan: list[tuple[str, str]],
        cache: bool,
        jobs: int,
        progress: Callable[[int, int], None] | None,
        estimate: Callable[[float | None], None] | None,
    ) -> None:
        self.book, self.db, self.rules, self.key, self.makers = book, db, rules, key, makers
        self.cache, self.jobs = cache, jobs
        self.progress, self.estimate = progress, estimate
        self.clock = _Clock([pair for pair in plan for _ in range(key.games)])
        self.total = key.games * len(plan)
        self.done = 0

    def _counting(self, finished: int, _total: int) -> None:
        if self.estimate is not None:
            self.estimate(self.clock.seconds_left(self.done + finished))
        if self.progress is not None:
            self.progress(self.done + finished, self.total)

    def play(
        self, names: list[str], pairs: list[tuple[int, int]], stored_as: str | None = None
    ) -> tuple[list[LadderRow], int]:
        """The pairs' games as cache rows, and the games the last name forfeited; in the rows,
        the last name is ``stored_as`` where it is given."""
        self.clock.last = time.perf_counter()  # what came between (a fit, an audit) is no game's
        players = [self.makers.get(name) or AgentMaker(name, self.db) for name in names]
        pairings = play_pairs(
            players,
            self.rules,
            pairs,
            self.key.games,
            seed=self.key.seed,
            names=[identity(player) for player in players],
            salt=SALT,
            book=self.book,
            jobs=self.jobs,
            progress=self._counting,
        )
        self.done += len(pairs) * self.key.games
        last = len(names) - 1
        forfeits = sum(p.a_forfeits if p.a == last else p.b_forfeits for p in pairings)
        return rows_of(pairings, [*names[:last], stored_as or names[last]]), forfeits

    def ladder(self, rungs: list[str]) -> tuple[list[LadderRow], int]:
        """The ladder's own games, every pair of rungs, played and cached; and their number."""
        pairs = list(itertools.combinations(range(len(rungs)), 2))
        return self.stored(LADDER, self.play(rungs, pairs)[0]), len(pairs) * self.key.games

    def stored(self, rated: str, rows: list[LadderRow]) -> list[LadderRow]:
        """``rated``'s rows played now, cached (unless the book cannot be written): those of
        another process when it cached the same games first."""
        if self.cache and not write_batch(self.book, self.rules, self.key, rated, rows):
            return [row for row in read_rows(self.book, self.rules, self.key) if row.rated == rated]
        return rows


class _Clock:
    """The games to play now, in the order they are played (one pair of agents per game), and
    the wall time each took, from the progress of the games: what the time left is estimated
    from."""

    def __init__(self, order: Sequence[tuple[str, str]]) -> None:
        self.order = list(order)
        self.finished: dict[tuple[str, str], tuple[int, float]] = {}
        self.done = 0
        self.last = time.perf_counter()

    def seconds_left(self, done: int) -> float | None:
        now = time.perf_counter()
        if done > self.done:  # the time since the last report, shared by the games it finished
            share = (now - self.last) / (done - self.done)
            for pair in self.order[self.done : done]:
                games, seconds = self.finished.get(pair, (0, 0.0))
                self.finished[pair] = (games + 1, seconds + share)
            self.done, self.last = done, now
        remaining = Counter(self.order[done:])
        return seconds_left(self.finished, remaining)


def rated_name(rows: Sequence[LadderRow], rungs: Sequence[str]) -> str:
    """The name a rated agent's cached games give it (its spec when they were played)."""
    for row in rows:
        for name in (row.x_agent, row.o_agent):
            if name not in rungs and name != NO_AGENT:
                return name
    return ""


def _row_name(spec: str, stored: str) -> str:
    """The name a rated agent's cached rows give it: its spec, and the code it ran where that
    is a file's (a spec's games before and after an edit are two agents, each its rows)."""
    code = re.search(r"sha256:([0-9a-f]{8})", stored)
    return spec if code is None else f"{spec} (code {code[1]})"


def _cacheable(maker: Any) -> bool:
    """Whether an agent's games may be cached under its name: one named by a spec (not one
    made in a Python session, whose code may change under the same name)."""
    return maker is None or isinstance(maker, AgentMaker)


def open_ladder_book(db: str) -> Any:
    """The book, opened so that the ladder's games can be cached in it: a book of an older
    schema is upgraded (its games kept), as a write by ``ttt-solve`` would. A book that
    cannot be written is only read (its games are then played but not cached)."""
    import os

    from ttt_solve.book.reader import open_book
    from ttt_solve.book.urls import sqlite_file, unwritable_reason

    path = sqlite_file(db)
    exists = path is None or os.path.exists(path)
    return open_book(db, create=exists and unwritable_reason(db) is None)


def from_cache(book: Any, rules: Rules) -> list[LadderRatings]:
    """The ratings of every ladder cached for a game whose rungs are known
    (:data:`LADDERS`), with the agents rated on it: from the book alone, nothing played."""
    out = []
    for key, agents in cached_ladders(book, rules):
        ladder = LADDERS.get(key.ladder)
        if ladder is None:
            continue
        rows = read_rows(book, rules, key)
        rungs = list(ladder.rungs)
        ladder_rows = [row for row in rows if row.rated == LADDER]
        if len(ladder_rows) != len(rungs) * (len(rungs) - 1):
            raise book.damaged(
                f"its cached ladder {ladder.name} of {rules.name} has {len(ladder_rows)} rows",
                rules,
            )
        fit = rate(pairings_of(ladder_rows, rungs), rungs, seed=key.seed)
        batches = [[row for row in rows if row.rated == agent] for agent in agents]
        names = [rated_name(batch, rungs) for batch in batches]
        games_of = [
            (name, pairings_of(batch, [*rungs, name])) for name, batch in zip(names, batches)
        ]
        table = extend(fit, games_of)
        rated = tuple(
            AgentRating(name, 0, forfeits=forfeits_of(batch)) for name, batch in zip(names, batches)
        )
        out.append(LadderRatings(rules, ladder, key, fit, table, 0, rated))
    return out
