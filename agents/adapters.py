"""Agents as they are written: a function or an object of anyone's, graded as one of ours.

Game-playing code from a course or a blog keeps its own board: a flat list of ``"X"``/``"O"``/
``" "``, a list of rows of numbers, a NumPy array, or the observation PettingZoo's
tic-tac-toe environment hands a policy. An :class:`Adapter` translates both ways between that
board and a :class:`~ttt_solve.solver.position.Position`:

* :meth:`Adapter.encode` hands the agent the position in its own shape (:data:`BOARDS`), with
  the side to move if it asks for it (``side="name"``: ``"X"``/``"O"``; ``side="symbol"``: the
  mover's own symbol);
* :meth:`Adapter.decode` reads the agent's answer back as a cell: a cell index in the board's
  own numbering, a ``(row, col)`` pair (0-based), a cell name (``"b2"``), or nothing at all
  when the agent wrote its stone into the board it was handed (the one changed cell is the
  move).

Anything else is that move's failure, counted by the audit with a one-line reason naming the
agent, as an external engine's failures are (:class:`~ttt_solve.agents.engine.FailureKind`):
``crash`` (the agent raised, or called ``sys.exit`` or ``os._exit``), ``timeout``,
``garbage`` (an answer that is no move: a float, a dict, bytes, no change to the board, two
changes, or a cell answered while the board was changed elsewhere) or ``illegal`` (a taken or
off-board cell, a stone of the wrong side, a ``bool``). :class:`CallableAgent` is the agent the
audit runs; with a time limit it runs the function in a child process of its own
(:mod:`~ttt_solve.agents.isolation`).

Randomness: before each move the global generators of :mod:`random` and ``numpy.random`` are
seeded from the agent's own generator (which the audit seeds per position or game), and put
back as they were after it, so an agent that draws from them plays the same moves for the same
audit seed and the caller's own sequence of random numbers is left alone.
"""

from __future__ import annotations

import copy
import operator
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ttt_solve.agents.base import Agent
from ttt_solve.agents.engine import EngineFailure, FailureKind
from ttt_solve.agents.isolation import DEFAULT_MEMORY_MIB, check_memory
from ttt_solve.errors import TttError
from ttt_solve.solver.errors import IllegalMoveError
from ttt_solve.solver.position import Position

if TYPE_CHECKING:  # pragma: no cover
    from ttt_solve.agents.isolation import AgentProcess
    from ttt_solve.book.reader import Book

BOARDS = ("position", "flat", "grid", "numpy", "planes")
"""The board shapes an agent may be handed (see :class:`Adapter`)."""

SIDES = (None, "name", "symbol")
"""What an agent is handed besides the board: nothing, ``"X"``/``"O"``, or its own symbol."""

TEXT_SYMBOLS = ("X", "O", " ")
NUMBER_SYMBOLS = (1, -1, 0)
DEFAULT_SYMBOLS: dict[str, tuple[Any, Any, Any]] = {
    "flat": TEXT_SYMBOLS,
    "grid": TEXT_SYMBOLS,
    "numpy": NUMBER_SYMBOLS,
}
"""How X, O and an empty cell are written, for the shapes that take ``symbols=``."""

HOW_TO_ANSWER = (
    "return a cell index, a (row, col) pair or a cell name like 'b2', or write the stone "
    "into the board"
)


class AdapterError(TttError, ValueError):
    """An adapter that cannot be made: an unknown shape, symbols that do not tell cells apart."""


class MoveFailure(Exception):
    """One answer that is no legal move: ``kind`` as an engine's failures, ``detail`` says
    what the agent did."""

    def __init__(self, kind: FailureKind, detail: str) -> None:
        super().__init__(kind, detail)
        self.kind = kind
        self.detail = detail


