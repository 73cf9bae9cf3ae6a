"""Ratings on the Elo scale from game results, with draws and the first move modelled.

A pure function of the results of a round robin (:class:`agents.tournament.Pairing` s, which
say how each pair did with each colour): :func:`rate` fits **Davidson's model** (Bradley-Terry
with draws) with a **first-move advantage**. With ratings ``r`` in Elo and ``kappa = ln 10 /
400``, a game between X and O has

    z = kappa * (r_X + h - r_O) / 2
    P(X wins) : P(draw) : P(O wins) = exp(z) : nu : exp(-z)

so among decisive games X wins with the Elo expectation ``1 / (1 + 10 ** (-(r_X + h - r_O) /
400))``: 400 points are odds of 10 to 1. ``h`` (Elo) is what moving first is worth and ``nu``
how drawish the game is; both are fitted with the ratings. Games whose colours are not known
count without ``h``.

The fit maximises the log-likelihood plus a prior: BayesElo's **virtual draws**, ``prior``
(default 2) between each pair of agents that met, half with each colour, which keeps ratings
finite when one agent won every game against another; and a wide normal prior on ``ln nu``
(standard deviation 3), which matters only when no game was decisive. The log-posterior is
concave; Newton's method on its exact gradient and Hessian (NumPy, a few iterations for a few
dozen agents) finds its maximum.

**Goodness of fit**: Pearson's X² of the fitted model over the cells of the games (each pair
and colour: X's wins, draws and O's wins against what the model expects), on two degrees of
freedom a cell less the parameters fitted, with its p-value (:class:`Fit`).

**Intervals**, 95%: from the curvature of the log-posterior at its maximum (the normal
approximation BayesElo reports) when the model fits the games; from :data:`RESAMPLES` refits
on games resampled within each pair and colour (seeded), as the 2.5th and 97.5th percentiles,
when it misfits them (p < :data:`REJECTED_P`), since the curvature then understates what the
games allow; or from ``bootstrap=N`` such refits when asked. Either way the intervals carry the
uncertainty of the first-move advantage and ``nu`` (refitted in each resample; in the
curvature's covariance), and the likelihood of superiority of each agent over the next comes
from the same covariance.

**Anchor**: ratings are differences, so one number is fixed: an agent's rating (``random`` at
0 by default, when it plays), or else the mean rating at 0. An interval is the uncertainty of
the difference from the anchor, which has none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ttt_solve.agents.intervals import (
    Interval,
    chi_square_tail,
    normal_cdf,
    normal_interval,
    percentile_interval,
)
from ttt_solve.agents.tournament import Pairing, standings
from ttt_solve.errors import TttError

KAPPA = math.log(10) / 400
"""Natural-log units per Elo point."""

PRIOR_DRAWS = 2.0
"""Virtual draws per pair of agents that met (BayesElo's default prior)."""

LOG_NU_SD = 3.0
"""Standard deviation of the normal prior on ln(nu), centred on 0 (nu = 1)."""

DEFAULT_ANCHOR = ("random", 0.0)

REJECTED_P = 0.01
"""Below this p-value of the goodness of fit, the model misfits the games: bootstrap intervals."""

RESAMPLES = 200
"""The bootstrap's resamples when the model misfits and no number was asked for."""

TIE_TOLERANCE = 1e-9
"""A simulated X² within this share of the games' own is as large as theirs (a tie)."""


class RatingError(TttError, ValueError):
    """Results that cannot be rated, or an anchor that names no agent."""


class Fit(NamedTuple):
    """Pearson's goodness of fit of the model to the games: ``statistic`` X² summed over the
    ``cells`` (pair and colour) that had games, on ``degrees`` of freedom (two a cell less the
    parameters fitted), and the chance ``p_value`` of an X² as large if the model were true."""

    statistic: float
    degrees: int
    p_value: float
    cells: int
    simulated: int = 0  # the p-value: 0 from the chi-square distribution, else simulations

    @property
    def rejected(self) -> bool:
        return self.p_value < REJECTED_P

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": "pearson",
            "statistic": self.statistic,
            "degrees_of_freedom": self.degrees,
            "p_value": self.p_value,
            "cells": self.cells,
            "p_value_from": f"{self.simulated} simulations" if self.simulated else "chi-square",
            "rejected": self.rejected,
        }


