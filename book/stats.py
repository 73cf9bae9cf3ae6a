"""The analysis of a solved game as plain data: the figures stored with it, and the longest win
and loss with an example position of each (what ``ttt stats`` prints and the web explorer's
analysis page shows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ttt_solve.book.reader import Book
from ttt_solve.book.records import GameInfo
from ttt_solve.book.rowfilter import RowFilter
from ttt_solve.solver.position import Position
from ttt_solve.solver.value import Outcome, Value

WEIGHTS = ("reachable", "canonical")


def longest(info: GameInfo, outcome: Outcome) -> int | None:
    """The largest remoteness of any position with this outcome for the side to move."""
    table = info.figures.remoteness["reachable"][outcome]
    found = [r for r, n in table.items() if n]
    return max(found) if found else None


def example(book: Book, info: GameInfo, outcome: Outcome, remoteness: int) -> Position | None:
    """One stored position (canonical orientation, lowest ply and key) with this value: for a
    game stored as a table, found by its record in the files (:meth:`TableRows.first_key
    <book.table.rows.TableRows.first_key>`) rather than in the stream of rows."""
    folder = book.table_folder(info)
    if folder is not None:
        return _table_example(book, info, folder, Value(outcome, remoteness))
    rows = book.rows(
        info.rules, where=RowFilter.of(value=outcome.sign, remoteness=remoteness), batch=1
    )
    try:
        row = next(rows, None)
    finally:
        rows.close()
    return None if row is None else Position.from_key(info.rules, row.key)


def _table_example(book: Book, info: GameInfo, folder: Path, value: Value) -> Position | None:
    from ttt_solve.book.table.rows import TableRows
    from ttt_solve.solver.tablebase.files import TableError

    try:
        rows = TableRows(folder, info.rules)
        try:
            key = rows.first_key(info.rules, value)
        finally:
            rows.close()
    except TableError as error:
        raise book.damaged(f"the table of {info.rules.name}: {error}", info.rules) from None
    return None if key is None else Position.from_key(info.rules, key)


def report(book: Book, info: GameInfo) -> dict[str, Any]:
    """Everything ``stats`` prints, as plain data (the ``--json`` output)."""
    figures = info.figures
    longest_of = {}
    for outcome in (Outcome.WIN, Outcome.LOSS):
        r = longest(info, outcome)
        position = example(book, info, outcome, r) if r is not None else None
        longest_of[outcome] = (
            None
            if r is None
            else {
                "remoteness": r,
                "positions": figures.remoteness["reachable"][outcome][r],
                "example": str(position) if position is not None else None,
            }
        )
    rules = info.rules
    return {
        "game": rules.as_dict(),
        "value_for_x": info.value.outcome.value,
        "remoteness": info.value.remoteness,
        "method": info.method,
        "book_depth": info.book_depth,
        "reachable": figures.reachable,
        "canonical": figures.canonical,
        "by_ply": {w: {str(p): n for p, n in sorted(figures.by_ply[w].items())} for w in WEIGHTS},
        "values": figures.values,
        "values_for_x": figures.values_for_x,
        "terminal": figures.terminal,
        "remoteness_table": {
            w: {
                o: {str(r): n for r, n in sorted(figures.remoteness[w][o].items())} for o in Outcome
            }
            for w in WEIGHTS
        },
        "longest_win": longest_of[Outcome.WIN],
        "longest_loss": longest_of[Outcome.LOSS],
    }
