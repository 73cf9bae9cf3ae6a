"""How long the games left will take, from the games finished: each game weighted by its cost.

Games differ in cost by thousands of times (``random`` against itself takes microseconds, MCTS
at 10,000 iterations a second), so a count of games says little of the time left. A pair's
games cost about the same each: a pair already played gives its own mean cost a game. A pair
not yet played is costed as the sum of its two agents' costs a game, fitted by least squares
to the pairs played (a game's time is mostly its two agents' thinking). When an agent of a
pair left has played no game yet, nothing says what it costs: :func:`seconds_left` answers
``None``, "cannot estimate yet", rather than a guess.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

Pair = tuple[str, str]
"""Two agents, by name."""


def seconds_left(
    finished: Mapping[Pair, tuple[int, float]], remaining: Mapping[Pair, int]
) -> float | None:
    """The seconds the ``remaining`` games (a count by pair of agents) should take, given the
    ``finished`` ones (by pair: games and the seconds they took); ``None`` when a pair left
    has an agent that finished no game."""
    left = {pair: count for pair, count in remaining.items() if count > 0}
    if not left:
        return 0.0
    measured = {pair: seconds / games for pair, (games, seconds) in finished.items() if games}
    unknown = [pair for pair in left if pair not in measured]
    if not unknown:
        return sum(count * measured[pair] for pair, count in left.items())
    agents = sorted(
        {agent for pair in measured for agent in pair},
    )
    if any(agent not in agents for pair in unknown for agent in pair):
        return None
    index = {agent: i for i, agent in enumerate(agents)}
    design = np.zeros((len(measured), len(agents)))
    for row, (a, b) in enumerate(measured):
        design[row, index[a]] += 1
        design[row, index[b]] += 1
    each, *_ = np.linalg.lstsq(design, np.array(list(measured.values())), rcond=None)
    each = np.maximum(each, 0.0)  # a cost is never negative
    total = 0.0
    for (a, b), count in left.items():
        cost = measured.get((a, b))
        total += count * (cost if cost is not None else float(each[index[a]] + each[index[b]]))
    return total
