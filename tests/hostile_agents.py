"""Agents that defy their time limit or try to end, abort or move their caller: move functions
on a flat board (``board="flat"``), for ``ttt.audit(fn, ..., timeout=)`` and
``py:tests.hostile_agents:NAME,board=flat,timeout=``. Each would hang or end its caller if it
ran in the caller's own process under a timer signal."""

from __future__ import annotations

import os
import signal
import threading
import time

SLOW_SECONDS = 2.0
"""How long the agents that dodge a timer take a move: many times the tests' limits."""


def sleeps_through_everything(board):  # noqa: ANN001, ANN201
    """Catches every exception around an endless sleep, the time limit's too."""
    while True:
        try:
            time.sleep(10**6)
        except BaseException:  # noqa: BLE001, S110 - the hostile part
            pass


class _EndlessIndex:
    def __index__(self) -> int:
        while True:
            pass


def answers_an_endless_index(board):  # noqa: ANN001, ANN201
    """Answers at once, with a number whose ``__index__`` never returns."""
    return _EndlessIndex()


def cancels_the_timer(board):  # noqa: ANN001, ANN201
    """Cancels any interval timer, then takes its time."""
    signal.setitimer(signal.ITIMER_REAL, 0)
    time.sleep(SLOW_SECONDS)
    return board.index(" ")


def ignores_the_alarm(board):  # noqa: ANN001, ANN201
    """Ignores SIGALRM, then takes its time."""
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    time.sleep(SLOW_SECONDS)
    return board.index(" ")


def exits_from_a_thread(board):  # noqa: ANN001, ANN201
    """Ends its process, status 0, from a thread of its own."""
    thread = threading.Thread(target=os._exit, args=(0,))
    thread.start()
    thread.join()
    return board.index(" ")


def raises_generator_exit(board):  # noqa: ANN001, ANN201
    raise GeneratorExit


class Mine(BaseException):
    """An exception of the agent's own, beside ``Exception``."""


def raises_its_own_base_exception(board):  # noqa: ANN001, ANN201
    raise Mine("not an Exception")


def raises_keyboard_interrupt(board):  # noqa: ANN001, ANN201
    raise KeyboardInterrupt


def changes_directory(board):  # noqa: ANN001, ANN201
    """Moves to the root folder, and plays well enough."""
    os.chdir("/")
    return board.index(" ")


def writes_one_cell_and_answers_another(board):  # noqa: ANN001, ANN201
    """Writes its stone into the last empty cell and answers the first."""
    empty = [i for i, cell in enumerate(board) if cell == " "]
    board[empty[-1]] = "X" if board.count("X") == board.count("O") else "O"
    return empty[0]


def sleeps_in_a_pool_worker_at_the_last_cell(board):  # noqa: ANN001, ANN201
    """Plays the first empty cell, slowly enough for an audit to start its pool; in a pool's
    worker, sleeps through everything where one cell is left."""
    import multiprocessing

    if multiprocessing.parent_process() is not None and board.count(" ") == 1:
        sleeps_through_everything(board)
    time.sleep(0.002)
    return board.index(" ")


def presses_ctrl_c(board):  # noqa: ANN001, ANN201
    """Sends its own process SIGINT, as the user's Ctrl-C does, and waits for it."""
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(SLOW_SECONDS)
    return board.index(" ")


def swallows_ctrl_c(board):  # noqa: ANN001, ANN201
    """Sends its own process SIGINT, catches the ``KeyboardInterrupt`` and answers."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(SLOW_SECONDS)
    except KeyboardInterrupt:
        pass
    return board.index(" ")


def swallows_ctrl_c_then_raises(board):  # noqa: ANN001, ANN201
    """Sends its own process SIGINT, catches the ``KeyboardInterrupt`` and raises another
    exception."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(SLOW_SECONDS)
    except KeyboardInterrupt:
        raise ValueError("not a Ctrl-C") from None
    return board.index(" ")


def writes_to_every_descriptor(board):  # noqa: ANN001, ANN201
    """Writes 25 bytes at the start of every descriptor its process holds beyond standard
    input, output and error (a book the caller opened among them), then answers."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2:
            try:
                os.pwrite(fd, b"\xde\xad" * 12 + b"!", 0)
            except OSError:
                try:
                    os.write(fd, b"\xde\xad" * 12 + b"!")
                except OSError:
                    pass
    return board.index(" ")


def signals_its_grader(board):  # noqa: ANN001, ANN201
    """Sends SIGTERM to its parent and SIGINT to its parent's process group, from its own
    thread and from a thread it starts, then answers (each refused send is passed over)."""
    parent = os.getppid()

    def send() -> None:
        for target, signum in ((parent, signal.SIGTERM), (-os.getpgid(parent), signal.SIGINT)):
            try:
                os.kill(target, signum)
            except OSError:
                pass

    send()
    thread = threading.Thread(target=send)
    thread.start()
    thread.join()
    time.sleep(0.2)
    return board.index(" ")


def takes_four_gigabytes(board):  # noqa: ANN001, ANN201
    """Maps 4 GiB of memory a move, and writes into a page of each of its MiB."""
    import mmap

    with mmap.mmap(-1, 4 * 2**30) as block:
        for start in range(0, len(block), 2**20):
            block[start] = 1
    return board.index(" ")


def writes_through_every_connection(board):  # noqa: ANN001, ANN201
    """Finds every open SQLite connection of its process and tries to make a table through
    it, then answers."""
    import gc
    import sqlite3

    for found in gc.get_objects():
        if isinstance(found, sqlite3.Connection):
            try:
                found.execute("CREATE TABLE written_by_an_agent (x)")
                found.commit()
            except sqlite3.Error:
                pass
    return board.index(" ")
