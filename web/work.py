"""What a worker process of ``ttt serve`` does (see :mod:`web.workers`, which starts them).

A worker opens the book read-only itself, lowers its priority, loads the compiled search, says
it is ready, then answers tasks from its pipe one at a time: ``analyse`` (a position searched
live), ``line`` (the optimal line from a position), ``move`` (an agent's move) and ``audit``.
It keeps what makes the next task cheap: an oracle per game, whose prover keeps its table, and
the truth of the last game it audited (one game: a worker's memory stays bounded by the largest
game served).

Every answer is ``(kind, payload)``: ``("done", result)``, ``("error", (kind, message))`` (see
:func:`web.workers.describe_error`) or, for an audit, ``("progress", (done, total))`` first.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from ttt_solve.agents.audit import Truth
from ttt_solve.agents.seeded import seeded_move
from ttt_solve.book.oracle import Oracle
from ttt_solve.book.query import mainline
from ttt_solve.book.reader import Book, open_book
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.web.audits import AuditDone, AuditRequest, run_audit
from ttt_solve.web.workers import Setup, describe_error

NICENESS = 10
"""How much lower a worker's priority is than the server's: where they compete for a core, the
server gets about nine tenths of it (Linux's weights for nice 0 and 10: 1024 and 110)."""

PARENT_CHECK_SECONDS = 0.5
"""How often a worker looks whether the server is still there, where the system cannot tell
it (on Linux it is killed with the server at once)."""

_PR_SET_PDEATHSIG = 1


class Work:
    """The tasks of one worker, over its own handle on the book."""

    def __init__(self, book: Book, search_seconds: float) -> None:
        self.book = book
        self.search_seconds = search_seconds
        self._oracles: dict[Rules, Oracle] = {}
        self._truth: Truth | None = None

    def warm(self) -> None:
        """Load the compiled search now, not on a visitor's request (from Numba's cache on
        disk: about half a second; compiled the first time on a machine: about 10 s)."""
        from ttt_solve.solver.prover.search import Prover

        rules = Rules(3, 3, 3)
        Prover(rules, table_bits=10).solve(Position.start(rules))

    def oracle(self, rules: Rules) -> Oracle:
        """The game's oracle, kept: its prover's table serves the next searches."""
        oracle = self._oracles.get(rules)
        if oracle is None:
            oracle = Oracle(rules, self.book, search_seconds=self.search_seconds)
            self._oracles[rules] = oracle
        return oracle

    def analyse(self, position: Position) -> tuple[Any, ...]:
        """The position's answer (searched live where the book lacks it), as the fields of
        an :class:`~book.oracle.Analysis` after its position."""
        analysis = self.oracle(position.rules).analyse(position)
        return tuple(analysis[1:])

    def line(self, position: Position) -> list[tuple[int, Any]]:
        """The optimal line from the position: ``(cell, value for the mover)`` per ply."""
        return [(step.cell, step.value) for step in mainline(self.oracle(position.rules), position)]

    def move(self, spec: str, seed: int, position: Position) -> int:
        """The agent's move in the game of seed ``seed``: the same game, the same move."""
        return seeded_move(spec, seed, position, self.book)

    def audit(self, request: AuditRequest, progress: Callable[[int, int], None]) -> AuditDone:
        return run_audit(self.truth(request.rules), request, progress)

    def truth(self, rules: Rules) -> Truth:
        """The book's values of a game; the last one is kept (one at a time)."""
        if self._truth is None or self._truth.rules != rules:
            self._truth = None  # the old one goes before the new one is read
            self._truth = Truth(self.book, rules)
        return self._truth


def main(conn: Connection, setup: Setup, parent: int) -> None:
    """A worker's life: start, say ready (or why it cannot start), answer tasks until the
    server closes the pipe or goes."""
    _die_with(parent)
    # The terminal's Ctrl-C reaches the whole process group: the server ends its workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    with contextlib.ExitStack() as stack:
        try:
            book = stack.enter_context(open_book(setup.db, read_only=True))
            work = Work(book, setup.search_seconds)
            if setup.warm:
                work.warm()
        except Exception as error:  # noqa: BLE001 - said to the server, which reports it
            conn.send(("failed", describe_error(error)[1]))
            return
        conn.send(("ready", None))
        serve(conn, work)


def serve(conn: Connection, work: Work) -> None:
    """Answer tasks until the pipe closes."""

    def progress(done: int, total: int) -> None:
        conn.send(("progress", (done, total)))

    tasks: dict[str, Callable[..., Any]] = {
        "analyse": work.analyse,
        "line": work.line,
        "move": work.move,
        "audit": lambda request: work.audit(request, progress),
    }
    while True:
        try:
            name, args = conn.recv()
        except (EOFError, OSError):
            return  # the server has gone
        try:
            reply: tuple[str, Any] = ("done", tasks[name](*args))
        except Exception as error:  # noqa: BLE001 - every error goes back to the server
            reply = ("error", describe_error(error))
        try:
            conn.send(reply)
        except OSError:
            return


def _die_with(parent: int) -> None:
    """End this process when the server's ends, however it ends (``kill -9`` included)."""
    with contextlib.suppress(OSError, AttributeError):
        # Linux: the kernel kills this process when its parent ends, even while a compiled
        # search holds the interpreter's lock (a thread could not run then).
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the server was gone before that
        os._exit(0)

    def watch() -> None:  # elsewhere: look from time to time
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
