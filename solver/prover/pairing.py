"""Draw proofs by pairing: a defender's strategy that no search has to check.

A *pairing* for the defender is a set of disjoint pairs of empty cells such that every line
still open to the attacker (no defender stone in it) holds both cells of one of the pairs. It
proves that the attacker can never complete a line, whoever is to move: whenever the attacker
takes one cell of a pair, the defender takes the other (and, with no pair touched, plays
anywhere), so each open line keeps a defender-bound cell. This is the Hales-Jewett pairing
strategy.

The pairings this module finds share a pair among overlapping lines of one board line, as the
classic pairing patterns of k in a row do: a row of ``k + 1`` cells holds two lines, and one
pair among their ``k - 1`` common cells blocks both. The open lines are taken in *runs*
(consecutive windows along one board line, :func:`runs`), and consecutive open lines of a run
form one *unit* as long as their common cells still hold two empty ones (greedily); then
every unit is matched, twice, to distinct empty cells among its common cells: a bipartite
matching found by augmenting paths (Kuhn's algorithm). It is a sufficient test: a pairing
that groups the lines otherwise is not found.

The finder itself is :func:`solver.prover.negamax._find_pairing`, so that the search runs the same
code at its nodes (compiled or not); this module is its front end for a whole position.
"""

from __future__ import annotations

from functools import lru_cache

from ttt_solve.solver.position import Position


@lru_cache(maxsize=32)
def runs(lines: tuple[int, ...], k: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(run_lines, run_continues)``: ``lines`` (cell masks of ``k`` cells) in runs, each run
    the consecutive windows of one board line in order, and ``run_continues[i]`` 1 when
    ``run_lines[i]`` follows ``run_lines[i - 1]`` in its run.

    Two lines of one board line that are consecutive share ``k - 1`` cells, and for ``k >= 3``
    lines sharing two or more cells lie on one board line; along every direction the cell
    numbers grow, so a line's successor is the one sharing ``k - 1`` cells that starts later.
    For ``k <= 2`` every line is a run of its own (consecutive lines share fewer than two
    cells, too few for a common pair)."""

    def start(line: int) -> int:
        return (line & -line).bit_length()

    successor: dict[int, int] = {}
    if k >= 3:
        for line in lines:
            for other in lines:
                if (line & other).bit_count() == k - 1 and start(other) > start(line):
                    successor[line] = other
    followers = set(successor.values())
    run_lines: list[int] = []
    run_continues: list[int] = []
    for line in sorted(lines):
        if line in followers:
            continue
        run_continues.append(0)
        run_lines.append(line)
        while line in successor:
            line = successor[line]
            run_continues.append(1)
            run_lines.append(line)
    return tuple(run_lines), tuple(run_continues)


def find_pairing(
    lines: tuple[int, ...], attacker: int, defender: int, empty: int
) -> dict[int, tuple[int, int]] | None:
    """A pairing that blocks every line of ``lines`` (cell masks) open to the attacker, as
    ``{line: (cell, cell)}`` (both cells in the line, empty, and two pairs either equal or
    disjoint), or None when none of the kind this module finds exists.

    ``attacker``, ``defender``, ``empty``: cell masks of the attacker's stones, the
    defender's and the empty cells. A line the attacker has completed or holds all but one
    cell of has no pair: None.
    """
    from ttt_solve.solver.prover.negamax import _find_pairing  # the plain instance

    del attacker  # a line is open whatever the attacker holds in it
    if not lines:
        return {}
    k = lines[0].bit_count()
    run_lines, run_continues = runs(tuple(lines), k)
    cells = max(line.bit_length() for line in lines)
    owner = [0] * cells
    units = _find_pairing(
        list(run_lines),
        list(run_continues),
        [0] * len(lines),
        [0] * len(lines),
        owner,
        [0] * (cells + 1),
        [0, 0],
        defender,
        empty,
        empty.bit_count(),
        False,
    )
    if units < 0:
        return None
    pairs: list[list[int]] = [[] for _ in range(units)]
    for cell, slot in enumerate(owner):
        if slot >= 0:
            pairs[slot >> 1].append(cell)
    pairing = {}
    for line in lines:
        if not line & defender:
            pairing[line] = next((a, b) for a, b in pairs if line >> a & 1 and line >> b & 1)
    return pairing


def pairing_for(position: Position, defender_is_x: bool) -> dict[int, tuple[int, int]] | None:
    """A pairing (see :func:`find_pairing`) by which the side ``defender_is_x`` names cannot
    lose ``position``, or None when none is found."""
    x, o = position.x, position.o
    attacker, defender = (o, x) if defender_is_x else (x, o)
    return find_pairing(position.rules.lines, attacker, defender, position.empty)
