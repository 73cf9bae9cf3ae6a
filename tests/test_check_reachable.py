"""``bench/check_reachable.py``: a table's counts by ply against the exhaustive solver's forward
pass. The oracles are the published counts of 3x3 and 4x4 k=4 (reachable and canonical
positions, games over) and, for a disagreement, the table of another game on the same board."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import bench_script
from ttt_solve.solver.rules import parse_game
from ttt_solve.solver.tablebase.build import build_table

check_reachable = bench_script("check_reachable")

PUBLISHED = {  # reachable, canonical, reachable games over
    "3x3k3": (5_478, 765, 958),
    "4x4k4": (9_722_011, 1_217_977, None),
}


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tables")
    for game in ("3x3k3", "4x4k4", "4x4k3"):
        build_table(parse_game(game), folder / game)
    return folder


def results(out: Path) -> list[dict]:
    return [json.loads(text) for text in out.read_text().splitlines()]


@pytest.mark.parametrize("game", ["3x3k3", "4x4k4"])
def test_every_ply_agrees_with_the_forward_pass(
    tables: Path, tmp_path: Path, game: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    assert check_reachable.main([game, str(tables / game), "--out", str(out)]) == 0
    found = results(out)
    rules = parse_game(game)
    assert [result["ply"] for result in found] == list(range(rules.cells + 1))
    assert all(result["agree"] for result in found)
    reachable, canonical, over = PUBLISHED[game]
    assert sum(result["pass"]["reachable"] for result in found) == reachable
    assert sum(result["pass"]["canonical"] for result in found) == canonical
    if over is not None:
        assert sum(result["pass"]["over_reachable"] for result in found) == over
    printed = capsys.readouterr().out.splitlines()
    assert sum(" agree " in text for text in printed) == rules.cells + 1

    # A rerun finds every ply in --out and makes none.
    assert check_reachable.main([game, str(tables / game), "--out", str(out)]) == 0
    assert len(results(out)) == rules.cells + 1
    assert "already" in capsys.readouterr().out


def test_another_games_counts_disagree_from_the_first_ply_they_differ(
    tables: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """4x4 k=3 and k=4 have the same positions until a game of k=3 can end, at ply 5: its
    positions are the same, but some are over."""
    rules = parse_game("4x4k4")
    other = check_reachable.table_counts(tables / "4x4k3", parse_game("4x4k3"))
    out = tmp_path / "out.jsonl"
    assert check_reachable.check_plies(rules, other, 6, str(tmp_path / "work"), out) == 1
    found = results(out)
    assert [result["agree"] for result in found] == [True] * 5 + [False, False]
    assert found[5]["pass"]["canonical"] == found[5]["table"]["canonical"]
    assert found[5]["pass"]["over"] == 0 < found[5]["table"]["over"]
    printed = capsys.readouterr().out.splitlines()
    assert [text.split(":")[0].strip() for text in printed if "DISAGREE" in text] == ["5", "6"]

    # A rerun skips the plies in --out, and still says they disagree.
    assert check_reachable.check_plies(rules, other, 6, str(tmp_path / "work"), out) == 1


@pytest.mark.parametrize(("memory", "last"), [(3_943_191, 6), (3_943_192, 7)])
def test_the_pass_stops_before_a_ply_over_the_memory_bound(
    tables: Path, tmp_path: Path, memory: int, last: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Making 4x4 k=4's ply 7 holds at most ply 6's 20,122 keys, its 20,122 open ones, twice
    their 201,220 children and ply 7's 50,215 keys: 3,943,192 bytes."""
    out = tmp_path / "out.jsonl"
    game = str(tables / "4x4k4")
    assert check_reachable.main(["4x4k4", game, "--memory", str(memory), "--out", str(out)]) == 0
    assert [result["ply"] for result in results(out)] == list(range(last + 1))
    if last == 6:
        assert "ply 7 might take 3.8 MiB: 50,215 keys from 201,220 children" in (
            capsys.readouterr().out
        )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["4x4k4", "{tables}/4x4k3"], "a table of 4x4 k=3, not of 4x4 k=4"),
        (["4x4k4", "{tables}/4x4k4", "--memory", "lots"], "'lots' is not an amount of memory"),
        (["4x4k4", "{tables}/4x4k4", "--plies", "-1"], "--plies -1"),
    ],
)
def test_bad_input_is_one_line(
    tables: Path, args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [arg.format(tables=tables) for arg in args]
    assert check_reachable.main(argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and said in error
