"""The prover's negamax search, written once and run two ways.

The algorithm, its scores and its fail-soft contract are described in :mod:`solver.prover.search`,
which drives it; the prunings and why each keeps the proof sound in docs/prover.md. This
module is written in the subset of Python that Numba compiles (flat 1-D tables indexed with
explicit strides, integer arithmetic, no dictionaries), and it exists as two instances of this
one source:

* imported normally (``ttt_solve.solver.prover.negamax``) it is plain Python, run on lists of
  Python integers, which are unbounded: any board size;
* loaded a second time under the name :data:`solver.prover.search.COMPILED_KERNEL` (this
  module's name with ``_compiled`` added), its functions are compiled by
  ``numba.njit(cache=True)`` and run on int64 NumPy arrays: boards whose cell sets fit one
  64-bit integer (a packed key is two of them).

Only the decorator and a few primitives depend on the instance, with the layout of the
image-key and move-bit tables (:class:`solver.prover.search.SearchTables`): counting the bits of an
integer, reading the clock, the table's hash (a big key is folded into 64 bits), comparing,
finding and writing a key in the table, the lines through a cell, the smallest image key, the
next ply's image keys (plain Python packs a ply's keys into one integer: one OR per move) and
sorting the moves. The plain instance does with built-ins and slices what the compiled one
does in loops.

The search reads as a few named checks, each a function of its own: the pairing finder
(:func:`_find_pairing`, which :mod:`solver.prover.pairing` also calls), the breaker's proofs
that the maker cannot win (:func:`_breaker_holds`: a pairing, the Erdős-Selfridge potential, or
a partial pairing with the potential of the lines it leaves), the threat search
(:func:`_threat_win`), the move order with vertex domination (:func:`_order_moves`), relevance
zones (:func:`_base_zone`, :func:`_map_zone`) and the transposition table (:func:`_table_find`,
:func:`_table_store`).

Numba's on-disk cache is keyed by this file alone, so every constant the compiled code bakes
in lives here (a change to one is a change to this file). The one function it compiles from
elsewhere, :func:`solver.value.move_score`, is pinned by :data:`KERNEL_DEPENDENCIES`, which a
test recomputes: a change there fails the test until the digest here is updated, which
recompiles.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

from ttt_solve.solver.value import WIN_SCORE, move_score

if TYPE_CHECKING:
    from ttt_solve.solver.prover.search import IntTable, SearchTables

COMPILED = __name__.endswith("_compiled")
"""Whether this instance is the compiled one (see the module docstring)."""

KERNEL_DEPENDENCIES = "3126249eef5c2ad9"
"""The digest of what the compiled code takes from other modules (the source of
:func:`solver.value.move_score` and ``WIN_SCORE``): see the module docstring."""

# -- constants compiled in ---------------------------------------------------------------------

WEIGHT_BASE = 4
"""Move order: a live line of the mover holding ``i`` stones weighs ``WEIGHT_BASE ** i``."""
BLOCK_BASE = 3
"""Move order: a live line of the opponent holding ``i`` stones weighs ``BLOCK_BASE ** i``."""
THREAT_BONUS = 1
"""Move order: a move that makes a threat gains ``THREAT_BONUS * WEIGHT_BASE ** k``."""
BOUND_OFFSET = 2048
"""A table entry packs ``(empties << 24) | (lower + BOUND_OFFSET) << 12 | (upper +
BOUND_OFFSET)``: never 0, so 0 marks an empty slot."""
HISTORY_LIMIT = 1 << 29
"""History counts are halved past this, so they stay below the weights in move keys."""
WEIGHT_LIMIT = (1 << 22) - 1
"""Move-order weights are capped here so that ``weight << 40`` stays within 63 bits."""
THREAT_DEPTH = 8
"""Threat search: the most threat moves of one sequence (a bound on its cost; each move
forces a reply, so a sequence is short next to the search it spares)."""
CHECK_EVERY = 1 << 12
"""Nodes between two looks at the clock (a power of two)."""
HASH_MULTIPLIER = -7046029254386353131
"""The odd 64-bit multiplier of the table's hash (as a signed 64-bit integer)."""
POTENTIAL_K_LIMIT = 48
"""The potential (a sum of ``2 ** stones`` over lines) is computed in 64-bit integers: only
for ``k`` up to this."""

WIN1 = WIN_SCORE - 1
"""A win in 1: the side to move has a threat."""
LOSE2 = -(WIN_SCORE - 2)
"""A loss in 2: the side to move faces two threats."""
WIN3 = WIN_SCORE - 3
"""The fastest win without a threat on the board."""
LOSE4 = -(WIN_SCORE - 4)
"""The fastest loss without a threat on the board."""

# -- the prunings: one row each -----------------------------------------------------------------


