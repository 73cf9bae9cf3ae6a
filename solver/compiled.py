"""The prover's search compiled to machine code with Numba, for boards of at most 32 cells.

The algorithm, the scores and the fail-soft contract are those of the pure-Python search in
:mod:`solver.alphabeta` (its module docstring describes them); only the representation
differs, because compiled code has no big integers and no dictionaries:

* stones, empty cells and threat cells are 64-bit integers (hence at most 32 cells, so that a
  packed key, two bits per cell, fits one integer); the live-line sets are too (at most
  :data:`MAX_LINES` lines);
* the keys of all symmetric images are kept in a stack of small arrays, one row per ply of
  the current line of play, and a move ORs its precomputed bits into the next row;
* the transposition table is a pair of arrays in buckets of two slots: a key and its packed
  bounds, with the number of empty cells beside them so that the bigger subtree survives a
  collision. A lost entry costs time, never correctness (the whole key is compared).

Keys are compared as signed integers, so the canonical image chosen here may differ from
:meth:`solver.position.Position.canonical`; it only has to be the same for every image of a
position, and it never leaves this module.
"""

from __future__ import annotations

import math
import time
from collections import namedtuple
from collections.abc import Callable

import numba
import numpy as np

from ttt_solve.solver.errors import SearchTimeout
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import WIN_SCORE

MAX_CELLS = 32
MAX_LINES = 63

_OFFSET = 2048
"""Bounds are packed as ``(empties << 24) | (lower + _OFFSET) << 12 | (upper + _OFFSET)``,
never 0, so 0 marks an empty slot."""

_HISTORY_LIMIT = 1 << 29
_WEIGHT_LIMIT = (1 << 22) - 1
"""Move-order weights are capped here so that ``weight << 40`` stays within 63 bits."""
_CHECK_EVERY = 1 << 12
"""Nodes between two looks at the clock (a power of two)."""

_WIN1 = WIN_SCORE - 1
_LOSE2 = -(WIN_SCORE - 2)
_WIN3 = WIN_SCORE - 3
_LOSE4 = -(WIN_SCORE - 4)

_Search = namedtuple(
    "_Search",
    [
        "k",  # stones in a row to win
        "lines",  # int64[lines]: cell mask of each line
        "cell_lines",  # int64[cells, n]: indexes of the lines through each cell, -1 padded
        "cell_line_bits",  # int64[cells]: those lines as a bitset over line indexes
        "move_bits",  # int64[2, cells, symmetries]: a stone's bit in each image, by parity
        # of the empty-cell count (X moves when it has the parity of the cells)
        "own_weight",  # int64[k + 1]: move-order weight of a live line of mine holding i stones
        "block_weight",  # int64[k + 1]: the same for a live line of the opponent
        "threat_bonus",  # int64: move-order bonus of a move that makes a threat
        "images",  # int64[cells + 1, symmetries]: image keys along the current line of play
        "orders",  # int64[cells + 1, cells]: move-order buffers, one per ply of the line
        "table_shift",  # int64: 64 - log2(slots); a key's bucket is in its hash's top bits
        "table_keys",  # int64[slots]
        "table_bounds",  # int64[slots], 0 for an empty slot
        "history",  # int64[cells]: cut-off counts of the history heuristic
        "counters",  # int64[2]: nodes searched, and 1 once the deadline has passed
        "deadline",  # float64[1]: a time.perf_counter() value, inf for none
    ],
)


@numba.njit(cache=True)
def _popcount(x: int) -> int:
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101) >> 56 & 0xFF


@numba.njit(cache=True)
def _lowest_cell(bits: int) -> int:
    cell = 0
    while not (bits >> cell) & 1:
        cell += 1
    return cell


@numba.njit(cache=True)
def _fewest_missing(s, live: int, stones: int) -> int:
    """The fewest stones missing from one of the ``live`` lines; not below 2."""
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


@numba.njit(cache=True)
def _now() -> float:
    with numba.objmode(now="float64"):
        now = time.perf_counter()
    return now


