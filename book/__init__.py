"""Storage of solved games (SQLAlchemy 2.x): schema, writing, and the reading API.

>>> from ttt_solve.book import open_book                           # doctest: +SKIP
>>> with open_book("ttt.sqlite") as b:                              # doctest: +SKIP
...     b.find(Position.parse("x.o/.x./..o", Rules(3, 3, 3))).value

The names below are imported on first use: a module of the package (``book.defaults``, read by
every command's options) costs only itself.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ttt_solve.book.errors import (
        BookError,
        BookNotFoundError,
        GameExistsError,
        GameNotFoundError,
        PositionNotFoundError,
        RowFilterError,
        SchemaVersionError,
    )
    from ttt_solve.book.reader import Book, open_book
    from ttt_solve.book.records import Entry, GameInfo, MoveEntry, StoredRow
    from ttt_solve.book.rowfilter import Condition, RowFilter

_EXPORTS = {
    "Book": "ttt_solve.book.reader",
    "BookError": "ttt_solve.book.errors",
    "BookNotFoundError": "ttt_solve.book.errors",
    "Condition": "ttt_solve.book.rowfilter",
    "Entry": "ttt_solve.book.records",
    "GameExistsError": "ttt_solve.book.errors",
    "GameInfo": "ttt_solve.book.records",
    "GameNotFoundError": "ttt_solve.book.errors",
    "MoveEntry": "ttt_solve.book.records",
    "PositionNotFoundError": "ttt_solve.book.errors",
    "RowFilter": "ttt_solve.book.rowfilter",
    "RowFilterError": "ttt_solve.book.errors",
    "SchemaVersionError": "ttt_solve.book.errors",
    "StoredRow": "ttt_solve.book.records",
    "open_book": "ttt_solve.book.reader",
}
"""The package's names and the modules that define them."""

__all__ = [
    "Book",
    "BookError",
    "BookNotFoundError",
    "Condition",
    "Entry",
    "GameExistsError",
    "GameInfo",
    "GameNotFoundError",
    "MoveEntry",
    "PositionNotFoundError",
    "RowFilter",
    "RowFilterError",
    "SchemaVersionError",
    "StoredRow",
    "open_book",
]
assert __all__ == sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ttt_solve.book' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up finds it at once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
