"""The base of the project's vocabularies (enums of strings), and the first of them: the sides.

Every word is a :class:`Word`: a ``str`` whose value is the word itself, so it compares equal
to the plain string, keys a dict as the plain string does, and reads as the plain string in
``str()``, ``format()``, f-strings, templates and JSON. Text, CSV and JSON output do not change
when a plain string becomes a word. (Python 3.10 has no ``StrEnum``; ``__str__`` is what makes
``str()`` and ``format()`` give the value there and in later versions alike.)

Each vocabulary is defined once, on this base, in the lowest layer that uses it: the sides and
the devices here, outcomes, grades and blunder kinds in :mod:`~ttt_solve.solver.value`, solve
methods and error kinds in the book, failure kinds and audit modes in the agents, job states in
the web.
"""

from __future__ import annotations

from enum import Enum
from typing import TypeVar

from ttt_solve.errors import TttError, quoted

W = TypeVar("W", bound="Word")


class UnknownWordError(TttError, ValueError):
    """A string that is none of a vocabulary's words (the message quotes it and lists them)."""


class Word(str, Enum):
    """A word of one of the project's vocabularies: a string enum that prints as its value."""

    def __str__(self) -> str:
        return str(self.value)

    @classmethod
    def parse(cls: type[W], text: str, what: str | None = None) -> W:
        """The word spelled ``text`` (any case, spaces around ignored), or an
        :class:`UnknownWordError` naming ``what`` (by default the vocabulary's name), quoting
        ``text`` and listing the words."""
        try:
            return cls(text.strip().lower())
        except (ValueError, AttributeError):
            words = ", ".join(word.value for word in cls)
            name = what or cls.__name__.lower()
            raise UnknownWordError(f"{name} {quoted(str(text))} is not one of {words}") from None


class Side(Word):
    """A player, named by its stones: X moves first."""

    X = "x"
    O = "o"  # noqa: E741 - the stone's letter

    @property
    def other(self) -> Side:
        """The opponent."""
        return Side.O if self is Side.X else Side.X


class Device(Word):
    """Where bulk work runs: on the CPU, on a GPU (an error without one), or on a GPU when one
    is present (``auto``)."""

    CPU = "cpu"
    GPU = "gpu"
    AUTO = "auto"
