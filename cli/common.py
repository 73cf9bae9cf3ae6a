"""What every command shares: options, error handling at the edge, progress, formatting."""

from __future__ import annotations

import functools
import io
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import click

from ttt_solve.book.defaults import DEFAULT_DB
from ttt_solve.errors import TttError
from ttt_solve.solver.errors import InvalidRulesError
from ttt_solve.solver.rules import Rules, parse_size


class CliError(click.ClickException):
    """A one-line error on stderr, exit status 2, no traceback."""

    exit_code = 2

    def format_message(self) -> str:
        return " ".join(self.message.split())  # one line, whatever the message held


class BugError(click.ClickException):
    """An exception that ttt-solve did not raise on purpose: one line naming it, exit status 1.

    With ``--debug`` or ``TTT_DEBUG=1`` the exception is not caught, so Python prints it with
    its traceback.
    """

    exit_code = 1

    def __init__(self, error: Exception) -> None:
        detail = " ".join(str(error).split())
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


def friendly_errors(command: Callable) -> Callable:
    """The errors at the edge: a :class:`~ttt_solve.errors.TttError` (a problem the user can
    act on) becomes a one-line :class:`CliError`, exit 2; any other exception is a bug in
    ttt-solve, reported in one line with exit 1 (:class:`BugError`), or raised as it is under
    ``--debug``; Ctrl-C exits 130."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except TttError as error:
            raise CliError(str(error)) from None
        except KeyboardInterrupt:
            click.echo("interrupted: nothing was written", err=True)
            sys.exit(130)
        except OSError as error:  # the machine's, not ours: a full disk, a closed output
            silence_stdout()
            raise CliError(os_error_message(error)) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # click's own ways out: usage errors, --help, exit codes
        except Exception as error:
            if debug_requested():
                raise
            raise BugError(error) from None

    return wrapper


def os_error_message(error: OSError) -> str:
    """One line for an input/output error: what failed and where."""
    reason = error.strerror or str(error)
    if error.filename is None:  # a write to standard output or error
        return f"cannot write the output: {reason}"
    return f"{reason}: {error.filename}"


def silence_stdout() -> None:
    """Point standard output at nothing once writing to it failed, so that Python's flush at
    exit does not fail again with a second message."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a real file (a test's capture): nothing is flushed to the failed output


def run_entry(command: click.Command, prog_name: str) -> None:
    """Run a command as a script: click's own output (``--help``, usage errors) failing to be
    written is one line on stderr and exit 2, as the commands' own errors are."""
    try:
        command.main(prog_name=prog_name)
    except OSError as error:
        silence_stdout()
        try:
            click.echo(f"Error: {os_error_message(error)}", err=True)
        except OSError:
            pass  # stderr is unwritable too: the exit status is all that is left
        sys.exit(2)


_LONGEST_SIZE = 32
"""No board size needs more characters (sides are at most 26)."""


def make_rules(size: str, win: int | None) -> Rules:
    """Rules from ``--size`` and ``--win``; ``--win`` defaults to the shorter side."""
    if len(size) > _LONGEST_SIZE:  # Python refuses to read numbers of thousands of digits
        raise CliError(
            f"--size {size[:_LONGEST_SIZE]}... ({len(size):,} characters) is not a board size: "
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


def db_option(command: Callable) -> Callable:
    return click.option(
        "--db",
        default=DEFAULT_DB,
        show_default=True,
        metavar="PATH|URL",
        help="Book database: a SQLite file path or any SQLAlchemy URL.",
    )(command)


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


def count(n: int) -> str:
    """``1217977`` -> ``1,217,977``."""
    return f"{n:,}"


def approx(n: float) -> str:
    """A rough count for people: ``765``, ``1.3 million``, ``2.0e+10``."""
    if n < 1e6:
        return f"{n:,.0f}"
    if n < 1e9:
        return f"{n / 1e6:.1f} million"
    return f"{n:.1e}"
