"""Positions of a game drawn at random by number, without listing them: the rules and a seed
decide the draw, never what stores the game.

Every position of ply ``p`` (``x = ceil(p/2)`` X stones and ``o = floor(p/2)`` O stones on
``N`` cells) has a number in the game's **dense index**: the plies one after another, and
within a ply ``rank(X) * C(N - x, o) + rank(O among the cells X leaves free)``, sets ranked by
the combinatorial number system (the tablebase's index before its symmetry reduction,
docs/tablebase.md). 5x5 has 1.6·10^11 numbers, 4x5 7.4·10^8.

:func:`open_positions` draws numbers without replacement in a seeded order, a Fisher-Yates
shuffle done lazily (one number at a time, the displaced ones in a dict, so that a draw costs
the same whether few numbers or nearly all are taken), and keeps a number when neither side
has a line in its position (with its stones counted by its ply, that is a position some order
of its moves reaches, and whose game goes on): the kept positions come in a uniform random
order of those positions. Asked for one position per symmetry class, it keeps a position only
when it is its class's canonical image (the smallest key), so the classes come in a uniform
random order. No table is read.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Iterator
from math import comb

from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.index import binomial_table, expand, stone_counts, unrank_set


class DenseIndex:
    """The numbers of the positions of plies ``0 .. plies - 1`` of a board, one after another."""

    def __init__(self, rules: Rules, plies: int) -> None:
        self.rules = rules
        self.binom = binomial_table()
        self.per_o_set = []
        self.starts = [0]
        for ply in range(plies):
            x, o = stone_counts(ply)
            self.per_o_set.append(comb(rules.cells - x, o))
            self.starts.append(self.starts[-1] + comb(rules.cells, x) * self.per_o_set[-1])

    def __len__(self) -> int:
        return self.starts[-1]

    def position(self, number: int) -> Position:
        """The position at ``number`` (its stones; whether a game reaches it is not asked)."""
        ply = bisect_right(self.starts, number) - 1
        x_count, o_count = stone_counts(ply)
        x_rank, o_rank = divmod(number - self.starts[ply], self.per_o_set[ply])
        cells = self.rules.cells
        x = unrank_set(x_rank, x_count, cells, self.binom)
        o = expand(unrank_set(o_rank, o_count, cells - x_count, self.binom), self.rules.full & ~x)
        return Position(self.rules, x, o)


def shuffled(count: int, rng: random.Random) -> Iterator[int]:
    """``0 .. count - 1`` in a uniform random order, drawn one at a time."""
    displaced: dict[int, int] = {}
    for i in range(count):
        j = rng.randrange(i, count)
        here = displaced.pop(i, i)
        if j == i:
            yield here
        else:
            yield displaced.get(j, j)
            displaced[j] = here


def open_positions(rules: Rules, seed: int, *, per_class: bool = False) -> Iterator[Position]:
    """The reachable positions of ``rules`` whose game is not over, each once, in a uniform
    random order that ``seed`` decides (``per_class``: only each symmetry class's canonical
    position, the classes in a uniform random order)."""
    index = DenseIndex(rules, rules.cells)  # a full board's game is over
    for number in shuffled(len(index), random.Random(seed)):
        position = index.position(number)
        if per_class and not _is_canonical(rules, position.key):
            continue
        # With its stones counted by its ply, a position where neither side has a line is
        # one that some order of its moves reaches and whose game goes on.
        if rules.has_line(position.x) or rules.has_line(position.o):
            continue
        yield position


def _is_canonical(rules: Rules, key: int) -> bool:
    """Whether no image of the position has a smaller key (stops at the first that has: most
    positions are not their class's canonical one)."""
    return all(rules.permute(key, symmetry) >= key for symmetry in range(1, len(rules.symmetries)))
