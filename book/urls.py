"""A book's ``--db`` argument: a path to a SQLite file or a database URL. What file it names,
the files SQLite keeps beside it, whether they can be written, and the argument with its
password hidden for messages.

Text only, no SQLAlchemy: a one-shot ``ttt query`` reads a SQLite book without importing it
(:func:`book.schema.database_url` makes the URL of the argument).
"""

from __future__ import annotations

import os
import re

_PASSWORD = re.compile(r"^([^:/]+://[^:/@]*:).*@")
"""``scheme://user:`` and everything to the last ``@``: where a URL's password is."""


def hide_password(db: str) -> str:
    """``db`` with a URL's password replaced by ``***``.

    Done on the text, before any parsing, because a URL that does not parse is quoted in its
    error message; to the last ``@``, so that a password holding one is hidden too."""
    return _PASSWORD.sub(r"\1***@", db)


def sqlite_file(db: str) -> str | None:
    """The file of a ``--db`` argument that names a SQLite file, else ``None``.

    Plain paths and ``sqlite:///path`` URLs name files; ``sqlite://`` (in memory) and URLs of
    other databases do not. The same rule as :func:`book.schema.database_url`.
    """
    if "://" not in db:
        return os.path.abspath(db)
    scheme, _, rest = db.partition("://")
    if scheme.split("+")[0] != "sqlite" or not rest.startswith("/") or "?" in rest:
        return None
    path = rest[1:]
    return os.path.abspath(path) if path and path != ":memory:" else None


def book_files(db: str) -> list[str]:
    """The files a SQLite book ``db`` is made of (the database and the companions SQLite keeps
    beside it while writing); none for other databases."""
    path = sqlite_file(db)
    if path is None:
        return []
    return [path] + [path + suffix for suffix in ("-wal", "-shm", "-journal")]


def unwritable_reason(db: str) -> str | None:
    """Why a SQLite book (or the folder it would be made in) cannot be written, or ``None``:
    SQLite writes beside the book too (its journal), so the folder must be writable.
    ``None`` for a server's book, whose permissions only a write shows."""
    path = sqlite_file(db)
    if path is None:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    for target, what in ((path, "the book file"), (folder, "its folder")):
        if os.path.exists(target) and not os.access(target, os.W_OK):
            return f"{what} {target} is read-only"
    return None
