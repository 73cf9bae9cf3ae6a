"""Running the application under uvicorn, on a socket already listening, until a signal.

On Ctrl-C (or SIGTERM) the worker processes are ended at once, before uvicorn's own stop: the
requests waiting for them are answered (503) and the stop does not wait for a search, an agent
move or an audit; answers still being sent after :data:`STOP_SECONDS` are dropped.

What one connection may hold is bounded (:class:`BoundedHead`, uvicorn's fast HTTP protocol,
httptools, with what it lacks):

* a request's head (its request line and headers) is at most :data:`MAX_HEAD` bytes (431):
  httptools keeps a head of any length in memory. The bytes that arrive with a complete head
  are its body's, bounded on their own (413, :data:`web.guard.MAX_BODY`). uvicorn's
  pure-Python protocol, h11, has a head bound, but answers half as many requests a second;
* a head must arrive within ``head_seconds`` of the connection, or of the answer before
  it on a kept-alive connection (then 408, or the connection closed if nothing came):
  uvicorn has no such timeout (its ``timeout_keep_alive`` runs only between requests, and
  stops at the first byte of the next; a "timeout-request-start" was proposed in its issue
  157 and never made), so a connection that never finished its head was held for ever, and
  20,000 of them took every file descriptor. The deadline is absolute: a head sent a byte
  at a time does not extend it. An idle kept-alive connection is
  closed after :data:`KEEP_ALIVE_SECONDS` (uvicorn's ``timeout_keep_alive``);
* at most ``max_connections`` connections are open (:class:`Admission`). Past it, the
  oldest connection still waiting for its head (or idle between requests) is closed to make
  room, so a flood of half-open connections cannot shut out a visitor whose request arrives;
  only when every connection is being answered is a new one refused (503). The first
  refusal is logged, once. uvicorn's own ``limit_concurrency`` is not used: it counts the
  half-open connections too and then answers every new request 503, which is what a flood
  wants.

Every answer carries :data:`SAFETY_HEADERS` (uvicorn's ``headers`` setting, so its own error
answers too): no page may be framed by another site, nor its type sniffed.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import socket
from types import FrameType
from typing import Any, ClassVar

import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

STOP_SECONDS = 1
"""How long, once stopped, the server waits for answers being sent before it drops them."""

MAX_HEAD = 64 * 1024
"""The longest request head read, in bytes (a browser sends one or two KiB of head; the body
after it is bounded on its own, :data:`web.guard.MAX_BODY`)."""

KEEP_ALIVE_SECONDS = 5
"""How long a connection is kept open, idle, after an answer (uvicorn's default)."""

FILES_KEPT = 200
"""File descriptors never given to connections: the book, the worker processes' pipes, the
log (the cap is lowered to leave them where the process may open few files)."""

SAFETY_HEADERS = [
    ("x-frame-options", "DENY"),
    ("content-security-policy", "frame-ancestors 'none'"),
    ("x-content-type-options", "nosniff"),
]
"""Sent with every answer: no page of another site may frame this one (clickjacking), and a
browser takes each answer as the type it says."""

LOG = logging.getLogger("uvicorn.error")


def connection_cap(wanted: int) -> int:
    """``wanted``, lowered where the process may not open that many files and
    :data:`FILES_KEPT` more."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - FILES_KEPT))


def _plain(status: bytes, message: str) -> bytes:
    """A whole plain-text answer that closes the connection, written before any app runs."""
    body = message.encode()
    headers = b"".join(f"{name}: {value}\r\n".encode() for name, value in SAFETY_HEADERS)
    return (
        b"HTTP/1.1 "
        + status
        + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
        + headers
        + b"content-length: "
        + str(len(body)).encode()
        + b"\r\nconnection: close\r\n\r\n"
        + body
    )


class Admission:
    """The connections of one server, at most ``cap`` of them open; those waiting for a
    request's head in the order they began to wait, so the oldest goes first."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.open: set[BoundedHead] = set()
        self.waiting: dict[BoundedHead, None] = {}  # insertion-ordered: the oldest first
        self.full = 0  # how many times a connection came with every place taken

    def admit(self, connection: BoundedHead) -> bool:
        """Whether a new connection is kept: room is made by closing the oldest one waiting
        for a head; when every connection is being answered, the new one is refused."""
        if len(self.open) >= self.cap:
            self._say_full()
            if not self.waiting:
                return False
            self.drop(next(iter(self.waiting)))
        self.open.add(connection)
        self.waiting[connection] = None
        return True

    def drop(self, connection: BoundedHead) -> None:
        self.forget(connection)
        connection.transport.close()

    def forget(self, connection: BoundedHead) -> None:
        self.open.discard(connection)
        self.waiting.pop(connection, None)

    def _say_full(self) -> None:
        self.full += 1
        if self.full == 1:
            LOG.warning(
                "%d connections open, the most this server keeps (--max-connections): the "
                "oldest of those still sending a request's head are closed to make room, and "
                "new ones refused while every one is being answered (said once)",
                self.cap,
            )


class BoundedHead(HttpToolsProtocol):
    """uvicorn's httptools protocol, with a request's head bounded in size
    (:data:`MAX_HEAD`) and time (``head_seconds``), and the connection admitted by its
    server's :class:`Admission` (see the module)."""

    admission: ClassVar[Admission]  # the server's, set by :func:`protocol`
    head_seconds: ClassVar[float]  # the server's, set by :func:`protocol`

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.head_bytes: int | None = 0  # None while no head is being read
        self.head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if not self.admission.admit(self):
            transport.write(
                _plain(b"503 Service Unavailable", "the server holds all the connections it can")
            )
            transport.close()
            return
        self._wait_for_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        self.admission.forget(self)
        super().connection_lost(exc)

    def _wait_for_head(self) -> None:
        self.head_bytes = 0
        self._stop_head_timer()
        self.head_timer = self.loop.call_later(self.head_seconds, self._head_too_slow)
        self.admission.waiting[self] = None

    def _stop_head_timer(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def _head_too_slow(self) -> None:
        self.head_timer = None
        if self.head_bytes:  # part of a head came: say why the connection ends
            message = f"the request's head took more than {self.head_seconds:g} s to arrive"
            self.transport.write(_plain(b"408 Request Timeout", message))
        self.admission.drop(self)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self.head_bytes is None:  # a request after another in the same bytes (pipelined)
            self.head_bytes = 0

    def on_headers_complete(self) -> None:
        self.head_bytes = None
        self._stop_head_timer()
        self.admission.waiting.pop(self, None)
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.timeout_keep_alive_task is not None:  # idle, kept alive: a new head may come
            self._wait_for_head()

    def data_received(self, data: bytes) -> None:
        if self.head_bytes is not None:
            room = MAX_HEAD - self.head_bytes
            if len(data) > room:  # the head ends within the room, or is too long
                super().data_received(data[:room])
                if self.head_bytes is not None and not self.transport.is_closing():
                    self.refuse_head()
                    return
                data = data[room:]  # the body's bytes, which arrived with the head
            else:
                self.head_bytes += len(data)
        if data and not self.transport.is_closing():
            super().data_received(data)

    def refuse_head(self) -> None:
        message = f"the request's head is longer than this server reads ({MAX_HEAD:,} bytes)"
        self.transport.write(_plain(b"431 Request Header Fields Too Large", message))
        self.admission.drop(self)
        self.head_bytes = None


def protocol(max_connections: int, head_seconds: float) -> type[BoundedHead]:
    """The protocol of one server: :class:`BoundedHead` with its own :class:`Admission` and
    the time a request's head has to arrive."""
    admission = Admission(connection_cap(max_connections))
    fields = {"admission": admission, "head_seconds": head_seconds}
    return type("BoundedHead", (BoundedHead,), fields)


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, app: Starlette) -> None:
        super().__init__(config)
        self.app = app

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        for pool in getattr(self.app.state, "workers", ()):
            pool.kill()
        super().handle_exit(sig, frame)


def run(
    app: Starlette,
    listener: socket.socket,
    *,
    access_log: bool,
    max_connections: int,
    head_seconds: float,
) -> None:
    """Serve ``app`` on ``listener`` until Ctrl-C or SIGTERM (which return normally), with at
    most ``max_connections`` open (see the module; lowered by :func:`connection_cap`) and
    ``head_seconds`` for each request's head to arrive.

    With ``access_log``, a line a request on the standard output, as uvicorn prints them
    (``INFO:     127.0.0.1:50312 - "GET /game/3x3k3 HTTP/1.1" 200 OK``); uvicorn's own news
    (its start, its stop) stays silent, its warnings and errors on the standard error."""
    config = uvicorn.Config(
        app,
        log_level="warning",  # uvicorn's log, "uvicorn.error": warnings and errors only
        access_log=access_log,
        http=protocol(max_connections, head_seconds),
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        headers=SAFETY_HEADERS,
        timeout_graceful_shutdown=STOP_SECONDS,
    )
    if access_log:  # uvicorn writes its request lines at INFO: let them through
        logging.getLogger("uvicorn.access").setLevel(logging.INFO)
    try:
        _Server(config, app).run(sockets=[listener])
    except KeyboardInterrupt:
        pass  # the signal that stopped the server, raised again by uvicorn once it has stopped
