"""Reinforcement learning on m,n,k-games, with the truth as teacher and judge.

* :mod:`ttt_solve.rl.aec`: ``mnk_v0``, PettingZoo's tic-tac-toe on any board;
* :mod:`ttt_solve.rl.single`: ``ttt_solve/Mnk-v0``, a Gymnasium environment against an
  opponent named by a spec string (:mod:`ttt_solve.rl.opponents`), and
  :mod:`ttt_solve.rl.vector`, its vector environment (``gymnasium.make_vec``);
* :mod:`ttt_solve.rl.spiel`: the book as an OpenSpiel bot and minimax oracle;
* :mod:`ttt_solve.rl.evalset`: frozen sets of decisive positions with their labels, and
  :mod:`ttt_solve.rl.evaluate`, a policy's score on one.

The environments need the ``rl`` extra (``pip install -e '.[rl]'`` from a checkout); with it
installed, importing this package registers them: ``pettingzoo.make("aec", "ttt_solve/mnk-v0",
rows=4, cols=4, k=3)`` and ``gymnasium.make("ttt_solve/Mnk-v0", opponent="perfect")``. See
docs/rl.md.
"""

from __future__ import annotations

import importlib.util

PETTINGZOO_ID = "ttt_solve/mnk-v0"
GYMNASIUM_ID = "ttt_solve/Mnk-v0"


def _register() -> None:
    """Register the environments where the extra is installed (the evaluation sets need
    neither Gymnasium nor PettingZoo)."""
    if importlib.util.find_spec("gymnasium") is None:
        return
    if importlib.util.find_spec("pettingzoo") is None:
        return
    import gymnasium
    import pettingzoo

    if hasattr(pettingzoo, "register"):  # PettingZoo 1.27 has a registry, earlier ones not
        if PETTINGZOO_ID not in getattr(pettingzoo, "aec_registry", {}):
            pettingzoo.register("aec", PETTINGZOO_ID, entry_point="ttt_solve.rl.aec:env")
    if GYMNASIUM_ID not in gymnasium.registry:
        gymnasium.register(
            id=GYMNASIUM_ID,
            entry_point="ttt_solve.rl.single:MnkVsOpponent",
            vector_entry_point="ttt_solve.rl.vector:MnkVectorEnv",
        )


_register()
