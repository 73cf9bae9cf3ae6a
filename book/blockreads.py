"""The reads of a game's positions from the blocks of ``position_blocks`` (:mod:`book.blocks`),
shared by the two backends of a book database (:mod:`book.sqliterows`, :mod:`book.enginerows`):
each gives the two queries :meth:`BlockReads._fetch` and :meth:`BlockReads._stream`, and this
class the rest of :class:`~book.backend.Backend`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ttt_solve.book.blocks import (
    NARROW,
    TABLE,
    Layout,
    block_columns,
    block_row,
    check_order,
    checked_block,
    find_in_block,
    first_key,
    layout,
)
from ttt_solve.book.records import POSITION_COLUMNS
from ttt_solve.book.rowfilter import PYTHON_OPERATORS, SQL_OPERATORS, RowFilter
from ttt_solve.solver.rules import Rules

if TYPE_CHECKING:
    from ttt_solve.book.backend import Answer
    from ttt_solve.solver.position import Position

_BLOCK_SQL = f"SELECT first_key, count, keys, data FROM {TABLE}"
_BLOCK_OF_KEY = (
    f"{_BLOCK_SQL} WHERE game_id = ? AND ply = ? AND first_key <= ? ORDER BY first_key DESC LIMIT 1"
)
_GAME_BLOCKS = f"SELECT ply, first_key, count, keys, data FROM {TABLE} WHERE game_id = ?"


def _blob(column: Any) -> Any:
    """A binary column as ``bytes`` (drivers differ: ``memoryview`` from some); others as
    they are, for the block's checks to report."""
    return bytes(column) if isinstance(column, memoryview) else column


