"""An agent's moves in a child process of its own: a time limit that holds whatever its code does.

A limit kept from inside the agent's own process (a timer signal, an exception raised into its
move) is only as good as the agent's manners: code that catches every exception, cancels the
timer or ignores the signal runs on. :class:`AgentProcess` moves the agent out instead. At its
first move it forks (on Linux a forked child keeps every closure and global of a notebook), and
the child then serves the moves one by one: a request with the position goes down a pipe, the
agent is called, its answer read and checked in the child, and the cell (or the failure) comes
back as one line of JSON. The caller waits for that line until the move's deadline, then kills
the child's process group with SIGKILL, which no code can catch, and counts a ``timeout``.

What the child does stays in the child: ``os.chdir``, ``os._exit`` from any thread, signal
handlers, any exception (``KeyboardInterrupt`` and ``GeneratorExit`` too), a crash in C. A child
that ends while the caller waits is that move's ``crash``; one found gone between moves is
replaced. A fresh child is forked for the next move after a timeout or a crash, from the caller
as it is then: what the agent had kept in memory since is lost (state it changed in the child is
never seen by the caller, whose copy the child was forked from).

The answer is checked twice: in the child (:meth:`Adapter.decode
<ttt_solve.agents.adapters.Adapter.decode>`, inside the time limit, so an answer whose
``__index__`` never returns is a timeout) and in the caller, who takes nothing but a whole
number of a free cell from the child's line (JSON, never pickle: nothing the child writes can
run in the caller).

Seeded play is the same as in the caller's process: the agent's generator's state goes down
with the request when the caller changed it (the audit seeds it per position or game), and
comes back with the answer when the move drew from it.

The child ends with its caller, however the caller ends: the kernel kills it when the thread
that forked it ends (``PR_SET_PDEATHSIG``, asked where that thread is the main one), and a
thread of its own ends it when it finds itself orphaned (:func:`exit_when_orphaned`). It runs
in a process group of its own, so a terminal's Ctrl-C reaches the caller only, and the group
is what is killed (a process the agent starts that leaves the group is not followed). Its
standard input is ``/dev/null``; its output is the caller's. The caller's other descriptors
write nothing there (the book's files are open read-only, pipes and sockets read
``/dev/null``), its address space may grow by ``memory`` MiB, and it may signal no process
but its own group (:mod:`agents.confinement`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import pickle
import random
import select
import signal
import struct
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from ttt_solve.agents import confinement
from ttt_solve.agents.engine import EngineFailure, FailureKind
from ttt_solve.errors import TttError
from ttt_solve.processes import die_with_parent, exit_when_orphaned
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

MAX_ANSWER = 64 * 1024
"""Longest answer line taken from a child, in bytes (a cell, a failure, a generator's state)."""
MAX_DETAIL = 2000
"""Characters of a failure's detail sent by the child (an exception's message may be long)."""
_HEADER = struct.Struct("!I")
"""A request's length, before its pickle."""
_WORDS = struct.Struct("!625I")
"""The words of a Mersenne Twister's state (624 and the index), as the answer carries them."""
_REAL_EXIT = os._exit
"""The process's own exit, kept before an agent's code can replace ``os._exit``."""
DEFAULT_MOVE_SECONDS = 10.0
"""The time limit of a move of an agent written in Python, unless told otherwise, wherever it
is given (``ttt.audit``, ``ttt.rate``, ``ttt.play_game``, ``ttt.evaluate``, a ``py:`` spec):
past it the move is a ``timeout`` failure, and an agent that never answers hangs nothing."""
DEFAULT_MEMORY_MIB = 2048
"""How much an agent's process may grow, in MiB, beyond the caller's size it was forked at."""
MAX_MEMORY_MIB = 2**24


class MemoryLimitError(TttError, ValueError):
    """A memory limit that is no number of MiB in range."""


def check_memory(memory: Any) -> float | None:
    """``memory`` as a number of MiB an agent's process may grow by (``None``: no limit)."""
    if memory is None:
        return None
    if (
        isinstance(memory, bool)
        or not isinstance(memory, (int, float))
        or not 16 <= memory <= MAX_MEMORY_MIB
    ):
        raise MemoryLimitError(
            f"memory={memory!r}: give the MiB an agent's process may grow by, from 16 to "
            f"{MAX_MEMORY_MIB} (or None for no limit)"
        )
    return float(memory)


class AgentProcess:
    """The child process that runs one agent's moves (see the module's documentation).

    ``play(position)`` is the agent's whole move as the caller's process would run it: the
    call, the answer read back as a cell, :class:`EngineFailure` for a failed move (or a value
    function's whole call, its number read back: :meth:`number`). ``rng`` is the agent's
    generator (the child's copy follows it), ``spec`` names the agent in failures, ``memory``
    is how far its process may grow (:mod:`agents.confinement`).
    """

    def __init__(
        self,
        spec: str,
        play: Callable[[Position], float],
        rng: random.Random,
        memory: float | None = DEFAULT_MEMORY_MIB,
    ) -> None:
        self.spec = spec
        self._play = play
        self._rng = rng
        self.memory = memory
        """How many MiB the child's address space may grow by (``None``: no limit)."""
        self._pid: int | None = None
        self._requests = -1
        self._answers = -1
        self._pidfd = -1
        self._serial = 0
        self._synced: Any = None
        """The generator's state the child holds, as far as the caller knows."""
        self._stop: weakref.finalize | None = None

    @property
    def pid(self) -> int | None:
        """The child's process id, while one runs."""
        return self._pid

    # -- the caller's side ------------------------------------------------------------------

    def move(self, position: Position, seconds: float | None) -> int:
        """The agent's cell in ``position`` within ``seconds`` (``None``: no limit); a failed
        move raises :class:`EngineFailure`."""
        return self._ask(position, seconds, self._cell)

    def number(self, position: Position, seconds: float | None) -> float:
        """What ``play`` answers in ``position`` when it answers a number (a value function's
        estimate), within ``seconds``; a failure raises :class:`EngineFailure`."""
        return self._ask(position, seconds, self._number)

    def _ask(
        self,
        position: Position,
        seconds: float | None,
        read: Callable[[Position, dict[str, Any]], Any],
    ) -> Any:
        if self._pid is not None and self._ended():
            self.close()  # gone between moves (a thread of the agent's, say): start afresh
        if self._pid is None:
            self._start()
        deadline = None if seconds is None else time.monotonic() + seconds
        state = self._rng.getstate()
        self._serial += 1
        request = (
            self._serial,
            (position.rules.rows, position.rules.cols, position.rules.k),
            position.x,
            position.o,
            None if state == self._synced else state,
        )
        self._synced = state
        try:
            self._send(pickle.dumps(request, pickle.HIGHEST_PROTOCOL), deadline)
            line = self._receive(deadline, seconds)
            return read(position, self._read(position, line))
        except EngineFailure:
            raise  # a failure the child reported: it goes on serving
        except _Failed as failed:
            self.close()
            raise self._failure(position, failed.kind, failed.detail) from None
        except BaseException:
            self.close()  # the caller's own Ctrl-C, say: the child goes with the move
            raise

    def close(self) -> None:
        """End the child now (its process group is killed), if one runs."""
        if self._stop is not None:
            self._stop()
        self._stop = None
        self._pid = None

    def _failure(self, position: Position, kind: FailureKind, detail: str) -> EngineFailure:
        return EngineFailure(
            kind, position.rules, position.x, position.o, f"{self.spec} {detail}", self.spec
        )

    def _start(self) -> None:
        requests_read, requests_write = os.pipe()
        answers_read, answers_write = os.pipe()
        parent = os.getpid()
        main_thread = threading.current_thread() is threading.main_thread()
        for stream in (sys.stdout, sys.stderr):  # or the child would write them out again
            with contextlib.suppress(Exception):
                stream.flush()
        with warnings.catch_warnings():  # Python 3.12 warns of fork() beside other threads
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: never returns into the caller's code
            status = 0
            try:
                os.close(requests_write)
                os.close(answers_read)
                _become_child(parent, main_thread, {requests_read, answers_write}, self.memory)
                self._serve(requests_read, answers_write)
            except BaseException:  # noqa: BLE001 - whatever happened, the child ends here
                status = 1
            finally:
                _REAL_EXIT(status)
        os.close(requests_read)
        os.close(answers_write)
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)  # also done by the child; whichever runs first
        os.set_blocking(requests_write, False)
        self._pid = pid
        self._requests, self._answers = requests_write, answers_read
        self._pidfd = _pidfd(pid)
        self._synced = None
        self._status: list[int] = []
        """The child's wait status once it is reaped (its process id may then be reused)."""
        self._stop = weakref.finalize(
            self,
            _end_child,
            os.getpid(),
            pid,
            self._status,
            (requests_write, answers_read, self._pidfd),
        )

    def _ended(self) -> bool:
        return self._reap(os.WNOHANG) is not None

    def _reap(self, options: int = 0) -> int | None:
        """The child's wait status, reaping it if it has ended (``options``: ``os.WNOHANG``
        not to wait for that); ``None`` while it runs."""
        assert self._pid is not None
        if not self._status:
            try:
                pid, status = os.waitpid(self._pid, options)
            except ChildProcessError:
                pid, status = self._pid, 0
            if pid == 0:
                return None
            self._status.append(status)
        return self._status[0]

    def _send(self, payload: bytes, deadline: float | None) -> None:
        data = _HEADER.pack(len(payload)) + payload
        while data:
            if not select.select([], [self._requests], [], _left(deadline))[1]:
                raise _Failed(FailureKind.TIMEOUT, "did not take the position in time")
            try:
                data = data[os.write(self._requests, data) :]
            except BlockingIOError:
                continue
            except OSError:
                raise _Failed(FailureKind.CRASH, self._exit_story()) from None

    def _receive(self, deadline: float | None, seconds: float | None) -> bytes:
        """One answer line, read until ``deadline`` (``seconds`` from the request)."""
        watched = [self._answers] + ([self._pidfd] if self._pidfd >= 0 else [])
        buffer = b""
        while b"\n" not in buffer:
            if len(buffer) > MAX_ANSWER:
                raise _Failed(
                    FailureKind.GARBAGE, f"answered more than {MAX_ANSWER} bytes in one line"
                )
            ready = select.select(watched, [], [], _left(deadline))[0]
            if not ready:
                raise _Failed(FailureKind.TIMEOUT, f"no move within {seconds:g} s")
            if self._answers not in ready:  # the child is gone, and nothing left to read
                raise _Failed(FailureKind.CRASH, self._exit_story())
            chunk = os.read(self._answers, 65536)
            if not chunk:
                raise _Failed(FailureKind.CRASH, self._exit_story())
            buffer += chunk
        line, _, rest = buffer.partition(b"\n")
        if rest:
            raise _Failed(FailureKind.GARBAGE, "answered twice")
        return line

    def _read(self, position: Position, line: bytes) -> dict[str, Any]:
        """The child's answer line, read: its generator's state taken, a failure raised."""
        try:
            answer = json.loads(line)
        except ValueError:
            raise _Failed(FailureKind.GARBAGE, "answered a line that is not the child's") from None
        if not isinstance(answer, dict) or answer.get("serial") != self._serial:
            raise _Failed(FailureKind.GARBAGE, "answered a line that is not the child's")
        if "rng" in answer:
            _set_state(self._rng, answer["rng"])
            self._synced = self._rng.getstate()
        if "failure" in answer:
            kind, detail = answer["failure"]
            if kind not in list(FailureKind) or not isinstance(detail, str):
                raise _Failed(FailureKind.GARBAGE, "answered a failure of no known kind")
            raise EngineFailure(
                FailureKind(kind),
                position.rules,
                position.x,
                position.o,
                detail[:MAX_DETAIL],
                self.spec,
            )
        return answer

    def _cell(self, position: Position, answer: dict[str, Any]) -> int:
        """The cell of the child's answer, checked again here."""
        cell = answer.get("answer")
        if type(cell) is not int or not 0 <= cell < position.rules.cells:
            raise _Failed(FailureKind.GARBAGE, f"answered {str(cell)[:40]}, no cell")
        if position.occupied >> cell & 1:
            rules = position.rules
            raise _Failed(FailureKind.ILLEGAL, f"played {rules.cell_name(cell)}, which is taken")
        return cell

    def _number(self, _position: Position, answer: dict[str, Any]) -> float:
        number = answer.get("answer")
        if not isinstance(number, (int, float)) or isinstance(number, bool):
            raise _Failed(FailureKind.GARBAGE, f"answered {str(number)[:40]}, no number")
        return float(number)

    def _exit_story(self) -> str:
        """How the child ended (it is reaped here)."""
        status = self._reap()
        assert status is not None
        if os.WIFSIGNALED(status):
            name = signal.Signals(os.WTERMSIG(status)).name
            return f"ended its process before answering: killed by {name}"
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
        return (
            f"ended its process before answering, with status {code} (os._exit from a "
            f"thread of its own, or a crash)"
        )

    # -- the child's side -------------------------------------------------------------------

    def _serve(self, requests: int, answers: int) -> None:
        """Answer requests until the caller closes the pipe."""
        rules_of: dict[tuple[int, int, int], Rules] = {}
        with os.fdopen(requests, "rb") as stream:
            while True:
                header = stream.read(_HEADER.size)
                if len(header) < _HEADER.size:
                    return
                serial, dims, x, o, state = pickle.loads(stream.read(_HEADER.unpack(header)[0]))
                if state is not None:
                    self._rng.setstate(state)
                before = self._rng.getstate()
                if dims not in rules_of:
                    rules_of[dims] = Rules(*dims)
                answer: dict[str, Any] = {"serial": serial}
                try:
                    said = self._play(Position(rules_of[dims], x, o))
                    answer["answer"] = said if type(said) in (int, float) else str(said)
                except EngineFailure as failure:
                    answer["failure"] = [failure.kind, self._told(failure)[:MAX_DETAIL]]
                after = self._rng.getstate()
                if after != before:
                    answer["rng"] = [after[0], _WORDS.pack(*after[1]).hex(), after[2]]
                for stream_out in (sys.stdout, sys.stderr):  # what the agent printed, now
                    with contextlib.suppress(Exception):
                        stream_out.flush()
                data = json.dumps(answer).encode() + b"\n"
                while data:
                    data = data[os.write(answers, data) :]

    def _told(self, failure: EngineFailure) -> str:
        """A failure's detail, with the memory limit where the agent ran into it."""
        cause = failure.__context__
        out_of_memory = isinstance(cause, MemoryError) or (
            isinstance(cause, OSError) and cause.errno == errno.ENOMEM
        )
        if self.memory is not None and out_of_memory:
            return (
                f"{failure.detail} (its process may grow by {self.memory:g} MiB; memory= sets that)"
            )
        return failure.detail


