"""The prover's negamax search, written once and run two ways.

The algorithm, its scores and its fail-soft contract are described in :mod:`solver.search`,
which drives it. This module is written in the subset of Python that Numba compiles (flat
1-D tables indexed with explicit strides, integer arithmetic, no dictionaries), and it exists
as two instances of this one source:

* imported normally (``ttt_solve.solver.negamax``) it is plain Python, run on lists of Python
  integers, which are unbounded: any board size;
* loaded a second time under the name :data:`solver.search.COMPILED_KERNEL`, its functions are
  compiled by ``numba.njit(cache=True)`` and run on int64 NumPy arrays: boards whose cell
  sets fit one 64-bit integer (a packed key is two of them).

Only the decorator and a few primitives depend on the instance, with the layout of the
image-key and move-bit tables (:class:`solver.search.SearchTables`): counting the bits of an
integer, reading the clock, the table's hash (a big key is folded into 64 bits), comparing,
finding and writing a key in the table, the lines through a cell, the smallest image key, the
next ply's image keys (plain Python packs a ply's keys into one integer: one OR per move) and
sorting the moves. The plain instance does with built-ins and slices what the compiled one
does in loops. The pairing finder (:func:`_find_pairing`) lives here too, so that the search
calls it at its nodes in either instance; :mod:`solver.pairing` calls the plain one. So does
the threat search (:func:`_threat_win`), which :class:`solver.search.Prover` also calls at
the root.

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
    THREAT_DEPTH,
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
    SIGN_BIT = -(1 << 63)
    """The sign bit of an int64: XORed into both sides, it turns a signed comparison into an
    unsigned one."""

    @kernel
    def _popcount(x: int) -> int:
        """Set bits of a 64-bit integer (SWAR; the masks make the arithmetic shifts of a
        negative word harmless)."""
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
    def _bucket(key: tuple[int, int], shift: int, slots: int) -> int:
        """The first slot of a key's bucket of two: the top bits of a 64-bit multiplicative
        hash of the key's two words XORed (the plain instance's fold), so that every bit of
        the key counts."""
        return (((key[0] ^ key[1]) * HASH_MULTIPLIER) >> shift) & (slots - 2)

    @kernel
    def _canonical_key(s: SearchTables, ply: int) -> tuple[int, int]:
        """The smallest image key of the position at ``ply`` (its row of ``s.images``), as
        ``(low word, high word)``, compared as an unsigned 128-bit integer: the smallest high
        word (always 0 on a board of at most 32 cells), then the smallest low word with it."""
        images, symmetries = s.images, s.symmetries
        row = 2 * ply * symmetries
        highs = row + symmetries
        high = 0
        if s.cells > 32:
            high = images[highs]
            for image in range(1, symmetries):
                if images[highs + image] ^ SIGN_BIT < high ^ SIGN_BIT:
                    high = images[highs + image]
        low = -1  # the largest unsigned word
        for image in range(symmetries):
            if images[highs + image] == high and images[row + image] ^ SIGN_BIT < low ^ SIGN_BIT:
                low = images[row + image]
        return (low, high)

    @kernel
    def _push_images(s: SearchTables, ply: int, move: int) -> None:
        """The image keys of ply ``ply + 1``: those of ``ply`` with the stone ``move`` (its
        row of ``s.move_bits``, laid out as a row of ``s.images``) added. On a board of at
        most 32 cells the high words stay 0 (the array starts zeroed): only the low words are
        written."""
        images, move_bits = s.images, s.move_bits
        words = 2 * s.symmetries
        row = ply * words
        bits = move * words
        used = s.symmetries if s.cells <= 32 else words
        for word in range(used):
            images[row + words + word] = images[row + word] | move_bits[bits + word]

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
        """The cell masks of the lines through ``cell``."""
        return s.through[s.line_start[cell] : s.line_start[cell + 1]]

    @kernel
    def _holds(table_keys: IntTable, slot: int, key: tuple[int, int]) -> bool:
        """Whether ``slot`` holds ``key`` (two words a slot)."""
        held: bool = table_keys[2 * slot] == key[0] and table_keys[2 * slot + 1] == key[1]
        return held

    @kernel
    def _put_key(table_keys: IntTable, slot: int, key: tuple[int, int]) -> None:
        """Write ``key`` into ``slot``."""
        table_keys[2 * slot] = key[0]
        table_keys[2 * slot + 1] = key[1]

    @kernel
    def _find_slot(table_keys: IntTable, table_bounds: IntTable, bucket: int, key: Any) -> int:
        """The slot of the key's bucket that holds it, or -1."""
        if table_bounds[bucket + 1] != 0 and _holds(table_keys, bucket + 1, key):
            return bucket + 1
        if table_bounds[bucket] != 0 and _holds(table_keys, bucket, key):
            return bucket
        return -1

