"""A policy's or a value function's score on an evaluation set (:mod:`ttt_solve.rl.evalset`).

* a **policy** (``kind="policy"``, the default) is handed each position on the board it was
  written for (``board=``: any of :data:`ttt_solve.agents.adapters.BOARDS`; ``"planes"`` is
  the environments' observation) and answers a move as the audit reads answers (a cell, a
  ``(row, col)`` pair, a name, PettingZoo's action on ``planes``). Each move is graded by the
  project's grading (:func:`ttt_solve.solver.value.grade`) against the set's labels: *best*
  (keeps the score: fastest win, slowest loss), *sound* (keeps the outcome) or a *blunder*.
  An answer that is no legal move (a crash, an illegal or unreadable answer) is a failure and
  counts as a blunder: the score never flatters.
* a **value function** (``kind="value"``) answers a number for the side to move; above
  ``threshold`` it says win, below ``-threshold`` loss, else draw; its value-sign accuracy is
  the share of positions where that is the set's value.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ttt_solve.agents.adapters import Adapter, CallableAgent
from ttt_solve.agents.engine import EngineFailure
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
    ``numpy.random``, seeded for each position from ``seed`` and the position's key)."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    scored = evalset if isinstance(evalset, EvalSet) else load(evalset)
    if split is not None:
        scored = scored.split(split)
    adapter = Adapter.make(board)
    records = scored.records
    if kind == "value":
        right = 0
        for record in records:
            position = Position.from_key(scored.rules, record["key"])
            estimate = float(function(adapter.encode(position)))
            said = "win" if estimate > threshold else "loss" if estimate < -threshold else "draw"
            right += said == record["value"]
        return EvalReport(kind, scored.checksum, len(records), sign_right=right)
    agent = CallableAgent(random.Random(seed), function, adapter)
    tally: dict[int, list[int]] = {}
    failures = 0
    for record in records:
        position = Position.from_key(scored.rules, record["key"])
        # reseeded per position, as the audit does: a function that draws from random or
        # numpy.random draws the same for a position whatever else the set holds
        agent.rng.seed(f"{seed}:{record['key']}")
        try:
            cell: int | None = agent.select_move(position)
        except EngineFailure:
            cell, failures = None, failures + 1
        verdict = grade_answer(record, cell)
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
