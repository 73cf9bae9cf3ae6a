"""The opponent of the single-agent environment, named by a spec string or given as a policy.

* ``perfect``: a best move of the truth (fastest win, slowest loss), ties broken at random;
* ``perfect:eps=E``: the trembling hand: with probability ``E`` a uniformly random legal move
  (which may happen to be best), otherwise a best move. (The project's agent
  ``perfect:error=P`` is another thing: with probability ``P`` a move that is *not* best.)
* ``rating:R``: the rung of the reference ladder whose rating is nearest ``R``, from the
  ladder cached in the book (``ttt rate`` plays and caches it);
* any other agent spec of the project (``heuristic``, ``mcts:iterations=100``,
  ``perfect:error=0.2``, ``py:...``; see docs/agents.md), played through its ``select_move``;
* a callable: a policy ``policy(observation) -> action`` that sees the board as the learner
  does (the dict of planes and mask), such as the learner's own earlier policy.

``perfect`` and ``perfect:eps`` read the truth (the book, or live search past it); agents read
the book where their spec asks for it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ttt_solve.agents.spec import AgentSpecError, make_agent
from ttt_solve.rl.aec import cell_of
from ttt_solve.rl.truth import Truth
from ttt_solve.solver.position import Position

Policy = Callable[[dict[str, np.ndarray]], Any]
"""A policy as the learner is one: an observation dict in, an action out."""


class Opponent:
    """Plays the other side: :meth:`move` gives a cell. Every random choice comes from
    ``rng``, which the environment reseeds at each reset."""

    name = "opponent"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def move(self, position: Position, observation: dict[str, np.ndarray]) -> int:
        raise NotImplementedError


class Trembling(Opponent):
    """A best move of the truth, or with probability ``eps`` a uniformly random legal move."""

    def __init__(self, rng: random.Random, truth: Truth, eps: float = 0.0) -> None:
        super().__init__(rng)
        if not 0 <= eps <= 1:
            raise AgentSpecError(f"perfect:eps={eps}: eps is a probability, from 0 to 1")
        self.truth = truth
        self.eps = eps
        self.name = f"perfect:eps={eps:g}" if eps else "perfect"

    def move(self, position: Position, observation: dict[str, np.ndarray]) -> int:
        if self.eps and self.rng.random() < self.eps:
            return self.rng.choice(position.legal_moves())
        return self.rng.choice(self.truth.standing(position).best)


class AgentOpponent(Opponent):
    """An agent of the project (its ``select_move``), built from its spec."""

    def __init__(self, rng: random.Random, spec: str, book: Any) -> None:
        super().__init__(rng)
        self.agent = make_agent(spec, rng, book)
        self.name = spec

    def move(self, position: Position, observation: dict[str, np.ndarray]) -> int:
        return self.agent.select_move(position)


class PolicyOpponent(Opponent):
    """A policy that sees the learner's observation and answers an action."""

    def __init__(self, rng: random.Random, policy: Policy) -> None:
        super().__init__(rng)
        self.policy = policy
        self.name = getattr(policy, "__qualname__", None) or repr(policy)

    def move(self, position: Position, observation: dict[str, np.ndarray]) -> int:
        """The cell of the policy's action, or -1 for an action off the board."""
        action = int(self.policy(observation))
        return cell_of(position.rules, action) if 0 <= action < position.rules.cells else -1


def nearest_rung(rungs: Sequence[tuple[str, float]], rating: float) -> str:
    """The rung (given as ``(spec, rating)``) whose rating is nearest ``rating``; the
    weaker of two equally near."""
    return min(rungs, key=lambda rung: (abs(rung[1] - rating), rung[1]))[0]


def rung_of_rating(truth: Truth, rating: float) -> str:
    """The spec of the ladder rung nearest ``rating`` in the ladder cached in the book."""
    from ttt_solve.agents.ladder import from_cache

    rules, book = truth.rules, truth.book
    cached = from_cache(book, rules) if book is not None else []
    if not cached:
        where = f"{book.describe()} has none" if book is not None else "no book was given"
        raise AgentSpecError(
            f"rating:{rating:g} needs the reference ladder of {rules.name} cached in a book, "
            f"and {where}: play it with ttt rate --size {rules.size} --win {rules.k} --db BOOK"
        )
    ladder = cached[0]
    return nearest_rung([(one.agent, one.rating.mean) for one in ladder.fit.rated], rating)


def make_opponent(spec: str | Policy, truth: Truth, rng: random.Random) -> Opponent:
    """The opponent that ``spec`` names (see the module's docstring)."""
    if callable(spec):
        return PolicyOpponent(rng, spec)
    text = str(spec).strip()
    name, _, rest = text.partition(":")
    if name.lower() == "perfect" and (not rest or rest.strip().lower().startswith("eps=")):
        eps = 0.0
        if rest:
            raw = rest.strip()[4:]
            try:
                eps = float(raw)
            except ValueError:
                raise AgentSpecError(
                    f"perfect:eps={raw!r} in {text!r}: expected a number"
                ) from None
        return Trembling(rng, truth, eps)
    if name.lower() == "rating":
        try:
            rating = float(rest)
        except ValueError:
            rating = math.nan
        if not math.isfinite(rating):
            raise AgentSpecError(
                f"{text!r}: give a rating, a finite number on the ladder's scale, e.g. rating:1200"
            )
        return AgentOpponent(rng, rung_of_rating(truth, rating), truth.book)
    return AgentOpponent(rng, text, truth.book)
