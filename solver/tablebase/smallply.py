"""A small ply of a tablebase read whole without kernels: its canonical positions from its
numbers, and their best moves from the next ply, with the plain formulas and NumPy.

A command that reads a table through the kernels of :mod:`solver.tablebase.positions` first
loads Numba and their cached machine code: one to three seconds on a busy machine (Numba
imports SciPy to look for BLAS), where the first plies of a board hold a few thousand numbers
(4x5 k=4: 8,568 at ply 4, 39,984 at ply 5). A ply of at most :data:`SMALL_NUMBERS` numbers is
read here instead, so that ``ttt export --where 'ply<=4'`` loads no Numba:

* **positions**: every number's X and O sets by the index's formulas
  (:func:`~solver.tablebase.index.unrank_set`, then :func:`~solver.tablebase.index.o_at`'s
  expansion, its unranking made once a rank), made canonical with NumPy
  (:class:`~solver.exhaustive.keyarrays.KeyArrays`, the small games' engine). The numbers
  standing for one position are its images under the symmetries that fix its class's
  representative, in one class; compressing keeps the order of sets, so its **own** number
  (:mod:`solver.tablebase.positions`) is the first of them: :func:`read_ply` gives what
  :func:`~solver.tablebase.positions.stand_for` gives of every number of the ply.
* **best moves**: each open position's children found among the next ply's canonical keys
  (:meth:`KeyArrays.back_up <solver.exhaustive.keyarrays.KeyArrays.back_up>`):
  :func:`children_records` gives what :func:`solver.tablebase.positions.children_records`
  gives.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from math import comb
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.exhaustive.keyarrays import KeyArrays
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.index import (
    binomial_table,
    expand,
    ply_records,
    stone_counts,
    unrank_set,
)
from ttt_solve.solver.tablebase.record import DECIDED, DRAW, NONE, decode_records
from ttt_solve.solver.value import remoteness_of, score_of

SMALL_NUMBERS = 1 << 17
"""A ply of at most this many numbers (and whose next ply holds at most as many) is read
here: about a second of plain Python at most on a busy machine, against the kernels' start.
4x5 k=4 and 5x5 k=4 read plies 0 to 4 so, 4x4 k=4 plies 0 to 7."""


class PlyKeys(NamedTuple):
    """The canonical positions of a ply at their own numbers, in number order: canonical
    keys (``x | o << cells``), records, how many positions each one's symmetries make, and
    the own numbers."""

    keys: NDArray[np.uint64]
    records: NDArray[np.uint8]
    images: NDArray[np.uint8]
    numbers: NDArray[np.int64]

    def by_key(self) -> PlyKeys:
        """The same positions in ascending order of their keys."""
        order = np.argsort(self.keys, kind="stable")
        return PlyKeys(
            self.keys[order], self.records[order], self.images[order], self.numbers[order]
        )


def small_enough(rules: Rules, plies: Iterable[int]) -> bool:
    """Whether these plies, and the next of each (read for their best moves), all hold at
    most :data:`SMALL_NUMBERS` numbers: reading them here costs less than loading the kernels
    (which a larger one among them would load anyway)."""
    read = {p for ply in plies for p in (ply, ply + 1) if p <= rules.cells}
    return all(ply_records(rules, ply) <= SMALL_NUMBERS for ply in read)


def stones(rules: Rules, ply: int, rep_ranks: Sequence[int]) -> tuple[list[int], list[int]]:
    """``(x, o)``: the X and O cell sets of every number of ``ply`` in number order
    (``rep_ranks``: the ranks of the ply's representatives, as its file holds them)."""
    x_count, o_count = stone_counts(ply)
    cells, full, binom = rules.cells, rules.full, binomial_table()
    # o_at's unranking depends on the rank alone: the same O sets, compressed, in every class
    compressed = [
        unrank_set(rank, o_count, cells - x_count, binom)
        for rank in range(comb(cells - x_count, o_count))
    ]
    x_sets: list[int] = []
    o_sets: list[int] = []
    for rep_rank in rep_ranks:
        rep = unrank_set(int(rep_rank), x_count, cells, binom)
        free = full & ~rep
        x_sets += [rep] * len(compressed)
        o_sets += [expand(o, free) for o in compressed]
    return x_sets, o_sets


def read_ply(
    rules: Rules, ply: int, rep_ranks: Sequence[int], records: NDArray[np.uint8]
) -> PlyKeys:
    """The canonical positions of a whole ply (``records``: one a number, as its file holds
    them) at their own numbers, in number order; numbers of no position left out."""
    x_sets, o_sets = stones(rules, ply, rep_ranks)
    arrays = KeyArrays(rules)
    o_keys = np.array(o_sets, dtype=np.uint64) << np.uint64(rules.cells)
    keys = np.array(x_sets, dtype=np.uint64) | o_keys
    canonical = arrays.canonical(keys)
    _, first = np.unique(canonical, return_index=True)  # each position's own number
    own = np.sort(first)
    own = own[np.asarray(records)[own] != NONE]
    keys = canonical[own]
    held = np.asarray(records[own], dtype=np.uint8)
    return PlyKeys(keys, held, arrays.orbit_sizes(keys), own.astype(np.int64))


def scores(records: NDArray[np.uint8], empty_cells: int) -> NDArray[np.int16]:
    """The scores for the side to move of records (none :data:`NONE`) of positions with
    ``empty_cells`` empty cells."""
    values, remoteness = decode_records(records, empty_cells)
    found: NDArray[np.int16] = score_of(values.astype(np.int16), remoteness.astype(np.int16))
    return found


def children_records(
    rules: Rules,
    ply: int,
    keys: NDArray[np.uint64],
    records: NDArray[np.uint8],
    children: PlyKeys | None,
) -> tuple[NDArray[np.uint8], NDArray[np.int64], NDArray[np.bool_]]:
    """``(backed, best, missing)`` for positions of ``ply`` (packed keys in any orientation,
    with their ``records``) from ``children``, the next ply read whole (``None`` for the last
    ply): the record each must hold (:data:`NONE` where a child is missing), its best moves
    as a bitmask of cells in the keys' orientation, and whether a child stands at no position
    of the next ply: :func:`solver.tablebase.positions.children_records`'s answer (``missing``
    says whether rather than how many)."""
    arrays = KeyArrays(rules)
    over = arrays.won_by_last_mover(keys, ply)
    backed = np.where(over, DECIDED, DRAW if ply == rules.cells else NONE).astype(np.uint8)
    best = np.zeros(len(keys), dtype=np.int64)
    missing = np.zeros(len(keys), dtype=np.bool_)
    going = np.flatnonzero(~over)
    if children is None or not len(going):
        return backed, best, missing
    ordered = children.by_key()
    top, moves, complete = arrays.back_up(
        keys[going], ply, ordered.keys, scores(ordered.records, rules.cells - ply - 1)
    )
    top = top.astype(np.int64)
    made = np.where(top == 0, DRAW, DECIDED + remoteness_of(top, 0))  # record_of, an array
    backed[going] = np.where(complete, made, NONE)
    best[going] = moves.astype(np.int64)
    missing[going] = ~complete
    return backed, best, missing
