"""ttt-solve: solved-game analysis and opening books for m,n,k-games (generalised tic-tac-toe).

In a Python session or a notebook::

    import ttt_solve as ttt
    ttt.solve("3x3k3")                                 # into ttt.sqlite, unless it is there
    ttt.analyse("x.o/.x./...", "3x3k3")                # a position and every move's value
    ttt.audit(my_agent, "3x3k3", board="flat")         # grade a function written for a list
    ttt.benchmark(my_agent, "4x5k4")                   # its score on the benchmark's grid
    ttt.play_game("mcts", "heuristic", "3x3k3")        # a game and its value history
    ttt.rate(my_agent, "3x3k3", board="flat")          # its rating on the reference ladder

(see :mod:`ttt_solve.session`); ``ttt.Rules``, ``ttt.Position`` and ``ttt.open_book`` are the
library's own classes and functions. Every name is imported on first use, so ``import
ttt_solve`` costs nothing.

The package's parts, each a subpackage, from the ground up (docs/design.md):

* :mod:`ttt_solve.solver`: rules, positions and the solvers (knows nothing of storage);
* :mod:`ttt_solve.presentation`: the drawings: boards, charts, HTML pieces, number formats;
* :mod:`ttt_solve.book`: storage of solved games and the reading API;
* :mod:`ttt_solve.agents`: agents that play, and the audit that grades them against a book;
* :mod:`ttt_solve.rl` and :mod:`ttt_solve.reports`: the learning environments, and what the
  terminal and a notebook show of the values above;
* :mod:`ttt_solve.cli` and :mod:`ttt_solve.web`: the ``ttt`` and ``ttt-solve`` commands, and the
  web explorer (with :mod:`ttt_solve.session`, the functions above).

Importing this package imports none of them.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.2.0"

_EXPORTS = {
    "Rules": "ttt_solve.solver.rules",
    "Position": "ttt_solve.solver.position",
    "Outcome": "ttt_solve.solver.value",
    "Value": "ttt_solve.solver.value",
    "open_book": "ttt_solve.book.reader",
    "TttError": "ttt_solve.errors",
    "solve": "ttt_solve.session",
    "analyse": "ttt_solve.session",
    "audit": "ttt_solve.session",
    "benchmark": "ttt_solve.session",
    "curve": "ttt_solve.session",
    "play_game": "ttt_solve.session",
    "rate": "ttt_solve.session",
    "rules_of": "ttt_solve.session",
    "position_of": "ttt_solve.session",
    "evaluate": "ttt_solve.rl.evaluate",
}
"""The session's names and the modules that define them, imported on first use."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ttt_solve' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up finds it at once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
