"""The training notebook (examples/notebooks/05-q-learning.ipynb), executed by a real kernel:
the learner ends far above a random policy on the evaluation set and on the ladder, and both
charts are drawn."""

from __future__ import annotations

import re

import pytest

from tests.test_notebooks import NOTEBOOKS, outputs, run

pytest.importorskip("gymnasium", reason="pip install -e '.[rl]'")
pytest.importorskip("pettingzoo", reason="pip install -e '.[rl]'")


def test_q_learning_notebook(tmp_path):
    (path,) = [p for p in NOTEBOOKS if p.name == "05-q-learning.ipynb"]
    notebook = run(path, tmp_path)
    texts = outputs(notebook, "text/plain")
    (score,) = [t for t in texts if t.startswith("<EvalReport policy")]
    best, kept, positions = map(int, re.findall(r"\d+", score)[:3])
    assert positions == 431
    # a uniformly random policy plays a best move in about 36% of the set's positions
    assert best / positions > 0.6 and kept >= best
    # its ladder ratings, read back from the kernel: five checkpoints, each far above random (0)
    # and the weakest trembling rung (perfect:error=0.5 rates near 200 on 3x3)
    (ratings,) = [t for t in texts if t.startswith("{") and " to " in t]
    means = [int(m) for m in re.findall(r"'(-?\d+) \[", ratings)]
    assert len(means) == 5 and min(means) > 400
    assert len(outputs(notebook, "image/png")) == 2
