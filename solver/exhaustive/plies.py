"""The two bulk algorithms on whole plies of canonical keys, written once for every solver.

* **Enumeration** (:func:`enumerate_plies`): from the empty board, make the children of every
  position of ply ``p`` that is not won, canonicalise them, sort and deduplicate: that is ply
  ``p + 1``.
* **Back-up** (:func:`back_up_ply`): a ply's scores and best moves from the solved next ply;
  every child is looked up in the sorted next ply, and a position's score is the best of its
  move scores (see :mod:`solver.value`).

The work on the arrays is done by a :class:`~solver.exhaustive.keyarrays.KeyArrays`: NumPy for small
games, the compiled kernels on every core for the others
(:func:`solver.exhaustive.keyarrays.key_arrays`).

The exhaustive solver runs both over the whole game, the opening-book builder up to its depth,
and :mod:`solver.verify` recomputes the back-up (:func:`back_up_rows`) to check a stored table.
Every array is cut into chunks of bounded size, so memory is the plies' keys plus one chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.exhaustive.keyarrays import (
    NO_MOVE as NO_MOVE,  # the back-up's "no child found"
)
from ttt_solve.solver.exhaustive.keyarrays import KeyArrays, Keys, Scores
from ttt_solve.solver.exhaustive.plystore import PlyStore
from ttt_solve.solver.value import WIN_SCORE


def won_by_last_mover(arrays: KeyArrays, keys: NDArray[np.uint64], ply: int) -> NDArray[np.bool_]:
    """Whether the player who made the last move (X on odd plies) has a line, key by key."""
    return arrays.won_by_last_mover(keys, ply)


def chunks(count: int, empties: int, children_per_chunk: int) -> Iterator[slice]:
    """Slices of ``count`` rows whose ``empties`` children each stay within the chunk size
    (``None`` in the functions below: the :class:`KeyArrays`' own ``chunk``)."""
    step = max(1, children_per_chunk // max(1, empties))
    for start in range(0, count, step):
        yield slice(start, min(count, start + step))


def ply_name(column: str, ply: int) -> str:
    """The store's name of one ply's array: ``keys-3``, ``won-3``."""
    return f"{column}-{ply}"


def enumerate_plies(
    arrays: KeyArrays,
    store: PlyStore,
    last_ply: int,
    children_per_chunk: int | None = None,
    on_ply: Callable[[int], None] | None = None,
) -> int:
    """Keep in ``store`` the canonical keys (``keys-p``, sorted) of every ply ``p`` up to
    ``last_ply`` that has positions, and which of them the last mover has won (``won-p``);
    returns the number of plies. Plies already in the store (a resumed run) are not made
    again. ``on_ply(p)`` is called as each ply is done."""
    last_ply = min(last_ply, arrays.rules.cells)
    keys_name = ply_name("keys", 0)
    keys = (
        store.load(keys_name)
        if store.has(keys_name)
        else store.save(keys_name, np.zeros(1, dtype=np.uint64))
    )
    for ply in range(last_ply + 1):
        won_name = ply_name("won", ply)
        won = (
            store.load(won_name)
            if store.has(won_name)
            else store.save(won_name, won_by_last_mover(arrays, keys, ply))
        )
        if on_ply is not None:
            on_ply(ply)
        if ply == last_ply:
            return ply + 1
        keys_name = ply_name("keys", ply + 1)
        if store.has(keys_name):
            keys = store.load(keys_name)
            continue
        parents = keys[~won]
        if len(parents) == 0:
            return ply + 1
        keys = store.save(keys_name, canonical_children(arrays, parents, ply, children_per_chunk))
    raise AssertionError("unreachable")  # pragma: no cover


def canonical_children(
    arrays: KeyArrays,
    parents: NDArray[np.uint64],
    ply: int,
    children_per_chunk: int | None = None,
) -> NDArray[np.uint64]:
    """The sorted distinct canonical keys of every child of ``parents`` (open positions of
    ``ply``), made a chunk at a time."""
    parts = []
    for part in chunks(len(parents), arrays.cells - ply, children_per_chunk or arrays.chunk):
        parts.append(arrays.sorted_unique(arrays.canonical_children(parents[part], ply)))
    if not parts:
        return np.zeros(0, dtype=np.uint64)
    # One chunk is done; several are merged, their duplicates (across chunks) dropped.
    return parts[0] if len(parts) == 1 else arrays.sorted_unique(np.concatenate(parts))


class BackedUp(NamedTuple):
    """Scores and best moves of some open positions, from their children's stored scores.

    * ``scores``: the best move score of each position (``int16``; ``keyarrays.NO_MOVE`` if it
      has no stored child),
    * ``best_moves``: bitmask of the cells whose move reaches that score (``uint64``),
    * ``complete``: whether every child was found in the next ply (else the two are over the
      children found).
    """

    scores: NDArray[np.int16]
    best_moves: NDArray[np.uint64]
    complete: NDArray[np.bool_]


def back_up_rows(
    arrays: KeyArrays, ply: int, keys: Keys, next_keys: Keys, next_scores: Scores
) -> BackedUp:
    """Back up open (neither won nor full) positions of ``ply`` from the next ply's sorted
    ``next_keys`` and their ``next_scores``."""
    return BackedUp(*arrays.back_up(keys, ply, next_keys, next_scores))


def back_up_ply(
    arrays: KeyArrays,
    ply: int,
    keys: NDArray[np.uint64],
    won: NDArray[np.bool_],
    next_keys: NDArray[np.uint64] | None,
    next_scores: NDArray[np.int16] | None,
    children_per_chunk: int | None = None,
) -> tuple[NDArray[np.int16], NDArray[np.uint64]]:
    """Scores and best-move masks of a whole ply: won positions are lost in 0 for the side to
    move, a full board is a draw, and every other position is backed up from the solved next
    ply (``next_keys``, ``next_scores``), which must hold all its children."""
    scores = np.zeros(len(keys), dtype=np.int16)
    best = np.zeros(len(keys), dtype=np.uint64)
    scores[won] = -WIN_SCORE
    if ply == arrays.cells:
        return scores, best
    open_rows = np.flatnonzero(~won)
    if len(open_rows) == 0:
        return scores, best
    if next_keys is None or next_scores is None:
        raise ValueError(f"ply {ply} has open positions but no solved next ply")
    for part in chunks(len(open_rows), arrays.cells - ply, children_per_chunk or arrays.chunk):
        rows = open_rows[part]
        backed_up = back_up_rows(arrays, ply, keys[rows], next_keys, next_scores)
        if not backed_up.complete.all():
            raise AssertionError(f"ply {ply}: a child is missing from ply {ply + 1}")
        scores[rows] = backed_up.scores
        best[rows] = backed_up.best_moves
    return scores, best
