"""``heuristic``: the classic tic-tac-toe rule list, generalised to k in a row.

A **threat** is an empty cell that would complete a line (k stones) for a side right now; a
**double threat** is a move after which a side has two or more threats, so the opponent
cannot block them all. The rules, first that applies:

1. win now: take one of my threats;
2. block: take one of the opponent's threats;
3. make a double threat;
4. block the opponent's double threat: if the opponent has a cell that would make one, play
   a *safe* move: either one that makes a single threat whose forced block does not hand the
   opponent a double threat, or a quiet move after which the opponent has no double-threat
   cell left (taking the cell itself is one way); if no move is safe, take one of those cells;
5. otherwise the cell with the best line-count score (:func:`line_score`), which on an empty
   3x3 board puts the centre first, then the corners.

Ties are broken by the agent's generator; :meth:`HeuristicAgent.candidates` lists them.

``rules=N`` (0 to 5, default 5: all) applies only the first N rules and otherwise picks
uniformly among all legal moves, so the ladder a course builds step by step (a random player,
then one that wins when it can, then one that also blocks, ...) is one parameter: ``rules=0``
is a random player.
"""

from __future__ import annotations

import random
from typing import Any

from ttt_solve.agents.base import Agent, choose
from ttt_solve.agents.tables import Tables, cells_of, split, tables
from ttt_solve.solver.position import Position


def line_score(t: Tables, me: int, opp: int, cell: int) -> int:
    """How much a cell is worth to the side to move: for each line through it, ``4**mine``
    if the opponent has no stone there (attack) plus ``4**theirs`` if I have none (defence).

    An open line counts twice (1 + 1), so an empty cell scores by the lines through it.
    """
    score = 0
    for m in t.lines_through[cell]:
        mine, theirs = me & m, opp & m
        if not theirs:
            score += 4 ** mine.bit_count()
        if not mine:
            score += 4 ** theirs.bit_count()
    return score


def double_threat_cells(t: Tables, me: int, opp: int) -> int:
    """The mask of empty cells where ``me`` would make two or more threats."""
    found = 0
    empty = t.full & ~(me | opp)
    for c in cells_of(empty):
        bit = 1 << c
        if t.threats(me | bit, opp).bit_count() >= 2:
            found |= bit
    return found


def _is_safe(t: Tables, me: int, opp: int, bit: int) -> bool:
    """Whether my move ``bit`` leaves the opponent (to move) no double threat to make."""
    me2 = me | bit
    mine = t.threats(me2, opp)
    if mine:
        # The opponent must block my threat; one threat (two would be a double threat, rule 3).
        block = mine & -mine
        return t.threats(opp | block, me2).bit_count() < 2
    return double_threat_cells(t, opp, me2) == 0


def _win(t: Tables, me: int, opp: int) -> int:
    return t.threats(me, opp)


def _block(t: Tables, me: int, opp: int) -> int:
    return t.threats(opp, me)


def _double_threat(t: Tables, me: int, opp: int) -> int:
    return double_threat_cells(t, me, opp)


def _block_double_threat(t: Tables, me: int, opp: int) -> int:
    """The safe moves against the opponent's double-threat cells, else those cells; ``0`` if
    the opponent has none."""
    forks = double_threat_cells(t, opp, me)
    if not forks:
        return 0
    safe = 0
    for c in cells_of(t.full & ~(me | opp)):
        if _is_safe(t, me, opp, 1 << c):
            safe |= 1 << c
    return safe or forks


def _any_cell(t: Tables, me: int, opp: int) -> int:
    return t.full & ~(me | opp)


RULES = (_win, _block, _double_threat, _block_double_threat, _any_cell)
"""The rule list in order: each gives the mask of cells it allows (``0``: it does not apply).
The first rule that applies decides, and the line-count score ranks the cells it allows."""


class HeuristicAgent(Agent):
    """The first ``rules`` rules of the list above; deterministic but for tie-breaks."""

    name = "heuristic"

    def __init__(self, rng: random.Random, *, rules: int = len(RULES), **kwargs: Any) -> None:
        super().__init__(rng, **kwargs)
        if not 0 <= rules <= len(RULES):
            raise ValueError(f"heuristic rules must be 0 to {len(RULES)}, got {rules}")
        self.rules = rules

    def search(self, position: Position) -> int:
        return choose(self.rng, self.candidates(position))

    def candidates(self, position: Position) -> list[int]:
        """Every cell the rules rank first (the agent picks one at random); every legal move
        when none of the first ``rules`` rules applies."""
        t = tables(position.rules)
        me, opp = split(position)
        for rule in RULES[: self.rules]:
            mask = rule(t, me, opp)
            if mask:
                return self._best_scored(t, me, opp, mask)
        return position.legal_moves()

    @staticmethod
    def _best_scored(t: Tables, me: int, opp: int, mask: int) -> list[int]:
        cells = cells_of(mask)
        scores = [line_score(t, me, opp, c) for c in cells]
        top = max(scores)
        return [c for c, s in zip(cells, scores) if s == top]
