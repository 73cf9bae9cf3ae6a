"""``cmd:`` agents: an external program that speaks the line protocol of docs/PROTOCOL.md.

``cmd:COMMAND[,timeout=SECONDS][,book=true]`` starts COMMAND (split into words like a POSIX
shell would, run without a shell, in its own process group) and talks to it over its standard
input and output: a handshake (``ttt 1`` -> ``id name``, ``id version``, ``ready``), the rules
(``rules R C k`` -> ``ok``), then for every move ``position BOARD`` and
``go movetime MS seed N`` -> ``move CELL``; ``quit`` at the end.

Every request the engine fails raises :class:`EngineFailure` with its kind (:class:`FailureKind`:
``illegal``, ``timeout``, ``garbage``, ``crash``) and the position, so the audit can count it
and go on. After a timeout, garbage or a crash the process group is killed and the engine
started afresh at the next request; an illegal move leaves it in step and running. What makes
the engine unusable (it cannot be started, fails its first handshake, refuses the rules, or fails
to restart :data:`MAX_FAILED_STARTS` times in a row) raises :class:`EngineError` instead.

No engine outlives the agent: :meth:`EngineAgent.close` (also run when the agent is collected
and when the interpreter exits) sends ``quit``, waits :data:`QUIT_SECONDS` and kills the
process group, and then, on Linux, every process that carries the engine's token in its
environment (:data:`ENGINE_TOKEN`), which finds those that left the group (``setsid()``);
the kernel kills the engine if this process dies (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import re
import secrets
import selectors
import shlex
import signal
import subprocess
import threading
import time
import weakref
from typing import IO, TYPE_CHECKING, Any

from ttt_solve.agents.base import Agent
from ttt_solve.agents.spec import BOOK, AgentSpecError, Param, Spec, parse_params
from ttt_solve.errors import TttError, printable
from ttt_solve.processes import die_with_parent
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.vocabulary import Word

if TYPE_CHECKING:  # pragma: no cover
    from ttt_solve.book.reader import Book

PROTOCOL_VERSION = 1


class FailureKind(Word):
    """Why an agent gave no move: an illegal move, no answer in time, an answer that is no move,
    or a crash (also what the audit counts failures by)."""

    ILLEGAL = "illegal"
    TIMEOUT = "timeout"
    GARBAGE = "garbage"
    CRASH = "crash"


DEFAULT_TIMEOUT = 5.0
"""Seconds per move, unless the spec says ``timeout=``."""
GRACE_SECONDS = 0.5
"""How much longer than the limit told to the engine ``ttt`` waits (pipes, a busy machine)."""
STARTUP_SECONDS = 10.0
"""Time for the handshake and the ``rules`` answer together (an interpreter may start slowly)."""
QUIT_SECONDS = 1.0
"""Time an engine has to exit after ``quit`` before its process group is killed."""
MAX_LINE = 4096
"""Longest line accepted from an engine, in bytes."""
_KILL_ROUNDS = 5
"""Searches for an engine's escaped processes, each killing what it finds."""
MAX_FAILED_STARTS = 3
"""Restarts in a row that may fail before the engine is given up."""
STDERR_TAIL = 8192
"""Bytes of the engine's standard error kept (the last ones), to quote when it fails."""

PARAMS = {
    "timeout": Param("float", DEFAULT_TIMEOUT, "seconds per move, told to the engine"),
    "book": BOOK,
}
EXAMPLE = 'cmd:"./my-engine --level 3",timeout=2'


class EngineError(TttError, ValueError):
    """The engine cannot be used at all; the message says why and quotes the spec."""


