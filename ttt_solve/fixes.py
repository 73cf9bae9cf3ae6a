"""What the command line and the web server add to an error: the command that fixes it.

The library's errors say what went wrong and carry what it concerns (``kind``, ``rules``,
``database``: :class:`~ttt_solve.book.errors.BookError`); :func:`explained` writes the message
a user of the commands reads, with the ``ttt-solve`` or ``ttt verify`` line to run. Each kind of
error (:class:`~ttt_solve.book.errors.ErrorKind`) has one fix in :data:`FIXES`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ttt_solve.book.defaults import DEFAULT_DB
from ttt_solve.book.errors import ErrorKind
from ttt_solve.errors import TttError
from ttt_solve.solver.rules import Rules


def db_option(database: str | None) -> str:
    """`` --db DATABASE``, or nothing for the default book."""
    return "" if database in (None, DEFAULT_DB) else f" --db {database}"


def solve_command(rules: Rules, database: str | None = None) -> str:
    """The ``ttt-solve`` command line that would put this game into the book."""
    return f"ttt-solve --size {rules.size} --win {rules.k}{db_option(database)}"


class Concern(NamedTuple):
    """What an error is about, as far as it says: the book, the game, the book depth that would
    hold the answer."""

    database: str | None
    rules: Rules | None
    depth: int | None

    @property
    def db(self) -> str:
        return db_option(self.database)

    def solve(self) -> str:
        """The ``ttt-solve`` line of the game (:func:`solve_command`); the game is known."""
        assert self.rules is not None
        return solve_command(self.rules, self.database)


def _damaged(about: Concern) -> str:
    if about.rules is None:  # no game to name: the book's own files are what is damaged
        return "; restore it from a copy, or solve its games again into a new book"
    return (
        f"; check it with: ttt verify --size {about.rules.size} --win {about.rules.k}{about.db}; "
        f"solve the game again with: {about.solve()} --force"
    )


def _older_schema(about: Concern) -> str:
    example = solve_command(about.rules or Rules(3, 3, 3), about.database)
    return (
        f"; ttt-solve upgrades it when it next writes into it (its games are kept), e.g.: {example}"
    )


def _out_of_reach(about: Concern) -> str:
    if about.rules is None:
        return ""
    command = about.solve()
    if about.depth is not None:
        # --method, because ttt-solve would otherwise pick the exhaustive solve if it fits
        command += f" --method alphabeta --book-depth {about.depth} --force"
    return f"; build the book with: {command}"


FIXES: dict[ErrorKind, Callable[[Concern], str]] = {
    ErrorKind.NO_BOOK: lambda about: (
        f": solve a game into it first (ttt-solve --size N --win K{about.db})"
    ),
    ErrorKind.NOT_A_BOOK: lambda about: (
        f"; solve a game into it first (ttt-solve --db {about.database})"
    ),
    ErrorKind.MISSING_GAME: lambda about: (
        f"; build it with: {about.solve()}" if about.rules is not None else ""
    ),
    ErrorKind.DAMAGED: _damaged,
    ErrorKind.DAMAGED_TABLE: lambda about: (
        f"; rebuild it with: {about.solve()} --method table --force"
        if about.rules is not None
        else ""
    ),
    ErrorKind.DAMAGED_TABLES: lambda _: (
        "; solve its games again into a new book (ttt-solve --size N --win K --db NEW)"
    ),
    ErrorKind.OLDER_SCHEMA: _older_schema,
    ErrorKind.UNWRITABLE_FOLDER: lambda _: "; give --db a path in a folder that can be written",
    ErrorKind.NEEDS_OPENING_BOOK: lambda _: (
        "; build an opening book instead: --method alphabeta --book-depth D"
    ),
    ErrorKind.DEPTH_PAST_END: lambda about: (
        f"; give --book-depth {about.rules.cells} or less" if about.rules is not None else ""
    ),
    ErrorKind.UNWRITABLE: lambda _: "; make it writable or give another --db",
    ErrorKind.SERVER_FAILED: lambda _: ": run the same command again once the server answers",
    ErrorKind.SERVER_FAILED_COMMIT: lambda _: (
        "; once it answers, run the same command again (it stops at once if the game is stored)"
    ),
    ErrorKind.OUT_OF_REACH: _out_of_reach,
    ErrorKind.TOO_MANY_POSITIONS: lambda _: " (--positions sample:N)",
}
"""The fix of each kind of error that has one, from what the error is about."""


def fix(error: TttError) -> str:
    """The fix of an error, to follow its message (``""`` when there is nothing to run)."""
    kind = getattr(error, "kind", None)
    if not isinstance(kind, ErrorKind) or kind not in FIXES:
        return ""  # another vocabulary's kind (an engine's failure), or nothing to run
    about = Concern(
        getattr(error, "database", None),
        getattr(error, "rules", None),
        getattr(error, "depth", None),
    )
    return FIXES[kind](about)


def explained(error: TttError) -> str:
    """The error's message followed by its fix."""
    return f"{error}{fix(error)}"
