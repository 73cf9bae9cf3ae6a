"""What a stored row may hold: the checks that make a damaged book an error, never a wrong
answer.

A row that no writer makes (a value other than 1, 0, -1, a remoteness past the end of the game,
best moves off the board or on a taken cell, a key or ply off the board, a field that is not a
whole number) is reported in words, for :class:`~book.reader.Book` to raise as a
:class:`~book.errors.DamagedBookError`. Rows that are possible but wrong (a score that is not
the best over the children) are for ``ttt verify`` (:mod:`book.verify`) to find.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ttt_solve.book.records import GAME_COLUMNS, POSITION_COLUMNS, GameInfo, SolveMethod
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome, Value


def row_problem(rules: Rules, rows: Sequence[Sequence[Any]]) -> str | None:
    """What makes stored ``positions`` rows unreadable, or ``None``. One row (a lookup) is
    checked in plain Python, a chunk (a stream) by NumPy columns: the same checks
    (:func:`out_of_range`), so streaming a game pays little for them and a lookup does not
    import NumPy. The rows of a board of more than 31 cells (keys past 64 bits) are checked
    one by one in plain Python: such a game is an opening book of few rows."""
    if not rows:
        return None
    if len(rows) > 1 and not rules.fits_key:
        return next(filter(None, (row_problem(rules, [row]) for row in rows)), None)
    if len(rows) == 1:
        row = rows[0]
        if len(row) != len(POSITION_COLUMNS) or not all(type(v) is int for v in row):
            return not_a_number(rows)
        columns: Sequence[Any] = row
    else:
        import numpy as np

        try:
            table = np.array(rows)  # whole numbers only: int64; a text, a real or a NULL: not
        except (ValueError, OverflowError):  # rows of different lengths, numbers past 64 bits
            return not_a_number(rows)
        if table.dtype.kind != "i" or table.ndim != 2 or table.shape[1] != len(POSITION_COLUMNS):
            return not_a_number(rows)
        columns = table.astype(np.int64).T
    for bad, what in out_of_range(rules, *columns):
        if bad is True or (bad is not False and bad.any()):
            first = 0 if bad is True else int(bad.nonzero()[0][0])
            ply = columns[0] if bad is True else columns[0][first]
            return f"a positions row of ply {int(ply)} holds {what}"
    ply, key = columns[0], columns[1]
    if len(rows) == 1:
        misplaced = key.bit_count() != ply
    else:
        import numpy as np

        misplaced = bool((np.bitwise_count(key) != ply).any())
    if misplaced:  # a block of one ply holding a key of another
        return "a positions row's ply is not its count of stones"
    return None


def not_a_number(rows: Sequence[Sequence[Any]]) -> str:
    values = [v for row in rows for v in row]
    bad = next((v for v in values if type(v) is not int), None)  # a text, a real, a NULL
    if bad is None:  # else a number past 64 bits
        bad = next((v for v in values if not -(2**63) <= v < 2**63), None)
    return f"a positions row holds {bad!r} where a whole number belongs"


def out_of_range(
    rules: Rules, ply: Any, key: Any, value: Any, remoteness: Any, best: Any, images: Any
) -> list[tuple[Any, str]]:
    """(which rows are bad, what they hold) for each range a stored column must keep: the
    columns are Python ints (one row) or NumPy arrays (many), the same operators serve both."""
    cells, full = rules.cells, rules.full
    taken = (key & full) | (key >> cells)
    return [
        ((ply < 0) | (ply > cells), "a ply off the board"),
        ((key < 0) | ((key >> cells) >> cells != 0), "a key off the board"),
        ((value < -1) | (value > 1), "a value other than 1, 0, -1"),
        ((remoteness < 0) | (remoteness > cells - ply), "a remoteness past the end of the game"),
        ((best < 0) | (best & ~full != 0) | (best & taken != 0), "best moves off the board"),
        ((images < 1) | (images > len(rules.symmetries)), "an images count no board has"),
    ]


def game_info(row: Sequence[Any]) -> GameInfo:
    """A ``games`` row read; a field of the wrong type or range raises ``ValueError``."""
    from ttt_solve.solver.figures import Figures

    fields = dict(zip(GAME_COLUMNS, row))
    whole = ("id", "rows", "cols", "k", "value", "remoteness", "positions", "reachable")
    for name in whole + (() if fields["book_depth"] is None else ("book_depth",)):
        if type(fields[name]) is not int:
            raise ValueError(f"{name} is {fields[name]!r}, not a whole number")
    rules = Rules(fields["rows"], fields["cols"], fields["k"])
    ranges = {
        # An exhaustive solve stores every ply; an opening book (alphabeta) stops at a depth;
        # a tablebase (table) holds every ply in its folder.
        "method": fields["method"] == _method(fields["book_depth"], fields["table_folder"]),
        "table_folder": fields["table_folder"] is None
        or (isinstance(fields["table_folder"], str) and fields["table_folder"] != ""),
        "value": -1 <= fields["value"] <= 1,
        "remoteness": 0 <= fields["remoteness"] <= rules.cells,
        "positions": fields["positions"] >= 0,
        "reachable": fields["reachable"] >= 0,
        "book_depth": fields["book_depth"] is None or 0 <= fields["book_depth"] <= rules.cells,
        "seconds": isinstance(fields["seconds"], (int, float)),
    }
    for name, good in ranges.items():
        if not good:
            raise ValueError(f"{name} {fields[name]!r} is out of range")
    value = Value(Outcome.from_sign(fields["value"]), fields["remoteness"])
    solved_at = fields["solved_at"]
    if isinstance(solved_at, str):
        solved_at = datetime.fromisoformat(solved_at)
    return GameInfo(
        fields["id"],
        rules,
        SolveMethod(fields["method"]),
        fields["book_depth"],
        fields["solver_version"],
        value,
        fields["positions"],
        fields["reachable"],
        Figures.from_dict(json.loads(fields["figures"])),
        fields["seconds"],
        solved_at,
        fields["table_folder"],
    )


def _method(book_depth: object, table_folder: object) -> str:
    """The method a games row must name, by what it stores."""
    if table_folder is not None:
        return SolveMethod.TABLE if book_depth is None else "(none: a table holds every ply)"
    return SolveMethod.EXHAUSTIVE if book_depth is None else SolveMethod.ALPHABETA


def columns_problem(rules: Rules, chunk: dict[str, Any]) -> str | None:
    """What makes a chunk of stored rows as NumPy columns (those of
    :meth:`Backend.column_chunks <book.backend.Backend.column_chunks>`) unreadable, or
    ``None``: the checks of :func:`row_problem`, on whole columns."""
    import numpy as np

    # as int64 (a narrow key has at most 62 bits), as a chunk of rows is checked
    columns = [chunk[name].astype(np.int64) for name in POSITION_COLUMNS]
    for bad, what in out_of_range(rules, *columns):
        if bad is not False and np.any(bad):
            first = int(np.flatnonzero(bad)[0])
            return f"a positions row of ply {int(chunk['ply'][first])} holds {what}"
    if (np.bitwise_count(chunk["key"]) != chunk["ply"]).any():
        return "a positions row's ply is not its count of stones"
    return None
