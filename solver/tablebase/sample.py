"""A seeded uniform sample of a ply's canonical positions, drawn from a table's index with
their records: the one sampler of a table, for ``ttt verify``'s sample of each ply, the
prover's check of a table (``bench/check_tablebase.py``) and the benchmark's frozen sets.

A canonical position stands at exactly one **own** number of its ply
(:mod:`solver.tablebase.positions`), so drawing numbers uniformly and keeping those that are a
position's own number draws canonical positions uniformly. A sample may also be restricted to
positions whose record is in a given set (``keep``: a remoteness band, say).

:meth:`PlySample.stream` gives the ply's kept canonical positions in a seeded order, a batch at
a time, and :meth:`PlySample.sample` the first ``count`` of them, so that a sample of ``n`` is
the start of a sample of ``n + 1`` with the same seed. The order, from a generator seeded with
``(seed, ply)``:

* a ply of at most :data:`WHOLE` numbers is read whole: its kept canonical positions in a
  random permutation;
* a larger ply is drawn at random numbers, :data:`BATCH` at a time, each number once, the kept
  canonical positions in the order drawn, until half the ply's numbers were drawn;
* unless the first batch holds fewer than :data:`SPARSE_BELOW` kept positions: such a rare
  kind of position is found by reading the whole ply's records, and is then given in a random
  permutation as a small ply is.

The order depends on the table's bytes, the seed, ``keep`` and these constants alone, never on
how many positions are asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.files import map_ply, ply_path, read_header
from ttt_solve.solver.tablebase.record import NONE

WHOLE = 1 << 20
"""A ply of at most this many numbers is read whole and permuted."""
BATCH = 1 << 14
"""Numbers drawn at a time from a larger ply."""
SPARSE_BELOW = 16
"""A first batch with fewer kept positions than this makes the ply's kept positions be found
by reading all its records (they are fewer than about one number in a thousand)."""
SCAN = 1 << 22
"""Records read at once when a ply is read whole."""


class Drawn(NamedTuple):
    """Canonical positions of one ply: X and O cell sets in the index's orientation (the X set
    is its class's representative), each one's record, how many positions its symmetries make
    (``images``) and its own number in the ply."""

    x: NDArray[np.int64]
    o: NDArray[np.int64]
    records: NDArray[np.uint8]
    images: NDArray[np.uint8]
    numbers: NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.records)

    def take(self, chosen: NDArray[np.int64] | slice) -> Drawn:
        """The positions ``chosen`` picks (indexes or a slice), in its order."""
        return Drawn(
            self.x[chosen],
            self.o[chosen],
            self.records[chosen],
            self.images[chosen],
            self.numbers[chosen],
        )


def _joined(parts: list[Drawn]) -> Drawn:
    if not parts:
        return _EMPTY
    return Drawn(
        np.concatenate([part.x for part in parts]),
        np.concatenate([part.o for part in parts]),
        np.concatenate([part.records for part in parts]),
        np.concatenate([part.images for part in parts]),
        np.concatenate([part.numbers for part in parts]),
    )


_EMPTY = Drawn(
    np.zeros(0, dtype=np.int64),
    np.zeros(0, dtype=np.int64),
    np.zeros(0, dtype=np.uint8),
    np.zeros(0, dtype=np.uint8),
    np.zeros(0, dtype=np.int64),
)


def canonical_at(
    rules: Rules,
    ply: int,
    rep_ranks: NDArray[np.uint64] | NDArray[np.int64],
    records: NDArray[np.uint8],
    numbers: NDArray[np.int64],
) -> Drawn:
    """The canonical positions standing at their own numbers among ``numbers`` of ``ply``
    (``rep_ranks`` and ``records``: the ply's, as its file holds them), in the order of
    ``numbers``; numbers of no position are left out."""
    from ttt_solve.solver.tablebase.positions import stand_for

    numbers = np.ascontiguousarray(numbers, dtype=np.int64)
    x, o, own, images = stand_for(rules, ply, np.asarray(rep_ranks).astype(np.int64), numbers)
    held = np.asarray(records[numbers], dtype=np.uint8)
    keep = own & (held != NONE)
    return Drawn(x[keep], o[keep], held[keep], images[keep], numbers[keep])


class _NumberSet:
    """A set of a ply's numbers, a bit each: adding a batch costs the batch alone, where a
    sorted array of the numbers drawn so far cost them all at every batch (minutes for a ply
    whose canonical positions are one number in three hundred). Its pages are the system's
    zeros until a number on them is added."""

    def __init__(self, numbers: int) -> None:
        self.bits = np.zeros((numbers >> 3) + 1, dtype=np.uint8)
        self.size = 0

    def add_new(self, numbers: NDArray[np.int64]) -> NDArray[np.int64]:
        """Add ``numbers`` (distinct): those not yet in the set, in their order."""
        held = (self.bits[numbers >> 3] >> (numbers & 7).astype(np.uint8)) & 1
        fresh: NDArray[np.int64] = numbers[held == 0]
        np.bitwise_or.at(self.bits, fresh >> 3, np.left_shift(1, fresh & 7).astype(np.uint8))
        self.size += len(fresh)
        return fresh


class PlySample:
    """One ply of the table in ``folder``, for drawing its canonical positions."""

    def __init__(self, folder: Path | str, rules: Rules, ply: int) -> None:
        path = ply_path(Path(folder), ply)
        header = read_header(path, rules, ply)
        self.rules = rules
        self.ply = ply
        self.reps, self.records = map_ply(path, header)

    @property
    def numbers(self) -> int:
        """How many numbers the ply holds."""
        return len(self.records)

    def at(self, numbers: NDArray[np.int64]) -> Drawn:
        """The canonical positions standing at their own numbers among ``numbers``."""
        return canonical_at(self.rules, self.ply, self.reps, self.records, numbers)

    def stream(self, seed: int, keep: Iterable[int] | None = None) -> Iterator[Drawn]:
        """The ply's canonical positions whose record is in ``keep`` (default: every
        position), in the seeded order of the module's docstring, a batch at a time."""
        mask = np.zeros(256, dtype=np.bool_)
        if keep is None:
            mask[:] = True
        else:
            mask[list(keep)] = True
        mask[NONE] = False
        rng = np.random.default_rng([seed, self.ply])
        if self.numbers <= WHOLE:
            yield from self._permuted(self._kept_everywhere(mask), rng)
            return
        seen = _NumberSet(self.numbers)
        first = True
        while seen.size < self.numbers // 2:
            drawn = rng.integers(0, self.numbers, size=BATCH, dtype=np.int64)
            _, where = np.unique(drawn, return_index=True)
            drawn = seen.add_new(drawn[np.sort(where)])
            found = self.at(drawn[mask[self.records[drawn]]])
            if first and len(found) < SPARSE_BELOW:
                yield from self._permuted(self._kept_everywhere(mask), rng)
                return
            first = False
            yield found

    def sample(self, count: int, seed: int, keep: Iterable[int] | None = None) -> Drawn:
        """The first ``count`` positions of :meth:`stream` (all of them where there are
        fewer)."""
        parts: list[Drawn] = []
        held = 0
        for part in self.stream(seed, keep):
            parts.append(part.take(slice(0, count - held)))
            held += len(parts[-1])
            if held >= count:
                break
        return _joined(parts)

    def _kept_everywhere(self, mask: NDArray[np.bool_]) -> Drawn:
        """Every kept canonical position of the ply, in number order."""
        parts = []
        for start in range(0, self.numbers, SCAN):
            chunk = np.asarray(self.records[start : start + SCAN])
            numbers = np.flatnonzero(mask[chunk]).astype(np.int64) + start
            parts.append(self.at(numbers))
        return _joined(parts)

    @staticmethod
    def _permuted(found: Drawn, rng: np.random.Generator) -> Iterator[Drawn]:
        order = rng.permutation(len(found))
        for start in range(0, len(order), BATCH):
            yield found.take(order[start : start + BATCH])
