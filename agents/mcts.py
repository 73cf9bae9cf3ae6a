"""``mcts``: Monte Carlo tree search with UCT selection (and, optionally, MCTS-Solver).

Each iteration walks down the tree by UCT (``mean + c * sqrt(ln N / n)``) while the node has
no untried moves, expands one untried move chosen at random, plays out to the end with the
rollout policy (``random`` or ``heuristic``: win now, else block, else random), and backs the
result up the path. The final move is the root child with the most visits.

With ``solver=true`` proven results are backed up too (Winands et al.'s MCTS-Solver, extended
to draws): a node with a child that wins for the side to move is a proven loss for the player
who moved into it; a node whose moves are all expanded and all proven takes the negated best
of them. Selection skips proven losing moves, the final choice takes a proven win, and the
search stops early once the root is proven. Without it, only finished games are exact.

The loop is compiled by Numba (:mod:`agents.mcts_kernel`, imported on the first search) and
draws from the agent's own ``random.Random``, number for number as a Python loop calling
``rng.random()`` would: the same seed gives the same moves as the pure-Python search this
replaced, on any board. :meth:`MctsAgent.tree` returns the root as a :class:`Node`, a view of
the tree's arrays.
"""

from __future__ import annotations

from typing import Any

from ttt_solve.agents.base import Agent
from ttt_solve.solver.position import Position

ROLLOUTS = ("random", "heuristic")
"""Playout policies, in the kernel's numbering."""


class Node:
    """One node of a finished search, read from its arrays.

    ``bit`` is the move's single-bit mask (0 at the root), ``visits`` the simulations through
    it, ``value`` the summed rewards of the player who moved into it, ``proven`` that
    player's proven result (+1, 0, -1) or ``None``; ``children`` in the order expanded.
    """

    __slots__ = ("_tree", "_index")

    def __init__(self, tree: tuple[Any, ...], index: int) -> None:
        self._tree = tree
        self._index = index

    @property
    def bit(self) -> int:
        cell = int(self._tree[0][self._index])
        return 0 if cell < 0 else 1 << cell

    @property
    def visits(self) -> int:
        return int(self._tree[1][self._index])

    @property
    def value(self) -> int:
        return int(self._tree[2][self._index])

    @property
    def proven(self) -> int | None:
        from ttt_solve.agents.mcts_kernel import UNPROVEN

        result = int(self._tree[3][self._index])
        return None if result == UNPROVEN else result

    @property
    def children(self) -> list[Node]:
        first_child, next_sibling = self._tree[4], self._tree[5]
        out = []
        child = int(first_child[self._index])
        while child >= 0:
            out.append(Node(self._tree, child))
            child = int(next_sibling[child])
        return out


class MctsAgent(Agent):
    """UCT with ``iterations`` simulations per move."""

    name = "mcts"

    def __init__(
        self,
        rng,
        *,
        iterations: int = 1000,
        c: float = 1.4,
        rollout: str = "random",
        solver: bool = False,
        **kwargs,
    ) -> None:  # noqa: ANN001
        super().__init__(rng, **kwargs)
        if iterations < 1:
            raise ValueError(f"mcts iterations must be at least 1, got {iterations}")
        if c < 0:
            raise ValueError(f"mcts exploration constant c must be >= 0, got {c}")
        if rollout not in ROLLOUTS:
            raise ValueError(f"mcts rollout {rollout!r} is unknown: use {' or '.join(ROLLOUTS)}")
        self.iterations = iterations
        self.c = c
        self.rollout = rollout
        self.solver = solver
        self.last_root: Node | None = None
        self.simulations = 0

    def search(self, position: Position) -> int:
        moves = position.legal_moves()
        if len(moves) == 1:
            return moves[0]
        root = self.tree(position)
        return self.best_child(root).bit.bit_length() - 1

    @staticmethod
    def best_child(root: Node) -> Node:
        """A proven win if there is one, else the most visited move not proven lost."""
        children = root.children
        wins = [ch for ch in children if ch.proven == 1]
        pool = wins or [ch for ch in children if ch.proven != -1] or children
        return max(pool, key=lambda ch: ch.visits)  # first of equals: expansion order

    def tree(self, position: Position) -> Node:
        """Run the search from ``position`` (not over) and return the root node."""
        # The compiled loop and its arrays load Numba and NumPy: on the first search, not
        # with the agent (an agent's name in a help text costs nothing).
        import numpy as np

        from ttt_solve.agents.mcts_kernel import MT_N, line_tables, node_arrays, search

        rules = position.rules
        t = line_tables(rules)
        me, opp = (position.x, position.o) if position.x_to_move else (position.o, position.x)
        empty = np.array(position.legal_moves(), np.int32)
        version, words, gauss = self.rng.getstate()
        mt = np.array(words, np.int64)
        assert len(mt) == MT_N + 1  # 624 words and the index: CPython's Mersenne Twister
        arrays = node_arrays(self.iterations + 1)
        done, _nodes = search(
            t.counts(me, opp, rules),
            empty,
            (t.line_start, t.line_ids, t.lines, rules.k),
            rules.cells,
            self.iterations,
            float(self.c),
            ROLLOUTS.index(self.rollout),
            self.solver,
            mt,
            arrays,
        )
        self.rng.setstate((version, tuple(mt.tolist()), gauss))
        self.simulations += done
        root = Node(tuple(arrays), 0)
        self.last_root = root
        return root