class Adapter(NamedTuple):
    """How an agent sees the board and the side to move, and how its answer is read.

    ``board``: one of :data:`BOARDS`:

    * ``"position"``: the project's :class:`Position` (cells numbered row by row from 0);
    * ``"flat"``: a list of R*C cells, row by row;
    * ``"grid"``: a list of R rows of C cells;
    * ``"numpy"``: an R x C NumPy array;
    * ``"planes"``: PettingZoo's tic-tac-toe observation, ``{"observation": array (C, R, 2),
      "action_mask": array (R*C,)}`` (int8), plane 0 the mover's stones, plane 1 the
      other's, and its action numbering: column by column, action ``col * R + row``.

    ``symbols``: how X, O and an empty cell are written (``flat``/``grid``/``numpy``);
    ``side``: one of :data:`SIDES`.
    """

    board: str = "position"
    symbols: tuple[Any, Any, Any] | None = None
    side: str | None = None

    @classmethod
    def make(
        cls,
        board: str | None = None,
        symbols: Sequence[Any] | Mapping[Any, Any] | None = None,
        side: str | None = None,
    ) -> Adapter:
        """A checked adapter; ``board`` defaults to ``"position"``, ``symbols`` to the
        shape's defaults (:data:`DEFAULT_SYMBOLS`). ``symbols`` is three symbols in the order
        X, O, empty, or a mapping that names them (:func:`symbols_of`)."""
        board = "position" if board is None else str(board).lower()
        if board not in BOARDS:
            raise AdapterError(f"board {board!r} is not one of {', '.join(BOARDS)}")
        if side not in SIDES:
            raise AdapterError(f"side {side!r} is not one of None, 'name', 'symbol'")
        if symbols is not None:
            if board not in DEFAULT_SYMBOLS:
                raise AdapterError(
                    f"the {board} board has symbols of its own; symbols= applies to "
                    f"{', '.join(DEFAULT_SYMBOLS)}"
                )
            symbols = symbols_of(symbols)
            if len({_symbol_key(s) for s in symbols}) != 3:
                raise AdapterError(f"symbols={symbols!r}: X, O and empty must differ")
        elif board in DEFAULT_SYMBOLS:
            symbols = DEFAULT_SYMBOLS[board]
        if side == "symbol" and symbols is None:
            raise AdapterError(f"side='symbol' needs symbols, which the {board} board has not")
        return cls(board, symbols, side)

    # -- the board, handed over --------------------------------------------------------------

    def encode(self, position: Position) -> Any:
        """``position`` in this adapter's shape (a new object each time)."""
        if self.board == "position":
            return position
        rules = position.rules
        if self.board == "planes":
            import numpy as np

            mine = position.x if position.x_to_move else position.o
            theirs = position.o if position.x_to_move else position.x
            observation = np.zeros((rules.cols, rules.rows, 2), dtype=np.int8)
            mask = np.zeros(rules.cells, dtype=np.int8)
            for cell in range(rules.cells):
                row, col = divmod(cell, rules.cols)
                observation[col, row, 0] = mine >> cell & 1
                observation[col, row, 1] = theirs >> cell & 1
            if not position.is_terminal:
                for cell in position.legal_moves():
                    mask[self.action_of(rules, cell)] = 1
            return {"observation": observation, "action_mask": mask}
        assert self.symbols is not None
        x, o, empty = self.symbols
        flat = [
            x if c == "x" else o if c == "o" else empty
            for c in map(position.cell, range(rules.cells))
        ]
        if self.board == "flat":
            return flat
        grid = [flat[row * rules.cols : (row + 1) * rules.cols] for row in range(rules.rows)]
        if self.board == "grid":
            return grid
        import numpy as np

        return np.array(grid)

    def side_of(self, position: Position) -> Any:
        """What the agent is handed besides the board, or ``None`` for nothing."""
        if self.side == "name":
            return position.to_move.upper()
        if self.side == "symbol":
            assert self.symbols is not None
            return self.symbols[0 if position.x_to_move else 1]
        return None

    def action_of(self, rules: Any, cell: int) -> int:
        """A cell as this board numbers it (PettingZoo's planes: column by column)."""
        if self.board != "planes":
            return cell
        row, col = divmod(cell, rules.cols)
        return col * rules.rows + row

    def cell_of(self, rules: Any, index: int) -> int:
        """The cell of an index in this board's numbering (the inverse of :meth:`action_of`)."""
        if self.board != "planes":
            return index
        col, row = divmod(index, rules.rows)
        return row * rules.cols + col

    # -- the answer, read back ---------------------------------------------------------------

    def decode(self, position: Position, handed: Any, pristine: Any, answer: Any) -> int:
        """The cell the agent played, from its ``answer`` and what it did to ``handed`` (a
        copy of which, taken before the call, is ``pristine``); :class:`MoveFailure` if it
        is no legal move. An answer and a board changed elsewhere disagree: garbage."""
        rules = position.rules
        if answer is None:
            cell = self._written(position, handed, pristine)
        elif isinstance(answer, (bool,)) or _is_numpy_bool(answer):
            raise MoveFailure(FailureKind.ILLEGAL, f"returned {answer!r}, a bool, not a move")
        elif isinstance(answer, (bytes, bytearray, memoryview)):
            raise MoveFailure(
                FailureKind.GARBAGE,
                f"returned {_short(answer)}, bytes, not a move: {HOW_TO_ANSWER}",
            )
        elif isinstance(answer, str):
            try:
                cell = rules.parse_cell(answer)
            except IllegalMoveError:
                raise MoveFailure(
                    FailureKind.ILLEGAL if _looks_like_cell(answer) else FailureKind.GARBAGE,
                    f"returned {_short(answer)}, not a cell of the {rules.rows}x{rules.cols} board",
                ) from None
        else:
            cell = self._from_number_or_pair(rules, answer)
        if answer is not None and self.board in DEFAULT_SYMBOLS:
            self._unwritten_but(position, handed, pristine, cell)
        if (position.occupied >> cell) & 1:
            raise MoveFailure(
                FailureKind.ILLEGAL, f"played {rules.cell_name(cell)}, which is taken in {position}"
            )
        return cell

    def _unwritten_but(self, position: Position, handed: Any, pristine: Any, cell: int) -> None:
        """Refuse an answer of ``cell`` beside a board changed anywhere else (a stone written
        into one cell while another is answered), or changed in ``cell`` to another symbol
        than the mover's."""
        rules = position.rules
        changed = self._changes(rules, handed, pristine)
        if changed is None:
            raise MoveFailure(
                FailureKind.GARBAGE,
                f"returned {rules.cell_name(cell)} and changed the shape of the board it was "
                f"handed",
            )
        assert self.symbols is not None
        mover = self.symbols[0 if position.x_to_move else 1]
        others = [c for c, _ in changed if c != cell]
        if others:
            names = ", ".join(rules.cell_name(c) for c in others)
            raise MoveFailure(
                FailureKind.GARBAGE,
                f"returned {rules.cell_name(cell)} but changed {names} in the board it was "
                f"handed: answer the move, or write it into the board, not both",
            )
        if changed and _symbol_key(changed[0][1]) != _symbol_key(mover):
            raise MoveFailure(
                FailureKind.GARBAGE,
                f"returned {rules.cell_name(cell)} but wrote {_short(changed[0][1])} there, "
                f"not {position.to_move.upper()}'s {mover!r}",
            )

    def _changes(self, rules: Any, handed: Any, pristine: Any) -> list[tuple[int, Any]] | None:
        """The cells of the handed board that differ from ``pristine``, with what is in them
        now; ``None`` if the board lost its shape."""
        before, after = _cells_of(self.board, pristine), _cells_of(self.board, handed)
        if before is None or after is None or len(after) != rules.cells:
            return None
        return [
            (c, after[c])
            for c in range(rules.cells)
            if _symbol_key(before[c]) != _symbol_key(after[c])
        ]

    def _from_number_or_pair(self, rules: Any, answer: Any) -> int:
        try:
            index = operator.index(answer)
        except TypeError:
            index = None
        if index is not None:
            cells = rules.cells
            if not 0 <= index < cells:
                raise MoveFailure(
                    FailureKind.ILLEGAL,
                    f"returned {answer!r}, off the board (cells 0..{cells - 1})",
                )
            return self.cell_of(rules, index)
        pair = _pair(answer)
        if pair is None:
            raise MoveFailure(
                FailureKind.GARBAGE,
                f"returned {_short(answer)} ({type(answer).__name__}), not a move: {HOW_TO_ANSWER}",
            )
        row, col = pair
        if not (0 <= row < rules.rows and 0 <= col < rules.cols):
            raise MoveFailure(
                FailureKind.ILLEGAL,
                f"returned (row, col) {pair!r}, off the {rules.rows}x{rules.cols} board",
            )
        return row * rules.cols + col

    def _written(self, position: Position, handed: Any, pristine: Any) -> int:
        """The one cell the agent wrote its stone into."""
        rules = position.rules
        if self.board in ("position", "planes"):
            raise MoveFailure(FailureKind.GARBAGE, f"returned None, not a move: {HOW_TO_ANSWER}")
        assert self.symbols is not None
        changes = self._changes(rules, handed, pristine)
        if changes is None:
            raise MoveFailure(
                FailureKind.GARBAGE,
                "returned None and changed the shape of the board it was handed",
            )
        changed = [c for c, _ in changes]
        if not changed:
            raise MoveFailure(
                FailureKind.GARBAGE,
                f"returned None and wrote no stone into the board: {HOW_TO_ANSWER}",
            )
        if len(changed) > 1:
            names = ", ".join(rules.cell_name(c) for c in changed)
            raise MoveFailure(
                FailureKind.GARBAGE, f"returned None and changed {len(changed)} cells ({names})"
            )
        ((cell, written),) = changes
        mover = self.symbols[0 if position.x_to_move else 1]
        if _symbol_key(written) != _symbol_key(mover):
            raise MoveFailure(
                FailureKind.ILLEGAL,
                f"wrote {_short(written)} into {rules.cell_name(cell)}, but "
                f"{position.to_move.upper()} (written {mover!r}) is to move",
            )
        if (position.occupied >> cell) & 1:
            raise MoveFailure(
                FailureKind.ILLEGAL,
                f"wrote over {rules.cell_name(cell)}, which is taken in {position}",
            )
        return cell


