"""``minimax`` and ``alphabeta``: depth-limited negamax with a line-count evaluation.

Scores follow :mod:`solver.value`: a win ``r`` plies from the searched position scores
``WIN_SCORE - r``, a loss its negation, a draw 0, all for the side to move. At the horizon a
non-terminal position gets :func:`evaluate`, which stays strictly inside ``±EVAL_LIMIT``, far
from any win score, so a proven result always outranks a guess. With ``depth`` at least the
number of empty cells the search is exact (``alphabeta:depth=9`` plays 3x3 perfectly).

``minimax`` visits every node to the horizon; ``alphabeta`` prunes with a fail-soft window and
tries cells in a static order (most lines first). Both search every root move with a window
that still tells exact ties apart, so the agent's tie-break is over all equally good moves.
"""

from __future__ import annotations

from ttt_solve.agents.base import Agent, choose
from ttt_solve.agents.tables import Tables, split, tables
from ttt_solve.solver.position import Position
from ttt_solve.solver.value import WIN_SCORE

EVAL_LIMIT = 255
"""Evaluations lie in ``[-EVAL_LIMIT, EVAL_LIMIT]``; the smallest win score (26x26) is 348."""
INF = WIN_SCORE + 1


def evaluate(t: Tables, me: int, opp: int) -> int:
    """A guess at the position for the side to move ``me``: lines still open to each side,
    weighted by ``4**stones``, mine minus theirs, clamped to ``±EVAL_LIMIT``."""
    score = 0
    for m in t.lines:
        mine, theirs = me & m, opp & m
        if not theirs:
            if mine:
                score += 4 ** mine.bit_count()
        elif not mine:
            score -= 4 ** theirs.bit_count()
    return max(-EVAL_LIMIT, min(EVAL_LIMIT, score))


class _Search:
    """One root search; counts nodes."""

    def __init__(self, t: Tables, prune: bool) -> None:
        self.t = t
        self.prune = prune
        self.nodes = 0

    def negamax(self, me: int, opp: int, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Score of a non-terminal position (``me`` to move), searched ``depth`` plies deep.

        Fail-soft: with pruning a result ``<= alpha`` is an upper bound and ``>= beta`` a lower
        bound; strictly inside the window it is exact. Without pruning it is always exact.
        """
        self.nodes += 1
        t = self.t
        occupied = me | opp
        win, full = t.win, t.full
        moves = [b for b in t.order_bits if not occupied & b]
        # A win now is the best any move can do: take it before searching anything.
        for b in moves:
            if win[me | b] if win is not None else t.wins_with(me | b, b):
                return WIN_SCORE - ply - 1
        best = -INF
        for b in moves:
            child = me | b
            if child | opp == full:
                score = 0
            elif depth <= 1:
                score = -evaluate(t, opp, child)
            else:
                score = -self.negamax(opp, child, depth - 1, -beta, -max(alpha, best), ply + 1)
            if score > best:
                best = score
                if self.prune and best >= beta:
                    break
        return best

    def root_scores(self, me: int, opp: int, depth: int) -> dict[int, int]:
        """Scores of the root moves that may be best: exact for every move that ties or beats
        the best found so far (their window starts one below it), bounds for the rest."""
        t = self.t
        occupied = me | opp
        scores: dict[int, int] = {}
        best = -INF
        for b in t.order_bits:
            if occupied & b:
                continue
            child = me | b
            if t.wins_with(child, b):
                score = WIN_SCORE - 1
            elif child | opp == t.full:
                score = 0
            elif depth <= 1:
                score = -evaluate(t, opp, child)
            else:
                alpha = best - 1 if self.prune else -INF
                score = -self.negamax(opp, child, depth - 1, -INF, -alpha, 1)
            scores[b.bit_length() - 1] = score
            best = max(best, score)
        return scores


class MinimaxAgent(Agent):
    """Negamax to ``depth`` plies without pruning."""

    name = "minimax"
    prune = False

    def __init__(self, rng, *, depth: int = 3, **kwargs) -> None:  # noqa: ANN001
        super().__init__(rng, **kwargs)
        if depth < 1:
            raise ValueError(f"{self.name} depth must be at least 1, got {depth}")
        self.depth = depth
        self.nodes = 0

    def search(self, position: Position) -> int:
        return choose(self.rng, self.candidates(position))

    def candidates(self, position: Position) -> list[int]:
        """The root moves with the best score (ascending cells)."""
        search = _Search(tables(position.rules), self.prune)
        me, opp = split(position)
        scores = search.root_scores(me, opp, self.depth)
        self.nodes += search.nodes
        top = max(scores.values())
        return sorted(c for c, s in scores.items() if s == top)

    def scores(self, position: Position) -> dict[int, int]:
        """Root move scores (exact for the moves that may be best)."""
        me, opp = split(position)
        return _Search(tables(position.rules), self.prune).root_scores(me, opp, self.depth)


class AlphaBetaAgent(MinimaxAgent):
    """Negamax to ``depth`` plies with alpha-beta pruning."""

    name = "alphabeta"
    prune = True

    def __init__(self, rng, *, depth: int = 4, **kwargs) -> None:  # noqa: ANN001
        super().__init__(rng, depth=depth, **kwargs)
