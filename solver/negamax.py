"""The prover's negamax search, written once and run two ways.

The algorithm, its scores and its fail-soft contract are described in :mod:`solver.search`,
which drives it. This module is written in the subset of Python that Numba compiles (flat
1-D tables indexed with explicit strides, integer arithmetic, no dictionaries), and it exists
as two instances of this one source:

* imported normally (``ttt_solve.solver.negamax``) it is plain Python, run on lists of Python
  integers, which are unbounded: any board size;
* loaded a second time under the name :data:`solver.search.COMPILED_KERNEL`, its functions are
  compiled by ``numba.njit(cache=True)`` and run on int64 NumPy arrays: boards whose packed
  keys and line sets fit 64-bit integers.

Only the decorator and a few primitives depend on the instance, with the layout of the
image-key and move-bit tables (:class:`solver.search.SearchTables`): counting the bits of an
integer, reading the clock, the table's hash (a big key is folded into 64 bits), finding a key
in its bucket, the lines through a cell, the smallest image key, the next ply's image keys
(plain Python packs a ply's keys into one integer: one OR per move) and sorting the moves. The
plain instance does with built-ins and slices what the compiled one does in loops.

Numba's on-disk cache is keyed by this file alone: after a change to a constant imported from
:mod:`solver.search` or to :func:`solver.value.move_score`, which the compiled code bakes in,
touch this file (or clear ``__pycache__``) so that it is compiled again.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ttt_solve.solver.search import (
    BOUND_OFFSET,
    CHECK_EVERY,
    COMPILED_KERNEL,
    HASH_MULTIPLIER,
    HISTORY_LIMIT,
    LOSE2,
    LOSE4,
    WEIGHT_LIMIT,
    WIN1,
    WIN3,
    child_window,
)
from ttt_solve.solver.value import WIN_SCORE, move_score

if TYPE_CHECKING:
    from ttt_solve.solver.search import IntTable, SearchTables

COMPILED = __name__ == COMPILED_KERNEL
"""Whether this instance is the compiled one (see the module docstring)."""

_Function = TypeVar("_Function", bound=Callable[..., Any])

if COMPILED:
    import numba


def kernel(function: _Function) -> _Function:
    """Compile ``function`` with Numba in the compiled instance (cached on disk); leave it as
    it is in the plain one."""
    if COMPILED:
        return cast(_Function, numba.njit(cache=True)(function))
    return function


_move_score = kernel(move_score)
_child_window = kernel(child_window)

if COMPILED:

    @kernel
    def _popcount(x: int) -> int:
        """Set bits of a 64-bit integer (SWAR)."""
        x = x - ((x >> 1) & 0x5555555555555555)
        x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
        return (x * 0x0101010101010101) >> 56 & 0xFF

    @kernel
    def _now() -> float:
        """``time.perf_counter()``, read from compiled code."""
        with numba.objmode(now="float64"):
            now = time.perf_counter()
        return now

    @kernel
    def _bucket(key: int, shift: int, slots: int) -> int:
        """The first slot of a key's bucket of two: the top bits of a 64-bit multiplicative
        hash, so that every bit of the key counts."""
        return ((key * HASH_MULTIPLIER) >> shift) & (slots - 2)

    @kernel
    def _canonical_key(s: SearchTables, ply: int) -> int:
        """The smallest image key of the position at ``ply`` (its row of ``s.images``)."""
        images = s.images
        row = ply * s.symmetries
        key: int = images[row]
        for image in range(row + 1, row + s.symmetries):
            if images[image] < key:
                key = images[image]
        return key

    @kernel
    def _push_images(s: SearchTables, ply: int, move: int) -> None:
        """The image keys of ply ``ply + 1``: those of ``ply`` with the stone ``move`` (its
        row of ``s.move_bits``, one bit per image) added."""
        images, move_bits, symmetries = s.images, s.move_bits, s.symmetries
        row = ply * symmetries
        bits = move * symmetries
        for image in range(symmetries):
            images[row + symmetries + image] = images[row + image] | move_bits[bits + image]

    @kernel
    def _sort_moves(order: IntTable, first: int, count: int) -> None:
        """Sort the packed move keys ``order[first : first + count]`` best (largest) first,
        and keep only their cells (the low 10 bits). Insertion sort: a few dozen moves."""
        for at in range(first + 1, first + count):
            entry = order[at]
            to = at
            while to > first and order[to - 1] < entry:
                order[to] = order[to - 1]
                to -= 1
            order[to] = entry
        for at in range(first, first + count):
            order[at] &= 1023

    @kernel
    def _lines_through(s: SearchTables, cell: int) -> IntTable:
        """The rows ``(cell mask, bit in the live-line sets)`` of the lines through ``cell``."""
        return s.through[s.line_start[cell] : s.line_start[cell + 1]]

    @kernel
    def _find_slot(table_keys: IntTable, table_bounds: IntTable, bucket: int, key: int) -> int:
        """The slot of the key's bucket that holds it, or -1."""
        if table_bounds[bucket + 1] != 0 and table_keys[bucket + 1] == key:
            return bucket + 1
        if table_bounds[bucket] != 0 and table_keys[bucket] == key:
            return bucket
        return -1