else:
    _popcount = int.bit_count  # type: ignore[assignment]  # same signature, parameter named self
    """Set bits of a non-negative integer (a method of ``int``, called without a frame)."""

    def _now() -> float:
        """``time.perf_counter()``."""
        return time.perf_counter()

    def _bucket(key: Any, shift: int, slots: int) -> int:
        """The first slot of a key's bucket of two, as in the compiled instance (the bits
        taken are within the product's low 64 bits); a key of more than 64 bits is first
        folded into 64 bits, so that every cell counts on big boards (up to 128 bits, the
        fold is the compiled instance's XOR of the two words)."""
        while key >> 64:
            key = (key & 0xFFFFFFFFFFFFFFFF) ^ (key >> 64)
        bucket: int = ((key * HASH_MULTIPLIER) >> shift) & (slots - 2)
        return bucket

    # The list primitives below do in C (slices, ``min``, ``map``, ``sorted``) what the
    # compiled instance does in loops: a loop of Python bytecode costs far more.

    def _canonical_key(s: SearchTables, ply: int) -> Any:
        """The smallest image key of the position at ``ply``: the images' keys are packed side
        by side into one integer, ``s.images[ply]``."""
        packed = s.images[ply]
        mask = s.key_mask
        return min([packed >> shift & mask for shift in s.image_shifts])

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
        """The cell masks of the lines through ``cell``."""
        return s.through[cell]

    def _holds(table_keys: IntTable, slot: int, key: Any) -> bool:
        """Whether ``slot`` holds ``key`` (the slots are dictionaries holding only the slots
        written, and a key is never negative)."""
        return bool(table_keys.get(slot, -1) == key)

    def _put_key(table_keys: IntTable, slot: int, key: Any) -> None:
        """Write ``key`` into ``slot``."""
        table_keys[slot] = key

    def _find_slot(table_keys: IntTable, table_bounds: IntTable, bucket: int, key: Any) -> int:
        """The slot of the key's bucket that holds it, or -1 (only the keys are read: a
        read of the bounds would make the slot)."""
        if _holds(table_keys, bucket + 1, key):
            return bucket + 1
        if _holds(table_keys, bucket, key):
            return bucket
        return -1


@kernel
def _fewest_missing(s: SearchTables, stones: int, blockers: int) -> int:
    """The fewest stones missing from one of the lines that ``stones``' side can still
    complete (no stone of ``blockers`` in it); not below 2, where the threat rules take over."""
    need = s.k
    for line in s.lines:
        if not line & blockers:
            missing = s.k - _popcount(line & stones)
            if missing < need:
                need = missing
                if need <= 2:
                    break
    return need


@kernel
def _augment(slot: int, unit_cells: IntTable, owner: IntTable, visit: IntTable, stamp: int) -> bool:
    """Match ``slot`` (one of the two slots of unit ``slot >> 1``) to a free cell of its unit,
    moving other slots along an augmenting path if needed (Kuhn's algorithm); False if no path
    exists. ``visit[cell] == stamp``: the cell was tried in this attempt."""
    free = unit_cells[slot >> 1]
    while free:
        bit = free & -free
        free ^= bit
        cell = _popcount(bit - 1)
        if visit[cell] != stamp:
            visit[cell] = stamp
            if owner[cell] < 0 or _augment(owner[cell], unit_cells, owner, visit, stamp):
                owner[cell] = slot
                return True
    return False


