"""What the tool's processes share: Ctrl-C held back over a moment that must not be cut, worker
processes that end with the process that started them, and the hand-out of work to a pool of
them, the waits for its results and its end.

A process killed with SIGKILL cannot stop the workers of its pools: left alone, each would
finish its task, fail to hand the result back through a pipe nobody reads (a
``BrokenPipeError`` traceback on the user's terminal), and only then exit. A worker that calls
:func:`end_with_parent` as it starts exits as soon as its parent is gone, silently.
"""

from __future__ import annotations

import concurrent.futures
import functools
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from typing import Any

ORPHANED = 1
"""The exit status of a worker whose parent died (nobody is left to read it)."""


def end_with_parent() -> None:
    """In a process started by :mod:`multiprocessing` (a pool's worker): a thread that waits
    for the parent to end, then ends this process at once. Elsewhere, nothing.

    The parent's end is seen through the pipe multiprocessing keeps open between the two
    (``parent_process().sentinel``), whichever way the worker was started (fork or forkserver,
    whose workers are not the parent's children), and however the parent died."""
    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:
        return
    sentinel = parent.sentinel

    def watch() -> None:
        multiprocessing.connection.wait([sentinel])
        os._exit(ORPHANED)

    threading.Thread(target=watch, name="ttt-end-with-parent", daemon=True).start()


def _ask_to_die_with_parent() -> Callable[[], None] | None:
    """A function asking Linux to kill the calling process (SIGKILL) when the thread that
    started it ends (``PR_SET_PDEATHSIG``), or ``None`` where that cannot be asked."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1
    return lambda: prctl(pr_set_pdeathsig, signal.SIGKILL)


die_with_parent = _ask_to_die_with_parent()
"""Called in a new process (a ``preexec_fn``, or just after ``os.fork()``): the kernel kills it
as soon as the thread of its parent that started it ends; ``None`` off Linux. A thread, not the
process: a child started from a thread other than the main one would die with that thread."""


def exit_when_orphaned(parent: int, every: float = 0.2) -> None:
    """In a process forked by ``parent`` (its process id): a thread that ends this process at
    once, with :data:`ORPHANED`, as soon as its parent is gone (the process is then adopted by
    another, and ``os.getppid()`` changes). Polled every ``every`` seconds: unlike a pipe's end,
    this needs nothing that other processes forked by the parent would also hold."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        _exit(ORPHANED)

    threading.Thread(target=watch, name="ttt-exit-when-orphaned", daemon=True).start()


_exit = os._exit
"""The process's own exit, kept before any plug-in code can replace ``os._exit``."""


@contextmanager
def signals_held(
    signums: Iterable[int], on_signal: Callable[[int], None] | None = None
) -> Iterator[list[int]]:
    """Hold back the signals ``signums`` for the block, where Python handles them (not where
    they are ignored or kill at once): the list yielded receives each as it comes, and
    ``on_signal(signum)`` is called. The handlers are back in place after the block, for the
    caller to act on what came. Only the main thread can handle signals; elsewhere the block
    just runs, and nothing comes."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    owner = os.getpid()

    def hold(signum: int, _frame: object) -> None:
        if os.getpid() != owner:  # a process forked in the block: the signal is its own
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        received.append(signum)
        if on_signal is not None:
            on_signal(signum)

    held = {signum: signal.getsignal(signum) for signum in signums}
    held = {signum: previous for signum, previous in held.items() if callable(previous)}
    for signum in held:
        signal.signal(signum, hold)
    try:
        yield received
    finally:
        for signum, previous in held.items():
            signal.signal(signum, previous)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold back Ctrl-C (SIGINT) for the block: it raises ``KeyboardInterrupt`` once the block
    has finished."""
    with signals_held([signal.SIGINT]) as received:
        yield
    if received:
        raise KeyboardInterrupt


WAKE_SECONDS = 0.25
"""The longest a wait for a pool's results goes without a look at the signals that came."""


class SignalCame(Exception):
    """A signal held back by :func:`signals_held` came while results were awaited: the work
    is dropped, and the signal raised once the block is left."""


def results_as_done(
    futures: Sequence[Future[Any]], ordered: bool = False, held: Collection[int] = ()
) -> Iterator[Any]:
    """The results of ``futures`` as they are done (``ordered``: in their order), waiting at
    most :data:`WAKE_SECONDS` at a time; :class:`SignalCame` as soon as ``held`` (the list
    :func:`signals_held` yields) has received a signal.

    The system hands a signal sent to this process to any of its threads, a pool's own among
    them; Python then runs the handler only once the main thread wakes, and a main thread
    blocked on the next result would not wake before it came: never, where the same signal
    (``timeout``'s, sent to every process of the group) had ended the workers."""
    if ordered:
        for future in futures:
            while True:
                if held:
                    raise SignalCame
                try:
                    result = future.result(timeout=WAKE_SECONDS)
                except concurrent.futures.TimeoutError:
                    continue
                yield result
                break
        return
    pending = set(futures)
    while pending:
        if held:
            raise SignalCame
        finished, pending = concurrent.futures.wait(
            pending, timeout=WAKE_SECONDS, return_when=concurrent.futures.FIRST_COMPLETED
        )
        for future in finished:
            yield future.result()


