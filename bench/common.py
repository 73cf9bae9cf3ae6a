"""Helpers shared by the benchmark and check scripts: run a command, measure its wall time and
memory, and give a check's exit status."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from ttt_solve.errors import TttError


class Run(NamedTuple):
    seconds: float
    peak_mib: float
    returncode: int
    output: str


def script(name: str) -> str:
    """The installed console script beside this interpreter (or on PATH)."""
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.path.exists(beside) else (shutil.which(name) or name)


def measure(argv: list[str]) -> Run:
    """Run a command; wall time and the peak resident memory of that process alone."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return Run(seconds, usage.ru_maxrss / 1024, process.returncode, output)


def board_arguments(description: str) -> argparse.ArgumentParser:
    """The command line every solve benchmark starts from: ``--with-4x5`` adds the 4 rows x 5
    columns, k=4 board (minutes and GiBs) to the default ones."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--with-4x5", action="store_true", help="also solve 4x5 k=4")
    return parser


def chosen_boards(args: argparse.Namespace, boards: list[Any], board_4x5: Any) -> list[Any]:
    """The default boards, and the 4x5 one if ``--with-4x5`` asks for it."""
    return [*boards, board_4x5] if args.with_4x5 else list(boards)


def load_average() -> str:
    """The 1-minute load average, as ``/proc/loadavg`` gives it."""
    return f"{os.getloadavg()[0]:.1f}"


def checked(check: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """A check's exit status; input it cannot read is one line on stderr and status 2."""
    try:
        return check(args)
    except (TttError, OSError, ValueError, KeyError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