class Pruning(NamedTuple):
    """One pruning of the search, a row of :data:`PRUNINGS`. Its row ``i`` gives it bit ``i``
    of ``SearchTables.flags`` for its switch (:func:`flag`) and ``SearchTables.counters[
    FIRST_PRUNING + i]`` for its counter (:func:`counter`); :mod:`solver.prover.search` makes from
    the
    table the switches of ``Prunings``, the fields of ``SearchCounters`` and the words of a
    search's technique. The compiled code reads only integer constants: the ``USE_*`` and
    ``CLOSED_BY_*`` or ``*_MOVES`` constants below, each made from its row by name."""

    name: str  # its switch: a field of ``Prunings``
    counter: str  # its counter: a field of ``SearchCounters``
    technique: str  # its word in a search's technique (``SearchResult.technique``)
    classic: bool  # on in the default set, ``Prunings()``
    does: str  # what it does
    counts: str  # what its counter counts


PRUNINGS = (
    Pruning(
        "pairings",
        "pairings",
        "pairing",
        True,
        "close nodes by a pairing of the breaker's (whole)",
        "nodes closed by a pairing",
    ),
    Pruning(
        "threats",
        "threats",
        "threats",
        True,
        "close nodes by a win by continuous threats (and, in weak mode, the root)",
        "nodes closed by a win by continuous threats",
    ),
    Pruning(
        "potential",
        "potential",
        "potential",
        False,
        "close nodes by the Erdős-Selfridge potential of the maker's lines",
        "nodes closed by the potential of the maker's lines",
    ),
    Pruning(
        "partial_pairings",
        "partial_pairings",
        "partial-pairing",
        False,
        "close nodes by a pairing of some of the maker's lines with the potential of the others"
        " (a whole pairing is a case of it)",
        "nodes closed by a partial pairing and the potential of the lines it leaves",
    ),
    Pruning(
        "domination",
        "dominated",
        "domination",
        False,
        "skip a move whose live lines all pass through another cell",
        "moves skipped as dominated by another",
    ),
    Pruning(
        "zones",
        "zone_skipped",
        "zones",
        False,
        "skip the maker's moves outside the relevance zone of a refuted one (a table of 40"
        " bytes a slot instead of 24)",
        "the maker's moves skipped outside a relevance zone",
    ),
)
"""Every pruning, in the order of their counters and of their words in a technique."""

NODES = 0
"""Counter: nodes searched."""
TIMED_OUT = 1
"""Counter: 1 once the deadline has passed (the search then unwinds at once)."""
FIRST_PRUNING = 2
"""The counter of the first pruning; the others' follow it in the order of :data:`PRUNINGS`."""
COUNTERS = FIRST_PRUNING + len(PRUNINGS)
"""The number of counters."""


def _row(name: str) -> int:
    rows = [pruning.name for pruning in PRUNINGS]
    if name not in rows:
        raise ValueError(f"no pruning named {name!r} (one of {', '.join(rows)})")
    return rows.index(name)


def flag(name: str) -> int:
    """The bit of the pruning ``name``'s switch in ``SearchTables.flags``."""
    return 1 << _row(name)


def counter(name: str) -> int:
    """The index of the pruning ``name``'s counter in ``SearchTables.counters``."""
    return FIRST_PRUNING + _row(name)


def flag_and_counter(name: str) -> tuple[int, int]:
    """:func:`flag` and :func:`counter` of the pruning ``name``: the constants the compiled
    code reads, one line a pruning."""
    return flag(name), counter(name)


USE_PAIRINGS, CLOSED_BY_PAIRING = flag_and_counter("pairings")
USE_THREATS, CLOSED_BY_THREATS = flag_and_counter("threats")
USE_POTENTIAL, CLOSED_BY_POTENTIAL = flag_and_counter("potential")
USE_PARTIAL_PAIRINGS, CLOSED_BY_PARTIAL_PAIRING = flag_and_counter("partial_pairings")
USE_DOMINATION, DOMINATED_MOVES = flag_and_counter("domination")
USE_ZONES, ZONE_SKIPPED_MOVES = flag_and_counter("zones")

# -- the node stack (fields of a ply's row of ``SearchTables.nodes``) --------------------------

ME = 0
"""The stones of the side to move."""
OPP = 1
"""The stones of the other side."""
LIVE_ME = 2
"""The number of lines the side to move can still complete (no opponent stone in them)."""
LIVE_OPP = 3
"""The same for the other side."""
THREATS_ME = 4
"""The threat cells of the side to move (the one empty cell of a line it holds k - 1 of)."""
THREATS_OPP = 5
"""The threat cells of the other side."""
EMPTY = 6
"""The empty cells."""
EMPTIES = 7
"""Their number."""
SKIPPED = 8
"""The moves the move order left out as equivalent to or dominated by one it kept."""
NODE_FIELDS = 9
"""The stride of ``SearchTables.nodes``."""

_Function = TypeVar("_Function", bound=Callable[..., Any])

if COMPILED:
    import numba


def kernel(function: _Function) -> _Function:
    """Compile ``function`` with Numba in the compiled instance (cached on disk); leave it as
    it is in the plain one."""
    if COMPILED:
        return cast(_Function, numba.njit(cache=True)(function))
    return function


