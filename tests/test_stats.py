"""``ttt stats``: the 3x3 analysis reproduces the published figures (data/, docs/conventions.md)."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from tests.reference import rows
from ttt_solve.book.reader import open_book
from ttt_solve.cli.main import ttt
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome, Value


def stats(*args: str):
    return CliRunner().invoke(ttt, ["stats", *args])


def number(text: str) -> int:
    return int(text.replace(",", ""))


def section(output: str, title: str) -> list[list[str]]:
    """The data rows of one titled table of the text report, split into cells."""
    block = output.split(title, 1)[1].split("\n\n", 1)[0]
    lines = block.strip("\n").splitlines()
    rule = next(i for i, line in enumerate(lines) if line.strip() and set(line) <= set("- "))
    return [line.split() for line in lines[rule + 1 :]]


def test_3x3_text_reproduces_the_reference_figures(book_3x3):
    result = stats("--size", "3", "--win", "3", "--db", book_3x3)
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith("3x3 k=3 (3 rows x 3 columns, 3 in a row): draw for X, remoteness 9")

    by_ply = {
        int(r[0]): (number(r[2]), number(r[3]))
        for r in section(out, "Positions by ply")
        if r[0] != "total"
    }
    assert by_ply == {
        int(r["ply"]): (int(r["reachable"]), int(r["canonical"]))
        for r in rows("positions_by_ply_3x3.csv")
    }
    total = [r for r in section(out, "Positions by ply") if r[0] == "total"][0]
    assert (number(total[1]), number(total[2])) == (5478, 765)

    reference = {r["figure"]: r for r in rows("figures_3x3.csv")}
    outcomes = {" ".join(r[:-2]): (number(r[-2]), number(r[-1])) for r in section(out, "Outcomes")}
    for outcome in ("win", "loss", "draw"):
        ref = reference[f"side_to_move_{outcome}"]
        assert outcomes[f"{outcome} for side to move"] == (
            int(ref["reachable"]),
            int(ref["canonical"]),
        )
    # For X: ply-parity flips wins and losses of O-to-move positions; draws do not change.
    assert outcomes["draw for X"] == outcomes["draw for side to move"]
    assert sum(outcomes[f"{o} for X"][0] for o in ("win", "loss", "draw")) == 5478

    terminal = {
        r[0] if r[0] != "X" and r[0] != "O" else " ".join(r[:2]): (number(r[-2]), number(r[-1]))
        for r in section(out, "Terminal positions")
    }
    assert terminal["X wins"][0] == int(reference["terminal_x_wins"]["reachable"])
    assert terminal["O wins"][0] == int(reference["terminal_o_wins"]["reachable"])
    assert terminal["draws"][0] == int(reference["terminal_draws"]["reachable"])
    assert terminal["total"] == (958, 138)

    remoteness = {
        int(r[0]): tuple(number(c) for c in r[1:4]) for r in section(out, "Remoteness (plies")
    }
    assert remoteness == {
        int(r["remoteness"]): (int(r["win"]), int(r["loss"]), int(r["draw"]))
        for r in rows("remoteness_3x3.csv")
    }

    longest = dict(re.findall(r"longest (win|loss): remoteness (\d+)", out))
    assert longest == {"win": "5", "loss": "4"}
    assert "longest win: remoteness 5 (122 positions)" in out
    assert "longest loss: remoteness 4 (124 positions)" in out


def test_json_report(book_3x3):
    result = stats("--db", book_3x3, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["reachable"], data["canonical"], data["value_for_x"]) == (5478, 765, "draw")
    assert data["values"]["reachable"] == {"win": 2836, "draw": 1068, "loss": 1574}
    assert data["values"]["canonical"] == {"win": 390, "draw": 151, "loss": 224}
    assert data["terminal"]["reachable"] == {"x": 626, "o": 316, "draw": 16}
    assert data["remoteness_table"]["reachable"]["draw"]["9"] == 1
    assert data["longest_win"]["remoteness"] == 5 and data["longest_loss"]["positions"] == 124
    # The examples are stored positions with those values.
    with open_book(book_3x3) as book:
        for outcome, found in (("win", data["longest_win"]), ("loss", data["longest_loss"])):
            entry = book.find(Position.parse(found["example"], Rules(3, 3, 3)))
            assert entry.value == Value(Outcome(outcome), found["remoteness"])


def test_missing_game(book_3x3):
    result = stats("--size", "4", "--win", "4", "--db", book_3x3)
    assert result.exit_code == 2
    assert (
        "holds no 4x4 k=4 game" in result.output and "ttt-solve --size 4 --win 4" in result.output
    )
