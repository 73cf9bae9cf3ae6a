"""The benchmark (``ttt benchmark``, ``ttt.benchmark``): its 4x4 k=4 set rebuilt byte for byte
from a table built here, a changed value caught by the checksum, and the scores held to what
the set's own per-move values say: ``perfect`` keeps everything, an agent that plays the first
empty cell scores a brute-force count, ``random`` lands within its intervals of the exact
expectation, and a program speaking the text protocol scores as the same logic in Python."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ttt_solve.agents.benchmark import run_benchmark
from ttt_solve.agents.benchset import (
    CHECKSUMS,
    DATA,
    DIFFICULTIES,
    GRIDS,
    PER_CELL,
    SPLITS,
    STAGES,
    BenchmarkSetError,
    Grid,
    load_set,
    make_set,
    set_path,
)
from ttt_solve.agents.intervals import wilson_interval
from ttt_solve.agents.makers import agent_maker
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.cli.main import ttt
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.build import build_table
from ttt_solve.solver.value import Grade, grade

ROOT = Path(__file__).parent.parent
RULES = Rules(4, 4, 4)
PUBLISHED = DATA / "4x4k4.jsonl"
EXAMPLE = ROOT / "examples" / "benchmark_llm.py"


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench") / "4x4k4"
    build_table(RULES, folder)
    return folder


@pytest.fixture(scope="module")
def published():
    return load_set(PUBLISHED)


def test_the_set_is_rebuilt_byte_for_byte_from_the_table(table, published):
    made = make_set(table)
    assert made.text() == PUBLISHED.read_text()
    assert made.checksum == published.checksum
    line = f"{made.checksum}  4x4k4.jsonl"
    assert line in (DATA / CHECKSUMS).read_text().splitlines()


def test_every_published_set_fills_every_cell_of_both_splits():
    sets = sorted(DATA.glob("*.jsonl"))
    assert PUBLISHED in sets
    for path in sets:
        found = load_set(path)
        assert found.grid == GRIDS[path.stem]
        for split in SPLITS:
            cells = {(i.stage, i.difficulty) for i in found.split(split)}
            assert cells == {(s, d) for s in STAGES for d in DIFFICULTIES}, path
            for stage in STAGES:
                for difficulty in DIFFICULTIES:
                    here = found.cell(split, stage, difficulty)
                    assert len(here) == PER_CELL, (path.name, split, stage, difficulty)
        for item in found.items:
            assert found.grid.stage_of(item.position.ply) == item.stage
            assert found.grid.difficulty_of(item.value.remoteness) == item.difficulty
            assert ("decisive" in item.splits) <= item.decisive


def test_a_set_with_a_changed_value_fails_its_checksum(tmp_path):
    shutil.copy(PUBLISHED, tmp_path / PUBLISHED.name)
    shutil.copy(DATA / CHECKSUMS, tmp_path / CHECKSUMS)
    assert load_set(tmp_path / PUBLISHED.name).checksum
    lines = (tmp_path / PUBLISHED.name).read_text().splitlines(keepends=True)
    record = json.loads(lines[1])
    cell = next(iter(record["moves"]))
    record["moves"][cell] = "L2" if record["moves"][cell] != "L2" else "W1"
    lines[1] = json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n"
    (tmp_path / PUBLISHED.name).write_text("".join(lines))
    with pytest.raises(BenchmarkSetError, match="was changed"):
        load_set(tmp_path / PUBLISHED.name)
    changed = str(tmp_path / "4x4k4.jsonl")
    result = CliRunner().invoke(
        ttt, ["benchmark", "--agent", "random", "--size", "4", "--set", changed]
    )
    assert result.exit_code == 2 and "was changed" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_perfect_keeps_the_value_at_the_best_remoteness_in_every_cell(published, book_4x4k4):
    report = run_benchmark(AgentMaker("perfect", book_4x4k4), published, jobs=1)
    for cell in (*report.cells, *report.totals):
        assert cell.positions > 0
        assert cell.kept == cell.best == cell.positions, cell
    assert report.failures == ()


def first_empty(position):
    return position.legal_moves()[0]


def test_the_first_empty_cell_scores_a_brute_force_count_cell_by_cell(published):
    report = run_benchmark(agent_maker(first_empty, db=None), published, jobs=1)
    for split in SPLITS:
        for stage in STAGES:
            for difficulty in DIFFICULTIES:
                here = published.cell(split, stage, difficulty)
                grades = [grade(i.value, i.moves[min(i.moves)])[0] for i in here]
                cell = report.cell(split, stage, difficulty)
                assert cell.positions == len(here)
                assert cell.kept == sum(g is not Grade.BLUNDER for g in grades)
                assert cell.best == sum(g is Grade.BEST for g in grades)
    assert 0 < report.total("decisive").kept < report.total("every").kept


def first_empty_or_nothing(position):
    """Plays the first empty cell, and fails (an exception) at odd plies."""
    if position.ply % 2:
        raise RuntimeError("no move at odd plies")
    return position.legal_moves()[0]


def test_a_failed_move_is_a_miss_in_both_figures(published):
    report = run_benchmark(agent_maker(first_empty_or_nothing, db=None), published, jobs=1)
    assert len(report.failures) == sum(i.position.ply % 2 for i in published.items) > 0
    for cell in report.cells:
        here = published.cell(cell.split, cell.stage, cell.difficulty)
        played = [grade(i.value, i.moves[min(i.moves)])[0] for i in here if i.position.ply % 2 == 0]
        assert cell.positions == len(here)
        assert cell.failed == len(here) - len(played)
        assert cell.kept == sum(g is not Grade.BLUNDER for g in played)
        assert cell.best == sum(g is Grade.BEST for g in played)
    assert "failed" in report.summary() and f"{len(report.failures):,} failed" in report.summary()


def test_random_lies_within_its_intervals_of_the_exact_expectation(published):
    report = run_benchmark(AgentMaker("random"), published, jobs=1)
    for cell in report.cells:
        here = published.cell(cell.split, cell.stage, cell.difficulty)
        shares = [
            sum(grade(i.value, move)[0] is not Grade.BLUNDER for move in i.moves.values())
            / len(i.moves)
            for i in here
        ]
        expected = sum(shares) / len(shares)
        interval = cell.value_kept
        assert interval.low <= expected <= interval.high, (cell, expected)


def test_wilson_intervals_are_the_published_ones():
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", table I.
    for successes, trials, low, high in [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ]:
        found = wilson_interval(successes, trials)
        assert math.isclose(found.low, low, abs_tol=5e-5)
        assert math.isclose(found.high, high, abs_tol=5e-5)
    assert wilson_interval(20, 20).high == 1.0


def centre_first(position):
    """The example script's local policy written as a Python agent: the empty cell nearest the
    centre, ties to the first in reading order."""
    rules = position.rules
    middle_row, middle_col = (rules.rows - 1) / 2, (rules.cols - 1) / 2
    return min(
        position.legal_moves(),
        key=lambda c: (c // rules.cols - middle_row) ** 2 + (c % rules.cols - middle_col) ** 2,
    )


def test_a_program_speaking_the_text_protocol_scores_as_the_same_logic_in_python(published):
    engine = run_benchmark(AgentMaker(f"cmd:{sys.executable} {EXAMPLE}"), published, jobs=1)
    python = run_benchmark(agent_maker(centre_first, db=None), published, jobs=1)
    assert engine.failures == python.failures == ()
    assert [c[3:] for c in engine.cells] == [c[3:] for c in python.cells]
    assert engine.totals[0].kept not in (0, engine.totals[0].positions)


def test_the_example_script_reads_a_board_and_names_a_cell():
    exchange = (
        "ttt 1\nrules 4 5 4\nposition x..../.o.../...../.....\ngo movetime 100 seed 3\nquit\n"
    )
    answer = subprocess.run(
        [sys.executable, str(EXAMPLE)], input=exchange, capture_output=True, text=True, timeout=30
    )
    assert answer.stdout.splitlines()[-1] == "move c2"


def test_the_command_prints_the_grids_and_the_summary_line(book_4x4k4, tmp_path):
    runner = CliRunner()
    result = runner.invoke(ttt, ["benchmark", "--agent", "heuristic", "--size", "4", "-q"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("heuristic on 4x4 k=4: benchmark set")
    assert "decisive positions (some move loses the value): value kept" in result.output
    assert "│ opening (plies 0-8)" in result.output
    assert lines[-1].startswith("heuristic on 4x4 k=4 (set ")
    as_json = runner.invoke(
        ttt,
        ["benchmark", "--agent", "perfect", "--size", "4", "--db", book_4x4k4, "-q", "--json"],
    )
    figures = json.loads(as_json.output)
    assert {(t["split"], t["kept"], t["best"]) for t in figures["totals"]} == {
        (split, t["positions"], t["positions"]) for split, t in zip(SPLITS, figures["totals"])
    }
    svg = tmp_path / "heat.svg"
    drawn = runner.invoke(
        ttt, ["benchmark", "--agent", "random", "--size", "4", "-q", "--svg", str(svg)]
    )
    assert drawn.exit_code == 0 and svg.read_text().count('class="heat-cell"') == 36


@pytest.mark.parametrize(
    "args, said",
    [
        (["--size", "4"], "give an agent to score"),
        (["--agent", "nobody", "--size", "4"], "unknown agent 'nobody'"),
        (["--agent", "random", "--size", "3"], "no benchmark set of 3x3 k=3"),
        (["--agent", "random", "--agent", "heuristic", "--size", "4", "--svg", "x.svg"], "--svg"),
    ],
)
def test_bad_input_is_one_line_and_status_2(args, said):
    result = CliRunner().invoke(ttt, ["benchmark", *args])
    assert result.exit_code == 2 and said in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_board_of_the_benchmark_without_its_set_says_how_to_draw_it(tmp_path):
    with pytest.raises(BenchmarkSetError, match="5x5 k=5 is not published yet .* make-set 5x5k5"):
        set_path(Rules(5, 5, 5), tmp_path)


def test_make_set_checks_the_published_set_and_refuses_a_grid_with_a_gap(table):
    runner = CliRunner()
    checked = runner.invoke(
        ttt, ["benchmark", "make-set", "4x4k4", "--table", str(table), "--check", "-q"]
    )
    assert checked.exit_code == 0, checked.output
    assert "rebuilt byte for byte" in checked.output
    gap = runner.invoke(
        ttt,
        ["benchmark", "make-set", "4x4k4", "--table", str(table), "--stages", "0-8,10-12,13-15"]
        + ["--difficulties", "1-2,3-4,5-"],
    )
    assert gap.exit_code == 2 and "stages 0-8,10-12,13-15 of 4x4 k=4" in gap.output
    with pytest.raises(BenchmarkSetError, match="not a range"):
        Grid.parse("0-8,9-x,11-15", "1-2,3-4,5-", RULES)


def test_the_notebook_function_shows_its_heatmaps():
    import ttt_solve as ttt_session

    report = ttt_session.benchmark(first_empty, "4x4k4", timeout=None)
    html = report._repr_html_()
    assert html.count('class="heat-cell"') == 36
    assert report.summary() in html
    assert report.total("every").positions == len(load_set(PUBLISHED).split("every"))


def test_make_set_writes_the_file_and_its_checksum_beside_the_others(table, tmp_path):
    (tmp_path / CHECKSUMS).write_text(f"{'0' * 64}  other.jsonl\n")
    result = CliRunner().invoke(
        ttt,
        ["benchmark", "make-set", "4x4k4", "--table", str(table), "--out", str(tmp_path)]
        + ["--per-cell", "4", "--seed", "3", "-q"],
    )
    assert result.exit_code == 0, result.output
    made = load_set(tmp_path / "4x4k4.jsonl")
    assert made.per_cell == 4 and made.seed == 3
    assert {len(made.cell(s, st, d)) for s in SPLITS for st in STAGES for d in DIFFICULTIES} == {4}
    sums = (tmp_path / CHECKSUMS).read_text().splitlines()
    assert sums == [f"{made.checksum}  4x4k4.jsonl", f"{'0' * 64}  other.jsonl"]
    assert f"sha256 {made.checksum}" in result.output


def test_the_heatmap_is_one_hue_with_readable_ink_and_its_figures_as_data():
    from ttt_solve.presentation.palette import heat
    from ttt_solve.presentation.svg import HeatCell, heatmap

    def luminance(colour: str) -> float:
        channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    for step in range(101):
        fill, ink = heat(step / 100)
        lighter, darker = sorted((luminance(fill), luminance(ink)), reverse=True)
        assert (lighter + 0.05) / (darker + 0.05) >= 4.5, step
    fills = [luminance(heat(step / 10)[0]) for step in range(11)]
    assert fills == sorted(fills, reverse=True)  # darker as the share grows
    cells = [[HeatCell(0.5, 0.4, 0.6, 300), HeatCell(None, 0.0, 1.0, 0)]]
    drawn = heatmap(cells, ["end"], ["near", "far"], title="t", row_notes=["plies 1-2"])
    assert drawn == heatmap(cells, ["end"], ["near", "far"], title="t", row_notes=["plies 1-2"])
    assert 'data-row="end" data-column="near" data-share="0.500000"' in drawn
    assert ">50.0%<" in drawn and ">40.0-60.0<" in drawn and ">-<" in drawn


@pytest.mark.slow
def test_the_4x5_set_is_rebuilt_byte_for_byte_from_a_table_built_here(tmp_path):
    """Minutes: the 4x5 k=4 table (189 MB) built here, then its set drawn again."""
    folder = tmp_path / "4x5k4"
    build_table(Rules(4, 5, 4), folder)
    published = DATA / "4x5k4.jsonl"
    assert make_set(folder).text() == published.read_text()
    assert load_set(published).checksum in (DATA / CHECKSUMS).read_text()
