"""The rules of an (R, C, k) game: board shape, winning lines, cell names, symmetries.

A :class:`Rules` value is computed once and shared by every position of its game. Cells are
numbered row-major from the top-left, ``0 .. R*C-1``; a set of cells is an int bitmask with
bit ``i`` for cell ``i``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from ttt_solve.solver.errors import IllegalMoveError, InvalidRulesError

MAX_SIDE = 26
"""Columns are named by one letter, so no side may exceed 26."""

KEY_CELLS_LIMIT = 31
"""A packed position (two bitboards of ``R*C`` bits) fits a signed 64-bit integer up to 31 cells."""

KEY_CHUNK_BITS = 8
"""Key bits permuted by one look-up in :attr:`Rules.key_tables` (tables of 256 entries)."""
KEY_CHUNK_MASK = (1 << KEY_CHUNK_BITS) - 1

_LONGEST_CELL = 40
"""Characters a cell is read from: anything longer is no cell (``z26`` and ``675`` are the
longest names and indexes; Python refuses to read a number of thousands of digits)."""

_SIZE_RE = re.compile(r"^\s*(\d+)\s*(?:[x×*]\s*(\d+))?\s*$", re.IGNORECASE)


def parse_size(text: str) -> tuple[int, int]:
    """``"3"`` -> ``(3, 3)``; ``"4x5"`` -> ``(4, 5)`` (rows x columns)."""
    match = _SIZE_RE.match(str(text))
    if not match:
        raise InvalidRulesError(f"board size {text!r} is not N or RxC (e.g. 3 or 4x5)")
    rows = int(match.group(1))
    cols = int(match.group(2)) if match.group(2) else rows
    return rows, cols


_GAME_RE = re.compile(r"^\s*(\d+\s*(?:[x×*]\s*\d+)?)\s*(?:k\s*=?\s*(\d+))?\s*$", re.IGNORECASE)


def parse_game(text: str) -> Rules:
    """A game by name: ``"3x3k3"`` (as URLs and work folders name it), ``"4x5 k=4"`` (as
    :attr:`Rules.name` writes it), ``"3x3"`` or ``"3"`` (k: the shorter side, as ``--win``
    defaults to)."""
    match = _GAME_RE.match(str(text))
    if match is None:
        raise InvalidRulesError(
            f"{text!r} is not a game: write rows x columns k in a row, like 3x3k3 or 4x5k4"
        )
    rows, cols = parse_size(match.group(1))
    k = int(match.group(2)) if match.group(2) else min(rows, cols)
    return Rules(rows, cols, k)


def _line_masks(rows: int, cols: int, k: int) -> tuple[int, ...]:
    masks = []
    for r in range(rows):
        for c in range(cols):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                end_r, end_c = r + dr * (k - 1), c + dc * (k - 1)
                if 0 <= end_r < rows and 0 <= end_c < cols:
                    mask = 0
                    for i in range(k):
                        mask |= 1 << ((r + dr * i) * cols + c + dc * i)
                    masks.append(mask)
    return tuple(sorted(set(masks)))


def _symmetries(rows: int, cols: int) -> tuple[tuple[int, ...], ...]:
    """Cell permutations ``perm[cell] -> image cell``; identity first."""
    n = rows
    maps: list[Callable[[int, int], tuple[int, int]]] = [
        lambda r, c: (r, c),
        lambda r, c: (r, cols - 1 - c),  # mirror left-right
        lambda r, c: (rows - 1 - r, c),  # mirror top-bottom
        lambda r, c: (rows - 1 - r, cols - 1 - c),  # half turn
    ]
    if rows == cols:
        maps += [
            lambda r, c: (c, r),  # main diagonal
            lambda r, c: (n - 1 - c, n - 1 - r),  # anti-diagonal
            lambda r, c: (c, n - 1 - r),  # quarter turn clockwise
            lambda r, c: (n - 1 - c, r),  # quarter turn anticlockwise
        ]
    perms = []
    for f in maps:
        perm = []
        for cell in range(rows * cols):
            r2, c2 = f(*divmod(cell, cols))
            perm.append(r2 * cols + c2)
        perms.append(tuple(perm))
    return tuple(perms)


@dataclass(frozen=True)
class Rules:
    """An R-row, C-column board where ``k`` in a row (any direction) wins; X moves first.

    >>> Rules(3, 3, 3).cells, len(Rules(3, 3, 3).lines), len(Rules(3, 4, 3).symmetries)
    (9, 8, 4)
    """

    rows: int
    cols: int
    k: int
    cells: int = field(init=False, repr=False, compare=False)
    full: int = field(init=False, repr=False, compare=False)
    lines: tuple[int, ...] = field(init=False, repr=False, compare=False)
    lines_through: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)
    symmetries: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("rows", "cols", "k"):
            if not isinstance(getattr(self, name), int) or isinstance(getattr(self, name), bool):
                raise InvalidRulesError(
                    f"{name} must be a whole number, got {getattr(self, name)!r}"
                )
        if not (1 <= self.rows <= MAX_SIDE and 1 <= self.cols <= MAX_SIDE):
            raise InvalidRulesError(
                f"board {self.rows}x{self.cols} is not supported: each side must be 1..{MAX_SIDE}"
            )
        if not 1 <= self.k <= max(self.rows, self.cols):
            raise InvalidRulesError(
                f"win length k={self.k} is impossible on a {self.rows}x{self.cols} board: "
                f"need 1 <= k <= {max(self.rows, self.cols)}"
            )
        cells = self.rows * self.cols
        lines = _line_masks(self.rows, self.cols, self.k)
        through = tuple(tuple(m for m in lines if m >> c & 1) for c in range(cells))
        object.__setattr__(self, "cells", cells)
        object.__setattr__(self, "full", (1 << cells) - 1)
        object.__setattr__(self, "lines", lines)
        object.__setattr__(self, "lines_through", through)
        object.__setattr__(self, "symmetries", _symmetries(self.rows, self.cols))

    def __reduce__(self) -> tuple[type[Rules], tuple[int, int, int]]:
        # Pickle the three numbers; the derived tables are rebuilt (or rebuilt lazily).
        return (Rules, (self.rows, self.cols, self.k))

    def as_dict(self) -> dict[str, int]:
        """The game as the JSON answers name it: ``{"rows": R, "cols": C, "k": k}``."""
        return {"rows": self.rows, "cols": self.cols, "k": self.k}

    @classmethod
    def from_size(cls, size: str, k: int) -> Rules:
        """Rules from a ``--size`` string (``3`` or ``4x5``) and a win length."""
        rows, cols = parse_size(size)
        return cls(rows, cols, k)

    @property
    def size(self) -> str:
        """The ``--size`` spelling: ``3`` for a square board, ``4x5`` otherwise."""
        return str(self.rows) if self.rows == self.cols else f"{self.rows}x{self.cols}"

    @property
    def name(self) -> str:
        """A human label: ``3x3 k=3``."""
        return f"{self.rows}x{self.cols} k={self.k}"

    @property
    def fits_key(self) -> bool:
        """Whether positions of this board pack into a signed 64-bit key (books need it)."""
        return self.cells <= KEY_CELLS_LIMIT

    def cell_name(self, cell: int) -> str:
        """``0`` -> ``a1``: column letter, then 1-based row from the top."""
        row, col = divmod(cell, self.cols)
        return f"{chr(ord('a') + col)}{row + 1}"

    def parse_cell(self, text: str) -> int:
        """A cell from its name (``b2``) or its 0-based row-major index (``4``)."""
        token = str(text).strip().lower()
        if len(token) > _LONGEST_CELL:  # and int() refuses numbers of thousands of digits
            raise IllegalMoveError(
                f"{token[:20]!r}... ({len(token):,} characters) is not a cell: use a "
                f"name like b2 or an index 0..{self.cells - 1}"
            )
        if token.isascii() and token.isdigit():  # not "²": int() would refuse it unhelpfully
            cell = int(token)
            if cell < self.cells:
                return cell
            raise IllegalMoveError(
                f"cell index {token} is off the {self.rows}x{self.cols} board (0..{self.cells - 1})"
            )
        match = re.fullmatch(r"([a-z])([0-9]+)", token)
        if match:
            col = ord(match.group(1)) - ord("a")
            row = int(match.group(2)) - 1
            if 0 <= col < self.cols and 0 <= row < self.rows:
                return row * self.cols + col
            raise IllegalMoveError(
                f"cell {text!r} is off the {self.rows}x{self.cols} board "
                f"(a1..{self.cell_name(self.cells - 1)})"
            )
        raise IllegalMoveError(
            f"{text!r} is not a cell: use a name like b2 or an index 0..{self.cells - 1}"
        )

    def has_line(self, stones: int) -> bool:
        """Whether the stone set holds a complete line."""
        for line in self.lines:  # a loop that stops at the first: twice as fast as any()
            if stones & line == line:
                return True
        return False

    def wins_through(self, stones: int, cell: int) -> bool:
        """Whether ``stones`` complete a line through ``cell`` (the test after a move)."""
        return any(stones & m == m for m in self.lines_through[cell])

    @cached_property
    def key_tables(self) -> tuple[tuple[tuple[int, ...], ...], ...]:
        """``[symmetry][chunk][byte]``: the image under a symmetry of 8 bits of a packed key
        (bits ``8 * chunk ..``), made on first use. Bit ``i`` of X and bit ``cells + i`` of O
        move together, and a cell set is a key without O stones, so these tables serve both; a
        permutation costs one table look-up per 8 bits instead of a loop over cells."""
        key_bits = 2 * self.cells
        tables = []
        for perm in self.symmetries:
            bit_image = perm + tuple(self.cells + image for image in perm)
            chunks = []
            for first_bit in range(0, key_bits, KEY_CHUNK_BITS):
                table = [0] * (1 << KEY_CHUNK_BITS)
                # A byte's image: its lowest bit's image joined to that of the rest of the byte.
                for byte in range(1, len(table)):
                    bit = first_bit + (byte & -byte).bit_length() - 1
                    image = 1 << bit_image[bit] if bit < key_bits else 0
                    table[byte] = table[byte & (byte - 1)] | image
                chunks.append(tuple(table))
            tables.append(tuple(chunks))
        return tuple(tables)

    @cached_property
    def bit_images(self) -> tuple[tuple[int, ...], ...]:
        """``[bit][symmetry]``: the image of the single packed-key bit ``bit`` (a stone: bit
        ``cell`` for X, ``cells + cell`` for O) under each symmetry, from :attr:`key_tables`.
        A child's image is its parent's image OR its new stone's, so these give the canonical
        keys of a position's children without canonicalising each."""
        tables = self.key_tables
        return tuple(
            tuple(table[bit // KEY_CHUNK_BITS][1 << bit % KEY_CHUNK_BITS] for table in tables)
            for bit in range(2 * self.cells)
        )

    @cached_property
    def inverses(self) -> tuple[int, ...]:
        """``inverses[s]``: the index of the symmetry that undoes symmetry ``s``."""
        perms = self.symmetries
        return tuple(
            next(
                i
                for i, other in enumerate(perms)
                if all(other[perm[c]] == c for c in range(self.cells))
            )
            for perm in perms
        )

    def permute(self, bits: int, symmetry: int) -> int:
        """The image of a cell set, or of a packed key, under one symmetry."""
        image = 0
        for table in self.key_tables[symmetry]:
            if not bits:
                break
            image |= table[bits & KEY_CHUNK_MASK]
            bits >>= KEY_CHUNK_BITS
        return image

    def inverse(self, symmetry: int) -> int:
        """The index of the symmetry that undoes ``symmetry``."""
        return self.inverses[symmetry]

    def canonical(self, x: int, o: int) -> tuple[int, int]:
        """``(canonical key, symmetry)`` of the position with these stones: the smallest packed
        key ``x | o << cells`` among its images, and the first symmetry that gives it."""
        key = x | o << self.cells
        best_key, best_symmetry = key, 0
        for symmetry in range(1, len(self.symmetries)):
            image = self.permute(key, symmetry)
            if image < best_key:
                best_key, best_symmetry = image, symmetry
        return best_key, best_symmetry