def child_window(alpha: int, beta: int) -> tuple[int, int]:
    """The child's window that answers the parent's window ``(alpha, beta)``.

    A parent's score is ``move_score(s)`` of its child's score ``s``, a decreasing map; the
    child must tell ``s`` below the largest child score still worth ``>= beta`` to the parent
    and above the smallest worth ``<= alpha``.
    """
    return (-beta - 1 if beta > 0 else 1 - beta), (-alpha - 1 if alpha >= 0 else 1 - alpha)


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
    def _canonical_image(s: SearchTables, ply: int) -> tuple[tuple[int, int], int]:
        """The smallest image key of the position at ``ply`` (its row of ``s.images``), as
        ``(low word, high word)``, compared as an unsigned 128-bit integer: the smallest high
        word (always 0 on a board of at most 32 cells), then the smallest low word with it;
        and the index of the symmetry whose image it is."""
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
        best = 0
        for image in range(symmetries):
            if images[highs + image] == high and images[row + image] ^ SIGN_BIT < low ^ SIGN_BIT:
                low = images[row + image]
                best = image
        return (low, high), best

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
    def _table_find(table_keys: IntTable, table_bounds: IntTable, bucket: int, key: Any) -> int:
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

    def _canonical_image(s: SearchTables, ply: int) -> tuple[Any, int]:
        """The smallest image key of the position at ``ply`` and the index of the symmetry
        whose image it is: the images' keys are packed side by side into one integer,
        ``s.images[ply]``."""
        packed = s.images[ply]
        mask = s.key_mask
        keys = [packed >> shift & mask for shift in s.image_shifts]
        key = min(keys)
        return key, keys.index(key)

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

    def _table_find(table_keys: IntTable, table_bounds: IntTable, bucket: int, key: Any) -> int:
        """The slot of the key's bucket that holds it, or -1 (only the keys are read: a
        read of the bounds would make the slot)."""
        if _holds(table_keys, bucket + 1, key):
            return bucket + 1
        if _holds(table_keys, bucket, key):
            return bucket
        return -1


# -- the transposition table -------------------------------------------------------------------


@kernel
def _table_store(
    table_keys: IntTable, table_bounds: IntTable, slot: int, key: Any, bounds: int
) -> int:
    """Store into the key's bucket (``slot`` is its first slot): the slot holding the key,
    else an empty one, else the one holding the smaller subtree (fewer empty cells, the bits
    above 24 of the bounds); returns the slot written. The arrays are passed apart, not in
    ``SearchTables``: a call then copies two arrays, not all the tables."""
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
    return slot


@kernel
def _map_zone(s: SearchTables, zone: int, mapping: int) -> int:
    """The image of the cell set ``zone`` under one of ``s.zone_maps``' permutations: mapping
    ``i`` is symmetry ``i`` (a position to the orientation of its canonical key), mapping
    ``symmetries + i`` its inverse. A table look-up per 8 cells."""
    chunks = s.zone_chunks
    base = mapping * chunks * 256
    mapped = 0
    for chunk in range(chunks):
        byte = (zone >> (8 * chunk)) & 255
        if byte:
            mapped |= s.zone_maps[base + chunk * 256 + byte]
    return mapped


@kernel
def _save(
    s: SearchTables,
    bucket: int,
    key: Any,
    image: int,
    empties: int,
    low: int,
    high: int,
    zone_low: int,
    zone_high: int,
) -> None:
    """Store the bounds ``low <= score <= high`` of the position ``key`` (``empties`` empty
    cells, its canonical image symmetry ``image``) into its bucket, packed as
    :data:`BOUND_OFFSET` tells. With relevance zones, ``zone_low`` (a zone of "the opponent
    cannot win", meant when ``low >= 0``) and ``zone_high`` (of "the side to move cannot
    win", meant when ``high <= 0``) are kept beside them in the canonical orientation, so
    that any image of the position reads them back."""
    table = s.table
    slot = _table_store(
        table.keys,
        table.bounds,
        bucket,
        key,
        (empties << 24) | (low + BOUND_OFFSET) << 12 | (high + BOUND_OFFSET),
    )
    if s.flags & USE_ZONES:
        table.zones[2 * slot] = _map_zone(s, zone_low, image)
        table.zones[2 * slot + 1] = _map_zone(s, zone_high, image)


@kernel
def _stored_zone(s: SearchTables, slot: int, which: int, image: int) -> int:
    """Zone ``which`` (0: of the low bound, 1: of the high bound) of a table slot, turned from
    the canonical orientation to that of the position whose canonical image is ``image``."""
    return _map_zone(s, s.table.zones[2 * slot + which], s.symmetries + image)


# -- lines ---------------------------------------------------------------------------------------


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
def _base_zone(s: SearchTables, maker: int, breaker: int, empty: int, need: int, zone: int) -> int:
    """``zone`` grown so that every line open to ``maker`` (no ``breaker`` stone) holds at
    least ``need`` of its empty cells (as many as it has): in the position with the maker on
    every empty cell outside the zone, the maker then holds no complete line (``need`` 1) or
    no threat either (``need`` 2)."""
    for line in s.lines:
        if not line & breaker:
            have = _popcount(line & empty & zone)
            rest = line & empty & ~zone
            while have < need and rest:
                bit = rest & -rest
                rest ^= bit
                zone |= bit
                have += 1
    return zone


@kernel
def _bound_zone(value: int, alpha: int, zone_low: int, zone_high: int) -> int:
    """The zone a node hands its parent with ``value``: that of its upper bound when the value
    is at most ``alpha`` (the parent's move then fails high on it), else that of its lower
    bound (``zone_low`` must then hold for "score >= value": the node's low is at least the
    value, or is the whole board's)."""
    return zone_high if value <= alpha else zone_low


# -- pairings and the potential: the breaker's proofs that the maker cannot win ------------------


@kernel
def _augment(slot: int, unit_cells: IntTable, owner: IntTable, visit: IntTable, stamp: int) -> bool:
    """Match ``slot`` (one of the two slots of unit ``slot >> 1``) to a free cell of its unit,
    moving other slots along an augmenting path if needed (Kuhn's algorithm); False if no path
    exists (then nothing has moved). ``visit[cell] == stamp``: the cell was tried in this
    attempt."""
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
    line_unit: IntTable,
    owner: IntTable,
    visit: IntTable,
    report: IntTable,
    defender: int,
    empty: int,
    empties: int,
    partial: bool,
) -> int:
    """Look for a pairing by which the side holding ``defender`` keeps the other from ever
    completing a line (:mod:`solver.prover.pairing` tells the kind); ``empty``: the empty cells,
    ``empties`` their number.

    Whole (``partial`` False): returns the number of units when one is found (unit ``u``'s
    cells in ``unit_cells[u]``, and ``owner[cell]`` the slot ``2u`` or ``2u + 1`` a cell is
    paired for, else -1), or a negative number when none is found: ``-2 - i`` when a unit
    ending just before ``run_lines[i]`` has fewer than two empty common cells (then only a
    defender stone on a line of that run up to there can change it), else -1.

    Partial (``partial`` True): the units are formed and matched alike, but a unit that
    cannot be paired is left out (its ``unit_cells`` entry 0) instead of ending the search;
    returns the number of units, with ``report[1]`` the number left out. Either way
    ``line_unit[i]`` is the unit of ``run_lines[i]`` (-1: blocked by the defender) and
    ``report[0]`` the first ``-2 - i`` failure met while forming the units (else -1).

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
    report[0] = -1
    report[1] = 0
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
                line_unit[at] = units
                continue
        if in_unit:  # the unit ends: it needs two empty cells
            cells = core & empty
            if _popcount(cells) < 2:
                if report[0] == -1:
                    report[0] = -2 - at
                if not partial:
                    return -2 - at
                cells = 0
                report[1] += 1
            elif not partial and 2 * units + 2 > empties:
                return -1
            unit_cells[units] = cells
            covered |= cells
            units += 1
        if at < lines:
            line_unit[at] = -1 if blocked else units
        in_unit = not blocked
        core = line
    if not partial and _popcount(covered) < 2 * units:
        return -1
    for cell in range(len(owner)):
        owner[cell] = -1
    last = len(visit) - 1
    for unit in range(units):
        if not unit_cells[unit]:
            continue
        for slot in range(2 * unit, 2 * unit + 2):
            visit[last] += 1
            if not _augment(slot, unit_cells, owner, visit, visit[last]):
                if not partial:
                    return -1
                # the unit is left out: free the cell its first slot holds, if it holds one
                for cell in range(len(owner)):
                    if owner[cell] == 2 * unit:
                        owner[cell] = -1
                unit_cells[unit] = 0
                report[1] += 1
                break
    return units


@kernel
def _paired_cells(s: SearchTables) -> int:
    """The cells of the pairs :func:`_find_pairing` left in ``s.owner``."""
    cells = 0
    for cell in range(len(s.owner)):
        if s.owner[cell] >= 0:
            cells |= 1 << cell
    return cells


@kernel
def _pairing(s: SearchTables, defender: int, empty: int, empties: int) -> int:
    """:func:`_find_pairing`, whole, for the side holding ``defender`` on ``s``' lines."""
    return _find_pairing(
        s.run_lines,
        s.run_continues,
        s.unit_cells,
        s.line_unit,
        s.owner,
        s.visit,
        s.report,
        defender,
        empty,
        empties,
        False,
    )


@kernel
def _potential_limit(s: SearchTables, maker_to_move: bool) -> int:
    """The Erdős-Selfridge bound, scaled by ``2 ** k``: the maker cannot win when the sum over
    its open lines of ``2 ** -(empty cells)`` is below 1 with the breaker to move, below 1/2
    with the maker to move (its move at most doubles the sum)."""
    return 1 << (s.k - 1 if maker_to_move else s.k)


@kernel
def _potential_holds(
    s: SearchTables, breaker: int, free: int, maker_to_move: bool, units: int
) -> bool:
    """Whether the Erdős-Selfridge potential of the maker's lines left to it is below
    :func:`_potential_limit`: the lines open to the maker (no ``breaker`` stone) but those of
    the first ``units`` units of :func:`_find_pairing` that hold a pair (0: every open line).
    Each counts ``2 ** (its cells not in free)``, the scaled ``2 ** -(free cells)``: ``free``
    is the empty cells, less the pair cells, which count as the maker's. The lines are taken
    in runs; the sum is the same in any order. The zone of the proof (the free cells of the
    lines counted) goes to ``s.found_zone[0]``."""
    limit = _potential_limit(s, maker_to_move)
    total = 0
    zone = 0
    for at in range(len(s.run_lines)):
        line = s.run_lines[at]
        if line & breaker:
            continue
        if units:
            unit = s.line_unit[at]
            if 0 <= unit < units and s.unit_cells[unit]:
                continue
        total += 1 << (s.k - _popcount(line & free))
        if total >= limit:
            return False
        zone |= line & free
    s.found_zone[0] = zone
    return True


@kernel
def _partial_pairing_holds(
    s: SearchTables, breaker: int, empty: int, empties: int, maker_to_move: bool
) -> bool:
    """Whether a pairing of some of the maker's open lines and the potential of the others
    show that the maker cannot win: the breaker answers a move on a pair by its other cell,
    and plays the Erdős-Selfridge strategy on the lines left unpaired, counted with the pair
    cells as the maker's. A whole pairing is the case of no line left. The zone (the pair
    cells and the other empty cells of the unpaired lines) goes to ``s.found_zone[0]``."""
    units = _find_pairing(
        s.run_lines,
        s.run_continues,
        s.unit_cells,
        s.line_unit,
        s.owner,
        s.visit,
        s.report,
        breaker,
        empty,
        empties,
        True,
    )
    paired = _paired_cells(s)
    if s.report[1]:
        if s.k > POTENTIAL_K_LIMIT or not _potential_holds(
            s, breaker, empty & ~paired, maker_to_move, units
        ):
            return False
        s.found_zone[0] |= paired
    else:
        s.found_zone[0] = paired
    return True


@kernel
def _breaker_holds(
    s: SearchTables, maker: int, breaker: int, empty: int, empties: int, maker_to_move: bool
) -> bool:
    """Whether the side holding ``breaker`` can keep the maker from ever completing a line,
    by the prunings switched on: the potential of the maker's lines, a pairing, or a partial
    pairing with the potential of the rest. Each one found is counted; the zone of its proof
    (the cells it needs, see :func:`_base_zone`) goes to ``s.found_zone[0]``."""
    flags = s.flags
    counters = s.counters
    if flags & USE_POTENTIAL and s.k <= POTENTIAL_K_LIMIT:
        if _potential_holds(s, breaker, empty, maker_to_move, 0):
            counters[CLOSED_BY_POTENTIAL] += 1
            return True
    if flags & USE_PARTIAL_PAIRINGS:
        if _partial_pairing_holds(s, breaker, empty, empties, maker_to_move):
            if s.report[1] or not flags & USE_PAIRINGS:
                counters[CLOSED_BY_PARTIAL_PAIRING] += 1
            else:
                counters[CLOSED_BY_PAIRING] += 1
            return True
        return False
    if flags & USE_PAIRINGS and _pairing(s, breaker, empty, empties) >= 0:
        counters[CLOSED_BY_PAIRING] += 1
        s.found_zone[0] = _paired_cells(s)
        return True
    return False


@kernel
def _holds_within_a_move(
    s: SearchTables, maker: int, breaker: int, empty: int, empties: int
) -> bool:
    """Whether the side holding ``breaker``, to move, keeps the maker from ever completing a
    line (:func:`_breaker_holds`), or has a pairing after one of its moves. Trying each move
    here costs a pairing test per move; finding the move that closes the node at once spares
    the search below the moves tried before it. When the pairing test fails on one run's
    lines, whose common cells lack an empty pair, only a move on those lines can change that
    (the units of the run up to there are formed the same otherwise): only those moves are
    tried. The zone (the pairing's, with the move) goes to ``s.found_zone[0]``."""
    if _breaker_holds(s, maker, breaker, empty, empties, False):
        return True
    if not s.flags & USE_PAIRINGS:
        return False
    failed = s.report[0]
    rest = empty
    if failed <= -2:
        at = -3 - failed  # the last line of the unit that failed
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
        if _pairing(s, breaker | bit, empty ^ bit, empties - 1) >= 0:
            s.counters[CLOSED_BY_PAIRING] += 1
            s.found_zone[0] = _paired_cells(s) | bit
            return True
    return False


# -- wins by continuous threats ------------------------------------------------------------------


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
def _keep_threat_line(s: SearchTables, mine: int, theirs: int, made: int) -> None:
    """Keep the line of play of a win by continuous threats, found in ``s.threat_stack``: the
    cells it fills and the two threat cells it ends with in ``s.found_zone[0]``, the
    opponent's forced blocks in ``s.found_zone[1]`` (see :func:`_threat_zone`)."""
    stack = s.threat_stack
    s.found_zone[0] = (mine ^ stack[0]) | (theirs ^ stack[1]) | made
    s.found_zone[1] = theirs ^ stack[1]