def symbols_of(symbols: Sequence[Any] | Mapping[Any, Any]) -> tuple[Any, Any, Any]:
    """The symbols of X, O and an empty cell, in that order: from a sequence of three as it
    is, from a mapping of the names ``x``, ``o``, ``empty`` to symbols (``{"x": 2, "o": 1,
    "empty": 0}``) or of symbols to those names (``{2: "x", 1: "o", 0: "empty"}``), the names
    in any case. Anything else (a set, a string, a mapping of other keys) is refused in one
    line naming ``symbols=``: an order must be certain."""
    if isinstance(symbols, Mapping):
        names = {"x": 0, "o": 1, "empty": 2}

        def name(key: Any) -> int | None:
            return names.get(key.lower()) if isinstance(key, str) else None

        for pairs in (symbols.items(), ((v, k) for k, v in symbols.items())):
            placed = {name(key): symbol for key, symbol in pairs}
            if len(symbols) == 3 and set(placed) == {0, 1, 2}:
                return placed[0], placed[1], placed[2]
        raise AdapterError(
            f"symbols={_short(symbols)}: a mapping names the symbols of x, o and empty, "
            f"e.g. {{'x': 1, 'o': 2, 'empty': 0}}"
        )
    if isinstance(symbols, (set, frozenset)):
        raise AdapterError(
            f"symbols={_short(symbols)}: a set has no order; give X, O and empty in a tuple "
            f"(e.g. ('X', 'O', ' ')) or a mapping ({{'x': 1, 'o': 2, 'empty': 0}})"
        )
    if isinstance(symbols, (str, bytes)) or not isinstance(symbols, Sequence):
        raise AdapterError(
            f"symbols={_short(symbols)}: give three values for X, O and an empty cell, e.g. "
            f"('X', 'O', ' ') or {{'x': 1, 'o': 2, 'empty': 0}}"
        )
    if len(symbols) != 3:
        raise AdapterError(
            f"symbols={_short(symbols)}: give three, for X, O and an empty cell, "
            f"e.g. ('X', 'O', ' ') or (1, 2, 0)"
        )
    return symbols[0], symbols[1], symbols[2]


