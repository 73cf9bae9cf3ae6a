"""``verify``: read a stored game back and check it (see :mod:`solver.verify`)."""

from __future__ import annotations

from typing import Callable, Iterator

import numpy as np

from book.reader import Book, GameInfo
from solver.exhaustive import PlyTable
from solver.position import Position
from solver.rules import Rules
from solver.keyarrays import join_scores
from solver.verify import Problem, check_plies


def stored_plies(book: Book, rules: Rules) -> dict[int, PlyTable]:
    """Every stored row of a game as per-ply arrays (sorted by key, as the solver made them)."""
    columns: dict[int, list[list[int]]] = {}
    for row in book.iter_rows(rules):
        per_ply = columns.setdefault(row.ply, [[], [], [], [], []])
        for column, value in zip(per_ply, (row.key, row.value, row.remoteness, row.best_moves,
                                           row.images)):
            column.append(value)
    plies = {}
    for ply, (keys, values, remoteness, best, images) in columns.items():
        plies[ply] = PlyTable(ply, np.array(keys, dtype=np.uint64),
                              join_scores(np.array(values), np.array(remoteness)),
                              np.array(best, dtype=np.uint64), np.array(images, dtype=np.uint8))
    return plies


def verify_game(book: Book, rules: Rules,
                move_scores: Callable[[Position], dict[int, int]] | None = None,
                ) -> tuple[GameInfo, Iterator[Problem]]:
    """The game and every problem found in it: stored rows, and rows against the summary."""
    info = book.game(rules)
    plies = stored_plies(book, rules)

    def problems() -> Iterator[Problem]:
        yield from check_plies(rules, plies, move_scores)
        figures = info.figures
        for weight, counts in (("canonical", {p: len(t.keys) for p, t in plies.items()}),
                               ("reachable", {p: int(np.asarray(t.images, dtype=np.int64).sum())
                                              for p, t in plies.items()})):
            expected = figures.by_ply[weight]
            for ply in sorted(set(expected) | set(counts)):
                if expected.get(ply, 0) != counts.get(ply, 0):
                    yield Problem(ply, -1, f"{weight} positions: the summary says "
                                           f"{expected.get(ply, 0)}, the rows hold {counts.get(ply, 0)}")
        total = sum(len(t.keys) for t in plies.values())
        if total != info.positions:
            yield Problem(-1, -1, f"the game row counts {info.positions} positions, "
                                  f"the table holds {total}")
        if info.book_depth is not None and plies and max(plies) != info.book_depth:
            yield Problem(-1, -1, f"an opening book of depth {info.book_depth} stores plies up "
                                  f"to {max(plies)}")

    return info, problems()
