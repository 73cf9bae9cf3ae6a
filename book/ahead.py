"""Making the next item in a thread while the current one is used."""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterable
from typing import Any, TypeVar

Item = TypeVar("Item")

_maker = threading.local()
"""The stop event of the :func:`made_ahead` whose thread this is, if any."""


def stop_requested() -> bool:
    """Whether the consumer of the items this thread makes has stopped (``False`` outside
    :func:`made_ahead`'s thread): work between two items may end there, unfinished, since
    nobody will read it."""
    stopped: threading.Event | None = getattr(_maker, "stopped", None)
    return stopped is not None and stopped.is_set()


def made_ahead(items: Iterable[Item]) -> Generator[Item, None, None]:
    """The items, made by a thread of their own one item ahead of the consumer: where making
    them releases the GIL (the solver's kernels, NumPy, reading SQLite), the next one is made
    while this one is used (a ply written, a batch of rows exported). An error of the maker is
    raised here; a consumer that stops early (closing this generator) stops the thread at its
    next item and waits for it, so that nothing runs on once the consumer has given up. Long
    work that makes one item checks :func:`stop_requested` between its steps, so that the
    wait is short (Ctrl-C or SIGTERM during an export)."""
    handoff: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=1)
    stopped = threading.Event()

    def hand(kind: str, item: Any) -> bool:
        while not stopped.is_set():
            try:
                handoff.put((kind, item), timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        _maker.stopped = stopped
        try:
            for item in items:
                if not hand("item", item):
                    return
            hand("end", None)
        except BaseException as error:  # noqa: BLE001  # handed to the consumer, raised there
            hand("error", error)

    thread = threading.Thread(target=produce, name="ttt-ahead", daemon=True)
    thread.start()
    try:
        while True:
            kind, item = handoff.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield item
    finally:
        stopped.set()
        thread.join()
