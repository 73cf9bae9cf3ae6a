"""The training notebook (examples/notebooks/05-q-learning.ipynb), executed by a real kernel:
the learner ends far above a random policy on the evaluation set, and the chart is drawn."""

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
    assert len(outputs(notebook, "image/png")) == 1
