"""The figures of a built tablebase, as docs/tablebase.md publishes them: for each ply the
canonical and reachable wins, draws and losses for the side to move and how many of each are
over, and the longest win of the ply (all from the counts in the files' headers), a position
that has that win (the first number holding its record, a scan of the ply's records until
then), and every first move's value with its remoteness.

    ttt table figures FOLDER [--json]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
from numpy.typing import NDArray
from tabulate import tabulate

from ttt_solve.solver.pieces import held, pieces
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.files import map_ply, ply_path, read_header
from ttt_solve.solver.tablebase.positions import stand_for
from ttt_solve.solver.tablebase.probe import Tablebase, open_tablebase
from ttt_solve.solver.tablebase.record import DECIDED, RECORD_SLOTS, RecordCounts
from ttt_solve.solver.value import Value


@dataclass(frozen=True)
class PlyFigures:
    """One ply's counts (:class:`RecordCounts`) and its longest win: the most plies a side to
    move needs to win, with a position that needs them (``None`` where no one can win)."""

    ply: int
    counts: RecordCounts
    longest_win: int | None
    longest_win_position: Position | None


@dataclass(frozen=True)
class TableFigures:
    """A table's figures: the empty board's value, each first move's, and each ply's."""

    rules: Rules
    root: Value
    first_moves: dict[int, Value]
    plies: list[PlyFigures]

    @property
    def longest_win(self) -> PlyFigures | None:
        """The ply holding the longest win of the game (the earliest, if several)."""
        winning = [ply for ply in self.plies if ply.longest_win is not None]
        return max(winning, key=lambda ply: (ply.longest_win, -ply.ply), default=None)


@numba.njit(parallel=True, nogil=True, cache=True)
def _histogram(records: NDArray[np.uint8], chunks: int) -> NDArray[np.int64]:
    counts = np.zeros((chunks, 256), dtype=np.int64)
    size = (len(records) + chunks - 1) // chunks
    for chunk in numba.prange(chunks):
        for i in range(chunk * size, min(len(records), (chunk + 1) * size)):
            counts[chunk, records[i]] += 1
    total: NDArray[np.int64] = counts.sum(axis=0)
    return total


def record_histogram(records: NDArray[np.uint8]) -> NDArray[np.int64]:
    """How many numbers hold each record (256 counts): a ply's remoteness table over its
    numbers, read over every core, in pieces (:mod:`solver.pieces`)."""
    total = np.zeros(256, dtype=np.int64)
    for first, last in pieces(len(records), 1 << 20):
        with held():
            total += _histogram(records[first:last], 256)
    return total


@numba.njit(nogil=True, cache=True)
def _first_number(records: NDArray[np.uint8], record: int) -> int:
    for i in range(len(records)):
        if records[i] == record:
            return i
    return -1


def first_number(records: NDArray[np.uint8], record: int) -> int:
    """The first number holding ``record``, or -1."""
    for first, last in pieces(len(records), 1 << 20):
        with held():
            found = int(_first_number(records[first:last], record))
        if found >= 0:
            return first + found
    return -1


def ply_figures(table: Tablebase, ply: int) -> PlyFigures:
    """One ply's figures: its header's counts, and a position of its longest win."""
    path = ply_path(table.folder, ply)
    header = read_header(path, table.rules, ply)
    counts = header.record_counts
    wins = [r for r in range(DECIDED + 1, RECORD_SLOTS, 2) if counts.by_record[0, r]]
    if not wins:
        return PlyFigures(ply, counts, None, None)
    reps, records = map_ply(path, header)
    number = int(first_number(records, max(wins)))
    x, o, _, _ = stand_for(table.rules, ply, reps.astype(np.int64), np.array([number]))
    position = Position(table.rules, int(x[0]), int(o[0]))
    return PlyFigures(ply, counts, max(wins) - DECIDED, position)


def table_figures(folder: Path) -> TableFigures:
    """The figures of the finished table in ``folder``."""
    with open_tablebase(folder) as table:  # refused in one line if it is no sound table
        root, first_moves = table.probe_moves(Position.start(table.rules))
        plies = [ply_figures(table, ply) for ply in range(table.rules.cells + 1)]
    return TableFigures(table.rules, root, first_moves, plies)


def _counts_row(figures: PlyFigures) -> list[object]:
    counts = figures.counts.counts
    row: list[object] = [figures.ply]
    for kind in (0, 1):
        row += [f"{int(counts[outcome, :, kind].sum()):,}" for outcome in range(3)]
    row += [f"{int(counts[2, 1, 0]):,}", f"{int(counts[1, 1, 0]):,}"]
    row.append("-" if figures.longest_win is None else figures.longest_win)
    return row


def describe(figures: TableFigures) -> str:
    """The figures as Markdown tables."""
    headers = [
        "ply",
        "canonical wins",
        "draws",
        "losses",
        "reachable wins",
        "draws",
        "losses",
        "over: lost",
        "over: drawn",
        "longest win",
    ]
    table = tabulate(
        [_counts_row(ply) for ply in figures.plies],
        headers,
        tablefmt="github",
        colalign=["right"] * len(headers),
    )
    cols = figures.rules.cols
    cells = sorted(figures.first_moves)
    grid = [
        [_short(figures.first_moves[cell]) for cell in cells[row : row + cols]]
        for row in range(0, len(cells), cols)
    ]
    longest = figures.longest_win
    lines = [
        f"{figures.rules.name}: the empty board is a {figures.root} for X.",
        "",
        table,
        "",
        "Over: positions whose game has ended, counted canonically (lost: the side to move "
        "has lost; drawn: a full board). Longest win: the most plies the side to move needs.",
        "",
        "Every first move, for X (W: wins, D: draws, L: loses, in so many plies):",
        "",
        tabulate(grid, tablefmt="plain"),
    ]
    if longest is not None:
        lines += [
            "",
            f"Longest forced win: {longest.longest_win} plies, for the side to move at ply "
            f"{longest.ply} (the first ply that has one), as in `{longest.longest_win_position}`",
        ]
    return "\n".join(lines)


def _short(value: Value) -> str:
    return f"{value.outcome.value[0].upper()}{value.remoteness}"


def to_dict(figures: TableFigures) -> dict[str, object]:
    """The figures as JSON data."""
    return {
        "root": str(figures.root),
        "first_moves": {str(cell): str(value) for cell, value in figures.first_moves.items()},
        "plies": [
            {
                "ply": ply.ply,
                "counts": ply.counts.counts.tolist(),
                "longest_win": ply.longest_win,
                "longest_win_position": None
                if ply.longest_win_position is None
                else str(ply.longest_win_position),
            }
            for ply in figures.plies
        ],
    }
