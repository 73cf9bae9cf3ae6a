"""The exhaustive solver's per-ply work as compiled kernels over both cores.

Numba compiles each kernel once (``cache=True`` keeps the machine code on disk, so later runs
only load it) and runs its outer loop over all cores with ``prange``; ``nogil=True`` lets a
writer thread store one ply while the kernels compute the next. The kernels take a game's
symmetry tables as one ``uint64`` array ``tables[symmetry, chunk, byte]`` (see
:attr:`Rules.key_tables <solver.rules.Rules.key_tables>`) and work on packed keys: X's stones
in bits ``0 .. cells-1``, O's in bits ``cells .. 2*cells-1``.

* :func:`canonical_keys`, :func:`orbit_sizes`, :func:`won_keys`: one result per key;
* :func:`canonical_children`: every child of every parent, canonicalised;
* :func:`sorted_unique_parallel`: the distinct keys, sorted (slices sorted in parallel, then
  merged);
* :func:`back_up`: every open parent's best move score and best-move mask, each child looked
  up in the sorted next ply.
"""

from __future__ import annotations

import threading

import numba
import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.exhaustive.keyarrays import NO_MOVE
from ttt_solve.solver.rules import KEY_CHUNK_BITS, KEY_CHUNK_MASK
from ttt_solve.solver.value import move_score

MAX_BUCKET_BITS = 22
"""At most 4 million buckets (32 MiB of index) for a ply of any size."""

_compile = numba.njit(parallel=True, nogil=True, cache=True)
_compile_serial = numba.njit(nogil=True, cache=True)
# Helpers called once per child are inlined into the kernels: a call that passes an array
# counts references on it, an atomic operation on memory both cores share.
_compile_inline = numba.njit(nogil=True, cache=True, inline="always")

_move_score = _compile_inline(move_score)


@_compile_inline
def _image(key: np.uint64, tables: NDArray[np.uint64], symmetry: int) -> np.uint64:
    """The image of one key under one symmetry: a table look-up per 8 bits."""
    image: np.uint64 = np.uint64(0)
    for chunk in range(tables.shape[1]):
        byte = (key >> np.uint64(chunk * KEY_CHUNK_BITS)) & np.uint64(KEY_CHUNK_MASK)
        image |= np.uint64(tables[symmetry, chunk, byte])
    return image


@_compile_serial
def _canonical(key: np.uint64, tables: NDArray[np.uint64]) -> np.uint64:
    """The smallest image of one key (symmetry 0 is the identity)."""
    best = key
    for symmetry in range(1, tables.shape[0]):
        image = _image(key, tables, symmetry)
        if image < best:
            best = image
    return best


