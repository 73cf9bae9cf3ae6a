"""What :class:`~book.reader.Book` asks of a storage form: the interfaces a backend implements.

A book is a database (SQLite or any other through SQLAlchemy) that catalogues its games; the
positions of a game are stored in one form that a :class:`Backend` reads. Today there is one
form, the blocks of the ``position_blocks`` table (:mod:`book.blocks`), read by two backends
that differ only in their way into the database:

- :mod:`book.sqliterows`: a SQLite file through the standard library's ``sqlite3`` (no
  SQLAlchemy to import: the fast path of a one-shot ``ttt query``);
- :mod:`book.enginerows`: any database through SQLAlchemy Core (PostgreSQL, an in-memory
  SQLite, a book being created).

Both share the reading of the blocks (:mod:`book.blockreads`) and are also the book's
:class:`Catalogue` (its ``meta`` and ``games`` tables): a :class:`Database`.

A game stored as a tablebase is read by :mod:`book.table.rows`, which answers a position
directly (:meth:`Backend.analyse`: the table's probe) and gives the rows blocks would hold
for streams. A new storage form is one more module with a class that implements
:class:`Backend`; the book's :class:`Catalogue` still lists every game. Book checks every row
a backend gives (:mod:`book.rowchecks`) and turns it into the orientation asked about; a
backend only reads.

No SQLAlchemy or NumPy here: the lookup path of ``ttt query`` imports this module.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ttt_solve.book.rowfilter import RowFilter
    from ttt_solve.solver.position import Position
    from ttt_solve.solver.rules import Rules
    from ttt_solve.solver.value import Value

Row = tuple[Any, ...]
"""A stored position as ``(ply, key, value, remoteness, best_moves, images)``
(:data:`~book.records.POSITION_COLUMNS`), in canonical orientation: ``key`` the canonical key
(:meth:`Rules.canonical <solver.rules.Rules.canonical>`), ``value`` for the side to move (1, 0,
-1), ``remoteness`` plies to the end, ``best_moves`` a bitmask of cells, ``images`` how many
reachable positions it stands for. Whole numbers where the store is sound; a damaged store may
hand over anything, for Book's checks to report."""


Answer = tuple["Value", dict[int, "Value"]]
"""A position's value for the side to move and every legal move's value for its mover, by
cell, in the orientation of the position asked about: what :meth:`Backend.analyse` gives."""


class StorageDamage(Exception):
    """Stored data that no writer makes (a block whose lengths disagree, a file whose checksum
    fails); the message says what is wrong, and Book raises it again as a
    :class:`~book.errors.DamagedBookError` naming the book."""


class TableDamage(StorageDamage):
    """A tablebase's record that no build writes: the message names the file and the number
    (``the table is damaged: ...``), and Book raises it again as a
    :class:`~book.errors.DamagedBookError` that says how to rebuild the table."""


class Backend(Protocol):
    """Reads the stored positions of a game: the contract of a storage form.

    A game is named by its ``rules`` and by ``game_id``, its row in the book's ``games``
    table (a game solved again gets a new id); a ply by its count of stones. Every method is
    called only for a game the catalogue lists, and only for plies it holds
    (:meth:`GameInfo.holds_ply <book.records.GameInfo.holds_ply>`). A key that is not stored
    is left out of an answer, never an error: Book decides what a missing row means.

    Rows are :data:`Row` tuples. The store's own failures are raised as they are when they
    are one of :attr:`errors` (Book turns them into a :class:`~book.errors.BookError`, or a
    :class:`~book.errors.DamagedBookError` when the message says the data is damaged), and
    stored data that no writer makes as :class:`StorageDamage`. A backend may be used from
    several threads, one call at a time.
    """

    errors: tuple[type[Exception], ...]
    """The exceptions of the store's machinery (its driver, the file system) that a read may
    raise."""

    def positions(self, rules: Rules, game_id: int, ply: int, keys: Sequence[int]) -> list[Row]:
        """The rows of these canonical keys of one ply that are stored, in increasing key
        order, each once (``keys`` may repeat and come in any order; a batch of up to a few
        thousand)."""
        ...

    def family(
        self, rules: Rules, game_id: int, ply: int, key: int, child_keys: Sequence[int]
    ) -> list[Row]:
        """The row of ``key`` at ``ply`` (if stored) followed by the stored rows of
        ``child_keys`` at ``ply + 1`` (distinct canonical keys), as :meth:`positions` gives
        them: a position and its children in one read, for ``ttt query`` and the web."""
        ...

    def analyse(self, rules: Rules, game_id: int, position: Position) -> Answer | None:
        """The value of ``position`` and of every legal move, read directly from a store that
        answers positions rather than rows (a tablebase: one record for the position and one
        a move), in the position's own orientation; ``None`` when the store holds no such
        position. Called only for a game whose catalogue row names such a store
        (:attr:`GameInfo.table_folder <book.records.GameInfo.table_folder>`); a store of
        rows raises :class:`NotImplementedError`, and Book reads its rows instead."""
        ...

    def chunks(
        self, rules: Rules, game_id: int, where: RowFilter, batch: int
    ) -> Iterator[list[Row]]:
        """Every stored row of the game that ``where`` selects, in (ply, key) order (a
        tablebase of more than 20 cells: in ply order, each ply in its index's order), in lists
        of about ``batch`` rows (at least one row a list). ``where`` is applied whole: its
        conditions on ``ply``, ``value``, ``remoteness`` and ``images``
        (:meth:`RowFilter.holds <book.rowfilter.RowFilter.holds>` tests a row's columns).
        Whatever the store holds open while streaming is released when the iterator is
        closed or read to its end."""
        ...

    def column_chunks(
        self, rules: Rules, game_id: int, where: RowFilter, batch: int
    ) -> Iterator[dict[str, Any]]:
        """The rows :meth:`chunks` gives, as NumPy arrays named by
        :data:`~book.records.POSITION_COLUMNS` (``key`` ``uint64``; the others any integer
        type that holds them), about ``batch`` rows a chunk. Called only for boards of up to
        31 cells (:attr:`Rules.fits_key <solver.rules.Rules.fits_key>`), whose keys and best
        moves fit 64 bits."""
        ...

    def close(self) -> None:
        """Release what the backend holds open (connections, files); called once, by
        :meth:`Book.close <book.reader.Book.close>`."""
        ...


class Catalogue(Protocol):
    """The book database's own tables: its schema version and its ``games``.

    Raises what :class:`Backend` raises (one of :attr:`errors`)."""

    errors: tuple[type[Exception], ...]

    def tables(self) -> list[str]:
        """The names of the database's tables."""
        ...

    def schema_version(self) -> str | None:
        """The ``schema_version`` the ``meta`` table records, as stored (``None``: none)."""
        ...

    def games(self, rules: Rules | None = None) -> list[tuple[Any, ...]]:
        """The ``games`` rows (the fields of :data:`~book.records.GAME_COLUMNS`, as the
        database gives them), of every game smallest board first, or of the game of
        ``rules`` only."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


class Database(Catalogue, Backend, Protocol):
    """A book database that also stores its games' positions (the blocks of
    ``position_blocks``): what :func:`~book.reader.open_book` opens."""