class CallableAgent(Agent):
    """A function (or an object's method) that plays moves on a board of its own shape,
    as an :class:`Agent`: each move is encoded, the function called, its answer decoded; a
    failure raises :class:`EngineFailure`, which the audit counts and goes on.

    With a ``timeout`` (seconds per move) the agent runs in a child process of its own
    (:class:`~ttt_solve.agents.isolation.AgentProcess`), which is killed when its time is up:
    the limit holds whatever the agent's code does, and nothing it does (``os._exit`` from a
    thread, any exception, ``os.chdir``) reaches this process. Without one it runs in this
    process, as trusted code: its exceptions (``KeyboardInterrupt`` too, where no Ctrl-C came)
    and ``sys.exit``/``os._exit`` in its own thread are failures, and its ``os.chdir`` is
    undone after each move, but nothing bounds its time, and ``os._exit`` from a thread of its
    own ends this process.

    ``move`` is called as ``move(board)``, or ``move(board, side)`` when the adapter hands the
    side to move. ``spec`` names the agent in reports (by default its qualified name).
    ``board_named``: whether the caller chose the board; a function handed the default
    ``Position`` that reads it as a list, an array or a dict was given no ``board=``, which is
    the caller's mistake, not the agent's: :class:`BoardNotNamedError`, not a failed move.
    """

    name = "callable"

    def __init__(
        self,
        rng: random.Random,
        move: Callable[..., Any],
        adapter: Adapter | None = None,
        *,
        book: Book | None = None,
        spec: str | None = None,
        timeout: float | None = None,
        memory: float | None = DEFAULT_MEMORY_MIB,
        board_named: bool = True,
    ) -> None:
        super().__init__(rng, book=book, spec=spec or describe(move))
        self.move = move
        self.adapter = adapter or Adapter.make()
        self.timeout = timeout
        self.board_named = board_named
        self.process: AgentProcess | None = None
        if timeout is not None:
            from ttt_solve.agents.isolation import AgentProcess

            self.process = AgentProcess(self.spec, self.play, rng, check_memory(memory))

    def search(self, position: Position) -> int:
        try:
            if self.process is not None:
                return self.process.move(position, self.timeout)
            return self.play(position)
        except EngineFailure as failure:
            if not self.board_named and read_another_board(failure.detail):
                raise BoardNotNamedError(
                    f"{failure.detail.strip()}: {self.spec} was handed the project's Position, "
                    f"as no board= was given; give board='flat', 'grid', 'numpy' or 'planes' "
                    f"as it reads its board"
                ) from None
            raise

    def play(self, position: Position) -> int:
        """The move in this process: the call, its answer read back, any failure raised as
        :class:`EngineFailure`; the user's Ctrl-C goes on up (``plugin_code`` tells it from a
        ``KeyboardInterrupt`` the agent raised, which is a failure)."""
        adapter = self.adapter
        from ttt_solve.agents.plugin import PluginFailedError, plugin_code

        try:
            handed = adapter.encode(position)
            pristine = _snapshot(adapter.board, handed)
            arguments = (handed,) if adapter.side is None else (handed, adapter.side_of(position))
            with _seeded_globals(self.rng):
                # the answer is read inside too: its __index__ and the like are the agent's code
                return plugin_code(
                    self.spec,
                    lambda: adapter.decode(position, handed, pristine, self.move(*arguments)),
                )
        except MoveFailure as failure:
            raise self.failure(position, failure.kind, failure.detail) from None
        except PluginFailedError as error:
            raise self.failure(position, FailureKind.CRASH, error.did) from None
        except KeyboardInterrupt:
            if self.process is None:
                raise
            raise self.failure(position, FailureKind.CRASH, "raised KeyboardInterrupt") from None
        except SystemExit:
            raise  # plugin_code lets it through only in a process the agent forked: it ends
        except BaseException as error:  # noqa: BLE001 - the agent's own code ran: say what
            raise self.failure(position, FailureKind.CRASH, _raised(error)) from None

    def failure(self, position: Position, kind: FailureKind, detail: str) -> EngineFailure:
        """The failure of one move, its detail naming the agent."""
        return EngineFailure(
            kind, position.rules, position.x, position.o, f"{self.spec} {detail}", self.spec
        )

    def close(self) -> None:
        """End the agent's child process, if it has one (a later move starts another)."""
        if self.process is not None:
            self.process.close()


