"""Negamax alpha-beta prover for boards too big to enumerate.

:class:`Prover` finds the exact value (outcome and remoteness) of one position by a depth-first
negamax search with a transposition table. The search itself is :func:`_negamax` in
:mod:`solver.negamax`, written once and run two ways (:class:`SearchEngine`): compiled by
Numba on 64-bit integers for boards of at most :data:`MAX_COMPILED_CELLS` cells (the default
there, :func:`default_engine`), and as plain Python on unbounded integers for any board. This
module holds what both share: the constants, the per-rules tables, the exact-score driver and
the public :class:`Prover`. The search:

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
* **Transposition table** keyed by the canonical key: the smallest packed key
  (``x | o << cells``) among the symmetric images. The images' keys are kept in a stack, one
  row per ply of the current line of play, and a move ORs its precomputed bits into the next
  row, so no permutation is applied per node. The table is a pair of arrays in buckets of two
  slots (a key's bucket is the top bits of a multiplicative hash); a slot holds a key and its
  lower and upper bounds, with the number of empty cells beside them so that the bigger
  subtree survives a collision. A lost entry costs time, never correctness (the whole key is
  compared). The table persists between calls, which is what makes :meth:`Prover.move_values`
  and opening books cheap.
* **Pairings** (:mod:`solver.pairing`, the finder :func:`solver.negamax._find_pairing`) close
  nodes with no search below them. In a window that only asks whether the mover can win
  (``alpha >= 0``), a pairing of the opponent's over the mover's open lines proves it cannot:
  the node fails low at 0. In one that only asks whether the opponent can win (``beta <=
  0``), a pairing of the mover's, now or after one of its moves (each move is tried), proves
  that the opponent cannot: the node fails high at 0. Both are bounds, stored as such.
* **Wins by continuous threats** (``_threat_win`` in :mod:`solver.negamax`, the simple form
  of L. V. Allis' threat-space search) close nodes too: a sequence of moves of the mover's,
  each making a threat whose block is forced, ending in two threats at once, proves a win in
  at most as many plies as it takes. That is a lower bound on the score, so it closes a node
  when it reaches ``beta`` (it is stored as such), in exact mode as in weak mode: a faster
  win would only raise the score, and the bisection's probes still decide the remoteness.
  In weak mode it is also tried at the root, where a win found closes the proof with no
  search (``Prover(threats=False)`` turns it off; the values are the same).
* **Exact scores** come from null-window probes: first ``(0, 1)`` (can the mover win?), then
  if not ``(-1, 0)`` (can it lose?), which tells a win, a draw or a loss, and the pairings work
  in both; then, for a win or a loss, bisection on the remoteness with null windows.

Both ways of running the search use the same tables and the same table scheme, so they search
exactly the same tree. The compiled one holds a cell set in one 64-bit word (cell 63 is the
sign bit) and a packed key in two, its low and high 64 bits, compared as one unsigned 128-bit
integer and hashed as their XOR: the plain one's key, comparison and hash, bit for bit. Each
side's live lines are counted, not listed (a line is live for the mover when it holds no
opponent stone, a test on the stones), so the number of lines has no limit.
"""

from __future__ import annotations

import importlib.util
import math
import mmap
import sys
import time
from collections import defaultdict
from types import ModuleType
from typing import Any, NamedTuple

from ttt_solve.solver.errors import SearchTimeout
from ttt_solve.solver.pairing import pairing_for, runs
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import WIN_SCORE, Value, move_score

MAX_COMPILED_CELLS = 64
"""Cells of the largest board the compiled search holds: a cell set is one 64-bit integer, a
packed key (two bits per cell) two of them."""

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

WIN1 = WIN_SCORE - 1
"""A win in 1: the side to move has a threat."""
LOSE2 = -(WIN_SCORE - 2)
"""A loss in 2: the side to move faces two threats."""
WIN3 = WIN_SCORE - 3
"""The fastest win without a threat on the board."""
LOSE4 = -(WIN_SCORE - 4)
"""The fastest loss without a threat on the board."""

ENGINES = ("compiled", "python")
"""The two ways of running the search: Numba-compiled, and plain Python."""


