"""What a book's recorded schema version allows: the checks that the read path (plain
``sqlite3`` or SQLAlchemy, :mod:`book.reader`) and the write path (:mod:`book.migrate`) share.

No SQLAlchemy here: a one-shot ``ttt query`` reads a SQLite book without importing it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ttt_solve.book.errors import SchemaVersionError


def refuse_foreign_tables(tables: Iterable[str], where: str) -> None:
    """Refuse a database whose tables are not a book's (``tables``: those it holds that a book
    would not; nothing to refuse when there are none)."""
    found = sorted(tables)
    if found:
        raise SchemaVersionError(
            f"{where} is not a ttt-solve book (found tables {', '.join(found)}, "
            f"expected meta, games, position_blocks)"
        )


def read_version(found: object, where: str) -> int:
    """The schema version as the ``meta`` table records it (a number in text)."""
    if isinstance(found, (int, str)):
        try:
            return int(found)
        except ValueError:
            pass
    raise SchemaVersionError(
        f"{where}: found schema version {found!r}, expected a number: this is not a book "
        f"written by ttt-solve, or it was damaged"
    )


def refuse_newer(version: int, current: int, where: str) -> None:
    """Refuse a book written by a newer ttt-solve (schema ``version`` above ``current``)."""
    if version > current:
        raise SchemaVersionError(
            f"{where} was written by a newer ttt-solve: found schema version {version}, "
            f"expected {current} or older; upgrade ttt-solve to use it"
        )
