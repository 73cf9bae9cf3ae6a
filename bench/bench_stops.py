"""How long a table command takes to stop after Ctrl-C or SIGTERM, at real size.

Each case starts a command, sends it a signal after a set time (while its compiled kernels
run), and times the signal to the process's exit; it prints the exit status (130 for SIGINT,
143 for SIGTERM) and the last line the command wrote on stderr. The book must catalogue 4x5
k=4 and 5x5 k=4 as tables (``ttt table catalogue FOLDER --db BOOK``). Target: every stop
within 2 seconds.

    python bench/bench_stops.py BOOK            # exports, a build and a verify: about 2 min
    python bench/bench_stops.py BOOK --long 300 # also 5x5 k=4's whole export, stopped at 300 s
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

from tabulate import tabulate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_average, script  # noqa: E402


def stopped(argv: list[str], after: float, signum: signal.Signals) -> list[str]:
    """A row: the command, when and how it was stopped, its status, the seconds it took to
    exit after the signal, and its last line on stderr."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(after)
    running = process.poll() is None
    sent = time.perf_counter()
    process.send_signal(signum)
    _, errors = process.communicate()
    seconds = time.perf_counter() - sent
    last = (errors.strip().splitlines() or [""])[-1]
    took = f"{seconds:.2f}" if running else "(ended before the signal)"
    name = " ".join(os.path.basename(part) if "/" in part else part for part in argv[:4])
    return [name, f"{signum.name} at {after:.0f} s", str(process.returncode), took, last[:64]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("book", help="a book cataloguing 4x5 k=4 and 5x5 k=4 as tables")
    parser.add_argument("--long", type=float, default=0, help="seconds into 5x5's whole export")
    args = parser.parse_args()
    ttt = script("ttt")
    four = ["--size", "4x5", "--win", "4", "--db", args.book]
    five = ["--size", "5", "--win", "4", "--db", args.book]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-stops-") as folder:
        out = os.path.join(folder, "out.csv")
        rows.append(stopped([ttt, "export", *four, "-o", out], 8, signal.SIGTERM))
        rows.append(stopped([ttt, "export", *four, "-o", out], 30, signal.SIGINT))
        build = [ttt, "table", "build", "4x5k4", os.path.join(folder, "4x5k4")]
        rows.append(stopped(build, 20, signal.SIGINT))
        rows.append(stopped([ttt, "verify", *five], 6, signal.SIGTERM))
        if args.long:
            rows.append(stopped([ttt, "export", *five], args.long, signal.SIGTERM))
    headers = ["command", "stopped", "status", "seconds to exit", "last line on stderr"]
    print(tabulate(rows, headers=headers))
    print(f"\n{os.cpu_count()} cores, load average {load_average()} at the end")


if __name__ == "__main__":
    sys.exit(main())
