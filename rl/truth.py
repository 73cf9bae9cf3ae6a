"""The truth an environment hands out: each position's value, remoteness and best moves.

:class:`Truth` reads a game stored as a table with the table's probe
(:meth:`Tablebase.probe_moves <ttt_solve.solver.tablebase.probe.Tablebase.probe_moves>`: one
record for the position and one a move, checked against each other); any other game it asks
the oracle (:class:`ttt_solve.book.oracle.Oracle`): the book where it holds the position, a
live search past it, and :class:`TruthUnavailableError` where neither answers within
``search_seconds``. The oracle's answers are kept per position, so a game replayed, or a
training run's millionth game, reads a dictionary; a table's are not: a look-up costs less
than keeping its answer, which the garbage collector would walk again and again (a
training run's kept answers once made most of its steps' cost). A damaged table raises
:class:`~ttt_solve.solver.tablebase.probe.TableDamagedError`: never a value its own moves
contradict. :meth:`Truth.of_many` answers a batch (the positions of a vector environment's
games) with one batched read of the book.

:meth:`Truth.standing` is the verdict without every move's value, and :meth:`Truth.value_of`
a position's value alone (what the environments hand out at each step: a move's value is the
negation of the position it leads to), read from a table by
:meth:`Tablebase.probe_best <ttt_solve.solver.tablebase.probe.Tablebase.probe_best>` (the same
reads and checks as ``probe_moves``, less work) and by ``probe``, one record. The table is
opened again for the truth, its maps advised that look-ups are scattered
(:meth:`Tablebase.read_scattered <ttt_solve.solver.tablebase.probe.Tablebase.read_scattered>`):
a look-up that misses the page cache reads a page, not the megabytes around it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from ttt_solve.book.errors import OutOfReachError
from ttt_solve.book.oracle import BOOK, DEFAULT_SEARCH_SECONDS, Oracle
from ttt_solve.errors import TttError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Value, move_value

if TYPE_CHECKING:  # pragma: no cover
    from ttt_solve.book.reader import Book
    from ttt_solve.solver.tablebase.probe import Tablebase

CACHE_LIMIT = 1_000_000
"""Positions kept before the cache starts again (about 1 GiB at most)."""


class TruthUnavailableError(TttError, LookupError):
    """Neither the book nor a live search in time gives a position's value."""


class Standing(NamedTuple):
    """A position's truth for the side to move without every move's value: its value, the
    best moves (cells, ascending) and where the answer came from."""

    value: Value
    best: tuple[int, ...]
    source: str


class Verdict(NamedTuple):
    """A position's truth for the side to move: its value, every move's value (by cell, for
    its mover), the best moves (cells, ascending) and where the answer came from."""

    value: Value
    moves: dict[int, Value]
    best: tuple[int, ...]
    source: str

    @property
    def standing(self) -> Standing:
        """The verdict without every move's value."""
        return Standing(self.value, self.best, self.source)