@kernel
def _find_pairing(
    run_lines: IntTable,
    run_continues: IntTable,
    unit_cells: IntTable,
    owner: IntTable,
    visit: IntTable,
    defender: int,
    empty: int,
    empties: int,
) -> int:
    """Look for a pairing by which the side holding ``defender`` keeps the other from ever
    completing a line (:mod:`solver.pairing` tells the kind); ``empty``: the empty cells,
    ``empties`` their number. Returns the number of units when one is found (unit ``u``'s
    cells in ``unit_cells[u]``, and ``owner[cell]`` the slot ``2u`` or ``2u + 1`` a cell is
    paired for, else -1), or a negative number when none is found: ``-2 - i`` when a unit
    ending just before ``run_lines[i]`` has fewer than two empty common cells (then only a
    defender stone on a line of that run up to there can change it), else -1.

    ``run_lines``: the lines in runs (consecutive windows of one board line), and
    ``run_continues[i]`` 1 when ``run_lines[i]`` follows ``run_lines[i - 1]`` in its run.
    Greedily, consecutive lines open to the attacker form one unit while the lines' common
    cells still hold two empty ones: one pair there blocks them all. ``visit``: one entry per
    cell and a last one counting the attempts (stamps), so that it is never cleared."""
    lines = len(run_lines)
    units = 0
    covered = 0
    core = 0
    in_unit = False
    for at in range(lines + 1):
        line = 0
        blocked = True
        if at < lines:
            line = run_lines[at]
            blocked = line & defender != 0
            if (
                not blocked
                and in_unit
                and run_continues[at]
                and _popcount(core & line & empty) >= 2
            ):
                core &= line
                continue
        if in_unit:  # the unit ends: it needs two empty cells
            cells = core & empty
            if _popcount(cells) < 2:
                return -2 - at
            if 2 * units + 2 > empties:
                return -1
            unit_cells[units] = cells
            covered |= cells
            units += 1
        in_unit = not blocked
        core = line
    if _popcount(covered) < 2 * units:
        return -1
    for cell in range(len(owner)):
        owner[cell] = -1
    last = len(visit) - 1
    for slot in range(2 * units):
        visit[last] += 1
        if not _augment(slot, unit_cells, owner, visit, visit[last]):
            return -1
    return units


@kernel
def _pairing_found(s: SearchTables, defender: int, empty: int, empties: int) -> int:
    """:func:`_find_pairing` for the side holding ``defender``; one found is counted in
    ``s.counters[2]``."""
    found = _find_pairing(
        s.run_lines, s.run_continues, s.unit_cells, s.owner, s.visit, defender, empty, empties
    )
    if found >= 0:
        s.counters[2] += 1
    return found


@kernel
def _pairing(s: SearchTables, defender: int, empty: int, empties: int) -> bool:
    """Whether :func:`_find_pairing` finds a pairing for the side holding ``defender``; one
    found is counted in ``s.counters[2]``."""
    return _pairing_found(s, defender, empty, empties) >= 0


@kernel
def _pairing_within_a_move(s: SearchTables, defender: int, empty: int, empties: int) -> bool:
    """Whether the side holding ``defender``, to move, has a pairing now or after one of its
    moves (:func:`_pairing`). Trying each move here costs a pairing test per move; finding
    the move that closes the node at once spares the search below the moves tried before it.
    When the test fails on one run's lines, whose common cells lack an empty pair, only a
    move on those lines can change that (the units of the run up to there are formed the
    same otherwise): only those moves are tried."""
    found = _pairing_found(s, defender, empty, empties)
    if found >= 0:
        return True
    rest = empty
    if found <= -2:
        at = -3 - found  # the last line of the unit that failed
        rest = 0
        while True:
            rest |= s.run_lines[at]
            if not s.run_continues[at]:
                break
            at -= 1
        rest &= empty
    while rest:
        bit = rest & -rest
        rest ^= bit
        if _pairing(s, defender | bit, empty ^ bit, empties - 1):
            return True
    return False


