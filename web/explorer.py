"""The server's view of one book: the games it holds and the positions it answers, with the
limits that keep a flood of requests from pinning the machine.

Answers come from :class:`~ttt_solve.book.oracle.Oracle`. A position the book holds is read
at once, in the server's process, and never waits for anything else; one past an opening book
is searched live in a worker process (:mod:`web.workers`), at most ``max_searches`` at a time,
each within ``search_seconds``; a request beyond that is refused with :class:`BusyError`
rather than queued. An agent's move is computed in a worker too, within the same time (the
``perfect`` agent's, an answer of the book, in the server's process where the book holds it).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from starlette.datastructures import QueryParams

from ttt_solve.agents.seeded import plays_from_book, seeded_move
from ttt_solve.book.defaults import DEFAULT_MAX_ROWS
from ttt_solve.book.errors import GameNotFoundError, OutOfReachError
from ttt_solve.book.oracle import DEFAULT_SEARCH_SECONDS, Analysis, Oracle
from ttt_solve.book.query import LineMove, parse_query
from ttt_solve.book.reader import Book
from ttt_solve.book.records import GameInfo
from ttt_solve.solver.errors import IllegalMoveError, InvalidPositionError, InvalidRulesError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.web.answers import encode_analysis
from ttt_solve.web.workers import BusyError, WorkerPool

__all__ = ["BusyError", "Explorer", "Limits"]

READ_CACHE = 2_048
"""Book answers kept in memory (the book is read-only, so they never change): the openings,
asked most, are answered without a lookup; a few MiB at most."""

JSON_CACHE = 4_096
"""Book answers kept encoded as the API's JSON (under 1 KiB each on a 4x4 board), each under
the words of the URL that asked for it: a URL asked again is answered without parsing, a
lookup, a Python object or an encoding."""

KEPT_QUERY = 512
"""The longest query string whose answer is kept under it (a position of 64 cells written out,
or a game's moves, take far less): the kept answers stay within a few MiB whatever a visitor
writes in a URL."""

MAX_QUERY = 2_000
"""Longest ``position`` or ``moves`` parameter read (a board of 64 cells needs far less)."""

GAME_NAME = re.compile(r"(\d{1,2})x(\d{1,2})k(\d{1,2})")
"""A game in a URL: ``3x3k3`` is 3 rows, 3 columns, 3 in a row."""

SYMMETRY_NAMES = (
    "as it is",
    "mirrored left-right",
    "mirrored top-bottom",
    "turned half a turn",
    "flipped on the main diagonal",
    "flipped on the anti-diagonal",
    "turned a quarter clockwise",
    "turned a quarter anticlockwise",
)
"""The names of ``Rules.symmetries`` in their order (the last four on square boards only)."""


class Limits(NamedTuple):
    """How much work the server takes on at once (the options of ``ttt serve``)."""

    search_seconds: float = DEFAULT_SEARCH_SECONDS
    max_searches: int = 2
    max_audits: int = 1
    audit_seconds: float = 120.0
    memory_rows: int = DEFAULT_MAX_ROWS  # rows of the book's smaller games kept in memory


def game_name(rules: Rules) -> str:
    """``Rules(3, 3, 3)`` -> ``3x3k3``, the name of a game in URLs."""
    return f"{rules.rows}x{rules.cols}k{rules.k}"


def parse_game_name(name: str) -> Rules:
    """The rules a URL's game name stands for; :class:`InvalidRulesError` if none."""
    match = GAME_NAME.fullmatch(name)
    if match is None:
        raise InvalidRulesError(
            f"{name!r} is not a game name: write rows x columns k in a row, like 3x3k3"
        )
    return Rules(*(int(group) for group in match.groups()))


class Asked(NamedTuple):
    """A position as a URL asks for it: a starting position, then moves played on it."""

    info: GameInfo
    base: str | None  # the ``position`` parameter, as written (None: the empty board)
    start: Position
    cells: tuple[int, ...]
    position: Position  # after the moves

    @property
    def rules(self) -> Rules:
        return self.info.rules

    @property
    def move_names(self) -> tuple[str, ...]:
        return tuple(self.rules.cell_name(c) for c in self.cells)


def url_param(params: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    """A URL's parameter ``name`` (its last value), at most :data:`MAX_QUERY` characters."""
    value = params.get(name, default)
    if value is not None and len(value) > MAX_QUERY:
        raise ValueError(f"the {name} parameter is longer than {MAX_QUERY} characters")
    return value


def symmetric_images(position: Position) -> list[tuple[str, Position]]:
    """The distinct images of a position under the board's symmetries, itself left out."""
    seen = {str(position)}
    images = []
    for index, name in enumerate(SYMMETRY_NAMES[: len(position.rules.symmetries)]):
        image = position.transform(index)
        if str(image) not in seen:
            seen.add(str(image))
            images.append((name, image))
    return images


class Explorer:
    """Answers positions of the games in ``book`` within ``limits``, searching live in the
    workers of ``workers``; safe to share between threads (the book's SQLite connection is
    serialized). ``client_gone()`` gives the event set when the visitor of the request being
    answered has gone (``None``: never), which stops its live work."""

    def __init__(
        self,
        book: Book,
        limits: Limits,
        workers: WorkerPool,
        client_gone: Any = lambda: None,
    ) -> None:
        self.book = book
        self.limits = limits
        self.workers = workers
        self.client_gone = client_gone
        self._readers: dict[Rules, Oracle] = {}
        self._rules: dict[str, Rules] = {}
        self._read = functools.lru_cache(maxsize=READ_CACHE)(self._read_book)
        self._position_json = functools.lru_cache(maxsize=JSON_CACHE)(self._book_json)

    def games(self) -> list[GameInfo]:
        return self.book.games()

    def game(self, name: str) -> GameInfo:
        """The game a URL names; 404-worthy errors for a bad name or a game not in the book."""
        rules = self._rules.get(name)
        if rules is None:
            try:
                rules = parse_game_name(name)
            except InvalidRulesError as error:
                raise GameNotFoundError(str(error)) from None
            if len(self._rules) < 1_000:  # names are kept once parsed (making Rules costs)
                self._rules[name] = rules
        return self.book.game(rules)

    def position(self, rules: Rules, text: str | None, moves: str | None) -> Position:
        """The position of a URL's ``position`` and ``moves`` parameters."""
        if text is not None and not text.strip():
            raise InvalidPositionError("position is empty: write it like x.o/.x./...")
        return parse_query(rules, text, moves)

    def asked(self, game: str, params: Mapping[str, str]) -> Asked:
        """The game and position a URL asks for: the game its path names, then its
        ``position`` parameter (the empty board without one) and ``moves`` played on it."""
        info = self.game(game)
        rules = info.rules
        base = url_param(params, "position")
        start = self.position(rules, base, None)
        position = start
        cells: list[int] = []
        for token in re.split(r"[,\s]+", url_param(params, "moves") or ""):
            if token:
                cell = rules.parse_cell(token)
                try:
                    position = position.play(cell)
                except IllegalMoveError as error:
                    raise IllegalMoveError(f"move {len(cells) + 1} ({token}): {error}") from None
                cells.append(cell)
        return Asked(info, base, start, tuple(cells), position)

    def analyse(self, position: Position) -> Analysis:
        """The position's answer: read from the book, else searched live in a slot."""
        try:
            return self.read(position)
        except OutOfReachError:
            return self.search(position)  # past the book

    def read(self, position: Position) -> Analysis:
        """The position's answer from the book alone (fast: no search); raises
        :class:`OutOfReachError` when it takes a live search."""
        answer: Analysis = self._read(position)
        return answer

    def position_json(self, game: str, query: bytes) -> bytes:
        """The answer of the book to the URL of ``game``'s position with the query string
        ``query`` (its ``position`` and ``moves`` parameters, as :meth:`asked` reads them):
        ``ttt query --json``'s object, encoded by the server's one encoder. The answer is kept
        under the URL's words (``game`` and ``query``, up to :data:`KEPT_QUERY` bytes), so a
        URL asked again is answered at once. Raises :class:`OutOfReachError` when the answer
        takes a live search (never kept), and the errors of a URL that asks badly."""
        body: bytes = (
            self._position_json(game, query)
            if len(query) <= KEPT_QUERY
            else self._book_json(game, query)
        )
        return body

    def _book_json(self, game: str, query: bytes) -> bytes:
        # not through read's cache: these answers are kept encoded instead
        position = self.asked(game, QueryParams(query)).position
        return encode_analysis(self._read_book(position))

    def _read_book(self, position: Position) -> Analysis:
        rules = position.rules
        reader = self._readers.get(rules)
        if reader is None:
            self.book.game(rules)  # a game not in the book is not explored
            reader = self._readers.setdefault(rules, Oracle(rules, self.book, search_seconds=0))
        return reader.analyse(position)

    def search(self, position: Position) -> Analysis:
        """The position's answer, searched live by a worker within ``search_seconds``."""
        fields = self._run("analyse", position, what="the live search")
        return Analysis(position, *fields)

    def line(self, position: Position) -> list[LineMove]:
        """The optimal line from ``position`` (the mainline): from the book as far as it
        holds it, the rest searched live by a worker."""
        line = []
        while not position.is_terminal:
            try:
                best = self.read(position).moves[0]
            except OutOfReachError:
                rest = self._run("line", position, what="the live search of the optimal line")
                for cell, value in rest:
                    line.append(LineMove(position, cell, value))
                    position = position.play(cell)
                break
            line.append(LineMove(position, best.cell, best.value))
            position = position.play(best.cell)
        return line

    def history(self, position: Position, moves: list[int]) -> list[Analysis]:
        """The answers of the start position and of each position after ``moves``."""
        answers = [self.analyse(position)]
        for cell in moves:
            position = position.play(cell)
            answers.append(self.analyse(position))
        return answers

    def agent_move(self, spec: str, seed: int, position: Position) -> int:
        """The move of the agent ``spec`` in a game of seed ``seed``: the same game, the same
        move (:mod:`agents.seeded`). ``perfect``, which plays from the book, moves here (past
        an opening book, among best moves searched live); every other agent in a worker,
        within ``search_seconds``."""
        if plays_from_book(spec):
            return seeded_move(spec, seed, position, self.book, self._best_moves)
        cell: int = self._run("move", spec, seed, position, what=f"the move of {spec}")
        return cell

    def _best_moves(self, position: Position) -> tuple[int, ...]:
        return self.analyse(position).best_moves

    def _run(self, task: str, *args: Any, what: str) -> Any:
        return self.workers.run(
            task, *args, what=what, seconds=self.limits.search_seconds, gone=self.client_gone()
        )
