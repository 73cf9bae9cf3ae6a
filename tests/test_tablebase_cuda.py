"""The GPU ply step against the CPU's, byte for byte, on Numba's CUDA simulator (no GPU)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.gpu import GpuUnavailableError, back_up_range_on, gpu_available
from ttt_solve.solver.tablebase.step import class_tables, ply_step

TWINS = """
import numpy as np
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.step import class_tables, ply_step, solve_in_memory
from ttt_solve.solver.tablebase.gpu import back_up_range_on
for game in [(3, 3, 3), (2, 4, 2), (3, 3, 2), (2, 3, 3)]:
    rules = Rules(*game)
    plies = solve_in_memory(rules)  # the CPU kernel
    cache = {}
    for ply in range(rules.cells, -1, -1):
        step = ply_step(rules, ply, *class_tables(rules, ply, cache))
        child = plies[ply + 1][0] if ply < rules.cells else np.zeros(0, dtype=np.uint8)
        size = len(plies[ply][0])
        parts = [back_up_range_on("gpu", step, first, min(size, first + 7), child)
                 for first in range(0, size, 7)]  # parts of a ply share its GPU copies
        records = np.concatenate([part[0] for part in parts]) if parts else np.zeros(0, np.uint8)
        counts = sum((part[1].counts for part in parts), np.zeros((3, 2, 2), np.int64))
        assert records.tobytes() == plies[ply][0].tobytes(), (game, ply)
        assert (counts == plies[ply][1].counts).all(), (game, ply)
    print(rules.name, "same bytes")
"""


@pytest.mark.slow
def test_the_gpu_kernel_gives_the_cpu_kernels_bytes_in_the_simulator() -> None:
    environment = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    run = subprocess.run(
        [sys.executable, "-c", TWINS], env=environment, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count("same bytes") == 4


def test_asking_for_an_absent_gpu_is_one_clear_error() -> None:
    if gpu_available():
        pytest.skip("this machine has a CUDA device")
    rules = Rules(3, 3, 3)
    step = ply_step(rules, 9, *class_tables(rules, 9, {}))
    with pytest.raises(GpuUnavailableError, match="no CUDA device") as caught:
        back_up_range_on("gpu", step, 0, 1, np.zeros(0, dtype=np.uint8))
    assert "\n" not in str(caught.value)
    records, _ = back_up_range_on("auto", step, 0, 4, np.zeros(0, dtype=np.uint8))
    assert len(records) == 4  # auto falls back to the CPU
