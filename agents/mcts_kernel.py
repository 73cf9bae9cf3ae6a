"""The compiled loop of ``mcts`` (:mod:`agents.mcts`): UCT, playouts and MCTS-Solver on arrays.

Numba compiles these functions (cached on disk beside this file, once per machine); importing
this module imports Numba, so :mod:`agents.mcts` imports it only when a search runs.

**The random stream is Python's.** The agent's ``random.Random`` is a Mersenne Twister
(MT19937); :func:`next_double` runs the same generator on the state that ``getstate()`` hands
over and makes doubles exactly as ``random()`` does (53 bits from two 32-bit words), and the
state goes back with ``setstate()`` afterwards. So the compiled search draws the numbers a
Python loop calling ``rng.random()`` would, in the same order, and the generator is left where
that loop would leave it.

**The board is line counts.** Each side's stone count in every winning line, the lines through
each cell in CSR form (``line_start[cell]:line_start[cell + 1]`` into ``line_ids``): a move
wins when it brings a line through its cell to k. Any board size fits; the counts of the root
are copied at the start of each simulation.

**The tree is arrays**, one row per node, node 0 the root; each iteration adds at most one
node, so ``iterations + 1`` rows suffice. A node's children are a linked list in the order they
were expanded (``first_child``, ``last_child``, ``next_sibling``); its untried moves (cells in
ascending order when the node is made, then drawn from by swapping the last into the hole) are
a slice of one growing pool. ``value`` sums the rewards of the player who moved into the node,
``proven`` is that player's proven result (+1, 0, -1) or :data:`UNPROVEN`.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

import numba
import numpy as np

if TYPE_CHECKING:
    from ttt_solve.solver.rules import Rules

UNPROVEN = 2
"""``proven`` of a node whose result is not proven."""

RANDOM, HEURISTIC = 0, 1
"""Rollout policies, as :data:`agents.mcts.ROLLOUTS` numbers them."""

MT_N, MT_M = 624, 397
_MATRIX_A, _UPPER, _LOWER, _WORD = 0x9908B0DF, 0x80000000, 0x7FFFFFFF, 0xFFFFFFFF

_compile = numba.njit(cache=True, nogil=True)
_step = numba.njit(cache=True, nogil=True, inline="always")
"""For the steps of :func:`search`, run once or more a simulation: compiled into it, so that a
step costs no call (passing the tree's arrays to a call counts references, a tenth of the
search's time)."""


class LineTables:
    """The lines through each cell of a game, as the kernel reads them (CSR arrays)."""

    def __init__(self, rules: Rules) -> None:
        index = {mask: i for i, mask in enumerate(rules.lines)}
        starts, ids = [0], []
        for cell in range(rules.cells):
            ids += [index[mask] for mask in rules.lines_through[cell]]
            starts.append(len(ids))
        self.lines = len(rules.lines)
        self.line_start = np.array(starts, np.int32)
        self.line_ids = np.array(ids, np.int32)

    def counts(self, me: int, opp: int, rules: Rules) -> np.ndarray:
        """Stones of the side to move (row 0) and of its opponent (row 1) in every line."""
        counts = np.zeros(2 * self.lines, np.int32)
        for side, stones in enumerate((me, opp)):
            for i, mask in enumerate(rules.lines):
                counts[side * self.lines + i] = (stones & mask).bit_count()
        return counts


@lru_cache(maxsize=32)
def line_tables(rules: Rules) -> LineTables:
    return LineTables(rules)


# -- Python's Mersenne Twister ---------------------------------------------------------------


@_compile
def _twist(mt: np.ndarray) -> None:
    for i in range(MT_N):
        y = (mt[i] & _UPPER) | (mt[(i + 1) % MT_N] & _LOWER)
        value = mt[(i + MT_M) % MT_N] ^ (y >> 1)
        if y & 1:
            value ^= _MATRIX_A
        mt[i] = value
    mt[MT_N] = 0


@_compile
def _next_word(mt: np.ndarray) -> int:
    """The next 32-bit output; ``mt`` holds the 624 words and, last, the index (int64s)."""
    if mt[MT_N] >= MT_N:
        _twist(mt)
    y = mt[mt[MT_N]]
    mt[MT_N] += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y & _WORD


@_compile
def next_double(mt: np.ndarray) -> float:
    """What ``random.Random.random()`` returns for this state: a 53-bit double in [0, 1)."""
    a = _next_word(mt) >> 5
    b = _next_word(mt) >> 6
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)


# -- the board as line counts ----------------------------------------------------------------


@_compile
def _place(counts: np.ndarray, side: int, cell: int, line_start, line_ids, lines: int, k: int):  # noqa: ANN001, ANN202
    """Put a stone of ``side`` (0 or 1) on ``cell``; whether it completes a line."""
    won = False
    base = side * lines
    for j in range(line_start[cell], line_start[cell + 1]):
        index = base + line_ids[j]
        counts[index] += 1
        if counts[index] == k:
            won = True
    return won


