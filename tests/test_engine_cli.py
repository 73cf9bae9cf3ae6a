"""``ttt audit`` of engines that fail: failures by kind, with their positions, in every format."""

from __future__ import annotations

import json
import re

from tests.support import run_audit, run_audit_games
from tests.test_engine import broken, reference


def test_text_report_counts_failures_by_kind_and_shows_positions(book_3x3):
    spec = broken("--fail illegal:0 --fail garbage:1 --fail crash:2")
    result = run_audit("--agent", spec, "--db", book_3x3, "-q", "--per-class")
    assert result.exit_code == 0, result.output
    out = result.output
    rows = dict(re.findall(r"│ (\S.*?) +│ (.*?) +│", out))
    assert rows["failed moves (count against accuracy)"] == "82 (16 up to symmetry)"
    assert rows["positions asked"] == "4,520 (627 up to symmetry)"
    assert [rows[f"failures {kind}"] for kind in ("illegal", "timeout", "garbage", "crash")] == [
        "1",
        "0",
        "9",
        "72",
    ]
    assert rows["moves graded"] == "4,438 (611 up to symmetry)"
    assert "#1 ply 0, X to move, .../.../... (stands for 1): illegal: played 9, off the 3x3" in out
    assert "garbage: answered 'I think b2 is nice'" in out
    assert "the first 10:" in out


def test_an_engine_that_never_fails_still_shows_zero_failures(book_3x3):
    out = run_audit("--agent", reference(), "--db", book_3x3, "-q", "--per-class").output
    assert re.search(r"failed moves \(count against accuracy\) +│ 0 \(0 up to symmetry\)", out)
    assert (
        "every graded move was best" in out
        and "engine failures (" not in out.split("every graded move")[1]
    )
    assert "engine failures" not in run_audit("--agent", "random", "--db", book_3x3, "-q").output


def test_json_and_games_mode(book_3x3):
    data = json.loads(
        run_audit(
            "--agent",
            broken("--fail timeout:2", timeout=0.2),
            "--db",
            book_3x3,
            "--json",
            "-q",
            "--per-class",
        ).output
    )
    assert data["failures"] == {"illegal": 0, "timeout": 72, "garbage": 0, "crash": 0}
    assert len(data["failed"]) == 12 and data["moves"] == 4520 - 72
    assert {f["kind"] for f in data["failed"]} == {"timeout"} and all(
        f["ply"] == 2 and f["to_move"] == "x" for f in data["failed"]
    )

    result = run_audit_games(broken("--fail crash:3"), book_3x3, 4, "--json")
    data = json.loads(result.output)
    assert [g["forfeit"] for g in data["games"]] == [None, "agent"] * 2
    assert [g["outcome"] for g in data["games"]][1::2] == ["loss", "loss"]
    assert [g["failure"] for g in data["games"]] == [None, "crash"] * 2
    assert data["failures"]["crash"] == 2 and len(data["failed"]) == 2

    text = run_audit_games(broken("--fail crash:3"), book_3x3, 4).output
    assert "The agent forfeited 2 of 4 games by failing a move (counted as lost)" in text
    assert re.search(r"agent as O +│ +2 │ +0 │ +0 │ +2 │ +2 │", text), text
