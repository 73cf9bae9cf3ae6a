"""The record a position's stones alone give (the rules of :mod:`solver.tablebase.known`),
written once over plain ints: Python runs it for a look-up with no compiled code loaded, and
:mod:`solver.tablebase.known` compiles it for ranges of numbers.

This module imports only the standard library and the package's record codes.
"""

from __future__ import annotations

from ttt_solve.solver.tablebase.record import DECIDED, DRAW, NONE

UNKNOWN = 255
"""What :func:`known_record` returns where the stones alone do not tell: read the table."""

KNOWN_RECORDS = (NONE, DRAW, DECIDED, DECIDED + 1, DECIDED + 2, DECIDED + 3)
"""The records the rules may give (a draw only on a full board)."""


def _count_bits(stones: int) -> int:
    """The stones' number, for Numba (which has no ``int.bit_count``)."""
    count = 0
    while stones:
        stones &= stones - 1
        count += 1
    return count


_count = int.bit_count


def known_record(x: int, o: int, ply: int, cells: int, lines: tuple[int, ...], k: int) -> int:
    """The record of the position with X stones ``x`` and O stones ``o`` at ``ply`` when its
    stones alone tell it (the module's rules), else :data:`UNKNOWN`. ``lines``: the game's
    line masks (:attr:`Rules.lines`; an array of them in compiled code). One pass over the
    lines: each line's stones say whether it is held, a threat, or a pair of empty cells a
    move on either of which makes a threat on the other."""
    mover, last = (x, o) if ply % 2 == 0 else (o, x)
    empty = ((1 << cells) - 1) & ~(x | o)
    held = -1  # the stones common to the last mover's lines
    mover_threats = 0
    last_threats = 0
    partners = [0] * cells  # by cell: where a mover's move there makes threats
    for line in lines:
        mine = mover & line
        theirs = last & line
        if mine == line:
            return NONE
        if theirs == line:
            held &= line
        elif theirs == 0:
            stones = _count(mine)
            if stones == k - 1:
                mover_threats |= line & empty
            elif stones == k - 2:
                pair = line & empty
                low = pair & -pair
                partners[_count(low - 1)] |= pair ^ low
                partners[_count((pair ^ low) - 1)] |= low
        elif mine == 0 and _count(theirs) == k - 1:
            last_threats |= line & empty
    if held == 0:
        return NONE
    if held != -1:
        return DECIDED
    if ply == cells:
        return DRAW
    if mover_threats:
        return DECIDED + 1
    if _count(last_threats) >= 2:
        return DECIDED + 2
    moves = last_threats if last_threats else empty
    while moves:
        move = moves & -moves
        moves ^= move
        if _count(partners[_count(move - 1)]) >= 2:
            return DECIDED + 3
    return UNKNOWN
