"""A policy's or a value function's score on an evaluation set (:mod:`ttt_solve.rl.evalset`).

* a **policy** (``kind="policy"``, the default) is handed each position on the board it was
  written for (``board=``: any of :data:`ttt_solve.agents.adapters.BOARDS`; ``"planes"`` is
  the environments' observation) and answers a move as the audit reads answers (a cell, a
  ``(row, col)`` pair, a name, PettingZoo's action on ``planes``). It is asked through the
  grading pipeline (:func:`ttt_solve.agents.grading.pose`), as ``ttt audit`` asks an agent,
  one position of the set at a time, in this process. Each move is graded by the
  project's grading (:func:`ttt_solve.solver.value.grade`) against the set's labels: *best*
  (keeps the score: fastest win, slowest loss), *sound* (keeps the outcome) or a *blunder*.
  An answer that is no legal move (a crash, an illegal or unreadable answer) is a failure and
  counts as a blunder: the score never flatters.
* a **value function** (``kind="value"``) answers a number for the side to move; above
  ``threshold`` it says win, below ``-threshold`` loss, else draw; its value-sign accuracy is
  the share of positions where that is the set's value. A value is no move, which the
  pipeline cannot pose: it is read here, and an answer that is no finite number (or an error
  raised) is a failure and counts as a wrong sign.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ttt_solve.agents.adapters import Adapter
from ttt_solve.agents.grading import pose
from ttt_solve.agents.makers import agent_maker
from ttt_solve.rl.evalset import EvalSet, load
from ttt_solve.solver.position import Position
from ttt_solve.solver.value import Grade, Outcome, Value, grade

KINDS = ("policy", "value")
DEFAULT_THRESHOLD = 1 / 3


@dataclass(frozen=True)
class PlyScore:
    """The moves graded at one ply: how many, how many were best, how many lost the value."""

    ply: int
    moves: int
    best: int
    lost: int


@dataclass(frozen=True)
class EvalReport:
    """A score on a set: ``positions`` scored; for a policy ``best`` (moves that were best),
    ``kept`` (moves that kept the value, best ones included), ``failures`` (no legal move),
    ``by_ply``; for a value function ``sign_right``. Accuracies are shares of ``positions``."""

    kind: str
    checksum: str
    positions: int
    best: int = 0
    kept: int = 0
    failures: int = 0
    sign_right: int = 0
    by_ply: tuple[PlyScore, ...] = field(default=())

    @property
    def best_move_accuracy(self) -> float | None:
        return self.best / self.positions if self.kind == "policy" and self.positions else None

    @property
    def value_kept(self) -> float | None:
        return self.kept / self.positions if self.kind == "policy" and self.positions else None

    @property
    def value_sign_accuracy(self) -> float | None:
        return self.sign_right / self.positions if self.kind == "value" and self.positions else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "set": self.checksum,
            "positions": self.positions,
            "best_move_accuracy": self.best_move_accuracy,
            "value_kept": self.value_kept,
            "failures": self.failures,
            "value_sign_accuracy": self.value_sign_accuracy,
            "by_ply": [vars(one) for one in self.by_ply],
        }

    def __repr__(self) -> str:
        if self.kind == "value":
            return (
                f"<EvalReport value function: sign right in {self.sign_right} of "
                f"{self.positions} positions>"
            )
        return (
            f"<EvalReport policy: best move in {self.best}, value kept in {self.kept} of "
            f"{self.positions} positions ({self.failures} failures)>"
        )


def _value_of(outcome: str, remoteness: int) -> Value:
    return Value(Outcome(outcome), remoteness)


def grade_answer(record: dict[str, Any], cell: int | None) -> Grade:
    """The grade of ``cell`` in a set's ``record`` (``None``, no legal move: a blunder)."""
    if cell is None or cell not in record["move_cells"]:
        return Grade.BLUNDER
    index = record["move_cells"].index(cell)
    move = _value_of(record["move_values"][index], record["move_remoteness"][index])
    return grade(_value_of(record["value"], record["remoteness"]), move)[0]


def evaluate(
    function: Callable[..., Any],
    evalset: EvalSet | str | Path,
    *,
    kind: str = "policy",
    board: str = "position",
    split: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    seed: int = 0,
) -> EvalReport:
    """Score ``function`` on ``evalset`` (a set or the path of its file), or on one ``split``
    of it; ``seed`` seeds the random generators the function may draw from (``random`` and
    ``numpy.random``, seeded for each position from ``seed`` and the position's key, as the
    audit seeds them)."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    scored = evalset if isinstance(evalset, EvalSet) else load(evalset)
    if split is not None:
        scored = scored.split(split)
    records = scored.records
    if kind == "value":
        return _score_values(function, scored, Adapter.make(board), threshold)
    maker = agent_maker(function, db=None, board=board)
    answers = pose(
        maker, None, scored.rules, [(record["key"], 1) for record in records], seed=seed, jobs=1
    )
    tally: dict[int, list[int]] = {}
    failures = 0
    for record, answer in zip(records, answers):
        failures += answer.failure is not None
        verdict = grade_answer(record, answer.cell)
        counts = tally.setdefault(record["ply"], [0, 0, 0])
        counts[0] += 1
        counts[1] += verdict is Grade.BEST
        counts[2] += verdict is Grade.BLUNDER
    by_ply = tuple(PlyScore(ply, *tally[ply]) for ply in sorted(tally))
    best = sum(one.best for one in by_ply)
    lost = sum(one.lost for one in by_ply)
    return EvalReport(
        kind, scored.checksum, len(records), best, len(records) - lost, failures, by_ply=by_ply
    )


def _score_values(
    function: Callable[..., Any], scored: EvalSet, adapter: Adapter, threshold: float
) -> EvalReport:
    """A value function's sign right or wrong in each position. The grading pipeline poses
    positions for moves; a value is no move, so it is read here, against the set's label. An
    answer that is no finite number (or an error raised) is a failure and counts as a wrong
    sign."""
    right = failures = 0
    for record in scored.records:
        position = Position.from_key(scored.rules, record["key"])
        try:
            estimate = float(function(adapter.encode(position)))
        except Exception:  # noqa: BLE001 - the function's own error: a failure, as a policy's
            estimate = math.nan
        if not math.isfinite(estimate):
            failures += 1
            continue
        said = "win" if estimate > threshold else "loss" if estimate < -threshold else "draw"
        right += said == record["value"]
    return EvalReport(
        "value", scored.checksum, len(scored.records), failures=failures, sign_right=right
    )
