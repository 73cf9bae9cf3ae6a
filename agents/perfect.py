"""``perfect``: the book's best move (fastest win, slowest loss), ties broken at random; and
agents of graded strength defined by the same truth.

* ``perfect:error=P``: a best move, except that with probability P a uniformly random move
  that is not best (when there is one);
* ``perfect:temperature=T``: a move drawn from a softmax over the moves' values,
  ``p(move) ~ exp(u(move) / T)``, with the utility ``u = 1 - r / (2 (cells + 1))`` for a win
  in ``r`` plies, ``0`` for a draw and ``-(1 - r / (2 (cells + 1)))`` for a loss in ``r``: win
  above draw above loss one unit apart, and within each the faster win (the slower loss) up to
  half a unit better. ``T`` near 0 is perfect, a large ``T`` random.

Each move's probabilities come from :func:`move_distribution`, which the agent samples with one
draw of its generator, so what an agent does is known from the book alone:
:func:`predicted_shares` gives the accuracy and perfection an audit of it should find, and
their sampling error.

It needs a book that holds the game; a position the book does not hold (past an opening
book's depth) is an error, not a guess.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from ttt_solve.agents.base import Agent
from ttt_solve.book.errors import BookError, PositionNotFoundError
from ttt_solve.solver.position import Position
from ttt_solve.solver.value import Outcome, Value


def utility(value: Value, cells: int) -> float:
    """The value of a move for its mover as the temperature agent weighs it."""
    if value.outcome is Outcome.DRAW:
        return 0.0
    return value.outcome.sign * (1.0 - value.remoteness / (2 * (cells + 1)))


def move_distribution(
    moves: Sequence[tuple[int, Value]], cells: int, *, error: float = 0.0, temperature: float = 0.0
) -> list[tuple[int, float]]:
    """``(cell, probability)`` of every move (given as ``(cell, value for the mover)``, in
    the order the agent draws from) for the agent with this ``error`` or ``temperature``
    (both 0: a best move, uniformly)."""
    top = max(value.score for _, value in moves)
    best = [cell for cell, value in moves if value.score == top]
    if temperature > 0:
        peak = max(utility(value, cells) for _, value in moves)
        weights = [math.exp((utility(value, cells) - peak) / temperature) for _, value in moves]
        total = sum(weights)
        return [(cell, weight / total) for (cell, _), weight in zip(moves, weights)]
    others = len(moves) - len(best)
    miss = error if others else 0.0
    return [
        (cell, (1 - miss) / len(best) if value.score == top else miss / others)
        for cell, value in moves
    ]


def draw_from(distribution: Sequence[tuple[int, float]], rng: random.Random) -> int:
    """One cell drawn from ``distribution`` with one ``rng.random()``."""
    u = rng.random()
    total = 0.0
    for cell, probability in distribution:
        total += probability
        if u < total:
            return cell
    return next(cell for cell, p in reversed(distribution) if p > 0)  # rounding at the end


class PerfectAgent(Agent):
    name = "perfect"

    def __init__(
        self, rng: random.Random, *, error: float = 0.0, temperature: float = 0.0, **kwargs: Any
    ) -> None:
        super().__init__(rng, **kwargs)
        if self.book is None:
            raise ValueError("the perfect agent plays from the book: give it one (--db)")
        if error > 1:
            raise ValueError(f"error is a probability, at most 1; got {error}")
        if error and temperature:
            raise ValueError("give error or temperature, not both")
        self.error = error
        self.temperature = temperature

    @property
    def graded(self) -> bool:
        """Whether this agent errs on purpose (``error`` or ``temperature`` above 0)."""
        return bool(self.error or self.temperature)

    def book_move(self, position: Position) -> int | None:
        if not self.graded:
            return super().book_move(position)
        assert self.book is not None  # checked when the agent was made
        try:
            _, moves = self.book.find_with_moves(position)
        except (BookError, PositionNotFoundError):
            return None
        distribution = move_distribution(
            [(move.cell, move.value) for move in moves],
            position.rules.cells,
            error=self.error,
            temperature=self.temperature,
        )
        return draw_from(distribution, self.rng)

    def search(self, position: Position) -> int:
        assert self.book is not None  # checked when the agent was made
        self.book.game(position.rules)  # a missing game says how to build it
        raise PositionNotFoundError(
            f"perfect: position {position} is not in {self.book.describe()} "
            f"({position.rules.name}); it plays only from the book"
        )


class Prediction(NamedTuple):
    """Accuracy and perfection an audit should find, with the standard deviation of each
    from the agent's own randomness (the audit grades one move per position)."""

    accuracy: float
    perfection: float
    accuracy_sd: float
    perfection_sd: float


def predicted_shares(
    truth: Any,
    rows: Iterable[tuple[int, int, int]],
    *,
    error: float = 0.0,
    temperature: float = 0.0,
) -> Prediction:
    """What an audit in positions mode of ``perfect:error=...`` (or ``temperature=...``)
    should find over ``rows`` (``(ply, canonical key, images)``, as the audit selects them),
    weighted by images as the audit weighs moves: from :func:`move_distribution` and the
    book's values (``truth``, an :class:`agents.audit.Truth`)."""
    rules = truth.rules
    weight = keep = best = keep_var = best_var = 0.0
    for _ply, key, images in rows:
        position = Position.from_key(rules, key)
        position_value = truth.value(position)
        values = truth.move_values(position)
        if position_value is None or values is None:
            continue
        distribution = dict(
            move_distribution(
                list(values.items()), rules.cells, error=error, temperature=temperature
            )
        )
        p_keep = sum(
            p for cell, p in distribution.items() if values[cell].outcome is position_value.outcome
        )
        p_best = sum(
            p for cell, p in distribution.items() if values[cell].score == position_value.score
        )
        weight += images
        keep += images * p_keep
        best += images * p_best
        keep_var += images * images * p_keep * (1 - p_keep)
        best_var += images * images * p_best * (1 - p_best)
    if not weight:
        return Prediction(0.0, 0.0, 0.0, 0.0)
    return Prediction(
        keep / weight, best / weight, math.sqrt(keep_var) / weight, math.sqrt(best_var) / weight
    )
