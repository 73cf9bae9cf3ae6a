"""``verify``: read a stored game back and check it (see :mod:`solver.verify`).

A game of more than 31 cells (keys past 64 bits, which :mod:`solver.verify`'s arrays cannot
hold) is an opening book of few rows: :func:`check_wide_plies` makes the same checks one
position at a time, with the opening-book builder's own back-up.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

import numpy as np

from ttt_solve.book.errors import DamagedBookError
from ttt_solve.book.reader import Book
from ttt_solve.book.records import GameInfo, StoredRow
from ttt_solve.book.rowchecks import not_a_number, out_of_range
from ttt_solve.solver.figures import Figures
from ttt_solve.solver.plytable import PlyTable, join_scores
from ttt_solve.solver.position import Position
from ttt_solve.solver.prover.opening import back_up_position, won_by_last_mover
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import WIN_SCORE, Value
from ttt_solve.solver.verify import Problem, RowsCheck, check_plies, prover_problems

PROGRESS_ROWS = 1 << 14
"""Rows read between two calls of a check's ``progress``: about half a second of a table's
rows of 4x5 k=4 on a loaded machine, so that a line meant every 10 seconds comes within a
second of it (65,536 rows let the lines drift to 12 to 16 seconds apart)."""


def stored_plies(
    book: Book,
    rules: Rules,
    problems: list[Problem] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[PlyTable]:
    """The stored rows of a game as per-ply arrays, ply by ply in ascending order (rows come
    sorted by key, as the solver made them); one ply's columns are held at a time, packed.
    ``progress`` is told ``(rows read, rows stored)`` every :data:`PROGRESS_ROWS` rows.

    The stored columns are checked before they are packed into scores (which cannot hold a
    draw's remoteness, nor a value other than 1, 0, -1): what is wrong goes to ``problems``.
    """
    wide = not rules.fits_key
    columns: tuple[Any, ...] = ()
    current = None
    stored = book.game(rules).positions
    for read, row in enumerate(book.rows(rules, checked=False), 1):  # checked below
        if progress is not None and read % PROGRESS_ROWS == 0:
            progress(read, stored)
        if row.ply != current:
            if type(row.ply) is not int:  # the other columns are checked as they are packed
                raise _not_whole(book, rules, row)
            if current is not None:
                yield _ply_table(rules, current, columns, problems)
            current = row.ply
            columns = wide_columns() if wide else tuple(array("q") for _ in range(5))
        try:
            for column, number in zip(columns, row[1:]):
                column.append(number)
        except (TypeError, OverflowError):
            raise _not_whole(book, rules, row) from None
    if current is not None:
        yield _ply_table(rules, current, columns, problems)


class WideColumn(list[int]):
    """A column of a wide game's ply, as ``array("q")`` is for the others: it refuses what is
    not a whole number below ``limit`` (2**63: an ``int64`` column; more: Python ints)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def append(self, number: int) -> None:
        if type(number) is not int or not -(2**63) <= number < self.limit:
            raise TypeError(f"{number!r} is not a stored number")
        super().append(number)

    def array(self) -> np.ndarray:
        return np.array(self, dtype=np.int64 if self.limit <= 2**63 else object)


def wide_columns() -> tuple[WideColumn, ...]:
    """Key (128 bits), value, remoteness, best moves (64 bits, unsigned), images."""
    return tuple(WideColumn(limit) for limit in (2**128, 2**63, 2**63, 2**64, 2**63))


def _not_whole(book: Book, rules: Rules, row: StoredRow) -> DamagedBookError:
    return book.damaged(not_a_number([row]), rules)


def _ply_table(
    rules: Rules, ply: int, columns: tuple[Any, ...], problems: list[Problem] | None
) -> PlyTable:
    arrays = [
        column.array() if isinstance(column, WideColumn) else np.frombuffer(column, np.int64)
        for column in columns
    ]
    keys, values, remoteness, best, images = arrays
    if problems is not None:
        problems.extend(_column_problems(rules, ply, arrays))
    return PlyTable(
        ply,
        keys if keys.dtype == object else keys.astype(np.uint64),
        join_scores(values, remoteness),
        best.astype(np.uint64),
        images.astype(np.uint8),
    )


def _column_problems(rules: Rules, ply: int, columns: list[np.ndarray]) -> Iterator[Problem]:
    """Stored columns out of their range (the book's own reading checks, :func:`out_of_range`),
    and draws whose remoteness is not their number of empty cells: what the packed scores and
    the uint8 images would hide. ``columns``: keys, values, remoteness, best moves, images."""
    keys, values, remoteness = columns[:3]
    empty = rules.cells - ply
    checks = [
        (np.broadcast_to(bad, keys.shape), f"holds {what}")
        for bad, what in out_of_range(rules, ply, *columns)
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
    check_rows: RowsCheck | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[GameInfo, Generator[Problem, None, None]]:
    """The game and every problem found in it: stored rows, and rows against the summary;
    ``check_rows`` checks the last ply of an opening book (whose children are not stored);
    ``progress`` is told the rows read (:func:`stored_plies`)."""
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
        plies = counted(stored_plies(book, rules, column_problems, progress))
        check = check_plies if rules.fits_key else check_wide_plies
        for problem in check(rules, plies, check_rows):
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


def check_wide_plies(
    rules: Rules, plies: Iterable[PlyTable], check_rows: RowsCheck | None = None
) -> Iterator[Problem]:
    """What :func:`solver.verify.check_plies` finds, for a game whose keys are Python ints:
    every stored position checked one at a time against its board, its symmetry class, its
    children's stored scores or, on the last ply, by ``check_rows``."""
    tables = list(plies)  # a wide game is a few plies of an opening book
    for table, following in zip(tables, [*tables[1:], None]):
        child_scores = None
        if following is not None and following.ply == table.ply + 1:
            child_scores = dict(zip(following.keys.tolist(), following.scores.tolist()))
        rows = list(zip(*(column.tolist() for column in table[1:])))
        found = [
            problem
            for row in rows
            for problem in _wide_row_problems(rules, table.ply, row, child_scores)
        ]
        unchecked = [problem.key for problem in found if problem.message == _NOT_STORED]
        yield from (problem for problem in found if problem.message != _NOT_STORED)
        if not unchecked:
            continue
        if following is None and check_rows is not None:  # the last ply: the prover's turn
            open_keys = set(unchecked)
            to_prove = [(key, score, best) for key, score, best, _ in rows if key in open_keys]
            yield from prover_problems(table.ply, to_prove, check_rows)
        else:
            message = f"{len(unchecked)} open positions whose children are not stored"
            yield Problem(table.ply, unchecked[0], message)


_NOT_STORED = "children not stored"


def _wide_row_problems(
    rules: Rules,
    ply: int,
    row: tuple[int, int, int, int],
    child_scores: dict[int, int] | None,
) -> Iterator[Problem]:
    """The problems of one stored position (``row``: key, score, best moves, images)."""
    key, score, best, images = row
    x, o = key & rules.full, key >> rules.cells
    if o >> rules.cells or x & o or (x.bit_count(), o.bit_count()) != ((ply + 1) // 2, ply // 2):
        yield Problem(ply, key, "stones do not fit ply")
        return  # the other checks hold only for boards of this ply
    position = Position(rules, x, o)
    found = [
        (position.canonical_key != key, "key is not canonical"),
        (len(set(position.image_keys())) != images, "images is not the size of its symmetry class"),
    ]
    won, full = won_by_last_mover(position), position.empty == 0
    if won or full:
        found += [
            (won and score != -WIN_SCORE, "won position is not a loss in 0 for the side to move"),
            (not won and score != 0, "full board is not a draw"),
            (best != 0, "terminal position has best moves"),
        ]
    elif child_scores is not None:
        top, top_moves, complete = back_up_position(position, child_scores)
        found += [
            (not complete, "a child position is missing"),
            (complete and score != top, "score is not the best over the children"),
            (
                complete and best != top_moves,
                "best moves are not the children that reach the score",
            ),
        ]
    else:
        found.append((True, _NOT_STORED))
    yield from (Problem(ply, key, message) for bad, message in found if bad)
