"""Draw proofs by pairing: a defender's strategy that no search has to check.

A *pairing* for the defender is a set of disjoint pairs of empty cells such that every line
still open to the attacker (no defender stone in it) holds one of the pairs. It proves that
the attacker can never complete a line, whoever is to move: whenever the attacker takes one
cell of a pair, the defender takes the other (and, with no pair touched, plays anywhere), so
each open line keeps a defender-bound cell. This is the Hales-Jewett pairing strategy; set
matching (Uiterwijk and van den Herik) generalises it.

This module looks for the pairings in which each open line owns its pair (two cells that no
other line uses): a bipartite matching of every open line, twice, to distinct empty cells,
found by augmenting paths (Kuhn's algorithm). It is a sufficient test: a pairing in which
overlapping lines share one pair is not found.
"""

from __future__ import annotations

from ttt_solve.solver.position import Position


def find_pairing(
    lines: tuple[int, ...], attacker: int, defender: int, empty: int
) -> dict[int, tuple[int, int]] | None:
    """A pairing that blocks every line of ``lines`` (cell masks) open to the attacker, as
    ``{line: (cell, cell)}`` with all cells distinct and empty, or None when none of the kind
    this module finds exists (see the module docstring).

    ``attacker``, ``defender``, ``empty``: cell masks of the attacker's stones, the
    defender's and the empty cells. A line the attacker has completed has no pair: None.
    """
    del attacker  # a line is open whatever the attacker holds in it
    open_lines = [line for line in lines if not line & defender]
    owner: dict[int, int] = {}  # cell -> index of the line slot it is matched to
    slots = [line & empty for line in open_lines for _ in range(2)]  # two slots per line
    for slot in range(len(slots)):
        if not _augment(slot, slots, owner, set()):
            return None
    cells_of: dict[int, list[int]] = {}
    for cell, slot in owner.items():
        cells_of.setdefault(open_lines[slot // 2], []).append(cell)
    return {line: (min(cells), max(cells)) for line, cells in cells_of.items()}


def _augment(slot: int, slots: list[int], owner: dict[int, int], seen: set[int]) -> bool:
    """Match ``slot`` to a free cell of its line, moving other slots along an augmenting path
    if needed (Kuhn's algorithm); False if no path exists."""
    free = slots[slot]
    while free:
        bit = free & -free
        free ^= bit
        cell = bit.bit_length() - 1
        if cell in seen:
            continue
        seen.add(cell)
        if cell not in owner or _augment(owner[cell], slots, owner, seen):
            owner[cell] = slot
            return True
    return False


def pairing_for(position: Position, defender_is_x: bool) -> dict[int, tuple[int, int]] | None:
    """A pairing (see :func:`find_pairing`) by which the side ``defender_is_x`` names cannot
    lose ``position``, or None when none is found."""
    x, o = position.x, position.o
    attacker, defender = (o, x) if defender_is_x else (x, o)
    return find_pairing(position.rules.lines, attacker, defender, position.empty)
