"""The console scripts ``ttt`` and ``ttt-solve``.

They start here, in a module that imports nothing but the standard library and that only the
scripts import. Until a command's own handling of Ctrl-C is in place (its modules, NumPy,
SQLAlchemy and click, take a few hundred milliseconds to load), a Ctrl-C ends the command the
way any later one does: a line saying nothing was written, exit status 130, never a
``KeyboardInterrupt`` traceback. (A Ctrl-C while the Python interpreter itself starts, before
this module runs, is the interpreter's to report.)
"""

from __future__ import annotations

import importlib
import signal
import sys

INTERRUPTED = 130
"""The exit status of a command stopped by Ctrl-C (128 + SIGINT), as a shell reports it."""


def _stopped_while_starting(_signum: int, _frame: object) -> None:
    sys.stderr.write("\ninterrupted: nothing was written\n")
    raise SystemExit(INTERRUPTED)


_PREVIOUS = signal.getsignal(signal.SIGINT)
if _PREVIOUS is signal.default_int_handler:  # not where Ctrl-C is ignored (nohup, a & job)
    signal.signal(signal.SIGINT, _stopped_while_starting)


def _start(target: str) -> None:
    module_name, function = target.split(":")
    main = getattr(importlib.import_module(module_name), function)
    signal.signal(signal.SIGINT, _PREVIOUS)  # from here on the command handles Ctrl-C
    try:
        main()
    finally:
        # The command has done its work and chosen its exit status: a Ctrl-C while Python
        # shuts down (joining threads, flushing output) would only replace it with a traceback.
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def ttt() -> None:
    """The ``ttt`` command group."""
    _start("ttt_solve.cli.main:main")


def ttt_solve() -> None:
    """``ttt-solve``, the same as ``ttt solve``."""
    _start("ttt_solve.cli.solve:main")