class Truth:
    """The truth of one game's positions, from ``book`` (a :class:`Book`, a path or URL of
    one, or ``None``) or by live search of at most ``search_seconds`` a position."""

    def __init__(
        self,
        rules: Rules,
        book: Book | str | None = None,
        *,
        search_seconds: float = DEFAULT_SEARCH_SECONDS,
    ) -> None:
        self.rules = rules
        self._closing = contextlib.ExitStack()
        if isinstance(book, str):
            from ttt_solve.book.reader import open_book

            book = self._closing.enter_context(open_book(book, read_only=True))
        self.book = book
        self.oracle = Oracle(rules, book, search_seconds=search_seconds)
        table = book.tablebase(rules) if book is not None and self.oracle.game is not None else None
        self.tablebase: Tablebase | None = None
        if table is not None:
            from ttt_solve.solver.tablebase.probe import open_tablebase

            # its own maps, advised for scattered reads without slowing the book's scans
            self.tablebase = self._closing.enter_context(open_tablebase(table.folder, rules))
            self.tablebase.read_scattered()
            self.tablebase.compile()  # a training run probes millions of positions
        self._cache: dict[tuple[int, int], Verdict] = {}

    def of(self, position: Position) -> Verdict:
        """The verdict on ``position``; :class:`TruthUnavailableError` if out of reach."""
        if self.tablebase is not None:
            return self._probed(position)
        key = (position.x, position.o)
        verdict = self._cache.get(key)
        if verdict is None:
            verdict = self._analysed(position)
            _keep(self._cache, key, verdict)
        return verdict

    def value_of(self, position: Position) -> tuple[Value, str]:
        """The value of ``position`` for the side to move and where it came from: from a
        table, one record read."""
        if self.tablebase is None:
            verdict = self.of(position)
            return verdict.value, verdict.source
        return self.tablebase.probe(position), BOOK

    def standing(self, position: Position) -> Standing:
        """The value, best moves and source of :meth:`of`'s verdict on ``position``: from a
        table, the same reads without a move's value for every move."""
        if self.tablebase is None:
            return self.of(position).standing
        value, best, _ = self.tablebase.probe_best(position)
        return Standing(value, best, BOOK)

    def _probed(self, position: Position) -> Verdict:
        assert self.tablebase is not None
        probe = self.tablebase.probe_moves(position)
        return Verdict(probe.value, probe.moves, probe.best_moves, BOOK)

    def _analysed(self, position: Position) -> Verdict:
        try:
            analysis = self.oracle.analyse(position)
        except OutOfReachError as error:
            raise TruthUnavailableError(
                f"{error}; pass truth=False to play without the truth"
            ) from None
        moves = {move.cell: move.value for move in analysis.moves}
        return Verdict(analysis.value, moves, analysis.best_moves, analysis.source)

    def of_many(self, positions: Iterable[Position]) -> list[Verdict]:
        """The verdicts on ``positions``, in their order, as :meth:`of` gives them, read first
        in one batch (:meth:`read`)."""
        positions = list(positions)
        self.read(positions)
        return [self.of(position) for position in positions]

    def read(self, positions: Iterable[Position]) -> None:
        """Keep the verdicts on those of ``positions`` not yet answered that the book holds
        with their moves, read in one batched read of the book (:meth:`Book.find_many`, the
        positions and their children together). The rest (past an opening book's depth, or
        with no book) are left to :meth:`of`, which searches them when asked."""
        game, book = self.oracle.game, self.book
        if game is None or book is None or self.tablebase is not None:
            return  # a game stored as a table is probed a position at a time, at table speed
        held = [
            p
            for p in dict.fromkeys(positions)
            if (p.x, p.o) not in self._cache and game.holds_ply(p.ply + (not p.is_terminal))
        ]
        children = {
            p: {} if p.is_terminal else {cell: p.play(cell) for cell in p.legal_moves()}
            for p in held
        }
        everything = held + [child for moves in children.values() for child in moves.values()]
        if not everything:
            return
        found = book.find_many(everything)
        for position in held:
            if position not in found or any(c not in found for c in children[position].values()):
                continue  # left to of(), which says what is missing
            value = found[position].value
            moves = {
                cell: move_value(found[child].value) for cell, child in children[position].items()
            }
            best = tuple(sorted(cell for cell, move in moves.items() if move == value))
            _keep(self._cache, key=(position.x, position.o), kept=Verdict(value, moves, best, BOOK))

    def close(self) -> None:
        """Close the book if this object opened it."""
        self._closing.close()

    def __enter__(self) -> Truth:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _keep(cache: dict[tuple[int, int], Any], key: tuple[int, int], kept: Any) -> None:
    """Keep an answer, the cache started again once it holds :data:`CACHE_LIMIT`."""
    if len(cache) >= CACHE_LIMIT:
        cache.clear()
    cache[key] = kept
