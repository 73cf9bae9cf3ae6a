"""The formulas of :mod:`solver.tablebase.index` and :mod:`solver.tablebase.record` compiled for
the CPU (Numba, inlined into the kernels that call them): each ``f`` there is ``f_cpu`` here,
from the same source (:func:`solver.tablebase.index.twins`). Kernels import these names, so that
Numba finds a compiled function under each global name they call."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase import index, record
from ttt_solve.solver.tablebase.index import binomial_table, symmetry_table, twins

FORMULAS = index.FORMULAS + record.FORMULAS
"""Every formula a kernel may call, for the CPU here and for CUDA in :mod:`solver.tablebase.gpu`."""

inline = numba.njit(nogil=True, cache=True, inline="always")
"""How a formula is compiled for the CPU: inlined where it is called (Numba's own inlining,
before its parallel loops are made)..."""

_called = numba.njit(nogil=True, cache=True)
"""... but for those whose loops Numba's parallel pass cannot take inlined into a ``prange``
loop (it sees the loop's index overwritten), compiled to be called."""

_CALLED = frozenset({"unrank_set"})


def _cpu(formula: Any) -> Any:
    return (_called if formula.__name__ in _CALLED else inline)(formula)


CPU: dict[str, Any] = twins(FORMULAS, _cpu)
"""Every formula's CPU twin, by the formula's name."""

popcount_cpu = CPU["popcount"]
rank_set_cpu = CPU["rank_set"]
unrank_set_cpu = CPU["unrank_set"]
next_set_cpu = CPU["next_set"]
permute_set_cpu = CPU["permute_set"]
compress_cpu = CPU["compress"]
expand_cpu = CPU["expand"]
smallest_image_cpu = CPU["smallest_image"]
number_of_cpu = CPU["number_of"]
o_at_cpu = CPU["o_at"]
score_of_record_cpu = CPU["score_of_record"]
record_of_cpu = CPU["record_of"]
outcome_of_record_cpu = CPU["outcome_of_record"]
lines_held_cpu = CPU["lines_held"]
end_record_cpu = CPU["end_record"]
back_up_cpu = CPU["back_up"]


def binomials() -> NDArray[np.int64]:
    """:func:`~solver.tablebase.index.binomial_table` as the kernels take it."""
    return np.array(binomial_table(), dtype=np.int64)


def symmetries_of(rules: Rules) -> NDArray[np.int64]:
    """:func:`~solver.tablebase.index.symmetry_table` as the kernels take it."""
    return np.array(symmetry_table(rules), dtype=np.int64)


def lines_of(rules: Rules) -> NDArray[np.int64]:
    """The rules' lines as the kernels take them."""
    return np.array(rules.lines, dtype=np.int64)
