"""What every command shares: options, error handling at the edge, progress, formatting."""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from typing import Any

import click

from ttt_solve.book.defaults import DEFAULT_DB
from ttt_solve.book.errors import BookError, PositionNotFoundError
from ttt_solve.solver.errors import InvalidRulesError
from ttt_solve.solver.rules import Rules, parse_size


class CliError(click.ClickException):
    """A one-line error on stderr, exit status 2, no traceback."""

    exit_code = 2

    def format_message(self) -> str:
        return " ".join(self.message.split())  # one line, whatever the message held


def friendly_errors(command: Callable) -> Callable:
    """Turn the narrow exceptions of the lower layers into :class:`CliError` at the edge."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (ValueError, BookError, PositionNotFoundError) as error:
            raise CliError(str(error)) from None
        except KeyboardInterrupt:
            click.echo("interrupted: nothing was written", err=True)
            sys.exit(130)

    return wrapper


def make_rules(size: str, win: int | None) -> Rules:
    """Rules from ``--size`` and ``--win``; ``--win`` defaults to the shorter side."""
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
        self._bar = None
        self._shown = 0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            if time.perf_counter() - self.started < self.delay:
                return
            self._bar = click.progressbar(
                length=total, label=self.label, file=sys.stderr, show_eta=True, show_percent=True
            )
            self._bar.__enter__()
        if total != self._bar.length:
            self._bar.length = total
        self._bar.update(done - self._shown)
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
