"""The example notebooks, executed by a real Jupyter kernel (nbclient and ipykernel, the
notebook extra), their outputs checked: boards drawn as SVG, and an agent's accuracy in the
notebook equal to what ``ttt audit`` prints for the same function as a ``py:`` plug-in."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "examples" / "notebooks").glob("*.ipynb"))
SVG = "{http://www.w3.org/2000/svg}"
EXTRA = "pip install -e '.[notebook]'"


def run(path: Path, folder: Path):  # noqa: ANN201 - an nbformat notebook
    nbformat = pytest.importorskip("nbformat", reason=EXTRA)
    nbclient = pytest.importorskip("nbclient", reason=EXTRA)
    pytest.importorskip("ipykernel", reason=EXTRA)
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute()  # a cell that raises fails the test, with the cell and its traceback
    assert not values_cited_but_not_shown(notebook), path.name
    return notebook


def outputs(notebook, mime: str) -> list[str]:  # noqa: ANN001
    return [
        output["data"][mime]
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        if mime in output.get("data", {})
    ]


def boards(text: str) -> list[ET.Element]:
    """The board pictures in a display's text (SVG or HTML holding SVG)."""
    found = []
    start = text.find("<svg")
    while start >= 0:
        end = text.find("</svg>", start) + len("</svg>")
        element = ET.fromstring(text[start:end])
        if element.get("class") == "board":
            found.append(element)
        start = text.find("<svg", end)
    return found


def cells_of(board: ET.Element) -> list[ET.Element]:
    return [g for g in board.iter(f"{SVG}g") if "cell" in (g.get("class") or "").split()]


def value_labels(board: ET.Element) -> dict[str, str]:
    """The value written in each cell of a board that shows them (``W3``, ``D8``), by cell."""
    return {
        g.get("data-cell"): text.text
        for g in cells_of(board)
        for text in g.iter(f"{SVG}text")
        if re.fullmatch(r"[WDL]\d+", text.text or "")
    }


def values_cited_but_not_shown(notebook) -> list[str]:  # noqa: ANN001
    """The value labels that a markdown cell quotes (```W3```, ```D8```) and that no board drawn
    by the code cells after it, up to the next markdown cell, shows: prose that says what
    the output does not."""
    missing: list[str] = []
    cited: list[str] = []
    shown: set[str] = set()
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            missing += [label for label in cited if label not in shown]
            cited, shown = re.findall(r"`([WDL]\d*)`", cell.source), set()
            continue
        for output in cell.get("outputs", []):
            for text in output.get("data", {}).values():
                if isinstance(text, str) and "<svg" in text:
                    for board in boards(text):
                        shown.update(value_labels(board).values())
    return missing + [label for label in cited if label not in shown]


def test_cited_values_must_be_shown():
    """The check of :func:`run` finds prose that quotes a value no board shows."""
    nbformat = pytest.importorskip("nbformat", reason=EXTRA)
    board = (
        '<svg class="board" xmlns="http://www.w3.org/2000/svg"><g class="cell" data-cell="a1">'
        "<text>D8</text></g></svg>"
    )
    output = nbformat.v4.new_output("display_data", data={"text/html": board})
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("`D8` draws, `L3` loses in 3 plies, `D`: draw"),
            nbformat.v4.new_code_cell("analyse()", outputs=[output]),
        ]
    )
    assert values_cited_but_not_shown(notebook) == ["L3", "D"]


def test_the_notebooks_are_kept_as_code_without_outputs():
    nbformat = pytest.importorskip("nbformat", reason=EXTRA)
    assert len(NOTEBOOKS) == 6
    for path in NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, path.name


def test_grade_your_agent(tmp_path):
    notebook = run(NOTEBOOKS[0], tmp_path)
    html = outputs(notebook, "text/html")
    drawn = [board for text in html for board in boards(text)]
    assert all(len(cells_of(board)) == 9 for board in drawn)
    # The costliest moves of the audits, as boards with every move's value (the games of a
    # games-mode audit are drawn too, without values): one framed cell each, the agent's move.
    costly = [b for b in drawn if any(g.get("data-value") for g in cells_of(b))]
    assert len(costly) >= 10 and len(drawn) > len(costly)
    marked = [g for board in costly for g in cells_of(board) if "marked" in g.get("class", "")]
    assert len(marked) == len(costly)
    # the agent's cell, written out as a plug-in, audited by the command line
    agent = [c.source for c in notebook.cells if "agent" in c.metadata.get("tags", [])]
    (tmp_path / "lab_agent.py").write_text("\n\n".join(agent) + "\n")
    (accuracy,) = [
        c.outputs[0]["data"]["text/plain"]
        for c in notebook.cells
        if "accuracy" in c.metadata.get("tags", [])
    ]
    ttt = Path(sys.executable).parent / "ttt"
    result = subprocess.run(
        [str(ttt), "audit", "--agent", "py:lab_agent.py:win_block_random,board=flat", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    figures = json.loads(result.stdout)
    assert repr(figures["accuracy"]) == accuracy
    assert 0.5 < figures["accuracy"] < 1 and figures["moves"] == 4520
    # the failures of the careless agent are counted, with their reason
    assert any("crash" in text and "ValueError" in text for text in outputs(notebook, "text/plain"))


def test_why_does_this_move_lose(tmp_path):
    notebook = run(NOTEBOOKS[1], tmp_path)
    svgs = outputs(notebook, "image/svg+xml")  # a Position displays itself as SVG
    assert svgs and all(len(cells_of(board)) == 9 for text in svgs for board in boards(text))
    first = boards(svgs[0])[0]
    stones = {g.get("data-cell"): g.get("data-stone") for g in cells_of(first)}
    assert stones["b2"] == "x" and sum(bool(s) for s in stones.values()) == 1
    # "The corners hold the draw; every edge loses."
    (moves,) = [board for text in outputs(notebook, "text/html") for board in boards(text)][:1]
    labels = value_labels(moves)
    assert {labels[cell][0] for cell in ("a1", "c1", "a3", "c3")} == {"D"}
    assert {labels[cell][0] for cell in ("b1", "a2", "c2", "b3")} == {"L"}
    html = "".join(outputs(notebook, "text/html"))
    assert "losing (4):" in html and "X has won" in html
    history = [t for t in outputs(notebook, "text/html") if 'class="value-history"' in t]
    assert history


def test_strength_curve(tmp_path):
    notebook = run(NOTEBOOKS[2], tmp_path)
    html = "".join(outputs(notebook, "text/html"))
    assert "flat_monte_carlo: iterations" in html and "mcts: iterations" in html
    assert ">failures<" not in html and ">0.00%<" not in html  # every point's moves graded
    assert "<svg" in html  # the chart (matplotlib, in the notebook extra)


@pytest.mark.slow
def test_the_book_in_pandas(tmp_path):
    notebook = run(NOTEBOOKS[3], tmp_path)
    text = "".join(outputs(notebook, "text/plain"))
    assert "4x4 k=4 draw in 16 for X" in "".join(
        output.get("text", "") for cell in notebook.cells for output in cell.get("outputs", [])
    )
    assert "remoteness" in text and outputs(notebook, "image/png")  # the histogram
    # the prose on the first moves says what their table shows
    (prose,) = [c.source for c in notebook.cells if "## Which first moves win?" in c.source]
    (table,) = [t for t in outputs(notebook, "text/plain") if "for X" in t]
    for_x = [
        word for line in table.splitlines() if line.startswith("for X") for word in line.split()[2:]
    ]
    assert len(for_x) == 16 and set(for_x) == {"draw"}
    assert "all 16 first moves draw" in prose
