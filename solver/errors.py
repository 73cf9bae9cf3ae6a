"""The few exceptions of the solver layer; each message quotes the input that caused it.

All derive from :class:`~ttt_solve.errors.TttError`; those about input also from
:class:`ValueError`.
"""

from ttt_solve.errors import TttError


class InvalidRulesError(TttError, ValueError):
    """A board size or win length that does not make a game (or that this tool cannot hold)."""


class InvalidPositionError(TttError, ValueError):
    """A position string that is not a legal position of the game."""


class IllegalMoveError(TttError, ValueError):
    """A move naming no cell, a cell off the board or an occupied one, or play after the end."""


class SearchTimeout(TttError, TimeoutError):
    """A live search ran past its deadline (the caller decides what to say instead)."""


class WorkFileError(TttError):
    """A file of a solve's work folder cannot be read back; the message names it and the fix."""
