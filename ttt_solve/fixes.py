"""What the command line and the web server add to an error: the command that fixes it.

The library's errors say what went wrong and carry what it concerns (``kind``, ``rules``,
``database``: :class:`~ttt_solve.book.errors.BookError`); :func:`explained` writes the message
a user of the commands reads, with the ``ttt-solve`` or ``ttt verify`` line to run.
"""

from __future__ import annotations

from ttt_solve.book.defaults import DEFAULT_DB
from ttt_solve.errors import TttError
from ttt_solve.solver.rules import Rules


def db_option(database: str | None) -> str:
    """`` --db DATABASE``, or nothing for the default book."""
    return "" if database in (None, DEFAULT_DB) else f" --db {database}"


def solve_command(rules: Rules, database: str | None = None) -> str:
    """The ``ttt-solve`` command line that would put this game into the book."""
    return f"ttt-solve --size {rules.size} --win {rules.k}{db_option(database)}"


def fix(error: TttError) -> str:
    """The fix of an error, to follow its message (``""`` when there is nothing to run)."""
    kind = getattr(error, "kind", None)
    database = getattr(error, "database", None)
    rules: Rules | None = getattr(error, "rules", None)
    db = db_option(database)
    if kind == "no-book":
        return f": solve a game into it first (ttt-solve --size N --win K{db})"
    if kind == "not-a-book":
        return f"; solve a game into it first (ttt-solve --db {database})"
    if kind == "missing-game" and rules is not None:
        return f"; build it with: {solve_command(rules, database)}"
    if kind == "damaged":
        if rules is None:
            return f"; check it with: ttt verify --size N --win K{db}; rebuild it if it fails"
        return (
            f"; check it with: ttt verify --size {rules.size} --win {rules.k}{db}; "
            f"solve the game again with: {solve_command(rules, database)} --force"
        )
    if kind == "damaged-table" and rules is not None:
        return f"; rebuild it with: {solve_command(rules, database)} --method table --force"
    if kind == "damaged-tables":
        return "; solve its games again into a new book (ttt-solve --size N --win K --db NEW)"
    if kind == "older-schema":
        example = solve_command(rules or Rules(3, 3, 3), database)
        return (
            "; ttt-solve upgrades it when it next writes into it (its games are kept), "
            f"e.g.: {example}"
        )
    if kind == "unwritable-folder":
        return "; give --db a path in a folder that can be written"
    if kind == "needs-opening-book":
        return "; build an opening book instead: --method alphabeta --book-depth D"
    if kind == "depth-past-end" and rules is not None:
        return f"; give --book-depth {rules.cells} or less"
    if kind == "unwritable":
        return "; make it writable or give another --db"
    if kind == "server-failed":
        return ": run the same command again once the server answers"
    if kind == "server-failed-commit":
        return (
            "; once it answers, run the same command again (it stops at once if the game is stored)"
        )
    if kind == "out-of-reach" and rules is not None:
        depth = getattr(error, "depth", None)
        command = solve_command(rules, database)
        if depth is not None:
            # --method, because ttt-solve would otherwise pick the exhaustive solve if it fits
            command += f" --method alphabeta --book-depth {depth} --force"
        return f"; build the book with: {command}"
    return ""


def explained(error: TttError) -> str:
    """The error's message followed by its fix."""
    return f"{error}{fix(error)}"
