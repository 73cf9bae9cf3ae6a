"""``ttt curve --rating``: each point's agent rated against the reference ladder."""

from __future__ import annotations

import csv
import io
import json
import shutil

import pytest
from click.testing import CliRunner

from ttt_solve.cli.main import ttt


@pytest.mark.slow
def test_curve_points_rated_on_the_ladders_scale(tmp_path, book_3x3):
    db = str(tmp_path / "curve.sqlite")
    shutil.copy(book_3x3, db)
    base = ["--db", db, "--seeds", "1", "-q"]
    args = ["curve", "--agent", "perfect", "--vary", "error=0.05,0.5", "--rating", *base]
    result = CliRunner().invoke(ttt, [*args, "--rating-games", "2", "--json"])
    assert result.exit_code == 0, result.output
    points = json.loads(result.output)["curves"][0]["points"]
    strong, weak = (point["rating"] for point in points)
    assert strong["low"] < strong["rating"] < strong["high"]
    assert strong["rating"] > weak["rating"]
    ladder = json.loads(
        CliRunner().invoke(ttt, ["rate", "--db", db, "--games", "2", "--json", "-q"]).output
    )
    rungs = {row["agent"]: row for row in ladder["ladder"]["ratings"]["ratings"]}
    # Both points are rungs of the ladder: rated as the ladder rates them, from its cache.
    assert ladder["ladder"]["played"] == 0
    assert strong["rating"] == rungs["perfect:error=0.05"]["rating"]
    assert weak["rating"] == rungs["perfect:error=0.5"]["rating"]
    table = CliRunner().invoke(ttt, [*args, "--rating-games", "2"])
    assert "rating [95%]" in table.output
    rows = list(
        csv.DictReader(
            io.StringIO(CliRunner().invoke(ttt, [*args, "--rating-games", "2", "--csv"]).output)
        )
    )
    assert float(rows[1]["rating"]) == weak["rating"] and "rating_high" in rows[0]
    plot = tmp_path / "curve.svg"
    drawn = CliRunner().invoke(ttt, [*args, "--rating-games", "2", "--plot", str(plot)])
    assert drawn.exit_code == 0, drawn.output
    assert "rating (Elo, random = 0)" in plot.read_text()


def test_rating_games_needs_rating(book_3x3):
    result = CliRunner().invoke(
        ttt,
        ["curve", "--agent", "mcts", "--vary", "iterations=1,2", "--rating-games", "3",
         "--db", book_3x3],
    )  # fmt: skip
    assert result.exit_code == 2 and "--rating-games goes with --rating" in result.output