KILL_AFTER_SECONDS = 1.0
"""How long a pool's worker has to end after SIGTERM before it is killed (SIGKILL)."""


def end_pool(
    pool: ProcessPoolExecutor, before: Collection[multiprocessing.process.BaseProcess]
) -> None:
    """End ``pool`` at once, its work done or not: its workers (this process's children not
    in ``before``) are stopped rather than waited for, then the pool is shut down.

    A worker that SIGTERM does not end in :data:`KILL_AFTER_SECONDS` is killed: one forked
    while another thread of this process held a lock can wait for that lock for ever, and its
    handler for SIGTERM, Python's, never runs; the pool's shutdown would wait for it for ever.
    """
    workers = [child for child in multiprocessing.active_children() if child not in before]
    for worker in workers:
        worker.terminate()
    deadline = time.monotonic() + KILL_AFTER_SECONDS
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            worker.kill()
    pool.shutdown(wait=True, cancel_futures=True)


@contextmanager
def pool_held(
    make: Callable[[], ProcessPoolExecutor],
) -> Iterator[tuple[ProcessPoolExecutor, list[int]]]:
    """The pool ``make()`` for the block, and the list of the signals that came: Ctrl-C and
    SIGTERM are held back for as long as the pool runs, and the pool is ended on leaving
    (:func:`end_pool`: its work done or not). The block hands out work and waits for it with
    :func:`results_as_done`, ``held`` the list yielded; a signal that came is raised once
    the pool has ended, in place of whatever the block raised.

    Raised amid the pool's own code (a submit, a wait for a result, a worker's fork), Ctrl-C
    or SIGTERM can leave one of the pool's locks held, and the pool's shutdown then waits for
    ever for its manager thread, which waits for that lock."""
    before = multiprocessing.active_children()
    failure: BaseException | None = None
    with signals_held([signal.SIGINT, signal.SIGTERM]) as received:
        pool = make()
        try:
            yield pool, received
        except BaseException as error:
            failure = error
        finally:
            end_pool(pool, before)
    if received:
        signal.raise_signal(received[0])  # raises what this process's handler raises
        raise KeyboardInterrupt  # a handler let it pass: the work is cut short all the same
    if failure is not None:
        raise failure


def submit_all(
    pool: ProcessPoolExecutor, task: Callable[[Any], Any], batches: Sequence[Any]
) -> list[Future[Any]]:
    """``task(batch)`` of every batch, handed to the pool: its futures, in order.

    The pool starts a worker at each of the first submits; Ctrl-C and SIGTERM are held back
    meanwhile, and come again once they are all handed out: raised amid a worker's start, the
    exception left that worker half-started, unknown to the pool, which could not end it; the
    command's exit then removed what the worker was still reading, and it printed a
    ``FileNotFoundError`` traceback. A start that fails after such a signal came failed
    because of it (``timeout`` sends its SIGTERM to every process of the group, the server
    that starts the workers among them): the signal is what stops the command."""
    failure: Exception | None = None
    futures: list[Future[Any]] = []
    stops = [signal.SIGINT, signal.SIGTERM]
    with signals_held(stops) as received:
        try:
            futures = [pool.submit(task, batch) for batch in batches]
        except Exception as error:  # raised below, unless a signal came
            failure = error
            # The signal sent to this process with the server's may still wait for one of its
            # threads to take it: take it here (Python would run its handler too late, and
            # the command's end would find it pending, with no handler left to take it).
            if not received and hasattr(signal, "sigtimedwait"):
                pending = signal.sigtimedwait(stops, 0)
                if pending is not None:
                    received.append(pending.si_signo)
    if received:
        signal.raise_signal(received[0])
    if failure is not None:
        raise failure
    return futures


def worker_pool(
    processes: int, initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = ()
) -> AbstractContextManager[tuple[ProcessPoolExecutor, list[int]]]:
    """:func:`pool_held` of a pool of ``processes`` workers, each of which leaves Ctrl-C to
    this process (which ends the pool; a worker would only print a traceback), ends with it
    (:func:`end_with_parent`: a parent killed outright cannot end the pool itself), then runs
    ``initializer(*initargs)``.

    Workers start from a fresh server process (forkserver), not a fork of this one: a fork
    copies whatever threads and locks the caller holds (a web server's, a data library's), and
    a lock held at that moment never opens in the child. Not :class:`multiprocessing.Pool`:
    where a worker dies (killed, out of memory), it starts another and waits for the lost task
    for ever; this pool breaks, and says so."""
    return pool_held(
        functools.partial(
            ProcessPoolExecutor,
            processes,
            mp_context=multiprocessing.get_context("forkserver"),
            initializer=_start_worker,
            initargs=(initializer, initargs),
        )
    )


def _start_worker(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    end_with_parent()
    if initializer is not None:
        initializer(*initargs)