class BoardNotNamedError(AdapterError):
    """A function given no ``board=`` read the ``Position`` it was handed as another board."""


_OTHER_BOARD = re.compile(
    r"raised (TypeError: 'Position' object (?:is not|does not)"
    r"|AttributeError: 'Position' object has no attribute '(\w+)')"
)


def read_another_board(detail: str) -> bool:
    """Whether a failure's ``detail`` says the agent treated a ``Position`` as a list, an
    array or a dict: iterated it, indexed it, wrote into it, or asked it for a method of
    theirs (an attribute of ``Position``'s own misspelt is the agent's failure)."""
    found = _OTHER_BOARD.search(detail)
    if found is None:
        return False
    attribute = found.group(2)
    if attribute is None:
        return True
    import numpy as np

    boards: tuple[Any, ...] = (list, dict, np.ndarray)
    return any(hasattr(board, attribute) for board in boards)


def describe(move: Callable[..., Any]) -> str:
    """A name for a function or bound method: its qualified name (``MCTS.search``)."""
    return str(getattr(move, "__qualname__", None) or getattr(move, "__name__", None) or move)


# -- helpers ---------------------------------------------------------------------------------


class _seeded_globals:  # noqa: N801 - used as a context manager, named like one
    """Seed :mod:`random` and NumPy's global generator from ``rng`` for one move, then put
    both back as they were."""

    def __init__(self, rng: random.Random) -> None:
        # From the generator's state, without drawing from it: an agent that also draws from
        # its own generator makes the same draws as without this. (The state's integers
        # alone: their hash is the same in every process, None's is not before Python 3.12.)
        self.seed = hash(rng.getstate()[1]) & 0xFFFF_FFFF

    def __enter__(self) -> None:
        import numpy as np

        self.saved = random.getstate(), np.random.get_state()
        random.seed(self.seed)
        np.random.seed(self.seed)

    def __exit__(self, *exc: object) -> None:
        import numpy as np

        random.setstate(self.saved[0])
        np.random.set_state(self.saved[1])


