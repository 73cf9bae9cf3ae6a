"""The few exceptions of the solver layer; each message quotes the input that caused it.

All derive from :class:`ValueError`, so callers that only care about "bad input" can catch that.
"""


class InvalidRulesError(ValueError):
    """A board size or win length that does not make a game (or that this tool cannot hold)."""


class InvalidPositionError(ValueError):
    """A position string that is not a legal position of the game."""


class IllegalMoveError(ValueError):
    """A move that names no cell, a cell off the board, or an occupied cell, or play after the end."""


class SearchTimeout(TimeoutError):
    """A live search ran past its deadline (the caller decides what to say instead)."""
