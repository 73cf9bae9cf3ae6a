"""Negamax alpha-beta prover for boards too big to enumerate.

:class:`Prover` finds the exact value (outcome and remoteness) of one position by a depth-first
negamax search with a transposition table. The search exists twice, with the same algorithm
and results: here in pure Python on raw integers (any board size), and compiled with Numba in
:mod:`solver.compiled` (boards of at most 32 cells, 15 to 24 times faster), which a
:class:`Prover` uses wherever it can (:func:`default_engine`). The tests hold each to the
exhaustive tables and the two to each other. The search:

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
* **Transposition table** keyed by the canonical key of :meth:`Position.canonical` (the smallest
  packed key among the symmetric images). All images are kept at once, side by side in one big
  integer, and a move ORs in its precomputed bits, so no permutation is applied per node. The
  table stores a lower and an upper bound per key; it persists between calls, which is what
  makes :meth:`Prover.move_values` and opening books cheap. When it holds ``2**table_bits``
  entries it becomes the "old" generation (still read) and a new one starts.
* **Exact scores** come from null-window probes: first the window ``(-1, 1)`` (win, draw or
  loss), then, for a win or a loss, bisection on the remoteness with null windows.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from typing import NamedTuple

from ttt_solve.solver.errors import SearchTimeout
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import WIN_SCORE, Value, move_score

_OFFSET = 2048
"""Bounds are stored packed as ``(lower + _OFFSET) << 12 | (upper + _OFFSET)``."""

_HISTORY_LIMIT = 1 << 29
"""History counts are halved past this, so they stay below the live-line count in move keys."""

WEIGHT_BASE = 4
BLOCK_BASE = 3
THREAT_BONUS = 1

_DEADLINE_EVERY = 1 << 12
"""Nodes between two looks at the clock (a power of two)."""


class SearchResult(NamedTuple):
    """The result of :meth:`Prover.solve`.

    * ``score``: side-to-move score (:mod:`solver.value`); exact unless the prover is weak,
    * ``value``: ``Value.from_score(score, position.empty_count)``,
    * ``nodes``: nodes searched by this call,
    * ``seconds``: wall time of this call.
    """

    score: int
    value: Value
    nodes: int
    seconds: float


def child_window(alpha: int, beta: int) -> tuple[int, int]:
    """The child's window that answers the parent's window ``(alpha, beta)``.

    A parent's score is ``move_score(s)`` of its child's score ``s``, a decreasing map; the
    child must tell ``s`` below the largest child score still worth ``>= beta`` to the parent
    and above the smallest worth ``<= alpha``.
    """
    return (-beta - 1 if beta > 0 else 1 - beta), (-alpha - 1 if alpha >= 0 else 1 - alpha)


class _State(NamedTuple):
    """A position in the raw form of the search (see ``_negamax``)."""

    me: int
    opp: int
    images: int
    live_me: int
    live_opp: int
    threats_me: int
    threats_opp: int
    empty: int
    empties: int


class Prover:
    """Negamax alpha-beta prover for one game; reuse it, its table persists between calls.

    ``weak=True``: :meth:`solve` guarantees only the outcome (win, draw or loss): the score's
    sign is right, but the remoteness of a win or a loss is only a bound (a draw's remoteness
    is always exact). :meth:`move_values` is exact in both modes.
    ``table_bits``: the table's size. The Python engine keeps up to ``2**table_bits`` entries
    per generation (about 100 bytes each; two generations live at once); the compiled one has
    ``2**(table_bits + 1)`` slots of 16 bytes (128 MiB at the default).
    ``engine``: ``"compiled"`` or ``"python"`` (see the module docstring); by default
    :func:`default_engine`.
    """

    def __init__(
        self, rules: Rules, *, weak: bool = False, table_bits: int = 22, engine: str | None = None
    ) -> None:
        self.rules = rules
        self.weak = weak
        self.table_bits = table_bits
        self.engine = engine or default_engine(rules)
        if self.engine == "compiled":
            from ttt_solve.solver import compiled

            self._search, self._count, self._set_deadline, self._clear = compiled.make_search(
                rules, table_bits + 1
            )
        elif self.engine == "python":
            self._search, self._count, self._set_deadline, self._clear = _make_search(
                rules, 1 << table_bits
            )
        else:
            raise ValueError(f"unknown prover engine {engine!r} (compiled or python)")

    @property
    def nodes(self) -> int:
        """Total nodes searched by this prover so far."""
        return self._count()

    def clear(self) -> None:
        """Forget the transposition table and the history heuristic."""
        self._clear()

    # -- public searches ----------------------------------------------------------------------

    def solve(self, position: Position, deadline: float | None = None) -> SearchResult:
        """The score of ``position`` for its side to move (exact unless ``weak``).

        ``deadline``: a ``time.perf_counter()`` value; past it :class:`SearchTimeout` is raised
        (the table keeps what was proved, so a retry resumes cheaply).
        """
        started = time.perf_counter()
        nodes_before = self._count()
        score = self._score(position, deadline, exact=not self.weak)
        return SearchResult(
            score,
            Value.from_score(score, position.empty_count),
            self._count() - nodes_before,
            time.perf_counter() - started,
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
        self._set_deadline(deadline)
        return self._search(_state(position), alpha, beta)

    # -- internals ----------------------------------------------------------------------------

    def _score(self, position: Position, deadline: float | None, exact: bool) -> int:
        terminal = _terminal_score(position)
        if terminal is not None:
            return terminal
        self._set_deadline(deadline)
        state = _state(position)
        score = self._search(state, -1, 1)
        if score == 0 or not exact:
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
            value = self._search(state, middle, middle + 1)
            if value <= middle:
                high = value
            else:
                low = value
        return low


def default_engine(rules: Rules) -> str:
    """``"compiled"`` (:mod:`solver.compiled`, Numba) when Numba is installed and the board
    fits it (at most 32 cells), else ``"python"`` (the search in this module)."""
    if importlib.util.find_spec("numba") is None:
        return "python"
    from ttt_solve.solver import compiled

    return "compiled" if compiled.fits(rules) else "python"


def _terminal_score(position: Position) -> int | None:
    """The score of a finished game (``-WIN_SCORE``: the side to move has lost), else None."""
    if position.winner is not None:
        return -WIN_SCORE
    if position.empty == 0:
        return 0
    return None


def _state(position: Position) -> _State:
    """The raw search state of a non-terminal position."""
    rules = position.rules
    if position.x_to_move:
        me, opp = position.x, position.o
    else:
        me, opp = position.o, position.x
    live_me = live_opp = threats_me = threats_opp = 0
    for index, line in enumerate(rules.lines):
        if not line & opp:
            live_me |= 1 << index
            rest = line & ~me
            if rest & (rest - 1) == 0:
                threats_me |= rest
        if not line & me:
            live_opp |= 1 << index
            rest = line & ~opp
            if rest & (rest - 1) == 0:
                threats_opp |= rest
    width = 2 * rules.cells
    images = 0
    for index in range(len(rules.symmetries)):
        image = position.transform(index)
        images |= image.key << (index * width)
    return _State(
        me,
        opp,
        images,
        live_me,
        live_opp,
        threats_me,
        threats_opp,
        position.empty,
        position.empty_count,
    )


def _make_search(
    rules: Rules, table_size: int
) -> tuple[
    Callable[[_State, int, int], int],
    Callable[[], int],
    Callable[[float | None], None],
    Callable[[], None],
]:
    """Build the search closure over precomputed tables of ``rules``.

    Returns ``(search(state, alpha, beta), node_count(), set_deadline(deadline), clear())``.
    A closure rather than methods: the inner loop then reads its tables as cell variables,
    with no attribute look-ups.
    """
    cells = rules.cells
    index_of = {line: index for index, line in enumerate(rules.lines)}
    # per cell: (line mask, line's bit in the live-line sets) for every line through it
    cell_lines = [
        tuple((line, 1 << index_of[line]) for line in rules.lines_through[c]) for c in range(cells)
    ]
    cell_line_bits = [
        sum(1 << index_of[line] for line in rules.lines_through[c]) for c in range(cells)
    ]
    width = 2 * cells
    symmetries = rules.symmetries
    x_bits = [
        sum(1 << (perm[c] + s * width) for s, perm in enumerate(symmetries)) for c in range(cells)
    ]
    o_bits = [
        sum(1 << (cells + perm[c] + s * width) for s, perm in enumerate(symmetries))
        for c in range(cells)
    ]
    # X moves when the number of empty cells has the parity of the board's cell count.
    bits_by_parity = [None, None]
    bits_by_parity[cells & 1] = x_bits
    bits_by_parity[(cells + 1) & 1] = o_bits
    mask = (1 << width) - 1
    w1, w2, w3, w4, w5, w6, w7 = (width * s for s in range(1, 8))
    if len(symmetries) == 8:

        def canonical(images: int) -> int:
            return min(
                images & mask,
                images >> w1 & mask,
                images >> w2 & mask,
                images >> w3 & mask,
                images >> w4 & mask,
                images >> w5 & mask,
                images >> w6 & mask,
                images >> w7 & mask,
            )
    else:

        def canonical(images: int) -> int:
            return min(images & mask, images >> w1 & mask, images >> w2 & mask, images >> w3 & mask)

    k = rules.k
    almost = k - 2
    line_at = rules.lines
    own_weight = [WEIGHT_BASE**held for held in range(k + 1)]
    block_weight = [BLOCK_BASE**held for held in range(k + 1)]
    threat_bonus = THREAT_BONUS * WEIGHT_BASE**k
    win1 = WIN_SCORE - 1
    lose2 = -(WIN_SCORE - 2)
    win3 = WIN_SCORE - 3
    lose4 = -(WIN_SCORE - 4)
    history = [0] * cells
    table: dict[int, int] = {}
    old_table: dict[int, int] = {}
    nodes = 0
    deadline: float | None = None
    clock = time.perf_counter

    def negamax(
        me: int,
        opp: int,
        images: int,
        live_me: int,
        live_opp: int,
        threats_me: int,
        threats_opp: int,
        empty: int,
        empties: int,
        alpha: int,
        beta: int,
    ) -> int:
        """Fail-soft negamax (contract in the module docstring).

        ``me``/``opp``: the stones of the side to move and of the other side; ``images``: the
        packed keys of every symmetric image, side by side; ``live_*``: bitsets over line
        indexes of the lines each side can still complete (no enemy stone in them);
        ``threats_*``: each side's threat cells (all empty); ``empty``: the empty cells and
        ``empties`` their number.
        """
        nonlocal nodes, table, old_table
        nodes += 1
        if not nodes & (_DEADLINE_EVERY - 1) and deadline is not None and clock() > deadline:
            raise SearchTimeout(f"search passed its deadline after {nodes:,} nodes")
        if threats_me:
            return win1
        if threats_opp:
            if threats_opp & (threats_opp - 1):
                return lose2
        high = win3 if live_me and empties >= 3 else 0
        low = lose4 if live_opp and empties >= 4 else 0
        if high == low:
            return 0
        if low >= beta:
            return low
        if high <= alpha:
            return high
        key = canonical(images)
        entry = table.get(key)
        if entry is None:
            entry = old_table.get(key)
        if entry is not None:
            stored = (entry >> 12) - _OFFSET
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
            # only a fast enough win matters (a distance probe): bound the mover's fastest win
            # by the fewest stones missing from one of its live lines
            plies = 2 * _fewest_missing(live_me, me, line_at, k) - 1
            high = 0 if plies > empties else min(high, WIN_SCORE - plies)
        if beta < 0 and low < 0:  # the same for the opponent's fastest win
            plies = 2 * _fewest_missing(live_opp, opp, line_at, k)
            low = 0 if plies > empties else max(low, plies - WIN_SCORE)
        if low >= beta or low == high:
            return low
        if high <= alpha:
            return high
        if alpha < low:
            alpha = low
        if beta > high:
            beta = high
        alpha0 = alpha

        if threats_opp:
            order = [threats_opp.bit_length() - 1]
        else:
            ranked = []
            dead_seen = False
            rest = empty
            while rest:
                bit = rest & -rest
                rest ^= bit
                c = bit.bit_length() - 1
                weight = 0
                made = 0
                for line, line_bit in cell_lines[c]:
                    if live_me & line_bit:
                        held = (line & me).bit_count()
                        weight += own_weight[held]
                        if held == almost:
                            made |= line & ~me & ~bit
                    if live_opp & line_bit:
                        weight += block_weight[(line & opp).bit_count()]
                if made & (made - 1):
                    # two threats at once with none to answer: the opponent blocks one, the
                    # other wins in 3, the fastest possible without a threat already on board
                    table[key] = (win3 + _OFFSET) << 12 | (win3 + _OFFSET)
                    return win3
                if made:
                    weight += threat_bonus
                elif not weight:
                    if dead_seen:
                        continue
                    dead_seen = True
                ranked.append((weight << 40) + (history[c] << 10) + c)
            ranked.sort(reverse=True)
            order = [r & 1023 for r in ranked]

        key_bits = bits_by_parity[empties & 1]
        child_alpha = -beta - 1 if beta > 0 else 1 - beta
        child_beta = -alpha - 1 if alpha >= 0 else 1 - alpha
        best = -WIN_SCORE - 1
        for c in order:
            bit = 1 << c
            mine = me | bit
            new_threats = 0
            for line, line_bit in cell_lines[c]:
                if live_me & line_bit:
                    rest = line & ~mine
                    if not rest & (rest - 1):
                        new_threats |= rest
            score = negamax(
                opp,
                mine,
                images | key_bits[c],
                live_opp & ~cell_line_bits[c],
                live_me,
                threats_opp & ~bit,
                new_threats,
                empty ^ bit,
                empties - 1,
                child_alpha,
                child_beta,
            )
            score = 1 - score if score > 0 else (-score - 1 if score < 0 else 0)
            if score > best:
                best = score
                if score > alpha:
                    if score >= beta:
                        history[c] += empties * empties
                        if history[c] > _HISTORY_LIMIT:
                            history[:] = [h >> 1 for h in history]
                        break
                    alpha = score
                    child_beta = -alpha - 1 if alpha >= 0 else 1 - alpha

        if best <= alpha0:
            high = best
        elif best >= beta:
            low = best
        else:
            low = high = best
        if len(table) >= table_size:
            old_table = table
            table = {}
        table[key] = (low + _OFFSET) << 12 | (high + _OFFSET)
        return best

    def search(state: _State, alpha: int, beta: int) -> int:
        return negamax(*state, alpha, beta)

    def count() -> int:
        return nodes

    def set_deadline(value: float | None) -> None:
        nonlocal deadline
        deadline = value

    def clear() -> None:
        nonlocal table, old_table
        table, old_table = {}, {}
        history[:] = [0] * cells

    return search, count, set_deadline, clear


def _fewest_missing(live: int, stones: int, line_at: tuple[int, ...], k: int) -> int:
    """The fewest stones missing from one of the ``live`` lines (a bitset of line indexes)
    given ``stones``; not below 2, where the threat rules take over."""
    need = k
    while live and need > 2:
        line_bit = live & -live
        live ^= line_bit
        missing = k - (line_at[line_bit.bit_length() - 1] & stones).bit_count()
        if missing < need:
            need = missing
    return need
