"""Playouts on raw bitboards, the inner loop of ``montecarlo`` (``mcts`` has its own, compiled:
:mod:`agents.mcts_kernel`).

A playout takes the stones of the side to move (``me``) and of its opponent, and a list
``cells`` whose first ``n`` items are the single-bit masks of the empty cells (the list is
scrambled in place, so pass a copy). It returns the result for the side that was to move:
+1 win, -1 loss, 0 draw. The start must not be over. ``random`` is the bound ``random``
method of the agent's generator: one call per random move, no other allocation.
"""

from __future__ import annotations

from collections.abc import Callable

from ttt_solve.agents.tables import Tables


def random_playout(
    t: Tables, me: int, opp: int, cells: list[int], n: int, random: Callable[[], float]
) -> int:
    """Uniformly random moves to the end."""
    # The win table is read inline: a method call per move costs about a quarter of
    # the playout rate on boards that have the table.
    win = t.win
    wins_with = t.wins_with
    sign = 1
    while n:
        i = int(random() * n)
        bit = cells[i]
        n -= 1
        cells[i] = cells[n]
        me |= bit
        if win[me] if win is not None else wins_with(me, bit):
            return sign
        me, opp = opp, me
        sign = -sign
    return 0


def heuristic_playout(
    t: Tables, me: int, opp: int, cells: list[int], n: int, random: Callable[[], float]
) -> int:
    """Each move: win now if possible, else block the opponent's threat, else random."""
    wins_with = t.wins_with
    sign = 1
    while n:
        pick = -1
        for j in range(n):
            if wins_with(me | cells[j], cells[j]):
                return sign
        for j in range(n):
            if wins_with(opp | cells[j], cells[j]):
                pick = j
                break
        if pick < 0:
            pick = int(random() * n)
        bit = cells[pick]
        n -= 1
        cells[pick] = cells[n]
        me |= bit
        # A block cannot win (we found no winning cell), nor can a random move then.
        me, opp = opp, me
        sign = -sign
    return 0


PLAYOUTS = {"random": random_playout, "heuristic": heuristic_playout}
