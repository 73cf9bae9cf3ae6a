"""The console scripts ``ttt`` and ``ttt-solve``.

They start here, in a module that only the scripts import. Its first lines take Ctrl-C over
until a command's own handling of it is in place (the commands' modules, NumPy, SQLAlchemy and
click, take a few hundred milliseconds to load): a Ctrl-C meanwhile ends the command the way
any later one does, with a line saying nothing was written and exit status 130, never with a
``KeyboardInterrupt`` traceback. (A Ctrl-C while the interpreter itself starts, before these
lines run, is the interpreter's to report.)

Python turns Ctrl-C into an exception raised wherever the program is, and some places lose
it: the compiler while a module is imported (the exception vanishes and the command runs on),
a callback of the import machinery or a finaliser (it is printed as "Exception ignored" and
dropped), a call back from Numba's compiler. So while the command starts, Ctrl-C does not
raise at all: it says so and ends the process at once, nothing having been opened yet. Later
it is raised where the command is, except in those places: there it comes again a moment
later, once they are left.
"""

import os
import signal
import sys
import threading
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


def _loses_exceptions(frame: types.FrameType | None) -> bool:
    """Whether an exception raised in ``frame`` could be lost on its way out: inside the
    import machinery, a finaliser, or a call back from Numba's compiler (llvmlite)."""
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith("<frozen importlib") or "llvmlite" in code.co_filename:
            return True
        if code.co_name in ("__del__", "_finalize_fairy"):  # the latter: SQLAlchemy's pool
            return True
        frame = frame.f_back
    return False


def _interrupt(signum: int, frame: types.FrameType | None) -> None:
    """Ctrl-C as Python's own handler takes it (``KeyboardInterrupt`` where the command is),
    except where the exception could be lost: there the signal comes again a moment later."""
    if _loses_exceptions(frame):
        threading.Timer(0.05, os.kill, (os.getpid(), signum)).start()
        return
    signal.default_int_handler(signum, frame)


def _start(target: str) -> None:
    module_name, function = target.split(":")
    main = getattr(__import__(module_name, fromlist=[function]), function)
    # From here on the command handles Ctrl-C.
    handler = _interrupt if _PREVIOUS is signal.default_int_handler else _PREVIOUS
    signal.signal(signal.SIGINT, handler)
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
