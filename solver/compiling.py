"""Whether the compiled code is about to be compiled, and the one-line notice that says so.

Numba compiles the prover's search (:mod:`solver.prover.negamax`) and the exhaustive
solver's kernels (:mod:`solver.exhaustive.kernels`) on their first use on a machine and keeps
the machine code on disk beside the source; later runs load it in a fraction of a second. The
first compile takes about 10 s on an idle machine and up to a minute on a busy one, which looks
like a hang unless something says what is going on.

:func:`announce_search` and :func:`announce_kernels` log that notice, at WARNING level, on the
logger ``ttt_solve.compiling``, when the code is not in Numba's cache for this machine: Python
prints such a record on standard error when no logging is set up (the command line's case), and
a notebook session shows it as a display of its own (:mod:`ttt_solve.session`).
"""

from __future__ import annotations

import importlib.util
import logging
from typing import Any

LOGGER = "ttt_solve.compiling"
ABOUT = "about 10 s on an idle machine, up to a minute on a busy one"


def in_cache(dispatcher: Any) -> bool | None:
    """Whether Numba's on-disk cache holds machine code of ``dispatcher`` (an ``njit``
    function) for this machine and this version of its source; ``None`` if that cannot be
    told (no cache, a Numba whose cache reads differently)."""
    try:
        from numba.core.registry import cpu_target

        index = dispatcher._cache._cache_file._load_index()  # {} when missing or stale
        magic = cpu_target.target_context.codegen().magic_tuple()
        return any(magic in key for key in index)
    except Exception:  # noqa: BLE001 - Numba's internals: unknown, then no notice
        return None


def announce(what: str) -> None:
    logging.getLogger(LOGGER).warning(
        "note: compiling %s for this machine (first use: %s, once; later runs load it)",
        what,
        ABOUT,
    )


def announce_search() -> None:
    """Say so if making a compiled prover will compile the search."""
    if importlib.util.find_spec("numba") is None:
        return
    from ttt_solve.solver.prover.search import _kernel

    if in_cache(_kernel(True)._negamax) is False:
        announce("the prover's search")


def announce_kernels() -> None:
    """Say so if the exhaustive solver's kernels will be compiled."""
    from ttt_solve.solver.exhaustive import kernels

    if in_cache(kernels.back_up) is False:
        announce("the exhaustive solver's kernels")
