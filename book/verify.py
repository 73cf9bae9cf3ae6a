"""``verify``: read a stored game back and check it (see :mod:`solver.verify`)."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Generator, Iterator

import numpy as np
from numpy.typing import NDArray

from ttt_solve.book.errors import DamagedBookError
from ttt_solve.book.reader import Book, GameInfo, StoredRow, out_of_range
from ttt_solve.solver.figures import Figures
from ttt_solve.solver.plytable import PlyTable, join_scores
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Value
from ttt_solve.solver.verify import Problem, check_plies


def stored_plies(
    book: Book, rules: Rules, problems: list[Problem] | None = None
) -> Iterator[PlyTable]:
    """The stored rows of a game as per-ply arrays, ply by ply in ascending order (rows come
    sorted by key, as the solver made them); one ply's columns are held at a time, packed.

    The stored columns are checked before they are packed into scores (which cannot hold a
    draw's remoteness, nor a value other than 1, 0, -1): what is wrong goes to ``problems``.
    """
    columns: tuple[array[int], ...] = ()
    current = None
    for row in book.rows(rules, checked=False):  # rows out of range are reported below
        if row.ply != current:
            if type(row.ply) is not int:  # the other columns are checked as they are packed
                raise _not_whole(book, rules, row)
            if current is not None:
                yield _ply_table(rules, current, columns, problems)
            current, columns = row.ply, tuple(array("q") for _ in range(5))
        keys, values, remoteness, best, images = columns
        try:
            keys.append(row.key)
            values.append(row.value)
            remoteness.append(row.remoteness)
            best.append(row.best_moves)
            images.append(row.images)
        except (TypeError, OverflowError):
            raise _not_whole(book, rules, row) from None
    if current is not None:
        yield _ply_table(rules, current, columns, problems)


def _not_whole(book: Book, rules: Rules, row: StoredRow) -> DamagedBookError:
    bad = next((v for v in row if type(v) is not int or not -(2**63) <= v < 2**63), None)
    return book.damaged(f"a positions row holds {bad!r} where a whole number belongs", rules)


def _ply_table(
    rules: Rules, ply: int, columns: tuple[array[int], ...], problems: list[Problem] | None
) -> PlyTable:
    keys, values, remoteness, best, images = (np.frombuffer(c, dtype=np.int64) for c in columns)
    if problems is not None:
        problems.extend(_column_problems(rules, ply, keys, values, remoteness, best, images))
    return PlyTable(
        ply,
        keys.astype(np.uint64),
        join_scores(values, remoteness),
        best.astype(np.uint64),
        images.astype(np.uint8),
    )


def _column_problems(
    rules: Rules,
    ply: int,
    keys: NDArray[np.int64],
    values: NDArray[np.int64],
    remoteness: NDArray[np.int64],
    best: NDArray[np.int64],
    images: NDArray[np.int64],
) -> Iterator[Problem]:
    """Stored columns out of their range (the book's own reading checks, :func:`out_of_range`),
    and draws whose remoteness is not their number of empty cells: what the packed scores and
    the uint8 images would hide."""
    empty = rules.cells - ply
    checks = [
        (np.broadcast_to(bad, keys.shape), f"holds {what}")
        for bad, what in out_of_range(rules, ply, keys, values, remoteness, best, images)
    ]
    checks.append(
        (
            (values == 0) & (remoteness != empty),
            f"a draw's remoteness is not its number of empty cells ({empty})",
        )
    )
    for bad, message in checks:
        for row in np.flatnonzero(bad):
            yield Problem(ply, int(keys[row]), message)


def verify_game(
    book: Book,
    rules: Rules,
    move_scores: Callable[[Position], dict[int, int]] | None = None,
) -> tuple[GameInfo, Generator[Problem, None, None]]:
    """The game and every problem found in it: stored rows, and rows against the summary."""
    info = book.game(rules)
    recounted = Figures(rules.cells)  # the summary again, from the rows as they are read
    column_problems: list[Problem] = []
    last_ply = [-1]

    rows_out_of_range = [False]

    def counted(plies: Iterator[PlyTable]) -> Iterator[PlyTable]:
        for table in plies:
            # Rows out of range are reported already, and would not count: the summary is
            # compared only with rows that all hold possible values.
            rows_out_of_range[0] = rows_out_of_range[0] or bool(column_problems)
            if not rows_out_of_range[0]:
                recounted.add(table)
            last_ply[0] = table.ply
            yield table

    def problems() -> Generator[Problem, None, None]:
        plies = counted(stored_plies(book, rules, column_problems))
        for problem in check_plies(rules, plies, move_scores):
            yield from column_problems
            column_problems.clear()
            yield problem
        yield from column_problems
        if not rows_out_of_range[0]:
            yield from _summary_problems(info, recounted, last_ply[0])

    return info, problems()


def _summary_problems(info: GameInfo, recounted: Figures, last_ply: int) -> Iterator[Problem]:
    """The ``games`` row and its summary figures against the figures of the stored rows."""
    canonical = recounted.by_ply["canonical"]
    reachable = recounted.by_ply["reachable"]
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
    if info.reachable != recounted.reachable:
        yield Problem(
            -1,
            -1,
            f"the game row counts {info.reachable} reachable positions, "
            f"the rows stand for {recounted.reachable}",
        )
    if info.book_depth is not None and canonical and last_ply != info.book_depth:
        yield Problem(
            -1,
            -1,
            f"an opening book of depth {info.book_depth} stores plies up to {last_ply}",
        )
    if recounted.start_score is not None:
        start = Value.from_score(recounted.start_score, info.rules.cells)
        if info.value != start:
            yield Problem(-1, -1, f"the game row says {info.value}, the empty board's row {start}")
    stored, derived = figures.to_dict(), recounted.to_dict()
    for section in derived:
        if section != "by_ply" and stored.get(section) != derived[section]:
            yield Problem(-1, -1, f"the summary's {section} figures differ from the stored rows")