class EngineFailure(TttError, ValueError):
    """One request the engine failed: ``kind`` (a :class:`FailureKind`), the position
    (``rules``, ``x``, ``o``), what happened (``detail``) and the engine's spec.

    Built from plain values so that it pickles (it may cross from a worker process).
    """

    def __init__(
        self, kind: FailureKind, rules: Rules, x: int, o: int, detail: str, spec: str
    ) -> None:
        super().__init__(kind, rules, x, o, detail, spec)
        self.kind = kind
        self.rules = rules
        self.x = x
        self.o = o
        self.detail = detail
        self.spec = spec

    @property
    def position(self) -> Position:
        return Position(self.rules, self.x, self.o)

    def __str__(self) -> str:
        return f"engine {self.spec}: {self.kind} in {self.position}: {self.detail}"


# -- the spec --------------------------------------------------------------------------------


def split_command(rest: str) -> tuple[str, str]:
    """``'"./e --x 1",timeout=2'`` -> ``('"./e --x 1"', 'timeout=2')``: the command runs to the
    first comma outside quotes, the options follow it."""
    quote = None
    for index, char in enumerate(rest):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == ",":
            return rest[:index], rest[index + 1 :]
    return rest, ""


def command_words(command: str) -> list[str]:
    """The program and its arguments; one pair of quotes around the whole command is removed."""
    command = command.strip()
    if (
        len(command) >= 2
        and command[0] in "'\""
        and command[-1] == command[0]
        and command[0] not in command[1:-1]
    ):
        command = command[1:-1]
    return shlex.split(command)


def parse(text: str, rest: str) -> Spec:
    """The spec ``cmd:<rest>``: the command's words and the options (``timeout``, ``book``)."""
    command, options = split_command(rest)
    try:
        argv = command_words(command)
    except ValueError as error:  # shlex: "No closing quotation"
        raise AgentSpecError(
            f"{text!r}: cannot split the command {command.strip()!r} into words: {error}"
        ) from None
    if not argv:
        raise AgentSpecError(f"{text!r} names no command: write cmd:COMMAND (e.g. {EXAMPLE})")
    params = parse_params(text, "cmd", options, PARAMS)
    timeout = params[FailureKind.TIMEOUT]
    if not (math.isfinite(timeout) and 0 < timeout <= 86_400):
        raise AgentSpecError(
            f"cmd parameter timeout={timeout!r} in {text!r}: expected seconds "
            f"between 0 and 86400 (e.g. timeout=2)"
        )
    return Spec("cmd", {"argv": tuple(argv), **params}, text)


def build(spec: Spec, rng: random.Random, book: Book | None) -> Agent:
    return EngineAgent(
        rng,
        argv=spec.params["argv"],
        timeout=spec.params[FailureKind.TIMEOUT],
        book=book,
        spec=spec.text,
    )


# -- one running engine ----------------------------------------------------------------------


class _Broken(Exception):
    """The engine failed a request: ``kind`` and a description (internal to this module)."""

    def __init__(self, kind: FailureKind, detail: str) -> None:
        super().__init__(kind, detail)
        self.kind = kind
        self.detail = detail


class StderrTail:
    """The last :data:`STDERR_TAIL` bytes an engine wrote to its standard error.

    A thread reads the pipe as the engine writes, so the engine never blocks on a full pipe
    and nothing grows without bound however much it writes."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self._pipe = pipe
        self._tail = b""
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="engine-stderr", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            while chunk := os.read(self._pipe.fileno(), 65536):
                with self._lock:
                    self._tail = (self._tail + chunk)[-STDERR_TAIL:]
        except (OSError, ValueError):
            pass  # closed: the engine is gone
        finally:
            self._pipe.close()

    def text(self, wait: float = 0.0) -> str:
        """The tail as text; ``wait`` up to that long for the writers to finish first."""
        self._reader.join(wait)
        with self._lock:
            return self._tail.decode("utf-8", "replace")


ENGINE_TOKEN = "TTT_ENGINE_TOKEN"
"""The environment variable that marks an engine and everything it starts (each engine gets a
token of its own): what left the engine's process group is still found by it."""


