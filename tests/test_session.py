"""``import ttt_solve as ttt``: the session's functions, what they display, and the notice of a
first compile."""

from __future__ import annotations

import importlib.util
import json
import logging
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

import ttt_solve as ttt
from ttt_solve.cli.main import ttt as ttt_command
from ttt_solve.presentation.palette import STONES, VALUES
from ttt_solve.solver import compiling
from ttt_solve.solver.errors import InvalidRulesError
from ttt_solve.solver.value import Outcome

SVG = "{http://www.w3.org/2000/svg}"
T3 = ttt.Rules(3, 3, 3)


def svgs(html: str) -> list[ET.Element]:
    """Every SVG picture in an HTML fragment, parsed (each must be well-formed XML)."""
    found, start = [], html.find("<svg")
    while start >= 0:
        end = html.find("</svg>", start) + len("</svg>")
        found.append(ET.fromstring(html[start:end]))
        start = html.find("<svg", end)
    return found


def cells(board: ET.Element) -> list[ET.Element]:
    return [g for g in board.iter(f"{SVG}g") if "cell" in (g.get("class") or "").split()]


def test_importing_the_package_imports_nothing_until_used():
    code = textwrap.dedent(
        """
        import sys, ttt_solve as ttt
        parts = ("ttt_solve.", "numpy", "sqlalchemy")
        before = sorted(m for m in sys.modules if m.startswith(parts))
        ttt.Rules
        print(before, "ttt_solve.solver.rules" in sys.modules, "numpy" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "True", "False"]
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        ttt.nothing  # noqa: B018
    assert {"solve", "audit", "Position"} <= set(dir(ttt))


@pytest.mark.parametrize(
    ("name", "rules"),
    [
        ("3x3k3", (3, 3, 3)),
        ("4x5 k=4", (4, 5, 4)),
        ("4X5K3", (4, 5, 3)),
        ("3", (3, 3, 3)),
        ("4x5", (4, 5, 4)),
    ],
)
def test_games_are_named_as_the_commands_name_them(name, rules):
    assert ttt.rules_of(name) == ttt.Rules(*rules)
    assert ttt.rules_of(ttt.Rules(*rules)) is not None


def test_a_bad_game_name_says_how_to_write_one():
    with pytest.raises(InvalidRulesError, match="like 3x3k3"):
        ttt.rules_of("tic-tac-toe")
    with pytest.raises(InvalidRulesError, match="k=4 is impossible"):
        ttt.rules_of("3x3k4")


def test_solve_analyse_and_play(tmp_path):
    db = str(tmp_path / "b.sqlite")
    info = ttt.solve("3x3k3", db=db)
    assert (info.reachable, info.positions, str(info.value)) == (5478, 765, "draw in 9")
    assert ttt.solve("3x3k3", db=db).id == info.id  # stored: not solved again
    analysis = ttt.analyse("x.o/.x./...", "3x3k3", db=db)
    assert repr(analysis) == "<Analysis 3x3 k=3 x.o/.x./...: O to move, draw in 6; best c3 (book)>"
    start = ttt.Position.parse(".o./.x./...", T3)
    game = ttt.play_game("perfect", "perfect", "3x3k3", db=db, start=start, seed=3)
    assert game.record.start == start and game.winner == "x"  # O's edge reply loses
    assert game.values is not None and len(game.values) == len(game.record.moves) + 1
    assert [v.outcome for v in game.values] == [Outcome.WIN, Outcome.LOSS] * 3
    assert repr(game).endswith("; X wins>")
    with ttt.open_book(db) as book:
        assert (
            repr(book) == f"<Book {book.display_url}: 1 game (3x3 k=3 draw in 9 for X, exhaustive)>"
        )


def test_the_audit_report_is_ttt_audit_json(book_3x3):
    report = ttt.audit("heuristic", "3x3k3", db=book_3x3, worst=3)
    result = CliRunner().invoke(
        ttt_command,
        ["audit", "--agent", "heuristic", "--db", book_3x3, "--json", "--worst", "3", "-q"],
    )
    assert result.exit_code == 0, result.output
    assert report.to_dict() == json.loads(result.output)
    games = ttt.audit("random", "3x3k3", db=book_3x3, games=6, opponent="perfect", seed=2)
    result = CliRunner().invoke(
        ttt_command,
        ["audit", "--agent", "random", "--db", book_3x3, "--json", "-q", "--games", "6"]
        + ["--opponent", "perfect", "--seed", "2"],
    )
    assert games.to_dict() == json.loads(result.output)
    assert games.to_dict()["games"] and games.mode == "games"


def test_the_web_result_is_the_audit_report(book_3x3):
    """What the web explorer's audit pages give (``job_json``'s result) is the report's
    ``to_dict()``: the web renders the library's value."""
    pytest.importorskip("starlette", reason="pip install -e '.[web]'")
    from ttt_solve.web.audits import AuditJob, AuditRequest, job_json

    report = ttt.audit("heuristic", "3x3k3", db=book_3x3, worst=10)
    job = AuditJob(1, AuditRequest(T3, "heuristic"), status="done", report=report)
    web = job_json(job)
    assert web["result"] == report.to_dict()
    for key in ("agent", "mode", "seed", "game", "sample", "opponent"):
        assert report.to_dict()[key] == web[key] or key == "opponent", key


