"""Damaged books, made at random (seeded): byte ranges overwritten, files truncated, rows deleted
or altered (through the block layout, :mod:`tests.booksurgery`), blocks altered. Every read
command must end cleanly on each (an answer, or one line and exit 2, never a traceback), and
every damage must be either reported by ``ttt verify`` (exit 1: problems found, exit 2: the
book cannot be read) or impossible to observe: when ``ttt verify`` passes, every command
answers exactly as it does on the undamaged book.

The games row's ``seconds``, ``solved_at`` and ``solver_version`` are left alone: they record
how the book was made, nothing in the rows can confirm them, and no answer depends on them.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests import booksurgery
from ttt_solve.cli.main import ttt

CASES = 60
"""Damaged books per run (about 25 s on a shared 2-core machine)."""

SEED = int(os.environ.get("TTT_FUZZ_SEED", "20261122"))
"""Set ``TTT_FUZZ_SEED`` to try other damage; a failure names its case and what was done."""

QUERIES = (".../.../...", ".../.x./...", "x../.o./...", "xo./.x./..o", "o.x/x../...")

COMMANDS = (
    ("stats", "--json"),
    *(("query", text) for text in QUERIES),
    ("export", "-q", "--format", "jsonl"),
    ("audit", "-q", "--agent", "random", "--jobs", "1", "--seed", "1"),
)

POSITION_COLUMNS = ("ply", "key", "value", "remoteness", "best_moves", "images")
GAME_COLUMNS = ("rows", "cols", "k", "method", "book_depth", "value", "remoteness")
GAME_COLUMNS += ("positions", "reachable", "figures")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(ttt, list(args))


def outcome(result: Result, allowed: tuple[int, ...]) -> tuple[int, str]:
    """``(exit code, output)`` of a command that ended cleanly; fails the test otherwise."""
    assert result.exit_code in allowed, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output and "bug in ttt-solve" not in result.output
    if result.exit_code == 2:
        errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1, result.output
    return result.exit_code, result.output


def answers(db: str) -> list[tuple[int, str]]:
    return [outcome(invoke(*command, "--db", db), (0, 2)) for command in COMMANDS]


def some_value(rng: random.Random, current: object) -> object:
    """A replacement for a stored value: near it, far from it, or of the wrong type."""
    number = current if isinstance(current, int) else 0
    return rng.choice(
        [
            number + rng.choice((-2, -1, 1, 2)),
            number ^ (1 << rng.randrange(40)),
            -number,
            rng.randrange(-3, 30),
            1 << 62,
            "x",
            2.5,
        ]
    )


def damage_block(rng: random.Random, connection: sqlite3.Connection) -> str:
    """Change a column of a stored block: a count, a first key, a ply, bytes of its packed
    columns, or a value of the wrong type."""
    blocks = connection.execute("SELECT ply, first_key FROM position_blocks ORDER BY 1, 2")
    ply, first = rng.choice(blocks.fetchall())
    column = rng.choice(("ply", "first_key", "count", "keys", "data"))
    (current,) = connection.execute(
        f'SELECT "{column}" FROM position_blocks WHERE ply = ? AND first_key = ?', (ply, first)
    ).fetchone()
    if isinstance(current, bytes):
        at = rng.randrange(len(current))
        value: object = rng.choice(
            [
                current[:at] + bytes([current[at] ^ 1 << rng.randrange(8)]) + current[at + 1 :],
                current[:at],
                current + current[:at],
                "x",
            ]
        )
    else:
        value = some_value(rng, current)
    connection.execute(
        f'UPDATE position_blocks SET "{column}" = ? WHERE ply = ? AND first_key = ?',
        (value, ply, first),
    )
    return f"block ({ply}, {first.hex()}): {column} changed"


def damage(rng: random.Random, db: str) -> str:
    """Damage the book at ``db`` in one random way; returns what was done."""
    kind = rng.choice(("overwrite", "truncate", "delete", "alter", "alter", "block", "game"))
    size = Path(db).stat().st_size
    if kind == "overwrite":
        offset, length = rng.randrange(size), rng.randint(1, 4096)
        with open(db, "r+b") as file:
            file.seek(offset)
            file.write(rng.randbytes(length))
        return f"bytes {offset}..{offset + length} overwritten"
    if kind == "truncate":
        length = rng.randrange(size)
        with open(db, "r+b") as file:
            file.truncate(length)
        return f"truncated to {length} bytes"
    try:
        if kind == "delete":
            rows = booksurgery.stored_rows(db)
            chosen = rng.sample(rows, rng.choice((1, 1, 2, 10)))
            booksurgery.delete(db, chosen)
            return f"rows {[(row.ply, row.key) for row in chosen]} deleted"
        if kind == "alter":
            row = booksurgery.stored_rows(db)[rng.randrange(765)]
            column = rng.choice(POSITION_COLUMNS)
            current = getattr(row, column)
            value = some_value(rng, current)
            booksurgery.change(db, row, **{column: value})
            return f"row ({row.ply}, {row.key}): {column} {current!r} -> {value!r}"
    except (sqlite3.IntegrityError, ValueError) as error:  # a key that exists, or a number
        return f"not stored ({error})"  # the block layout cannot hold: no damage
    connection = sqlite3.connect(db)
    try:
        with connection:
            if kind == "block":
                return damage_block(rng, connection)
            column = rng.choice(GAME_COLUMNS)
            (current,) = connection.execute(f'SELECT "{column}" FROM games').fetchone()
            if column == "figures":
                digits = [i for i, c in enumerate(current) if c.isdigit()]
                at = rng.choice(digits)
                value = current[:at] + str((int(current[at]) + 1) % 10) + current[at + 1 :]
                if rng.random() < 0.3:
                    value = current[: rng.randrange(len(current))]  # cut short
            elif column == "method":
                value = rng.choice(("alphabeta", "exhaustive", "?"))
            else:
                value = some_value(rng, current)
            connection.execute(f'UPDATE games SET "{column}" = ?', (value,))
            return f"games: {column} changed"
    except sqlite3.IntegrityError as error:  # a key that already exists, a NULL: no damage
        return f"refused by the database ({error})"
    finally:
        connection.close()


@pytest.fixture(scope="module")
def pristine(book_3x3: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list]:
    """The path every case damages its copy at, and the answers of the undamaged book."""
    db = str(tmp_path_factory.mktemp("fuzz") / "B.sqlite")
    shutil.copy(book_3x3, db)
    return db, answers(db)


@pytest.mark.slow
def test_damaged_books_are_reported_or_harmless(book_3x3, pristine):
    db, expected = pristine
    rng = random.Random(SEED)
    reported = harmless = 0
    for case in range(CASES):
        shutil.copy(book_3x3, db)
        done = damage(rng, db)
        try:
            got = answers(db)
            verified, _ = outcome(invoke("verify", "--db", db), (0, 1, 2))
        except AssertionError as error:
            raise AssertionError(f"case {case}: {done}: {error}") from None
        if verified == 0:
            assert got == expected, f"case {case}: {done}: verify passes but answers changed"
            harmless += 1
        else:
            reported += 1
    # the damage generator does damage
    assert reported > CASES // 3, f"{CASES} cases: {reported} reported, {harmless} harmless"
