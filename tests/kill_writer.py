"""Run the real ``ttt-solve`` with a fault injected into the book writer, for the crash-safety
tests: the process kills itself with SIGKILL (no clean-up of any kind) at a checkpoint of the
write transaction.

The environment variable :data:`KILL_HOOK` names the checkpoint: ``N`` (a number), once at
least N position rows are written (``0``: after the ``games`` row is inserted, before any
position row); ``commit``, after every row and the game's summary, just before COMMIT; empty,
no kill. Anything else is refused with exit status 2.

Usage: ``TTT_TEST_KILL_AT=N python tests/kill_writer.py [ttt-solve arguments]``.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

KILL_HOOK = "TTT_TEST_KILL_AT"


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _kill_after_rows(rows: int) -> None:
    """Wrap the writer's batch writer so that the process dies once ``rows`` positions are
    written."""
    from ttt_solve.book import writer

    written = 0

    def counted(real: Callable[..., Iterator[int]]) -> Callable[..., Iterator[int]]:
        def batches(*args: Any) -> Iterator[int]:
            nonlocal written
            if written >= rows:  # 0: before the first position row
                _die()
            for count in real(*args):
                written += count
                if written >= rows:
                    _die()
                yield count

        return batches

    writer.insert_blocks = counted(writer.insert_blocks)  # type: ignore[method-assign]


def _kill_before_commit() -> None:
    """Wrap the writer's last statement so that the process dies right after it."""
    from ttt_solve.book import writer

    real = writer._write_summary

    def summary_then_die(*args: Any) -> None:
        real(*args)
        _die()

    writer._write_summary = summary_then_die  # type: ignore[assignment]


def main() -> None:
    point = os.environ.get(KILL_HOOK, "").strip()
    if point == "commit":
        _kill_before_commit()
    elif point.isdigit():
        _kill_after_rows(int(point))
    elif point:
        print(f"{KILL_HOOK}={point!r}: expected a row count or 'commit'", file=sys.stderr)
        sys.exit(2)
    from ttt_solve.cli.solve import main as ttt_solve

    ttt_solve()


if __name__ == "__main__":
    main()
