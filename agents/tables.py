"""Per-rules tables that the fast search loops use instead of Position objects.

A search works on raw ints: ``me`` and ``opp`` (the stones of the side to move and of its
opponent) and single-bit ints for cells. :func:`tables` builds, once per :class:`Rules`, the
line masks, the bit of every cell, a static move order (cells on the most lines first: centre,
then corners on 3x3), and for boards of at most :data:`WIN_TABLE_CELLS` cells a lookup table
``win[stones]`` that says whether a stone set holds a complete line.
"""

from __future__ import annotations

from functools import lru_cache

from ttt_solve.solver.rules import Rules

WIN_TABLE_CELLS = 20
"""Largest board with a ``win`` lookup table (2**20 bytes); larger boards test lines instead."""


class Tables:
    """Precomputed masks of one game. Read-only after construction."""

    __slots__ = (
        "rules",
        "cells",
        "full",
        "lines",
        "lines_through",
        "bits",
        "order",
        "order_bits",
        "line_count",
        "win",
        "lines_through_bit",
    )

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.cells = rules.cells
        self.full = rules.full
        self.lines = rules.lines
        self.lines_through = rules.lines_through
        self.bits = tuple(1 << c for c in range(rules.cells))
        self.lines_through_bit = {1 << c: rules.lines_through[c] for c in range(rules.cells)}
        self.line_count = tuple(len(through) for through in rules.lines_through)
        centre_r, centre_c = (rules.rows - 1) / 2, (rules.cols - 1) / 2
        # Most lines first; among equals the cell nearer the centre, then the lower index.
        self.order = tuple(
            sorted(
                range(rules.cells),
                key=lambda c: (
                    -self.line_count[c],
                    abs(c // rules.cols - centre_r) + abs(c % rules.cols - centre_c),
                    c,
                ),
            )
        )
        self.order_bits = tuple(1 << c for c in self.order)
        self.win = _win_table(rules) if rules.cells <= WIN_TABLE_CELLS else None

    def has_line(self, stones: int) -> bool:
        """Whether ``stones`` hold a complete line."""
        if self.win is not None:
            return bool(self.win[stones])
        return any(stones & m == m for m in self.lines)

    def wins_with(self, stones: int, bit: int) -> bool:
        """Whether ``stones`` (which include ``bit``) complete a line through that cell."""
        if self.win is not None:
            return bool(self.win[stones])
        for m in self.lines_through_bit[bit]:
            if stones & m == m:
                return True
        return False

    def threats(self, me: int, opp: int) -> int:
        """The mask of empty cells where ``me`` would complete a line now."""
        found = 0
        for m in self.lines:
            if m & opp:
                continue
            rest = m & ~me
            if rest and rest & (rest - 1) == 0:
                found |= rest
        return found & ~(me | opp) & self.full


def _win_table(rules: Rules) -> bytes:
    """``table[stones] == 1`` iff the stone set holds a line; built array-at-a-time."""
    import numpy as np  # here, not with the agents: their names fill help texts

    stones = np.arange(1 << rules.cells, dtype=np.int64)
    table = np.zeros(1 << rules.cells, dtype=np.uint8)
    for m in rules.lines:
        table |= ((stones & m) == m).astype(np.uint8)
    return table.tobytes()


@lru_cache(maxsize=32)
def tables(rules: Rules) -> Tables:
    """The tables of a game, built on first use and shared afterwards."""
    return Tables(rules)


def split(position) -> tuple[int, int]:  # noqa: ANN001 (a Position; avoids an import cycle)
    """``(me, opp)``: the stones of the side to move and of its opponent."""
    return (position.x, position.o) if position.x_to_move else (position.o, position.x)


def cells_of(mask: int) -> list[int]:
    """The cell indexes set in a mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
