"""``ttt atlas`` and solver.prover.atlas: every small game decided, with how, against the published
values."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.reference import boards, rows
from ttt_solve.cli.main import ttt
from ttt_solve.solver.prover.atlas import PUBLISHED, atlas_games, decide


def test_the_atlas_lists_every_game_once_smallest_first() -> None:
    games = atlas_games()
    assert len(games) == len(set(games)) == 36 * 4  # 36 boards R <= C <= 8, k = 3..6
    assert all(1 <= rows <= cols <= 8 and 3 <= k <= 6 for rows, cols, k in games)
    cells = [rows * cols for rows, cols, _ in games]
    assert cells == sorted(cells)
    assert atlas_games(max_cells=9) == [game for game in games if game[0] * game[1] <= 9]


def test_the_published_values_are_those_of_the_reference_data() -> None:
    """The atlas's published values are the project's reference figures (data/), written
    rows first; (8,8,5) is the one past them (Hsu et al. 2020, in docs/conventions.md)."""
    reference = {
        (int(row["rows"]), int(row["columns"]), int(row["k"])): row["value_for_x"]
        for row in rows("published_values.csv")
    }
    reference |= {key: row["value_for_x"] for key, row in boards().items()}
    reference[8, 8, 5] = "draw"
    in_atlas = {key: value for key, value in reference.items() if key in set(atlas_games())}
    assert {key: value for key, (value, _) in PUBLISHED.items()} == in_atlas


def test_each_method_decides_what_it_should() -> None:
    rule = decide(2, 3, 4, seconds=5)
    assert (rule.value, rule.remoteness, rule.method) == ("draw", 6, "rule")
    tic_tac_toe = decide(3, 3, 3, seconds=5)
    assert (tic_tac_toe.value, tic_tac_toe.remoteness, tic_tac_toe.method) == (
        "draw",
        9,
        "exhaustive",
    )
    assert tic_tac_toe.nodes == 765  # every canonical position
    pairing = decide(5, 5, 5, seconds=5)
    assert (pairing.value, pairing.method, pairing.nodes) == ("draw", "pairing", 0)
    draw = decide(5, 5, 4, seconds=60)
    assert (draw.value, draw.remoteness, draw.method) == ("draw", 25, "search")
    assert "strategy stealing" in draw.note and draw.nodes > 0
    win = decide(5, 6, 4, seconds=60)
    assert (win.value, win.method) == ("win", "search") and win.remoteness % 2 == 1
    assert all(entry.agrees for entry in (rule, tic_tac_toe, pairing, draw, win))


def test_an_entry_out_of_time_says_how_far_it_got() -> None:
    entry = decide(8, 8, 5, seconds=0.5)
    assert (entry.value, entry.remoteness, entry.method) == ("unknown", None, "unknown")
    assert entry.nodes > 0 and "0.5 s" in entry.note
    assert entry.published == "draw" and entry.agrees


def test_the_command_prints_and_writes_the_table(tmp_path: Path) -> None:
    json_path, markdown_path = tmp_path / "atlas.json", tmp_path / "atlas.md"
    result = CliRunner().invoke(
        ttt,
        [
            "atlas",
            "--max-cells",
            "12",
            "--seconds",
            "5",
            "--jobs",
            "1",
            "--json",
            str(json_path),
            "--markdown",
            str(markdown_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "3x3 k=3  --size 3 --win 3    draw" in result.output
    document = json.loads(json_path.read_text())
    games = {(g["rows"], g["cols"], g["k"]): g for g in document["games"]}
    assert set(games) == set(atlas_games(12))
    assert games[3, 4, 3]["value"] == "win" and games[3, 4, 3]["published"] == "win"
    assert games[1, 2, 3]["method"] == "rule"
    page = markdown_path.read_text()
    assert "ttt atlas --seconds 5 --max-cells 12 --jobs 1" in page
    assert "| 3 | 4 | 3 | win | 7 | exhaustive |" in page


def test_the_command_refuses_bad_options() -> None:
    for arguments in (["--seconds", "0"], ["--max-cells", "65"], ["--jobs", "0"]):
        result = CliRunner().invoke(ttt, ["atlas", *arguments])
        assert result.exit_code == 2 and "Traceback" not in result.output


def test_an_output_that_cannot_be_written_is_refused_before_any_game(tmp_path: Path) -> None:
    missing = tmp_path / "no such folder" / "atlas.json"
    result = CliRunner().invoke(ttt, ["atlas", "--max-cells", "9", "--json", str(missing)])
    assert result.exit_code == 2
    expected = f"Error: cannot write {missing}: no folder {missing.parent}"
    assert result.output.strip().splitlines() == [expected]
    assert "deciding" not in result.output and not missing.parent.exists()
