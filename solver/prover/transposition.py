"""The prover's transposition table, a value of its own.

The table is a few flat arrays in buckets of two slots (a key's bucket is the top bits of a
multiplicative hash of the key): a slot holds a position's canonical key, its lower and upper
score bounds with its number of empty cells (so that the bigger subtree survives a
collision), and, when the search keeps relevance zones, the zone of each bound. A lost entry
costs time, never correctness (the whole key is compared). The search reads and writes it
through :func:`solver.prover.negamax._table_find` and :func:`solver.prover.negamax._save`; this
module makes
and clears it.
"""

from __future__ import annotations

import mmap
from collections import defaultdict
from typing import Any, NamedTuple


class TranspositionTable(NamedTuple):
    """The arrays of the table (see the module docstring), in the form Numba compiles."""

    keys: Any  # compiled [slot * 2 + word], the key's low and high 64-bit words; plain [slot]
    bounds: Any  # [slot]: (empties << 24) | (lower + offset) << 12 | (upper + offset), 0 empty
    zones: Any  # [slot * 2 + bound]: the zones of the lower and upper bounds (none when off)
    slots: int  # a power of two
    shift: int  # 64 - log2(slots): a key's bucket is in its hash's top bits

    @classmethod
    def allocate(cls, bits: int, compiled: bool, zones: bool) -> TranspositionTable:
        """A table of ``2 ** bits`` slots: int64 arrays compiled (24 bytes a slot, 40 with
        zones), else dictionaries that make a slot as it is written, so that a table costs
        no time or memory before it is used."""
        slots = 1 << bits
        if not compiled:
            return cls(defaultdict(int), defaultdict(int), defaultdict(int), slots, 64 - bits)
        return cls(
            _zeroed_words(2 * slots),
            _zeroed_words(slots),
            _zeroed_words(2 * slots if zones else 0),
            slots,
            64 - bits,
        )

    def clear(self) -> None:
        """Forget every entry."""
        for array in (self.keys, self.bounds, self.zones):
            if isinstance(array, dict):
                array.clear()
            else:
                array[:] = 0


def _zeroed_words(count: int) -> Any:
    """``count`` int64 zeros in memory of the ordinary page size, for the table's arrays.

    NumPy asks the kernel for huge pages for large arrays, and on a machine where memory is
    fragmented the first touch of each huge page waits for the kernel to compact memory: the
    first searches through a fresh 768 MiB table took seconds instead of hundredths. An
    anonymous mapping (zero-filled by the kernel, as the table needs) is not asked for them.
    """
    import numpy as np

    return np.frombuffer(mmap.mmap(-1, max(8, 8 * count)), dtype=np.int64, count=count)
