"""The agent interface: given a position, return a move.

An agent is built with a ``random.Random`` and takes every random decision from it, so a
seeded generator makes its play reproducible move for move. It may hold a book: an agent built
with ``book=true`` plays the book's best move (fastest win, slowest loss, ties broken by its
generator) wherever the book holds the position, and searches on its own elsewhere.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from ttt_solve.book.errors import BookError, PositionNotFoundError
from ttt_solve.solver.errors import IllegalMoveError
from ttt_solve.solver.position import Position

if TYPE_CHECKING:  # pragma: no cover
    from ttt_solve.book.reader import Book


class Agent:
    """Base of every agent. Subclasses implement :meth:`search`.

    ``name`` is the registry name (``"mcts"``); ``spec`` the full spec string the agent was
    built from (``"mcts:iterations=500"``), which is how reports name it.
    """

    name = "agent"

    def __init__(
        self, rng: random.Random, *, book: Book | None = None, spec: str | None = None
    ) -> None:
        if not isinstance(rng, random.Random):
            raise TypeError(f"an agent needs a random.Random, got {type(rng).__name__}")
        self.rng = rng
        self.book = book
        self.spec = spec or self.name
        self.book_moves = 0
        """How many moves came from the book (the rest were searched)."""

    def select_move(self, position: Position) -> int:
        """The cell this agent plays in ``position`` (which must not be over)."""
        if position.is_terminal:
            raise IllegalMoveError(
                f"{self.spec} was asked to move in {position}, but the game is over"
            )
        if self.book is not None:
            cell = self.book_move(position)
            if cell is not None:
                self.book_moves += 1
                return cell
        return self.search(position)

    def book_move(self, position: Position) -> int | None:
        """A best move from the book, or ``None`` where the book does not hold the position."""
        if self.book is None:
            return None
        try:
            if self.book.find_game(position.rules) is None:
                return None
            entry = self.book.get(position)
        except (BookError, PositionNotFoundError):
            return None
        if entry is None or not entry.best_moves:
            return None
        return self.rng.choice(entry.best_moves)

    def search(self, position: Position) -> int:
        """The agent's own choice, without the book."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"


def choose(rng: random.Random, cells: list[int]) -> int:
    """One of ``cells`` (non-empty), uniformly; no draw from ``rng`` when there is one."""
    if len(cells) == 1:
        return cells[0]
    return cells[rng.randrange(len(cells))]
