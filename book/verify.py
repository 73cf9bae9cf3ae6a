"""``verify``: read a stored game back and check it (see :mod:`solver.verify`)."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator

import numpy as np

from ttt_solve.book.reader import Book, GameInfo
from ttt_solve.solver.plytable import PlyTable, join_scores
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.verify import Problem, check_plies


def stored_plies(book: Book, rules: Rules) -> Iterator[PlyTable]:
    """The stored rows of a game as per-ply arrays, ply by ply in ascending order (rows come
    sorted by key, as the solver made them); one ply's columns are held at a time, packed."""
    columns: tuple[array[int], ...] = ()
    current = None
    for row in book.rows(rules):
        if row.ply != current:
            if current is not None:
                yield _ply_table(current, columns)
            current, columns = row.ply, tuple(array("q") for _ in range(5))
        keys, values, remoteness, best, images = columns
        keys.append(row.key)
        values.append(row.value)
        remoteness.append(row.remoteness)
        best.append(row.best_moves)
        images.append(row.images)
    if current is not None:
        yield _ply_table(current, columns)


def _ply_table(ply: int, columns: tuple[array[int], ...]) -> PlyTable:
    keys, values, remoteness, best, images = (np.frombuffer(c, dtype=np.int64) for c in columns)
    return PlyTable(
        ply,
        keys.astype(np.uint64),
        join_scores(values, remoteness),
        best.astype(np.uint64),
        images.astype(np.uint8),
    )


def verify_game(
    book: Book,
    rules: Rules,
    move_scores: Callable[[Position], dict[int, int]] | None = None,
) -> tuple[GameInfo, Iterator[Problem]]:
    """The game and every problem found in it: stored rows, and rows against the summary."""
    info = book.game(rules)
    canonical: dict[int, int] = {}
    reachable: dict[int, int] = {}
    last_ply = [-1]

    def counted(plies: Iterator[PlyTable]) -> Iterator[PlyTable]:
        for table in plies:
            canonical[table.ply] = len(table.keys)
            reachable[table.ply] = int(table.images.astype(np.int64).sum())
            last_ply[0] = table.ply
            yield table

    def problems() -> Iterator[Problem]:
        yield from check_plies(rules, counted(stored_plies(book, rules)), move_scores)
        figures = info.figures
        for weight, counts in (("canonical", canonical), ("reachable", reachable)):
            expected = figures.by_ply[weight]
            for ply in sorted(set(expected) | set(counts)):
                if expected.get(ply, 0) != counts.get(ply, 0):
                    yield Problem(
                        ply,
                        -1,
                        f"{weight} positions: the summary says "
                        f"{expected.get(ply, 0)}, the rows hold {counts.get(ply, 0)}",
                    )
        total = sum(canonical.values())
        if total != info.positions:
            yield Problem(
                -1, -1, f"the game row counts {info.positions} positions, the table holds {total}"
            )
        if info.book_depth is not None and canonical and last_ply[0] != info.book_depth:
            yield Problem(
                -1,
                -1,
                f"an opening book of depth {info.book_depth} stores plies up to {last_ply[0]}",
            )

    return info, problems()
