"""bench/bench_stretch.py: a split proof that resumes from its state file, and that concludes
only from every canonical first move, not from the ones ``--moves`` named."""

from __future__ import annotations

import json
import os
import subprocess
import sys

BENCH = os.path.join(os.path.dirname(os.path.dirname(__file__)), "bench", "bench_stretch.py")


def stretch(*arguments: str) -> str:
    run = subprocess.run(
        [sys.executable, BENCH, "--board", "7,7,5", "--table-bits", "18", *arguments],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_some_moves_then_the_rest_from_the_state_file(tmp_path):
    state = str(tmp_path / "775.json")
    out = stretch("--moves", "a1", "d4", "--state", state)
    assert "(7,7,5): not reached (published draw); steps proved 2 of 10" in out
    assert sorted(json.load(open(state))["proved"]) == ["a1", "d4"]
    out = stretch("--state", state)
    assert "(7,7,5): draw (published draw); steps proved 10 of 10" in out
    proved = json.load(open(state))["proved"]
    assert len(proved) == 10 and {record["found"] for record in proved.values()} == {"O holds"}


def test_progress_lines_do_not_change_the_search(tmp_path):
    """A probe reports its progress without stopping its search: its nodes are those of the
    same probe reporting never (a search cut into slices starts again from the root)."""
    nodes = {}
    for every in ("10000", "0.001"):
        state = str(tmp_path / f"775-{every}.json")
        stretch("--report-every", every, "--state", state)
        proved = json.load(open(state))["proved"]
        nodes[every] = {move: record["nodes"] for move, record in proved.items()}
    assert len(nodes["10000"]) == 10
    assert nodes["0.001"] == nodes["10000"]
