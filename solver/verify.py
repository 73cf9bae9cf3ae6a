"""Consistency checks of a solved table, independent of how it was made or stored.

Given the stored plies of a game (as :class:`~solver.plytable.PlyTable` arrays), check that:

* every key is a board of its ply (the right number of stones of each side, none off the board);
* every key is canonical and its ``images`` is the size of its symmetry class;
* terminal positions are exactly the won and the full ones, with their fixed values;
* every other position's score is the best over its children's stored scores, and its best
  moves are exactly the children that reach that score;
* for an opening book, positions on its last ply are checked against a prover instead, since
  their children are not stored.

Problems are reported, never raised, so a checker can list all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.exhaustive.keyarrays import KeyArrays
from ttt_solve.solver.exhaustive.plies import back_up_rows, won_by_last_mover
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import WIN_SCORE

if TYPE_CHECKING:
    from ttt_solve.solver.plytable import PlyTable

RowsCheck = Callable[[list[tuple[int, int, int]]], Iterator["str | None"]]
"""For open positions given as ``(canonical key, stored score, stored best-move mask)``: what a
prover finds wrong with each, in order (``None``: nothing); see
:func:`solver.prover.opening.check_rows`."""


class Problem(NamedTuple):
    ply: int
    key: int
    message: str


def check_plies(
    rules: Rules, plies: Iterable[PlyTable], check_rows: RowsCheck | None = None
) -> Iterator[Problem]:
    """Every inconsistency of the stored plies (see the module docstring).

    ``plies`` come in ascending order; only two are held at a time, so a game of any size can
    be checked as it is read.
    """
    arrays = KeyArrays(rules)
    previous = None
    for table in plies:
        if previous is not None:
            following = table if table.ply == previous.ply + 1 else None
            yield from _check_ply(rules, arrays, previous, following, check_rows, last=False)
        previous = table
    if previous is not None:
        yield from _check_ply(rules, arrays, previous, None, check_rows, last=True)


ROWS_PER_CHUNK = 1 << 18
"""Positions checked at once: their children (up to ``cells`` each) bound the working memory."""


def _check_ply(
    rules: Rules,
    arrays: KeyArrays,
    table: PlyTable,
    child_table: PlyTable | None,
    check_rows: RowsCheck | None,
    last: bool,
) -> Iterator[Problem]:
    # The last ply's open rows go to the prover all at once, after the other checks: it
    # shares them out to its processes, with one progress count.
    to_prove: list[tuple[int, int, int]] | None = [] if last and check_rows else None
    for start in range(0, len(table.keys), ROWS_PER_CHUNK):
        part = slice(start, start + ROWS_PER_CHUNK)
        yield from _check_rows(
            rules,
            arrays,
            table.ply,
            np.asarray(table.keys[part], dtype=np.uint64),
            np.asarray(table.scores[part]).astype(np.int32),
            np.asarray(table.best_moves[part], dtype=np.uint64),
            np.asarray(table.images[part]),
            child_table,
            to_prove,
        )
    if to_prove and check_rows is not None:
        yield from prover_problems(table.ply, to_prove, check_rows)


def _check_rows(
    rules: Rules,
    arrays: KeyArrays,
    ply: int,
    keys: NDArray[np.uint64],
    scores: NDArray[np.int32],
    best: NDArray[np.uint64],
    images: NDArray[np.uint8],
    child_table: PlyTable | None,
    to_prove: list[tuple[int, int, int]] | None,
) -> Iterator[Problem]:
    """The problems of a run of rows of one ply; the open rows of the last ply of an opening
    book are added to ``to_prove`` (not ``None``) for the prover."""
    fits = _stones_fit(rules, arrays, keys, ply)
    yield from _bad_rows(ply, keys, ~fits, "stones do not fit ply")
    if not fits.all():  # the other checks hold only for boards of this ply
        keys, scores, best, images = keys[fits], scores[fits], best[fits], images[fits]
    yield from _bad_rows(ply, keys, arrays.canonical(keys) != keys, "key is not canonical")
    yield from _bad_rows(
        ply,
        keys,
        arrays.orbit_sizes(keys) != images,
        "images is not the size of its symmetry class",
    )
    won = won_by_last_mover(arrays, keys, ply)
    full = ply == rules.cells
    terminal = won | full
    yield from _bad_rows(
        ply,
        keys,
        won & (scores != -WIN_SCORE),
        "won position is not a loss in 0 for the side to move",
    )
    yield from _bad_rows(ply, keys, ~won & full & (scores != 0), "full board is not a draw")
    yield from _bad_rows(ply, keys, terminal & (best != 0), "terminal position has best moves")
    open_rows = np.flatnonzero(~terminal)
    if len(open_rows) == 0:
        return
    rows = _OpenRows(keys[open_rows], scores[open_rows], best[open_rows])
    if child_table is not None:
        yield from _check_backup(arrays, ply, rows, child_table)
    elif to_prove is not None:
        to_prove.extend(zip(rows.keys.tolist(), rows.scores.tolist(), rows.best.tolist()))
    else:
        yield Problem(
            ply,
            int(keys[open_rows[0]]),
            f"{len(open_rows)} open positions whose children are not stored",
        )


def _stones_fit(
    rules: Rules, arrays: KeyArrays, keys: NDArray[np.uint64], ply: int
) -> NDArray[np.bool_]:
    """Whether each key is a board of this ply: no bits past the board, no cell held by both
    sides, X with ``ceil(ply / 2)`` stones and O with ``floor(ply / 2)``."""
    x, o = arrays.stones(keys, x=True), arrays.stones(keys, x=False)
    on_board: NDArray[np.bool_] = (o >> np.uint64(rules.cells)) == 0
    fits: NDArray[np.bool_] = (
        on_board
        & ((x & o) == 0)
        & (_bit_counts(x) == (ply + 1) // 2)
        & (_bit_counts(o) == ply // 2)
    )
    return fits


def _bit_counts(bits: NDArray[np.uint64]) -> NDArray[np.int64]:
    """How many bits each number has set (``np.bitwise_count`` is NumPy 2 only)."""
    as_bytes = np.ascontiguousarray(bits, dtype=np.uint64).view(np.uint8).reshape(-1, 8)
    counts: NDArray[np.int64] = np.unpackbits(as_bytes, axis=1).sum(axis=1, dtype=np.int64)
    return counts


def _bad_rows(
    ply: int, keys: NDArray[np.uint64], bad: NDArray[np.bool_], message: str
) -> Iterator[Problem]:
    for row in np.flatnonzero(bad):
        yield Problem(ply, int(keys[row]), message)


class _OpenRows(NamedTuple):
    """The open positions of a chunk: their keys and stored scores and best moves."""

    keys: NDArray[np.uint64]
    scores: NDArray[np.int32]
    best: NDArray[np.uint64]


def _check_backup(
    arrays: KeyArrays, ply: int, rows: _OpenRows, child_table: PlyTable
) -> Iterator[Problem]:
    backed_up = back_up_rows(
        arrays,
        ply,
        rows.keys,
        np.asarray(child_table.keys, dtype=np.uint64),
        np.asarray(child_table.scores),
    )
    complete = backed_up.complete
    for row in np.flatnonzero(~complete):
        yield Problem(ply, int(rows.keys[row]), "a child position is missing")
    yield from _bad_rows(
        ply,
        rows.keys,
        complete & (rows.scores != backed_up.scores),
        "score is not the best over the children",
    )
    yield from _bad_rows(
        ply,
        rows.keys,
        complete & (rows.best != backed_up.best_moves),
        "best moves are not the children that reach the score",
    )


def prover_problems(
    ply: int, rows: list[tuple[int, int, int]], check_rows: RowsCheck
) -> Iterator[Problem]:
    """The problems a prover finds in open rows ``(key, score, best-move mask)`` of a ply."""
    for (key, _, _), message in zip(rows, check_rows(rows), strict=True):
        if message is not None:
            yield Problem(ply, key, message)