else:
    _popcount = int.bit_count  # type: ignore[assignment]  # same signature, parameter named self
    """Set bits of a non-negative integer (a method of ``int``, called without a frame)."""

    def _now() -> float:
        """``time.perf_counter()``."""
        return time.perf_counter()

    def _bucket(key: int, shift: int, slots: int) -> int:
        """The first slot of a key's bucket of two, as in the compiled instance (the bits
        taken are within the product's low 64 bits); a key of more than 64 bits is first
        folded into 64 bits, so that every cell counts on big boards."""
        while key >> 64:
            key = (key & 0xFFFFFFFFFFFFFFFF) ^ (key >> 64)
        return ((key * HASH_MULTIPLIER) >> shift) & (slots - 2)

    # The list primitives below do in C (slices, ``min``, ``map``, ``sorted``) what the
    # compiled instance does in loops: a loop of Python bytecode costs far more.

    def _canonical_key(s: SearchTables, ply: int) -> int:
        """The smallest image key of the position at ``ply``: the images' keys are packed side
        by side into one integer, ``s.images[ply]``."""
        packed = s.images[ply]
        mask = s.key_mask
        key: int = min([packed >> shift & mask for shift in s.image_shifts])
        return key

    def _push_images(s: SearchTables, ply: int, move: int) -> None:
        """The image keys of ply ``ply + 1``: those of ``ply`` with the stone ``move`` added
        (``s.move_bits[move]``: its bit in every image, packed as the keys are)."""
        s.images[ply + 1] = s.images[ply] | s.move_bits[move]

    def _sort_moves(order: IntTable, first: int, count: int) -> None:
        """Sort the packed move keys ``order[first : first + count]`` best (largest) first,
        and keep only their cells (the low 10 bits)."""
        order[first : first + count] = [
            entry & 1023 for entry in sorted(order[first : first + count], reverse=True)
        ]

    def _lines_through(s: SearchTables, cell: int) -> IntTable:
        """The pairs ``(cell mask, bit in the live-line sets)`` of the lines through ``cell``."""
        return s.through[cell]

    def _find_slot(table_keys: IntTable, table_bounds: IntTable, bucket: int, key: int) -> int:
        """The slot of the key's bucket that holds it, or -1. (The slots are dictionaries
        holding only the slots written, and a key is never negative.)"""
        if table_keys.get(bucket + 1, -1) == key:
            return bucket + 1
        if table_keys.get(bucket, -1) == key:
            return bucket
        return -1


@kernel
def _fewest_missing(s: SearchTables, live: int, stones: int) -> int:
    """The fewest stones missing from one of the ``live`` lines (a bitset of line indexes)
    given ``stones``; not below 2, where the threat rules take over."""
    need = s.k
    while live and need > 2:
        line_bit = live & -live
        live ^= line_bit
        missing = s.k - _popcount(s.lines[_popcount(line_bit - 1)] & stones)
        if missing < need:
            need = missing
    return need


@kernel
def _store(table_keys: IntTable, table_bounds: IntTable, slot: int, key: int, bounds: int) -> None:
    """Store into the key's bucket (``slot`` is its first slot): the slot holding the key,
    else an empty one, else the one holding the smaller subtree (fewer empty cells, the bits
    above 24 of the bounds). The tables are passed apart, not in ``SearchTables``: a call
    then copies two arrays, not all the tables."""
    other = slot + 1
    if table_bounds[other] != 0 and table_keys[other] == key:
        slot = other
    elif (
        table_bounds[slot] != 0
        and table_keys[slot] != key
        and (table_bounds[other] == 0 or table_bounds[other] >> 24 < table_bounds[slot] >> 24)
    ):
        slot = other
    table_keys[slot] = key
    table_bounds[slot] = bounds


