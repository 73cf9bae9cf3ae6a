"""The two bulk algorithms on whole plies of canonical keys, written once for every solver.

* **Enumeration** (:func:`enumerate_plies`): from the empty board, make the children of every
  position of ply ``p`` that is not won, canonicalise them, sort and deduplicate: that is ply
  ``p + 1``.
* **Back-up** (:func:`back_up_ply`): a ply's scores and best moves from the solved next ply;
  every child is looked up with ``searchsorted`` in the sorted next ply, and a position's
  score is the best of its move scores (see :mod:`solver.value`).

The exhaustive solver runs both over the whole game, the opening-book builder up to its depth,
and :mod:`solver.verify` recomputes the back-up (:func:`back_up_rows`) to check a stored table.
Every array is cut into chunks of bounded size, so memory is the plies' keys plus one chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.keyarrays import KeyArrays, sorted_unique
from ttt_solve.solver.plystore import PlyStore
from ttt_solve.solver.value import WIN_SCORE, move_score

CHILDREN_PER_CHUNK = 1 << 21
"""Children made and canonicalised at once: bounds the working memory (about 100 MB)."""

NO_MOVE = -2 * WIN_SCORE
"""The move score given to a child missing from the next ply: below every real score."""


def won_by_last_mover(arrays: KeyArrays, keys: NDArray[np.uint64], ply: int) -> NDArray[np.bool_]:
    """Whether the player who made the last move (X on odd plies) has a line, key by key."""
    if ply == 0:  # nobody has moved
        return np.zeros(len(keys), dtype=bool)
    return arrays.has_line(arrays.stones(keys, x=ply % 2 == 1))


def chunks(count: int, empties: int, children_per_chunk: int) -> Iterator[slice]:
    """Slices of ``count`` rows whose ``empties`` children each stay within the chunk size."""
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
    children_per_chunk: int = CHILDREN_PER_CHUNK,
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
    children_per_chunk: int = CHILDREN_PER_CHUNK,
) -> NDArray[np.uint64]:
    """The sorted distinct canonical keys of every child of ``parents`` (open positions of
    ``ply``), made a chunk at a time."""
    parts = []
    for part in chunks(len(parents), arrays.cells - ply, children_per_chunk):
        children, _ = arrays.children(np.asarray(parents[part]), x_to_move=ply % 2 == 0)
        parts.append(sorted_unique(arrays.canonical(children.ravel())))
    if not parts:
        return np.zeros(0, dtype=np.uint64)
    return sorted_unique(np.concatenate(parts))


class BackedUp(NamedTuple):
    """Scores and best moves of some open positions, from their children's stored scores.

    * ``scores``: the best move score of each position (``int16``; ``NO_MOVE`` if it has no
      stored child),
    * ``best_moves``: bitmask of the cells whose move reaches that score (``uint64``),
    * ``complete``: whether every child was found in the next ply (else the two are over the
      children found).
    """

    scores: NDArray[np.int16]
    best_moves: NDArray[np.uint64]
    complete: NDArray[np.bool_]


def back_up_rows(
    arrays: KeyArrays,
    ply: int,
    keys: NDArray[np.uint64],
    next_keys: NDArray[np.uint64],
    next_scores: NDArray[np.int16],
) -> BackedUp:
    """Back up open (neither won nor full) positions of ``ply`` from the next ply's sorted
    ``next_keys`` and their ``next_scores``."""
    children, cells = arrays.children(np.asarray(keys), x_to_move=ply % 2 == 0)
    child_keys = arrays.canonical(children.ravel())
    if len(next_keys):
        where = np.minimum(np.searchsorted(next_keys, child_keys), len(next_keys) - 1)
        found = next_keys[where] == child_keys
        child_scores = np.asarray(next_scores).take(where)
    else:  # no child is stored at all
        found = np.zeros(len(child_keys), dtype=bool)
        child_scores = np.zeros(len(child_keys), dtype=np.int16)
    move_scores = move_score(child_scores.reshape(children.shape))
    if found.all():  # the usual case, and a flat test is far cheaper than one per row
        complete = np.ones(len(keys), dtype=bool)
    else:
        found = found.reshape(children.shape)
        complete = np.asarray(found.all(axis=1), dtype=bool)
        move_scores = np.where(found, move_scores, np.int16(NO_MOVE))
    top = move_scores.max(axis=1, initial=NO_MOVE)
    bits = np.left_shift(np.uint64(1), cells.astype(np.uint64))
    best = np.bitwise_or.reduce(np.where(move_scores == top[:, None], bits, np.uint64(0)), axis=1)
    return BackedUp(top.astype(np.int16, copy=False), best.astype(np.uint64, copy=False), complete)


def back_up_ply(
    arrays: KeyArrays,
    ply: int,
    keys: NDArray[np.uint64],
    won: NDArray[np.bool_],
    next_keys: NDArray[np.uint64] | None,
    next_scores: NDArray[np.int16] | None,
    children_per_chunk: int = CHILDREN_PER_CHUNK,
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
    for part in chunks(len(open_rows), arrays.cells - ply, children_per_chunk):
        rows = open_rows[part]
        backed_up = back_up_rows(arrays, ply, np.asarray(keys[rows]), next_keys, next_scores)
        if not backed_up.complete.all():
            raise AssertionError(f"ply {ply}: a child is missing from ply {ply + 1}")
        scores[rows] = backed_up.scores
        best[rows] = backed_up.best_moves
    return scores, best
