"""The block layout of ``position_blocks``: what the writer stores is what ``docs/storage.md``
documents (read back by :mod:`tests.booksurgery`, a reader written from that page alone, and
held against the solver's own rows), and a block no writer makes is refused in one line."""

from __future__ import annotations

import shutil
import sqlite3

import numpy as np
import pytest
from click.testing import CliRunner

from tests import booksurgery
from ttt_solve.book.blocks import BLOCK_POSITIONS
from ttt_solve.book.reader import open_book
from ttt_solve.cli.main import ttt
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.plytable import split_scores
from ttt_solve.solver.rules import Rules


def solver_rows(rules: Rules) -> list[tuple[int, ...]]:
    """Every canonical position of a game as the solver hands it over, in (ply, key) order."""
    rows = []
    for table in sorted(ExhaustiveSolver(rules).solve(), key=lambda table: table.ply):
        values, remoteness = split_scores(table.scores, rules.cells - table.ply)
        columns = (table.keys, values, remoteness, table.best_moves, table.images)
        rows += [(table.ply, *map(int, row)) for row in zip(*columns)]
    return rows


@pytest.mark.parametrize("rules", [Rules(3, 3, 3), Rules(3, 4, 3)])
def test_the_documented_layout_reads_back_the_solvers_rows(book_small, rules):
    with open_book(book_small) as book:
        info = book.game(rules)
        by_book = [tuple(row) for row in book.rows(rules)]
    independent = [tuple(row[1:]) for row in booksurgery.stored_rows(book_small, info.id)]
    assert independent == by_book == solver_rows(rules)


def test_blocks_hold_at_most_the_block_size_in_key_order(book_small):
    with open_book(book_small) as book:
        game_id = book.game(Rules(3, 4, 3)).id
    with sqlite3.connect(book_small) as connection:
        blocks = connection.execute(
            "SELECT ply, first_key, count, keys, data FROM position_blocks WHERE game_id = ? "
            "ORDER BY ply, first_key",
            (game_id,),
        ).fetchall()
    assert max(count for _, _, count, _, _ in blocks) == BLOCK_POSITIONS  # plies of many blocks
    last: dict[int, int] = {}
    for ply, first, count, keys, data in blocks:
        stored = np.frombuffer(keys, "<u8")
        assert len(stored) == count and len(data) == 7 * count
        assert int.from_bytes(first, "big") == stored[0]
        assert (np.diff(stored.astype(np.int64)) > 0).all() and last.get(ply, -1) < stored[0]
        assert count == BLOCK_POSITIONS or last.get(ply + 1) is None  # only a ply's last is short
        last[ply] = int(stored[-1])


def swap_first_keys(connection: sqlite3.Connection, ply: int) -> None:
    """Swap the first two keys of a ply's block, its first_key made the new first one."""
    (keys,) = connection.execute(
        "SELECT keys FROM position_blocks WHERE ply = ?", (ply,)
    ).fetchone()
    keys = keys[8:16] + keys[:8] + keys[16:]
    first = int.from_bytes(keys[:8], "little").to_bytes(16, "big")
    connection.execute(
        "UPDATE position_blocks SET keys = ?, first_key = ? WHERE ply = ?", (keys, first, ply)
    )


DAMAGE = [
    ("UPDATE position_blocks SET count = count + 1 WHERE ply = 2", "bytes of keys and"),
    ("UPDATE position_blocks SET data = substr(data, 2) WHERE ply = 2", "bytes of keys and"),
    ("UPDATE position_blocks SET first_key = zeroblob(16) WHERE ply = 2", "first_key that is not"),
    ("UPDATE position_blocks SET count = 2.5 WHERE ply = 2", "2.5 where a whole number belongs"),
    ("swap the first two keys of ply 2", "keys not in increasing order"),
    ("UPDATE position_blocks SET ply = 3 WHERE ply = 4", "ply is not its count of stones"),
]


@pytest.mark.parametrize(("damage", "words"), DAMAGE, ids=[d[1][:20] for d in DAMAGE])
@pytest.mark.parametrize("command", [("export", "-q", "-o", "-"), ("stats",), ("verify",)])
def test_a_damaged_block_is_one_line(book_3x3, tmp_path, damage, words, command):
    db = str(tmp_path / "damaged.sqlite")
    shutil.copy(book_3x3, db)
    connection = sqlite3.connect(db)
    with connection:
        if damage.startswith("swap"):
            swap_first_keys(connection, 2)
        else:
            assert connection.execute(damage).rowcount == 1
    connection.close()
    result = CliRunner().invoke(ttt, [*command, "--db", db])
    if command[0] == "stats" and result.exit_code == 0:
        return  # stats reads the rows only to find examples, and may find them first
    if command[0] == "verify" and result.exit_code == 1:  # the rows' problems, reported
        assert "problems" in result.output and "ply is not its count" in words
        return
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "looks damaged" in errors[0] and words in errors[0], errors
    assert "Traceback" not in result.output
