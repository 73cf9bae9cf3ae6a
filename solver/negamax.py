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

Only the decorator and three primitives depend on the instance: counting the bits of an
integer, reading the clock, and folding a key into 64 bits for the table's hash.

Numba's on-disk cache is keyed by this file alone: after a change to a constant imported from
:mod:`solver.search` or to :func:`solver.value.move_score`, which the compiled code bakes in,
touch this file (or clear ``__pycache__``) so that it is compiled again.
"""

from __future__ import annotations

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
    def _hash_word(key: int) -> int:
        """A key as one 64-bit word for the hash: it is one already."""
        return key

else:

    def _popcount(x: int) -> int:
        """Set bits of a non-negative integer."""
        return x.bit_count()

    def _now() -> float:
        """``time.perf_counter()``."""
        return time.perf_counter()

    def _hash_word(key: int) -> int:
        """A key folded into 64 bits for the hash, so that every cell counts on big boards;
        a key of at most 64 bits is left as it is, as in the compiled instance."""
        while key >> 64:
            key = (key & 0xFFFFFFFFFFFFFFFF) ^ (key >> 64)
        return key


@kernel
def _lowest_cell(bits: int) -> int:
    cell = 0
    while not (bits >> cell) & 1:
        cell += 1
    return cell


@kernel
def _fewest_missing(s: SearchTables, live: int, stones: int) -> int:
    """The fewest stones missing from one of the ``live`` lines (a bitset of line indexes)
    given ``stones``; not below 2, where the threat rules take over."""
    need = s.k
    index = 0
    while live and need > 2:
        if live & 1:
            missing = s.k - _popcount(s.lines[index] & stones)
            if missing < need:
                need = missing
        live >>= 1
        index += 1
    return need


@kernel
def _bucket(key: int, shift: int, slots: int) -> int:
    """The first slot of a key's bucket of two: the top bits of a 64-bit multiplicative hash,
    so that every bit of the key counts. (The bits taken are those of the 64-bit product in
    both instances: only the product's low 64 bits reach them.)"""
    return ((_hash_word(key) * HASH_MULTIPLIER) >> shift) & (slots - 2)


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
    if counters[0] & (CHECK_EVERY - 1) == 0 and _now() > s.deadline[0]:
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

    images = s.images
    symmetries = s.symmetries
    row = ply * symmetries
    key = images[row]
    for image in range(1, symmetries):
        if images[row + image] < key:
            key = images[row + image]
    table_keys, table_bounds = s.table_keys, s.table_bounds
    bucket = _bucket(key, s.table_shift, s.slots)
    slot = bucket
    if table_bounds[slot + 1] != 0 and table_keys[slot + 1] == key:
        slot += 1
    if table_bounds[slot] != 0 and table_keys[slot] == key:
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
    through = s.through
    lines, cell_lines, history = s.lines, s.cell_lines, s.history
    order = s.orders
    first = ply * cells
    count = 0
    if threats_opp:
        order[first] = _lowest_cell(threats_opp)
        count = 1
    else:
        almost = s.k - 2
        own_weight, block_weight = s.own_weight, s.block_weight
        dead_seen = False
        for c in range(cells):
            bit = 1 << c
            if not empty & bit:
                continue
            weight = 0
            made = 0
            for j in range(c * through, c * through + through):
                index = cell_lines[j]
                if index < 0:
                    break
                line = lines[index]
                line_bit = 1 << index
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
            entry = (weight << 40) + (history[c] << 10) + c
            # insertion sort, best first (a few dozen moves at most)
            at = first + count
            while at > first and order[at - 1] < entry:
                order[at] = order[at - 1]
                at -= 1
            order[at] = entry
            count += 1
        for at in range(first, first + count):
            order[at] &= 1023

    move_row = (empties & 1) * cells * symmetries
    next_row = row + symmetries
    child_alpha, child_beta = _child_window(alpha, beta)
    best = -WIN_SCORE - 1
    for at in range(first, first + count):
        c = order[at]
        bit = 1 << c
        mine = me | bit
        new_threats = 0
        for j in range(c * through, c * through + through):
            index = cell_lines[j]
            if index < 0:
                break
            if live_me & (1 << index):
                rest = lines[index] & ~mine
                if not rest & (rest - 1):
                    new_threats |= rest
        bits = move_row + c * symmetries
        for image in range(symmetries):
            images[next_row + image] = images[row + image] | s.move_bits[bits + image]
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