def _marked(token: str) -> list[int]:
    """The processes whose environment holds ``TTT_ENGINE_TOKEN=token`` (Linux's ``/proc``;
    elsewhere none are found)."""
    marker = f"{ENGINE_TOKEN}={token}".encode()
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:
                if marker in environ.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:  # gone meanwhile, or another user's
            continue
    return found


def _kill_group(proc: subprocess.Popen, token: str | None = None) -> None:
    """Kill the engine's process group (itself and anything it started), then whatever left
    the group (a child that called ``setsid()``) but carries the engine's ``token``; reap the
    engine, close its pipes."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if token is not None:
        for _ in range(_KILL_ROUNDS):  # a process may start another as it is being killed
            escaped = [pid for pid in _marked(token) if pid != os.getpid()]
            if not escaped:
                break
            for pid in escaped:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not refused
        pass
    for stream in (proc.stdin, proc.stdout):
        if stream is None:
            continue
        try:
            stream.close()
        except OSError:
            pass


class EngineProcess:
    """A started engine: lines out, lines in with a deadline, and a sure way to stop it."""

    def __init__(self, argv: tuple[str, ...], label: str) -> None:
        self.argv = argv
        self.label = label
        self.name = ""
        self.version = ""
        token = secrets.token_hex(16)
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                close_fds=True,
                start_new_session=True,
                preexec_fn=die_with_parent,
                env={**os.environ, ENGINE_TOKEN: token},
            )
        except OSError as error:
            raise EngineError(
                f"{label}: cannot start {argv[0]!r}: {error.strerror or error}"
            ) from None
        # All three streams are pipes (above), never None.
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self._stdin: IO[bytes] = self.proc.stdin
        self._stdout: IO[bytes] = self.proc.stdout
        self.stderr = StderrTail(self.proc.stderr)
        self._stop = weakref.finalize(self, _kill_group, self.proc, token)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._stdout, selectors.EVENT_READ)
        self._buffer = b""

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, line: str) -> None:
        try:
            self._stdin.write(line.encode() + b"\n")
        except (BrokenPipeError, ConnectionResetError, ValueError):
            raise _Broken(FailureKind.CRASH, self.exit_story("its input was closed")) from None

    def unasked_line(self) -> str | None:
        """A line the engine wrote without being asked (not blank, not ``info``) that is
        already here, or ``None``: read before each request, so that an extra answer is not
        taken for the answer to the next one."""
        try:
            return self.read_line(time.monotonic())
        except _Broken as broken:
            if broken.kind == FailureKind.TIMEOUT:
                return None  # nothing more has come
            raise

    def read_line(self, deadline: float) -> str:
        """The next line that is not blank or ``info``; :class:`_Broken` if none comes in time."""
        while True:
            line = self._next_line(deadline).strip()
            if line and line.split()[0] != "info":
                return line

    def _next_line(self, deadline: float) -> str:
        while True:
            end = self._buffer.find(b"\n")
            if end > MAX_LINE or (end < 0 and len(self._buffer) > MAX_LINE):
                raise _Broken(
                    FailureKind.GARBAGE,
                    f"a line longer than {MAX_LINE} bytes ({self._buffer[:40]!r}...)",
                )
            if end >= 0:
                raw, self._buffer = self._buffer[:end], self._buffer[end + 1 :]
                try:
                    return raw.decode("utf-8").rstrip("\r")
                except UnicodeDecodeError:
                    raise _Broken(
                        FailureKind.GARBAGE, f"a line that is not UTF-8: {raw[:60]!r}"
                    ) from None
            remaining = deadline - time.monotonic()
            if not self._selector.select(max(remaining, 0)):
                if remaining <= 0:
                    raise _Broken(FailureKind.TIMEOUT, "no answer in time")
                continue
            chunk = os.read(self._stdout.fileno(), 65536)
            if not chunk:
                raise _Broken(FailureKind.CRASH, self.exit_story("it closed its output"))
            self._buffer += chunk

    def exit_story(self, what: str) -> str:
        """How the engine ended, with the last line it wrote to standard error."""
        try:
            status = self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            story = what
        else:
            story = (
                f"it was killed by {signal.Signals(-status).name}"
                if status < 0
                else f"it exited with status {status}"
            )
        last = self.stderr_tail()
        return story + (f"; last words on stderr: {last!r}" if last else "")

    def stderr_tail(self) -> str:
        """The last non-blank line the engine wrote to standard error, or ``""``."""
        lines = [line.strip() for line in self.stderr.text(wait=0.5).splitlines()]
        lines = [line for line in lines if line]
        return lines[-1][:200] if lines else ""

    def handshake(self, rules: Rules) -> None:
        """``ttt 1`` and the rules; :class:`_Broken` or :class:`EngineError` on trouble."""
        deadline = time.monotonic() + STARTUP_SECONDS
        self.send(f"ttt {PROTOCOL_VERSION}")
        while True:
            line = self.read_line(deadline)
            word, _, rest = line.partition(" ")
            if line == "ready":
                break
            if word == "id" and rest.startswith("name "):
                self.name = printable(rest[5:].strip())
            elif word == "id" and rest.startswith("version "):
                self.version = printable(rest[8:].strip())
            elif word == "error":
                raise EngineError(
                    f"{self.label} refuses protocol {PROTOCOL_VERSION}: {printable(rest.strip())}"
                )
            else:
                raise _Broken(
                    FailureKind.GARBAGE,
                    f"{line[:80]!r} in the handshake (expected id name, id version, ready)",
                )
        if not self.name or not self.version:
            raise _Broken(FailureKind.GARBAGE, "the handshake ended without id name and id version")
        self.set_rules(rules, deadline)

    def set_rules(self, rules: Rules, deadline: float) -> None:
        self.send(f"rules {rules.rows} {rules.cols} {rules.k}")
        line = self.read_line(deadline)
        if line == "ok":
            return
        if line.split()[0] == "error":
            raise EngineError(
                f"{self.label} cannot play {rules.name}: {printable(line[5:].strip())}"
            )
        raise _Broken(FailureKind.GARBAGE, f"{line[:80]!r} after rules (expected ok or error)")

    def close(self) -> None:
        """``quit``, a moment to exit, then the process group is killed whatever happened."""
        if self._stop.alive:
            if self.alive:
                try:
                    self._stdin.write(b"quit\n")
                    self._stdin.close()
                    self.proc.wait(timeout=QUIT_SECONDS)
                except (OSError, ValueError, subprocess.TimeoutExpired):
                    pass
            self._selector.close()
            self._stop()

    def kill(self) -> None:
        """Stop now: no ``quit``, the process group is killed."""
        self._selector.close()
        self._stop()


# -- the agent -------------------------------------------------------------------------------

_CELL = re.compile(r"[a-z][0-9]+|[0-9]+")


class EngineAgent(Agent):
    """An external engine behind the agent interface; see the module's documentation."""

    name = "cmd"
    external = True
    """Runs outside this process: the audit keeps it in one process and counts its failures."""

    def __init__(
        self,
        rng: random.Random,
        *,
        argv: tuple[str, ...],
        timeout: float,
        book: Book | None = None,
        spec: str | None = None,
    ) -> None:
        super().__init__(rng, book=book, spec=spec)
        self.argv = tuple(argv)
        self.timeout = timeout
        self.process: EngineProcess | None = None
        self.rules: Rules | None = None
        self.starts = 0
        """Engine processes started (the first, then each restart)."""
        self.failed_starts = 0
        self.label = f"engine {self.spec}"

    @property
    def engine_id(self) -> str:
        """``name version`` as the engine gave them (``""`` before it has started)."""
        if self.process is None:
            return ""
        return f"{self.process.name} {self.process.version}"

    def search(self, position: Position) -> int:
        # Drawn first, so that the generator's stream does not depend on failures.
        seed = self.rng.getrandbits(32)
        self._ready(position)
        process = self.process
        assert process is not None  # _ready started it
        try:
            unasked = process.unasked_line()
            if unasked is not None:
                raise _Broken(
                    FailureKind.GARBAGE, f"wrote {unasked[:80]!r} unasked, after its last answer"
                )
            process.send(f"position {position}")
            process.send(f"go movetime {round(self.timeout * 1000)} seed {seed}")
            line = process.read_line(time.monotonic() + self.timeout + GRACE_SECONDS)
        except _Broken as broken:
            self._discard()
            detail = broken.detail
            if broken.kind == FailureKind.TIMEOUT:
                detail = f"no move within {self.timeout:g} s"
            raise self._failure(broken.kind, position, detail) from None
        word, _, rest = line.partition(" ")
        token = rest.strip().lower()
        if word != "move" or not _CELL.fullmatch(token):
            self._discard()
            raise self._failure(
                FailureKind.GARBAGE, position, f"answered {line[:80]!r} (expected move CELL)"
            )
        rules = position.rules
        if token.isdigit():
            cell = int(token)
            on_board = cell < rules.cells
        else:
            column, row = ord(token[0]) - ord("a"), int(token[1:]) - 1
            cell = row * rules.cols + column
            on_board = column < rules.cols and 0 <= row < rules.rows
        if not on_board:
            raise self._failure(
                FailureKind.ILLEGAL,
                position,
                f"played {token}, off the {rules.rows}x{rules.cols} board",
            )
        if position.occupied >> cell & 1:
            raise self._failure(
                FailureKind.ILLEGAL, position, f"played {rules.cell_name(cell)}, which is taken"
            )
        return cell

    def _failure(self, kind: FailureKind, position: Position, detail: str) -> EngineFailure:
        return EngineFailure(kind, position.rules, position.x, position.o, detail, self.spec)

    def _ready(self, position: Position) -> None:
        """A running engine that knows the rules: started or restarted here if need be."""
        rules = position.rules
        if self.process is not None and not self.process.alive:
            # It died after its last answer. Reported here, as a crash whenever a request
            # meets a dead engine, the audit's figures do not depend on how fast it died.
            story = self.process.exit_story("")
            self._discard()
            raise self._failure(FailureKind.CRASH, position, f"it had stopped: {story}")
        starting = self.process is None
        if starting:
            self.process = EngineProcess(self.argv, self.label)
            self.starts += 1
        elif self.rules == rules:
            return
        assert self.process is not None
        try:
            if starting:
                self.process.handshake(rules)
            else:
                self.process.set_rules(rules, time.monotonic() + STARTUP_SECONDS)
        except _Broken as broken:
            self._discard()
            if not starting:
                raise self._failure(
                    broken.kind, position, f"after rules: {broken.detail}"
                ) from None
            self.failed_starts += 1
            if self.starts == 1:
                raise EngineError(
                    f"{self.label} failed its handshake: {broken.kind}: {broken.detail}"
                ) from None
            if self.failed_starts >= MAX_FAILED_STARTS:
                raise EngineError(
                    f"{self.label} failed to restart {MAX_FAILED_STARTS} "
                    f"times in a row; last: {broken.kind}: "
                    f"{broken.detail}"
                ) from None
            raise self._failure(
                broken.kind, position, f"while restarting: {broken.detail}"
            ) from None
        except EngineError:
            self._discard()
            raise
        if starting:
            self.failed_starts = 0
        self.rules = rules

    def _discard(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process = None
            self.rules = None

    def close(self) -> None:
        """Stop the engine (``quit``, then kill); the next move would start it again."""
        if self.process is not None:
            self.process.close()
            self.process = None
            self.rules = None

    def __enter__(self) -> EngineAgent:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
