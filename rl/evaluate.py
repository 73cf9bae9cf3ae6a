"""A policy's or a value function's score on an evaluation set (:mod:`ttt_solve.rl.evalset`).

* a **policy** (``kind="policy"``, the default) is handed each position on the board it was
  written for (``board=``: any of :data:`ttt_solve.agents.adapters.BOARDS`; ``"planes"`` is
  the environments' observation) and answers a move as the audit reads answers (a cell, a
  ``(row, col)`` pair, a name, PettingZoo's action on ``planes``). It is asked through the
  grading pipeline (:func:`ttt_solve.agents.grading.pose`), as ``ttt audit`` asks an agent,
  one position of the set at a time, in a process of its own bounded by ``timeout`` and
  ``memory`` as an audited agent is (``timeout=None``: in this one). Each move is graded by the
  project's grading (:func:`ttt_solve.solver.value.grade`) against the set's labels: *best*
  (keeps the score: fastest win, slowest loss), *sound* (keeps the outcome) or a *blunder*.
  An answer that is no legal move (a crash, an illegal or unreadable answer) is a failure and
  counts as a blunder: the score never flatters.
* a **value function** (``kind="value"``) answers a number for the side to move; above
  ``threshold`` it says win, below ``-threshold`` loss, else draw; its value-sign accuracy is
  the share of positions where that is the set's value. A value is no move, which the
  pipeline cannot pose: it is read here (its calls bounded as a policy's are), and an answer
  that is no finite number (or an error raised, ``sys.exit`` called, the limits passed) is a
  failure and counts as a wrong sign.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ttt_solve.agents.adapters import BOARDS, Adapter, describe
from ttt_solve.agents.engine import EngineFailure, FailureKind
from ttt_solve.agents.grading import pose
from ttt_solve.agents.isolation import (
    DEFAULT_MEMORY_MIB,
    DEFAULT_MOVE_SECONDS,
    AgentProcess,
    check_memory,
)
from ttt_solve.agents.makers import agent_maker
from ttt_solve.errors import TttError
from ttt_solve.rl.evalset import EvalSet, EvalSetError, load
from ttt_solve.solver.position import Position
from ttt_solve.solver.value import Grade, Outcome, Value, grade

KINDS = ("policy", "value")
DEFAULT_THRESHOLD = 1 / 3


class EvaluationError(TttError, ValueError):
    """An argument of :func:`evaluate` it cannot score with: a kind, a board, a threshold."""


@dataclass(frozen=True)
class PlyScore:
    """The moves graded at one ply: how many, how many were best, how many lost the value."""

    ply: int
    moves: int
    best: int
    lost: int


@dataclass(frozen=True)
class EvalReport:
    """A score on a set: ``name`` the function scored, ``game`` the set's, ``positions``
    scored; for a policy ``best`` (moves that were best), ``kept`` (moves that kept the value,
    best ones included), ``failures`` (no legal move), ``by_ply``; for a value function
    ``sign_right``. Accuracies are shares of ``positions``."""

    kind: str
    name: str
    game: str
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
            "name": self.name,
            "game": self.game,
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
                f"<EvalReport of {self.name} (a value function) on {self.game}: sign right in "
                f"{self.sign_right} of {self.positions} positions ({self.failures} failures)>"
            )
        return (
            f"<EvalReport of {self.name} on {self.game}: best move in {self.best}, value kept "
            f"in {self.kept} of {self.positions} positions ({self.failures} failures)>"
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
    timeout: float | None = DEFAULT_MOVE_SECONDS,
    memory: float | None = DEFAULT_MEMORY_MIB,
    checksum: str | None = None,
    name: str | None = None,
) -> EvalReport:
    """Score ``function`` on ``evalset`` (a set or the path of its file), or on one ``split``
    of it; ``seed`` seeds the random generators the function may draw from (``random`` and
    ``numpy.random``, seeded for each position from ``seed`` and the position's key, as the
    audit seeds them).

    ``timeout`` and ``memory`` bound each call of the function as ``ttt.audit`` bounds an
    agent's move (``None``: the function runs in this process, unbounded); a call past them
    is a failure. ``checksum``: the SHA-256 the set must have (a set in a file named as a
    published set is held to that set's anyway, :data:`~ttt_solve.rl.evalset.PUBLISHED`).
    ``name`` names the function in the report (by default its qualified name)."""
    if kind not in KINDS:
        raise EvaluationError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    if board not in BOARDS:
        raise EvaluationError(f"board {board!r} is not one of {', '.join(BOARDS)}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise EvaluationError(f"threshold={threshold!r}: give a number, 0 or more")
    if not (math.isfinite(threshold) and threshold >= 0):
        raise EvaluationError(
            f"threshold={threshold!r}: a value above it says win, below its negation loss; "
            f"give a finite number, 0 or more"
        )
    check_memory(memory)
    scored = evalset if isinstance(evalset, EvalSet) else load(evalset, checksum=checksum)
    if isinstance(evalset, EvalSet) and checksum is not None and checksum != scored.checksum:
        raise EvalSetError(
            f"the set given has sha256 {scored.checksum}, not {checksum}: it is another set"
        )
    if split is not None:
        scored = scored.split(split)
    label = name or describe(function)
    if kind == "value":
        value_function = _ValueFunction(function, Adapter.make(board), label, timeout, memory)
        try:
            return _score_values(value_function, scored, threshold)
        finally:
            value_function.close()
    records = scored.records
    maker = agent_maker(function, db=None, board=board, timeout=timeout, memory=memory, name=label)
    answers = pose(
        maker,
        None,
        scored.rules,
        [(Position.from_key(scored.rules, record["key"]), 1) for record in records],
        seed=seed,
        jobs=1,
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
        kind,
        label,
        scored.rules.name,
        scored.checksum,
        len(records),
        best,
        len(records) - lost,
        failures,
        by_ply=by_ply,
    )


class _ValueFunction:
    """A value function called as an agent's move is: in a process of its own when it has a
    ``timeout`` (killed past it), else in this one; in either, an exception, ``sys.exit`` or
    ``os._exit`` is that call's failure (:class:`EngineFailure`), never the caller's end."""

    def __init__(
        self,
        function: Callable[..., Any],
        adapter: Adapter,
        name: str,
        timeout: float | None,
        memory: float | None,
    ) -> None:
        self.function = function
        self.adapter = adapter
        self.name = name
        self.timeout = timeout
        self.process = None
        if timeout is not None:
            self.process = AgentProcess(name, self.call, random.Random(0), memory)

    def value(self, position: Position) -> float:
        """The function's number for ``position``; a failure raises :class:`EngineFailure`."""
        if self.process is not None:
            return self.process.number(position, self.timeout)
        return self.call(position)

    def call(self, position: Position) -> float:
        from ttt_solve.agents.plugin import PluginFailedError, plugin_code

        def failed(detail: str) -> EngineFailure:
            return EngineFailure(
                FailureKind.CRASH, position.rules, position.x, position.o, detail, self.name
            )

        try:
            return plugin_code(
                self.name, lambda: float(self.function(self.adapter.encode(position)))
            )
        except PluginFailedError as error:
            raise failed(str(error)) from None
        except KeyboardInterrupt:
            if self.process is None:
                raise  # the user's Ctrl-C (plugin_code tells it from one the function raised)
            raise failed(f"{self.name} raised KeyboardInterrupt") from None
        except BaseException as error:  # noqa: BLE001 - the function's own code ran
            raise failed(f"{self.name} raised {type(error).__name__}: {error}") from None

    def close(self) -> None:
        if self.process is not None:
            self.process.close()


def _score_values(value_function: _ValueFunction, scored: EvalSet, threshold: float) -> EvalReport:
    """A value function's sign right or wrong in each position. The grading pipeline poses
    positions for moves; a value is no move, so it is read here, against the set's label. An
    answer that is no finite number (or a failure of the call) is a failure and counts as a
    wrong sign."""
    right = failures = 0
    for record in scored.records:
        position = Position.from_key(scored.rules, record["key"])
        try:
            estimate = value_function.value(position)
        except EngineFailure:
            estimate = math.nan
        if not math.isfinite(estimate):
            failures += 1
            continue
        said = "win" if estimate > threshold else "loss" if estimate < -threshold else "draw"
        right += said == record["value"]
    return EvalReport(
        "value",
        value_function.name,
        scored.rules.name,
        scored.checksum,
        len(scored.records),
        failures=failures,
        sign_right=right,
    )
