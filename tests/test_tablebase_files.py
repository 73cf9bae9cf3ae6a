"""The tablebase's files, build driver and look-ups: resumable, checksummed, exact."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.build import (
    ESTIMATED_RATE,
    GPU_ESTIMATED_RATE,
    BuildProgress,
    build_table,
    describe_plan,
    plan_build,
)
from ttt_solve.solver.tablebase.files import (
    TableDiskFullError,
    TableFileError,
    TableHeader,
    ply_path,
    read_header,
    write_file,
)
from ttt_solve.solver.tablebase.probe import open_tablebase
from ttt_solve.solver.tablebase.step import solve_in_memory
from ttt_solve.solver.value import Value, move_value

TTT = [sys.executable, "-c", "from ttt_solve.cli.main import main; main()"]


def table_bytes(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_a_build_in_parts_holds_the_records_of_the_ply_step(tmp_path: Path) -> None:
    rules = Rules(3, 4, 3)
    summary = build_table(rules, tmp_path / "t", part_records=1000)
    assert sorted(p.name for p in (tmp_path / "t").iterdir())[-1] == "table.json"
    for ply, (records, counts) in enumerate(solve_in_memory(rules)):
        path = ply_path(tmp_path / "t", ply)
        header = read_header(path, rules, ply)
        assert path.read_bytes()[header.records_at :] == records.tobytes()
        assert (summary.counts[ply].counts == counts.counts).all()
    assert summary.root_record == 9  # X wins in 7


@pytest.mark.parametrize("game", [(3, 3, 3), (4, 4, 3)])
def test_look_ups_agree_with_the_exhaustive_solver(
    tmp_path: Path, game: tuple[int, int, int]
) -> None:
    """Value and remoteness of sampled canonical positions, and every move's value, from the
    files, against the exhaustive solver's scores and its scores of the children."""
    rules = Rules(*game)
    build_table(rules, tmp_path / "t")
    table = open_tablebase(tmp_path / "t", rules)
    table.verify()
    solved = {t.ply: t for t in ExhaustiveSolver(rules).solve()}
    scores = {int(k): int(s) for t in solved.values() for k, s in zip(t.keys, t.scores)}
    rng = random.Random(7)
    keys = sorted(scores)
    for key in rng.sample(keys, min(400, len(keys))):
        position = Position.from_key(rules, key)
        value, moves = table.probe_moves(position)
        assert value == Value.from_score(scores[key], position.empty_count)
        for cell, move in moves.items():
            child = position.play(cell)
            expected = Value.from_score(scores[child.canonical_key], child.empty_count)
            assert move == move_value(expected)
        assert len(moves) == (0 if position.is_terminal else position.empty_count)


def test_an_altered_file_is_caught_by_its_checksum_and_made_again(tmp_path: Path) -> None:
    rules = Rules(3, 3, 3)
    build_table(rules, tmp_path / "t")
    sound = table_bytes(tmp_path / "t")
    path = ply_path(tmp_path / "t", 5)
    data = bytearray(path.read_bytes())
    data[-3] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(TableFileError, match="ply-05.tb: its checksum does not match") as caught:
        open_tablebase(tmp_path / "t").verify()
    assert "\n" not in str(caught.value)
    said: list[str] = []
    build_table(rules, tmp_path / "t", note=said.append)  # a rerun makes it again
    assert said == [
        "remaking ply-05.tb: its checksum does not match: the file was altered or damaged"
    ]
    assert table_bytes(tmp_path / "t") == sound


def test_a_truncated_file_is_refused_on_opening(tmp_path: Path) -> None:
    rules = Rules(3, 3, 3)
    build_table(rules, tmp_path / "t")
    path = ply_path(tmp_path / "t", 4)
    path.write_bytes(path.read_bytes()[:-10])
    table = open_tablebase(tmp_path / "t")  # opening reads the manifest only
    with pytest.raises(TableFileError, match="ply-04.tb: .* truncated or grown"):
        table.probe(Position.from_moves(rules, ["a1", "b2", "c3", "a3"]))


