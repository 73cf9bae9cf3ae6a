"""A table's published figures (ttt table figures) against the exhaustive solver's rows: the
longest win of each ply, the first moves, the counts."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ttt_solve.cli.main import ttt
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.build import build_table
from ttt_solve.solver.tablebase.figures import describe, table_figures
from ttt_solve.solver.tablebase.probe import open_tablebase
from ttt_solve.solver.value import Outcome, Value


@pytest.mark.parametrize("game", [(3, 3, 3), (3, 4, 3), (4, 4, 3)])
def test_the_figures_are_the_exhaustive_solvers(tmp_path: Path, game: tuple[int, int, int]) -> None:
    rules = Rules(*game)
    build_table(rules, tmp_path / "t")
    figures = table_figures(tmp_path / "t")
    solved = {t.ply: t for t in ExhaustiveSolver(rules).solve()}
    for ply in figures.plies:
        rows = solved[ply.ply]
        values = [Value.from_score(int(score), rules.cells - ply.ply) for score in rows.scores]
        wins = [value.remoteness for value in values if value.outcome is Outcome.WIN]
        assert ply.longest_win == (max(wins) if wins else None), ply.ply
        assert ply.counts.canonical == len(values)
        canonical_wins = int(ply.counts.counts[0, :, 0].sum())
        assert canonical_wins == len(wins)
        if ply.longest_win_position is not None:
            assert ply.longest_win_position.ply == ply.ply
            found = open_tablebase(tmp_path / "t").probe(ply.longest_win_position)
            assert found == Value(Outcome.WIN, ply.longest_win)
    assert figures.root == open_tablebase(tmp_path / "t").probe(Position.start(rules))
    assert len(figures.first_moves) == rules.cells
    text = describe(figures)
    assert f"{figures.longest_win.longest_win} plies" in text


def test_a_folder_without_a_table_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(ttt, ["table", "figures", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert "no finished table here" in result.stderr
