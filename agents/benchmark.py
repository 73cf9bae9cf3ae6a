"""An agent's score on a benchmark set (:mod:`ttt_solve.agents.benchset`), cell by cell.

The agent is asked through the grading pipeline (:func:`ttt_solve.agents.grading.pose`), as
``ttt audit`` asks it: once in each position of the set, as the set poses it, its generator
seeded from the run's seed and the position. Each answer is graded by the project's grading
of moves (:func:`ttt_solve.solver.value.grade`) against the set's values of that position's
moves; an answer that is no legal move (an exception, a timeout, an occupied or unreadable
cell) counts as a miss, as in every audit (:class:`ttt_solve.agents.audit.Summary`'s
accuracy and perfection are these figures over the positions an audit asks).

Two figures in each cell of each split, each a share of the cell's positions with its 95%
Wilson interval (the positions are drawn independently):

* **value kept**: the move keeps the position's outcome (a win stays a win, a draw a draw;
  every move of a lost position does), the rule of Pons's Connect-4 benchmark;
* **best**: the move keeps the outcome at the best remoteness (the fastest win, the slowest
  loss).

:func:`random_expectation` gives what a uniformly random mover scores, exactly.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ttt_solve.agents.audit import Failure
from ttt_solve.agents.benchset import (
    DIFFICULTIES,
    SPLITS,
    STAGES,
    BenchmarkSet,
    BenchmarkSetError,
    Grid,
    Item,
)
from ttt_solve.agents.engine import FailureKind
from ttt_solve.agents.grading import Answer, pose
from ttt_solve.agents.intervals import Interval, wilson_interval
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Grade, Value, grade

ALL = "all"
"""The stage and difficulty of a split's total over its cells."""

Progress = Callable[[int, int], None]


class CellScore(NamedTuple):
    """One cell of one split: the positions asked, how many moves kept the value, how many were
    best, how many failed (counted as misses in both)."""

    split: str
    stage: str
    difficulty: str
    positions: int
    kept: int
    best: int
    failed: int

    @property
    def value_kept(self) -> Interval:
        return wilson_interval(self.kept, self.positions)

    @property
    def best_share(self) -> Interval:
        return wilson_interval(self.best, self.positions)

    def to_dict(self) -> dict[str, Any]:
        kept, best = self.value_kept, self.best_share
        return {
            **self._asdict(),
            "value_kept": kept.mean if self.positions else None,
            "value_kept_interval": [kept.low, kept.high],
            "best_share": best.mean if self.positions else None,
            "best_interval": [best.low, best.high],
        }


def _total(split: str, cells: Sequence[CellScore]) -> CellScore:
    """A split's figures over its cells (each position is in one cell of a split)."""
    mine = [cell for cell in cells if cell.split == split]
    return CellScore(
        split,
        ALL,
        ALL,
        sum(cell.positions for cell in mine),
        sum(cell.kept for cell in mine),
        sum(cell.best for cell in mine),
        sum(cell.failed for cell in mine),
    )


