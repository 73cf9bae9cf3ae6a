"""What every command shares: options, error handling at the edge, progress, formatting."""

from __future__ import annotations

import contextlib
import errno
import functools
import io
import logging
import os
import resource
import select
import signal
import sqlite3
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, TypeVar

import click

from ttt_solve.book.defaults import DEFAULT_DB
from ttt_solve.cli import signals
from ttt_solve.errors import TttError, printable, quoted
from ttt_solve.presentation.numbers import count as count  # what the commands print counts with
from ttt_solve.solver.errors import InvalidRulesError
from ttt_solve.solver.rules import Rules, parse_size


class CliError(click.ClickException):
    """A one-line error on stderr, exit status 2, no traceback."""

    exit_code = 2

    def format_message(self) -> str:
        # one line whatever the message held, and no character that would act on a terminal
        return printable(" ".join(self.message.split()))


class DamageError(CliError):
    """A damaged table, found as ``ttt verify`` finds damage: one line, exit status 1."""

    exit_code = 1


class WorkerLostError(CliError):
    """A worker process of the command's pool died (killed, out of memory): one line, exit
    status 1."""

    exit_code = 1

    def __init__(self) -> None:
        super().__init__(
            "a worker process ended abruptly (killed, perhaps for want of memory); "
            "run again, with fewer --jobs where memory is short"
        )


class BugError(click.ClickException):
    """An exception that ttt-solve did not raise on purpose: one line naming it, exit status 1.

    With ``--debug`` or ``TTT_DEBUG=1`` the exception is not caught, so Python prints it with
    its traceback.
    """

    exit_code = 1

    def __init__(self, error: Exception) -> None:
        detail = printable(" ".join(str(error).split()))
        super().__init__(
            f"this is a bug in ttt-solve: {type(error).__name__}"
            f"{': ' + detail if detail else ''} (run again with --debug, or with the "
            f"environment variable {DEBUG_VARIABLE}=1, to see the traceback)"
        )


DEBUG_VARIABLE = "TTT_DEBUG"
"""Set to 1 in the environment: as ``--debug``, show the traceback of an unexpected error."""


def debug_requested() -> bool:
    """Whether ``--debug`` was given (to this command or its group) or ``TTT_DEBUG=1`` is set."""
    context = click.get_current_context(silent=True)
    if context is not None and context.meta.get(DEBUG_VARIABLE):
        return True
    return os.environ.get(DEBUG_VARIABLE, "").strip() not in ("", "0")