def test_the_displays_draw_from_the_picture_module(book_3x3):
    position = ttt.Position.parse("xo./.x./...", T3)
    (board,) = svgs(position._repr_svg_())
    assert len(cells(board)) == 9
    analysis = ttt.analyse(position, db=book_3x3)
    html = analysis._repr_html_()
    (board,) = svgs(html)
    valued = [g for g in cells(board) if g.get("data-value")]
    assert len(valued) == 6
    for g in valued:
        rect = g.find(f"{SVG}rect")
        assert rect is not None and rect.get("fill") == VALUES[Outcome(g.get("data-value"))].fill
    words = {Outcome.WIN: "winning", Outcome.DRAW: "drawing", Outcome.LOSS: "losing"}
    for outcome, word in words.items():  # the moves grouped by value, with their counts
        moves = [m for m in analysis.moves if m.value.outcome is outcome]
        assert (f"{word} ({len(moves)}):" in html) == bool(moves)
    assert html.count("★") == len(analysis.best_moves) + 1  # and one in the legend
    report = ttt.audit("random", "3x3k3", db=book_3x3, worst=4, positions=80, seed=1)
    boards = [b for b in svgs(report._repr_html_()) if b.get("class") == "board"]
    assert len(boards) == 4  # the costliest moves
    for costly, drawn in zip(report.worst, boards):
        marked = [g.get("data-cell") for g in cells(drawn) if "marked" in g.get("class", "")]
        assert marked == [T3.cell_name(costly.graded.cell)]
        starred = {g.get("data-cell") for g in cells(drawn) if g.get("data-best") == "true"}
        assert starred == {T3.cell_name(c) for c in costly.best_moves}
    game = ttt.play_game("heuristic", "random", "3x3k3", db=book_3x3)
    history = [s for s in svgs(game._repr_html_()) if s.get("class") == "value-history"]
    assert (
        len(history) == 1
        and len(history[0].findall(f".//{SVG}g[@class='point']")) == len(game.record.moves) + 1
    )
    (last,) = svgs(game.record._repr_svg_())
    assert any(g.get("data-stone") == "x" for g in cells(last))
    assert STONES["x"] in game.record._repr_svg_()


def test_curves_of_spec_strings_and_factories(book_3x3):
    def first_empty_factory(depth):
        def move(board):
            return board.index(" ")

        return move

    report = ttt.curve(
        [first_empty_factory, "alphabeta"],
        "3x3k3",
        vary={"depth": [1, 9]},
        db=book_3x3,
        seeds=1,
        positions=60,
        board="flat",
    )
    ours, theirs = report.curves
    assert [p.spec for p in theirs.points] == ["alphabeta:depth=1", "alphabeta:depth=9"]
    assert theirs.points[1].accuracy.mean == 1.0  # a full-depth search keeps every value
    assert ours.points[0].accuracy.mean == ours.points[1].accuracy.mean < 1
    assert "first_empty_factory accuracy by depth" in repr(report)
    pytest.importorskip("matplotlib", reason="pip install -e '.[plot]'")
    html = report._repr_html_()
    assert "alphabeta: depth" in html and len(svgs(html)) == 1  # the chart


def test_a_first_compile_is_noticed(tmp_path, monkeypatch, caplog):
    """Numba's cache index tells a function compiled on this machine from one that is not."""
    pytest.importorskip("numba")
    (tmp_path / "fresh_kernel.py").write_text(
        "import numba\n\n@numba.njit(cache=True)\ndef twice(x):\n    return 2 * x\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = importlib.util.spec_from_file_location("fresh_kernel", tmp_path / "fresh_kernel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert compiling.in_cache(module.twice) is False
    assert module.twice(21) == 42
    assert compiling.in_cache(module.twice) is True
    assert compiling.in_cache(object()) is None  # not a Numba function: nothing said

    from ttt_solve.solver.prover import search

    monkeypatch.setattr(compiling, "in_cache", lambda dispatcher: False)
    with caplog.at_level(logging.WARNING, logger=compiling.LOGGER):
        compiling.announce_search()
    assert len(caplog.records) == 1
    assert "compiling the prover's search" in caplog.records[0].getMessage()
    monkeypatch.setattr(compiling, "in_cache", lambda dispatcher: True)
    caplog.clear()
    compiling.announce_search()
    assert not caplog.records
    assert search.COMPILED_KERNEL


def test_the_notice_is_one_line_on_stderr_from_a_command(tmp_path):
    """A command line sees the notice on standard error (Python's last-resort handler)."""
    code = textwrap.dedent(
        """
        from ttt_solve.solver import compiling
        compiling.in_cache = lambda dispatcher: False
        compiling.announce_search()
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("note: compiling the prover's")


def test_in_a_notebook_the_notice_is_a_display_of_its_own(monkeypatch):
    """In a Jupyter kernel the notice goes to the notebook as a display (text and HTML), not
    to standard error."""
    ipython_display = pytest.importorskip("IPython.display", reason="pip install -e '.[notebook]'")
    from ttt_solve import session

    shown = []
    monkeypatch.setitem(sys.modules, "ipykernel", sys.modules.get("ipykernel", object()))
    monkeypatch.setattr(ipython_display, "display", lambda data, raw: shown.append((data, raw)))
    logger = logging.getLogger(compiling.LOGGER)
    handlers, propagate = list(logger.handlers), logger.propagate
    try:
        session.notebook_notices()
        session.notebook_notices()  # once is enough: one handler
        compiling.announce("the prover's search")
    finally:
        logger.handlers[:] = handlers
        logger.propagate = propagate
    assert len(shown) == 1
    data, raw = shown[0]
    assert raw and data["text/plain"].startswith("note: compiling the prover's search")
    assert "<div" in data["text/html"] and "first use" in data["text/html"]
