"""The audit: figures of a hand-made agent against counts worked out here by brute force."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import pytest

import ttt_solve as ttt
from tests.support import run_audit, run_audit_games
from tests.test_agents import move_result, rank, solve, winner
from ttt_solve.agents.audit import Truth, summarize, worst
from ttt_solve.agents.base import Agent
from ttt_solve.agents.grading import audit_games, audit_positions
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.book.reader import open_book
from ttt_solve.solver.rules import Rules

R3 = Rules(3, 3, 3)


class FirstEmpty(Agent):
    """Always the first empty cell in reading order."""

    name = "first"

    def search(self, position):
        return position.legal_moves()[0]


class FirstEmptyMaker:
    def build(self, book=None):
        return FirstEmpty(random.Random(0))


# -- brute force on strings: reachable boards, symmetry, grading ------------------------------


def grid(rotate: int, mirror: bool) -> list[int]:
    """Index map of one symmetry of the 3x3 board: image[i] = source cell."""
    cells = [[3 * r + c for c in range(3)] for r in range(3)]
    for _ in range(rotate):
        cells = [list(row) for row in zip(*cells[::-1])]
    if mirror:
        cells = [row[::-1] for row in cells]
    return [cell for row in cells for cell in row]


SYMMETRIES = [grid(r, m) for r in range(4) for m in (False, True)]


def key(board: str) -> int:
    return sum(1 << i for i, ch in enumerate(board) if ch == "x") + sum(
        1 << (9 + i) for i, ch in enumerate(board) if ch == "o"
    )


def canonical(board: str) -> str:
    images = ["".join(board[m[i]] for i in range(9)) for m in SYMMETRIES]
    return min(images, key=key)


def reachable_boards() -> set[str]:
    seen, stack = set(), ["." * 9]
    while stack:
        board = stack.pop()
        if board in seen:
            continue
        seen.add(board)
        if winner(board) or "." not in board:
            continue
        mover = "x" if board.count("x") == board.count("o") else "o"
        stack.extend(board[:i] + mover + board[i + 1 :] for i, ch in enumerate(board) if ch == ".")
    return seen


def grade_of(board: str, cell: int) -> tuple[str, str | None]:
    value, move = solve(board), move_result(board, cell)
    names = {1: "win", 0: "draw", -1: "loss"}
    if move[0] != value[0]:
        return "blunder", f"{names[value[0]]}->{names[move[0]]}"
    return ("best" if rank(move) == rank(value) else "sound"), None


def expected_first_empty(per_class: bool = False) -> tuple[Counter, Counter, int]:
    """Grade counts, (ply, grade) counts and boards posed of the first-empty agent over every
    reachable non-terminal position: each moved in as it is, or (``per_class``) the canonical
    board of its class moved in, once per position it stands for."""
    grades, by_ply, posed = Counter(), Counter(), set()
    for board in reachable_boards():
        if winner(board) or "." not in board:
            continue
        seen_as = canonical(board) if per_class else board
        posed.add(seen_as)
        verdict, kind = grade_of(seen_as, seen_as.index("."))
        grades[verdict] += 1
        grades[kind] += 1
        by_ply[(9 - board.count("."), verdict)] += 1
    return grades, by_ply, len(posed)


def test_brute_force_counts_match_conventions():
    boards = reachable_boards()
    assert len(boards) == 5478 and len({canonical(b) for b in boards}) == 765


@pytest.mark.parametrize("per_class", [False, True])
def test_positions_audit_of_first_empty_matches_brute_force(book_3x3, per_class):
    grades, by_ply, posed = expected_first_empty(per_class)
    with open_book(book_3x3) as book:
        records, ungraded, failures = audit_positions(
            FirstEmptyMaker(), Truth(book, R3), per_class=per_class, jobs=1
        )
    summary = summarize(records, ungraded)
    assert ungraded == 0 and failures == [] and summary.graded == posed
    assert posed == (627 if per_class else 4520) and summary.moves == 4520
    assert (summary.best, summary.sound, summary.blunders) == (
        grades["best"],
        grades["sound"],
        grades["blunder"],
    )
    assert summary.kinds == {k: grades[k] for k in ("win->draw", "win->loss", "draw->loss")}
    assert summary.blunders > 0 and summary.sound > 0  # the check has teeth
    for row in summary.by_ply:
        assert (row.best, row.sound, row.blunders) == (
            by_ply[(row.ply, "best")],
            by_ply[(row.ply, "sound")],
            by_ply[(row.ply, "blunder")],
        )
    assert summary.accuracy == pytest.approx((grades["best"] + grades["sound"]) / 4520)
    assert summary.perfection == pytest.approx(grades["best"] / 4520)
    costly = worst(records, 3)
    assert all(r.kind == "win->loss" for r in costly) and grades["win->loss"] >= 3


def test_readmes_first_empty_figures_are_every_position_in_its_own_orientation(book_3x3):
    """The figures README gives for its first_empty agent, recounted here by brute force
    over all 4,520 reachable non-terminal positions, and found by ``ttt.audit``."""
    grades, _, _ = expected_first_empty()
    assert f"{(grades['best'] + grades['sound']) / 4520:.2%}" == "58.65%"
    assert f"{grades['best'] / 4520:.2%}" == "50.15%"
    kinds = (grades["win->draw"], grades["win->loss"], grades["draw->loss"])
    assert grades["blunder"] == 1869 and kinds == (338, 1017, 514)
    report = ttt.audit(
        lambda board: board.index(" "), "3x3k3", db=book_3x3, board="flat", name="first_empty"
    )
    assert f"{report.accuracy:.2%}" == "58.65%" and f"{report.perfection:.2%}" == "50.15%"
    assert report.blunders == 1869 and tuple(report.blunder_kinds.values()) == kinds


def test_games_audit_of_first_empty_against_itself(book_3x3):
    # Both sides take the first empty cell: a1 b1 c1 a2 b2 c2 a3, X wins on the c1-a3 diagonal.
    moves = (0, 1, 2, 3, 4, 5, 6)
    with open_book(book_3x3) as book:
        records, ungraded, games, _ = audit_games(
            FirstEmptyMaker(), FirstEmptyMaker(), Truth(book, R3), games=2, jobs=1
        )
    assert [g.moves for g in games] == [moves, moves]
    assert [(g.agent_side, g.outcome.value) for g in games] == [("x", "win"), ("o", "loss")]
    expected = Counter()
    board = "." * 9
    for ply, cell in enumerate(moves):
        expected[grade_of(board, cell)] += 1  # graded once as X's game, once as O's
        board = board[:cell] + ("x" if ply % 2 == 0 else "o") + board[cell + 1 :]
    got = Counter((r.grade.value, r.kind) for r in records)
    assert ungraded == 0 and got == expected and len(records) == 7


def test_parallel_audit_gives_the_serial_figures(book_3x3):
    maker = AgentMaker("mcts:iterations=40", book_3x3)
    with open_book(book_3x3) as book:
        truth = Truth(book, R3)
        serial, _, _ = audit_positions(maker, truth, seed=3, jobs=1)
        parallel, _, _ = audit_positions(maker, truth, seed=3, jobs=2, probe_seconds=0.0)
        other_seed, _, _ = audit_positions(maker, truth, seed=4, jobs=1)
    assert [(r.position, r.cell) for r in serial] == [(r.position, r.cell) for r in parallel]
    assert [r.cell for r in serial] != [r.cell for r in other_seed]


def test_sample_is_seeded_and_drawn_among_positions_or_classes(book_3x3):
    with open_book(book_3x3) as book:
        truth = Truth(book, R3)
        a, _, _ = audit_positions(AgentMaker("random"), truth, sample=50, seed=1, jobs=1)
        b, _, _ = audit_positions(AgentMaker("random"), truth, sample=50, seed=1, jobs=1)
        c, _, _ = audit_positions(
            AgentMaker("random"), truth, sample=50, seed=1, jobs=1, per_class=True
        )
    assert len(a) == 50 and a == b and all(r.weight == 1 for r in a)
    # Drawn among reachable positions: most are not in the project's orientation.
    assert sum(r.position.canonical_key != r.position.key for r in a) > 25
    assert len(c) == 50 and all(r.position.canonical_key == r.position.key for r in c)
    assert sum(r.weight for r in c) > 50  # most classes stand for several positions


def test_book_true_agent_is_perfect(book_3x3):
    with open_book(book_3x3) as book:
        records, _, _ = audit_positions(
            AgentMaker("random:book=true", book_3x3), Truth(book, R3), jobs=1
        )
    summary = summarize(records)
    assert summary.perfection == 1.0 and summary.moves == 4520


# -- the command -----------------------------------------------------------------------------


def test_cli_text_json_csv(book_3x3):
    text = run_audit("--agent", "perfect", "--db", book_3x3, "-q")
    assert text.exit_code == 0, text.output
    for words in (
        "positions asked",
        "4,520",
        "100.00%",
        "in its own orientation",
        "by ply",
        "every graded move was best",
    ):
        assert words in text.output
    per_class = run_audit("--agent", "perfect", "--db", book_3x3, "-q", "--per-class").output
    assert "4,520 (627 up to symmetry)" in per_class and "weighted" in per_class
    data = json.loads(run_audit("--agent", "random", "--db", book_3x3, "--json", "-q").output)
    assert data["moves"] == data["graded"] == data["asked"] == 4520
    assert data["best"] + data["sound"] + data["blunders"] == 4520
    assert sum(data["blunder_kinds"].values()) == data["blunders"] > 0
    assert sum(row["moves"] for row in data["by_ply"]) == 4520 and len(data["worst"]) == 5
    rows = run_audit("--agent", "heuristic", "--db", book_3x3, "--csv", "-q").output.splitlines()
    assert rows[0].startswith("ply,position,to_move,weight,move,grade") and len(rows) == 4521


def test_cli_games_mode(book_3x3):
    result = run_audit_games("heuristic", book_3x3, 6, "--json")
    data = json.loads(result.output)
    assert data["mode"] == "games" and len(data["games"]) == 6
    assert [g["agent_side"] for g in data["games"]] == ["x", "o"] * 3
    assert all(g["outcome"] != "loss" for g in data["games"])


@pytest.mark.parametrize(
    "args, words",
    [
        (["--agent", "mtcs"], "unknown agent 'mtcs'"),
        (["--agent", "mcts:iters=2"], "unknown parameter 'iters'"),
        (["--agent", "random", "--positions", "some"], "is not 'all' or 'sample:N'"),
        (["--agent", "random", "--positions", "sample:0"], "sample:N"),
        (["--agent", "random", "--size", "4", "--win", "3"], "ttt-solve --size 4 --win 3"),
        (["--agent", "random", "--games", "2", "--positions", "all"], "choose one"),
        (["--agent", "random", "--games", "2", "--opponent", "nobody"], "unknown agent 'nobody'"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(book_3x3, args, words):
    result = run_audit(*args, "--db", book_3x3)
    assert result.exit_code == 2, result.output
    assert words in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_cli_missing_book(tmp_path):
    result = run_audit("--agent", "random", "--db", str(tmp_path / "none.sqlite"))
    assert result.exit_code == 2 and "no book at" in result.output


def test_help_has_an_example():
    result = run_audit("--help")
    assert result.exit_code == 0 and "ttt audit --agent" in result.output
    assert "mcts:" in result.output


def test_an_audit_whose_moves_made_were_best_says_its_failures_too(book_3x3):
    """Every move made was best, and many failed: the report does not say "every graded move
    was best" above its failures."""
    spec = "py:tests.lab_agents:best_at_even_plies,timeout=none"
    result = run_audit("--agent", spec, "--db", book_3x3, "--positions", "sample:30", "-q")
    assert result.exit_code == 0, result.output
    failed = int(re.search(r"failed moves \(count against accuracy\) +│ (\d+)", result.output)[1])
    assert 0 < failed < 30
    assert "every graded move was best" not in result.output
    assert f"every move the agent made was best, but {failed} failed (listed below)" in (
        result.output
    )
    report = ttt.audit(
        "py:tests.lab_agents:best_at_even_plies,timeout=none", "3x3k3", db=book_3x3, positions=30
    )
    html = report._repr_html_()
    assert "Every graded move was best" not in html
    assert f"Every move the agent made was best, but {failed} failed" in html
