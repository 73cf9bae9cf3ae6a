"""Helpers shared by the benchmark scripts: run a command, measure its wall time and memory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from typing import NamedTuple


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
