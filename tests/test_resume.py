"""A solve with a work directory resumes after an interruption and gives the same tables."""

from __future__ import annotations

import numpy as np
import pytest

import ttt_solve.solver.exhaustive.plies
import ttt_solve.solver.exhaustive.solve
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.rules import Rules

RULES = Rules(3, 4, 3)


def tables(solver):
    return {t.ply: t for t in solver.solve()}


def test_interrupted_solve_resumes_without_redoing_finished_plies(tmp_path, monkeypatch):
    reference = tables(ExhaustiveSolver(RULES))
    workdir = str(tmp_path / "work")
    solver = ExhaustiveSolver(RULES, workdir=workdir)
    plies = solver.solve()
    for _ in range(4):  # the last four plies are finished, then the run dies
        next(plies)
    plies.close()

    solved = []
    original = ttt_solve.solver.exhaustive.solve.back_up_ply

    def counting(arrays, ply, *args):
        solved.append(ply)
        return original(arrays, ply, *args)

    monkeypatch.setattr(ttt_solve.solver.exhaustive.solve, "back_up_ply", counting)
    monkeypatch.setattr(
        ttt_solve.solver.exhaustive.plies,
        "won_by_last_mover",
        lambda *a: pytest.fail("the forward pass ran again"),
    )

    resumed = tables(ExhaustiveSolver(RULES, workdir=workdir))
    assert sorted(solved) == list(range(len(reference) - 4))
    assert resumed.keys() == reference.keys()
    for ply, table in reference.items():
        for a, b in zip(table, resumed[ply]):
            assert np.array_equal(np.asarray(a), np.asarray(b))


def test_a_work_directory_of_another_game_is_not_reused(tmp_path):
    workdir = str(tmp_path / "work")
    list(ExhaustiveSolver(Rules(3, 3, 3), workdir=workdir).solve())
    result = {t.ply: t for t in ExhaustiveSolver(Rules(3, 3, 2), workdir=workdir).solve()}
    assert sum(len(t.keys) for t in result.values()) == sum(
        len(t.keys) for t in ExhaustiveSolver(Rules(3, 3, 2)).solve()
    )
