"""Reading and editing the positions of a SQLite book through the block layout that
``docs/storage.md`` documents, without the book's own code: the tests damage books with these
helpers, and hold the book's reader against :func:`stored_rows`, an independent reader.

A block is a row ``(game_id, ply, first_key, count, keys, data)`` of ``position_blocks``: up to
:data:`BLOCK` positions of one ply, sorted by key; ``first_key`` the first key as 16 bytes
big-endian; ``keys`` the keys little-endian, 8 bytes each (16 on boards of more than 31
cells); ``data`` the values (int8), the remoteness (uint8), the images (uint8), then the
best-moves masks little-endian, 4 bytes each (8 on boards of more than 31 cells).

An edit rewrites the blocks of the ply it touches, sorted, so that the book stays well formed
in its layout and only the edited position is wrong. A negative number is stored as its bit
pattern (as a C cast would); a number the layout cannot hold at all raises ``ValueError``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from contextlib import closing
from typing import NamedTuple

BLOCK = 1024
"""The most positions a block holds."""


class Row(NamedTuple):
    game_id: int
    ply: int
    key: int
    value: int
    remoteness: int
    best_moves: int
    images: int


def _widths(connection: sqlite3.Connection, game_id: int) -> tuple[int, int]:
    """(key bytes, mask bytes) of a game's blocks."""
    rows, cols = connection.execute(
        "SELECT rows, cols FROM games WHERE id = ?", (game_id,)
    ).fetchone()
    return (8, 4) if rows * cols <= 31 else (16, 8)


def decode(
    game_id: int, ply: int, count: int, keys: bytes, data: bytes, widths: tuple[int, int]
) -> list[Row]:
    """The positions of one block, as the layout says."""
    key_bytes, mask_bytes = widths
    rows = []
    for i in range(count):
        key = int.from_bytes(keys[i * key_bytes : (i + 1) * key_bytes], "little")
        value = int.from_bytes(data[i : i + 1], "little", signed=True)
        remoteness, images = data[count + i], data[2 * count + i]
        at = 3 * count + i * mask_bytes
        best = int.from_bytes(data[at : at + mask_bytes], "little")
        rows.append(Row(game_id, ply, key, value, remoteness, best, images))
    return rows


def _field(number: int, width: int, signed: bool = False) -> bytes:
    """``number`` in ``width`` bytes little-endian; negative numbers as their bit pattern."""
    if type(number) is not int:
        raise ValueError(f"{number!r}: the block layout holds whole numbers only")
    low = -(1 << (8 * width - 1)) if signed else -(1 << (8 * width))
    high = (1 << (8 * width - (1 if signed else 0))) - 1
    if not low <= number <= high:
        raise ValueError(f"{number}: the block layout holds it in {width} bytes")
    return (number & ((1 << (8 * width)) - 1)).to_bytes(width, "little")


def encode(rows: list[Row], widths: tuple[int, int]) -> tuple[bytes, int, bytes, bytes]:
    """``(first_key, count, keys, data)`` of one block of rows sorted by key."""
    key_bytes, mask_bytes = widths
    keys = b"".join(_field(row.key, key_bytes) for row in rows)
    data = b"".join(_field(row.value, 1, signed=True) for row in rows)
    data += b"".join(_field(row.remoteness, 1) for row in rows)
    data += b"".join(_field(row.images, 1) for row in rows)
    data += b"".join(_field(row.best_moves, mask_bytes) for row in rows)
    first = int.from_bytes(keys[:key_bytes], "little")  # a negative key: its bit pattern
    return first.to_bytes(16, "big"), len(rows), keys, data


def stored_rows(db: str, game_id: int | None = None, ply: int | None = None) -> list[Row]:
    """Every stored position (of one game, of one ply), in (game, ply, key) order."""
    with closing(sqlite3.connect(db)) as connection:
        return _read(connection, game_id, ply)


def _read(connection: sqlite3.Connection, game_id: int | None, ply: int | None) -> list[Row]:
    sql = "SELECT game_id, ply, count, keys, data FROM position_blocks WHERE 1 = 1"
    params: list[int] = []
    for column, number in (("game_id", game_id), ("ply", ply)):
        if number is not None:
            sql += f" AND {column} = ?"
            params.append(number)
    rows: list[Row] = []
    blocks = connection.execute(sql + " ORDER BY game_id, ply, first_key", params).fetchall()
    for game, block_ply, count, keys, data in blocks:
        rows += decode(game, block_ply, count, keys, data, _widths(connection, game))
    return rows


def _rewrite(connection: sqlite3.Connection, game_id: int, ply: int, rows: list[Row]) -> None:
    """Replace the blocks of one ply of one game by blocks of ``rows``."""
    rows = sorted(rows, key=lambda row: row.key)
    if len({row.key for row in rows}) != len(rows):
        raise sqlite3.IntegrityError("two positions of one ply with the same key")
    connection.execute("DELETE FROM position_blocks WHERE game_id = ? AND ply = ?", (game_id, ply))
    widths = _widths(connection, game_id)
    for start in range(0, len(rows), BLOCK):
        connection.execute(
            "INSERT INTO position_blocks (game_id, ply, first_key, count, keys, data) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (game_id, ply, *encode(rows[start : start + BLOCK], widths)),
        )


def edit(db: str, removed: Iterable[Row] = (), added: Iterable[Row] = ()) -> None:
    """Remove and add positions, in one transaction (an edit: the row before and after)."""
    removed, added = list(removed), list(added)
    with closing(sqlite3.connect(db)) as connection, connection:  # closed: no -wal left
        plies = {(row.game_id, row.ply) for row in removed + added}
        for game_id, ply in sorted(plies):
            rows = [row for row in _read(connection, game_id, ply) if row not in removed]
            rows += [row for row in added if (row.game_id, row.ply) == (game_id, ply)]
            _rewrite(connection, game_id, ply, rows)


def change(db: str, row: Row, **fields: int) -> Row:
    """Change fields of a stored position (a new ply or key moves it); returns the new row."""
    for name, number in fields.items():
        if type(number) is not int:
            raise ValueError(f"{name} {number!r}: the block layout holds whole numbers only")
    new = row._replace(**fields)
    edit(db, removed=[row], added=[new])
    return new


def delete(db: str, rows: Iterable[Row]) -> None:
    edit(db, removed=rows)


def add(db: str, row: Row) -> None:
    edit(db, added=[row])


def first(db: str, **conditions: int) -> Row:
    """The stored position of smallest (game, ply, key) whose fields equal ``conditions``."""
    return matching(db, **conditions)[0]


def matching(db: str, **conditions: int) -> list[Row]:
    """The stored positions whose fields equal ``conditions``, in (game, ply, key) order."""
    rows = stored_rows(db, conditions.get("game_id"), conditions.get("ply"))
    return [row for row in rows if all(getattr(row, n) == v for n, v in conditions.items())]
