"""Positions of an (R, C, k) game as two bitboards.

A :class:`Position` is an immutable value: the cells of X, the cells of O, and the
:class:`~solver.rules.Rules` they belong to. ``play(cell)`` returns a new position. The side to
move follows from the stone counts (equal: X; one more X: O).

Positions pack into one integer, ``key = x | (o << cells)``, and the **canonical key** is the
smallest key among the images of the position under the board's symmetries.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ttt_solve.solver.errors import IllegalMoveError, InvalidPositionError
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.vocabulary import Side

_EMPTY_CHARS = ".-_"
_CELL_CHARS = "xo" + _EMPTY_CHARS
_X_DIGITS = str.maketrans({"x": "1", "o": "0", **dict.fromkeys(_EMPTY_CHARS, "0")})
_O_DIGITS = str.maketrans({"x": "0", "o": "1", **dict.fromkeys(_EMPTY_CHARS, "0")})


class Position:
    """A position: X's cells, O's cells, and the rules. Immutable and hashable."""

    __slots__ = ("rules", "x", "o")

    rules: Rules
    x: int
    o: int

    def __init__(self, rules: Rules, x: int = 0, o: int = 0) -> None:
        object.__setattr__(self, "rules", rules)
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "o", o)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Position is immutable; play() returns a new one")

    def __reduce__(self) -> tuple[type[Position], tuple[Rules, int, int]]:
        # Pickle (for worker processes) through the constructor: __setattr__ refuses slots.
        return (Position, (self.rules, self.x, self.o))

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def start(cls, rules: Rules) -> Position:
        """The empty board."""
        return cls(rules)

    @classmethod
    def parse(cls, text: str, rules: Rules) -> Position:
        """A position from its string (``x.o/.x./..o``), checked to be reachable.

        Rows run from the top, separated by ``/``; cells are ``x``, ``o`` or empty (``.``,
        ``-``, ``_``), in any case. The ``/`` may be left out. Raises
        :class:`InvalidPositionError` quoting the input when the text is not a legal position.
        """
        raw = str(text)
        compact = "".join(raw.split())
        rows = compact.split("/") if "/" in compact else None
        if rows is not None:
            if len(rows) != rules.rows or any(len(row) != rules.cols for row in rows):
                shape = "/".join(str(len(row)) for row in rows)
                raise InvalidPositionError(
                    f"position {raw!r} has {len(rows)} row{'s' if len(rows) != 1 else ''} of "
                    f"{shape} cells; a {rules.rows}x{rules.cols} "
                    f"board needs {rules.rows} rows of {rules.cols}"
                )
            compact = "".join(rows)
        if len(compact) != rules.cells:
            raise InvalidPositionError(
                f"position {raw!r} has {len(compact)} cells; a {rules.rows}x{rules.cols} board "
                f"has {rules.cells}"
            )
        cells = compact.lower()
        if cells.strip(_CELL_CHARS):
            cell, char = next((c, ch) for c, ch in enumerate(cells) if ch not in _CELL_CHARS)
            raise InvalidPositionError(
                f"position {raw!r} has {char!r} at cell {cell}: use x, o, or . for empty"
            )
        # cell 0 is the lowest bit: the cells reversed, each stone a binary digit of its side
        backwards = cells[::-1]
        x = int(backwards.translate(_X_DIGITS), 2)
        o = int(backwards.translate(_O_DIGITS), 2)
        position = cls(rules, x, o)
        problem = position.illegality()
        if problem:
            raise InvalidPositionError(f"position {raw!r} is not legal: {problem}")
        return position

    @classmethod
    def from_moves(cls, rules: Rules, moves: Iterable[str | int]) -> Position:
        """The position after a sequence of moves (names like ``b2`` or indexes) from the start."""
        position = cls.start(rules)
        for move in moves:
            cell = move if isinstance(move, int) else rules.parse_cell(move)
            position = position.play(cell)
        return position

    @classmethod
    def from_key(cls, rules: Rules, key: int) -> Position:
        """The position of a packed key (no legality check)."""
        return cls(rules, key & rules.full, key >> rules.cells)

    # -- state --------------------------------------------------------------------------------

    @property
    def occupied(self) -> int:
        return self.x | self.o

    @property
    def empty(self) -> int:
        """The bitmask of empty cells."""
        return self.rules.full & ~(self.x | self.o)

    @property
    def ply(self) -> int:
        """Stones on the board: the number of moves played."""
        return self.x.bit_count() + self.o.bit_count()

    @property
    def empty_count(self) -> int:
        return self.rules.cells - self.ply

    @property
    def x_to_move(self) -> bool:
        return self.x.bit_count() == self.o.bit_count()

    @property
    def to_move(self) -> Side:
        """``Side.X`` or ``Side.O``."""
        return Side.X if self.x_to_move else Side.O

    @property
    def winner(self) -> Side | None:
        """The side that has a line, else ``None``."""
        if self.rules.has_line(self.x):
            return Side.X
        if self.rules.has_line(self.o):
            return Side.O
        return None

    @property
    def is_terminal(self) -> bool:
        """Won by either side, or the board is full."""
        return self.empty == 0 or self.winner is not None

    def legal_moves(self) -> list[int]:
        """The empty cells in index order, or ``[]`` once the game is over."""
        if self.is_terminal:
            return []
        return list(iter_cells(self.empty))

    def play(self, cell: int) -> Position:
        """The position after the side to move takes ``cell``."""
        rules = self.rules
        if not isinstance(cell, int) or not 0 <= cell < rules.cells:
            raise IllegalMoveError(f"cell {cell!r} is off the {rules.rows}x{rules.cols} board")
        bit = 1 << cell
        if (self.x | self.o) & bit:
            raise IllegalMoveError(f"cell {rules.cell_name(cell)} is already taken in {self}")
        if self.is_terminal:
            raise IllegalMoveError(f"the game is over in {self}; no move can be played")
        if self.x_to_move:
            return Position(rules, self.x | bit, self.o)
        return Position(rules, self.x, self.o | bit)

    def illegality(self) -> str | None:
        """Why this position cannot occur in a game, or ``None`` if it can."""
        nx, no = self.x.bit_count(), self.o.bit_count()
        if self.x & self.o:
            return "a cell holds both x and o"
        if no > nx:
            return f"O has {no} stones and X {nx}: O is ahead, but X moves first"
        if nx > no + 1:
            return f"X has {nx} stones and O {no}: X is more than one move ahead"
        x_won, o_won = self.rules.has_line(self.x), self.rules.has_line(self.o)
        if x_won and o_won:
            return "both players have a line"
        if x_won and nx == no:
            return "O moved after X had already won"
        if o_won and nx > no:
            return "X moved after O had already won"
        winner_stones = self.x if x_won else self.o if o_won else 0
        if winner_stones and not self._last_stone_could_win(winner_stones):
            return "the winner had a line before its last move (play went on after the win)"
        return None

    def _last_stone_could_win(self, stones: int) -> bool:
        """Some single stone, removed, leaves no line: the game ended on that stone. Such a
        stone lies on every line the stones hold, so it is in their intersection (one pass
        over the lines instead of one per stone)."""
        common = stones
        for line in self.rules.lines:
            if stones & line == line:
                common &= line
        return common != 0

    # -- keys and symmetry --------------------------------------------------------------------

    @property
    def key(self) -> int:
        """The packed key ``x | (o << cells)``."""
        return self.x | (self.o << self.rules.cells)

    def transform(self, symmetry: int) -> Position:
        """The image of this position under one of ``rules.symmetries``."""
        rules = self.rules
        return Position(rules, rules.permute(self.x, symmetry), rules.permute(self.o, symmetry))

    def image_keys(self) -> tuple[int, ...]:
        """The keys of this position's images, one for each of ``rules.symmetries`` in order
        (the same key more than once when the position is symmetric)."""
        rules, key = self.rules, self.key
        return tuple(rules.permute(key, symmetry) for symmetry in range(len(rules.symmetries)))

    def canonical(self) -> tuple[int, int]:
        """``(canonical key, symmetry)`` where ``transform(symmetry).key`` is that key."""
        return self.rules.canonical(self.x, self.o)

    @property
    def canonical_key(self) -> int:
        return self.canonical()[0]

    # -- values and text ----------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Position)
            and self.x == other.x
            and self.o == other.o
            and self.rules == other.rules
        )

    def __hash__(self) -> int:
        return hash((self.rules, self.x, self.o))

    def cell(self, index: int) -> str:
        """``"x"``, ``"o"`` or ``"."`` at one cell."""
        bit = 1 << index
        return "x" if self.x & bit else "o" if self.o & bit else "."

    def __str__(self) -> str:
        rules = self.rules
        cells, cols, x, o = rules.cells, rules.cols, self.x, self.o
        # each cell's character at once, then the rows cut out of them (a call per cell costs)
        chars = "".join(["x" if x >> c & 1 else "o" if o >> c & 1 else "." for c in range(cells)])
        return "/".join([chars[start : start + cols] for start in range(0, cells, cols)])

    def __repr__(self) -> str:
        return f"Position({self.rules.name}, {str(self)!r})"

    def _repr_svg_(self) -> str:
        """The board as SVG, for notebooks (the drawing module is imported only here)."""
        from ttt_solve.presentation import svg

        return svg.board(self)


def iter_cells(mask: int) -> Iterator[int]:
    """The cell indexes set in a bitmask, ascending."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low
