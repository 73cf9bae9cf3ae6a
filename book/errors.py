"""Exceptions of the storage layer; messages say what was found and what was expected."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ttt_solve.errors import TttError

if TYPE_CHECKING:
    from ttt_solve.book.reader import GameInfo


class BookError(TttError):
    """Base of every book problem that a user can fix (wrong path, missing game, ...)."""


class BookNotFoundError(BookError):
    """The database does not exist (and we were not asked to create it)."""


class SchemaVersionError(BookError):
    """The database was written by a newer (or unknown) schema."""


class GameNotFoundError(BookError, LookupError):
    """The book holds no game with these rules."""


class GameExistsError(BookError):
    """The game is already in the book (pass ``force`` to replace it)."""

    def __init__(self, message: str, game: GameInfo) -> None:
        super().__init__(message)
        self.game = game


class DamagedBookError(BookError):
    """The database cannot be read as a book, or lacks what it must hold: damaged pages, a
    missing table, a value of the wrong type or range, a row that should be there. The message
    names the book and says how to check it (``ttt verify``) and rebuild it."""


class PositionNotFoundError(BookError, KeyError):
    """A position that the book does not hold (an opening book stops at its depth)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "position not in book"


class RowFilterError(BookError, ValueError):
    """A condition on stored rows that the book cannot apply (unknown column or operator)."""


class OutOfReachError(BookError):
    """The book does not hold the answer and a live search could not find it in time."""
