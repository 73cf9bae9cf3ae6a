"""Ctrl-C and SIGTERM, raised where a command is without ever being lost.

Python turns a signal into an exception raised wherever the main thread is, and some places
lose it: the compiler while a module is imported (the exception vanishes and the command runs
on), a finaliser or a weak reference's callback (it is printed as "Exception ignored" and
dropped), a call back from Numba's compiler. Both signals' handlers take the same two steps:

* where the main thread is in one of those places (:func:`loses_exceptions`), the handler
  raises nothing and the signal comes again a moment later (:func:`come_again`), once they
  are left;
* a place the first step does not know, where the exception was nevertheless printed and
  dropped, is reported to :func:`keep_lost_stops` (Python's ``sys.unraisablehook``), which
  sends the signal again, silently.

This module imports only the standard library: the console scripts use it before the
command's own modules are loaded (``cli/entry.py``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

AGAIN_SECONDS = 0.05
"""How long after a lost stop its signal comes again."""

_FINALISERS = ("__del__", "_finalize_fairy")
"""Finalisers, where Python prints an exception and drops it: ``__del__``, and SQLAlchemy's
``_finalize_fairy`` (its connection pool's)."""

_CALLBACKS = {"weakref": ("remove", "_remove", "__call__"), "multiprocessing": ("__call__",)}
"""The callbacks of weak references, where Python does the same, by the modules that hold
them (a file name holding the key): those of ``weakref``'s dictionaries and sets, of
``weakref.finalize`` and of multiprocessing's ``Finalize``."""


def loses_exceptions(frame: types.FrameType | None) -> bool:
    """Whether an exception raised in ``frame`` could be lost on its way out: inside the
    import machinery, a finaliser or a weak reference's callback, or a call back from Numba's
    compiler (llvmlite)."""
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        if filename.startswith("<frozen importlib") or "llvmlite" in filename:
            return True
        if code.co_name in _FINALISERS:
            return True
        callbacks = (names for module, names in _CALLBACKS.items() if module in filename)
        if any(code.co_name in names for names in callbacks):
            return True
        frame = frame.f_back
    return False


_SENT_AGAIN: set[int] = set()
"""The signals :func:`come_again` sent, until their handler asks (:func:`sent_again`)."""


def come_again(signum: int) -> None:
    """Send ``signum`` to this process again in :data:`AGAIN_SECONDS`."""

    def send() -> None:
        _SENT_AGAIN.add(signum)
        os.kill(os.getpid(), signum)

    threading.Timer(AGAIN_SECONDS, send).start()


def sent_again(signum: int) -> bool:
    """Whether ``signum``, now handled, is one that :func:`come_again` sent: the stop that was
    lost, not a new one."""
    if signum in _SENT_AGAIN:
        _SENT_AGAIN.discard(signum)
        return True
    return False


def stops_here(signum: int, frame: types.FrameType | None) -> bool:
    """Whether a handler may raise its exception for ``signum`` in ``frame``; if not, the
    signal comes again a moment later (:func:`come_again`)."""
    if loses_exceptions(frame):
        come_again(signum)
        return False
    return True


def signal_of(stop: BaseException) -> int:
    """The signal that raised ``stop``: SIGTERM for an exception that says so
    (``signum = signal.SIGTERM`` on its class), else SIGINT."""
    return int(getattr(stop, "signum", signal.SIGINT))


@contextlib.contextmanager
def keep_lost_stops() -> Iterator[None]:
    """Within the block, a ``KeyboardInterrupt`` (Ctrl-C, or SIGTERM as a command raises it)
    that Python prints as "Exception ignored" and drops is sent again as its signal, silently;
    every other such exception is reported as before. Python calls the hook where it dropped
    the exception, so the signal comes a moment later, from a timer."""
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            come_again(signal_of(unraisable.exc_value))
            return
        previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous
