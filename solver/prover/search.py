"""Negamax alpha-beta prover for boards too big to enumerate.

:class:`Prover` finds the exact value (outcome and remoteness) of one position by a depth-first
negamax search with a transposition table. The search itself is :func:`_negamax` in
:mod:`solver.prover.negamax`, written once and run two ways (:class:`SearchEngine`): compiled by
Numba on 64-bit integers for boards of at most :data:`MAX_COMPILED_CELLS` cells (the default
there, :func:`default_engine`), and as plain Python on unbounded integers for any board. This
module holds what both share: the per-rules tables, the exact-score driver and the public
:class:`Prover`; the constants the compiled code bakes in live in :mod:`solver.prover.negamax`. The
search:

* **Scores** are the integer scores of :mod:`solver.value`, side-to-move relative and
  distance-aware: ``WIN_SCORE - r`` for a win in ``r`` plies, ``-(WIN_SCORE - r)`` for a loss,
  ``0`` for a draw. Every score is measured from the position it belongs to, so a stored bound
  holds wherever the position is met again.
* **Contract (fail-soft).** ``_negamax(..., alpha, beta)`` with ``alpha < beta`` returns ``v``
  such that, for the true score ``s``: if ``v <= alpha`` then ``s <= v`` (an upper bound);
  if ``v >= beta`` then ``s >= v`` (a lower bound); otherwise ``s == v``. The returned bound is
  often tighter than the window edge, and it is what the transposition table stores.
* **Window clamping.** A side can win no sooner than its next move and lose no sooner than the
  opponent's next move; once neither immediate threat exists those are 3 and 4 plies away, and
  a side with no line left to complete cannot win at all. The window is narrowed to those
  bounds before any move is searched; when both sides are out of lines the position is a dead
  draw (score 0; its remoteness is the number of empty cells, as for every draw).
* **Threats.** Each side's *threat cells* (the one empty cell of a line it holds ``k - 1`` of)
  are kept incrementally. A side to move with a threat wins at once; facing two threats it
  loses in 2; facing one, blocking it is the only move searched.
* **Move order:** forced block; otherwise cells by how many live lines (lines that a side can
  still complete) pass through them, then a history heuristic (cells that caused cut-offs).
  Of the *dead* cells (on no live line), which are all equivalent, only one is searched.
* **Transposition table** (:mod:`solver.prover.transposition`) keyed by the canonical key: the
  smallest packed key (``x | o << cells``) among the symmetric images. The images' keys are
  kept in a stack, one row per ply of the current line of play, and a move ORs its
  precomputed bits into the next row, so no permutation is applied per node. The table
  persists between calls, which is what makes :meth:`Prover.move_values` and opening books
  cheap.
* **Prunings** (:class:`Prunings`, each a row of :data:`solver.prover.negamax.PRUNINGS` that gives
  it a switch and a counter; docs/prover.md gives each one's source and why it keeps the
  proof sound). In a window that only asks whether the mover
  can win (``alpha >= 0``, the mover is the *maker*), a proof that the opponent (the
  *breaker*) keeps it from ever completing a line closes the node at 0: a pairing
  (:mod:`solver.prover.pairing`), the Erdős-Selfridge potential of the maker's lines, or a partial
  pairing with the potential of the lines it leaves; in one that only asks whether the
  opponent can win (``beta <= 0``), the same proofs with the sides exchanged, the mover's
  pairing also tried after each of its moves. Wins by continuous threats (``_threat_win``, the
  simple form of L. V. Allis' threat-space search) close nodes as a lower bound on the score,
  in exact mode as in weak mode (a faster win would only raise the score); in weak mode they
  are also tried at the root. Vertex domination skips a move whose live lines all pass
  through another cell (the other move is worth at least as much, for either side, at any
  distance). Relevance zones skip the maker's moves outside the cells a refutation of one of
  its moves relied on; zones are kept in the table with the bounds.
* **Exact scores** come from null-window probes, in one of two orders
  (:data:`EXACT_SEARCHES`). By ``bisection``: first ``(0, 1)`` (can the mover win?), then if
  not ``(-1, 0)`` (can it lose?), which tells a win, a draw or a loss, and the breaker's
  proofs work in both; then, for a win or a loss, bisection on the remoteness with null
  windows. By ``deepening``: the mover's shortest win first ("a win within 1 ply?", then 3,
  5, ...), each probe a search cut at that length.

Both ways of running the search use the same tables and the same table scheme, so they search
exactly the same tree. The compiled one holds a cell set in one 64-bit word (cell 63 is the
sign bit) and a packed key in two, its low and high 64 bits, compared as one unsigned 128-bit
integer and hashed as their XOR: the plain one's key, comparison and hash, bit for bit. Each
side's live lines are counted, not listed (a line is live for the mover when it holds no
opponent stone, a test on the stones), so the number of lines has no limit.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import signal
import sys
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any, ClassVar, NamedTuple, TypeVar

from ttt_solve.processes import signals_held
from ttt_solve.solver.errors import SearchTimeout
from ttt_solve.solver.position import Position
from ttt_solve.solver.prover import negamax
from ttt_solve.solver.prover.negamax import (
    BLOCK_BASE,
    COUNTERS,
    FIRST_PRUNING,
    NODE_FIELDS,
    NODES,
    PRUNINGS,
    THREAT_BONUS,
    THREAT_DEPTH,
    TIMED_OUT,
    WEIGHT_BASE,
    flag,
)
from ttt_solve.solver.prover.negamax import child_window as child_window  # part of this API
from ttt_solve.solver.prover.pairing import pairing_for, runs
from ttt_solve.solver.prover.transposition import TranspositionTable
from ttt_solve.solver.rules import KEY_CHUNK_BITS, Rules
from ttt_solve.solver.value import WIN_SCORE, Value, move_score

MAX_COMPILED_CELLS = 64
"""Cells of the largest board the compiled search holds: a cell set is one 64-bit integer, a
packed key (two bits per cell) two of them."""

ENGINES = ("compiled", "python")
"""The two ways of running the search: Numba-compiled, and plain Python."""

EXACT_SEARCHES = ("bisection", "deepening")
"""The two orders in which :meth:`Prover.solve` finds an exact score. ``bisection`` proves the
outcome first (can the mover win? can it lose?), then halves the range of the remoteness;
``deepening`` asks whether the mover wins within 1 ply, then 3, 5, ... (a probe cut at that
length), and when it wins within none, whether it can lose, and then its shortest loss the
same way. Bisection takes fewer nodes over whole books (every draw costs deepening all its
probes); deepening is far cheaper where the outcome search meets a long proof before the
short win (docs/prover.md)."""

COMPILED_KERNEL = negamax.__name__ + "_compiled"
"""The module name of the compiled instance of :mod:`solver.prover.negamax` (see
:func:`_kernel`)."""


_Value = TypeVar("_Value", bool, int)
_Row = TypeVar("_Row", bound="_Named[Any]")


class _Named(tuple[_Value, ...]):
    """A tuple whose entries are named by ``_fields``, with ``_defaults``, like a
    ``NamedTuple`` (``_fields``, ``_asdict``, ``_replace``) whose fields come from a table:
    made by position or by name, read by name."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]]
    _defaults: ClassVar[tuple[Any, ...]]

    def __new__(cls: type[_Row], *values: _Value, **named: _Value) -> _Row:
        if len(values) > len(cls._fields):
            raise TypeError(f"{cls.__name__} takes {len(cls._fields)} values, got {len(values)}")
        entries = [*values, *cls._defaults[len(values) :]]
        for name, value in named.items():
            if name not in cls._fields:
                raise TypeError(f"{cls.__name__} has no field {name!r}: {', '.join(cls._fields)}")
            entries[cls._fields.index(name)] = value
        return tuple.__new__(cls, entries)

    def __getnewargs__(self) -> tuple[_Value, ...]:  # pickling makes it again by position
        return tuple(self)

    def __getattr__(self, name: str) -> _Value:
        if name not in self._fields:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}")
        value: _Value = self[self._fields.index(name)]
        return value

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
        return f"{type(self).__name__}({fields})"

    def _asdict(self) -> dict[str, _Value]:
        return dict(zip(self._fields, self))

    def _replace(self: _Row, **named: _Value) -> _Row:
        return type(self)(*self, **named)


class Prunings(_Named[bool]):
    """Which prunings the search uses: one switch per row of :data:`solver.prover.negamax.PRUNINGS`,
    named as the row is, ``Prunings(zones=True).zones``. Each is sound on its own and with the
    others (the values, and the remoteness in exact mode, are those of the search without
    it). The defaults are the classic set (a :class:`Prover`'s unless told otherwise):
    pairings and threats; :meth:`every` adds all the others (opening books, so ``ttt-solve``,
    and ``ttt atlas`` use it). What each does is the row's ``does``.
    """

    _fields = tuple(pruning.name for pruning in PRUNINGS)
    _defaults = tuple(pruning.classic for pruning in PRUNINGS)

    @classmethod
    def strongest(cls) -> Prunings:
        """Every pruning but relevance zones (whose table takes 40 bytes a slot): the choice
        of bench/bench_stretch.py. bench/bench_prover.py measures each set."""
        return cls.every()._replace(zones=False)

    @classmethod
    def every(cls) -> Prunings:
        """Every pruning: the strongest set and relevance zones. It searched the fewest nodes
        on every board bench/bench_prover.py measured."""
        return cls(*(True for _ in PRUNINGS))

    @classmethod
    def none(cls) -> Prunings:
        """The bare search."""
        return cls(*(False for _ in PRUNINGS))

    @property
    def flags(self) -> int:
        """The switches as the search reads them (:func:`solver.prover.negamax.flag`)."""
        return sum(flag(name) for name, on in zip(self._fields, self) if on)

    @property
    def names(self) -> list[str]:
        """The prunings switched on, by name."""
        return [name for name, on in zip(self._fields, self) if on]


CLASSIC_PRUNINGS = Prunings()
"""The default prunings: pairings and continuous threats."""


class SearchCounters(_Named[int]):
    """What a search did: ``nodes`` searched, then one counter per row of
    :data:`solver.prover.negamax.PRUNINGS`, named by its ``counter`` (nodes closed by each kind of
    proof without search below them, moves skipped by each pruning: the row's ``counts``).
    Counters subtract field by field."""

    _fields = ("nodes", *(pruning.counter for pruning in PRUNINGS))
    _defaults = (0,) * len(_fields)

    def __sub__(self, other: object) -> SearchCounters:
        assert isinstance(other, SearchCounters)
        return SearchCounters(*(mine - theirs for mine, theirs in zip(self, other)))

    @property
    def technique(self) -> str:
        """The technique of a search (see :class:`SearchResult`): ``search`` and the word of
        each pruning that closed a node or skipped a move, in the table's order."""
        used = [pruning.technique for pruning in PRUNINGS if getattr(self, pruning.counter)]
        return "+".join(["search", *used])


NO_COUNTS = SearchCounters()
"""Counters of a search that did nothing."""


class SearchResult(NamedTuple):
    """The result of :meth:`Prover.solve`.

    * ``score``: side-to-move score (:mod:`solver.value`); exact unless the prover is weak,
    * ``value``: ``Value.from_score(score, position.empty_count)``,
    * ``nodes``: nodes searched by this call,
    * ``seconds``: wall time of this call,
    * ``technique``: what closed the proof: ``"search"`` (the negamax search alone), or
      ``"search"`` followed by the techniques that closed some of its nodes without a search
      below them or skipped some of its moves, in this order: ``+pairing`` (a pairing),
      ``+threats`` (a win by continuous threats), ``+potential`` (the Erdős-Selfridge
      potential), ``+partial-pairing`` (a partial pairing and the potential),
      ``+domination`` (dominated moves skipped), ``+zones`` (moves outside a relevance zone
      skipped), e.g. ``"search+pairing+threats"``; or ``"pairing"`` (a draw proved by a
      pairing for each side, :mod:`solver.prover.pairing`, with no search), or ``"threats"`` (a win
      proved by continuous threats from the position itself, with no search; weak mode),
    * ``pairings``: the nodes of this call closed by a pairing,
    * ``threats``: the nodes of this call closed by a win by continuous threats (1 when the
      technique is ``"threats"``: the position itself),
    * ``counters``: every counter of this call (:class:`SearchCounters`).
    """

    score: int
    value: Value
    nodes: int
    seconds: float
    technique: str = "search"
    pairings: int = 0
    threats: int = 0
    counters: SearchCounters = NO_COUNTS


IntTable = Any
"""A flat table of integers: an int64 NumPy array compiled; in plain Python a ``list[int]``,
or for the transposition table's slots a dict that holds only the slots written."""


class SearchTables(NamedTuple):
    """Everything the search reads and writes besides its arguments; flat 1-D tables indexed
    with explicit strides, the form Numba compiles."""

    k: int  # stones in a row to win
    cells: int  # cells of the board (the stride of ``orders``)
    full: int  # every cell of the board (all 64 bits set, -1, on a 64-cell board compiled)
    symmetries: int  # symmetric images kept per ply (the stride of ``images``, ``move_bits``)
    flags: int  # the prunings switched on (``Prunings.flags``)
    lines: IntTable  # [line]: cell mask of each line
    through: IntTable  # the cell masks of the lines through each cell: in plain Python [cell]
    # a tuple; compiled, one array, cell by cell, those of a cell from line_start[cell] to
    # line_start[cell + 1]
    line_start: IntTable  # [cell]: see ``through`` (compiled only)
    move_bits: IntTable  # a stone's bit in each image, by parity of the empty-cell count (X
    # moves when it has the parity of the cells): compiled [((parity * cells + cell) * 2 +
    # word) * symmetries + image], the packed key's low and high 64-bit words, laid out as a
    # row of ``images``; in plain Python [parity * cells + cell], packed as ``images``
    own_weight: IntTable  # [i]: move-order weight of a live line of the mover holding i stones
    block_weight: IntTable  # [i]: the same for a live line of the opponent
    threat_bonus: int  # move-order bonus of a move that makes a threat
    images: IntTable  # image keys along the current line of play: compiled [(ply * 2 + word)
    # * symmetries + image], a key's low and high 64-bit words; in plain Python [ply], all of
    # a ply's keys packed into one integer, image i at bit i * 2 * cells
    key_mask: int  # plain Python: one packed image key's bits
    image_shifts: tuple[int, ...]  # plain Python: where each image's key starts in ``images``
    nodes: IntTable  # [ply * NODE_FIELDS + field]: the positions along the line of play
    orders: IntTable  # [ply * cells + j]: move-order buffers, one per ply of the line
    reps: IntTable  # [ply * cells + cell]: the kept move standing for a move left out
    weights: IntTable  # [cell]: scratch of the move order
    dominance: IntTable  # [cell]: scratch of the move order (the cells above each)
    table: TranspositionTable  # the transposition table
    history: IntTable  # [cell]: cut-off counts of the history heuristic
    counters: IntTable  # [COUNTERS]: see the counters of solver.prover.negamax
    threat_stack: IntTable  # [5 * THREAT_DEPTH]: scratch of the threat search
    run_lines: IntTable  # the lines in runs, for the pairings (solver.prover.pairing.runs)
    run_continues: IntTable  # [i]: 1 when run_lines[i] follows run_lines[i - 1] in its run
    unit_cells: IntTable  # [unit]: scratch of the pairing finder, one entry per line
    line_unit: IntTable  # [i]: scratch of the pairing finder, the unit of run_lines[i]
    owner: IntTable  # [cell]: scratch of the pairing finder
    visit: IntTable  # [cell], and one more: scratch of the pairing finder
    report: IntTable  # [2]: the pairing finder's first failure and units left out
    found_zone: IntTable  # [2]: the zone of the last proof found (and a threat win's blocks)
    zones: IntTable  # [ply]: the zone a node hands its parent
    zone_maps: IntTable  # [(mapping * chunks + chunk) * 256 + byte]: cell-set permutations
    zone_chunks: int  # bytes of a cell set
    deadline: Any  # [1]: a time.perf_counter() value, inf for none (floats)


class Root(NamedTuple):
    """A non-terminal position in the raw form of the search (a row of the node stack), and
    its images' keys."""

    me: int  # stones of the side to move
    opp: int  # stones of the other side
    live_me: int  # the number of lines the side to move can still complete
    live_opp: int  # the same for the other side
    threats_me: int  # threat cells of the side to move
    threats_opp: int  # threat cells of the other side
    empty: int  # empty cells
    empties: int  # their number
    images: tuple[int, ...]  # the packed key of each symmetric image


def fits_compiled(rules: Rules) -> bool:
    """Whether the compiled search can play ``rules``."""
    return rules.cells <= MAX_COMPILED_CELLS


def default_engine(rules: Rules) -> str:
    """``"compiled"`` (Numba) when Numba is installed and the board fits it
    (:func:`fits_compiled`), else ``"python"``."""
    if importlib.util.find_spec("numba") is None:
        return "python"
    return "compiled" if fits_compiled(rules) else "python"


class SearchEngine:
    """The negamax search bound to one game's tables: what :class:`Prover` drives.

    ``compiled``: run the Numba-compiled instance of :mod:`solver.prover.negamax` on int64 arrays
    (boards that :func:`fits_compiled`), else its plain-Python instance on lists of Python
    integers. ``table_bits``: the table has ``2**table_bits`` slots. ``prunings``: which
    prunings the search uses.
    """

    def __init__(
        self,
        rules: Rules,
        table_bits: int,
        *,
        compiled: bool,
        prunings: Prunings = CLASSIC_PRUNINGS,
    ) -> None:
        if compiled and not fits_compiled(rules):
            raise ValueError(f"{rules.name} is too large for the compiled search")
        if table_bits < 1:
            raise ValueError(f"table_bits must be at least 1, got {table_bits}")
        self.compiled = compiled
        self.prunings = prunings
        self._kernel = _kernel(compiled)
        self._tables = _tables(rules, table_bits, compiled, prunings)
        if compiled:
            # Compile now (or load from Numba's cache) rather than inside the first search,
            # whose deadline is not meant to pay for it: a node with no live line returns at
            # once.
            self._kernel._negamax(self._tables, 0, -1, 1)
            self._tables.counters[:] = 0

    @property
    def counters(self) -> SearchCounters:
        """Every counter so far."""
        counts = self._tables.counters
        return SearchCounters(int(counts[NODES]), *map(int, counts[FIRST_PRUNING:COUNTERS]))

    @property
    def nodes(self) -> int:
        """Total nodes searched so far."""
        return int(self._tables.counters[NODES])

    def threat_win(self, root: Root) -> int:
        """The plies of a win of the mover by continuous threats (``_threat_win``), or 0 when
        none is found; 0 as well when either side holds a threat cell already, which the
        search itself settles."""
        if root.threats_me or root.threats_opp:
            return 0
        arguments: tuple[int, ...] = (root.me, root.opp, root.empty)
        if self.compiled:
            arguments = tuple(_int64(value) for value in arguments)
        return int(self._kernel._threat_win(self._tables, *arguments, root.empties))

    def set_deadline(self, deadline: float | None) -> None:
        """Stop the searches past ``deadline`` (a ``time.perf_counter()`` value; None: never)."""
        self._tables.deadline[0] = math.inf if deadline is None else deadline

    def clear(self) -> None:
        """Forget the transposition table and the history heuristic."""
        tables = self._tables
        tables.table.clear()
        tables.history[:] = [0] * len(tables.history)

    def moves(self, root: Root) -> list[int] | None:
        """The moves the search tries at ``root``, in its order (``_order_moves``): a forced
        block alone; else the empty cells best first, all dead cells but one left out and,
        with domination on, the dominated moves. None when one of them makes two threats the
        opponent cannot answer (the mover wins in 3). For other searches over the same moves
        (bench/bench_pns.py)."""
        self._place(root)
        count = self._kernel._order_moves(self._tables, 0)
        if count < 0:
            return None
        return [int(cell) for cell in self._tables.orders[:count]]

    def breaker_holds(self, root: Root, maker_to_move: bool) -> bool:
        """Whether the search closes ``root`` at once by a proof that the maker cannot win, in
        a window that asks only that: with the maker to move (``maker_to_move``), a proof
        that its opponent keeps it from completing a line (``_breaker_holds``: a pairing, the
        potential or a partial pairing, by the prunings on); with the breaker to move, the
        same or a pairing after one of its moves (``_holds_within_a_move``)."""
        arguments: tuple[int, ...] = (root.me, root.opp, root.empty)
        if self.compiled:
            arguments = tuple(_int64(value) for value in arguments)
        me, opp, empty = arguments
        if maker_to_move:
            return bool(
                self._kernel._breaker_holds(self._tables, me, opp, empty, root.empties, True)
            )
        return bool(self._kernel._holds_within_a_move(self._tables, opp, me, empty, root.empties))

    def search(self, root: Root, alpha: int, beta: int) -> int:
        """One fail-soft search of ``root`` with the window ``(alpha, beta)``; raises
        :class:`SearchTimeout` past the deadline."""
        tables = self._tables
        self._place(root)
        tables.counters[TIMED_OUT] = 0
        if self.compiled:
            with _signals_stop(tables.deadline):
                score = self._kernel._negamax(tables, 0, alpha, beta)
        else:
            score = self._kernel._negamax(tables, 0, alpha, beta)
        if tables.counters[TIMED_OUT]:
            raise SearchTimeout(f"search passed its deadline after {self.nodes:,} nodes")
        return int(score)

    def _place(self, root: Root) -> None:
        """Put ``root`` at ply 0 of the node stack and of the image keys."""
        tables = self._tables
        fields = list(root[:8])
        if self.compiled:
            words = [key & WORD for key in root.images] + [key >> 64 for key in root.images]
            tables.images[: len(words)] = [_int64(word) for word in words]
            fields = [_int64(value) for value in fields]
        else:
            tables.images[0] = sum(
                key << shift for key, shift in zip(root.images, tables.image_shifts)
            )
        tables.nodes[:NODE_FIELDS] = fields + [0] * (NODE_FIELDS - len(fields))

    def zone(self) -> int:
        """The relevance zone the last :meth:`search` proved its value with (with zones on):
        a cell set, the whole board when none was kept. It is the zone of "the side to move
        cannot win" when the window was at or above 0 and the value at most 0, of "the
        opponent cannot win" when the window was at or below 0 and the value at least 0."""
        zone = int(self._tables.zones[0])
        return zone & self._tables.full if zone < 0 else zone


@contextlib.contextmanager
def _signals_stop(deadline: Any) -> Iterator[None]:
    """Within the block, Ctrl-C or SIGTERM stops the compiled search, then comes again once it
    has returned, to whoever handled it before (Python's ``KeyboardInterrupt``, a command's
    own handler). Python runs a signal's handler only between its own instructions: in the
    compiled search, when it reads the clock, every few thousand nodes, where an exception
    raised would be lost, so the handler here only moves the deadline to the past."""
    kept = deadline[0]

    def stop(_signum: int) -> None:
        deadline[0] = -math.inf

    try:
        with signals_held([signal.SIGINT, signal.SIGTERM], stop) as received:
            yield
    finally:
        deadline[0] = kept
    if received:
        signal.raise_signal(received[0])


def root_of(position: Position) -> Root:
    """The raw search state of a non-terminal position."""
    rules = position.rules
    if position.x_to_move:
        me, opp = position.x, position.o
    else:
        me, opp = position.o, position.x
    live_me = live_opp = threats_me = threats_opp = 0
    for line in rules.lines:
        if not line & opp:
            live_me += 1
            rest = line & ~me
            if rest & (rest - 1) == 0:
                threats_me |= rest
        if not line & me:
            live_opp += 1
            rest = line & ~opp
            if rest & (rest - 1) == 0:
                threats_opp |= rest
    images = position.image_keys()
    return Root(
        me,
        opp,
        live_me,
        live_opp,
        threats_me,
        threats_opp,
        position.empty,
        position.empty_count,
        images,
    )


WORD = (1 << 64) - 1
"""The low 64 bits of an integer."""


def _int64(value: int) -> int:
    """The signed 64-bit integer with the bits of ``0 <= value < 2**64`` (what the compiled
    search holds)."""
    return value - (1 << 64) if value >> 63 else value


def _kernel(compiled: bool) -> ModuleType:
    """The instance of :mod:`solver.prover.negamax` to run: the module itself (plain Python), or the
    same file loaded a second time under :data:`COMPILED_KERNEL`, whose functions it compiles
    with Numba because of that name."""
    if not compiled:
        return negamax
    module = sys.modules.get(COMPILED_KERNEL)
    if module is None:
        spec = importlib.util.spec_from_file_location(COMPILED_KERNEL, negamax.__file__)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[COMPILED_KERNEL] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[COMPILED_KERNEL]
            raise
    return module


def _zone_maps(rules: Rules) -> tuple[list[int], int]:
    """The cell-set permutations of relevance zones, a byte of cells at a time: mapping ``i``
    moves a cell set by symmetry ``i`` (cell ``c`` to ``perm[c]``), mapping ``symmetries +
    i`` by its inverse; and the number of bytes of a cell set."""
    chunks = -(-rules.cells // KEY_CHUNK_BITS)
    targets = [list(perm) for perm in rules.symmetries]
    for perm in rules.symmetries:
        inverse = [0] * rules.cells
        for cell, image in enumerate(perm):
            inverse[image] = cell
        targets.append(inverse)
    maps = []
    for target in targets:
        for chunk in range(chunks):
            for byte in range(256):
                mapped = 0
                for bit in range(KEY_CHUNK_BITS):
                    cell = chunk * KEY_CHUNK_BITS + bit
                    if byte >> bit & 1 and cell < rules.cells:
                        mapped |= 1 << target[cell]
                maps.append(mapped)
    return maps, chunks


def _tables(rules: Rules, table_bits: int, compiled: bool, prunings: Prunings) -> SearchTables:
    """The search tables of ``rules``: lists of Python integers, or int64 arrays if
    ``compiled`` (values of 64 bits are stored as their signed 64-bit pattern)."""
    cells, k = rules.cells, rules.k
    through = rules.lines_through
    run_lines, run_continues = runs(rules.lines, k)
    symmetries = rules.symmetries
    move_bits = [0] * (2 * cells * len(symmetries))
    x_parity = cells & 1
    for c in range(cells):
        for image, perm in enumerate(symmetries):
            move_bits[(x_parity * cells + c) * len(symmetries) + image] = 1 << perm[c]
            move_bits[((1 - x_parity) * cells + c) * len(symmetries) + image] = 1 << (
                cells + perm[c]
            )
    width = 2 * cells
    packed_move_bits = [
        sum(
            bit << (image * width) for image, bit in enumerate(move_bits[at : at + len(symmetries)])
        )
        for at in range(0, len(move_bits), len(symmetries))
    ]
    zone_maps, zone_chunks = _zone_maps(rules) if prunings.zones else ([0], 1)
    tables = SearchTables(
        k=k,
        cells=cells,
        full=rules.full,
        symmetries=len(symmetries),
        flags=prunings.flags,
        lines=list(rules.lines),
        through=through,
        line_start=None,
        move_bits=packed_move_bits,
        own_weight=[WEIGHT_BASE**held for held in range(k + 1)],
        block_weight=[BLOCK_BASE**held for held in range(k + 1)],
        threat_bonus=THREAT_BONUS * WEIGHT_BASE**k,
        images=[0] * (cells + 1),
        key_mask=(1 << width) - 1,
        image_shifts=tuple(image * width for image in range(len(symmetries))),
        nodes=[0] * ((cells + 1) * NODE_FIELDS),
        orders=[0] * ((cells + 1) * cells),
        reps=[0] * ((cells + 1) * cells),
        weights=[0] * cells,
        dominance=[0] * cells,
        table=TranspositionTable.allocate(table_bits, compiled, prunings.zones),
        history=[0] * cells,
        counters=[0] * COUNTERS,
        threat_stack=[0] * (5 * THREAT_DEPTH),
        run_lines=list(run_lines),
        run_continues=list(run_continues),
        unit_cells=[0] * len(rules.lines),
        line_unit=[0] * len(rules.lines),
        owner=[0] * cells,
        visit=[0] * (cells + 1),
        report=[0, 0],
        found_zone=[0, 0],
        zones=[0] * (cells + 1),
        zone_maps=zone_maps,
        zone_chunks=zone_chunks,
        deadline=[math.inf],
    )
    if not compiled:
        return tables
    import numpy as np

    def int64(values: list[int]) -> Any:
        return np.array([_int64(value) for value in values], dtype=np.int64)

    def zeros(count: int) -> Any:
        return np.zeros(count, dtype=np.int64)

    return tables._replace(
        full=_int64(rules.full),
        lines=int64(list(rules.lines)),
        through=int64([line for lines in through for line in lines]),
        line_start=np.cumsum([0] + [len(lines) for lines in through], dtype=np.int64),
        move_bits=int64(
            [
                word
                for at in range(0, len(move_bits), len(symmetries))
                for word in [bits & WORD for bits in move_bits[at : at + len(symmetries)]]
                + [bits >> 64 for bits in move_bits[at : at + len(symmetries)]]
            ]
        ),
        own_weight=np.array(tables.own_weight, dtype=np.int64),
        block_weight=np.array(tables.block_weight, dtype=np.int64),
        images=zeros((cells + 1) * len(symmetries) * 2),
        key_mask=0,  # plain Python only
        image_shifts=(0,),
        nodes=zeros(len(tables.nodes)),
        orders=zeros(len(tables.orders)),
        reps=zeros(len(tables.reps)),
        weights=zeros(cells),
        dominance=zeros(cells),
        history=zeros(cells),
        counters=zeros(COUNTERS),
        threat_stack=zeros(5 * THREAT_DEPTH),
        run_lines=int64(list(run_lines)),
        run_continues=np.array(run_continues, dtype=np.int64),
        unit_cells=zeros(len(rules.lines)),
        line_unit=zeros(len(rules.lines)),
        owner=zeros(cells),
        visit=zeros(cells + 1),
        report=zeros(2),
        found_zone=zeros(2),
        zones=zeros(cells + 1),
        zone_maps=int64(zone_maps),
        deadline=np.full(1, math.inf),
    )


class Prover:
    """Negamax alpha-beta prover for one game; reuse it, its table persists between calls.

    ``weak=True``: :meth:`solve` guarantees only the outcome (win, draw or loss): the score's
    sign is right, but the remoteness of a win or a loss is only a bound (a draw's remoteness
    is always exact). :meth:`move_values` is exact in both modes.
    ``table_bits``: the table has ``2**(table_bits + 1)`` slots: 24 bytes each compiled (192
    MiB at the default; 40 bytes with relevance zones); in plain Python only the slots written
    take memory, about 200 bytes each.
    ``engine``: ``"compiled"`` or ``"python"`` (see the module docstring); by default
    :func:`default_engine`.
    ``prunings``: which prunings the search uses (:class:`Prunings`; the values are the same
    whichever are on). The threat search is also tried at the root in weak mode, and a
    pairing for each side at the root of every solve.
    """

    def __init__(
        self,
        rules: Rules,
        *,
        weak: bool = False,
        table_bits: int = 22,
        engine: str | None = None,
        prunings: Prunings = CLASSIC_PRUNINGS,
    ) -> None:
        self.rules = rules
        self.weak = weak
        self.table_bits = table_bits
        self.engine = engine or default_engine(rules)
        if self.engine not in ENGINES:
            raise ValueError(f"unknown prover engine {engine!r} (compiled or python)")
        self.prunings = prunings
        self._search = SearchEngine(
            rules, table_bits + 1, compiled=self.engine == "compiled", prunings=prunings
        )

    @property
    def counters(self) -> SearchCounters:
        """Every counter of this prover so far (:class:`SearchCounters`)."""
        return self._search.counters

    @property
    def nodes(self) -> int:
        """Total nodes searched by this prover so far."""
        return self._search.nodes

    @property
    def pairings(self) -> int:
        """Total nodes this prover closed by a pairing so far."""
        return self.counters.pairings

    @property
    def threat_wins(self) -> int:
        """Total nodes this prover closed by a win by continuous threats so far."""
        return self.counters.threats

    def clear(self) -> None:
        """Forget the transposition table and the history heuristic."""
        self._search.clear()

    # -- public searches ----------------------------------------------------------------------

    def solve(
        self,
        position: Position,
        deadline: float | None = None,
        *,
        exact_search: str = "bisection",
    ) -> SearchResult:
        """The score of ``position`` for its side to move (exact unless ``weak``).

        ``deadline``: a ``time.perf_counter()`` value; past it :class:`SearchTimeout` is raised
        (the table keeps what was proved, so a retry resumes cheaply).
        ``exact_search``: the order of the probes of an exact score, one of
        :data:`EXACT_SEARCHES` (the score is the same either way; weak mode ignores it).
        """
        if exact_search not in EXACT_SEARCHES:
            raise ValueError(
                f"unknown exact search {exact_search!r} (one of {', '.join(EXACT_SEARCHES)})"
            )
        started = time.perf_counter()
        open_position = _terminal_score(position) is None
        if open_position and self.prunings.pairings and _pairing_draw(position):
            return SearchResult(
                0,
                Value.from_score(0, position.empty_count),
                0,
                time.perf_counter() - started,
                "pairing",
            )
        if self.weak and self.prunings.threats and open_position:
            # a win by continuous threats needs no search in weak mode: its length is a bound
            plies = self.threat_win(position)
            if plies:
                score = WIN_SCORE - plies
                return SearchResult(
                    score,
                    Value.from_score(score, position.empty_count),
                    0,
                    time.perf_counter() - started,
                    "threats",
                    threats=1,
                    counters=SearchCounters(threats=1),
                )
        before = self.counters
        score = self._score(position, deadline, exact=not self.weak, exact_search=exact_search)
        counts = self.counters - before
        return SearchResult(
            score,
            Value.from_score(score, position.empty_count),
            counts.nodes,
            time.perf_counter() - started,
            counts.technique,
            counts.pairings,
            counts.threats,
            counts,
        )

    def move_values(
        self, position: Position, deadline: float | None = None
    ) -> list[tuple[int, Value]]:
        """Every legal move with its exact value for the mover, best first (then by cell)."""
        values = []
        for cell in position.legal_moves():
            child = position.play(cell)
            score = move_score(self._score(child, deadline, exact=True))
            values.append((cell, Value.from_score(score, child.empty_count + 1)))
        values.sort(key=lambda item: (item[1].sort_key, item[0]))
        return values

    def bound(
        self, position: Position, alpha: int, beta: int, deadline: float | None = None
    ) -> int:
        """One fail-soft probe of ``position`` with the window ``(alpha, beta)``.

        Returns ``v``: the exact score if ``alpha < v < beta``, else an upper bound
        (``v <= alpha``) or a lower bound (``v >= beta``).
        """
        if alpha >= beta:
            raise ValueError(f"empty window ({alpha}, {beta})")
        terminal = _terminal_score(position)
        if terminal is not None:
            return terminal
        self._search.set_deadline(deadline)
        return self._search.search(root_of(position), alpha, beta)

    def threat_win(self, position: Position) -> int:
        """The plies of a win of the side to move by continuous threats (at most), or 0 when
        the threat search finds none (or a side already holds a threat cell, or the game is
        over)."""
        if _terminal_score(position) is not None:
            return 0
        return self._search.threat_win(root_of(position))

    def bound_zone(
        self, position: Position, alpha: int, beta: int, deadline: float | None = None
    ) -> tuple[int, int]:
        """:meth:`bound` and the relevance zone of the bound it returns (a cell set): a value
        at most ``alpha`` (an upper bound) still holds with the mover's stones on every empty
        cell outside the zone, a greater one (a lower bound) with the opponent's; more stones
        of that side outside it, or fewer of the other's, leave it true too (docs/prover.md).
        Needs ``prunings.zones``. An exact value, or a finished game, comes with the whole
        board."""
        if not self.prunings.zones:
            raise ValueError("relevance zones are off: make the prover with Prunings(zones=True)")
        value = self.bound(position, alpha, beta, deadline)
        if _terminal_score(position) is not None or alpha < value < beta:
            return value, self.rules.full
        return value, self._search.zone()

    def cannot_win_zone(
        self, position: Position, *, mover: bool = True, deadline: float | None = None
    ) -> int | None:
        """A relevance zone of "the side to move cannot win" (``mover`` True) or "its opponent
        cannot win" (False), or None when that side can win: that side still cannot win with
        its stones on every empty cell outside the zone (:meth:`bound_zone`)."""
        if mover:
            value, zone = self.bound_zone(position, 0, 1, deadline)
            return zone if value <= 0 else None
        value, zone = self.bound_zone(position, -1, 0, deadline)
        return zone if value >= 0 else None

    # -- internals ----------------------------------------------------------------------------

    def _score(
        self,
        position: Position,
        deadline: float | None,
        exact: bool,
        exact_search: str = "bisection",
    ) -> int:
        terminal = _terminal_score(position)
        if terminal is not None:
            return terminal
        self._search.set_deadline(deadline)
        root = root_of(position)
        if exact and exact_search == "deepening":
            return self._deepen(root, position.empty_count)
        # two null windows, "can the mover win?" and then "can it lose?", rather than one
        # window around the draw: in a null window each node only has to show a bound, and a
        # pairing shows one with no search below it
        score = self._search.search(root, 0, 1)
        if score <= 0:
            score = self._search.search(root, -1, 0)
            if score >= 0:
                return 0
        if not exact:
            return score
        empties = position.empty_count
        if score > 0:  # a win in r plies, r odd, r <= empties
            low, high = score, WIN_SCORE - 1
            low = max(low, WIN_SCORE - empties)
        else:  # a loss in r plies, r even, 2 <= r <= empties
            low, high = -(WIN_SCORE - 2), score
            high = min(high, -(WIN_SCORE - empties))
        while low < high:
            middle = (low + high) // 2
            value = self._search.search(root, middle, middle + 1)
            if value <= middle:
                high = value
            else:
                low = value
        return low

    def _deepen(self, root: Root, empties: int) -> int:
        """The exact score of an open position by deepening (:data:`EXACT_SEARCHES`): a search
        cut at a win's length leaves out every longer line, so a short win is proved without
        the long proof the outcome search may meet first."""
        for plies in range(1, empties + 1, 2):  # the mover's wins end on its own moves
            score = WIN_SCORE - plies
            if self._search.search(root, score - 1, score) >= score:
                return score
        if self._search.search(root, -1, 0) >= 0:
            return 0
        for plies in range(2, empties + 1, 2):
            score = plies - WIN_SCORE
            if self._search.search(root, score, score + 1) <= score:
                return score
        raise AssertionError(f"a loss with no length in {empties} empty cells")


def _terminal_score(position: Position) -> int | None:
    """The score of a finished game (``-WIN_SCORE``: the side to move has lost), else None."""
    if position.winner is not None:
        return -WIN_SCORE
    if position.empty == 0:
        return 0
    return None


def _pairing_draw(position: Position) -> bool:
    """Whether each side has a pairing that blocks every line the other could complete
    (:mod:`solver.prover.pairing`): then neither can win, and the position is a draw."""
    return all(pairing_for(position, defender_is_x) is not None for defender_is_x in (True, False))