@kernel
def _threat_cells(s: SearchTables, me: int, opp: int, empty: int) -> int:
    """The moves that make a threat for the side holding ``me``: the empty cells of its live
    lines (no stone of ``opp``) that hold ``k - 2`` of its stones."""
    almost = s.k - 2
    cells = 0
    for line in s.lines:
        if not line & opp and _popcount(line & me) == almost:
            cells |= line & empty
    return cells


@kernel
def _threats_through(s: SearchTables, cell: int, mine: int, theirs: int) -> int:
    """The threat cells of the side holding ``mine`` (its opponent holding ``theirs``) on the
    lines through ``cell``: the one empty cell of a line holding ``k - 1`` of its stones."""
    made = 0
    for line in _lines_through(s, cell):
        if not line & theirs:
            left = line & ~mine
            if left and not left & (left - 1):
                made |= left
    return made


@kernel
def _threat_win(s: SearchTables, me: int, opp: int, empty: int, limit: int) -> int:
    """A win of the side to move by continuous threats, in at most ``limit`` plies: the number
    of plies of the one found (odd), or 0 when none is found. Neither side may hold a threat
    cell (the caller's case: the mover would win at once, or have to block).

    Each move of the mover makes a threat (a line of ``k - 1`` of its stones and one empty
    cell) or two. Two different threat cells win in 3 plies: the opponent, with no threat of
    its own, blocks one and the mover takes the other. One threat cell forces the opponent's
    block there, and the sequence goes on from the position after it. When that block makes
    a threat of the opponent's, the mover must answer it: the sequence goes on only if the
    answer itself makes a threat (which wins at once if it makes two), and if the block of
    that one makes no threat in turn. The opponent may play elsewhere than a forced block,
    but then the mover wins sooner: the plies counted are an upper bound on the win's
    length. A sequence holds at most :data:`solver.search.THREAT_DEPTH` threat moves.

    Depth first, with an explicit stack (``s.threat_stack``, five entries a threat move: the
    mover's stones, the opponent's, the empty cells, the threat moves not yet tried there,
    and the plies played to get there), not recursion: Numba's cache cannot load a recursive
    function that another one calls."""
    if limit < 3:
        return 0
    stack = s.threat_stack
    stack[0] = me
    stack[1] = opp
    stack[2] = empty
    stack[3] = _threat_cells(s, me, opp, empty)
    stack[4] = 0
    depth = 0
    while depth >= 0:
        frame = 5 * depth
        untried = stack[frame + 3]
        if not untried:
            depth -= 1
            continue
        bit = untried & -untried
        stack[frame + 3] = untried ^ bit
        mine = stack[frame] | bit
        theirs = stack[frame + 1]
        plies: int = stack[frame + 4]
        made = _threats_through(s, _popcount(bit - 1), mine, theirs)
        if made & (made - 1):
            return plies + 3
        if not made or plies + 5 > limit or depth + 1 >= THREAT_DEPTH:
            continue
        theirs |= made  # the forced block
        empty = stack[frame + 2] ^ bit ^ made
        plies += 2
        counter = _threats_through(s, _popcount(made - 1), theirs, mine)
        if counter:  # the block threatens: answered by a threat, or the sequence stops
            if counter & (counter - 1):
                continue
            mine |= counter
            made = _threats_through(s, _popcount(counter - 1), mine, theirs)
            if made & (made - 1):
                return plies + 3
            if not made or plies + 5 > limit:
                continue
            if _threats_through(s, _popcount(made - 1), theirs | made, mine):
                continue
            theirs |= made
            empty ^= counter ^ made
            plies += 2
        depth += 1
        frame += 5
        stack[frame] = mine
        stack[frame + 1] = theirs
        stack[frame + 2] = empty
        stack[frame + 3] = _threat_cells(s, mine, theirs, empty)
        stack[frame + 4] = plies
    return 0


