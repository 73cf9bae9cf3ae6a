"""Storage of solved games (SQLAlchemy 2.x): schema, writing, and the reading API.

>>> from book import open_book                                     # doctest: +SKIP
>>> with open_book("ttt.sqlite") as b:                              # doctest: +SKIP
...     b.find(Position.parse("x.o/.x./..o", Rules(3, 3, 3))).value
"""

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