def _snapshot(board: str, handed: Any) -> Any:
    """A copy of the board handed to the agent, to see what it wrote (none for immutables)."""
    if board == "position":
        return handed
    return copy.deepcopy(handed)


def _cells_of(board: str, handed: Any) -> list[Any] | None:
    """The cells of a handed board, row by row, or ``None`` if it lost its shape."""
    try:
        if board == "flat":
            return list(handed)
        if board == "grid":
            return [cell for row in handed for cell in row]
        if board == "numpy":
            return list(handed.reshape(-1).tolist())
    except (TypeError, AttributeError, ValueError):
        return None
    return None


def _symbol_key(symbol: Any) -> Any:
    """A symbol as compared: NumPy scalars as Python values, ``1`` apart from ``True``."""
    item = getattr(symbol, "item", None)
    value = item() if callable(item) else symbol
    return (type(value) is bool, value)


def _is_numpy_bool(answer: Any) -> bool:
    return type(answer).__name__ == "bool_"


def _pair(answer: Any) -> tuple[int, int] | None:
    """``(row, col)`` from a pair of whole numbers (a tuple, a list, an array of two)."""
    try:
        items = list(answer)
    except TypeError:
        return None
    if len(items) != 2 or any(isinstance(v, bool) or _is_numpy_bool(v) for v in items):
        return None
    try:
        return operator.index(items[0]), operator.index(items[1])
    except TypeError:
        return None


def _looks_like_cell(text: str) -> bool:
    token = text.strip().lower()
    return token.isdigit() or (len(token) >= 2 and token[0].isalpha() and token[1:].isdigit())


def _raised(error: BaseException) -> str:
    """``raised ValueError: its message`` on one line; an exception whose ``str`` fails is
    named by its type alone."""
    try:
        message = str(error)
    except Exception:  # noqa: BLE001 - the agent's own exception class
        message = "(its message cannot be shown)"
    return " ".join(f"raised {type(error).__name__}: {message}".split())


def _short(answer: Any) -> str:
    text = repr(answer)
    return text if len(text) <= 40 else text[:37] + "..."
