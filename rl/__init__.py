"""Reinforcement learning on m,n,k-games, with the truth as teacher and judge.

* :mod:`ttt_solve.rl.aec`: ``mnk_v0``, PettingZoo's tic-tac-toe on any board;
* :mod:`ttt_solve.rl.single`: ``ttt_solve/Mnk-v0``, a Gymnasium environment against an
  opponent named by a spec string;

Needs the ``rl`` extra (``pip install 'ttt-solve[rl]'``). Importing this package registers
the environments: ``pettingzoo.make("aec", "ttt_solve/mnk-v0", rows=4, cols=4, k=3)`` and
``gymnasium.make("ttt_solve/Mnk-v0", opponent="perfect")``. See docs/rl.md.
"""

from __future__ import annotations

from ttt_solve.rl.extra import require

require()

import gymnasium  # noqa: E402 - after the check of the extra
import pettingzoo  # noqa: E402

PETTINGZOO_ID = "ttt_solve/mnk-v0"
GYMNASIUM_ID = "ttt_solve/Mnk-v0"

if hasattr(pettingzoo, "register"):  # PettingZoo 1.27 has a registry, earlier ones not
    if PETTINGZOO_ID not in getattr(pettingzoo, "aec_registry", {}):
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point="ttt_solve.rl.aec:env")
if GYMNASIUM_ID not in gymnasium.registry:
    gymnasium.register(id=GYMNASIUM_ID, entry_point="ttt_solve.rl.single:MnkVsOpponent")
