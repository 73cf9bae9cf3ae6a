"""An agent's move in a game played one request at a time (the web explorer's play page).

Nothing is kept between two moves of such a game: each move is made by a fresh agent whose
generator is seeded by the game's seed and the ply (:func:`move_rng`). The same game (its seed
and its moves so far) then gets the same move however often, and in whichever process, it is
asked.

``perfect`` plays from the book and refuses a position the book does not hold (past an
opening book's depth). Given the position's best moves from elsewhere (a live search), the
plain ``perfect`` picks among them as it picks among the book's; its graded kinds
(``perfect:error=...``, ``perfect:temperature=...``) are defined by the book's values of every
move, and still refuse.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from ttt_solve.agents.match import derive_seed
from ttt_solve.agents.spec import make_agent, parse_spec
from ttt_solve.book.errors import PositionNotFoundError
from ttt_solve.solver.position import Position


def move_rng(seed: int, ply: int) -> random.Random:
    """The generator of the agent's move at ``ply`` in the game of seed ``seed``."""
    return random.Random(derive_seed(seed, "ply", ply))


def plays_from_book(spec: str) -> bool:
    """Whether the agent reads its every move from the book (``perfect`` and its graded
    kinds): a move of it costs a lookup, not a search."""
    return parse_spec(spec).name == "perfect"


def seeded_move(
    spec: str,
    seed: int,
    position: Position,
    book: Any,
    best_moves: Callable[[Position], Sequence[int]] | None = None,
) -> int:
    """The move of the agent ``spec`` at ``position`` in the game of seed ``seed``, made by
    a fresh agent over ``book``. ``best_moves(position)``, if given, gives the best moves of
    a position the book does not hold, for the plain ``perfect`` (see the module)."""
    agent = make_agent(spec, move_rng(seed, position.ply), book)
    try:
        return int(agent.select_move(position))
    except PositionNotFoundError:
        if best_moves is None or agent.name != "perfect" or getattr(agent, "graded", True):
            raise
    # The agent drew nothing from its generator before it refused: it draws now what it
    # draws among the book's best moves (Agent.book_move).
    return int(agent.rng.choice(sorted(best_moves(position))))
