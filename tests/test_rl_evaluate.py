"""``ttt.evaluate`` on a shipped set: the figures of known policies, recounted here from the
set's own labels (every move's value), and failures counted as lost moves."""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import pytest

from ttt_solve.rl.evalset import EvalSetError, load
from ttt_solve.rl.evaluate import EvaluationError, evaluate
from ttt_solve.solver.position import Position

SET_3X3 = Path(__file__).parent.parent / "data" / "evalsets" / "3x3k3-seed0-n2000.jsonl"
RANK = {"loss": 0, "draw": 1, "win": 2}


@pytest.fixture(scope="module")
def evalset():
    return load(SET_3X3)


def recount(records, choose):
    """(best, kept, lost by ply) of ``choose(record) -> cell`` by brute force: a move is best
    when no other move has a better outcome or, of the same outcome, a better remoteness
    (a faster win, a slower loss; all draws are equal); it keeps the value when its outcome is
    the position's."""
    best = kept = 0
    lost: dict[int, int] = {}
    for record in records:
        cell = choose(record)
        index = record["move_cells"].index(cell)
        outcome = record["move_values"][index]

        # the set's move values are for the mover
        scores = [
            (RANK[value], {"loss": far, "draw": 0, "win": -far}[value])
            for value, far in zip(record["move_values"], record["move_remoteness"])
        ]
        best += scores[index] == max(scores)
        kept += outcome == record["value"]
        lost[record["ply"]] = lost.get(record["ply"], 0) + (outcome != record["value"])
    return best, kept, lost


def test_a_perfect_policy_scores_everything(evalset):
    labels = {r["key"]: r for r in evalset.records}
    report = evaluate(lambda p: labels[p.key]["best_moves"][0], evalset)
    assert report.positions == len(evalset) == 431  # every decisive 3x3 position
    assert report.best == report.kept == 431 and report.failures == 0
    assert report.best_move_accuracy == report.value_kept == 1.0
    assert all(one.best == one.moves and one.lost == 0 for one in report.by_ply)


def test_first_empty_matches_a_recount_of_the_labels(evalset):
    report = evaluate(lambda p: p.legal_moves()[0], evalset)
    best, kept, lost = recount(evalset.records, lambda r: min(r["move_cells"]))
    assert (report.best, report.kept, report.failures) == (best, kept, 0)
    assert {one.ply: one.lost for one in report.by_ply} == lost
    # the policy is far from perfect on decisive positions: the recount is no trivial one
    assert 0 < best < kept < len(evalset)


def test_crashes_and_illegal_answers_count_as_lost_moves(evalset):
    def crashing_on_odd_keys(position: Position) -> int:
        if position.key % 2:
            raise RuntimeError("no move for odd keys")
        return position.legal_moves()[0]

    report = evaluate(crashing_on_odd_keys, evalset)
    odd = [r for r in evalset.records if r["key"] % 2]
    even = [r for r in evalset.records if not r["key"] % 2]
    best, kept, _ = recount(even, lambda r: min(r["move_cells"]))
    assert report.failures == len(odd) > 0
    assert (report.best, report.kept) == (best, kept)
    lost_by_ply: dict[int, int] = {}
    for record in odd:
        lost_by_ply[record["ply"]] = lost_by_ply.get(record["ply"], 0) + 1
    _, _, lost_even = recount(even, lambda r: min(r["move_cells"]))
    for ply, count in lost_even.items():
        lost_by_ply[ply] = lost_by_ply.get(ply, 0) + count
    assert {one.ply: one.lost for one in report.by_ply} == lost_by_ply
    # an occupied cell is an illegal answer: a failure too
    occupied = evaluate(lambda p: (p.x | p.o).bit_length() - 1, evalset)
    assert occupied.failures == len(evalset) and occupied.kept == occupied.best == 0


def test_a_value_function_failure_is_a_wrong_sign(evalset):
    labels = {r["key"]: r for r in evalset.records}
    signs = {"win": 1.0, "draw": 0.0, "loss": -1.0}
    truth = evaluate(lambda p: signs[labels[p.key]["value"]], evalset, kind="value")
    assert truth.sign_right == len(evalset) and truth.failures == 0

    def nan_on_draws(position: Position) -> float:
        value = labels[position.key]["value"]
        return math.nan if value == "draw" else signs[value]

    draws = sum(r["value"] == "draw" for r in evalset.records)
    report = evaluate(nan_on_draws, evalset, kind="value")
    assert report.failures == draws > 0 and report.sign_right == len(evalset) - draws

    def raising(position: Position) -> float:
        raise ValueError("no value")

    assert evaluate(raising, evalset, kind="value").sign_right == 0


# -- what ttt.evaluate refuses, and what it holds against -------------------------------------


@pytest.mark.parametrize("threshold", [math.nan, -1, math.inf, "0.3", True])
def test_a_threshold_that_is_no_finite_number_from_zero_is_refused(evalset, threshold):
    with pytest.raises(EvaluationError, match="threshold=") as refused:
        evaluate(lambda position: 0.0, evalset, kind="value", threshold=threshold)
    assert "\n" not in str(refused.value)


def _exits(position):  # noqa: ANN001, ANN202
    sys.exit(3)


