"""Checking a game stored as a tablebase: its files' digests, then its values against their
children, for ``ttt verify``.

On boards whose rows :mod:`book.tablerows` streams (up to 20 cells) ``ttt verify`` checks
every position as it does blocks (:func:`book.verify.verify_game`); the digests are checked
first here. On larger boards (5x5) a seeded sample of each ply is checked instead: the
positions of seeded random games, each position's value the best of its children's, and a
position that is over holding the value its end gives.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from ttt_solve.book.table import Table
from ttt_solve.book.tablefile import TableError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome, Value
from ttt_solve.solver.verify import Problem


def digest_problems(folder: Path, rules: Rules) -> list[Problem]:
    """The table's files checked against their digests: the first file that fails, as a
    problem of the whole table (key -1), or none."""
    try:
        Table(folder, rules, verify=True).close()
    except TableError as error:
        return [Problem(-1, -1, str(error))]
    return []


def sampled_positions(rules: Rules, per_ply: int, seed: int) -> dict[int, list[Position]]:
    """About ``per_ply`` positions of each ply, from seeded random games (fewer where a ply
    holds fewer or the games end before it)."""
    rng = random.Random(seed)
    found: dict[int, set[Position]] = {ply: set() for ply in range(rules.cells + 1)}
    for _ in range(per_ply * 4):
        position = Position.start(rules)
        while True:
            found[position.ply].add(position)
            if position.is_terminal:
                break
            position = position.play(rng.choice(position.legal_moves()))
    return {ply: sorted(held, key=lambda p: p.key)[:per_ply] for ply, held in found.items()}


def sample_problems(table: Table, per_ply: int, seed: int) -> Iterator[Problem]:
    """Every sampled position whose value is not the best of its children's (or, once the
    game is over, not the value its end gives)."""
    rules = table.rules
    for ply, positions in sampled_positions(rules, per_ply, seed).items():
        for position in positions:
            value, moves = table.analyse(position)
            if position.is_terminal:
                outcome = Outcome.LOSS if position.winner else Outcome.DRAW
                expected = Value(outcome, 0)
            else:
                expected = max(moves.values(), key=lambda move: move.score)
            if value != expected:
                yield Problem(
                    ply,
                    position.key,
                    f"the table says {value}, its children say {expected}",
                )