@numba.njit(cache=True)
def _negamax(
    s,
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
    """Fail-soft negamax; the arguments are those of the pure-Python search, but for
    ``ply``, the row of ``s.images`` that holds this position's image keys."""
    counters = s.counters
    counters[0] += 1
    if counters[0] & (_CHECK_EVERY - 1) == 0 and s.deadline[0] < math.inf:
        if _now() > s.deadline[0]:
            counters[1] = 1
    if counters[1]:
        return 0
    if threats_me:
        return _WIN1
    if threats_opp and threats_opp & (threats_opp - 1):
        return _LOSE2
    high = _WIN3 if live_me and empties >= 3 else 0
    low = _LOSE4 if live_opp and empties >= 4 else 0
    if high == low:
        return 0
    if low >= beta:
        return low
    if high <= alpha:
        return high

    images = s.images
    symmetries = images.shape[1]
    key = images[ply, 0]
    for image in range(1, symmetries):
        if images[ply, image] < key:
            key = images[ply, image]
    table_keys, table_bounds = s.table_keys, s.table_bounds
    slot = _bucket(key, s.table_shift, len(table_keys))
    if table_bounds[slot + 1] != 0 and table_keys[slot + 1] == key:
        slot += 1
    if table_bounds[slot] != 0 and table_keys[slot] == key:
        entry = table_bounds[slot]
        stored = ((entry >> 12) & 4095) - _OFFSET
        if stored > low:
            low = stored
            if low >= beta:
                return low
        stored = (entry & 4095) - _OFFSET
        if stored < high:
            high = stored
            if high <= alpha:
                return high
        if low == high:
            return low
    if alpha > 0 and high > 0:
        plies = 2 * _fewest_missing(s, live_me, me) - 1
        if plies > empties:
            high = 0
        elif WIN_SCORE - plies < high:
            high = WIN_SCORE - plies
    if beta < 0 and low < 0:
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

    order = s.orders[ply]
    count = 0
    if threats_opp:
        order[0] = _lowest_cell(threats_opp)
        count = 1
    else:
        almost = s.k - 2
        dead_seen = False
        cells = s.cell_lines.shape[0]
        for c in range(cells):
            bit = 1 << c
            if not empty & bit:
                continue
            weight = 0
            made = 0
            for j in range(s.cell_lines.shape[1]):
                index = s.cell_lines[c, j]
                if index < 0:
                    break
                line = s.lines[index]
                line_bit = 1 << index
                if live_me & line_bit:
                    held = _popcount(line & me)
                    weight += s.own_weight[held]
                    if held == almost:
                        made |= line & ~me & ~bit
                if live_opp & line_bit:
                    weight += s.block_weight[_popcount(line & opp)]
            if made & (made - 1):
                # two threats at once with none to answer: a win in 3, the fastest possible
                bounds = (empties << 24) | (_WIN3 + _OFFSET) << 12 | (_WIN3 + _OFFSET)
                _store(table_keys, table_bounds, s.table_shift, key, bounds)
                return _WIN3
            if made:
                weight += s.threat_bonus
            elif not weight:
                if dead_seen:
                    continue
                dead_seen = True
            if weight > _WEIGHT_LIMIT:  # huge k only: keep the packed move key in 63 bits
                weight = _WEIGHT_LIMIT
            entry = (weight << 40) + (s.history[c] << 10) + c
            # insertion sort, best first (a few dozen moves at most)
            at = count
            while at > 0 and order[at - 1] < entry:
                order[at] = order[at - 1]
                at -= 1
            order[at] = entry
            count += 1
        for at in range(count):
            order[at] &= 1023

    move_bits = s.move_bits[empties & 1]
    child_alpha = -beta - 1 if beta > 0 else 1 - beta
    child_beta = -alpha - 1 if alpha >= 0 else 1 - alpha
    best = -WIN_SCORE - 1
    for at in range(count):
        c = order[at]
        bit = 1 << c
        mine = me | bit
        new_threats = 0
        for j in range(s.cell_lines.shape[1]):
            index = s.cell_lines[c, j]
            if index < 0:
                break
            if live_me & (1 << index):
                rest = s.lines[index] & ~mine
                if not rest & (rest - 1):
                    new_threats |= rest
        for image in range(symmetries):
            images[ply + 1, image] = images[ply, image] | move_bits[c, image]
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
        score = 1 - score if score > 0 else (-score - 1 if score < 0 else 0)
        if score > best:
            best = score
            if score > alpha:
                if score >= beta:
                    s.history[c] += empties * empties
                    if s.history[c] > _HISTORY_LIMIT:
                        for cell in range(len(s.history)):
                            s.history[cell] >>= 1
                    break
                alpha = score
                child_beta = -alpha - 1 if alpha >= 0 else 1 - alpha

    if best <= alpha0:
        high = best
    elif best >= beta:
        low = best
    else:
        low = high = best
    _store(
        table_keys,
        table_bounds,
        s.table_shift,
        key,
        (empties << 24) | (low + _OFFSET) << 12 | (high + _OFFSET),
    )
    return best


@numba.njit(cache=True)
def _bucket(key: int, shift: int, slots: int) -> int:
    """The first slot of a key's bucket of two: the top bits of a multiplicative hash, so
    that every bit of the key counts."""
    return ((key * -7046029254386353131) >> shift) & (slots - 2)


@numba.njit(cache=True)
def _store(table_keys, table_bounds, shift: int, key: int, bounds: int) -> None:
    """Store into the key's bucket: the slot holding the key, else an empty one, else the
    one holding the smaller subtree (fewer empty cells, the bits above 24 of the bounds)."""
    slot = _bucket(key, shift, len(table_keys))
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


def fits(rules: Rules) -> bool:
    """Whether the compiled search can play ``rules``."""
    return rules.cells <= MAX_CELLS and len(rules.lines) <= MAX_LINES


def make_search(
    rules: Rules, table_bits: int
) -> tuple[Callable, Callable[[], int], Callable[[float | None], None], Callable[[], None]]:
    """The compiled counterpart of :func:`solver.alphabeta._make_search`, same four callables:
    ``(search(state, alpha, beta), node_count(), set_deadline(deadline), clear())``."""
    if not fits(rules):
        raise ValueError(f"{rules.name} is too large for the compiled search")
    from ttt_solve.solver.alphabeta import BLOCK_BASE, THREAT_BONUS, WEIGHT_BASE

    cells, k = rules.cells, rules.k
    index_of = {line: index for index, line in enumerate(rules.lines)}
    through = max(len(rules.lines_through[c]) for c in range(cells))
    cell_lines = np.full((cells, max(through, 1)), -1, dtype=np.int64)
    cell_line_bits = np.zeros(cells, dtype=np.int64)
    for c in range(cells):
        for j, line in enumerate(rules.lines_through[c]):
            cell_lines[c, j] = index_of[line]
            cell_line_bits[c] |= 1 << index_of[line]
    symmetries = rules.symmetries
    move_bits = np.zeros((2, cells, len(symmetries)), dtype=np.uint64)
    x_parity = cells & 1
    for c in range(cells):
        for image, perm in enumerate(symmetries):
            move_bits[x_parity, c, image] = 1 << perm[c]
            move_bits[1 - x_parity, c, image] = 1 << (cells + perm[c])
    if table_bits < 1:
        raise ValueError(f"table_bits must be at least 1, got {table_bits}")
    slots = 1 << table_bits
    s = _Search(
        k=k,
        lines=np.array(rules.lines, dtype=np.int64),
        cell_lines=cell_lines,
        cell_line_bits=cell_line_bits,
        move_bits=move_bits.view(np.int64),
        own_weight=np.array([WEIGHT_BASE**held for held in range(k + 1)], dtype=np.int64),
        block_weight=np.array([BLOCK_BASE**held for held in range(k + 1)], dtype=np.int64),
        threat_bonus=THREAT_BONUS * WEIGHT_BASE**k,
        images=np.zeros((cells + 1, len(symmetries)), dtype=np.int64),
        orders=np.zeros((cells + 1, cells), dtype=np.int64),
        table_shift=64 - table_bits,
        table_keys=np.zeros(slots, dtype=np.int64),
        table_bounds=np.zeros(slots, dtype=np.int64),
        history=np.zeros(cells, dtype=np.int64),
        counters=np.zeros(2, dtype=np.int64),
        deadline=np.full(1, math.inf),
    )
    # Compile now (or load from Numba's cache) rather than inside the first search, whose
    # deadline is not meant to pay for it: a node with no live line returns at once.
    _negamax(s, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 1)
    s.counters[0] = 0
    width = 2 * cells
    mask = (1 << width) - 1

    def search(state, alpha: int, beta: int) -> int:
        packed = np.array(
            [state.images >> (image * width) & mask for image in range(len(symmetries))],
            dtype=np.uint64,
        )
        s.images[0] = packed.view(np.int64)
        s.counters[1] = 0
        score = _negamax(
            s,
            state.me,
            state.opp,
            state.live_me,
            state.live_opp,
            state.threats_me,
            state.threats_opp,
            state.empty,
            state.empties,
            0,
            alpha,
            beta,
        )
        if s.counters[1]:
            raise SearchTimeout(f"search passed its deadline after {int(s.counters[0]):,} nodes")
        return int(score)

    def count() -> int:
        return int(s.counters[0])

    def set_deadline(value: float | None) -> None:
        s.deadline[0] = math.inf if value is None else value

    def clear() -> None:
        s.table_keys[:] = 0
        s.table_bounds[:] = 0
        s.history[:] = 0

    return search, count, set_deadline, clear