def _first_of(evalset):  # noqa: ANN001, ANN202
    return evalset.records[0]["key"]


@pytest.mark.parametrize("timeout", [None, 10], ids=["in this process", "in its own"])
def test_a_value_function_that_calls_sys_exit_fails_its_calls(evalset, timeout):
    report = evaluate(_exits, evalset, kind="value", timeout=timeout)
    assert report.failures == report.positions == len(evalset) and report.sign_right == 0


def test_a_policy_and_a_value_function_that_hang_are_stopped(evalset):
    hangs_at = _first_of(evalset)

    def policy(position):  # noqa: ANN001, ANN202
        while position.key == hangs_at:
            time.sleep(1)
        return position.legal_moves()[0]

    def value(position):  # noqa: ANN001, ANN202
        while position.key == hangs_at:
            time.sleep(1)
        return 0.0

    started = time.monotonic()
    assert evaluate(policy, evalset, timeout=0.5).failures == 1
    assert evaluate(value, evalset, kind="value", timeout=0.5).failures == 1
    assert time.monotonic() - started < 60


def test_the_report_names_the_function(evalset):
    def first_empty(position):  # noqa: ANN001, ANN202
        return position.legal_moves()[0]

    report = evaluate(first_empty, evalset)
    assert repr(report).startswith("<EvalReport of test_the_report_names_the_function.<locals>")
    assert "first_empty on 3x3 k=3: best move in" in repr(report)
    assert evaluate(first_empty, evalset, name="mine").to_dict()["name"] == "mine"
    value = evaluate(lambda position: 0.0, evalset, kind="value", name="zero")
    assert repr(value).startswith("<EvalReport of zero (a value function) on 3x3 k=3: sign")


# -- sets that are not what they say ------------------------------------------------------------


def _lines() -> list[dict]:
    return [json.loads(line) for line in SET_3X3.read_text().splitlines()]


def _write(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_a_published_set_whose_label_changed_is_refused(tmp_path):
    records = _lines()
    records[5]["value"] = {"win": "draw", "draw": "loss", "loss": "win"}[records[5]["value"]]
    changed = _write(tmp_path / SET_3X3.name, records)
    with pytest.raises(EvalSetError, match="not b1ab1c36.*published set 3x3k3-seed0-n2000"):
        load(changed)
    renamed = _write(tmp_path / "mine.jsonl", records)  # another set: loads, under its name
    assert load(renamed).checksum != load(SET_3X3).checksum
    with pytest.raises(EvalSetError, match="the checksum asked for"):
        evaluate(lambda p: p.legal_moves()[0], renamed, checksum=load(SET_3X3).checksum)


def test_a_parquet_file_is_held_to_the_checksum_in_its_metadata(tmp_path):
    pa = pytest.importorskip("pyarrow", reason="pip install -e '.[notebook]'")
    import pyarrow.parquet as pq

    load(SET_3X3).write_parquet(tmp_path / "set.parquet")
    table = pq.read_table(tmp_path / "set.parquet")
    records = table.to_pylist()
    records[0]["split"] = {"train": "test", "test": "train"}[records[0]["split"]]
    changed = pa.Table.from_pylist(records).replace_schema_metadata(table.schema.metadata)
    pq.write_table(changed, tmp_path / "changed.parquet")
    with pytest.raises(EvalSetError, match="the checksum in its metadata"):
        load(tmp_path / "changed.parquet")


def _with(field: str, value, index: int = 1) -> list[dict]:  # noqa: ANN001
    records = _lines()[:3]
    records[index][field] = value
    return records


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    "content, words",
    [
        (_with("key", 2**200), "(61 characters) is no key of 3x3 k=3"),
        (_with("game", "4x4k3"), "a set holds one game"),
        (_with("game", "3x3k99", 0), "game 3x3k99: "),
        (_with("game", ["3x3k3"], 0), "is no game"),
        (_with("ply", "2"), "ply '2' is not its position's"),
        (_with("value", None), "value None is not win, draw or loss"),
        (_with("remoteness", -1), "remoteness -1 is no number of plies"),
        (_with("move_cells", 3), "move_cells 3 are not its position's legal moves"),
        (_with("move_values", ["win"]), "move_values ['win'] is no list of one entry per move"),
        (_with("best_moves", [99]), "best_moves [99] are not among its legal moves"),
        (_with("split", "validation"), "split 'validation' is not train or test"),
        (_with("position", "xxx/ooo/..."), "is not the position of its key"),
        ([3], "a record holds exactly the fields"),
        ([], "it holds no record"),
        (_nested(100_000), "it nests too deep"),
        ("{not json", "is not an evaluation set: Expecting property name"),
    ],
    ids=lambda value: str(value)[:30],
)
def test_a_malformed_set_is_one_line_naming_the_file(tmp_path, content, words):
    path = tmp_path / "bad.jsonl"
    if isinstance(content, str):
        path.write_text(content + "\n")
    else:
        _write(path, content)
    with pytest.raises(EvalSetError) as refused:
        evaluate(lambda p: p.legal_moves()[0], path)
    message = str(refused.value)
    assert message.startswith(str(path)) and words in message and "\n" not in message, message
    assert len(message) < 400, message
