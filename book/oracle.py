"""One place that answers "what is this position worth, and each of its moves?".

The answer comes from the book when the book holds it, and otherwise from a live search with
the alpha-beta :class:`~solver.prover.search.Prover`, within a deadline:

* an exhaustive game in the book: the position and its children are stored;
* an opening book of depth D: positions up to ply D are stored, their children at ply D+1 are
  not, so the moves of a ply-D position are searched live (its own value still comes from the
  book); positions past ply D are searched live entirely;
* a game that is not in the book (or no book at all): searched live.

An :class:`Analysis` says where its figures came from. A search that runs out of time raises
:class:`OutOfReachError`, which says which game and which book depth would hold the answer.
``ttt query`` answers through this module, and so can anything that grades moves.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import KW_ONLY, dataclass, field
from typing import NamedTuple, Protocol

from ttt_solve.book.errors import OutOfReachError
from ttt_solve.book.reader import Book
from ttt_solve.book.records import GameInfo, MoveEntry
from ttt_solve.solver.errors import SearchTimeout
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome, Value

DEFAULT_SEARCH_SECONDS = 3.0
"""How long a live search may take before the oracle gives up and says how to build a book."""

BOOK = "book"
BOOK_AND_SEARCH = "book+search"
SEARCH = "search"


class Analysis(NamedTuple):
    """A position's value and its moves' values, each for the player to move.

    ``source`` is ``"book"`` (everything read from the book), ``"book+search"`` (the value from
    the book, the moves searched live: the last ply of an opening book) or ``"search"``
    (searched live). ``nodes`` and ``seconds`` count the live search (0 when none ran).
    """

    position: Position
    value: Value
    moves: tuple[MoveEntry, ...]
    source: str
    nodes: int
    seconds: float

    @property
    def searched(self) -> bool:
        """Whether any of this answer came from a live search."""
        return self.source != BOOK

    @property
    def best_moves(self) -> tuple[int, ...]:
        """The cells of the moves that keep the value with the best remoteness, ascending."""
        return tuple(sorted(m.cell for m in self.moves if m.value == self.value))

    def __repr__(self) -> str:
        position = self.position
        names = " ".join(position.rules.cell_name(cell) for cell in self.best_moves) or "-"
        return (
            f"<Analysis {position.rules.name} {position}: {position.to_move.upper()} to move, "
            f"{self.value}; best {names} ({self.source})>"
        )

    def _repr_html_(self) -> str:
        from ttt_solve.presentation import display

        return display.analysis_html(self)


class MoveProver(Protocol):
    """What the oracle asks of a prover (see :class:`ttt_solve.solver.prover.search.Prover`)."""

    def move_values(
        self, position: Position, deadline: float | None = None
    ) -> Iterable[tuple[int, Value]]: ...


ProverFactory = Callable[[Rules], MoveProver]
"""Makes a prover with ``move_values(position, deadline)``."""


def terminal_value(position: Position) -> Value:
    """The value of a finished game for the side to move: lost if the other side has a line."""
    if position.winner is not None:
        return Value(Outcome.LOSS, 0)
    return Value(Outcome.DRAW, 0)


LIVE_TABLE_BITS = 19
"""Table size of the live-search prover (see :class:`solver.prover.search.Prover`)."""


def _default_prover(rules: Rules) -> MoveProver:
    from ttt_solve.solver.compiling import announce_search
    from ttt_solve.solver.prover.search import (
        Prover,  # imported on demand: most queries never search
    )

    announce_search()

    # A live search lasts seconds: a 16 MiB table holds what it finds, and a process that
    # asks one question does not wait for the pages of a bigger one.
    return Prover(rules, table_bits=LIVE_TABLE_BITS)


@dataclass(eq=False)
class Oracle:
    """Answers positions of one game from a book (may be ``None``) or by live search.

    ``search_seconds`` bounds each live search; 0 or less means never search.
    ``prover_factory(rules)`` makes the prover (the alpha-beta ``Prover`` by default); one
    prover is made on first need and kept, so its transposition table serves later calls.
    """

    rules: Rules
    book: Book | None = None
    _: KW_ONLY
    search_seconds: float = DEFAULT_SEARCH_SECONDS
    prover_factory: ProverFactory = _default_prover
    _prover: MoveProver | None = field(default=None, init=False, repr=False)
    game: GameInfo | None = field(init=False)

    def __post_init__(self) -> None:
        self.game = self.book.find_game(self.rules) if self.book is not None else None

    def analyse(self, position: Position) -> Analysis:
        """The value of ``position`` and of each legal move, best first (then by cell).

        Raises :class:`OutOfReachError` when the book lacks the answer and a live search does
        not finish in ``search_seconds``; :class:`~book.errors.PositionNotFoundError` if an
        exhaustive book lacks a position it should hold.
        """
        if position.rules is not self.rules and position.rules != self.rules:  # `is`: cheap
            raise ValueError(
                f"position {position} is of {position.rules.name}, "
                f"not of this oracle's {self.rules.name}"
            )
        game, book = self.game, self.book
        if game is not None and book is not None and game.holds_ply(position.ply):
            if game.holds_ply(position.ply + 1) or position.is_terminal:
                # one query for both (a finished game has no moves: find_with_moves gives none)
                entry, stored = book.find_with_moves(position)
                return Analysis(position, entry.value, tuple(stored), BOOK, 0, 0.0)
            moves, nodes, seconds = self._search_moves(position)  # first: it may be refused
            entry = book.find(position)
            return Analysis(position, entry.value, moves, BOOK_AND_SEARCH, nodes, seconds)
        if position.is_terminal:
            return Analysis(position, terminal_value(position), (), SEARCH, 0, 0.0)
        moves, nodes, seconds = self._search_moves(position)
        return Analysis(position, moves[0].value, moves, SEARCH, nodes, seconds)

    def _search_moves(self, position: Position) -> tuple[tuple[MoveEntry, ...], int, float]:
        """Every move's value by live search, within ``search_seconds``."""
        if self.search_seconds <= 0:
            raise self._out_of_reach(position, "live search is turned off")
        try:
            if self._prover is None:
                self._prover = self.prover_factory(self.rules)
            prover = self._prover
            # the deadline is for the search, not for making the prover (the compiled one
            # compiles on its first use on a machine, about 10 s)
            started = time.perf_counter()
            before = getattr(prover, "nodes", None)
            found = prover.move_values(position, deadline=started + self.search_seconds)
        except ImportError:
            raise self._out_of_reach(position, "live search is not available") from None
        except SearchTimeout:
            raise self._out_of_reach(
                position, f"a live search gave up after {self.search_seconds:g} s"
            ) from None
        seconds = time.perf_counter() - started
        after = getattr(prover, "nodes", None)
        nodes = after - before if isinstance(before, int) and isinstance(after, int) else 0
        moves = [MoveEntry(cell, self.rules.cell_name(cell), value) for cell, value in found]
        moves.sort(key=lambda m: (m.value.sort_key, m.cell))
        return tuple(moves), nodes, seconds

    def _out_of_reach(self, position: Position, why: str) -> OutOfReachError:
        game, rules, book = self.game, self.rules, self.book
        db = book.db_argument if book is not None else None
        if game is None or book is None:
            held = (
                "the book" if book is None else book.describe()
            ) + f" holds no {rules.name} game"
            depth = None
        else:
            held = f"{book.describe()} holds {rules.name} only to ply {game.book_depth}"
            depth = position.ply + 1
        return OutOfReachError(
            f"{held} and {why} on {position}", database=db, rules=rules, depth=depth
        )