def _set_debug(context: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        context.meta[DEBUG_VARIABLE] = True  # meta is shared by a group and its commands


def debug_option(command: Callable) -> Callable:
    """``--debug``: an unexpected error shows its traceback instead of a one-line report."""
    return click.option(
        "--debug",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_set_debug,
        help=f"Show the traceback of an unexpected error (also: {DEBUG_VARIABLE}=1).",
    )(command)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is: it stops as after Ctrl-C (what it was writing is
    rolled back or removed) and says so, then exits 143 as a process killed by SIGTERM."""

    signum = signal.SIGTERM


def stopped_by(interrupt: KeyboardInterrupt) -> tuple[str, int]:
    """What to call a stop and its exit status: ``terminated``, 143, or ``interrupted``, 130."""
    return ("terminated", 143) if isinstance(interrupt, Terminated) else ("interrupted", 130)


SAME_STOP_SECONDS = 1.0
"""A SIGTERM this soon after the one that stopped the command is the same stop: ``timeout``
sends one to the process, then one to every process of its group."""


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` in this process (in the main
    thread only, where signals are delivered), as Ctrl-C raises ``KeyboardInterrupt``: where
    Python would lose the exception, the signal comes again a moment later
    (:mod:`ttt_solve.cli.signals`). A process forked meanwhile (a worker of a pool, which is
    stopped by SIGTERM) is killed by it as usual."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner = os.getpid()
    raised: list[float] = []

    def terminate(signum: int, frame: types.FrameType | None) -> None:
        if os.getpid() != owner:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        again = signals.sent_again(signum)  # the stop whose exception was lost
        if raised and not again and time.monotonic() - raised[-1] < SAME_STOP_SECONDS:
            return  # the stop under way: raised again, it would cut the cleaning up short
        if signals.stops_here(signum, frame):
            raised.append(time.monotonic())
            raise Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        with signals.keep_lost_stops():
            yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def friendly_errors(command: Callable) -> Callable:
    """The errors at the edge: a :class:`~ttt_solve.errors.TttError` (a problem the user can
    act on) becomes a one-line :class:`CliError`, exit 2; any other exception is a bug in
    ttt-solve, reported in one line with exit 1 (:class:`BugError`), or raised as it is under
    ``--debug``, but for a worker process that died (:class:`WorkerLostError`); Ctrl-C exits
    130, SIGTERM 143, each with a line saying so."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        quiet_library_noise()
        try:
            with sigterm_as_interrupt():
                return command(*args, **kwargs)
        except TttError as error:
            from ttt_solve.book.errors import ErrorKind
            from ttt_solve.fixes import explained

            if getattr(error, "kind", None) == ErrorKind.DAMAGED_TABLE:
                raise DamageError(explained(error)) from None
            raise CliError(explained(error)) from None
        except KeyboardInterrupt as interrupt:
            stop(interrupt)
        except OSError as error:  # the machine's, not ours: a full disk, a closed output
            if silence_stdout(error):
                raise click.exceptions.Exit(1) from None
            if _disk_full(error):
                raise CliError(_disk_full_message(error)) from None
            raise CliError(os_error_message(error)) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # click's own ways out: usage errors, --help, exit codes
        except Exception as error:
            from concurrent.futures.process import BrokenProcessPool

            if _disk_full(error):
                raise CliError(_disk_full_message(error)) from None
            if isinstance(error, BrokenProcessPool) and not debug_requested():
                raise WorkerLostError() from None
            stopped = _stop_within(error)
            if stopped is not None:
                stop(stopped)
            if debug_requested():
                raise
            raise BugError(error) from None

    return wrapper


def stop(interrupt: KeyboardInterrupt) -> NoReturn:
    """End the command stopped by ``interrupt``: a line saying so, and its exit status."""
    word, status = stopped_by(interrupt)
    click.echo(f"{word}: nothing was written", err=True)
    sys.exit(status)


def _stop_within(error: BaseException) -> KeyboardInterrupt | None:
    """The stop a ``SystemError`` stands for: a signal's exception raised while compiled code
    (a Numba kernel) was returning comes out as a ``SystemError`` whose context is that
    exception, or another such ``SystemError`` (one a compiled call it was within)."""
    seen = 0
    while isinstance(error, SystemError) and seen < 100:
        inner = error.__cause__ or error.__context__
        if isinstance(inner, KeyboardInterrupt):
            return inner
        if inner is None:
            break
        error, seen = inner, seen + 1
    return None


_LEAKED_SEMAPHORES = "ignore:resource_tracker:UserWarning:multiprocessing.resource_tracker"
"""The warning filter that keeps multiprocessing's resource tracker quiet about the semaphores
of a pool whose process was killed outright: it removes them, and the user can do nothing."""


def quiet_library_noise() -> None:
    """Keep other libraries' own lines off the terminal where a command says what went wrong
    itself, in one line: the database driver's log (psycopg adds "error ignored terminating
    <psycopg.Pipeline [BAD]>" when the server goes away mid-write), and the warning of
    multiprocessing's resource tracker (a process of its own, which takes its warning filters
    from this one's ``sys.warnoptions`` when the first pool starts it)."""
    driver = logging.getLogger("psycopg")
    if not driver.handlers:
        driver.addHandler(logging.NullHandler())
    if _LEAKED_SEMAPHORES not in sys.warnoptions:
        sys.warnoptions.append(_LEAKED_SEMAPHORES)


_SQLITE_FULL = 13
"""SQLite's result code for a full disk (``sqlite3.SQLITE_FULL`` from Python 3.11 on)."""


def _disk_full(error: BaseException) -> bool:
    """Whether ``error`` says the disk is full: an ``OSError`` (ENOSPC, EDQUOT) or SQLite's
    ``SQLITE_FULL``, as raised or wrapped by SQLAlchemy (``orig``) or another error."""
    for cause in (error, getattr(error, "orig", None), error.__cause__, error.__context__):
        if isinstance(cause, OSError) and cause.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if isinstance(cause, sqlite3.Error) and (
            getattr(cause, "sqlite_errorcode", None) == _SQLITE_FULL or "disk is full" in str(cause)
        ):
            return True
    return False


def _disk_full_message(error: BaseException) -> str:
    """One line for a full disk: the file or book, and the fix. A failed write leaves the
    book as it was (its transaction is rolled back; output files are written aside)."""
    context = click.get_current_context(silent=True)
    params = context.params if context is not None else {}
    output = params.get("output")
    if isinstance(error, OSError) and error.filename:
        where = str(error.filename)
    elif isinstance(error, OSError):  # a write() names no file: the output, or stdout
        where = f"the output {output}" if output not in (None, "-") else "the standard output"
    else:  # the database's own error
        where = f"the book {params['db']}" if params.get("db") else "the book"
    return f"no space left on the disk while writing {where}; free some space and run again"


def os_error_message(error: OSError) -> str:
    """One line for an input/output error: what failed and where."""
    reason = write_failure(error)
    if error.filename is None:  # a write to standard output or error
        return f"cannot write the output: {reason}"
    return f"{reason}: {error.filename}"


def write_failure(error: OSError) -> str:
    """Why a write failed, in words; a file past the process's file-size limit names it."""
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if error.errno == errno.EFBIG and limit != resource.RLIM_INFINITY:
        return (
            f"the file reached this process's file-size limit of {limit:,} bytes (ulimit -f); "
            f"raise the limit or write less"
        )
    return error.strerror or str(error)


def silence_stdout(error: OSError) -> bool:
    """Point standard output at nothing once a write failed with ``error``, so that Python's
    flush at exit does not fail again with a second message; return whether the write was to
    standard output and its reader had stopped reading (``| head``). Then the reader has what
    it wanted: no message, only exit status 1 (the output was cut short), as click gives for
    its own output. Told by the pipe itself (no reader left: ``POLLERR``), not by the error
    alone, which a worker's pipe may raise too, and asked before the pipe is let go."""
    reader_left = False
    try:
        if isinstance(error, BrokenPipeError):
            poller = select.poll()
            poller.register(sys.stdout.fileno(), select.POLLOUT)
            reader_left = any(events & select.POLLERR for _, events in poller.poll(0))
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a real file (a test's capture): nothing is flushed to the failed output
    return reader_left


def run_entry(command: click.Command, prog_name: str) -> None:
    """Run a command as a script. Click's own output (``--help``, usage errors) failing to be
    written is one line on stderr and exit 2, as the commands' own errors are; a Ctrl-C that
    comes before the command runs (while its options are read or its module loads) exits 130
    with a line, as one that comes later does, not with click's ``Aborted!`` and status 1."""
    try:
        status = command.main(prog_name=prog_name, standalone_mode=False)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except click.Abort as abort:
        if not isinstance(abort.__cause__ or abort.__context__, KeyboardInterrupt):
            click.echo("Aborted!", err=True)  # end of input at a prompt, as click says it
            sys.exit(1)
        _say_interrupted()
    except KeyboardInterrupt:
        _say_interrupted()
    except OSError as error:
        if silence_stdout(error):
            sys.exit(1)
        try:
            click.echo(f"Error: {printable(os_error_message(error))}", err=True)
        except OSError:
            pass  # stderr is unwritable too: the exit status is all that is left
        sys.exit(2)
    sys.exit(status if isinstance(status, int) else 0)  # an int: click's exit code (--help: 0)


def _say_interrupted() -> None:
    """Ctrl-C before a command started its work: nothing was written; exit 130."""
    with contextlib.suppress(OSError):
        click.echo("interrupted: nothing was written", err=True)
    sys.exit(130)


LONGEST_NUMBER = 18
"""Digits of the largest whole number an option takes: every count fits in 64 bits, and Python
refuses to read a number of thousands of digits (with a ValueError that names no option)."""


def whole_number(digits: str) -> int | None:
    """``int(digits)`` for a string of ASCII digits (a sign allowed), or ``None`` when it has
    more than :data:`LONGEST_NUMBER` digits: too large for anything an option counts."""
    if len(digits.lstrip("+-").lstrip("0")) > LONGEST_NUMBER:
        return None
    return int(digits)


_LONGEST_SIZE = 32
"""No board size needs more characters (sides are at most 26)."""


def make_rules(size: str, win: int | None) -> Rules:
    """Rules from ``--size`` and ``--win``; ``--win`` defaults to the shorter side."""
    if len(size) > _LONGEST_SIZE:  # Python refuses to read numbers of thousands of digits
        raise CliError(
            f"--size {quoted(size, _LONGEST_SIZE)} is not a board size: "
            f"write N or RxC, each side 1..26 (e.g. 3 or 4x5)"
        )
    try:
        rows, cols = parse_size(size)
        return Rules(rows, cols, min(rows, cols) if win is None else win)
    except InvalidRulesError as error:
        raise CliError(str(error)) from None


def game_options(command: Callable) -> Callable:
    """``--size`` and ``--win``, handed to the command as one ``rules`` argument."""

    @functools.wraps(command)
    def wrapper(*args: Any, size: str, win: int | None, **kwargs: Any) -> Any:
        return command(*args, rules=make_rules(size, win), **kwargs)

    wrapper = click.option(
        "--win",
        "-k",
        "win",
        type=int,
        default=None,
        show_default="the shorter side",
        help="How many in a row win (1 <= k <= the longer side).",
    )(wrapper)
    wrapper = click.option(
        "--size",
        "-s",
        "size",
        default="3",
        show_default=True,
        help="Board: N for NxN, or RxC for R rows and C columns.",
    )(wrapper)
    return wrapper


def _check_db(_context: click.Context, _param: click.Parameter, value: str) -> str:
    if not value.strip():
        raise click.BadParameter(
            f"it is empty; name a book: a SQLite file (e.g. {DEFAULT_DB}) or a database URL"
        )
    return value


def db_option(command: Callable) -> Callable:
    return click.option(
        "--db",
        default=DEFAULT_DB,
        show_default=True,
        metavar="PATH|URL",
        callback=_check_db,
        help="Book database: a SQLite file path or any SQLAlchemy URL.",
    )(command)


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the system tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


BOOK_TABLE_BYTES = 768 * 2**20
"""Memory of one process proving an opening book's positions: its transposition table (the
compiled engine's, ``solver.prover.opening.BOOK_TABLE_BITS``), which ``--jobs`` is capped by."""


def jobs_option(help: str, memory_per_job: int = 0) -> Callable[[Callable], Callable]:
    """``--jobs N``: processes for the command, capped by the cores this process may use and,
    with ``memory_per_job`` bytes, by the memory available; a capped value is said on stderr.
    (More processes than cores only share them; more than memory holds would swap or die.)"""

    def cap(_context: click.Context, _param: click.Parameter, jobs: int) -> int:
        from ttt_solve.solver.exhaustive.estimate import available_memory

        limits = [(usable_cores(), "the cores this process may use")]
        if memory_per_job:
            available = available_memory()
            limits.append(
                (
                    max(1, available // memory_per_job),
                    f"{available / 2**30:.1f} GiB of memory available, "
                    f"{memory_per_job // 2**20} MiB per process",
                )
            )
        usable, reason = min(limits)
        if jobs <= usable:
            return jobs
        click.echo(f"--jobs {jobs}: using {usable} ({reason})", err=True)
        return usable

    return click.option(
        "--jobs",
        "-j",
        type=click.IntRange(1),
        default=min(2, usable_cores()),
        show_default=True,
        metavar="N",
        callback=cap,
        help=help,
    )


_Progress = TypeVar("_Progress", bound="LazyProgress")


class LazyProgress:
    """A progress bar on stderr that appears only once work has run for ``delay`` seconds."""

    def __init__(self, label: str, enabled: bool = True, delay: float = 1.0) -> None:
        self.label = label
        self.enabled = enabled
        self.delay = delay
        self.started = time.perf_counter()
        self._bar: click.termui.ProgressBar[int] | None = None
        self._shown = 0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        bar = self._bar
        if bar is None:
            if time.perf_counter() - self.started < self.delay:
                return
            bar = click.progressbar(
                length=total, label=self.label, file=sys.stderr, show_eta=True, show_percent=True
            )
            bar.__enter__()
            self._bar = bar
        if total != bar.length:
            bar.length = total
        bar.update(done - self._shown)
        self._shown = done

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None

    def __enter__(self: _Progress) -> _Progress:
        return self

    def __exit__(self, *_exception: object) -> None:
        self.close()


def duration_text(seconds: float) -> str:
    """``130`` -> ``2m10s``."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class ProgressLines:
    """Progress of long work as lines on stderr, one every ``every`` seconds (the first after
    that long, so that short work prints none): share done, the ETA at the rate so far, and
    the time so far. Lines, not a bar, so that a log of a long run shows them too."""

    def __init__(self, label: str, unit: str, every: float = 10.0) -> None:
        self.label = label
        self.unit = unit
        self.every = every
        self.started = time.perf_counter()
        self.shown = self.started
        self.printed = False
        self.last = (0, 0)

    def __call__(self, done: int, total: int) -> None:
        self.last = (done, total)
        now = time.perf_counter()
        if now - self.shown >= self.every:
            self.shown = now
            self._print(done, total, now - self.started)

    def _print(self, done: int, total: int, seconds: float) -> None:
        share = done / total if total else 1.0
        eta = duration_text(seconds * (1 - share) / share) if share > 0 else "?"
        click.echo(
            f"{self.label}: {100 * share:5.1f}% of {total:,} {self.unit} (ETA {eta}), "
            f"{duration_text(seconds)} so far",
            err=True,
        )
        self.printed = True

    def close(self) -> None:
        """A last line with the time taken, where lines were printed."""
        if self.printed:
            self._print(*self.last, time.perf_counter() - self.started)