@_compile
def _wins_at(counts: np.ndarray, side: int, cell: int, line_start, line_ids, lines: int, k: int):  # noqa: ANN001, ANN202
    """Whether a stone of ``side`` on the empty ``cell`` would complete a line."""
    base = side * lines
    for j in range(line_start[cell], line_start[cell + 1]):
        if counts[base + line_ids[j]] == k - 1:
            return True
    return False


@_compile
def playout(counts, side, cells, n, rollout, mt, line_start, line_ids, lines, k):  # noqa: ANN001, ANN201
    """Play to the end from a position that is not over: ``side`` to move, the first ``n``
    items of ``cells`` its empty cells (scrambled in place). The result for ``side``: +1 win,
    -1 loss, 0 draw.

    ``RANDOM``: uniformly random moves. ``HEURISTIC``: each move wins now if it can, else
    blocks the opponent's first threat in ``cells`` order, else is random; a block or a random
    move then cannot win (no cell won), so neither is tested.
    """
    sign = 1
    while n:
        pick = -1
        if rollout == HEURISTIC:
            for j in range(n):
                if _wins_at(counts, side, cells[j], line_start, line_ids, lines, k):
                    return sign
            for j in range(n):
                if _wins_at(counts, 1 - side, cells[j], line_start, line_ids, lines, k):
                    pick = j
                    break
        if pick < 0:
            pick = int(next_double(mt) * n)
        cell = cells[pick]
        n -= 1
        cells[pick] = cells[n]
        if _place(counts, side, cell, line_start, line_ids, lines, k):
            return sign
        side = 1 - side
        sign = -sign
    return 0


# -- the search ------------------------------------------------------------------------------


@_compile
def search(  # noqa: ANN201
    root_counts,  # noqa: ANN001
    root_empty,  # noqa: ANN001
    board,  # noqa: ANN001
    cells: int,
    iterations: int,
    c: float,
    rollout: int,
    solver: bool,
    mt,  # noqa: ANN001
    tree,  # noqa: ANN001
):
    """Run up to ``iterations`` simulations from a root that is not over (side 0 of
    ``root_counts`` to move, ``root_empty`` its empty cells ascending, ``board`` the lines through
    each cell) into ``tree``'s node arrays (:func:`node_arrays`): the simulations, the nodes.

    The arrays come from the caller and only numbers go back: giving a new array to Python
    runs a Python function inside Numba's return (it unpickles the dtype), where a pending
    Ctrl-C would be raised into Numba's C code and lost."""
    node_cell, visits, value, proven, first_child, next_sibling = tree
    last_child, untried_start, untried_count = _cleared(iterations + 1, tree)
    line_start, line_ids, lines, k = board
    empties = len(root_empty)
    pool, used, nodes = np.empty(max(empties * 64, 1024), np.int32), empties, 1
    pool[:empties] = root_empty
    untried_count[0] = empties
    counts, occupied = np.empty_like(root_counts), np.zeros(cells, np.bool_)
    scratch, path = np.empty(empties, np.int32), np.empty(empties + 1, np.int32)
    c2, done = c * c, 0
    for done in range(1, iterations + 1):  # noqa: B007 - returned
        length, node, side = _descend(
            node_cell, visits, value, proven, first_child, next_sibling, untried_count,
            line_start, line_ids, lines, k, root_counts, root_empty, counts, occupied, path, c2,
            solver,
        )  # fmt: skip
        reward, proved = proven[node], False
        if reward == UNPROVEN:  # expand a move drawn at random, and play out from it
            cell = _draw_untried(node, pool, untried_start, untried_count, mt)
            won = _place(counts, side, cell, line_start, line_ids, lines, k)
            occupied[cell] = True
            _add_child(node, nodes, cell, node_cell, first_child, next_sibling, last_child)
            path[length] = nodes
            left = empties - length  # the path holds the root and one node a move
            length, nodes, proved = length + 1, nodes + 1, won or left == 0
            if proved:  # a win for the mover, or a draw
                reward = 1 if won else 0
                proven[path[length - 1]] = reward
            else:
                pool = _fill_untried(path[length - 1], left, root_empty, occupied, pool, used,
                                     scratch, untried_start, untried_count)  # fmt: skip
                used += left
                reward = -playout(
                    counts, 1 - side, scratch, left, rollout, mt, line_start, line_ids, lines, k
                )
        _back_up_rewards(path, length, reward, visits, value)
        if solver and proved:
            _back_up_proof(path, length, proven, first_child, next_sibling, untried_count)
            if proven[0] != UNPROVEN:
                break
    return done, nodes


@_step
def _cleared(capacity, tree):  # noqa: ANN001, ANN202
    """The node arrays cleared for ``capacity`` nodes, and new ones for each node's last child,
    where its untried moves start in the pool and how many there are."""
    node_cell, visits, value, proven, first_child, next_sibling = tree
    node_cell[:capacity] = -1
    visits[:capacity] = 0
    value[:capacity] = 0
    proven[:capacity] = UNPROVEN
    first_child[:capacity] = -1
    next_sibling[:capacity] = -1
    last_child = np.full(capacity, -1, np.int32)
    return last_child, np.zeros(capacity, np.int64), np.zeros(capacity, np.int32)


