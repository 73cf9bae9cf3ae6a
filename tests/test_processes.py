"""The tool's worker processes end when they are told to: one forked while signals are held
back, and one that ignores SIGTERM, which a pool's end kills."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import pytest

from ttt_solve.processes import (
    KILL_AFTER_SECONDS,
    SignalCame,
    end_pool,
    results_as_done,
    signals_held,
)

fork = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs fork"
)


def _sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def _ignore_sigterm() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _raise(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(signum)


@pytest.fixture
def sigterm_handled():
    """SIGTERM handled in Python for the test, as a command handles it (only a signal with a
    handler is held back)."""
    previous = signal.signal(signal.SIGTERM, _raise)
    yield
    signal.signal(signal.SIGTERM, previous)


@fork
def test_a_process_forked_while_sigterm_is_held_back_is_ended_by_it(sigterm_handled):
    context = multiprocessing.get_context("fork")
    with signals_held([signal.SIGTERM]) as received:
        child = context.Process(target=time.sleep, args=(60,))
        child.start()
        time.sleep(0.2)  # the child runs with the holding handler it inherited
        child.terminate()
        child.join(10)
    assert not child.is_alive(), "the child held back its own SIGTERM"
    assert child.exitcode == -signal.SIGTERM
    assert received == []  # the child's signal is not the parent's


@fork
def test_the_end_of_a_pool_kills_a_worker_that_ignores_sigterm():
    before = multiprocessing.active_children()
    pool = ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_ignore_sigterm,
    )
    pool.submit(_sleep, 0).result(timeout=30)  # the worker has started: it ignores SIGTERM
    future = pool.submit(_sleep, 60)
    workers = [c for c in multiprocessing.active_children() if c not in before]
    ending = threading.Thread(target=end_pool, args=(pool, before), daemon=True)
    ending.start()
    ending.join(KILL_AFTER_SECONDS + 10)
    if ending.is_alive():  # waiting for the worker: end it here, for the test to end
        for worker in workers:
            os.kill(worker.pid, signal.SIGKILL)
    assert not ending.is_alive(), "the pool's end waited for a worker that ignores SIGTERM"
    assert workers and all(worker.exitcode == -signal.SIGKILL for worker in workers)
    assert future.done()


def test_a_wait_for_results_stops_once_a_held_signal_came():
    with ProcessPoolExecutor(max_workers=1) as pool:
        quick, slow = pool.submit(_sleep, 0.0), pool.submit(_sleep, 2.0)
        held: list[int] = []
        results = results_as_done([quick, slow], ordered=True, held=held)
        assert next(results) == 0.0
        held.append(signal.SIGINT)
        started = time.monotonic()
        with pytest.raises(SignalCame):
            next(results)
        assert time.monotonic() - started < 1.0  # not once the slow result came
        assert not slow.done()
