"""Records known without the table: what a number's stones alone say of its position.

Most of a table's records follow from a glance at the board, with no search: a number whose
stones cannot arise in a game, a game already over, a side to move that wins at once, that
must lose to two threats, or that makes two threats at once. A compressed table stores none of
them (it stores a draw there, whatever compresses best) and a reader computes them again
(:mod:`solver.tablebase.compressed`, docs/table-format.md). In order, the first that applies:

1. **no position** (record 0): the side to move holds a line, or the last mover holds lines
   that share no stone (no last move made them all);
2. **lost in 0** (record 2): the last mover holds a line: the game is over;
3. **a draw** (record 1): the board is full;
4. **won in 1** (record 3): the side to move has a **threat**, an empty cell that completes a
   line of its own (a line with ``k - 1`` of its stones and none of the opponent's);
5. **lost in 2** (record 4): the opponent has threats on two cells or more: one can be blocked,
   not both;
6. **won in 3** (record 5): the side to move has a move that makes threats on two cells or
   more, while the opponent has no threat left: a move on the opponent's one threat if it has
   one, else on any empty cell. A move on ``m`` makes a threat on ``e`` when a line holds
   ``k - 2`` of the mover's stones, none of the opponent's, and is empty exactly at ``m`` and
   ``e``.

Each rule is exact: a position it does not name never has its record (4 to 6 are proved by
the moves they describe; 5 and 6 because a single threat is blocked and no move of the
opponent makes a threat of the mover's), and a compression refuses a table that disagrees
(:func:`solver.tablebase.compressed.compress_ply`). On 4x5 k=4 they give 57% of the records.

:func:`~solver.tablebase.knownrecord.known_record` is written once over plain ints (in a
module of its own, so that a look-up loads no Numba): Python runs it for a look-up, Numba
compiles it here for one position and for a range of numbers (:func:`known_range`).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from math import comb
from typing import Any, NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.compiled import (
    binomials,
    expand_cpu,
    lines_of,
    next_set_cpu,
    unrank_set_cpu,
)
from ttt_solve.solver.tablebase.index import stone_counts
from ttt_solve.solver.tablebase.knownrecord import (
    _count_bits,
    known_record,
)


def _compiled(
    function: Callable[..., int], compile_one: Any, **helpers: Callable[..., int]
) -> Callable[..., int]:
    """``function`` compiled by ``compile_one`` (a ``numba.njit``), with the plain helpers it
    calls by name bound to their compiled twins (Numba calls no plain Python function)."""
    bound = types.FunctionType(function.__code__, {**function.__globals__, **helpers})
    compiled: Callable[..., int] = compile_one(bound)
    return compiled


_count_compiled = numba.njit(nogil=True, inline="always")(_count_bits)
_known_record = _compiled(
    known_record, numba.njit(nogil=True, inline="always"), _count=_count_compiled
)
known_record_compiled = _compiled(
    known_record, numba.njit(nogil=True, cache=True), _count=_count_compiled
)
""":func:`known_record` compiled to be called from Python, one position at a time (a probe's
look-up), its lines an array: about a tenth of the plain function's time."""

BLOCK = 1 << 13
"""Numbers one thread takes at once (each block unranks its first number)."""


class KnownPly(NamedTuple):
    """What the compiled :func:`known_record` reads of a ply, as numbers and arrays (Numba
    takes it whole): its shape, the ranks of its representatives (as its file holds them),
    and the rules' lines and ``k``."""

    ply: int
    cells: int
    k: int
    rep_ranks: NDArray[np.int64]
    per_class: int
    lines: NDArray[np.int64]
    binom: NDArray[np.int64]


def known_ply(rules: Rules, ply: int, rep_ranks: NDArray[np.int64]) -> KnownPly:
    """The :class:`KnownPly` of ``ply`` (``rep_ranks``: its representatives' ranks)."""
    x, o = stone_counts(ply)
    return KnownPly(
        ply,
        rules.cells,
        rules.k,
        np.ascontiguousarray(rep_ranks, dtype=np.int64),
        comb(rules.cells - x, o),
        lines_of(rules),
        binomials(),
    )


@numba.njit(parallel=True, nogil=True, cache=True)
def _known_range(known: KnownPly, start: int, stop: int) -> NDArray[np.uint8]:
    cells = known.cells
    x_count = (known.ply + 1) // 2
    o_count = known.ply // 2
    full = (1 << int(cells)) - 1
    total = stop - start
    out = np.empty(total, dtype=np.uint8)
    for block in numba.prange((total + BLOCK - 1) // BLOCK):
        first = start + block * BLOCK
        last = min(stop, first + BLOCK)
        for number in range(first // known.per_class, (last - 1) // known.per_class + 1):
            # the block's numbers of this class: the first unranked, the next ones stepped to
            begin = max(first, number * known.per_class)
            end = min(last, (number + 1) * known.per_class)
            rep = unrank_set_cpu(known.rep_ranks[number], x_count, cells, known.binom)
            free = full & ~rep
            rank = begin - number * known.per_class
            compressed = unrank_set_cpu(rank, o_count, cells - x_count, known.binom)
            for index in range(begin, end):
                if index > begin:
                    compressed = next_set_cpu(compressed)
                out[index - start] = _known_record(
                    rep, expand_cpu(compressed, free), known.ply, cells, known.lines, known.k
                )
    return out


def known_range(
    rules: Rules, ply: int, rep_ranks: NDArray[np.int64], start: int, stop: int
) -> NDArray[np.uint8]:
    """:func:`known_record` of the numbers ``start .. stop-1`` of ``ply`` (``rep_ranks``: the
    ranks of the ply's representatives, as its file holds them), over every core."""
    return np.asarray(_known_range(known_ply(rules, ply, rep_ranks), start, stop))


def _known_numbers_source(known: KnownPly, numbers: NDArray[np.int64]) -> NDArray[np.uint8]:
    cells = known.cells
    x_count = (known.ply + 1) // 2
    o_count = known.ply // 2
    full = (1 << int(cells)) - 1
    out = np.empty(len(numbers), dtype=np.uint8)
    for i in numba.prange(len(numbers)):
        number, rank = numbers[i] // known.per_class, numbers[i] % known.per_class
        rep = unrank_set_cpu(known.rep_ranks[number], x_count, cells, known.binom)
        o = expand_cpu(unrank_set_cpu(rank, o_count, cells - x_count, known.binom), full & ~rep)
        out[i] = _known_record(rep, o, known.ply, cells, known.lines, known.k)
    return out


_known_numbers_parallel = numba.njit(parallel=True, nogil=True, cache=True)(_known_numbers_source)
_known_numbers_serial = numba.njit(nogil=True, cache=True)(_known_numbers_source)
PARALLEL_NUMBERS = 4096
"""Fewer numbers than this (a probe's family) are worked out on the caller's thread: waking
the thread pool costs more than they do, tens of milliseconds on a loaded machine."""


def known_numbers(
    rules: Rules, ply: int, rep_ranks: NDArray[np.int64], numbers: NDArray[np.int64]
) -> NDArray[np.uint8]:
    """:func:`known_record` of any numbers of ``ply``, over every core when they are many."""
    kernel = _known_numbers_parallel if len(numbers) >= PARALLEL_NUMBERS else _known_numbers_serial
    return np.asarray(
        kernel(known_ply(rules, ply, rep_ranks), np.ascontiguousarray(numbers, dtype=np.int64))
    )