@kernel
def _store(table_keys: IntTable, table_bounds: IntTable, slot: int, key: Any, bounds: int) -> None:
    """Store into the key's bucket (``slot`` is its first slot): the slot holding the key,
    else an empty one, else the one holding the smaller subtree (fewer empty cells, the bits
    above 24 of the bounds). The tables are passed apart, not in ``SearchTables``: a call
    then copies two arrays, not all the tables."""
    other = slot + 1
    if table_bounds[other] != 0 and _holds(table_keys, other, key):
        slot = other
    elif (
        table_bounds[slot] != 0
        and not _holds(table_keys, slot, key)
        and (table_bounds[other] == 0 or table_bounds[other] >> 24 < table_bounds[slot] >> 24)
    ):
        slot = other
    _put_key(table_keys, slot, key)
    table_bounds[slot] = bounds


@kernel
def _save(s: SearchTables, bucket: int, key: Any, empties: int, low: int, high: int) -> None:
    """Store the bounds ``low <= score <= high`` of the position ``key`` (``empties`` empty
    cells) into its bucket, packed as :data:`solver.search.BOUND_OFFSET` tells."""
    _store(
        s.table_keys,
        s.table_bounds,
        bucket,
        key,
        (empties << 24) | (low + BOUND_OFFSET) << 12 | (high + BOUND_OFFSET),
    )


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

    ``me``/``opp``: the stones of the side to move and of the other side; ``live_*``: the
    number of lines each side can still complete (no enemy stone in them);
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
        plies = 2 * _fewest_missing(s, me, opp) - 1
        if plies > empties:
            high = 0
        elif WIN_SCORE - plies < high:
            high = WIN_SCORE - plies
    if beta < 0 and low < 0:  # the same for the opponent's fastest win
        plies = 2 * _fewest_missing(s, opp, me)
        if plies > empties:
            low = 0
        elif plies - WIN_SCORE > low:
            low = plies - WIN_SCORE
    if low >= beta or low == high:
        return low
    if high <= alpha:
        return high
    if s.threat_search and high > 0 and not threats_opp:
        # a win by continuous threats fast enough to reach beta: a lower bound, score >= beta
        limit = empties if beta <= 0 else WIN_SCORE - beta
        plies = _threat_win(s, me, opp, empty, limit if limit < empties else empties)
        if plies:
            counters[3] += 1
            _save(s, bucket, key, empties, WIN_SCORE - plies, high)
            return WIN_SCORE - plies
    if alpha >= 0 and high > 0 and _pairing(s, opp, empty, empties):
        # the opponent holds a pairing: the mover cannot win, score <= 0 <= alpha
        _save(s, bucket, key, empties, low, 0)
        return 0
    if beta <= 0 and low < 0 and _pairing_within_a_move(s, me, empty, empties):
        # the mover holds a pairing, or a move gives it one: the opponent cannot win, score
        # >= 0 >= beta
        _save(s, bucket, key, empties, 0, high)
        return 0
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
            for line in _lines_through(s, c):
                if not line & opp:
                    held = _popcount(line & me)
                    weight += own_weight[held]
                    if held == almost:
                        made |= line & ~me & ~bit
                if not line & me:
                    weight += block_weight[_popcount(line & opp)]
            if made & (made - 1):
                # two threats at once with none to answer: the opponent blocks one, the
                # other wins in 3, the fastest possible without a threat already on board
                _save(s, bucket, key, empties, WIN3, WIN3)
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
        closed = 0  # lines of the opponent's that this stone closes
        for line in _lines_through(s, c):
            if not line & opp:
                rest = line & ~mine
                if not rest & (rest - 1):
                    new_threats |= rest
            if not line & me:
                closed += 1
        _push_images(s, ply, move_row + c)
        score = _negamax(
            s,
            opp,
            mine,
            live_opp - closed,
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
    _save(s, bucket, key, empties, low, high)
    return best
