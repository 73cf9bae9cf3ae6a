"""Which stored rows of a game to read: :class:`RowFilter`, tested by the book on the rows it
unpacks (and the conditions on the ply turned into SQL, a block being of one ply).

A filter is a conjunction of :class:`Condition` s, ``column operator number``, on the columns
of a stored row that a reader may select by. Column names and operators are checked against
fixed lists when the filter is made, and numbers are bound as parameters, so no text from a
user ever becomes SQL.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ttt_solve.book.errors import RowFilterError
from ttt_solve.errors import quoted
from ttt_solve.solver.value import Outcome

FILTER_COLUMNS = ("ply", "value", "remoteness", "images")
"""The columns a filter may name (``value`` is for the side to move: 1, 0, -1)."""

SQL_OPERATORS = {"=": "=", "==": "=", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
"""Operator as written -> as SQL spells it."""

PYTHON_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
"""SQL operator -> the Python operator that makes the same comparison on numbers or arrays."""

VALUE_NUMBERS = {outcome.value: outcome.sign for outcome in Outcome}
"""The value column's numbers by name (for the side to move)."""

_CONDITION = re.compile(
    r"^\s*([a-z_]+)\s*(<=|>=|!=|==|=|<|>)\s*([a-z]+|[+-]?\d+)\s*$", re.IGNORECASE
)

LARGEST = 10**6
"""Every filtered column is small; SQLite cannot bind integers beyond 64 bits at all."""


class Condition(NamedTuple):
    """One condition on a stored row: ``column op number``."""

    column: str
    op: str
    number: int

    def __str__(self) -> str:
        return f"{self.column}{self.op}{self.number}"


@dataclass(frozen=True)
class RowFilter:
    """Rows for which every condition holds (no condition: every row).

    Raises :class:`~book.errors.RowFilterError` quoting the condition for an unknown column,
    an unknown operator or a number out of range.
    """

    conditions: tuple[Condition, ...] = ()

    def __post_init__(self) -> None:
        for condition in self.conditions:
            _check(condition)

    @classmethod
    def of(
        cls,
        *,
        ply: int | None = None,
        value: int | None = None,
        remoteness: int | None = None,
        open_only: bool = False,
    ) -> RowFilter:
        """The rows of one ply, of one value sign for the side to move, of one remoteness;
        ``open_only``: the positions that are not over (remoteness above 0)."""
        conditions = [
            Condition(column, "=", number)
            for column, number in (("ply", ply), ("value", value), ("remoteness", remoteness))
            if number is not None
        ]
        if open_only:
            conditions.append(Condition("remoteness", ">", 0))
        return cls(tuple(conditions))

    @classmethod
    def parse(cls, text: str) -> RowFilter:
        """A filter from its text: ``ply<=4``, ``value=win``, ``ply>=2 and images=8``.

        Columns: ply, value (win, draw, loss, or 1, 0, -1; ordered loss < draw < win),
        remoteness, images. Operators: = (or ==), !=, <, <=, >, >=. Conditions are joined by
        ``and`` or commas. :class:`~book.errors.RowFilterError` quotes what is not understood.
        """
        conditions = []
        shown = quoted(str(text))
        for part in re.split(r"\s+and\s+|,", str(text).strip(), flags=re.IGNORECASE):
            match = _CONDITION.match(part)
            if not match:
                raise RowFilterError(
                    f"{shown}: cannot read {quoted(part.strip())}; write COLUMN OP VALUE, "
                    f"e.g. ply<=4 or value=win"
                )
            column, op, literal = match.group(1).lower(), match.group(2), match.group(3).lower()
            if literal.lstrip("+-").isdigit():
                # Python refuses to read a number of thousands of digits; none is in range.
                if len(literal.lstrip("+-").lstrip("0")) > len(str(LARGEST)):
                    raise RowFilterError(f"{shown}: {quoted(literal)} is out of range for {column}")
                number = int(literal)
            elif column == "value" and literal in VALUE_NUMBERS:
                number = VALUE_NUMBERS[literal]
            else:
                expected = "win, draw, loss or 1, 0, -1" if column == "value" else "a whole number"
                raise RowFilterError(
                    f"{shown}: {column} compares with {expected}, not {quoted(literal)}"
                )
            conditions.append(Condition(column, op, number))
        try:
            return cls(tuple(conditions))
        except RowFilterError as error:
            raise RowFilterError(f"{shown}: {error}") from None

    def sql(self) -> tuple[str, tuple[int, ...]]:
        """The conditions as SQL text to follow a ``WHERE``-clause term (`` AND ply <= ?``)
        with ``?`` markers, and their parameters."""
        text = "".join(f" AND {c.column} {SQL_OPERATORS[c.op]} ?" for c in self.conditions)
        return text, tuple(c.number for c in self.conditions)

    def only(self, *columns: str) -> RowFilter:
        """The conditions on these columns alone (those a query can test before unpacking)."""
        return RowFilter(tuple(c for c in self.conditions if c.column in columns))

    def holds(self, columns: Mapping[str, Any]) -> Any:
        """Whether the conditions hold for the values of ``columns`` (numbers, or NumPy
        arrays: then an array of booleans, row by row)."""
        chosen: Any = True
        for c in self.conditions:
            chosen = chosen & PYTHON_OPERATORS[SQL_OPERATORS[c.op]](columns[c.column], c.number)
        return chosen


def _check(condition: Condition) -> None:
    column, op, number = condition
    if column not in FILTER_COLUMNS:
        raise RowFilterError(
            f"row condition {str(condition)!r}: unknown column {column!r}; "
            f"use one of {', '.join(FILTER_COLUMNS)}"
        )
    if op not in SQL_OPERATORS:
        raise RowFilterError(
            f"row condition {str(condition)!r}: unknown operator {op!r}; "
            f"use one of {', '.join(SQL_OPERATORS)}"
        )
    if isinstance(number, bool) or not isinstance(number, int):
        raise RowFilterError(
            f"row condition {str(condition)!r}: {column} compares with a whole number"
        )
    if abs(number) > LARGEST:
        raise RowFilterError(
            f"row condition {str(condition)!r}: {number} is out of range for {column}"
        )