@_compile
def canonical_keys(keys: NDArray[np.uint64], tables: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """The canonical key of every key."""
    out = np.empty(len(keys), dtype=np.uint64)
    for i in numba.prange(len(keys)):
        out[i] = _canonical(keys[i], tables)
    return out


@_compile
def orbit_sizes(keys: NDArray[np.uint64], tables: NDArray[np.uint64]) -> NDArray[np.uint8]:
    """How many distinct positions each key's symmetry class holds: the symmetries divided by
    those that leave the key as it is (its stabiliser; the orbit-stabiliser theorem), which
    takes one comparison per symmetry instead of comparing the images with each other."""
    symmetries = tables.shape[0]
    out = np.empty(len(keys), dtype=np.uint8)
    for i in numba.prange(len(keys)):
        key = keys[i]
        fixed = 1  # the identity, symmetry 0
        for s in range(1, symmetries):
            if _image(key, tables, s) == key:
                fixed += 1
        out[i] = symmetries // fixed
    return out


@_compile
def won_keys(keys: NDArray[np.uint64], shift: int, lines: NDArray[np.uint64]) -> NDArray[np.bool_]:
    """Whether the stones at bit ``shift`` (0: X, ``cells``: O) of each key hold a line."""
    out = np.zeros(len(keys), dtype=np.bool_)
    for i in numba.prange(len(keys)):
        stones = keys[i] >> np.uint64(shift)
        for line in lines:
            if stones & line == line:
                out[i] = True
                break
    return out


@_compile_inline
def _child_canonical(
    images: NDArray[np.uint64], parent: int, moves: NDArray[np.uint64], bit: int
) -> np.uint64:
    """The canonical key of a parent's child from the parent's images and the move's (key
    ``bit``): a symmetry maps the child to the parent's image plus the move's image, one OR
    per symmetry. Indexes, not row views: a view per child was measured to cost more than the
    ORs."""
    best: np.uint64 = images[parent, 0] | moves[bit, 0]
    for symmetry in range(1, images.shape[1]):
        image = images[parent, symmetry] | moves[bit, symmetry]
        if image < best:
            best = image
    return best


@_compile
def canonical_children(
    parents: NDArray[np.uint64],
    cells: int,
    empties: int,
    shift: int,
    tables: NDArray[np.uint64],
    moves: NDArray[np.uint64],
) -> NDArray[np.uint64]:
    """The canonical key of every child of every parent (all with ``empties`` empty cells):
    ``empties`` children per parent, in parent order; the mover's stone goes at bit
    ``cell + shift``. ``moves`` is ``Rules.bit_images`` as an array, ``[bit, symmetry]``."""
    out = np.empty(len(parents) * empties, dtype=np.uint64)
    full = (np.uint64(1) << np.uint64(cells)) - np.uint64(1)
    images = np.empty((len(parents), tables.shape[0]), dtype=np.uint64)
    for i in numba.prange(len(parents)):
        key = parents[i]
        for symmetry in range(tables.shape[0]):
            images[i, symmetry] = _image(key, tables, symmetry)
        occupied = (key | (key >> np.uint64(cells))) & full
        j = i * empties
        for cell in range(cells):
            if not (occupied >> np.uint64(cell)) & np.uint64(1):
                out[j] = _child_canonical(images, i, moves, cell + shift)
                j += 1
    return out


@_compile_serial
def _unique_in_place(keys: NDArray[np.uint64]) -> int:
    """Compact a sorted array's distinct values to its front; returns how many there are."""
    if len(keys) == 0:
        return 0
    count = 1
    for i in range(1, len(keys)):
        if keys[i] != keys[count - 1]:
            keys[count] = keys[i]
            count += 1
    return count


@_compile
def _unique_slices(keys: NDArray[np.uint64], bounds: NDArray[np.int64]) -> NDArray[np.int64]:
    """Compact each sorted slice ``bounds[s]:bounds[s+1]``'s distinct values to its front, in
    parallel; returns each slice's count of distinct values."""
    slices = len(bounds) - 1
    counts = np.empty(slices, dtype=np.int64)
    for s in numba.prange(slices):
        counts[s] = _unique_in_place(keys[bounds[s] : bounds[s + 1]])
    return counts


@_compile_serial
def _merge_unique(
    keys: NDArray[np.uint64], bounds: NDArray[np.int64], counts: NDArray[np.int64]
) -> NDArray[np.uint64]:
    """Merge the sorted distinct runs ``keys[bounds[s] : bounds[s] + counts[s]]`` into one
    sorted array of distinct values."""
    runs = len(counts)
    heads = bounds[:-1].copy()
    ends = bounds[:-1] + counts
    out = np.empty(counts.sum(), dtype=np.uint64)
    n = 0
    while True:
        smallest = -1
        for r in range(runs):  # few runs: a linear scan beats a heap
            if heads[r] < ends[r] and (smallest < 0 or keys[heads[r]] < keys[heads[smallest]]):
                smallest = r
        if smallest < 0:
            return out[:n]
        value = keys[heads[smallest]]
        heads[smallest] += 1
        if n == 0 or out[n - 1] != value:
            out[n] = value
            n += 1


def sorted_unique_parallel(keys: NDArray[np.uint64], slices: int) -> NDArray[np.uint64]:
    """The distinct values of ``keys``, sorted; ``keys`` is sorted in place by slices.

    Each slice is sorted by NumPy's sort in a thread of its own (it releases the GIL, and was
    measured four times faster than the sort Numba compiles), then the sorted runs are merged.
    """
    bounds = np.linspace(0, len(keys), max(1, slices) + 1).astype(np.int64)
    parts = [keys[bounds[s] : bounds[s + 1]] for s in range(len(bounds) - 1)]
    _sort_each(parts)
    counts: NDArray[np.int64] = _unique_slices(keys, bounds)
    if len(counts) == 1:
        distinct: NDArray[np.uint64] = keys[: counts[0]].copy()
        return distinct
    merged: NDArray[np.uint64] = _merge_unique(keys, bounds, counts)
    return merged


def _sort_each(parts: list[NDArray[np.uint64]]) -> None:
    """Sort each array in place, all but the first on threads of their own.

    Daemon threads started here rather than a thread pool: a Ctrl-C landing between a pool's
    starting a worker and its recording it leaves a worker nobody wakes, and the process never
    exits. A daemon thread does not hold the process up.
    """
    helpers = [threading.Thread(target=part.sort, daemon=True) for part in parts[1:]]
    for helper in helpers:
        helper.start()
    parts[0].sort()
    for helper in helpers:
        helper.join()


def bucket_starts(sorted_keys: NDArray[np.uint64], key_bits: int) -> tuple[NDArray[np.int64], int]:
    """An index of a sorted key array by its top bits: ``(starts, shift)``, the keys whose
    ``key >> shift`` is ``b`` lying at ``starts[b] : starts[b + 1]``. About one bucket per
    two keys, so a look-up searches a few keys instead of the whole ply."""
    bits = min(key_bits, MAX_BUCKET_BITS, max(1, int(len(sorted_keys)).bit_length()))
    shift = key_bits - bits
    firsts = np.arange((1 << bits) + 1, dtype=np.uint64) << np.uint64(shift)
    starts = np.searchsorted(sorted_keys, firsts).astype(np.int64)
    return starts, shift


@_compile_inline
def _find(
    sorted_keys: NDArray[np.uint64], starts: NDArray[np.int64], shift: int, key: np.uint64
) -> int:
    """The index of ``key`` in ``sorted_keys`` (indexed by :func:`bucket_starts`), or -1."""
    bucket = key >> np.uint64(shift)
    low, high = starts[bucket], starts[bucket + 1]
    end = high
    while low < high:
        middle = (low + high) >> 1
        if sorted_keys[middle] < key:
            low = middle + 1
        else:
            high = middle
    if low < end and sorted_keys[low] == key:
        return int(low)
    return -1


@_compile
def back_up(
    parents: NDArray[np.uint64],
    tables: NDArray[np.uint64],
    moves: NDArray[np.uint64],
    cells: int,
    shift: int,
    next_keys: NDArray[np.uint64],
    next_starts: NDArray[np.int64],
    next_shift: int,
    next_scores: NDArray[np.int16],
) -> tuple[NDArray[np.int16], NDArray[np.uint64], NDArray[np.bool_]]:
    """Every parent's best move score over the children found in ``next_keys`` (``NO_MOVE``
    if none is), the mask of the cells whose move reaches it, and whether every child was
    found. ``tables``, ``moves``: as for :func:`canonical_children`; ``next_starts``,
    ``next_shift``: the :func:`bucket_starts` of ``next_keys``."""
    count = len(parents)
    scores = np.empty(count, dtype=np.int16)
    best = np.empty(count, dtype=np.uint64)
    complete = np.empty(count, dtype=np.bool_)
    full = (np.uint64(1) << np.uint64(cells)) - np.uint64(1)
    images = np.empty((count, tables.shape[0]), dtype=np.uint64)
    for i in numba.prange(count):
        key = parents[i]
        for symmetry in range(tables.shape[0]):
            images[i, symmetry] = _image(key, tables, symmetry)
        occupied = (key | (key >> np.uint64(cells))) & full
        top = NO_MOVE
        mask = np.uint64(0)
        found_all = True
        for cell in range(cells):
            if (occupied >> np.uint64(cell)) & np.uint64(1):
                continue
            child = _child_canonical(images, i, moves, cell + shift)
            where = _find(next_keys, next_starts, next_shift, child)
            if where < 0:
                found_all = False
                continue
            score = _move_score(np.int64(next_scores[where]))
            if score > top:
                top = score
                mask = np.uint64(1) << np.uint64(cell)
            elif score == top:
                mask |= np.uint64(1) << np.uint64(cell)
        scores[i] = top
        best[i] = mask
        complete[i] = found_all
    return scores, best, complete