class BlockReads(ABC):
    """The book's reads of positions, from the blocks of ``position_blocks`` (see
    :mod:`book.blocks`), over :meth:`_fetch` and :meth:`_stream`, which each backend gives:
    the methods of :class:`~book.backend.Backend` but ``errors`` and ``close``.

    A key is found in the last block of its ply whose ``first_key`` is not above it, by a
    binary search among the block's keys. A block that no writer makes raises
    :class:`~book.blocks.BlockDamage`."""

    @abstractmethod
    def _fetch(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """Every row of a query (``?`` marks its parameters) as a tuple."""
        raise NotImplementedError

    @abstractmethod
    def _stream(self, sql: str, params: Sequence[Any]) -> Iterator[Sequence[Any]]:
        """The rows of a query a few at a time, its cursor closed when the iterator is."""
        raise NotImplementedError

    def positions(
        self, rules: Rules, game_id: int, ply: int, keys: Sequence[int]
    ) -> list[tuple[Any, ...]]:
        return self._lookup(rules, game_id, ply, keys)

    def analyse(self, rules: Rules, game_id: int, position: Position) -> Answer | None:
        raise NotImplementedError("blocks hold rows: Book reads them (positions, family)")

    def family(
        self, rules: Rules, game_id: int, ply: int, key: int, child_keys: Sequence[int]
    ) -> list[tuple[Any, ...]]:
        parent = self._lookup(rules, game_id, ply, (key,))
        return parent + self._lookup(rules, game_id, ply + 1, child_keys)

    def _lookup(
        self, rules: Rules, game_id: int, ply: int, keys: Sequence[int]
    ) -> list[tuple[Any, ...]]:
        """The rows of these keys of one ply that are stored, in key order."""
        shape = layout(rules.cells)
        rows: list[tuple[Any, ...]] = []
        stored: Sequence[int] = []  # the keys of the block read last
        data = b""
        for key in sorted(set(keys)):
            if not stored or not stored[0] <= key <= stored[-1]:
                found = self._fetch(_BLOCK_OF_KEY, (game_id, ply, first_key(key)))
                if not found:
                    stored = []
                    continue
                first, count, packed, data = map(_blob, found[0])
                stored = checked_block(shape, ply, first, count, packed, data)
            row = find_in_block(shape, ply, stored, data, key)
            if row is not None:
                rows.append(row)
        return rows

    def column_chunks(
        self, rules: Rules, game_id: int, where: RowFilter, batch: int
    ) -> Iterator[dict[str, Any]]:
        """The selected rows of a narrow board's game as NumPy columns, about ``batch`` rows
        a chunk (``ply`` and ``key`` included), in (ply, key) order."""
        import numpy as np

        on_ply, params = where.only("ply").sql()
        sql = f"{_GAME_BLOCKS}{on_ply} ORDER BY ply, first_key"
        parts: list[dict[str, Any]] = []
        held = 0
        for ply, *block in self._stream(sql, (game_id, *params)):
            first, count, packed, data = map(_blob, block)
            checked_block(NARROW, ply, first, count, packed, data)
            columns = _narrow_columns(ply, count, packed, data, where)
            columns["ply"] = np.full(len(columns["key"]), ply, dtype=np.int64)
            parts.append(columns)
            held += len(columns["key"])
            if held >= batch:
                yield _joined(parts)
                parts, held = [], 0
        if held:
            yield _joined(parts)

    def chunks(
        self, rules: Rules, game_id: int, where: RowFilter, batch: int
    ) -> Iterator[list[Any]]:
        shape = layout(rules.cells)
        on_ply, params = where.only("ply").sql()
        sql = f"{_GAME_BLOCKS}{on_ply} ORDER BY ply, first_key"
        chunk: list[Any] = []
        for ply, *block in self._stream(sql, (game_id, *params)):
            first, count, packed, data = map(_blob, block)
            stored = checked_block(shape, ply, first, count, packed, data)
            if shape is NARROW and batch >= _NUMPY_BATCH:
                chunk += _narrow_rows(ply, count, packed, data, where)
            else:  # few rows wanted (or a wide board's): plain Python, no NumPy to import
                chunk += _python_rows(shape, ply, stored, data, where)
            if len(chunk) >= batch:
                yield chunk
                chunk = []
        if chunk:
            yield chunk


def _joined(parts: list[dict[str, Any]]) -> dict[str, Any]:
    import numpy as np

    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


_NUMPY_BATCH = 1000
"""Rows a reader asks for at a time from which blocks are unpacked by NumPy: one who asks for
fewer (``ttt stats`` looks for one example row) is spared its import."""


def _python_rows(
    shape: Layout, ply: int, keys: Sequence[int], data: bytes, where: RowFilter
) -> list[Any]:
    """The rows of a block that ``where`` selects, in plain Python: the small columns are
    tested first, and only the positions they select are unpacked whole."""
    count = len(keys)
    columns = {
        "ply": [ply] * count,
        "value": [byte - 256 if byte > 127 else byte for byte in data[:count]],
        "remoteness": list(data[count : 2 * count]),
        "images": list(data[2 * count : 3 * count]),
    }
    chosen: Sequence[int] = range(count)
    for condition in where.conditions:
        column, compare = columns[condition.column], PYTHON_OPERATORS[SQL_OPERATORS[condition.op]]
        chosen = [i for i in chosen if compare(column[i], condition.number)]
    if not chosen:
        return []
    check_order(ply, keys)
    return [block_row(shape, ply, keys[i], data, count, i) for i in chosen]


def _narrow_rows(ply: int, count: int, packed: bytes, data: bytes, where: RowFilter) -> list[Any]:
    """The rows of a block of a board of at most 31 cells that ``where`` selects, unpacked by
    NumPy column by column."""
    from itertools import repeat

    columns = _narrow_columns(ply, count, packed, data, where)
    order = [columns[name].tolist() for name in POSITION_COLUMNS[1:]]
    return list(zip(repeat(ply), *order))


def _narrow_columns(
    ply: int, count: int, packed: bytes, data: bytes, where: RowFilter
) -> dict[str, Any]:
    """The columns (NumPy arrays) of the rows of a narrow block that ``where`` selects."""
    columns = block_columns(NARROW, ply, count, packed, data)
    if where.conditions:
        import numpy as np

        chosen = np.broadcast_to(where.holds({"ply": ply, **columns}), (count,))
        columns = {name: column[chosen] for name, column in columns.items()}
    return columns
