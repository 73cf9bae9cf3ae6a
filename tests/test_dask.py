"""The Dask engine: the same book as the in-process solver, and a resumable run.

Every test here runs on one 2-worker ``LocalCluster`` started for the module. Skipped when the
dask extra (``pip install -e '.[dask]'``) is not installed.
"""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

pytest.importorskip("distributed", reason="the dask extra is not installed")
pytest.importorskip("pyarrow", reason="the dask extra is not installed")

from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.book.writer import write_game  # noqa: E402
from ttt_solve.cli.main import ttt  # noqa: E402
from ttt_solve.solver.exhaustive.distributed import DaskSolver, owners, split_by_owner  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, memory_limit="2GiB", dashboard_address=":0"
        ) as cluster,
        Client(cluster) as connected,
    ):
        yield connected


def export(db: str, rules: Rules) -> str:
    result = CliRunner().invoke(
        ttt, ["export", "--size", rules.size, "--win", str(rules.k), "--db", db, "--quiet"]
    )
    assert result.exit_code == 0, result.output
    return result.stdout


def write_book(db: str, rules: Rules, solver: DaskSolver) -> None:
    with open_book(db, create=True) as book:
        write_game(book, rules, solver.solve(), method="exhaustive")


def test_keys_are_split_by_owner():
    import numpy as np

    keys = np.arange(1000, dtype=np.uint64) * np.uint64(3)
    parts = split_by_owner(keys, 3)
    assert sum(len(part) for part in parts) == 1000
    for partition, part in enumerate(parts):
        assert (owners(part, 3) == partition).all() and (np.diff(part.astype(np.int64)) > 0).all()
    assert min(len(part) for part in parts) > 250  # the hash spreads neighbouring keys


@pytest.mark.parametrize(
    "rules, partitions, reference",
    [
        (Rules(3, 3, 3), None, "book_small"),  # one partition a ply: the default for small plies
        (Rules(3, 3, 3), 3, "book_small"),
        (Rules(3, 4, 3), 3, "book_small"),
        # The 4x4 boards take minutes on a 2-worker cluster of a 2-core machine: slow tests.
        pytest.param(Rules(4, 4, 3), 2, "book_small", marks=pytest.mark.slow),
        pytest.param(Rules(4, 4, 4), 2, "book_4x4k4", marks=pytest.mark.slow),
    ],
    ids=["3x3-auto", "3x3", "3x4k3", "4x4k3", "4x4k4"],
)
def test_dask_book_is_the_in_process_book(client, tmp_path, request, rules, partitions, reference):
    db = str(tmp_path / "dask.sqlite")
    solver = DaskSolver(rules, str(tmp_path / "work"), client=client, partitions=partitions)
    write_book(db, rules, solver)
    assert export(db, rules) == export(request.getfixturevalue(reference), rules)
    # Every made ply was cut as asked, and the figures add up.
    made = [stats for stats in solver.stats if stats.stage == "keys" and stats.ply > 0]
    assert all(stats.partitions == (partitions or 1) for stats in made)
    assert all(solver.work.facts(s.ply, "keys")["partitions"] == s.partitions for s in made)
    assert sum(s.positions for s in solver.stats if s.stage == "solved") == sum(
        s.positions for s in solver.stats if s.stage == "keys"
    )


class Interrupted(Exception):
    pass


def test_an_interrupted_run_resumes_from_its_parquet_plies(client, tmp_path, book_small):
    rules = Rules(3, 4, 3)
    workdir = str(tmp_path / "work")
    steps = []

    def stop_in_the_backward_pass(done: int, total: int) -> None:
        steps.append(done)
        if done == total - 5:  # before solving ply 5, the plies after it solved
            raise Interrupted

    first = DaskSolver(
        rules, workdir, client=client, partitions=2, progress=stop_in_the_backward_pass
    )
    with pytest.raises(Interrupted):
        first.run()
    done_first = {(stats.ply, stats.stage) for stats in first.stats}
    solved_first = {ply for ply, stage in done_first if stage == "solved"}
    assert len(solved_first) > 1 and min(solved_first) == 6
    kept = {}
    for root, _, files in os.walk(workdir):
        for name in files:
            path = os.path.join(root, name)
            kept[path] = os.stat(path).st_mtime_ns

    second = DaskSolver(rules, workdir, client=client, partitions=2)
    db = str(tmp_path / "dask.sqlite")
    write_book(db, rules, second)
    done_second = {(stats.ply, stats.stage) for stats in second.stats}
    assert done_first.isdisjoint(done_second)  # nothing finished is made again
    assert {stage for _, stage in done_second} == {"solved"}
    assert all(
        os.stat(path).st_mtime_ns == mtime
        for path, mtime in kept.items()
        if path.endswith(".parquet")
    )
    assert export(db, rules) == export(book_small, rules)


def test_a_work_directory_of_another_game_is_emptied(client, tmp_path):
    workdir = str(tmp_path / "work")
    DaskSolver(Rules(3, 3, 3), workdir, client=client).run()
    solver = DaskSolver(Rules(3, 4, 3), workdir, client=client)
    solver.run()
    assert solver.stats[0].ply == 0  # made afresh, not taken from 3x3


def test_the_cli_runs_the_dask_engine(tmp_path, book_small):
    db = str(tmp_path / "cli.sqlite")
    workdir = str(tmp_path / "work")
    result = CliRunner().invoke(
        ttt,
        ["solve", "--size", "3", "--win", "3", "--db", db, "--engine", "dask"]
        + ["--workdir", workdir, "--quiet"],
    )
    assert result.exit_code == 0, result.output
    assert export(db, Rules(3, 3, 3)) == export(book_small, Rules(3, 3, 3))
    assert not os.path.exists(workdir)  # removed once the book holds the game
