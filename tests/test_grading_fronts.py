"""One crashing agent through every front that grades or plays it: the command line's audit,
curve, rating and tournament, the notebook's audit and curve, and the web's audit job. Each
counts the same failures, counts them against the grade, and goes on to the end."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import ttt_solve as ttt
from tests.lab_agents import buggy_agent, buggy_factory, crashes
from tests.test_agents import winner
from tests.test_audit import reachable_boards
from ttt_solve.agents.audit import Truth
from ttt_solve.book.reader import open_book
from ttt_solve.cli.main import ttt as ttt_command
from ttt_solve.solver.rules import Rules
from ttt_solve.web.audits import AuditJob, AuditRequest, job_json, run_audit

R3 = Rules(3, 3, 3)
SPEC = "py:tests.lab_agents:buggy_agent,board=grid"
FIGURES = ("asked", "moves", "failed_moves", "best", "sound", "blunders")


def command(*args: str) -> dict:
    result = CliRunner().invoke(ttt_command, [*args, "--json", "-q"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def figures(source: object) -> dict[str, object]:
    """The counts of a summary (an object) or of its JSON (a dict)."""
    if isinstance(source, dict):
        return {name: source[name] for name in (*FIGURES, "accuracy", "perfection")}
    out = {name: getattr(source, name) for name in FIGURES if name != "failed_moves"}
    out["failed_moves"] = source.failures_total  # type: ignore[attr-defined]
    out["accuracy"] = source.accuracy  # type: ignore[attr-defined]
    out["perfection"] = source.perfection  # type: ignore[attr-defined]
    return out


def web_job(db: str, **fields: object) -> dict:
    """The web's audit job, run as its worker runs it, as ``/api/audits/{id}`` gives it. The
    server takes only the project's agents from a visitor: the lab's is put in afterwards."""
    request = AuditRequest(rules=R3, agent="random", **fields)  # type: ignore[arg-type]
    object.__setattr__(request, "agent", SPEC)
    job = AuditJob(1, request, status="done")
    with open_book(db) as book:
        job.report, job.costly, job.costly_count, job.blunders = run_audit(
            Truth(book, R3), request, job.progress
        )
    return job_json(job)["result"]


@pytest.fixture(scope="module")
def positions_audit(book_3x3: str) -> dict:
    return command("audit", "--agent", SPEC, "--db", book_3x3)


def lab_grid(board: str) -> list[list[str]]:
    """A brute-force board (``"x.o......"``) as the lab's agent is handed it."""
    symbol = {"x": "X", "o": "O", ".": " "}
    return [[symbol[board[3 * r + c]] for c in range(3)] for r in range(3)]


def test_the_audit_counts_every_failure_against_the_grade(positions_audit):
    data = positions_audit
    # Recounted here: the boards of every reachable non-terminal position that crash it.
    boards = [b for b in reachable_boards() if not winner(b) and "." in b]
    assert len(boards) == 4520
    assert data["failed_moves"] == sum(crashes(lab_grid(b)) for b in boards)
    assert data["failed_moves"] > 0 and data["failed_moves"] == sum(data["failures"].values())
    assert data["failures"]["crash"] == data["failed_moves"]
    assert data["asked"] == data["moves"] + data["failed_moves"] == 4520
    assert data["accuracy"] == pytest.approx((data["best"] + data["sound"]) / data["asked"])
    assert data["perfection"] == pytest.approx(data["best"] / data["asked"])
    made = (data["best"] + data["sound"]) / data["moves"]
    assert data["accuracy_of_moves_made"] == pytest.approx(made) and made > data["accuracy"]
    # Ply 3 (six cells empty) failed whole: its row is kept, with its failures.
    (ply3,) = [row for row in data["by_ply"] if row["ply"] == 3]
    assert ply3["moves"] == 0 and ply3["failures"] > 0 and ply3["accuracy"] == 0.0


def test_every_front_gives_the_same_counts_in_positions(book_3x3, positions_audit):
    expected = figures(positions_audit)
    notebook = ttt.audit(buggy_agent, "3x3k3", db=book_3x3, board="grid")
    assert figures(notebook.summary) == expected
    assert figures(web_job(book_3x3)) == expected
    curve = command(
        "curve", "--agent", SPEC, "--vary", "timeout=30,60", "--seeds", "1", "--db", book_3x3
    )
    for point in curve["curves"][0]["points"]:
        (run,) = point["runs"]
        assert figures(run) == expected
        assert point["failed_moves"] == expected["failed_moves"] and not point["kept_value"]
    notebook_curve = ttt.curve(
        buggy_factory, "3x3k3", {"level": [1, 2]}, db=book_3x3, seeds=1, board="grid"
    )
    for point in notebook_curve.curves[0].points:
        assert figures(point.runs[0].summary) == expected


def test_games_fronts_forfeit_and_agree(book_3x3):
    cli = command(
        "audit", "--agent", SPEC, "--games", "10", "--opponent", "random", "--db", book_3x3
    )
    # As O the agent always meets six empty cells at its second move: it forfeits every such
    # game (if it did not crash before), and the forfeits are losses.
    as_o = [game for game in cli["games"] if game["agent_side"] == "o"]
    assert len(cli["games"]) == 10 and all(g["forfeit"] == "agent" for g in as_o)
    assert all(g["outcome"] == "loss" for g in cli["games"] if g["forfeit"] == "agent")
    assert cli["failed_moves"] == sum(g["forfeit"] == "agent" for g in cli["games"])
    notebook = ttt.audit(
        buggy_agent, "3x3k3", db=book_3x3, board="grid", games=10, opponent="random"
    )
    web = web_job(book_3x3, mode="games", games=10, opponent="random")
    for other in (notebook.to_dict(), web):
        assert figures(other) == figures(cli)
        assert other["games"] == cli["games"]


def test_a_tournament_plays_on_through_forfeits(book_3x3):
    data = command(
        "tournament", "--agents", "random,heuristic", "--agent", SPEC, "--games", "6",
        "--db", book_3x3,
    )  # fmt: skip
    buggy = next(s for s in data["standings"] if s["agent"] == SPEC)
    assert buggy["games"] == 12  # every game was played
    assert buggy["forfeits"] >= 6 and buggy["lost"] >= buggy["forfeits"]  # at least as O
    against = [p for p in data["pairings"] if SPEC in (p["a"], p["b"])]
    assert (
        sum(p["b_forfeits"] if p["b"] == SPEC else p["a_forfeits"] for p in against)
        == (buggy["forfeits"])
    )
    text = CliRunner().invoke(
        ttt_command,
        ["tournament", "--agents", "random,heuristic", "--agent", SPEC, "--games", "6",
         "--db", book_3x3, "-q"],
    )  # fmt: skip
    assert text.exit_code == 0, text.output
    assert f"{SPEC} forfeited {buggy['forfeits']} of its 12 games" in text.output


def test_a_rating_plays_on_through_forfeits_and_audits_as_the_audit(book_3x3, tmp_path):
    import shutil

    db = str(tmp_path / "ladder.sqlite")
    shutil.copy(book_3x3, db)
    data = command("rate", "--agent", SPEC, "--games", "2", "--positions", "all", "--db", db)
    (agent,) = data["agents"]
    assert agent["played"] == 2 * 9 and agent["forfeits"] >= 9  # at least every game as O
    audit = command("audit", "--agent", SPEC, "--db", db)
    assert agent["failed_moves"] == audit["failed_moves"]
    assert agent["accuracy"] == pytest.approx(audit["accuracy"])
    assert agent["perfection"] == pytest.approx(audit["perfection"])
