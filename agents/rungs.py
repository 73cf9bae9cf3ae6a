"""The reference ladders' definitions: their names and rungs (playing them: :mod:`agents.ladder`).

Apart, and importing nothing, so that a command's help can list the rungs without loading
what plays them.
"""

from __future__ import annotations

from typing import NamedTuple


class LadderSpec(NamedTuple):
    """A ladder: its name (stored with its games: change the rungs, change the name) and its
    rungs, weakest first."""

    name: str
    rungs: tuple[str, ...]


STANDARD = LadderSpec(
    "standard-1",
    (
        "random",
        "perfect:error=0.5",
        "perfect:error=0.2",
        "perfect:error=0.05",
        "perfect",
        "mcts:iterations=10",
        "mcts:iterations=100",
        "mcts:iterations=1000",
        "mcts:iterations=10000",
    ),
)
"""The reference ladder of every game: ``random`` (the anchor, 0), the perfect player with
errors of 50%, 20% and 5% and without, and our MCTS at 10 to 10,000 iterations."""

GAMES = 100
"""Games per pair of rungs, and per rung for a rated agent, unless told otherwise."""


LADDERS = {STANDARD.name: STANDARD}
"""The ladders whose rungs this version knows, by name."""