class SearchResult(NamedTuple):
    """The result of :meth:`Prover.solve`.

    * ``score``: side-to-move score (:mod:`solver.value`); exact unless the prover is weak,
    * ``value``: ``Value.from_score(score, position.empty_count)``,
    * ``nodes``: nodes searched by this call,
    * ``seconds``: wall time of this call,
    * ``technique``: what closed the proof: ``"search"`` (the negamax search alone),
      ``"search+pairing"`` (the search, some of its nodes closed by a pairing instead of a
      search below them), ``"search+threats"`` (some closed by a win by continuous threats
      instead), ``"search+pairing+threats"`` (some each way), ``"pairing"`` (a draw proved by
      a pairing for each side, :mod:`solver.pairing`, with no search), or ``"threats"`` (a
      win proved by continuous threats from the position itself, with no search; weak mode),
    * ``pairings``: the nodes of this call closed by a pairing,
    * ``threats``: the nodes of this call closed by a win by continuous threats (1 when the
      technique is ``"threats"``: the position itself).
    """

    score: int
    value: Value
    nodes: int
    seconds: float
    technique: str = "search"
    pairings: int = 0
    threats: int = 0


def technique_name(pairings: int, threats: int) -> str:
    """The technique of a search (see :class:`SearchResult`) that closed ``pairings`` nodes
    by a pairing and ``threats`` by a threat sequence."""
    return "search" + ("+pairing" if pairings else "") + ("+threats" if threats else "")


def child_window(alpha: int, beta: int) -> tuple[int, int]:
    """The child's window that answers the parent's window ``(alpha, beta)``.

    A parent's score is ``move_score(s)`` of its child's score ``s``, a decreasing map; the
    child must tell ``s`` below the largest child score still worth ``>= beta`` to the parent
    and above the smallest worth ``<= alpha``.
    """
    return (-beta - 1 if beta > 0 else 1 - beta), (-alpha - 1 if alpha >= 0 else 1 - alpha)


IntTable = Any
"""A flat table of integers: an int64 NumPy array compiled; in plain Python a ``list[int]``,
or for the transposition table's slots a dict that holds only the slots written."""


class SearchTables(NamedTuple):
    """Everything the search reads and writes besides its arguments; flat 1-D tables indexed
    with explicit strides, the form Numba compiles."""

    k: int  # stones in a row to win
    cells: int  # cells of the board (the stride of ``orders``)
    symmetries: int  # symmetric images kept per ply (the stride of ``images``, ``move_bits``)
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
    orders: IntTable  # [ply * cells + j]: move-order buffers, one per ply of the line
    slots: int  # slots of the transposition table, a power of two
    table_shift: int  # 64 - log2(slots): a key's bucket is in its hash's top bits
    table_keys: IntTable  # compiled [slot * 2 + word], plain Python [slot]
    table_bounds: IntTable  # [slot], 0 for an empty slot
    history: IntTable  # [cell]: cut-off counts of the history heuristic
    counters: IntTable  # [4]: nodes searched, 1 once the deadline has passed, the nodes
    # closed by a pairing, and those closed by a threat search
    threat_search: int  # 1: look for wins by continuous threats at the nodes, 0: do not
    threat_stack: IntTable  # [5 * THREAT_DEPTH]: scratch of the threat search
    run_lines: IntTable  # the lines in runs, for the pairings (solver.pairing.runs)
    run_continues: IntTable  # [i]: 1 when run_lines[i] follows run_lines[i - 1] in its run
    unit_cells: IntTable  # [unit]: scratch of the pairing finder, one entry per line
    owner: IntTable  # [cell]: scratch of the pairing finder
    visit: IntTable  # [cell], and one more: scratch of the pairing finder
    deadline: Any  # [1]: a time.perf_counter() value, inf for none (floats)


