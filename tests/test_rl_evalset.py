"""Evaluation sets (``ttt evalset``) and ``ttt.evaluate``: labels from the book, seeded and
frozen, split by key, the same set in JSON lines and Parquet, and honest scores."""

from __future__ import annotations

import math
import random

import pytest
from click.testing import CliRunner

import ttt_solve as ttt
from ttt_solve.book.reader import open_book
from ttt_solve.cli.main import ttt as ttt_command
from ttt_solve.rl.evalset import TEST_SHARE, EvalSetError, build, load
from ttt_solve.rl.evaluate import evaluate
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

R3, R443 = Rules(3, 3, 3), Rules(4, 4, 3)


def decisive_by_brute_force(book, rules: Rules) -> set[int]:
    """Every canonical position of the book that is not over and has a move that loses."""
    found = set()
    for row in book.rows(rules):
        position = Position.from_key(rules, row[1])
        if position.is_terminal:
            continue
        entry = book.find(position)
        if any(m.value.outcome is not entry.value.outcome for m in book.moves(position)):
            found.add(position.key)
    return found


def test_a_whole_game_and_its_labels(book_small):
    with open_book(book_small) as book:
        made = build(book, R3, count=10_000, seed=0)
        assert {r["key"] for r in made.records} == decisive_by_brute_force(book, R3)
        for record in made.records:
            position = Position.parse(record["position"], R3)
            assert position.key == record["key"] and record["ply"] == position.ply
            entry = book.find(position)
            assert (record["value"], record["remoteness"]) == (
                entry.value.outcome.value,
                entry.value.remoteness,
            )
            assert record["best_moves"] == sorted(entry.best_moves)
            moves = sorted(book.moves(position), key=lambda m: m.cell)
            assert record["move_cells"] == [m.cell for m in moves]
            assert record["move_values"] == [m.value.outcome.value for m in moves]
            assert record["move_remoteness"] == [m.value.remoteness for m in moves]
    assert len(made) == 431
    assert [(r["ply"], r["key"]) for r in made.records] == sorted(
        (r["ply"], r["key"]) for r in made.records
    )


def test_seeded_frozen_and_split_by_key(book_small):
    with open_book(book_small) as book:
        one = build(book, R443, count=400, seed=1)
        again = build(book, R443, count=400, seed=1)
        other = build(book, R443, count=400, seed=2)
    assert one.checksum == again.checksum and one.checksum != other.checksum
    assert len(one) == len(other) == 400
    splits = {r["key"]: r["split"] for r in one.records}
    shared = [r for r in other.records if r["key"] in splits]
    assert all(splits[r["key"]] == r["split"] for r in shared)
    test = sum(r["split"] == "test" for r in one.records)
    sd = math.sqrt(400 * TEST_SHARE * (1 - TEST_SHARE))
    assert abs(test - 400 * TEST_SHARE) < 4 * sd
    assert len(one.split("test")) == test and len(one.split("train")) == 400 - test


def test_jsonl_and_parquet_hold_the_same_set(book_3x3, tmp_path):
    pytest.importorskip("pyarrow", reason="pip install -e '.[notebook]'")
    with open_book(book_3x3) as book:
        made = build(book, R3, count=100, seed=3)
    made.write_jsonl(tmp_path / "set.jsonl")
    made.write_parquet(tmp_path / "set.parquet")
    assert load(tmp_path / "set.jsonl").checksum == made.checksum
    assert load(tmp_path / "set.parquet").checksum == made.checksum
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set.jsonl", "set.parquet"]
    (tmp_path / "bad.jsonl").write_text('{"game": "3x3k3"}\n')
    with pytest.raises(EvalSetError, match="bad.jsonl is not an evaluation set"):
        load(tmp_path / "bad.jsonl")


def test_cli_writes_the_set_and_prints_its_checksum(book_small, tmp_path):
    result = CliRunner().invoke(
        ttt_command,
        ["evalset", "--size", "4", "--win", "3", "--db", book_small, "--count", "50"]
        + ["--seed", "4", "--out", str(tmp_path), "--format", "jsonl", "-q"],
    )
    assert result.exit_code == 0, result.output
    path = tmp_path / "4x4k3-seed4-n50.jsonl"
    checksum = load(path).checksum
    assert f"sha256 {checksum}" in result.output and f"wrote {path}" in result.output
    with open_book(book_small) as book:
        assert build(book, R443, count=50, seed=4).checksum == checksum
    missing = CliRunner().invoke(
        ttt_command, ["evalset", "--size", "5", "--win", "4", "--db", book_small]
    )
    assert missing.exit_code != 0 and "holds no 5x5 k=4 game" in missing.output
    assert "Traceback" not in missing.output


def test_scores(book_3x3):
    with open_book(book_3x3) as book:
        made = build(book, R3, count=1000, seed=0)
    labels = {r["key"]: r for r in made.records}
    perfect = evaluate(lambda p: labels[p.key]["best_moves"][0], made)
    assert perfect.best_move_accuracy == perfect.value_kept == 1.0 and perfect.failures == 0
    assert sum(one.moves for one in perfect.by_ply) == len(made)
    # a uniformly random policy: its best-move accuracy is near the mean share of best moves
    rng = random.Random(5)
    runs = [
        evaluate(lambda p: rng.choice(p.legal_moves()), made).best_move_accuracy for _ in range(5)
    ]
    expected = sum(len(r["best_moves"]) / len(r["move_cells"]) for r in made.records) / len(made)
    assert abs(sum(runs) / 5 - expected) < 0.03

    # failures count as blunders: the score never flatters
    def taken_or_off(position: Position) -> int:
        occupied = position.x | position.o
        return occupied.bit_length() - 1 if occupied else 99

    taken = evaluate(taken_or_off, made)
    assert taken.failures == len(made) and taken.best == 0 and taken.kept == 0
    assert all(one.lost == one.moves for one in taken.by_ply)
    # the planes board reads PettingZoo's actions
    planes = evaluate(
        lambda obs: int(obs["action_mask"].argmax()), made, board="planes", split="test"
    )
    assert planes.positions == len(made.split("test")) and planes.failures == 0
    # value functions
    truth = evaluate(
        lambda p: {"win": 1, "draw": 0, "loss": -1}[labels[p.key]["value"]], made, kind="value"
    )
    assert truth.value_sign_accuracy == 1.0 and truth.best_move_accuracy is None
    draws = sum(r["value"] == "draw" for r in made.records)
    assert evaluate(lambda p: 0.0, made, kind="value").sign_right == draws


def test_ttt_evaluate_is_the_session_name(book_3x3, tmp_path):
    with open_book(book_3x3) as book:
        build(book, R3, count=20, seed=0).write_jsonl(tmp_path / "s.jsonl")
    report = ttt.evaluate(lambda p: p.legal_moves()[0], str(tmp_path / "s.jsonl"))
    assert report.positions == 20 and report.to_dict()["set"] == load(tmp_path / "s.jsonl").checksum


def test_a_policy_drawing_from_random_is_seeded_per_position(book_3x3):
    with open_book(book_3x3) as book:
        made = build(book, R3, count=1000, seed=0)

    def drawing(position: Position) -> int:
        return random.choice(position.legal_moves())

    first = evaluate(drawing, made, seed=1)
    assert evaluate(drawing, made, seed=1) == first
    assert evaluate(drawing, made, seed=2) != first
    lowest = evaluate(lambda p: p.legal_moves()[0], made)
    assert (first.best, first.kept) != (lowest.best, lowest.kept)
