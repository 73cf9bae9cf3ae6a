"""The pure-Python MCTS that ``mcts`` was before its loop was compiled: the oracle of
tests/test_mcts.py, which holds the compiled search to the same trees, node for node, and the
same generator state after, for the same seeds.

UCT selection (``mean + c * sqrt(ln N / n)``), one random untried move expanded per
iteration, a playout (:mod:`agents.rollout`), the result backed up; with ``solver`` proven
results backed up too (MCTS-Solver). Nodes hold the move's bit, visits, the summed reward of
the player who moved into the node, children, untried moves (bits) and the proven result.
"""

from __future__ import annotations

from math import log, sqrt

from ttt_solve.agents.mcts import MctsAgent
from ttt_solve.agents.rollout import PLAYOUTS
from ttt_solve.agents.tables import split, tables
from ttt_solve.solver.position import Position


class Node:
    __slots__ = ("bit", "visits", "value", "children", "untried", "proven")

    def __init__(self, bit: int, untried: list[int]) -> None:
        self.bit = bit
        self.visits = 0
        self.value = 0
        self.children: list[Node] = []
        self.untried = untried
        self.proven: int | None = None


class ReferenceMcts(MctsAgent):
    """The compiled agent's parameters and final choice, with the search loop in Python."""

    def tree(self, position: Position) -> Node:
        """Run the search from ``position`` (not over) and return the root node."""
        t = tables(position.rules)
        win, full, wins_with = t.win, t.full, t.wins_with
        playout = PLAYOUTS[self.rollout]
        random = self.rng.random
        c2, solver = self.c * self.c, self.solver
        me0, opp0 = split(position)
        all_empty = [b for b in t.bits if not (me0 | opp0) & b]
        root = Node(0, list(all_empty))
        done = 0
        for done in range(1, self.iterations + 1):  # noqa: B007 - read after the loop
            node, me, opp = root, me0, opp0  # ``me``: the side to move at ``node``
            path = [root]
            proved = False
            while True:
                if node.proven is not None:
                    reward = node.proven
                    break
                untried = node.untried
                if untried:
                    n = len(untried)
                    i = int(random() * n)
                    bit = untried[i]
                    untried[i] = untried[n - 1]
                    untried.pop()
                    me |= bit
                    occupied = me | opp
                    child = Node(bit, [])
                    node.children.append(child)
                    path.append(child)
                    if win[me] if win is not None else wins_with(me, bit):
                        child.proven = reward = 1
                        proved = True
                    elif occupied == full:
                        child.proven = reward = 0
                        proved = True
                    else:
                        empty = [b for b in all_empty if not occupied & b]
                        child.untried = empty
                        reward = -playout(t, opp, me, empty[:], len(empty), random)
                    break
                explore = c2 * log(node.visits)  # c * sqrt(ln N / n) == sqrt(c*c*ln N / n)
                best: Node | None = None
                best_score = -1e300
                for ch in node.children:
                    if solver and ch.proven == -1:
                        continue
                    visits = ch.visits
                    score = ch.value / visits + sqrt(explore / visits)
                    if score > best_score:
                        best, best_score = ch, score
                assert best is not None  # an unproven node has an unproven child
                node = best
                me, opp = opp, me | best.bit
                path.append(node)
            for step in reversed(path):
                step.visits += 1
                step.value += reward
                reward = -reward
            if solver and proved:
                self._back_up_proof(path)
                if root.proven is not None:
                    break
        self.simulations += done
        self.last_root = root
        return root

    @staticmethod
    def _back_up_proof(path: list[Node]) -> None:
        """Prove the ancestors of a newly proven leaf as far as the proof reaches."""
        for index in range(len(path) - 2, -1, -1):
            parent, child = path[index], path[index + 1]
            if child.proven == 1:
                parent.proven = -1
            elif not parent.untried and all(ch.proven is not None for ch in parent.children):
                parent.proven = -max(ch.proven for ch in parent.children if ch.proven is not None)
            else:
                return
