"""The records a book hands out: a game (:class:`GameInfo`), a stored row (:class:`StoredRow`),
a position's entry (:class:`Entry`) and a move's (:class:`MoveEntry`); and the columns a
backend reads them from (:data:`GAME_COLUMNS`, :data:`POSITION_COLUMNS`).

Small immutable values, nothing read or checked here: :mod:`book.rowchecks` checks what a
database holds before it becomes one of these.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Value
from ttt_solve.solver.vocabulary import Word

if TYPE_CHECKING:
    from ttt_solve.solver.figures import Figures

GAME_COLUMNS = (
    "id",
    "rows",
    "cols",
    "k",
    "method",
    "book_depth",
    "solver_version",
    "value",
    "remoteness",
    "positions",
    "reachable",
    "figures",
    "seconds",
    "solved_at",
    "table_folder",
)
"""The fields of a ``games`` row, in the order :meth:`Catalogue.games
<book.backend.Catalogue.games>` gives them."""

POSITION_COLUMNS = ("ply", "key", "value", "remoteness", "best_moves", "images")
"""The fields of a stored position's row, in the order a :class:`~book.backend.Backend`
gives them (a :class:`StoredRow`)."""


class SolveMethod(Word):
    """How a game was solved: every reachable position enumerated (``exhaustive``), an opening
    book proved by search to a depth (``alphabeta``), or every position's value in a tablebase
    beside the book (``table``)."""

    EXHAUSTIVE = "exhaustive"
    ALPHABETA = "alphabeta"
    TABLE = "table"


class ExportFormat(Word):
    """The forms a game's rows are exported in (:mod:`book.frame`): CSV with a header row, one
    JSON object per line, or a Parquet file."""

    CSV = "csv"
    JSONL = "jsonl"
    PARQUET = "parquet"


class GameInfo(NamedTuple):
    """A solved game as the ``games`` table describes it."""

    id: int
    rules: Rules
    method: SolveMethod
    book_depth: int | None  # for an opening book: the last ply it holds
    solver_version: str
    value: Value  # of the empty board, for X (who moves first)
    positions: int  # canonical rows stored
    reachable: int  # positions those rows stand for
    figures: Figures
    seconds: float
    solved_at: datetime
    table_folder: str | None = None
    """The folder of a game stored as a tablebase (method ``table``), as the book records it:
    absolute, or relative to the folder of the book's SQLite file; ``None``: stored in
    blocks."""

    @property
    def is_complete(self) -> bool:
        """Every reachable position is stored (an exhaustive solve)."""
        return self.book_depth is None

    def holds_ply(self, ply: int) -> bool:
        """Whether positions of this ply are stored (all of them, when they are)."""
        return self.book_depth is None or ply <= self.book_depth

    @property
    def scope(self) -> str:
        """``exhaustive`` or ``opening book to ply D``."""
        return "exhaustive" if self.book_depth is None else f"opening book to ply {self.book_depth}"

    def __repr__(self) -> str:
        return (
            f"<GameInfo {self.rules.name}: {self.value} for X, {self.scope}, "
            f"{self.positions:,} positions ({self.reachable:,} reachable)>"
        )


class Entry(NamedTuple):
    """A stored position, in the orientation it was asked in.

    ``value`` is for the side to move; ``best_moves`` are cell indexes, ascending (empty for a
    terminal position); ``images`` is how many reachable positions share its canonical form.
    """

    position: Position
    value: Value
    best_moves: tuple[int, ...]
    images: int


class MoveEntry(NamedTuple):
    """A legal move and its value for the player who makes it."""

    cell: int
    name: str
    value: Value


class StoredRow(NamedTuple):
    """One stored position of a game (canonical orientation), as a block holds it."""

    ply: int
    key: int
    value: int  # for the side to move: 1 win, 0 draw, -1 loss
    remoteness: int
    best_moves: int  # bitmask of cells
    images: int


stored_row = functools.partial(tuple.__new__, StoredRow)
"""A :class:`StoredRow` from a selected row, made in C: namedtuple's ``_make`` is a Python call
per row, a third of the cost of streaming a game. Rows come from our own SELECT of
:data:`POSITION_COLUMNS`, so their length is right."""
