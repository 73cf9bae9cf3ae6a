"""What the table of wide keys costs: the upgrade of an old book, and lookups in a wide game.

* The upgrade from schema version 1 (no ``wide_positions``) on a 4x4 k=4 book of 1,217,977
  rows: the step this version takes (create the empty table), against what a ``key_high``
  column in the primary key of ``positions`` would take on SQLite (rebuild the table), with the
  file sizes after each.
* 10,000 ``Book.find`` of random positions of plies 0-2, in a 3x11 k=3 opening book (33 cells:
  ``wide_positions``) and in the 4x4 k=4 book (``positions``).

    python bench/bench_widekeys.py                  # books in a temporary directory
    python bench/bench_widekeys.py --books DIR      # keeps (and reuses) them in DIR
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import measure, script  # noqa: E402

from ttt_solve.book import migrate, schema  # noqa: E402
from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402

KEY_HIGH_REBUILD = """
CREATE TABLE positions_b (game_id INTEGER NOT NULL, ply SMALLINT NOT NULL,
  key_high BIGINT NOT NULL, key BIGINT NOT NULL, value SMALLINT NOT NULL,
  remoteness SMALLINT NOT NULL, best_moves BIGINT NOT NULL, images SMALLINT NOT NULL,
  PRIMARY KEY (game_id, ply, key_high, key),
  FOREIGN KEY (game_id) REFERENCES games (id) ON DELETE CASCADE) WITHOUT ROWID;
INSERT INTO positions_b SELECT game_id, ply, 0, key, value, remoteness, best_moves, images
  FROM positions ORDER BY game_id, ply, key;
DROP TABLE positions;
ALTER TABLE positions_b RENAME TO positions;
"""


def build(db: str, *arguments: str) -> None:
    if not os.path.exists(db):
        run = measure([script("ttt-solve"), *arguments, "--db", db, "--quiet"])
        if run.returncode != 0:
            sys.exit(f"ttt-solve {' '.join(arguments)} failed:\n{run.output}")


def as_version_1(source: str, target: str) -> None:
    """A copy of ``source`` as schema version 1 left it: no wide_positions table."""
    shutil.copy(source, target)
    connection = sqlite3.connect(target, isolation_level=None)  # VACUUM needs autocommit
    connection.execute("DROP TABLE wide_positions")
    connection.execute("UPDATE meta SET value = '1' WHERE name = 'schema_version'")
    connection.execute("VACUUM")
    connection.close()


def upgrades(folder: str, book: str) -> None:
    old = os.path.join(folder, "version1.sqlite")
    as_version_1(book, old)
    print(f"4x4 k=4 book at version 1: {os.path.getsize(old):,} bytes")
    engine = schema.make_engine(schema.database_url(old))
    started = time.perf_counter()
    migrate.prepare_schema(engine)
    seconds = time.perf_counter() - started
    engine.dispose()
    connection = sqlite3.connect(old, isolation_level=None)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the new table into the file
    connection.close()
    print(
        f"upgrade to version 2 (wide_positions): {seconds * 1000:.1f} ms, "
        f"{os.path.getsize(old):,} bytes after"
    )
    rebuilt = os.path.join(folder, "key_high.sqlite")
    as_version_1(book, rebuilt)
    connection = sqlite3.connect(rebuilt, isolation_level=None)
    started = time.perf_counter()
    connection.executescript("BEGIN IMMEDIATE;" + KEY_HIGH_REBUILD + "COMMIT;")
    seconds = time.perf_counter() - started
    connection.execute("VACUUM")
    connection.close()
    print(
        f"a key_high column instead (table rebuilt): {seconds:.1f} s, "
        f"{os.path.getsize(rebuilt):,} bytes after VACUUM"
    )


def lookups(db: str, rules: Rules) -> float:
    """Seconds for 10,000 ``Book.find`` of random positions of plies 0-2 (best of 3)."""
    rng = random.Random(1)
    positions = []
    for _ in range(10_000):
        position = Position.start(rules)
        for _ in range(rng.randrange(3)):
            position = position.play(rng.choice(position.legal_moves()))
        positions.append(position)
    best = float("inf")
    with open_book(db) as book:
        for _ in range(3):
            started = time.perf_counter()
            for position in positions:
                book.find(position)
            best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--books", help="directory to keep the books in (reused if present)")
    options = parser.parse_args()
    with open("/proc/loadavg") as loadavg:
        print(f"load average at start: {loadavg.read().split()[0]}")
    with tempfile.TemporaryDirectory(prefix="ttt-widekeys-") as scratch:
        folder = options.books or scratch
        os.makedirs(folder, exist_ok=True)
        narrow = os.path.join(folder, "4x4k4.sqlite")
        wide = os.path.join(folder, "3x11k3-book2.sqlite")
        build(narrow, "--size", "4", "--win", "4")
        build(wide, "--size", "3x11", "--win", "3", "--method", "alphabeta", "--book-depth", "2")
        upgrades(scratch, narrow)
        for db, rules in ((wide, Rules(3, 11, 3)), (narrow, Rules(4, 4, 4))):
            print(f"10,000 Book.find, plies 0-2, {rules.name}: {lookups(db, rules):.3f} s")
    with open("/proc/loadavg") as loadavg:
        print(f"load average at end: {loadavg.read().split()[0]}")


if __name__ == "__main__":
    main()
