"""The opening-book builder reproduces the exhaustive solver's rows for the plies it covers."""

from __future__ import annotations

import numpy as np
import pytest

from ttt_solve.solver.errors import InvalidRulesError
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.plytable import PlyTable
from ttt_solve.solver.position import Position
from ttt_solve.solver.prover.opening import OpeningBookBuilder, check_row, check_rows
from ttt_solve.solver.prover.search import Prover
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import WIN_SCORE, best_child_score, move_score
from ttt_solve.solver.verify import prover_problems


def exhaustive_plies(rules: Rules, depth: int) -> dict[int, PlyTable]:
    return {table.ply: table for table in ExhaustiveSolver(rules).solve() if table.ply <= depth}


def assert_same_tables(book: list[PlyTable], truth: dict[int, PlyTable]) -> None:
    assert [table.ply for table in book] == sorted(truth, reverse=True)
    for table in book:
        expected = truth[table.ply]
        for field in ("keys", "scores", "best_moves", "images"):
            got, want = getattr(table, field), getattr(expected, field)
            assert got.dtype == want.dtype, (table.ply, field)
            assert np.array_equal(got, want), (table.ply, field)


@pytest.mark.parametrize(
    "shape,depth", [((3, 3, 3), 2), ((4, 4, 4), 2), ((3, 3, 3), 9), ((3, 4, 3), 3), ((4, 4, 3), 3)]
)
def test_book_rows_equal_the_exhaustive_rows(shape, depth):
    rules = Rules(*shape)
    book = list(OpeningBookBuilder(rules, depth).solve())
    assert_same_tables(book, exhaustive_plies(rules, depth))


def test_depth_past_the_last_ply_stops_at_the_board():
    rules = Rules(2, 2, 2)  # X wins at ply 3 at the latest; nothing beyond ply 3 exists
    book = list(OpeningBookBuilder(rules, 10).solve())
    assert_same_tables(book, exhaustive_plies(rules, 10))


def test_progress_reports_every_position():
    rules = Rules(3, 3, 3)
    calls = []
    tables = list(OpeningBookBuilder(rules, 3, progress=lambda d, t: calls.append((d, t))).solve())
    total = sum(len(table.keys) for table in tables)
    assert total == 1 + 3 + 12 + 38
    assert calls[0] == (0, total) and calls[-1] == (total, total)
    assert all(a[0] <= b[0] for a, b in zip(calls, calls[1:]))


def test_shared_prover_and_bad_arguments():
    rules = Rules(3, 3, 3)
    prover = Prover(rules)
    list(OpeningBookBuilder(rules, 1, prover=prover).solve())
    assert prover.nodes > 0
    with pytest.raises(ValueError):
        OpeningBookBuilder(rules, 1, prover=Prover(rules, weak=True))
    with pytest.raises(ValueError):
        OpeningBookBuilder(rules, -1)
    with pytest.raises(InvalidRulesError, match="9x9"):
        OpeningBookBuilder(Rules(9, 9, 4), 1)


def test_best_child_score_inverts_move_score():
    parents = [0] + [WIN_SCORE - r for r in range(1, 20)] + [-(WIN_SCORE - r) for r in range(1, 20)]
    for score in parents:
        assert move_score(best_child_score(score)) == score


class Interrupt(Exception):
    pass


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_interrupted_build_resumes_from_its_work_directory(tmp_path, monkeypatch, jobs):
    import ttt_solve.solver.prover.opening

    monkeypatch.setattr(ttt_solve.solver.prover.opening, "ROWS_PER_CHUNK", 8)
    rules, depth = Rules(4, 4, 3), 3
    workdir = str(tmp_path / "work")
    deepest = len(OpeningBookBuilder(rules, depth).enumerate_plies()[depth][0])
    assert deepest > 40

    def stop_at_row_30(done: int, total: int) -> None:
        if done >= 30 and done < deepest:
            raise Interrupt

    interrupted = OpeningBookBuilder(
        rules, depth, progress=stop_at_row_30, workdir=workdir, jobs=jobs
    )
    with pytest.raises(Interrupt):
        list(interrupted.solve())
    assert (interrupted.worker_nodes > 0) == (jobs > 1)
    kept = {p.name for p in (tmp_path / "work").iterdir() if p.name.endswith("-scores.npy")}
    if jobs == 1:  # chunks in order, kept as each one ends
        assert kept == {f"deepest-rows-{start}-{start + 8}-scores.npy" for start in (0, 8, 16)}
    else:  # chunks come back in any order; the fourth one reached 32 rows
        assert len(kept) == 4

    # the resumed build proves only the rows after the kept chunks, and its rows are the truth
    prover = Prover(rules)
    resumed = OpeningBookBuilder(rules, depth, prover=prover, workdir=workdir)
    assert_same_tables(list(resumed.solve()), exhaustive_plies(rules, depth))
    fresh = OpeningBookBuilder(rules, depth, prover=Prover(rules))
    list(fresh.solve())
    assert 0 < resumed.nodes < fresh.nodes

    # a different depth is a different build: the directory starts afresh
    OpeningBookBuilder(rules, 2, workdir=workdir)
    assert not any(p.name.endswith("-scores.npy") for p in (tmp_path / "work").iterdir())