@_step
def _descend(  # noqa: ANN202
    node_cell,  # noqa: ANN001
    visits,  # noqa: ANN001
    value,  # noqa: ANN001
    proven,  # noqa: ANN001
    first_child,  # noqa: ANN001
    next_sibling,  # noqa: ANN001
    untried_count,  # noqa: ANN001
    line_start,  # noqa: ANN001
    line_ids,  # noqa: ANN001
    lines: int,
    k: int,
    root_counts,  # noqa: ANN001
    root_empty,  # noqa: ANN001
    counts,  # noqa: ANN001
    occupied,  # noqa: ANN001
    path,  # noqa: ANN001
    c2: float,
    solver: bool,
):
    """Walk down from the root by UCT while the node has no untried move and no proven
    result, playing the moves into ``counts`` and ``occupied`` (set back to the root's
    first); the path's length, the node reached and the side to move there (0: the root's)."""
    counts[:] = root_counts
    for cell in root_empty:
        occupied[cell] = False
    node, side, length = 0, 0, 1
    path[0] = 0
    while proven[node] == UNPROVEN and untried_count[node] == 0:
        # c * sqrt(ln N / n) == sqrt(c*c*ln N / n): one square root per child
        explore = c2 * math.log(visits[node])
        best = -1
        best_score = -1e300
        child = first_child[node]
        while child >= 0:
            if not (solver and proven[child] == -1):
                score = value[child] / visits[child] + math.sqrt(explore / visits[child])
                if score > best_score:
                    best = child
                    best_score = score
            child = next_sibling[child]
        node = best  # an unproven node has an unproven child
        _place(counts, side, node_cell[node], line_start, line_ids, lines, k)
        occupied[node_cell[node]] = True
        side = 1 - side
        path[length] = node
        length += 1
    return length, node, side


@_step
def _draw_untried(node, pool, untried_start, untried_count, mt):  # noqa: ANN001, ANN202
    """One of ``node``'s untried moves, drawn at random and taken out of its pool."""
    n = untried_count[node]
    i = int(next_double(mt) * n)
    start = untried_start[node]
    cell = pool[start + i]
    pool[start + i] = pool[start + n - 1]
    untried_count[node] = n - 1
    return cell


@_step
def _add_child(node, child, cell, node_cell, first_child, next_sibling, last_child):  # noqa: ANN001, ANN202
    """Make ``child`` the move ``cell`` of ``node``, its last child."""
    node_cell[child] = cell
    if first_child[node] < 0:
        first_child[node] = child
    else:
        next_sibling[last_child[node]] = child
    last_child[node] = child


@_step
def _fill_untried(  # noqa: ANN202
    child,  # noqa: ANN001
    left,  # noqa: ANN001
    root_empty,  # noqa: ANN001
    occupied,  # noqa: ANN001
    pool,  # noqa: ANN001
    used,  # noqa: ANN001
    scratch,  # noqa: ANN001
    untried_start,  # noqa: ANN001
    untried_count,  # noqa: ANN001
):
    """A new node's untried moves (the ``left`` empty cells) appended to the pool (grown if
    need be, and returned), and copied into ``scratch`` for its playout."""
    if used + left > len(pool):
        grown = np.empty(2 * len(pool) + left, np.int32)
        grown[:used] = pool[:used]
        pool = grown
    m = 0
    for e in root_empty:
        if not occupied[e]:
            pool[used + m] = e
            scratch[m] = e
            m += 1
    untried_start[child] = used
    untried_count[child] = left
    return pool


@_step
def _back_up_rewards(path, length, reward, visits, value):  # noqa: ANN001, ANN202
    """Count the simulation in every node of its path, its reward for the player who moved
    into each (the root's for the root's own player)."""
    for index in range(length - 1, -1, -1):
        step = path[index]
        visits[step] += 1
        value[step] += reward
        reward = -reward


def node_arrays(capacity: int) -> tuple[np.ndarray, ...]:
    """Empty node arrays for :func:`search`: ``(cell, visits, value, proven, first_child,
    next_sibling)``."""
    return (
        np.empty(capacity, np.int32),
        np.empty(capacity, np.int64),
        np.empty(capacity, np.int64),
        np.empty(capacity, np.int8),
        np.empty(capacity, np.int32),
        np.empty(capacity, np.int32),
    )


@_compile
def _back_up_proof(path, length, proven, first_child, next_sibling, untried_count):  # noqa: ANN001, ANN202
    """Prove the ancestors of a newly proven leaf as far as the proof reaches: a child that
    wins for its mover proves its parent lost; a parent with every move expanded and proven
    takes the negated best of them."""
    for index in range(length - 2, -1, -1):
        parent, child = path[index], path[index + 1]
        if proven[child] == 1:
            proven[parent] = -1
            continue
        if untried_count[parent] > 0:
            return
        best = -2
        child = first_child[parent]
        while child >= 0:
            if proven[child] == UNPROVEN:
                return
            best = max(best, proven[child])
            child = next_sibling[child]
        proven[parent] = -best
