"""The training notebook (examples/notebooks/05-q-learning.ipynb), executed by a real kernel:
the learner ends far above a random policy on the evaluation set and on the ladder, and both
charts are drawn."""

from __future__ import annotations

import re

import pytest

from tests.test_notebooks import NOTEBOOKS, outputs, run

pytest.importorskip("gymnasium", reason="pip install -e '.[rl]'")
pytest.importorskip("pettingzoo", reason="pip install -e '.[rl]'")


@pytest.mark.slow
def test_q_learning_notebook(tmp_path):
    (path,) = [p for p in NOTEBOOKS if p.name == "05-q-learning.ipynb"]
    notebook = run(path, tmp_path)
    texts = outputs(notebook, "text/plain")
    (score,) = [t for t in texts if t.startswith("<EvalReport of ")]
    found = re.search(r"best move in (\d+), value kept in (\d+) of (\d+) positions", score)
    assert found, score
    best, kept, positions = map(int, found.groups())
    assert positions == 431
    # a uniformly random policy plays a best move in about 36% of the set's positions
    assert best / positions > 0.6 and kept >= best
    # its ladder ratings, read back from the kernel: five checkpoints, each far above random (0)
    # and the weakest trembling rung (perfect:error=0.5 rates near 200 on 3x3)
    (ratings,) = [t for t in texts if t.startswith("{") and " to " in t]
    means = [int(m) for m in re.findall(r"'(-?\d+) \[", ratings)]
    assert len(means) == 5 and min(means) > 400
    assert len(outputs(notebook, "image/png")) == 2


@pytest.mark.slow
def test_benchmark_checkpoints_notebook(tmp_path):
    """The learner of notebook 06 sits the 4x4 k=4 benchmark untrained (it plays the first
    legal action) and at four checkpoints, and ends far above ``random`` (24.7% of decisive
    positions), keeping the value in nearly every decisive position near the end."""
    (path,) = [p for p in NOTEBOOKS if p.name == "06-benchmark-checkpoints.ipynb"]
    notebook = run(path, tmp_path)
    texts = outputs(notebook, "text/plain")
    (last,) = [t for t in texts if t.startswith("<BenchmarkReport policy on 4x4 k=4")]
    decisive = float(re.search(r"decisive: value kept ([\d.]+)%", last).group(1))
    assert decisive > 50
    html = outputs(notebook, "text/html")
    assert any("<svg" in text for text in html)  # the report's heatmaps
    printed = [o for cell in notebook.cells for o in cell.get("outputs", [])]
    (grid,) = [o["text"] for o in printed if o.get("name") == "stdout"]
    rows = [row.split() for row in grid.splitlines()]
    assert rows[0] == ["games", "opening", "middle", "end"] and len(rows) == 2 + 5
    untrained, trained = rows[2], rows[-1]
    assert untrained[0] == "0" and len(trained) == 10
    near = [float(trained[i].rstrip("%")) for i in (1, 4, 7)]
    assert min(near) >= 95  # it takes its wins and blocks the opponent's
    assert len(outputs(notebook, "image/png")) == 1
