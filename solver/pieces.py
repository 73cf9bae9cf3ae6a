"""Compiled work in short pieces, with Ctrl-C and SIGTERM taken between them.

Python runs a signal's handler between two steps of Python code, and a compiled kernel
(Numba) is one step however long it runs: a stop waits for it, and when the handler runs in
the middle of the Python that a kernel's call makes around it (typing its arguments, boxing
its result), the exception it raises is lost or turned into a ``SystemError``. So a long
kernel runs here in pieces of about :data:`PIECE_SECONDS` (:func:`pieces`), each under
:func:`held`: a stop that comes while a piece runs is held, and raised as soon as the piece is
done, by the handlers that were there before, so that the command stops as it does anywhere
else. Numba compiling a kernel is Python code: a stop then is raised at once.

This module imports only the standard library.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
import types
from collections.abc import Iterator
from typing import Any

PIECE_SECONDS = 0.25
"""How long a piece of compiled work should take: a stop waits at most about this long."""

_STOPS = (signal.SIGINT, signal.SIGTERM)
_COMPILER = ("compiler_machinery", "llvmlite")
"""Where Numba compiles: the pass manager every compiling pass runs under, and its back end."""


def _compiling(frame: types.FrameType | None) -> bool:
    """Whether the main thread is in Numba's compiler (Python code that may be stopped)."""
    while frame is not None:
        if any(part in frame.f_code.co_filename for part in _COMPILER):
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Within the block, Ctrl-C and SIGTERM are held (except while Numba compiles, where they
    are taken at once); on leaving it, those held are raised again, in the main thread, by the
    handlers outside. Elsewhere than in the main thread, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    outside: dict[int, Any] = {}

    def hold(signum: int, frame: types.FrameType | None) -> None:
        handler = outside[signum]
        if _compiling(frame) and callable(handler):
            handler(signum, frame)
            return
        pending.append(signum)

    for signum in _STOPS:
        handler = signal.getsignal(signum)
        if handler is None or handler == signal.SIG_IGN:
            continue  # set outside Python, or ignored: left as it is
        outside[signum] = handler
        signal.signal(signum, hold)
    try:
        yield
    finally:
        for held_signal, handler in outside.items():
            signal.signal(held_signal, handler)
        for stop in dict.fromkeys(pending):
            signal.raise_signal(stop)


def pieces(total: int, first: int = 1 << 12, align: int = 1) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` ranges cutting ``0 .. total``, each sized to take about
    :data:`PIECE_SECONDS` at the rate the last one took (the caller's work between two
    ranges is timed), starting at ``first`` items; sizes are multiples of ``align``."""
    size = max(align, first - first % align)
    start = 0
    while start < total:
        stop = min(total, start + size)
        began = time.monotonic()
        yield start, stop
        took = time.monotonic() - began
        start = stop
        if took < PIECE_SECONDS / 2:
            size *= 2
        elif took > PIECE_SECONDS * 2:
            size = max(align, (size // 2) - (size // 2) % align)