class _Failed(Exception):
    """A move the child failed, seen from the caller: ``kind`` and what happened."""

    def __init__(self, kind: FailureKind, detail: str) -> None:
        super().__init__(kind, detail)
        self.kind = kind
        self.detail = detail


def _become_child(parent: int, main_thread: bool, keep: set[int], memory: float | None) -> None:
    """What a freshly forked child does before its first request: its own process group,
    the caller's signal handlers, input and descriptors dropped (``keep``: its pipes), an
    end with the caller, ``memory`` MiB to grow by, and no reach into other processes
    (:mod:`agents.confinement`)."""
    os.setpgid(0, 0)
    if die_with_parent is not None and main_thread:
        die_with_parent()
    if os.getppid() != parent:  # the caller ended before the line above
        _REAL_EXIT(1)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM):
        signal.signal(signum, signal.SIG_DFL)  # the caller's handlers act for the caller
    signal.setitimer(signal.ITIMER_REAL, 0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    confinement.detach_descriptors(keep)
    if memory is not None:
        confinement.limit_memory(memory)
    # The filter binds the thread that installs it and the threads it starts after: so before
    # the child's first thread of its own.
    confinement.refuse_reaching_out()
    exit_when_orphaned(parent)


def _end_child(owner: int, pid: int, status: list[int], fds: tuple[int, ...]) -> None:
    """Kill a child's process group and reap the child; in the process that forked it only (a
    process forked from that one since holds a copy of this, and must leave the child be).
    A child already reaped (``status`` holds its wait status) is not killed again: its
    process id may belong to another process by now. Its group is, for what the agent
    started in it (a group's id is not reused while one process is left in it)."""
    if os.getpid() != owner:
        return
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    if not status:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    for fd in fds:
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)


def _pidfd(pid: int) -> int:
    """A descriptor that becomes readable when ``pid`` ends (Linux 5.3), or -1."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return -1
    try:
        return int(opener(pid))
    except OSError:
        return -1


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def _set_state(rng: random.Random, raw: Any) -> None:
    """Set ``rng`` to a state in its JSON form: version, the 625 words in hexadecimal, a
    pending Gaussian."""
    try:
        version, words, gauss = raw
        state = (version, _WORDS.unpack(bytes.fromhex(words)), gauss)
        rng.setstate(state)
    except (TypeError, ValueError, OverflowError, struct.error):
        raise _Failed(FailureKind.GARBAGE, "answered a generator state that is none") from None
