"""The plain-Python index and records of :mod:`solver.tablebase.lookup` (the path of one query)
against the kernels that build the table, and the query path's imports."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest

from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase import lookup as tablelookup
from ttt_solve.solver.tablebase import record
from ttt_solve.solver.tablebase.classes import class_table
from ttt_solve.solver.tablebase.compiled import binomials, rank_set_cpu
from ttt_solve.solver.tablebase.positions import indexes


@pytest.mark.parametrize("rules", [Rules(4, 4, 4), Rules(3, 5, 3), Rules(5, 5, 4)], ids=str)
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


def test_ranks_and_records_read_as_the_kernels_write_them():
    binom = binomials()
    for stones in [0, 1, 0b1011, 0b100000000001, 0b111111000000]:
        assert tablelookup.rank_of(stones) == rank_set_cpu(stones, binom)
    assert (tablelookup.NONE, tablelookup.DRAW, tablelookup.DECIDED) == (
        record.NONE,
        record.DRAW,
        record.DECIDED,
    )
    for score in [0, 1024 - 3, -(1024 - 4), -1024]:
        assert tablelookup.score_of_record(record.record_of(score)) == score


def test_the_table_read_path_does_not_import_numpy_or_numba():
    code = (
        "import sys; import ttt_solve.book.tablerows, ttt_solve.solver.tablebase.probe\n"
        "print(sorted(m for m in ('sqlalchemy', 'numpy', 'numba') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stderr