def test_workers_prove_the_same_book(monkeypatch):
    import ttt_solve.solver.prover.opening

    monkeypatch.setattr(ttt_solve.solver.prover.opening, "ROWS_PER_CHUNK", 16)
    rules, depth = Rules(4, 4, 4), 3
    calls = []
    builder = OpeningBookBuilder(
        rules, depth, jobs=2, progress=lambda done, total: calls.append(done)
    )
    assert_same_tables(list(builder.solve()), exhaustive_plies(rules, depth))
    assert builder.worker_nodes > 0 and builder.nodes >= builder.worker_nodes
    assert calls == sorted(calls) and calls[-1] == sum(
        len(keys) for keys, _ in builder.enumerate_plies()
    )
    with pytest.raises(ValueError, match="jobs"):
        OpeningBookBuilder(rules, depth, jobs=0)


@pytest.mark.slow
def test_a_book_of_one_position_races_the_two_exact_searches(monkeypatch):
    """A depth-0 book with two processes, its empty board not proved in the builder's own
    process in time, is proved by both exact searches at once in two workers; the first
    answer is kept, and it is the book one process makes."""
    import ttt_solve.solver.prover.opening

    rules = Rules(4, 7, 4)  # a draw; the empty board takes tens of thousands of nodes
    alone = OpeningBookBuilder(rules, 0)
    one_process = list(alone.solve())
    assert alone.processes == 1 and alone.worker_nodes == 0
    assert one_process[0].scores.tolist() == [0]

    monkeypatch.setattr(ttt_solve.solver.prover.opening, "RACE_AFTER_SECONDS", -1.0)  # out of time
    raced = OpeningBookBuilder(rules, 0, jobs=2)
    assert_same_tables(list(raced.solve()), {0: one_process[0]})
    assert raced.processes == 2 and raced.worker_nodes > 0


@pytest.mark.parametrize("shape", [(4, 4, 4), (4, 4, 3)])
def test_a_book_of_one_quick_position_stays_in_one_process(shape):
    """Starting two workers costs more than proving a small board's empty board."""
    rules = Rules(*shape)
    builder = OpeningBookBuilder(rules, 0, jobs=2)
    assert_same_tables(list(builder.solve()), exhaustive_plies(rules, 0))
    assert builder.processes == 1 and builder.worker_nodes == 0


@pytest.mark.parametrize(
    "shape,every,outcomes_seen",
    [
        pytest.param((4, 4, 3), 17, {1, -1}, marks=pytest.mark.slow),
        ((3, 3, 3), 3, {1, 0, -1}),
    ],
)
def test_check_row_passes_the_truth_and_nothing_else(shape, every, outcomes_seen):
    """Held against the exhaustive solver's rows: the probes pass each open position's score
    and best moves, and catch any other possible score and a best-move set one cell off."""
    rules = Rules(*shape)
    prover = Prover(rules)
    checked, outcomes = 0, set()
    for table in exhaustive_plies(rules, 5).values():
        for key, score, best in list(zip(*(t.tolist() for t in table[1:4])))[::every]:
            position = Position.from_key(rules, key)
            if position.winner is not None:
                continue
            assert check_row(prover, position, score, best) is None, position
            outcomes.add((score > 0) - (score < 0))
            empties = position.empty_count
            possible = {0} | {sign * (WIN_SCORE - r) for sign in (1, -1) for r in range(empties)}
            for wrong in sorted(possible - {score}):
                assert check_row(prover, position, wrong, best) == "score differs from the prover's"
            for cell in range(rules.cells):
                message = check_row(prover, position, score, best ^ (1 << cell))
                assert message == "best moves differ from the prover's", (position, cell)
            checked += 1
    assert checked > 40 and outcomes == outcomes_seen


def test_check_rows_in_worker_processes_answer_as_one_process(monkeypatch):
    import ttt_solve.solver.prover.opening

    monkeypatch.setattr(ttt_solve.solver.prover.opening, "ROWS_PER_CHUNK", 2)
    pools = []
    make_pool = ttt_solve.solver.prover.opening._worker_pool
    monkeypatch.setattr(
        ttt_solve.solver.prover.opening, "_worker_pool", lambda *a: pools.append(a) or make_pool(*a)
    )
    rules = Rules(4, 4, 3)
    table = exhaustive_plies(rules, 3)[3]
    rows = [
        (key, score, best)
        for key, score, best in zip(*(t.tolist() for t in table[1:4]))
        if Position.from_key(rules, key).winner is None
    ][:12]
    damaged = [(key, -score if score else 1000, best) for key, score, best in rows[:3]]
    damaged += [(key, score, best ^ 1) for key, score, best in rows[3:6]]
    calls = []

    def progress(done: int, total: int) -> None:
        calls.append((done, total))

    in_workers = list(check_rows(rules, rows + damaged, 2, progress))
    assert pools == [(rules, 2)]
    assert in_workers == list(check_rows(rules, rows + damaged))
    assert len(pools) == 1  # one process: no pool
    assert in_workers[:12] == [None] * 12
    assert in_workers[12:15] == ["score differs from the prover's"] * 3
    assert in_workers[15:] == ["best moves differ from the prover's"] * 3
    assert calls[0] == (0, 18) and calls[-1] == (18, 18)

    # as the checkers ask: the count reaches the end though nothing reads past the last row
    calls.clear()
    found = prover_problems(3, rows + damaged, lambda r: check_rows(rules, r, 1, progress))
    assert [problem.message for problem in found] == in_workers[12:]
    assert calls[-1] == (18, 18)