class Rated(NamedTuple):
    """One agent's rating: its index among the entrants, its label, the rating with its
    95% interval, its games and points (a win 1, a draw 1/2), and the likelihood that it is
    stronger than the agent rated next below it (``None`` for the last)."""

    entrant: int
    agent: str
    rating: Interval
    games: int
    points: float
    stronger_than_next: float | None

    @property
    def score(self) -> float:
        return self.points / self.games if self.games else 0.0


@dataclass(frozen=True)
class Ratings:
    """The fit: agents best first, the first-move advantage and draw parameter, the anchor,
    the intervals' method and why it was chosen, and the model's goodness of fit."""

    rated: tuple[Rated, ...]
    first_move: Interval | None  # Elo; None when no game's colours were known
    nu: float
    anchor: str  # the agent fixed at anchor_rating, or "" for the mean
    anchor_rating: float
    prior_draws: float
    method: str  # "likelihood" or "bootstrap"
    resamples: int = 0
    seed: int | None = None
    names: tuple[str, ...] = ()  # by entrant index
    # of the anchored ratings by entrant, then the first-move advantage and ln nu
    covariance: tuple[tuple[float, ...], ...] = ()
    goodness: Fit | None = None  # None: no degree of freedom left to test
    reason: str = ""  # why these intervals

    @property
    def games(self) -> int:
        return sum(one.games for one in self.rated) // 2

    def of(self, agent: str) -> Rated:
        """The rating of the agent labelled ``agent``."""
        for one in self.rated:
            if one.agent == agent:
                return one
        raise KeyError(agent)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: the command line, the web and notebooks alike."""

        def interval(value: Interval) -> dict[str, float]:
            return {"rating": value.mean, "low": value.low, "high": value.high}

        return {
            "model": "davidson",
            "scale": "elo",
            "anchor": {"agent": self.anchor or None, "rating": self.anchor_rating},
            "intervals": self.method,
            "intervals_reason": self.reason,
            "goodness_of_fit": None if self.goodness is None else self.goodness.to_dict(),
            "resamples": self.resamples,
            "seed": self.seed,
            "prior_draws": self.prior_draws,
            "games": self.games,
            "first_move": None if self.first_move is None else interval(self.first_move),
            "nu": self.nu,
            "ratings": [
                {
                    "rank": rank,
                    "agent": one.agent,
                    **interval(one.rating),
                    "games": one.games,
                    "points": one.points,
                    "score": one.score,
                    "stronger_than_next": one.stronger_than_next,
                }
                for rank, one in enumerate(self.rated, 1)
            ],
        }


def parse_anchor(text: str) -> tuple[str, float]:
    """``SPEC=RATING`` (the last ``=`` splits: ``perfect:error=0.1=400``) -> (spec, rating)."""
    spec, equals, number = str(text).strip().rpartition("=")
    try:
        rating = float(number)
    except ValueError:
        rating = math.nan
    if not equals or not spec.strip() or not math.isfinite(rating):
        raise RatingError(f"--anchor {text!r} is not SPEC=RATING (e.g. --anchor random=0)")
    return spec.strip(), rating


class _Games(NamedTuple):
    """The results as arrays, one row per pair and colour: X's entrant, O's, whether the
    colours are known, and X's wins, the draws and O's wins (real games, then with the
    prior's virtual draws)."""

    x: np.ndarray
    o: np.ndarray
    home: np.ndarray
    counts: np.ndarray  # (rows, 3) of real games
    prior: np.ndarray  # (rows, 3): the virtual draws


def _games(pairings: Sequence[Pairing], prior_draws: float) -> _Games:
    x, o, home, counts, prior = [], [], [], [], []
    for p in pairings:
        if not p.games:
            continue
        if p.a_first is None or p.b_first is None:
            rows = [(p.a, p.b, 0.0, (p.a_wins, p.draws, p.b_wins), prior_draws)]
        else:
            rows = [
                (p.a, p.b, 1.0, p.a_first, prior_draws / 2),
                (p.b, p.a, 1.0, p.b_first, prior_draws / 2),
            ]
        for first, second, known, results, virtual in rows:
            x.append(first)
            o.append(second)
            home.append(known)
            counts.append(results)
            prior.append((0.0, virtual, 0.0))
    return _Games(
        np.array(x, np.int64),
        np.array(o, np.int64),
        np.array(home),
        np.array(counts, np.float64).reshape(-1, 3),
        np.array(prior, np.float64).reshape(-1, 3),
    )


def _check_connected(games: _Games, entrants: int, names: Sequence[str]) -> None:
    """Ratings compare agents through the games between them: every agent must be linked to
    every other by a chain of games."""
    reached, frontier = {0}, [0]
    neighbours: dict[int, set[int]] = {i: set() for i in range(entrants)}
    for a, b in zip(games.x.tolist(), games.o.tolist()):
        neighbours[a].add(b)
        neighbours[b].add(a)
    while frontier:
        for other in neighbours[frontier.pop()] - reached:
            reached.add(other)
            frontier.append(other)
    if len(reached) < entrants:
        apart = [names[i] for i in range(entrants) if i not in reached]
        raise RatingError(
            f"the games do not link every agent: {', '.join(apart)} met {names[0]} neither "
            f"directly nor through others; ratings compare only agents linked by games"
        )


def _z_gradient(games: _Games, size: int) -> np.ndarray:
    """z = KAPPA / 2 * (r_x - r_o + h * home) as a matrix on theta: one row per pair and
    colour."""
    n = size - 2
    rows = np.arange(len(games.x))
    dz = np.zeros((len(games.x), size))
    dz[rows, games.x] += KAPPA / 2
    dz[rows, games.o] -= KAPPA / 2
    dz[:, n] = KAPPA / 2 * games.home
    return dz


def _probabilities(
    z: np.ndarray, c: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """X's win, the draw and O's win by row, and the log of the model's normaliser."""
    top = np.maximum(np.abs(z), c)  # for exp without overflow
    ew, el, ed = np.exp(z - top), np.exp(-z - top), np.exp(c - top)
    total = ew + el + ed
    return ew / total, ed / total, el / total, top + np.log(total)


def _pearson(games: _Games, counts: np.ndarray, theta: np.ndarray) -> float:
    """Pearson's X² of the model at ``theta`` over the cells of ``counts`` with games."""
    played = counts.sum(axis=1)
    expected = played[:, None] * np.stack(_expected_shares(games, theta), axis=1)
    terms = np.where(expected > 0, (counts - expected) ** 2 / np.maximum(expected, 1e-300), 0.0)
    return float(terms[played > 0].sum())


def _expected_shares(games: _Games, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    z = _z_gradient(games, len(theta)) @ theta
    pw, pd, pl, _ = _probabilities(z, float(theta[-1]))
    return pw, pd, pl


def goodness_of_fit(
    games: _Games, theta: np.ndarray, free: np.ndarray, seed: int = 0
) -> Fit | None:
    """Pearson's X² of the model fitted at ``theta`` (its ``free`` parameters fitted) over the
    cells with games, and its p-value (``None`` when no degree of freedom is left).

    The chi-square distribution is X²'s only when the cells are well filled (Cochran's rule:
    every expected count at least 1, four in five at least 5); otherwise, as with a few games
    a pair or an agent that almost never wins, the p-value is simulated: the share of
    :data:`RESAMPLES` sets of games drawn from the fitted model (seeded), refitted, whose X²
    is as large."""
    played = games.counts.sum(axis=1)
    cells = played > 0
    degrees = 2 * int(cells.sum()) - int(free.sum())
    if degrees < 1:
        return None
    statistic = _pearson(games, games.counts, theta)
    shares = np.stack(_expected_shares(games, theta), axis=1)
    expected = (played[:, None] * shares)[cells]
    if expected.min() >= 1 and (expected >= 5).mean() >= 0.8:
        return Fit(statistic, degrees, chi_square_tail(statistic, degrees), int(cells.sum()))
    generator = np.random.default_rng(seed)
    # A resample that draws the games played refits to the same X² but for the last bits,
    # which fall either way from one processor to another: it counts as as large, everywhere.
    tie = statistic * (1 - TIE_TOLERANCE)
    larger = 0
    for _ in range(RESAMPLES):
        counts = _draw(played, shares, generator)
        refitted, _ = _fit(games, counts, theta, free)
        larger += _pearson(games, counts, refitted) >= tie
    return Fit(statistic, degrees, (larger + 1) / (RESAMPLES + 1), int(cells.sum()), RESAMPLES)


def _fit(
    games: _Games, counts: np.ndarray, theta: np.ndarray, free: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The maximum of the log-posterior over the ``free`` parameters of ``theta`` (the others
    stay as given): ``theta = (the entrants' ratings, h, ln nu)``, ratings and h in Elo.
    Returns theta there and the Hessian of the log-posterior (every parameter).

    ``counts`` are the results to fit (the real games, or a bootstrap's resample); the prior's
    virtual draws are added here.
    """
    size = len(theta)
    n = size - 2
    data = counts + games.prior
    wins, draws, losses = data[:, 0], data[:, 1], data[:, 2]
    played = data.sum(axis=1)
    dz = _z_gradient(games, size)

    def evaluate(theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        z = dz @ theta
        c = theta[n + 1]
        pw, pd, pl, log_total = _probabilities(z, c)
        log_posterior = float(
            np.sum(wins * z - losses * z + draws * c - played * log_total)
            - c * c / (2 * LOG_NU_SD**2)
        )
        g_z = wins - losses - played * (pw - pl)
        g_c = draws - played * pd
        gradient = dz.T @ g_z
        gradient[n + 1] += g_c.sum() - c / LOG_NU_SD**2
        h_zz = -played * ((pw + pl) - (pw - pl) ** 2)
        h_cc = -played * pd * (1 - pd)
        h_zc = played * (pw - pl) * pd
        hessian = dz.T @ (h_zz[:, None] * dz)
        cross = dz.T @ h_zc
        hessian[:, n + 1] += cross
        hessian[n + 1, :] += cross
        hessian[n + 1, n + 1] += h_cc.sum() - 1 / LOG_NU_SD**2
        return log_posterior, gradient, hessian

    theta = theta.astype(np.float64)
    value, gradient, hessian = evaluate(theta)
    for _ in range(200):
        step = np.zeros(size)
        step[free] = np.linalg.solve(-hessian[np.ix_(free, free)], gradient[free])
        scale = 1.0
        while True:  # concave: a Newton step that does not help is too long
            trial = theta + scale * step
            trial_value, trial_gradient, trial_hessian = evaluate(trial)
            if trial_value >= value - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        theta, value, gradient, hessian = trial, trial_value, trial_gradient, trial_hessian
        if np.max(np.abs(scale * step)) < 1e-9:
            break
    return theta, hessian


def _covariance(hessian: np.ndarray, free: np.ndarray) -> np.ndarray:
    """The inverse of the negative Hessian over the free parameters (zero where fixed)."""
    covariance = np.zeros_like(hessian)
    covariance[np.ix_(free, free)] = np.linalg.inv(-hessian[np.ix_(free, free)])
    return covariance


def _anchoring(
    names: Sequence[str], anchor: tuple[str, float] | None
) -> tuple[np.ndarray, str, float]:
    """The matrix that turns fitted ratings (entrant 0 at 0) into anchored ones, with the
    offset's agent and rating: the agent named by ``anchor``, else ``random`` if it plays,
    else the mean."""
    n = len(names)
    wanted = anchor if anchor is not None else DEFAULT_ANCHOR
    if wanted[0] in names:
        index = list(names).index(wanted[0])
        matrix = np.eye(n)
        matrix[:, index] -= 1
        return matrix, wanted[0], wanted[1]
    if anchor is not None:
        raise RatingError(
            f"--anchor {anchor[0]}={anchor[1]:g} names no agent of these games; agents: "
            + ", ".join(names)
        )
    return np.eye(n) - np.full((n, n), 1 / n), "", 0.0


def _stronger(ratings: Sequence[float], covariance: np.ndarray, i: int, j: int) -> float:
    """The likelihood that entrant ``i`` is stronger than ``j``: the normal approximation
    of their difference, with its variance from the covariance."""
    variance = covariance[i, i] + covariance[j, j] - 2 * covariance[i, j]
    gap = ratings[i] - ratings[j]
    if variance <= 1e-12:
        return 0.5 if gap == 0 else float(gap > 0)
    return normal_cdf(float(gap / math.sqrt(variance)))


def _table(
    names: Sequence[str],
    ratings: Sequence[float],
    intervals: Sequence[Interval],
    covariance: np.ndarray,
    totals: Sequence[tuple[int, float]],
) -> tuple[Rated, ...]:
    """The agents best first, each with the likelihood of being stronger than the next."""
    n = len(names)
    order = sorted(range(n), key=lambda i: (-ratings[i], i))
    rated = []
    for place, i in enumerate(order):
        below = order[place + 1] if place + 1 < n else None
        rated.append(
            Rated(
                i,
                names[i],
                intervals[i],
                totals[i][0],
                totals[i][1],
                None if below is None else _stronger(ratings, covariance, i, below),
            )
        )
    return tuple(rated)


def _wider(one: Interval, other: Interval) -> Interval:
    """The estimate of ``one``, with the interval that holds both."""
    return Interval(one.mean, min(one.low, other.low), max(one.high, other.high))


def _frozen(matrix: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(v) for v in row) for row in matrix)


def rate(
    pairings: Sequence[Pairing],
    names: Sequence[str],
    *,
    anchor: tuple[str, float] | None = None,
    prior_draws: float = PRIOR_DRAWS,
    bootstrap: int = 0,
    seed: int = 0,
) -> Ratings:
    """Ratings of the entrants ``names`` (labels, by entrant index) from the round robin's
    ``pairings``, anchored (``(agent label, rating)``, default ``random`` at 0), with 95%
    intervals: from ``bootstrap`` resamples seeded with ``seed`` when asked; else from the
    likelihood when the model fits the games, from :data:`RESAMPLES` resamples when it
    misfits them."""
    n = len(names)
    games = _checked_games(pairings, names, prior_draws)
    matrix, anchor_name, anchor_rating = _anchoring(names, anchor)
    free = np.ones(n + 2, bool)
    free[0] = False  # entrant 0 is the reference of the fit; the anchor is applied after
    known_colours = bool(games.home.any())
    free[n] = known_colours  # no colours known: no first-move advantage to fit
    theta, hessian = _fit(games, games.counts, np.zeros(n + 2), free)
    goodness = goodness_of_fit(games, theta, free, seed)
    ratings = [float(value) for value in matrix @ theta[:n] + anchor_rating]
    # Anchored ratings, then h and ln nu, as a linear map of theta.
    transform = np.eye(n + 2)
    transform[:n, :n] = matrix
    resamples, reason = _interval_method(bootstrap, goodness)
    covariance = transform @ _covariance(hessian, free) @ transform.T
    _, intervals, first_move = _curvature(covariance, [*ratings, float(theta[n])], known_colours)
    if resamples > 0:
        offset = np.r_[np.full(n, anchor_rating), 0.0, 0.0]
        table = _bootstrap(games, theta, free, transform, offset, resamples, seed)
        booted = _spread(table, [*ratings, float(theta[n])], known_colours)
        if bootstrap > 0:  # asked for: the bootstrap's alone
            covariance, intervals, first_move = booted
        else:
            covariance, intervals, first_move = _wider_of(
                (covariance, intervals, first_move), booted
            )
            reason += "; each interval is the wider of the bootstrap's and the curvature's"
    totals = {s.entrant: (s.games, s.points) for s in standings(pairings, n)}
    return Ratings(
        _table(names, ratings, intervals, covariance, [totals[i] for i in range(n)]),
        first_move,
        math.exp(float(theta[n + 1])),
        anchor_name,
        anchor_rating,
        prior_draws,
        "bootstrap" if resamples > 0 else "likelihood",
        resamples,
        seed if resamples > 0 else None,
        tuple(names),
        _frozen(covariance),
        goodness,
        reason,
    )


def _checked_games(pairings: Sequence[Pairing], names: Sequence[str], prior_draws: float) -> _Games:
    """The games of a fit, refused where no fit can be made: fewer than two agents, a prior
    of fewer than no draws, or agents in groups that never met."""
    if len(names) < 2:
        raise RatingError("ratings need at least two agents")
    if prior_draws < 0:
        raise RatingError(f"the prior's virtual draws must be >= 0, got {prior_draws}")
    games = _games(pairings, prior_draws)
    _check_connected(games, len(names), names)
    return games


def _interval_method(bootstrap: int, goodness: Fit | None) -> tuple[int, str]:
    """How a fit's intervals are found, and why: ``bootstrap`` resamples when asked; else
    :data:`RESAMPLES` of them where the model misfits the games; else none (the likelihood's
    curvature)."""
    if bootstrap > 0:
        return bootstrap, f"asked for ({bootstrap} resamples)"
    if goodness is not None and goodness.rejected:
        return RESAMPLES, (
            f"the model misfits the games (p < {REJECTED_P:g}), so the likelihood's curvature "
            f"would understate their uncertainty"
        )
    if goodness is not None:
        return bootstrap, "the model fits the games"
    return bootstrap, "no degree of freedom left to test the model"


def _bootstrap(
    games: _Games,
    theta: np.ndarray,
    free: np.ndarray,
    transform: np.ndarray,
    offset: np.ndarray,
    resamples: int,
    seed: int,
) -> np.ndarray:
    """The fit redone on ``resamples`` resamples of the games (from a generator seeded with
    ``seed``), a row each: its parameters through ``transform``, plus ``offset``."""
    generator = np.random.default_rng(seed)
    samples = []
    for _ in range(resamples):
        fitted, _ = _fit(games, _resample(games, generator), theta, free)
        samples.append(transform @ fitted + offset)
    return np.array(samples)


Spread = tuple[np.ndarray, list[Interval], Interval | None]
"""Ratings' covariance, their intervals and the first move's."""


def _curvature(covariance: np.ndarray, estimates: list[float], known_colours: bool) -> Spread:
    """The normal intervals of the ``estimates`` (the ratings, then the first move's) from the
    likelihood's curvature, their ``covariance``."""
    n = len(estimates) - 1
    intervals = [
        normal_interval(estimates[i], math.sqrt(max(covariance[i, i], 0.0))) for i in range(n)
    ]
    first = normal_interval(estimates[n], math.sqrt(covariance[n, n])) if known_colours else None
    return covariance, intervals, first


def _spread(table: np.ndarray, estimates: list[float], known_colours: bool) -> Spread:
    """The spread of the refits in ``table`` (a row each): their covariance, and the
    percentile intervals around the ``estimates`` (the ratings, then the first move's)."""
    n = len(estimates) - 1
    intervals = [percentile_interval(estimates[i], table[:, i].tolist()) for i in range(n)]
    first = percentile_interval(estimates[n], table[:, n].tolist()) if known_colours else None
    return np.atleast_2d(np.cov(table, rowvar=False)), intervals, first


def _wider_of(curvature: Spread, bootstrap: Spread) -> Spread:
    """Each interval the wider of the curvature's and the bootstrap's, and the larger
    covariance: a bootstrap of few games a cell can be narrower than the model's curvature (a
    cell of two wins resamples as two wins), and a misfit never narrows an interval."""
    covariance, intervals, first_move = curvature
    resampled, boot, boot_first = bootstrap
    n = len(intervals)
    intervals = [_wider(one, other) for one, other in zip(intervals, boot)]
    if first_move is not None and boot_first is not None:
        first_move = _wider(first_move, boot_first)
    if np.trace(resampled[:n, :n]) > np.trace(covariance[:n, :n]):
        covariance = resampled
    return covariance, intervals, first_move


def extend(ladder: Ratings, agents: Sequence[tuple[str, Sequence[Pairing]]]) -> Ratings:
    """The ladder's ratings with agents rated against it: each agent's rating is fitted to
    its own games against the ladder's agents (``pairings`` with the ladder's entrants by
    their indexes and the agent as one more), **their ratings, the first-move advantage and
    the draw parameter held** at the ladder's. So an agent's rating moves nothing else.

    Its interval adds to the uncertainty of its own games (from the curvature, or from
    resamples of its games when the ladder's intervals are a bootstrap's) that of the
    ladder's ratings, first-move advantage and ``nu`` it was measured against (their
    covariance, carried through the fit's sensitivity to each), so that it compares with the
    ladder's intervals, which are relative to the same anchor.
    """
    names = list(ladder.names)
    n = len(names)
    base = np.array(ladder.covariance)
    held = n + 2  # the ladder's ratings, h and ln nu
    ladder_ratings = [0.0] * n
    for one in ladder.rated:
        ladder_ratings[one.entrant] = one.rating.mean
    first_move = ladder.first_move.mean if ladder.first_move is not None else 0.0
    all_names = names + [label for label, _ in agents]
    size = len(all_names)
    ratings = ladder_ratings + [0.0] * len(agents)
    gradients = np.zeros((len(agents), held))
    own = np.zeros(len(agents))
    by_entrant = sorted(ladder.rated, key=lambda one: one.entrant)
    totals = [(one.games, one.points) for one in by_entrant]
    generator = np.random.default_rng(ladder.seed)
    for index, (_, pairings) in enumerate(agents):
        ratings[n + index], gradients[index], own[index] = _fit_against(
            ladder, ladder_ratings, first_move, pairings, generator
        )
        standing = {s.entrant: s for s in standings(pairings, n + 1)}[n]
        totals.append((standing.games, standing.points))
    # Every rating by entrant, then h and ln nu; the agents' rows through their gradients.
    kept = [*range(n), size, size + 1]
    added = list(range(n, size))
    covariance = np.zeros((size + 2, size + 2))
    covariance[np.ix_(kept, kept)] = base
    covariance[np.ix_(added, kept)] = gradients @ base
    covariance[np.ix_(kept, added)] = (gradients @ base).T
    covariance[np.ix_(added, added)] = gradients @ base @ gradients.T + np.diag(own)
    intervals = [one.rating for one in by_entrant] + [
        normal_interval(ratings[i], math.sqrt(covariance[i, i])) for i in range(n, size)
    ]
    return Ratings(
        _table(all_names, ratings, intervals, covariance, totals),
        ladder.first_move,
        ladder.nu,
        ladder.anchor,
        ladder.anchor_rating,
        ladder.prior_draws,
        ladder.method,
        ladder.resamples,
        ladder.seed,
        tuple(all_names),
        _frozen(covariance),
        ladder.goodness,
        ladder.reason,
    )


def _fit_against(
    ladder: Ratings,
    ladder_ratings: list[float],
    first_move: float,
    pairings: Sequence[Pairing],
    generator: Any,
) -> tuple[float, np.ndarray, float]:
    """One agent's rating fitted to its games against the ladder, everything else held: the
    rating, its sensitivity to each held parameter (the ladder's ratings, h, ln nu), and the
    variance its own games give it (the curvature's, or the resamples' when the ladder's
    intervals are a bootstrap's)."""
    n = len(ladder_ratings)
    games = _games(pairings, ladder.prior_draws)
    theta = np.array([*ladder_ratings, 0.0, first_move, math.log(ladder.nu)])
    theta[n] = sum(ladder_ratings) / n  # a start inside the ladder
    free = np.zeros(n + 3, bool)
    free[n] = True
    fitted, hessian = _fit(games, games.counts, theta, free)
    others = [*range(n), n + 1, n + 2]
    gradient = -hessian[n, others] / hessian[n, n]
    own = 1 / -hessian[n, n]
    if ladder.method == "bootstrap" and ladder.resamples > 1:
        own = _resampled_variance(games, fitted, free, ladder.resamples, generator)
    return float(fitted[n]), gradient, own


def _resampled_variance(
    games: _Games, theta: np.ndarray, free: np.ndarray, resamples: int, generator: Any
) -> float:
    """The variance of the free parameter over refits on the games resampled within each
    pair and colour (the others held): its own games' share of an interval, without the
    model's word for it."""
    values = []
    for _ in range(resamples):
        fitted, _ = _fit(games, _resample(games, generator), theta, free)
        values.append(float(fitted[free][0]))
    return float(np.var(values, ddof=1))


def _resample(games: _Games, generator: Any) -> np.ndarray:
    """The games resampled within each pair and colour: as many, drawn from their shares."""
    played = games.counts.sum(axis=1).astype(np.int64)
    shares = games.counts / np.maximum(played, 1)[:, None]
    return _draw(played, shares, generator)


def _draw(played: np.ndarray, shares: np.ndarray, generator: Any) -> np.ndarray:
    """Games drawn for each pair and colour: ``played`` of them, with these shares.

    Each game is one uniform draw placed among the cumulative shares: NumPy keeps the stream of
    ``random()`` the same from version to version, not that of ``multinomial``, so a seeded
    p-value stays the same wherever it is computed."""
    rows = []
    for k, p in zip(played, shares):
        bounds = np.cumsum(p)[:-1]
        outcome = np.searchsorted(bounds, generator.random(int(k)), side="right")
        rows.append(np.bincount(outcome, minlength=3))
    return np.array(rows, np.float64).reshape(-1, 3)