@dataclass(frozen=True)
class BenchmarkReport:
    """An agent's figures on a set: each split's nine cells and its total, the failures, the
    time the run took; :meth:`to_dict` for JSON, :meth:`summary` in one line, and a heatmap in
    a notebook."""

    agent: str
    rules: Rules
    grid: Grid
    set_checksum: str
    seed: int
    seconds: float
    cells: tuple[CellScore, ...]
    totals: tuple[CellScore, ...]
    failures: tuple[Failure, ...]
    positions: int
    """The set's positions, each asked once (a position in both splits counts once)."""
    cpu_seconds: float = 0.0
    """The processor time the run took, in this process and the workers it started and
    ended (:attr:`seconds` is the time on the clock)."""

    def cell(self, split: str, stage: str, difficulty: str) -> CellScore:
        return next(
            c
            for c in (*self.cells, *self.totals)
            if (c.split, c.stage, c.difficulty) == (split, stage, difficulty)
        )

    def total(self, split: str) -> CellScore:
        return self.cell(split, ALL, ALL)

    def summary(self) -> str:
        """The report in one line: each split's total with its intervals, and the time."""
        parts = []
        for split in SPLITS:
            total = self.total(split)
            parts.append(
                f"{split}: value kept {_share(total.value_kept)}, best {_share(total.best_share)}"
            )
        return (
            f"{self.agent} on {self.rules.name} (set {self.set_checksum[:12]}): "
            + "; ".join(parts)
            + f"; {self.positions:,} positions, {len(self.failures):,} failed, "
            f"{self.seconds:.1f} s"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "game": self.rules.as_dict(),
            "set": self.set_checksum,
            "seed": self.seed,
            "seconds": self.seconds,
            "cpu_seconds": self.cpu_seconds,
            "grid": self.grid.to_dict(),
            "cells": [c.to_dict() for c in self.cells],
            "totals": [t.to_dict() for t in self.totals],
            "positions": self.positions,
            "failed": [f.to_dict() for f in self.failures],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BenchmarkReport:
        """A report from its :meth:`to_dict`."""
        game = data["game"]
        rules = Rules(game["rows"], game["cols"], game["k"])

        def score(cell: dict[str, Any]) -> CellScore:
            return CellScore(*(cell[name] for name in CellScore._fields))

        failures = tuple(
            Failure(
                Position.parse(one["position"], rules),
                FailureKind(one["kind"]),
                one["detail"],
                one["engine"],
                one["weight"],
            )
            for one in data["failed"]
        )
        return cls(
            data["agent"],
            rules,
            Grid.from_dict(data["grid"]),
            data["set"],
            data["seed"],
            data["seconds"],
            tuple(score(cell) for cell in data["cells"]),
            tuple(score(cell) for cell in data["totals"]),
            failures,
            data["positions"],
            data["cpu_seconds"],
        )

    def __repr__(self) -> str:
        return f"<BenchmarkReport {self.summary()}>"

    def _repr_html_(self) -> str:
        from ttt_solve.reports.benchmark import benchmark_html

        return benchmark_html(self)


def _share(interval: Interval) -> str:
    return f"{100 * interval.mean:.1f}% [{100 * interval.low:.1f}-{100 * interval.high:.1f}]"


def cpu_seconds() -> float:
    """Processor time so far of this process and of its children that have ended."""
    try:
        import resource
    except ImportError:  # not POSIX: this process alone
        return time.process_time()
    own, children = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


ROSTER = (
    "random",
    "heuristic",
    "minimax:depth=2",
    "alphabeta:depth=2",
    "alphabeta:depth=4",
    "mcts:iterations=100",
    "mcts:iterations=1000",
    "mcts:iterations=10000",
    "openspiel:alphabeta:depth=3",
    "openspiel:mcts:simulations=100",
    "openspiel:mcts:simulations=1000",
    "perfect",
)
"""The agents of the published leaderboard (``ttt benchmark leaderboard``), weakest kinds
first, ``perfect`` last as the ceiling."""
LEADERBOARD_FORMAT = "ttt-benchmark-leaderboard-1"
"""The format of ``ttt benchmark leaderboard --out``: ``{"format", "boards": {GAME: {"set":
checksum, "reports": [report...], "left_out": [why...]}}}``, each report as
:meth:`BenchmarkReport.to_dict` writes it."""
LEADERBOARD = "leaderboard.json"
"""The published leaderboard's file, beside the sets."""


def published_leaderboard(folder: Path) -> dict[str, tuple[list[BenchmarkReport], list[str]]]:
    """The reports and left-out agents of each board of the leaderboard published in
    ``folder`` (none if it has none)."""
    import json

    path = folder / LEADERBOARD
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    if data.get("format") != LEADERBOARD_FORMAT:
        raise BenchmarkSetError(f"{path} is not a leaderboard of format {LEADERBOARD_FORMAT}")
    return {
        game: ([BenchmarkReport.from_dict(r) for r in board["reports"]], board["left_out"])
        for game, board in data["boards"].items()
    }


def run_benchmark(
    maker: Any,
    bench_set: BenchmarkSet,
    *,
    book: Any = None,
    seed: int = 0,
    jobs: int = 2,
    progress: Progress | None = None,
    name: str | None = None,
) -> BenchmarkReport:
    """Score the agent ``maker.build(book)`` makes (a maker as :func:`grading.pose` takes) on
    every position of ``bench_set``."""
    rules = bench_set.rules
    items = bench_set.items
    started, cpu = time.perf_counter(), cpu_seconds()
    answers = pose(
        maker,
        book,
        rules,
        [(item.position, 1) for item in items],
        seed=seed,
        jobs=jobs,
        progress=progress,
    )
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    cells, failures = _scored(items, answers)
    return BenchmarkReport(
        name or str(getattr(maker, "spec", maker)),
        rules,
        bench_set.grid,
        bench_set.checksum,
        seed,
        seconds,
        tuple(cells),
        tuple(_total(split, cells) for split in SPLITS),
        tuple(failures),
        len(items),
        cpu,
    )


def _scored(
    items: Sequence[Item], answers: Sequence[Answer]
) -> tuple[list[CellScore], list[Failure]]:
    """Each cell's figures, every cell of every split in the grid's order, and the failures,
    from the answer in each position."""
    # A position is counted once, by what settles its figures (its cell, its splits, its move's
    # grade: None for a failed move); each split's counts are summed from those.
    outcomes: Counter[tuple[str, str, tuple[str, ...], Grade | None]] = Counter()
    failures = []
    verdicts: dict[tuple[Value, Value], Grade] = {}  # a few hundred pairs: each graded once
    for item, answer in zip(items, answers):
        verdict = None
        if answer.failure is not None:
            failures.append(answer.failure)
        else:
            assert answer.cell is not None
            pair = (item.value, item.moves[answer.cell])
            verdict = verdicts.get(pair)
            if verdict is None:
                verdict = verdicts[pair] = grade(*pair)[0]
        outcomes[item.stage, item.difficulty, item.splits, verdict] += 1
    tally: dict[tuple[str, str, str], list[int]] = {}  # asked, kept, best, failed
    for (stage, difficulty, splits, verdict), count in outcomes.items():
        kept = verdict is not None and verdict is not Grade.BLUNDER  # a failed move is a miss
        for split in splits:
            counts = tally.setdefault((split, stage, difficulty), [0, 0, 0, 0])
            counts[0] += count
            counts[1] += count * kept
            counts[2] += count * (verdict is Grade.BEST)
            counts[3] += count * (verdict is None)
    cells = [
        CellScore(split, stage, difficulty, *tally.get((split, stage, difficulty), [0, 0, 0, 0]))
        for split in SPLITS
        for stage in STAGES
        for difficulty in DIFFICULTIES
    ]
    return cells, failures


def random_expectation(items: Sequence[Item]) -> tuple[float, float]:
    """``(value kept, best)`` a uniformly random mover scores on ``items``, exactly: the mean
    over the positions of the share of their moves that keep the value, and that are best."""
    kept = best = 0.0
    for item in items:
        grades = [grade(item.value, move)[0] for move in item.moves.values()]
        kept += sum(g is not Grade.BLUNDER for g in grades) / len(grades)
        best += sum(g is Grade.BEST for g in grades) / len(grades)
    return kept / len(items), best / len(items)
