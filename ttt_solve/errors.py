"""The root of every error ttt-solve raises on purpose.

Each part of the package defines its own narrow errors (:mod:`ttt_solve.solver.errors`,
:mod:`ttt_solve.book.errors`, the agents' spec and engine errors), all derived from
:class:`TttError`. Errors about the user's input also derive from :class:`ValueError`, as
python-chess's ``IllegalMoveError`` does. Anything else that escapes is a bug.
"""


class TttError(Exception):
    """A problem the user can act on: bad input, a missing or damaged book, a failing agent."""


def quoted(text: str, longest: int = 80) -> str:
    """``text`` quoted for a one-line message; a long one is cut, with its length said."""
    if len(text) <= longest:
        return repr(text)
    return f"{text[:longest]!r}... ({len(text):,} characters)"


def printable(text: str) -> str:
    """``text`` with its control and other unprintable characters escaped (``\\x1b``): a
    message quotes names the user did not choose (a folder a book records, what an engine
    says), and shown raw on a terminal an escape sequence would act, a NUL cut the line."""
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in text)


def install_hint(extra: str) -> str:
    """The command that installs one of ttt-solve's optional extras where ttt-solve is
    installed (from a checkout or not): what a message about a missing package ends with."""
    return f"pip install 'ttt-solve[{extra}]'"