class Root(NamedTuple):
    """A non-terminal position in the raw form of the search (the arguments of
    ``_negamax``), and its images' keys."""

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

    ``compiled``: run the Numba-compiled instance of :mod:`solver.negamax` on int64 arrays
    (boards that :func:`fits_compiled`), else its plain-Python instance on lists of Python
    integers. ``table_bits``: the table has ``2**table_bits`` slots.
    """

    def __init__(
        self, rules: Rules, table_bits: int, *, compiled: bool, threats: bool = True
    ) -> None:
        if compiled and not fits_compiled(rules):
            raise ValueError(f"{rules.name} is too large for the compiled search")
        if table_bits < 1:
            raise ValueError(f"table_bits must be at least 1, got {table_bits}")
        self.compiled = compiled
        self._kernel = _kernel(compiled)
        self._tables = _tables(rules, table_bits, compiled, threats)
        if compiled:
            # Compile now (or load from Numba's cache) rather than inside the first search,
            # whose deadline is not meant to pay for it: a node with no live line returns at
            # once.
            self._kernel._negamax(self._tables, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 1)
            self._tables.counters[:] = 0

    @property
    def nodes(self) -> int:
        """Total nodes searched so far."""
        return int(self._tables.counters[0])

    @property
    def pairings(self) -> int:
        """Total nodes closed by a pairing so far."""
        return int(self._tables.counters[2])

    @property
    def threats(self) -> int:
        """Total nodes closed by a win by continuous threats so far."""
        return int(self._tables.counters[3])

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
        if self.compiled:
            tables.table_keys[:] = 0
            tables.table_bounds[:] = 0
        else:
            tables.table_keys.clear()
            tables.table_bounds.clear()
        tables.history[:] = [0] * len(tables.history)

    def search(self, root: Root, alpha: int, beta: int) -> int:
        """One fail-soft search of ``root`` with the window ``(alpha, beta)``; raises
        :class:`SearchTimeout` past the deadline."""
        tables = self._tables
        arguments: tuple[int, ...] = root[:8]
        if self.compiled:
            words = [key & WORD for key in root.images] + [key >> 64 for key in root.images]
            tables.images[: len(words)] = [_int64(word) for word in words]
            arguments = tuple(_int64(value) for value in arguments)
        else:
            tables.images[0] = sum(
                key << shift for key, shift in zip(root.images, tables.image_shifts)
            )
        tables.counters[1] = 0
        score = self._kernel._negamax(tables, *arguments, 0, alpha, beta)
        if tables.counters[1]:
            raise SearchTimeout(f"search passed its deadline after {self.nodes:,} nodes")
        return int(score)


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


COMPILED_KERNEL = "ttt_solve.solver.negamax_compiled"
"""The module name of the compiled instance of :mod:`solver.negamax` (see :func:`_kernel`)."""


def _kernel(compiled: bool) -> ModuleType:
    """The instance of :mod:`solver.negamax` to run: the module itself (plain Python), or the
    same file loaded a second time under :data:`COMPILED_KERNEL`, whose functions it compiles
    with Numba because of that name."""
    if not compiled:
        from ttt_solve.solver import negamax

        return negamax
    module = sys.modules.get(COMPILED_KERNEL)
    if module is None:
        from ttt_solve.solver import negamax

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


def _zeroed_words(count: int) -> Any:
    """``count`` int64 zeros in memory of the ordinary page size, for the table's arrays.

    NumPy asks the kernel for huge pages for large arrays, and on a machine where memory is
    fragmented the first touch of each huge page waits for the kernel to compact memory: the
    first searches through a fresh 768 MiB table took seconds instead of hundredths. An
    anonymous mapping (zero-filled by the kernel, as the table needs) is not asked for them.
    """
    import numpy as np

    return np.frombuffer(mmap.mmap(-1, max(8, 8 * count)), dtype=np.int64, count=count)


def _tables(rules: Rules, table_bits: int, compiled: bool, threats: bool) -> SearchTables:
    """The search tables of ``rules``: lists of Python integers, or int64 arrays if
    ``compiled`` (values of 64 bits are stored as their signed 64-bit pattern); ``threats``:
    whether the search looks for wins by continuous threats."""
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
    slots = 1 << table_bits
    tables = SearchTables(
        k=k,
        cells=cells,
        symmetries=len(symmetries),
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
        orders=[0] * ((cells + 1) * cells),
        slots=slots,
        table_shift=64 - table_bits,
        # the slots are made as they are read or written (a slot never written holds 0), so
        # that a prover costs no time or memory before it searches
        table_keys=defaultdict(int),
        table_bounds=defaultdict(int),
        history=[0] * cells,
        counters=[0, 0, 0, 0],
        threat_search=int(threats),
        threat_stack=[0] * (5 * THREAT_DEPTH),
        deadline=[math.inf],
        run_lines=list(run_lines),
        run_continues=list(run_continues),
        unit_cells=[0] * len(rules.lines),
        owner=[0] * cells,
        visit=[0] * (cells + 1),
    )
    if not compiled:
        return tables
    import numpy as np

    def int64(values: list[int]) -> Any:
        return np.array([_int64(value) for value in values], dtype=np.int64)

    return tables._replace(
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
        images=np.zeros((cells + 1) * len(symmetries) * 2, dtype=np.int64),
        key_mask=0,  # plain Python only
        image_shifts=(0,),
        orders=np.zeros(len(tables.orders), dtype=np.int64),
        table_keys=_zeroed_words(2 * slots),
        table_bounds=_zeroed_words(slots),
        history=np.zeros(cells, dtype=np.int64),
        counters=np.zeros(4, dtype=np.int64),
        threat_stack=np.zeros(5 * THREAT_DEPTH, dtype=np.int64),
        deadline=np.full(1, math.inf),
        run_lines=int64(list(run_lines)),
        run_continues=np.array(run_continues, dtype=np.int64),
        unit_cells=np.zeros(len(rules.lines), dtype=np.int64),
        owner=np.zeros(cells, dtype=np.int64),
        visit=np.zeros(cells + 1, dtype=np.int64),
    )


class Prover:
    """Negamax alpha-beta prover for one game; reuse it, its table persists between calls.

    ``weak=True``: :meth:`solve` guarantees only the outcome (win, draw or loss): the score's
    sign is right, but the remoteness of a win or a loss is only a bound (a draw's remoteness
    is always exact). :meth:`move_values` is exact in both modes.
    ``table_bits``: the table has ``2**(table_bits + 1)`` slots: 24 bytes each compiled (192
    MiB at the default); in plain Python only the slots written take memory, about 200 bytes
    each.
    ``engine``: ``"compiled"`` or ``"python"`` (see the module docstring); by default
    :func:`default_engine`.
    ``threats``: look for wins by continuous threats (the default), at the root in weak mode
    and at the nodes of the search in both modes; False searches without them (the values
    are the same).
    """

    def __init__(
        self,
        rules: Rules,
        *,
        weak: bool = False,
        table_bits: int = 22,
        engine: str | None = None,
        threats: bool = True,
    ) -> None:
        self.rules = rules
        self.weak = weak
        self.table_bits = table_bits
        self.engine = engine or default_engine(rules)
        if self.engine not in ENGINES:
            raise ValueError(f"unknown prover engine {engine!r} (compiled or python)")
        self.threats = threats
        self._search = SearchEngine(
            rules, table_bits + 1, compiled=self.engine == "compiled", threats=threats
        )

    @property
    def nodes(self) -> int:
        """Total nodes searched by this prover so far."""
        return self._search.nodes

    @property
    def pairings(self) -> int:
        """Total nodes this prover closed by a pairing so far."""
        return self._search.pairings

    @property
    def threat_wins(self) -> int:
        """Total nodes this prover closed by a win by continuous threats so far."""
        return self._search.threats

    def clear(self) -> None:
        """Forget the transposition table and the history heuristic."""
        self._search.clear()

    # -- public searches ----------------------------------------------------------------------

    def solve(self, position: Position, deadline: float | None = None) -> SearchResult:
        """The score of ``position`` for its side to move (exact unless ``weak``).

        ``deadline``: a ``time.perf_counter()`` value; past it :class:`SearchTimeout` is raised
        (the table keeps what was proved, so a retry resumes cheaply).
        """
        started = time.perf_counter()
        if _terminal_score(position) is None and _pairing_draw(position):
            return SearchResult(
                0,
                Value.from_score(0, position.empty_count),
                0,
                time.perf_counter() - started,
                "pairing",
            )
        if self.weak and self.threats and _terminal_score(position) is None:
            # a win by continuous threats needs no search in weak mode: its length is a bound
            plies = self._search.threat_win(root_of(position))
            if plies:
                score = WIN_SCORE - plies
                return SearchResult(
                    score,
                    Value.from_score(score, position.empty_count),
                    0,
                    time.perf_counter() - started,
                    "threats",
                    threats=1,
                )
        nodes_before, pairings_before, threats_before = self.nodes, self.pairings, self.threat_wins
        score = self._score(position, deadline, exact=not self.weak)
        pairings = self.pairings - pairings_before
        threats = self.threat_wins - threats_before
        return SearchResult(
            score,
            Value.from_score(score, position.empty_count),
            self.nodes - nodes_before,
            time.perf_counter() - started,
            technique_name(pairings, threats),
            pairings,
            threats,
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

    # -- internals ----------------------------------------------------------------------------

    def _score(self, position: Position, deadline: float | None, exact: bool) -> int:
        terminal = _terminal_score(position)
        if terminal is not None:
            return terminal
        self._search.set_deadline(deadline)
        root = root_of(position)
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


def _terminal_score(position: Position) -> int | None:
    """The score of a finished game (``-WIN_SCORE``: the side to move has lost), else None."""
    if position.winner is not None:
        return -WIN_SCORE
    if position.empty == 0:
        return 0
    return None


def _pairing_draw(position: Position) -> bool:
    """Whether each side has a pairing that blocks every line the other could complete
    (:mod:`solver.pairing`): then neither can win, and the position is a draw."""
    return all(pairing_for(position, defender_is_x) is not None for defender_is_x in (True, False))
