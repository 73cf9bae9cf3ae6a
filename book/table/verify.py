"""Checking a game stored as a tablebase: its files' digests, then its values against their
children, for ``ttt verify``.

On boards whose rows :mod:`book.table.rows` streams in key order (up to 20 cells) ``ttt verify``
checks every position as it does blocks (:func:`book.verify.verify_game`); the digests are
checked first here. On larger boards (5x5) it checks, after the digests:

- a seeded sample of each ply: positions drawn uniformly from the ply's canonical positions
  (:mod:`solver.tablebase.sample`: seeded random numbers of the ply's index, each kept when a
  canonical position stands at it as its own number; a ply of few numbers is read whole);
- on request, whole plies, :data:`~book.table.rows.SCAN_NUMBERS` numbers at a time.

A position checked must hold the record its children give it: lost in 0 when the last mover
has a line, a draw on a full board, else the best of its children's for the side to move
(:func:`solver.tablebase.positions.children_records`); a child the table holds no record of is a
problem too. :class:`TableCheck` counts what was checked, for the report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ttt_solve.book.table.rows import TableRows
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.files import TableError
from ttt_solve.solver.tablebase.probe import open_tablebase
from ttt_solve.solver.tablebase.record import score_of_record
from ttt_solve.solver.tablebase.sample import PlySample
from ttt_solve.solver.value import Value
from ttt_solve.solver.verify import Problem

Progress = Callable[[int, int], None]
"""Told ``(done, total)`` as work goes on."""


@dataclass
class TableCheck:
    """What a check of a table covered: files whose digest was checked, and positions checked
    by ply, in the sample and in whole plies."""

    digests: int = 0
    sampled: dict[int, int] = field(default_factory=dict)
    whole: dict[int, int] = field(default_factory=dict)

    @property
    def positions(self) -> int:
        return sum(self.sampled.values()) + sum(self.whole.values())


def digest_problems(
    folder: Path, rules: Rules, check: TableCheck | None = None, progress: Progress | None = None
) -> list[Problem]:
    """The table's files checked against their digests: the first file that fails, as a
    problem of the whole table (key -1), or none. ``progress`` is told bytes read."""
    try:
        with open_tablebase(folder, rules) as table:
            files = table.verify(progress)
    except TableError as error:
        return [Problem(-1, -1, str(error))]
    if check is not None:
        check.digests = files
    return []


def position_problems(
    rows: TableRows,
    ply: int,
    x: NDArray[np.int64],
    o: NDArray[np.int64],
    records: NDArray[np.uint8],
) -> list[Problem]:
    """The positions of ``ply`` (X and O cell sets, with their records) that do not hold the
    record their children give them."""
    rules = rows.table.rules
    backed, _, missing = rows.children_records(rules, ply, x, o, records)
    problems = []
    empty = rules.cells - ply
    for i in np.flatnonzero(backed != records).tolist():
        key = rules.canonical(int(x[i]), int(o[i]))[0]
        said = Value.from_score(score_of_record(int(records[i])), empty)
        if missing[i]:
            message = f"the table says {said}, but {missing[i]} of its children have no record"
        else:
            expected = Value.from_score(score_of_record(int(backed[i])), empty)
            message = f"the table says {said}, its children say {expected}"
        problems.append(Problem(ply, key, message))
    return problems


def sample_problems(
    rows: TableRows, per_ply: int, seed: int, check: TableCheck, progress: Progress | None = None
) -> Iterator[Problem]:
    """The problems of a seeded sample of about ``per_ply`` canonical positions of each ply
    (all of a ply's where it holds fewer); ``progress`` is told plies done."""
    rules = rows.table.rules
    for ply in range(rules.cells + 1):
        x, o, records = sampled_positions(rows, ply, per_ply, seed)
        check.sampled[ply] = len(records)
        yield from position_problems(rows, ply, x, o, records)
        if progress is not None:
            progress(ply + 1, rules.cells + 1)


def sampled_positions(
    rows: TableRows, ply: int, per_ply: int, seed: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.uint8]]:
    """``(x, o, records)`` of up to ``per_ply`` canonical positions of ``ply``, drawn
    uniformly with a generator seeded by ``seed`` and the ply
    (:class:`~solver.tablebase.sample.PlySample`)."""
    drawn = PlySample(rows.table.folder, rows.table.rules, ply).sample(per_ply, seed)
    return drawn.x, drawn.o, drawn.records


def whole_ply_problems(
    rows: TableRows, plies: list[int], check: TableCheck, progress: Progress | None = None
) -> Iterator[Problem]:
    """The problems of every canonical position of these plies; ``progress`` is told the
    numbers read, of all the plies' numbers."""
    rules = rows.table.rules
    total = sum(len(rows.records(ply)) for ply in plies)
    done = 0
    for ply in plies:
        check.whole[ply] = 0
        for start, stop in rows.number_ranges(ply):
            numbers = np.arange(start, stop, dtype=np.int64)
            x, o, records, _ = rows.positions_at(rules, ply, numbers)
            check.whole[ply] += len(records)
            yield from position_problems(rows, ply, x, o, records)
            done += stop - start
            if progress is not None:
                progress(done, total)


def widest_ply(rows: TableRows) -> int:
    """The ply of the most numbers in the table."""
    plies = range(rows.table.rules.cells + 1)
    return max(plies, key=lambda ply: len(rows.records(ply)))
