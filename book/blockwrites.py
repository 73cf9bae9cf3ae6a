"""Writing the blocks of a ply into ``position_blocks``: the one INSERT that a writer
(:mod:`book.writer`) and the upgrade of an older book (:mod:`book.migrate`) share.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

from sqlalchemy.engine import Connection

from ttt_solve.book import schema
from ttt_solve.book.blocks import BLOCK_COLUMNS, TABLE

BATCH_BLOCKS = 64
"""Blocks handed to the database at a time (64 Ki positions): bounds the memory of a batch (a
4x5 ply holds tens of millions of positions) and sets how often progress is reported."""


def insert_blocks(conn: Connection, game_id: int, ply: int, blocks: Iterable[Any]) -> Iterator[int]:
    """Insert the blocks of one ply with the driver's ``executemany``, a batch at a time;
    yield the positions of each batch.

    The game and the ply, one value for the whole ply, are literals of the statement rather
    than parameters of every block."""
    marks = schema.placeholders(conn.engine, 4)
    insert = (
        f"INSERT INTO {TABLE} ({', '.join(BLOCK_COLUMNS)}) "
        f"VALUES ({int(game_id)}, {int(ply)}, {marks})"
    )
    taken = iter(blocks)  # batches are cut from one iterator, whatever iterable is given
    cursor = conn.connection.cursor()
    try:
        for batch in iter(lambda: list(islice(taken, BATCH_BLOCKS)), []):
            cursor.executemany(insert, batch)
            yield sum(block[1] for block in batch)
    finally:
        cursor.close()