@kernel
def _threat_zone(s: SearchTables, me: int, opp: int, empty: int) -> int:
    """The zone of a win by continuous threats of the side holding ``me`` (its line of play
    in ``s.found_zone``): with the opponent's stones on every empty cell outside it, the same
    threats still force the same blocks, and no block, nor any other line, gives the opponent
    a threat the search did not see. So it holds the cells of the line of play, every empty
    cell of the opponent's open lines through a block (those lines are then as the search
    saw them), and two empty cells of every other open line of the opponent's (none of them
    can become a threat: only the mover's stones land on them, which close them)."""
    zone = s.found_zone[0]
    blocks = s.found_zone[1]
    while blocks:
        bit = blocks & -blocks
        blocks ^= bit
        for line in _lines_through(s, _popcount(bit - 1)):
            if not line & me:
                zone |= line & empty
    return _base_zone(s, opp, me, empty, 2, zone)


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
    length. A sequence holds at most :data:`THREAT_DEPTH` threat moves.

    Depth first, with an explicit stack (``s.threat_stack``, five entries a threat move: the
    mover's stones, the opponent's, the empty cells, the threat moves not yet tried there,
    and the plies played to get there), not recursion: Numba's cache cannot load a recursive
    function that another one calls. The win's line of play goes to ``s.found_zone``
    (:func:`_keep_threat_line`)."""
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
            _keep_threat_line(s, mine, theirs, made)
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
                _keep_threat_line(s, mine, theirs, made)
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


# -- the move order ------------------------------------------------------------------------------


@kernel
def _dominated(dominance: IntTable, cell: int) -> bool:
    """Whether another move stands above ``cell``: one on every line through it that either
    side can still complete (``dominance[cell]`` holds them), and not itself in the same case
    with ``cell`` (equal moves: the lower cell stands for both)."""
    above = dominance[cell]
    while above:
        bit = above & -above
        above ^= bit
        other = _popcount(bit - 1)
        if other < cell or not (dominance[other] >> cell) & 1:
            return True
    return False


@kernel
def _order_moves(s: SearchTables, ply: int) -> int:
    """The moves of the position at ``ply`` into ``s.orders[ply * cells:]``, best first; their
    number, or -1 when one of them makes two threats at once with none to answer (the mover
    wins in 3, the fastest possible without a threat on the board; the move and its threat
    cells go to ``s.found_zone[0]``).

    A forced block is the only move. Otherwise the cells are weighed by the live lines (lines
    a side can still complete) through them, the mover's weighing more the more stones it
    holds in them, then by the history heuristic. Moves left out go to the node's
    ``SKIPPED`` field, each with the kept move that stands for it in ``s.reps``: dead cells
    (on no live line) are all alike, so one stands for the others; with vertex domination, a
    move whose live lines all pass through another cell is left out for it (see
    docs/prover.md: the other move is at least as good for either side)."""
    stack = s.nodes
    node = ply * NODE_FIELDS
    me, opp = stack[node + ME], stack[node + OPP]
    empty, threats_opp = stack[node + EMPTY], stack[node + THREATS_OPP]
    cells = s.cells
    order = s.orders
    first = ply * cells
    stack[node + SKIPPED] = 0
    if threats_opp:
        order[first] = _popcount((threats_opp & -threats_opp) - 1)
        return 1
    dominate = s.flags & USE_DOMINATION
    almost = s.k - 2
    own_weight, block_weight = s.own_weight, s.block_weight
    weights, dominance = s.weights, s.dominance
    rest = empty
    while rest:
        bit = rest & -rest
        rest ^= bit
        c = _popcount(bit - 1)  # the bit's index
        weight = 0
        made = 0
        common = s.full
        for line in _lines_through(s, c):
            live = False
            if not line & opp:
                held = _popcount(line & me)
                weight += own_weight[held]
                live = True
                if held == almost:
                    made |= line & ~me & ~bit
            if not line & me:
                weight += block_weight[_popcount(line & opp)]
                live = True
            if live:
                common &= line
        if made & (made - 1):
            s.found_zone[0] = bit | made
            return -1
        if made:
            weight += s.threat_bonus
        weights[c] = weight
        if dominate:
            dominance[c] = common & empty & ~bit
    history = s.history
    reps = s.reps
    skipped = 0
    dead = -1
    count = 0
    rest = empty
    while rest:
        bit = rest & -rest
        rest ^= bit
        c = _popcount(bit - 1)
        if dominate:
            if _dominated(dominance, c):
                skipped |= bit
                continue
        elif not weights[c]:
            if dead >= 0:
                skipped |= bit
                reps[first + c] = dead
                continue
            dead = c
        weight = weights[c]
        if weight > WEIGHT_LIMIT:  # huge k only: keep the packed move key in 63 bits
            weight = WEIGHT_LIMIT
        order[first + count] = (weight << 40) + (history[c] << 10) + c
        count += 1
    if dominate and skipped:
        s.counters[DOMINATED_MOVES] += _popcount(skipped)
        rest = skipped
        while rest:
            bit = rest & -rest
            rest ^= bit
            c = _popcount(bit - 1)
            kept = dominance[c] & ~skipped
            reps[first + c] = _popcount((kept & -kept) - 1)
    stack[node + SKIPPED] = skipped
    _sort_moves(order, first, count)
    return count


@kernel
def _with_representatives(s: SearchTables, ply: int, zone: int) -> int:
    """``zone`` with the kept move standing for each left-out move inside it (see
    :func:`_order_moves`): in the position with the maker on every cell outside the zone, a
    left-out move is then still no better than the move that stands for it."""
    first = ply * s.cells
    left_out = s.nodes[ply * NODE_FIELDS + SKIPPED] & zone
    while left_out:
        bit = left_out & -left_out
        left_out ^= bit
        zone |= 1 << s.reps[first + _popcount(bit - 1)]
    return zone


# -- the search ----------------------------------------------------------------------------------


@kernel
def _play(s: SearchTables, ply: int, cell: int) -> None:
    """The position after the mover at ``ply`` plays ``cell``, into row ``ply + 1`` of the node
    stack and of the image keys."""
    stack = s.nodes
    node = ply * NODE_FIELDS
    child = node + NODE_FIELDS
    me, opp = stack[node + ME], stack[node + OPP]
    bit = 1 << cell
    mine = me | bit
    new_threats = 0
    closed = 0  # lines of the opponent's that this stone closes
    for line in _lines_through(s, cell):
        if not line & opp:
            rest = line & ~mine
            if not rest & (rest - 1):
                new_threats |= rest
        if not line & me:
            closed += 1
    empties = stack[node + EMPTIES]
    stack[child + ME] = opp
    stack[child + OPP] = mine
    stack[child + LIVE_ME] = stack[node + LIVE_OPP] - closed
    stack[child + LIVE_OPP] = stack[node + LIVE_ME]
    stack[child + THREATS_ME] = stack[node + THREATS_OPP] & ~bit
    stack[child + THREATS_OPP] = new_threats
    stack[child + EMPTY] = stack[node + EMPTY] ^ bit
    stack[child + EMPTIES] = empties - 1
    _push_images(s, ply, (empties & 1) * s.cells + cell)


@kernel
def _negamax(s: SearchTables, ply: int, alpha: int, beta: int) -> int:
    """Fail-soft negamax of the position at row ``ply`` of the node stack (contract in
    :mod:`solver.prover.search`). Past the deadline it sets the ``TIMED_OUT`` counter and returns 0
    at once, all the way up.

    With relevance zones, ``s.zones[ply]`` is set to the zone of the bound returned (see
    :func:`_bound_zone`): a lower bound holds with the opponent's stones on every empty cell
    outside its zone, an upper bound with the mover's (docs/prover.md). ``zone_low`` and
    ``zone_high`` follow ``low`` and ``high`` through the node; the whole board is the zone of
    a bound whose proof keeps none."""
    counters = s.counters
    counters[NODES] += 1
    # The clock is read even with no deadline: reading it runs Python for a moment, where a
    # signal's handler gets its turn (Ctrl-C, SIGTERM) and may move the deadline to the past.
    if counters[NODES] & (CHECK_EVERY - 1) == 0:
        if _now() > s.deadline[0]:
            counters[TIMED_OUT] = 1
    if counters[TIMED_OUT]:
        return 0
    stack = s.nodes
    node = ply * NODE_FIELDS
    me, opp = stack[node + ME], stack[node + OPP]
    live_me, live_opp = stack[node + LIVE_ME], stack[node + LIVE_OPP]
    threats_me, threats_opp = stack[node + THREATS_ME], stack[node + THREATS_OPP]
    empty, empties = stack[node + EMPTY], stack[node + EMPTIES]
    flags = s.flags
    full = s.full
    zoned = flags & USE_ZONES != 0
    zones = s.zones

    # the game decided within two plies
    if threats_me:
        if zoned:  # the mover completes a line, if the opponent has not completed one
            zone = _base_zone(s, opp, me, empty, 1, threats_me & -threats_me)
            zones[ply] = _bound_zone(WIN1, alpha, zone, 0)
        return WIN1
    if threats_opp and threats_opp & (threats_opp - 1):
        if zoned:  # the mover has no threat, and cannot block both
            zone = _base_zone(s, me, opp, empty, 2, threats_opp)
            zones[ply] = _bound_zone(LOSE2, alpha, 0, zone)
        return LOSE2

    # the window clamped by the fastest win and loss still possible
    high = WIN3 if live_me and empties >= 3 else 0
    low = LOSE4 if live_opp and empties >= 4 else 0
    zone_high = 0 if not live_me else full  # the zone of high
    zone_low = 0 if not live_opp else full  # the zone of low
    if low >= beta or low == high:
        if zoned:
            zones[ply] = _bound_zone(low, alpha, zone_low, zone_high)
        return low
    if high <= alpha:
        if zoned:
            zones[ply] = zone_high
        return high

    # the transposition table
    key, image = _canonical_image(s, ply)
    table = s.table
    bucket = _bucket(key, table.shift, table.slots)
    slot = _table_find(table.keys, table.bounds, bucket, key)
    if slot >= 0:
        entry: int = table.bounds[slot]
        stored = ((entry >> 12) & 4095) - BOUND_OFFSET
        if stored > low:
            low = stored
            if zoned:
                zone_low = _stored_zone(s, slot, 0, image)
        stored = (entry & 4095) - BOUND_OFFSET
        if stored < high:
            high = stored
            if zoned:
                zone_high = _stored_zone(s, slot, 1, image)
        if low >= beta or low == high:
            if zoned:
                zones[ply] = _bound_zone(low, alpha, zone_low, zone_high)
            return low
        if high <= alpha:
            if zoned:
                zones[ply] = zone_high
            return high
    if alpha > 0 and high > 0:
        # only a fast enough win matters (a distance probe): bound the mover's fastest win
        # by the fewest stones missing from one of its live lines
        plies = 2 * _fewest_missing(s, me, opp) - 1
        if plies > empties:
            high = 0
            zone_high = full
        elif WIN_SCORE - plies < high:
            high = WIN_SCORE - plies
            zone_high = full
    if beta < 0 and low < 0:  # the same for the opponent's fastest win
        plies = 2 * _fewest_missing(s, opp, me)
        if plies > empties:
            low = 0
            zone_low = full
        elif plies - WIN_SCORE > low:
            low = plies - WIN_SCORE
            zone_low = full
    if low >= beta or low == high:
        if zoned:
            zones[ply] = _bound_zone(low, alpha, zone_low, zone_high)
        return low
    if high <= alpha:
        if zoned:
            zones[ply] = zone_high
        return high

    # proofs without search below the node
    if flags & USE_THREATS and high > 0 and not threats_opp:
        # a win by continuous threats fast enough to reach beta: a lower bound, score >= beta
        limit = empties if beta <= 0 else WIN_SCORE - beta
        plies = _threat_win(s, me, opp, empty, limit if limit < empties else empties)
        if plies:
            counters[CLOSED_BY_THREATS] += 1
            if zoned:
                zone_low = _threat_zone(s, me, opp, empty)
                zones[ply] = zone_low
            _save(s, bucket, key, image, empties, WIN_SCORE - plies, high, zone_low, zone_high)
            return WIN_SCORE - plies
    if alpha >= 0 and high > 0 and _breaker_holds(s, me, opp, empty, empties, True):
        # the opponent keeps the mover from completing a line: score <= 0 <= alpha
        zone_high = s.found_zone[0]
        _save(s, bucket, key, image, empties, low, 0, zone_low, zone_high)
        if zoned:
            zones[ply] = zone_high
        return 0
    if beta <= 0 and low < 0 and _holds_within_a_move(s, opp, me, empty, empties):
        # the mover keeps the opponent from completing a line, now or after one of its
        # moves: score >= 0 >= beta
        zone_low = s.found_zone[0]
        _save(s, bucket, key, image, empties, 0, high, zone_low, zone_high)
        if zoned:
            zones[ply] = zone_low
        return 0

    # the search of the moves
    alpha_in = alpha  # the parent's question: the zone handed up follows it
    if alpha < low:
        alpha = low
    if beta > high:
        beta = high
    alpha0 = alpha
    count = _order_moves(s, ply)
    if count < 0:  # a move makes two threats, and the opponent has none to answer with
        zone_low = full
        if zoned:
            zone_low = _base_zone(s, opp, me, empty, 2, s.found_zone[0])
            zones[ply] = _bound_zone(WIN3, alpha_in, zone_low, full)
        _save(s, bucket, key, image, empties, WIN3, WIN3, zone_low, full)
        return WIN3
    first = ply * s.cells
    order = s.orders
    history = s.history
    child_alpha, child_beta = _child_window(alpha, beta)
    best = -WIN_SCORE - 1
    must = full  # the moves still to search: inside the zone of every move that failed low
    union = 0  # the zones of the moves that failed low
    zone_best = full  # the zone of the move that failed high
    for at in range(first, first + count):
        c = order[at]
        bit = 1 << c
        if not bit & must:  # no better than a move that failed low (docs/prover.md)
            counters[ZONE_SKIPPED_MOVES] += 1
            continue
        _play(s, ply, c)
        score = _negamax(s, ply + 1, child_alpha, child_beta)
        if counters[TIMED_OUT]:
            return 0
        score = _move_score(score)
        if zoned:
            if score >= beta:
                zone_best = zones[ply + 1] | bit
            else:
                must &= zones[ply + 1]
                union |= zones[ply + 1]
        if score > best:
            best = score
            if score > alpha:
                if score >= beta:
                    history[c] += empties * empties
                    if history[c] > HISTORY_LIMIT:
                        for cell in range(s.cells):
                            history[cell] >>= 1
                    break
                alpha = score
                child_beta = _child_window(alpha, beta)[1]

    if best <= alpha0:
        high = best
        if zoned:
            zone_high = _with_representatives(s, ply, union)
            if threats_opp:  # a forced block: the mover's other moves lose unless they win
                zone_high = _base_zone(s, me, opp, empty, 2, zone_high | threats_opp)
    elif best >= beta:
        low = best
        zone_low = zone_best
    else:
        low = high = best
        zone_low = zone_high = full
    _save(s, bucket, key, image, empties, low, high, zone_low, zone_high)
    if zoned:
        zones[ply] = _bound_zone(best, alpha_in, zone_low, zone_high)
    return best
