"""The plain-Python index and records of :mod:`solver.tablebase.lookup` (the path of one query)
against the kernels that build the table, and the query path's imports."""

from __future__ import annotations

import random
import subprocess
import sys
from math import comb

import numpy as np
import pytest

from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase import lookup as tablelookup
from ttt_solve.solver.tablebase.classes import class_table
from ttt_solve.solver.tablebase.positions import indexes
from ttt_solve.solver.tablebase.record import DECIDED, DRAW, NONE


@pytest.mark.parametrize(
    "rules",
    [Rules(4, 4, 4), Rules(3, 5, 3), pytest.param(Rules(5, 5, 4), marks=pytest.mark.slow)],
    ids=str,
)
def test_a_position_ranked_alone_has_the_kernels_number(rules):
    rng = random.Random(5)
    by_ply: dict[int, list[Position]] = {}
    for _ in range(60):
        position = Position.start(rules)
        for _ in range(rng.randrange(rules.cells)):
            if position.is_terminal:
                break
            position = position.play(rng.choice(position.legal_moves()))
        by_ply.setdefault(position.ply, []).append(position)
    assert len(by_ply) > 5
    for ply, positions in by_ply.items():
        table = class_table(rules, tablelookup.stone_counts(ply)[0])
        index = tablelookup.PlyIndex(rules, ply, table.rep_ranks.tolist())
        alone = [index.index(p.x, p.o) for p in positions]
        xs = np.array([p.x for p in positions])
        os_ = np.array([p.o for p in positions])
        assert alone == indexes(rules, ply, table, xs, os_).tolist()


def test_the_probes_formulas_compiled_give_what_they_give_as_they_are():
    """:func:`lookup.number_by_ranks` and :func:`lookup.family_problem`, run in plain Python
    and compiled (:mod:`solver.tablebase.many`), on positions and on families whose records
    are sound, changed at random, or given no position."""
    from ttt_solve.solver.tablebase import many
    from ttt_solve.solver.tablebase.compiled import binomials, lines_of, symmetries_of
    from ttt_solve.solver.tablebase.index import binomial_table, symmetry_table

    rules = Rules(4, 4, 3)
    rng = random.Random(2)
    through, width = tablelookup.lines_through_table(rules)
    for _ in range(300):
        position = Position.start(rules)
        for _ in range(rng.randrange(rules.cells - 1)):
            if position.is_terminal:
                break
            position = position.play(rng.choice(position.legal_moves()))
        if position.is_terminal:
            continue
        ply = position.ply
        ranks = class_table(rules, tablelookup.stone_counts(ply)[0]).rep_ranks
        per_class = tablelookup.PlyIndex(rules, ply, ranks.tolist()).per_class
        plain = tablelookup.number_by_ranks(
            position.x,
            position.o,
            tablelookup.unguided(per_class, ranks.tolist()),
            rules.full,
            8,
            symmetry_table(rules),
            binomial_table(),
        )
        sets = comb(rules.cells, tablelookup.stone_counts(ply)[0])
        compiled = many.number_by_ranks_cpu(
            position.x,
            position.o,
            many.guided(per_class, ranks, sets),
            rules.full,
            8,
            symmetries_of(rules),
            binomials(),
        )
        assert plain == compiled >= 0
        children = position.empty_count
        records = [rng.choice([0, 1, 2, 3, 4, 5, 2 + children]) for _ in range(1 + children)]
        mover, opponent = (
            (position.x, position.o) if position.x_to_move else (position.o, position.x)
        )
        arguments = (mover, opponent, position.empty, rules.cells, records[0])
        assert tablelookup.family_problem(
            *arguments, records[1:], rules.lines, through, width
        ) == many.family_problem_cpu(
            *arguments, np.array(records[1:]), lines_of(rules), np.array(through), width
        )


def _fault_by_the_rules(position: Position, record: int) -> int:
    """What :func:`lookup.record_fault` says of ``record`` at ``position``, worked out from
    the position's own rules (its illegality, winner and moves), not from the formula."""
    if position.illegality() is not None:
        return tablelookup.NO_GAME
    if position.winner is not None:
        sound = record == DECIDED
    elif not position.empty:
        sound = record == DRAW
    else:
        sound = record not in (NONE, DECIDED) and record <= DECIDED + position.empty_count
        if record == DECIDED + 1:
            sound = any(position.play(cell).winner for cell in position.legal_moves())
    return 0 if sound else tablelookup.FORBIDDEN


def test_a_record_is_checked_against_the_rules_plain_and_compiled():
    """Every 3x3 placement of stones in a game's counts, each with every record a byte of
    3x3 can hold that means something (and one beyond): :func:`lookup.record_fault` plain
    and compiled, each against the rules as :class:`Position` states them."""
    from itertools import product

    from ttt_solve.solver.tablebase import many
    from ttt_solve.solver.tablebase.compiled import lines_of

    rules = Rules(3, 3, 3)
    lines = lines_of(rules)
    faults = set()
    for cells in product(range(3), repeat=rules.cells):
        x = sum(1 << c for c, mark in enumerate(cells) if mark == 1)
        o = sum(1 << c for c, mark in enumerate(cells) if mark == 2)
        position = Position(rules, x, o)
        if not 0 <= x.bit_count() - o.bit_count() <= 1:
            continue
        mover, last = (x, o) if position.x_to_move else (o, x)
        for record in range(DECIDED + rules.cells + 2):
            expected = _fault_by_the_rules(position, record)
            faults.add(expected)
            arguments = (mover, last, position.empty, record)
            assert tablelookup.record_fault(*arguments, rules.lines, True) == expected
            assert many.record_fault_cpu(*arguments, lines, True) == expected
    assert faults == {0, tablelookup.NO_GAME, tablelookup.FORBIDDEN}


def test_the_table_read_path_does_not_import_numpy_or_numba():
    code = (
        "import sys; import ttt_solve.book.table.rows, ttt_solve.solver.tablebase.probe\n"
        "print(sorted(m for m in ('sqlalchemy', 'numpy', 'numba') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stderr
