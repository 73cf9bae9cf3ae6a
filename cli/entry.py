"""The console scripts ``ttt`` and ``ttt-solve``.

They start here, in a module that only the scripts import. Its first lines take Ctrl-C over
until a command's own handling of it is in place (the commands' modules, NumPy, SQLAlchemy and
click, take a few hundred milliseconds to load): a Ctrl-C meanwhile ends the command the way
any later one does, with a line saying nothing was written and exit status 130, never with a
``KeyboardInterrupt`` traceback. (A Ctrl-C while the interpreter itself starts, before these
lines run, is the interpreter's to report.)

Python turns Ctrl-C into an exception raised wherever the program is, and some places lose
it (:mod:`ttt_solve.cli.signals`). So while the command starts, Ctrl-C does not raise at all:
it says so and ends the process at once, nothing having been opened yet. Later it is raised
where the command is, except in those places: there it comes again a moment later, once they
are left.
"""

import os
import signal
import sys
import types

INTERRUPTED = 130
"""The exit status of a command stopped by Ctrl-C (128 + SIGINT), as a shell reports it."""


def _stopped_while_starting(_signum: int, _frame: object) -> None:
    sys.stderr.write("\ninterrupted: nothing was written\n")
    sys.stderr.flush()
    os._exit(INTERRUPTED)


_PREVIOUS = signal.getsignal(signal.SIGINT)
if _PREVIOUS is signal.default_int_handler:  # not where Ctrl-C is ignored (nohup, a & job)
    signal.signal(signal.SIGINT, _stopped_while_starting)

from ttt_solve.cli import signals  # noqa: E402  (after Ctrl-C is taken over)


def _interrupt(signum: int, frame: types.FrameType | None) -> None:
    """Ctrl-C as Python's own handler takes it (``KeyboardInterrupt`` where the command is),
    except where the exception could be lost: there the signal comes again a moment later."""
    if signals.stops_here(signum, frame):
        signal.default_int_handler(signum, frame)


def _start(target: str) -> None:
    module_name, function = target.split(":")
    main = getattr(__import__(module_name, fromlist=[function]), function)
    # From here on the command handles Ctrl-C.
    handler = _interrupt if _PREVIOUS is signal.default_int_handler else _PREVIOUS
    signal.signal(signal.SIGINT, handler)
    try:
        with signals.keep_lost_stops():
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
