"""The server's worker processes: live searches, agent moves and audits run in them.

The server answers what the book holds in its own event loop. Work that computes (a live
search past an opening book, an agent's move, an audit) goes to a :class:`WorkerPool`: a few
processes started with the server, each with the book open read-only and its own oracles
(:mod:`web.work` is what runs in them). Processes rather than threads because:

* a task can be stopped: a task past its time, or whose visitor has gone, is stopped by ending
  its process (a fresh one takes its place); a thread cannot be stopped from outside;
* the serving loop keeps its core: workers run at a lower priority (:data:`web.work.NICENESS`)
  and hold no lock of the server's, so book answers keep their latency while they compute.

A pool never queues: a task that finds no idle worker is refused at once with
:class:`BusyError` (429). Workers die with the server, however it ends (see
:func:`web.work.main`). The pool is used from threads (a request's wait runs in Starlette's
thread pool, an audit's in a thread of its own); processes are started only from the thread
that started the pool (the server's event loop), which lives as long as they do.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from typing import Any, NamedTuple

from ttt_solve.book.errors import (
    BookError,
    DamagedBookError,
    OutOfReachError,
    PositionNotFoundError,
)
from ttt_solve.errors import TttError

GRACE_SECONDS = 1.0
"""How long past a task's time its worker is left before it is ended: a live search stops
itself at its deadline and says so; this is for work that does not (an agent's move)."""

POLL_SECONDS = 0.1
"""How often a waiting thread looks whether its visitor has gone or the server is stopping."""

RESTART_SECONDS = 5.0
"""The least time between two starts of a worker whose start failed."""

_CONTEXT = multiprocessing.get_context("spawn")
"""Workers start from a fresh interpreter: the server has threads, which a fork would copy in
whatever state they were (a lock held, a cursor open)."""


class BusyError(TttError):
    """Every slot for live work (searches, agent moves, audits) is taken: try again later."""


class WorkTimeout(TttError):
    """A task ran past its time and its worker was stopped."""


class ClientGone(TttError):
    """The visitor who asked for the task has gone; the task was stopped."""


class Unavailable(TttError):
    """The server cannot do the work now: it is stopping, or a worker failed."""


class Stopping(Unavailable):
    """The server is stopping: the task was abandoned."""


class WorkerFailed(TttError):
    """A worker met an error that is a bug of ttt-solve (its message names it)."""


class Setup(NamedTuple):
    """What a worker needs to start: the book, and how long a live search may take."""

    db: str
    search_seconds: float
    warm: bool  # load the compiled search before saying it is ready


# -- errors across the pipe -----------------------------------------------------------------

_ERROR_KINDS: tuple[tuple[str, type[BaseException]], ...] = (
    ("damaged", DamagedBookError),
    ("out of reach", OutOfReachError),
    ("not found", LookupError),
    ("book", BookError),
    ("input", TttError),
    ("input", ValueError),
)


def describe_error(error: BaseException) -> tuple[str, str]:
    """``(kind, message)`` of an error raised in a worker, to be raised again in the server
    by :func:`rebuilt_error` (an exception object may not survive pickling)."""
    message = " ".join(str(error).split())
    for kind, kinds in _ERROR_KINDS:
        if isinstance(error, kinds):
            return kind, message
    return "bug", f"{type(error).__name__}: {message}"


def rebuilt_error(kind: str, message: str) -> Exception:
    """The server's error for an error a worker described (it keeps its HTTP status)."""
    if kind == "damaged":
        return DamagedBookError(message)
    if kind == "out of reach":
        return OutOfReachError(message)
    if kind == "not found":
        return PositionNotFoundError(message)
    if kind == "book":
        return BookError(message)
    if kind == "input":
        return TttError(message)
    return WorkerFailed(f"the work failed unexpectedly: {message}")


# -- the pool -------------------------------------------------------------------------------


class _Worker:
    """One process of a pool and where it stands."""

    def __init__(self, process: Any, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.state = "starting"  # then "ready", "busy"; "failed" if it could not start
        self.error = ""
        self.started = time.monotonic()


class Task:
    """A task handed to a worker; :meth:`result` waits for its answer."""

    def __init__(self, pool: WorkerPool, worker: _Worker, what: str) -> None:
        self.pool = pool
        self.worker = worker
        self.what = what

    def result(
        self,
        seconds: float,
        *,
        grace: float = GRACE_SECONDS,
        progress: Callable[[int, int], None] | None = None,
        gone: threading.Event | None = None,
    ) -> Any:
        """The task's answer; its worker is ended (and replaced) past ``seconds`` (plus
        ``grace``: :class:`WorkTimeout`), once ``gone`` is set (:class:`ClientGone`) or when
        the server stops (:class:`Unavailable`). ``progress(done, total)`` is told of the
        progress the task reports. An error the task raised is raised here."""
        worker, conn = self.worker, self.worker.conn
        deadline = time.monotonic() + seconds + grace
        healthy = False
        try:
            while True:
                if self.pool.stopping:
                    raise Stopping("the server is stopping")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WorkTimeout(
                        f"{self.what} ran past this server's limit of {seconds:g} s and was stopped"
                    )
                if gone is not None and gone.is_set():
                    raise ClientGone(f"{self.what} was stopped: the visitor has gone")
                ready = wait([conn, worker.process.sentinel], min(left, POLL_SECONDS))
                if conn in ready:
                    try:
                        kind, payload = conn.recv()
                    except (EOFError, OSError):
                        ready = [worker.process.sentinel]  # it died as it answered
                    else:
                        if kind == "progress":
                            if progress is not None:
                                progress(*payload)
                            continue
                        healthy = True
                        break
                if worker.process.sentinel in ready:
                    if self.pool.stopping:
                        raise Stopping("the server is stopping")
                    raise Unavailable(
                        f"{self.what} stopped: its worker process ended unexpectedly "
                        f"(exit status {worker.process.exitcode}); try again"
                    )
        finally:
            if healthy:
                self.pool._release(worker)
            else:
                self.pool._replace(worker)
        if kind == "error":
            raise rebuilt_error(*payload)
        return payload


class WorkerPool:
    """``size`` worker processes, each ready for one task at a time; ``name`` says what they
    do in messages ("audits"). :meth:`start` them from the thread that will outlive them (the
    event loop's)."""

    def __init__(self, name: str, size: int, setup: Setup) -> None:
        self.name = name
        self.size = size
        self.setup = setup
        self.stopping = False
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> WorkerPool:
        """Start the workers (they become ready in the background: a second or so, the
        first time on a machine the compilation of the search, about 10 s)."""
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None  # not in a server: replacements start from the thread that asks
        self._workers = [self._spawn() for _ in range(self.size)]
        return self

    def _spawn(self) -> _Worker:
        from ttt_solve.web import work

        ours, theirs = _CONTEXT.Pipe()
        process = _CONTEXT.Process(
            target=work.main,
            args=(theirs, self.setup, os.getpid()),
            name=f"ttt serve worker ({self.name})",
            daemon=True,  # ended by multiprocessing at the server's exit, too
        )
        process.start()
        theirs.close()
        return _Worker(process, ours)

    def submit(self, task: str, *args: Any, what: str) -> Task:
        """Hand ``task(*args)`` to an idle worker (see :mod:`web.work`); :class:`BusyError`
        if none is; ``what`` names the task in messages ("the live search")."""
        worker = self._take()
        try:
            worker.conn.send((task, args))
        except (OSError, ValueError):  # it died meanwhile
            self._replace(worker)
            raise Unavailable(
                f"{what} could not start: a worker process ended; try again"
            ) from None
        return Task(self, worker, what)

    def run(
        self,
        task: str,
        *args: Any,
        what: str,
        seconds: float,
        gone: threading.Event | None = None,
    ) -> Any:
        """:meth:`submit` and :meth:`Task.result`: the answer of ``task(*args)``."""
        return self.submit(task, *args, what=what).result(seconds, gone=gone)

    def _take(self) -> _Worker:
        with self._lock:
            if self.stopping:
                raise Stopping("the server is stopping")
            for worker in self._workers:
                if worker.state == "starting":
                    self._check_start(worker)
                if worker.state == "ready":
                    worker.state = "busy"
                    return worker
            states = [worker.state for worker in self._workers]
            failed = [worker for worker in self._workers if worker.state == "failed"]
            for worker in failed:
                if time.monotonic() - worker.started > RESTART_SECONDS:
                    self._replace_later(worker)
        if states and all(state == "failed" for state in states):
            raise Unavailable(
                f"the server's workers for {self.name} cannot start: {failed[0].error}"
            )
        if "starting" in states:
            raise BusyError(
                f"the server's workers for {self.name} are starting; try again in a moment"
            )
        raise BusyError(
            f"the server is busy: it runs at most {self.size} {self.name} at once; try again in a "
            f"moment"
        )

    def _check_start(self, worker: _Worker) -> None:
        """Whether a starting worker has said it is ready (or why it could not start)."""
        try:
            if worker.conn.poll():
                kind, payload = worker.conn.recv()
                if kind == "ready":
                    worker.state = "ready"
                    return
                worker.state, worker.error = "failed", payload
                return
        except (EOFError, OSError):
            pass
        else:
            if worker.process.is_alive():
                return
        worker.state = "failed"
        if not worker.error:
            worker.error = f"a worker ended as it started (exit status {worker.process.exitcode})"

    def wait_ready(self, timeout: float) -> bool:
        """Wait until every worker is ready (or has failed to start); whether all are ready."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                for worker in self._workers:
                    if worker.state == "starting":
                        self._check_start(worker)
                states = {worker.state for worker in self._workers}
            if "starting" not in states:
                return states <= {"ready", "busy"}
            time.sleep(0.05)
        return False

    def _release(self, worker: _Worker) -> None:
        with self._lock:
            worker.state = "ready"

    def _replace(self, worker: _Worker) -> None:
        """End a worker (its task is abandoned) and start a fresh one in its place."""
        _end(worker.process)
        worker.process.join(2)  # at once after SIGKILL: no zombie is left behind
        worker.conn.close()
        with self._lock:
            self._replace_later(worker)

    def _replace_later(self, worker: _Worker) -> None:
        """Start a worker in place of ``worker`` from the pool's own thread (see the module's
        note); the place stays taken until then. Call with the lock held."""
        worker.state = "replacing"
        if self.stopping:
            return
        if self._loop is None:
            self._put_fresh(worker)
            return
        try:
            self._loop.call_soon_threadsafe(self._put_fresh_locked, worker)
        except RuntimeError:  # the loop is closed: the server is stopping
            pass

    def _put_fresh_locked(self, worker: _Worker) -> None:
        with self._lock:
            self._put_fresh(worker)

    def _put_fresh(self, worker: _Worker) -> None:
        if self.stopping or worker not in self._workers:
            return
        self._workers[self._workers.index(worker)] = self._spawn()

    def stop(self) -> None:
        """End every worker (a task running is abandoned) and wait for them to go."""
        self.kill()
        for worker in list(self._workers):
            worker.process.join(2)
            worker.conn.close()

    def kill(self) -> None:
        """End every worker at once. Safe in a signal handler: it takes no lock (the handler
        may run while this thread holds it)."""
        self.stopping = True
        for worker in list(self._workers):
            _end(worker.process)

    def pids(self) -> list[int]:
        """The process ids of the workers (for the tests)."""
        return [worker.process.pid for worker in list(self._workers) if worker.process.pid]


def _end(process: Any) -> None:
    """End a worker at once: it holds nothing that needs cleaning (the book is read-only)."""
    if process.pid is None or process.exitcode is not None:
        return
    try:
        os.kill(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