@kernel
def _negamax(
    s: SearchTables,
    me: int,
    opp: int,
    live_me: int,
    live_opp: int,
    threats_me: int,
    threats_opp: int,
    empty: int,
    empties: int,
    ply: int,
    alpha: int,
    beta: int,
) -> int:
    """Fail-soft negamax (contract in :mod:`solver.search`).

    ``me``/``opp``: the stones of the side to move and of the other side; ``live_*``: bitsets
    over line indexes of the lines each side can still complete (no enemy stone in them);
    ``threats_*``: each side's threat cells (all empty); ``empty``: the empty cells and
    ``empties`` their number; ``ply``: the row of ``s.images`` that holds this position's image
    keys. Past the deadline it sets ``s.counters[1]`` and returns 0 at once, all the way up.
    """
    counters = s.counters
    counters[0] += 1
    if counters[0] & (CHECK_EVERY - 1) == 0 and s.deadline[0] < math.inf:
        if _now() > s.deadline[0]:
            counters[1] = 1
    if counters[1]:
        return 0
    if threats_me:
        return WIN1
    if threats_opp and threats_opp & (threats_opp - 1):
        return LOSE2
    high = WIN3 if live_me and empties >= 3 else 0
    low = LOSE4 if live_opp and empties >= 4 else 0
    if high == low:
        return 0
    if low >= beta:
        return low
    if high <= alpha:
        return high

    key = _canonical_key(s, ply)
    table_keys, table_bounds = s.table_keys, s.table_bounds
    bucket = _bucket(key, s.table_shift, s.slots)
    slot = _find_slot(table_keys, table_bounds, bucket, key)
    if slot >= 0:
        entry: int = table_bounds[slot]
        stored = ((entry >> 12) & 4095) - BOUND_OFFSET
        if stored > low:
            low = stored
            if low >= beta:
                return low
        stored = (entry & 4095) - BOUND_OFFSET
        if stored < high:
            high = stored
            if high <= alpha:
                return high
        if low == high:
            return low
    if alpha > 0 and high > 0:
        # only a fast enough win matters (a distance probe): bound the mover's fastest win
        # by the fewest stones missing from one of its live lines
        plies = 2 * _fewest_missing(s, live_me, me) - 1
        if plies > empties:
            high = 0
        elif WIN_SCORE - plies < high:
            high = WIN_SCORE - plies
    if beta < 0 and low < 0:  # the same for the opponent's fastest win
        plies = 2 * _fewest_missing(s, live_opp, opp)
        if plies > empties:
            low = 0
        elif plies - WIN_SCORE > low:
            low = plies - WIN_SCORE
    if low >= beta or low == high:
        return low
    if high <= alpha:
        return high
    if alpha < low:
        alpha = low
    if beta > high:
        beta = high
    alpha0 = alpha

    cells = s.cells
    history = s.history
    order = s.orders
    first = ply * cells
    count = 0
    if threats_opp:
        order[first] = _popcount((threats_opp & -threats_opp) - 1)
        count = 1
    else:
        almost = s.k - 2
        own_weight, block_weight = s.own_weight, s.block_weight
        dead_seen = False
        rest = empty
        while rest:
            bit = rest & -rest
            rest ^= bit
            c = _popcount(bit - 1)  # the bit's index
            weight = 0
            made = 0
            for line, line_bit in _lines_through(s, c):
                if live_me & line_bit:
                    held = _popcount(line & me)
                    weight += own_weight[held]
                    if held == almost:
                        made |= line & ~me & ~bit
                if live_opp & line_bit:
                    weight += block_weight[_popcount(line & opp)]
            if made & (made - 1):
                # two threats at once with none to answer: the opponent blocks one, the
                # other wins in 3, the fastest possible without a threat already on board
                _store(
                    table_keys,
                    table_bounds,
                    bucket,
                    key,
                    (empties << 24) | (WIN3 + BOUND_OFFSET) << 12 | (WIN3 + BOUND_OFFSET),
                )
                return WIN3
            if made:
                weight += s.threat_bonus
            elif not weight:
                if dead_seen:
                    continue
                dead_seen = True
            if weight > WEIGHT_LIMIT:  # huge k only: keep the packed move key in 63 bits
                weight = WEIGHT_LIMIT
            order[first + count] = (weight << 40) + (history[c] << 10) + c
            count += 1
        _sort_moves(order, first, count)

    move_row = (empties & 1) * cells
    child_alpha, child_beta = _child_window(alpha, beta)
    best = -WIN_SCORE - 1
    for at in range(first, first + count):
        c = order[at]
        bit = 1 << c
        mine = me | bit
        new_threats = 0
        for line, line_bit in _lines_through(s, c):
            if live_me & line_bit:
                rest = line & ~mine
                if not rest & (rest - 1):
                    new_threats |= rest
        _push_images(s, ply, move_row + c)
        score = _negamax(
            s,
            opp,
            mine,
            live_opp & ~s.cell_line_bits[c],
            live_me,
            threats_opp & ~bit,
            new_threats,
            empty ^ bit,
            empties - 1,
            ply + 1,
            child_alpha,
            child_beta,
        )
        if counters[1]:
            return 0
        score = _move_score(score)
        if score > best:
            best = score
            if score > alpha:
                if score >= beta:
                    history[c] += empties * empties
                    if history[c] > HISTORY_LIMIT:
                        for cell in range(cells):
                            history[cell] >>= 1
                    break
                alpha = score
                child_beta = _child_window(alpha, beta)[1]

    if best <= alpha0:
        high = best
    elif best >= beta:
        low = best
    else:
        low = high = best
    _store(
        table_keys,
        table_bounds,
        bucket,
        key,
        (empties << 24) | (low + BOUND_OFFSET) << 12 | (high + BOUND_OFFSET),
    )
    return best
