"""The functions of a Python session: ``import ttt_solve as ttt``, then ``ttt.solve``,
``ttt.analyse``, ``ttt.audit``, ``ttt.benchmark``, ``ttt.curve`` and ``ttt.play_game``.

Each takes a game as the command line names it (``"3x3k3"``, ``"4x5k4"``, ``"3x3 k=3"``,
``"3"``: k defaults to the shorter side, as ``--win`` does) or as :class:`Rules`, and a book
as ``db=`` (a path or any SQLAlchemy URL, ``ttt.sqlite`` by default), opens the book, does the
work and closes it. What comes back displays itself in a notebook (``_repr_html_``) and prints
short in a terminal.

Agents are given as a spec string (``"mcts:iterations=500"``), one of the project's agents,
any object with a ``select_move`` method, or any function: see :func:`audit` and
:mod:`ttt_solve.agents.adapters` for the boards a function may be handed.
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ttt_solve.agents.isolation import DEFAULT_MEMORY_MIB, DEFAULT_MOVE_SECONDS
from ttt_solve.book.defaults import DEFAULT_DB
from ttt_solve.solver.compiling import LOGGER
from ttt_solve.solver.errors import InvalidRulesError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules, parse_game

if TYPE_CHECKING:
    from ttt_solve.agents.audit import AuditReport
    from ttt_solve.agents.benchmark import BenchmarkReport
    from ttt_solve.agents.curve import CurveReport
    from ttt_solve.agents.ladder import LadderRatings
    from ttt_solve.agents.match import GameRecord
    from ttt_solve.book.oracle import Analysis
    from ttt_solve.book.records import GameInfo
    from ttt_solve.solver.value import Value


def rules_of(game: str | Rules) -> Rules:
    """The rules of a game named ``"3x3k3"``, ``"4x5 k=4"``, ``"3x3"`` or ``"3"`` (k: the
    shorter side), or given as :class:`Rules`."""
    return game if isinstance(game, Rules) else parse_game(game)


def position_of(
    position: Any,
    game: str | Rules | None = None,
    *,
    board: str | None = None,
    symbols: Any = None,
) -> Position:
    """A :class:`Position` as it is, parsed from its text (``x.o/.x./...``), or read from a
    board as a notebook holds it: a list of rows (``board="grid"``), a flat list
    (``"flat"``) or a NumPy array (``"numpy"``), written with ``symbols`` (X, O, empty; the
    shape's default: ``("X", "O", " ")`` for lists, ``(1, -1, 0)`` for arrays). The game
    defaults to the square board the cells fill, with k its side."""
    if isinstance(position, Position):
        return position
    if isinstance(position, str) and board is None:
        if game is None:
            rows = position.split("/")
            if len(rows) < 2:
                raise InvalidRulesError(
                    f"position {position!r}: give the game too (e.g. ttt.analyse(text, '3x3k3'))"
                )
            game = f"{len(rows)}x{len(rows[0].strip())}"
        return Position.parse(position, rules_of(game))
    return read_board(position, game, board=board, symbols=symbols)


def read_board(
    handed: Any, game: str | Rules | None, *, board: str | None = None, symbols: Any = None
) -> Position:
    """The position a notebook's board shows (see :func:`position_of`); a board of another
    shape than ``board=`` says, or a cell that is none of the symbols, is an error that names
    ``board=`` or ``symbols=``."""
    from ttt_solve.agents.adapters import DEFAULT_SYMBOLS, symbols_of

    shape = board or _shape_of(handed)
    if shape not in DEFAULT_SYMBOLS:
        raise ValueError(
            f"board={shape!r}: a position is read from a board of {', '.join(DEFAULT_SYMBOLS)}"
        )
    rows = _rows_of(handed, shape, None if game is None else rules_of(game).cols)
    if game is None:
        if not rows or len(rows) != len(rows[0]):
            raise ValueError(
                f"board={shape!r}: give the game too (e.g. ttt.analyse(board, '3x3k3'))"
            )
        game = f"{len(rows)}x{len(rows)}"
    rules = rules_of(game)
    if len(rows) != rules.rows or any(len(row) != rules.cols for row in rows):
        found = f"{len(rows)} rows of {', '.join(sorted({str(len(r)) for r in rows})) or '0'}"
        raise ValueError(
            f"board={shape!r}: the board has {found} cells, but {rules.name} has "
            f"{rules.rows} rows of {rules.cols}"
        )
    x_mark, o_mark, empty = DEFAULT_SYMBOLS[shape] if symbols is None else symbols_of(symbols)
    text = []
    for row in rows:
        for cell in row:
            value = cell.item() if hasattr(cell, "item") else cell
            if value == x_mark:
                text.append("x")
            elif value == o_mark:
                text.append("o")
            elif value == empty:
                text.append(".")
            else:
                raise ValueError(
                    f"board={shape!r}: the cell {value!r} is none of the symbols "
                    f"{(x_mark, o_mark, empty)!r} (X, O, empty): give symbols= as the board "
                    f"writes them"
                )
        text.append("/")
    return Position.parse("".join(text[:-1]), rules)


def _shape_of(handed: Any) -> str:
    if hasattr(handed, "shape") and hasattr(handed, "tolist"):
        return "numpy"
    if isinstance(handed, (list, tuple)):
        nested = handed and all(isinstance(row, (list, tuple)) for row in handed)
        return "grid" if nested else "flat"
    raise ValueError(
        f"{type(handed).__name__} is no board: give a position's text ('x.o/.x./...'), a "
        f"Position, a list of rows (board='grid'), a flat list (board='flat') or a NumPy array"
    )


def _rows_of(handed: Any, shape: str, cols: int | None) -> list[list[Any]]:
    """The board's cells, row by row: a flat board split into rows of the game's ``cols``
    cells, or into a square when no game is given."""
    try:
        if shape == "numpy":
            return [list(row) for row in handed.tolist()]
        if shape == "grid":
            return [list(row) for row in handed]
        cells = list(handed)
    except TypeError:
        raise ValueError(f"board={shape!r}: {type(handed).__name__} is no such board") from None
    side = cols or math.isqrt(len(cells))
    if side == 0 or (cols is None and side * side != len(cells)):
        raise ValueError(
            f"board={shape!r}: {len(cells)} cells make no square board; give the game too"
        )
    return [cells[start : start + side] for start in range(0, len(cells), side)]


# -- solving and looking up -------------------------------------------------------------------


def solve(game: str | Rules, db: str = DEFAULT_DB, **options: Any) -> GameInfo:
    """Solve ``game`` into the book ``db`` unless it is stored there already; the game's
    :class:`~ttt_solve.book.records.GameInfo`. ``options``: those of
    :class:`~ttt_solve.book.solving.Solve` (``method``, ``book_depth``, ``force``, ...)."""
    from ttt_solve.book.solving import solve as solve_game

    notebook_notices()
    return solve_game(rules_of(game), db, **options)


def analyse(
    position: Any,
    game: str | Rules | None = None,
    *,
    board: str | None = None,
    symbols: Any = None,
    db: str | None = DEFAULT_DB,
    search_seconds: float | None = None,
) -> Analysis:
    """The value of a position and of each of its moves, from the book ``db`` where it holds
    them and by a live search elsewhere (``db=None``: search only), as ``ttt query``. The
    position is its text, a :class:`Position`, or a board as :func:`position_of` reads it
    (``board=``, ``symbols=`` as :func:`audit` takes them)."""
    from ttt_solve.book.oracle import DEFAULT_SEARCH_SECONDS, Oracle
    from ttt_solve.book.reader import open_book

    asked = position_of(position, game, board=board, symbols=symbols)
    notebook_notices()
    seconds = DEFAULT_SEARCH_SECONDS if search_seconds is None else search_seconds
    if db is None:
        return Oracle(asked.rules, None, search_seconds=seconds).analyse(asked)
    with open_book(db, read_only=True) as book:
        return Oracle(asked.rules, book, search_seconds=seconds).analyse(asked)


# -- agents -----------------------------------------------------------------------------------


def _python_agent(agent: Any, timeout: float | None, memory: float | None) -> dict[str, Any]:
    """The limits of an agent given to a session function: a spec string says its own
    (``py:...,timeout=2``); one written in Python gets ``timeout`` and ``memory``."""
    if isinstance(agent, str):
        return {}
    return {"timeout": timeout, "memory": memory}


def audit(
    agent: Any,
    game: str | Rules,
    *,
    db: str = DEFAULT_DB,
    board: str | None = None,
    symbols: Any = None,
    side: str | None = None,
    positions: int | str | None = None,
    per_class: bool = False,
    games: int | None = None,
    opponent: Any = "random",
    seed: int = 0,
    timeout: float | None = DEFAULT_MOVE_SECONDS,
    memory: float | None = DEFAULT_MEMORY_MIB,
    worst: int = 5,
    jobs: int = 2,
    name: str | None = None,
) -> AuditReport:
    """Grade an agent's moves against the book, as ``ttt audit`` does.

    ``agent``: a spec string, one of the project's agents, an object with ``select_move``, or
    a function. A function (or ``select_move``) is handed the board as ``board`` says
    (``"position"``, ``"flat"``, ``"grid"``, ``"numpy"`` or ``"planes"``), written with
    ``symbols`` (X, O, empty), and the side to move too if ``side`` is ``"name"`` or
    ``"symbol"``; it answers a cell index, a ``(row, col)`` pair, a cell name, or writes its
    stone into the board. Anything else, an exception, or more than ``timeout`` seconds
    (:data:`~ttt_solve.agents.isolation.DEFAULT_MOVE_SECONDS` unless told; ``None``: no
    limit, the agent then runs in this process) is counted as that move's failure, against
    the agent's accuracy, and the audit goes on. With a limit the agent runs in a process of
    its own, which may grow by ``memory`` MiB (``None``: no limit). A spec string's agent
    keeps its own limits (``py:...,timeout=2``). An ``opponent`` written in Python gets the
    same limits.

    ``positions``: ``None`` or ``"all"`` for every reachable non-terminal position, each in its
    own orientation, or a number of them drawn at random (``per_class``: one board per symmetry
    class instead, weighted by the positions it stands for: exact only for an agent that plays
    the same way in every orientation); ``games``: instead, that many games against
    ``opponent``. ``worst``: how many of the costliest moves to keep.
    """
    from ttt_solve.agents.audit import Truth
    from ttt_solve.agents.grading import evaluate
    from ttt_solve.agents.makers import agent_maker
    from ttt_solve.book.reader import open_book

    rules = rules_of(game)
    sample = _sample(positions)
    notebook_notices()
    if games is not None and positions is not None:
        raise ValueError("give positions= or games=, not both")
    limits = _python_agent(agent, timeout, memory)
    maker = agent_maker(agent, db=db, board=board, symbols=symbols, side=side, name=name, **limits)
    with open_book(db, read_only=True) as book:
        truth = Truth(book, rules)
        rival = None
        if games is not None:
            rival = agent_maker(opponent, db=db, **_python_agent(opponent, timeout, memory))
        return evaluate(
            maker,
            truth,
            sample=sample,
            per_class=per_class,
            games=games,
            opponent=rival,
            seed=seed,
            jobs=jobs,
            worst_moves=worst,
        )


def _sample(positions: int | str | None) -> int | None:
    if positions is None or positions == "all":
        return None
    if isinstance(positions, bool) or not isinstance(positions, int) or positions < 1:
        raise ValueError(f"positions={positions!r}: give 'all' or a number of positions >= 1")
    return positions


def benchmark(
    agent: Any,
    game: str | Rules,
    *,
    db: str = DEFAULT_DB,
    board: str | None = None,
    symbols: Any = None,
    side: str | None = None,
    seed: int = 0,
    timeout: float | None = DEFAULT_MOVE_SECONDS,
    jobs: int = 2,
    name: str | None = None,
    path: str | None = None,
) -> BenchmarkReport:
    """Score an agent on the game's benchmark set (``path``: another set file), as
    ``ttt benchmark`` does: each cell of the grid, stage by difficulty, with 95% intervals; it
    shows its heatmaps in a notebook. ``agent`` is given as :func:`audit` takes it; the book
    (``db``) is read only by an agent that needs it (``perfect``)."""
    from ttt_solve.agents.benchmark import run_benchmark
    from ttt_solve.agents.benchset import load_set, set_path
    from ttt_solve.agents.makers import agent_maker

    rules = rules_of(game)
    notebook_notices()
    if isinstance(agent, str) and timeout == DEFAULT_MOVE_SECONDS:
        timeout = None  # the spec says its own
    maker = agent_maker(
        agent, db=db, board=board, symbols=symbols, side=side, timeout=timeout, name=name
    )
    found = load_set(path if path is not None else set_path(rules))
    return run_benchmark(maker, found, seed=seed, jobs=jobs, name=name)


# -- ratings ----------------------------------------------------------------------------------


def rate(
    agent: Any,
    game: str | Rules,
    *,
    db: str = DEFAULT_DB,
    board: str | None = None,
    symbols: Any = None,
    side: str | None = None,
    timeout: float | None = DEFAULT_MOVE_SECONDS,
    memory: float | None = DEFAULT_MEMORY_MIB,
    games: int | None = None,
    seed: int = 0,
    anchor: str | None = None,
    bootstrap: int = 0,
    positions: int | str | None = 1000,
    jobs: int = 2,
    name: str | None = None,
) -> LadderRatings:
    """Rate an agent on the reference ladder, as ``ttt rate`` does: it plays every rung
    ``games`` times (100 unless told), colours alternating, and is rated on the ladder's
    scale (random = 0 unless ``anchor="SPEC=RATING"``), then audited over ``positions``
    (1,000 sampled by default, ``"all"`` or a number). ``agent`` is given as :func:`audit`
    takes it (``timeout`` and ``memory`` too); a failed move forfeits its game (a loss) and
    the rest are played. The ladder's own games are played once and cached in the book; those
    of an agent made in this session are played each time (its code may change under the same
    name)."""
    from ttt_solve.agents.ladder import open_ladder_book, rate_on_ladder
    from ttt_solve.agents.makers import agent_maker
    from ttt_solve.agents.rating import parse_anchor
    from ttt_solve.agents.rungs import GAMES
    from ttt_solve.book.urls import unwritable_reason

    rules = rules_of(game)
    notebook_notices()
    limits = _python_agent(agent, timeout, memory)
    maker = agent_maker(agent, db=db, board=board, symbols=symbols, side=side, name=name, **limits)
    with open_ladder_book(db) as book:
        return rate_on_ladder(
            book,
            db,
            rules,
            [agent if isinstance(agent, str) else maker],
            games=GAMES if games is None else games,
            seed=seed,
            anchor=None if anchor is None else parse_anchor(anchor),
            bootstrap=bootstrap,
            sample=_sample(positions),
            cache=unwritable_reason(db) is None,
            jobs=jobs,
        )


# -- curves -----------------------------------------------------------------------------------


def curve(
    agents: Any,
    game: str | Rules,
    vary: str | Mapping[str, Sequence[Any]],
    *,
    db: str = DEFAULT_DB,
    seeds: int = 3,
    seed: int = 0,
    positions: int | str | None = None,
    games: int | None = None,
    opponent: Any = "random",
    board: str | None = None,
    symbols: Any = None,
    side: str | None = None,
    timeout: float | None = DEFAULT_MOVE_SECONDS,
    memory: float | None = DEFAULT_MEMORY_MIB,
    jobs: int = 2,
) -> CurveReport:
    """Audit agents at many values of one parameter, ``seeds`` seeds each, as ``ttt curve``.

    ``agents``: one or a list of spec strings (``"mcts"``; the parameter is added to the
    spec) or factories: functions called with the parameter as a keyword
    (``factory(iterations=100)``) that return an agent as :func:`audit` takes it (adapted as
    ``board``, ``symbols`` and ``side`` say, limited by ``timeout`` and ``memory``).
    ``vary``: ``"iterations=10,100,1000"`` or ``{"iterations": [10, 100, 1000]}``.
    """
    from ttt_solve.agents.curve import (
        CurvePlan,
        CurveReport,
        PointPlan,
        ReadOnceTruth,
        parse_vary,
        plan_curve,
        run_curves,
    )
    from ttt_solve.agents.makers import agent_maker
    from ttt_solve.book.reader import open_book

    rules = rules_of(game)
    if isinstance(vary, Mapping):
        if len(vary) != 1:
            raise ValueError("vary= names one parameter, e.g. {'iterations': [10, 100, 1000]}")
        ((param, values),) = vary.items()
        vary = f"{param}={','.join(str(v) for v in values)}"
    varied = parse_vary(vary)
    notebook_notices()
    listed = agents if isinstance(agents, (list, tuple)) else [agents]
    sample = _sample(positions)
    seed_list = tuple(range(seed, seed + seeds))
    plans = []
    for agent in listed:
        if isinstance(agent, str):
            plans.append(plan_curve(agent, varied))
            continue
        label = getattr(agent, "__name__", "agent")
        points = []
        for text, number in zip(varied.values, varied.numbers):
            value: Any = int(number) if number.is_integer() else number
            spec = f"{label}:{varied.param}={text}"
            made = agent_maker(
                agent(**{varied.param: value}),
                db=db,
                board=board,
                symbols=symbols,
                side=side,
                name=spec,
                timeout=timeout,
                memory=memory,
            )
            points.append(PointPlan(text, number, spec, made))
        plans.append(CurvePlan(label, varied.param, tuple(points)))
    with open_book(db, read_only=True) as book:
        rival = None
        if games is not None:
            rival = agent_maker(opponent, db=db, **_python_agent(opponent, timeout, memory))
        curves = run_curves(
            plans,
            ReadOnceTruth(book, rules),
            db=db,
            seeds=seed_list,
            sample=sample,
            games=games,
            opponent=rival,
            jobs=jobs,
        )
        book_url, truth = book.display_url, book.describe()
    return CurveReport(
        rules,
        seed_list,
        tuple(curves),
        book=book_url,
        truth=truth,
        sample=sample,
        games=games,
        opponent=None if games is None else getattr(rival, "spec", opponent),
    )


# -- games ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayedGame:
    """A game between two agents: its record, the players' names, and the value of each of its
    positions for the side to move (``None`` when the book does not hold the game)."""

    record: GameRecord
    x_name: str
    o_name: str
    values: tuple[Value, ...] | None

    @property
    def moves(self) -> list[str]:
        """The moves by name."""
        return [self.record.rules.cell_name(cell) for cell in self.record.moves]

    @property
    def winner(self) -> str | None:
        return self.record.winner

    @property
    def result(self) -> str:
        failure = self.record.failure
        if failure is not None:
            loser = failure.position.to_move.upper()
            return (
                f"{loser} forfeits at move {len(self.record.moves) + 1}, {failure.kind}: "
                f"{failure.detail}; {self.record.winner.upper()} wins"  # type: ignore[union-attr]
            )
        winner = self.record.winner
        return "a draw" if winner is None else f"{winner.upper()} wins"

    def __repr__(self) -> str:
        return (
            f"<PlayedGame {self.x_name} (X) against {self.o_name} (O) on "
            f"{self.record.rules.name}: {' '.join(self.moves)}; {self.result}>"
        )

    def _repr_html_(self) -> str:
        from ttt_solve.reports.game import game_html

        return game_html(self)


def play_game(
    x: Any,
    o: Any,
    game: str | Rules,
    *,
    db: str | None = DEFAULT_DB,
    seed: int = 0,
    start: str | Position | None = None,
    board: str | None = None,
    symbols: Any = None,
    side: str | None = None,
    timeout: float | None = DEFAULT_MOVE_SECONDS,
    memory: float | None = DEFAULT_MEMORY_MIB,
) -> PlayedGame:
    """One game between two agents (given as :func:`audit` takes them; ``board``,
    ``symbols`` and ``side`` adapt those written in Python, ``timeout`` and ``memory`` limit
    them as there: a move past the limit forfeits the game), from ``start`` or the empty
    board, each drawing from a generator seeded from ``seed``; with the value of every
    position from the book ``db`` when it holds the game."""
    from ttt_solve.agents.makers import agent_maker
    from ttt_solve.agents.match import derive_seed
    from ttt_solve.agents.match import play_game as play

    rules = rules_of(game)
    first = None if start is None else position_of(start, rules, symbols=symbols)
    options: dict[str, Any] = {"board": board, "symbols": symbols, "side": side}
    notebook_notices()
    with _book_or_none(db) as book:
        players = []
        for index, agent in enumerate((x, o)):
            own = {} if isinstance(agent, str) else options
            made = agent_maker(agent, db=db, **own, **_python_agent(agent, timeout, memory))
            players.append(made.build(book))
            players[-1].rng.seed(derive_seed(seed, "game", 0, "xo"[index]))
        record = play(players[0], players[1], rules, first, stop_on_failure=True)
        values = _values(book, record) if book is not None else None
    return PlayedGame(record, players[0].spec, players[1].spec, values)


def _values(book: Any, record: GameRecord) -> tuple[Value, ...] | None:
    """The value of each position of a game from the book, or ``None`` if it lacks one."""
    from ttt_solve.book.errors import BookError

    try:
        if book.find_game(record.rules) is None:
            return None
        entries = book.find_many(record.positions())
    except BookError:
        return None
    positions = record.positions()
    if any(position not in entries for position in positions):
        return None
    return tuple(entries[position].value for position in positions)


class _book_or_none:  # noqa: N801 - a context manager, named like one
    """The book ``db`` opened, or ``None`` when there is none (``db=None``, no file)."""

    def __init__(self, db: str | None) -> None:
        self.db = db
        self.stack: Any = None

    def __enter__(self) -> Any:
        from contextlib import ExitStack

        from ttt_solve.book.errors import BookNotFoundError
        from ttt_solve.book.reader import open_book

        if self.db is None:
            return None
        self.stack = ExitStack()
        try:
            return self.stack.enter_context(open_book(self.db, read_only=True))
        except BookNotFoundError:
            return None

    def __exit__(self, *exc: object) -> None:
        if self.stack is not None:
            self.stack.close()


def notebook_notices() -> None:
    """In a Jupyter kernel, show the notice of a first compile
    (:mod:`ttt_solve.solver.compiling`) as a display of its own rather than on standard
    error; elsewhere, leave it to standard error. Every function of this module calls it."""
    if "ipykernel" not in sys.modules:
        return
    logger = logging.getLogger(LOGGER)
    if not any(isinstance(handler, _Display) for handler in logger.handlers):
        logger.addHandler(_Display())
        logger.propagate = False


class _Display(logging.Handler):
    """Shows each record in the notebook: a one-line note, as text and HTML."""

    def emit(self, record: logging.LogRecord) -> None:
        from html import escape

        from IPython.display import display

        text = record.getMessage()
        html = f'<div style="color: #5f6b7a; font-style: italic;">{escape(text)}</div>'
        display({"text/plain": text, "text/html": html}, raw=True)