def test_a_full_disk_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    """The temporary file is /dev/full (through a link): a real ENOSPC on write."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    path = tmp_path / "ply-03.tb"
    os.symlink("/dev/full", tmp_path / "ply-03.tb.tmp")
    header = TableHeader(Rules(3, 3, 3), 3, 1, 1, 0, 1, 0)
    with pytest.raises(TableDiskFullError, match="ply-03.tb: the disk is full") as caught:
        write_file(path, header, [b"\1" * (1 << 20)])
    assert "\n" not in str(caught.value)
    assert not path.exists() and not os.path.lexists(tmp_path / "ply-03.tb.tmp")


def test_5x5_k4_is_planned_within_40_gb() -> None:
    plan = plan_build(Rules(5, 5, 4), Path("/nonexistent/5x5"))
    on_disk = sum(plan.records) + 0  # the records alone; the index adds under 0.1 %
    assert 1.9e10 < on_disk < 2.2e10
    assert plan.disk_needed < 40e9
    assert max(plan.records) * 2 < 8 * 2**30  # two widest plies: well within 24 GiB


def test_the_estimate_is_at_the_rate_of_the_device_that_builds(tmp_path: Path) -> None:
    rules = Rules(5, 5, 4)
    on_cpu = plan_build(rules, tmp_path, "cpu")
    on_gpu = plan_build(rules, tmp_path, "gpu")
    assert on_cpu.seconds == pytest.approx(on_cpu.total_work / ESTIMATED_RATE)
    assert on_gpu.seconds == pytest.approx(on_gpu.total_work / GPU_ESTIMATED_RATE)
    assert f"{GPU_ESTIMATED_RATE:.1e} weighted records/s" in describe_plan(on_gpu)
    with pytest.raises(ValueError, match="device .tpu. is not one of cpu, gpu, auto"):
        plan_build(rules, tmp_path, "tpu")


KILLED_BUILD = """
import sys, time
from ttt_solve.solver.tablebase.build import build_table
from ttt_solve.solver.rules import Rules

def hook(ply, part):  # the test's hook: say each part written, and pause a little
    print(ply, part, flush=True)
    time.sleep(0.01)

build_table(Rules(4, 4, 4), sys.argv[1], part_records=20000, on_part=hook)
"""


@pytest.mark.slow
def test_kill_9_then_rerun_gives_the_same_bytes(tmp_path: Path) -> None:
    """Five builds, each killed (SIGKILL) at random moments: after a random number of parts
    and a random delay, so within a part's work, its write or the joining of a ply's parts;
    each is rerun until it finishes, and must leave the bytes of an uninterrupted build."""
    whole = tmp_path / "whole"
    subprocess.run(
        [sys.executable, "-c", KILLED_BUILD, str(whole)], check=True, stdout=subprocess.DEVNULL
    )
    expected = table_bytes(whole)
    rng = random.Random(2026)
    for trial in range(5):
        folder = tmp_path / f"killed-{trial}"
        kills = 0
        while True:
            child = subprocess.Popen(
                [sys.executable, "-c", KILLED_BUILD, str(folder)], stdout=subprocess.PIPE, text=True
            )
            assert child.stdout is not None
            wanted = rng.randint(1, 20)
            parts = sum(1 for _, line in zip(range(wanted), child.stdout))
            if parts == wanted and kills < 4:
                time.sleep(rng.uniform(0.0, 0.03))
                child.send_signal(signal.SIGKILL)
                kills += 1
            child.communicate()
            if child.returncode == 0:
                break
            assert child.returncode == -signal.SIGKILL
        assert kills >= 1
        assert table_bytes(folder) == expected, f"trial {trial} after {kills} kills"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["9x9k4"], "9x9 k=4: 81 cells; a table is made for boards of at most 25 cells"),
        (["3x3k3", "--memory", "lots"], "'lots' is not an amount of memory"),
        (["4x4k4", "--memory", "100k"], "a build needs at least"),
        (["3x3k9"], "k"),
    ],
)
def test_the_build_command_refuses_in_one_line(
    tmp_path: Path, arguments: list[str], message: str
) -> None:
    game, *options = arguments
    run = subprocess.run(
        [*TTT, "table", "build", game, str(tmp_path / "t"), *options],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and message in run.stderr, run.stderr
    assert not (tmp_path / "t").exists()


def test_the_whole_builds_eta_waits_for_a_measured_share_of_the_work() -> None:
    early = BuildProgress(24, 10, 10, 10, 100_000, 0, 2.0)
    assert early.eta() is None  # 0.01 % made: its rate says nothing of the wide plies
    later = BuildProgress(20, 500, 1000, 5_000, 100_000, 0, 10.0)
    assert later.eta() == pytest.approx(95_000 * 10.0 / 5_000)
    resumed = BuildProgress(20, 500, 1000, 50_000, 100_000, 49_500, 10.0)
    assert resumed.eta() is None  # what this run made is still under the share


def test_a_build_refused_for_memory_says_amounts_that_show(tmp_path: Path) -> None:
    # 1 KiB allowed, a 3x3 build needing a few KiB: no "0.00 GiB" on either side.
    run = subprocess.run(
        [*TTT, "table", "build", "3x3k3", str(tmp_path / "t"), "--memory", "1k"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert "0.00" not in run.stderr and "1.0 KiB was allowed" in run.stderr, run.stderr
