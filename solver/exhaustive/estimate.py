"""How big an exhaustive solve would be, before starting it.

The bound counts, for each ply, the ways to place the stones with the right counts, ignoring
wins (so it is exact for a board nobody can win and an over-estimate otherwise), divided by
the number of symmetries. It is within 5% of the true canonical count for 4x4 k=4
and 10% for 4x5 k=4.
"""

from __future__ import annotations

import os
from math import comb
from typing import NamedTuple

from ttt_solve.solver.rules import Rules

BYTES_PER_POSITION = 60
"""Peak memory per canonical position of the NumPy solver: keys, flags, scores and best moves
(about 20 bytes) kept for every ply, with room for the chunk being worked on."""

BASE_BYTES = 200 * 2**20
"""Interpreter, NumPy and lookup tables."""


class Estimate(NamedTuple):
    canonical: int  # upper bound on canonical positions
    memory: int  # bytes the exhaustive solver would need at peak

    def fits(self, available: int) -> bool:
        return self.memory <= available


def exhaustive_estimate(rules: Rules) -> Estimate:
    """An upper bound on the canonical positions and the memory to solve them all."""
    n = rules.cells
    placements = sum(comb(n, p) * comb(p, (p + 1) // 2) for p in range(n + 1))
    canonical = -(-placements // len(rules.symmetries))
    return Estimate(canonical, BASE_BYTES + BYTES_PER_POSITION * canonical)


def available_memory() -> int:
    """Bytes of memory this machine can give (MemAvailable on Linux, else physical memory)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30
