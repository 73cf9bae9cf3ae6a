"""Exceptions of the storage layer; messages say what was found and what was expected."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ttt_solve.errors import TttError
from ttt_solve.solver.vocabulary import Word

if TYPE_CHECKING:
    from ttt_solve.book.records import GameInfo
    from ttt_solve.solver.rules import Rules


class ErrorKind(Word):
    """What an error of the book or of a solve is about, one word per problem: a caller acts
    on it (the command line and the web server add the command that fixes it,
    :mod:`ttt_solve.fixes`)."""

    BOOK = "book"
    UNREADABLE = "unreadable"
    NO_BOOK = "no-book"
    NOT_A_BOOK = "not-a-book"
    SCHEMA = "schema"
    OLDER_SCHEMA = "older-schema"
    MISSING_GAME = "missing-game"
    GAME_EXISTS = "game-exists"
    DAMAGED = "damaged"
    DAMAGED_TABLE = "damaged-table"
    DAMAGED_TABLES = "damaged-tables"
    UNWRITABLE_FOLDER = "unwritable-folder"
    OUT_OF_REACH = "out-of-reach"
    SERVER_FAILED = "server-failed"
    SERVER_FAILED_COMMIT = "server-failed-commit"
    SOLVE = "solve"
    NEEDS_OPENING_BOOK = "needs-opening-book"
    DEPTH_PAST_END = "depth-past-end"
    UNWRITABLE = "unwritable"
    TOO_LARGE_FOR_TABLE = "too-large-for-table"
    TOO_MANY_POSITIONS = "too-many-positions"


class BookError(TttError):
    """Base of every book problem that a user can fix (wrong path, missing game, ...).

    Besides its message, an error says what it is about, for a caller to act on (the command
    line adds the command that fixes it): ``kind`` (an :class:`ErrorKind`: ``no-book``,
    ``missing-game``, ``damaged``, ...), ``database`` (the book as a ``--db`` argument,
    when known) and ``rules`` (the game, when one is concerned)."""

    kind = ErrorKind.BOOK

    def __init__(
        self,
        message: str,
        *,
        database: str | None = None,
        rules: Rules | None = None,
        kind: ErrorKind | None = None,
    ) -> None:
        super().__init__(message)
        self.database = database
        self.rules = rules
        if kind is not None:
            self.kind = kind


class BookNotFoundError(BookError):
    """The database does not exist (and we were not asked to create it: ``kind``
    ``"no-book"``), or cannot be read."""

    kind = ErrorKind.UNREADABLE


class SchemaVersionError(BookError):
    """The database was written by a newer (or unknown) schema, or by an older one that a
    write would upgrade (``kind`` ``"older-schema"``)."""

    kind = ErrorKind.SCHEMA


class GameNotFoundError(BookError, LookupError):
    """The book holds no game with these rules."""

    kind = ErrorKind.MISSING_GAME


class GameExistsError(BookError):
    """The game is already in the book (pass ``force`` to replace it)."""

    kind = ErrorKind.GAME_EXISTS

    def __init__(self, message: str, game: GameInfo) -> None:
        super().__init__(message, rules=game.rules)
        self.game = game


class DamagedBookError(BookError):
    """The database cannot be read as a book, or lacks what it must hold: damaged pages, a
    missing table, a value of the wrong type or range, a row that should be there. The message
    names the book and what was found."""

    kind = ErrorKind.DAMAGED


class PositionNotFoundError(BookError, KeyError):
    """A position that the book does not hold (an opening book stops at its depth)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "position not in book"


class RowFilterError(BookError, ValueError):
    """A condition on stored rows that the book cannot apply (unknown column or operator)."""


class OutOfReachError(BookError):
    """The book does not hold the answer and a live search could not find it in time.

    ``depth`` is the book depth that would hold it, when the book is an opening book too
    shallow for the position (``None``: the game is not in the book at all)."""

    kind = ErrorKind.OUT_OF_REACH

    def __init__(
        self,
        message: str,
        *,
        database: str | None = None,
        rules: Rules | None = None,
        depth: int | None = None,
    ) -> None:
        super().__init__(message, database=database, rules=rules)
        self.depth = depth
