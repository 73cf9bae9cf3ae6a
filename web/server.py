"""Running the application under uvicorn, on a socket already listening, until a signal.

On Ctrl-C (or SIGTERM) the worker processes are ended at once, before uvicorn's own stop: the
requests waiting for them are answered (503) and the stop does not wait for a search, an agent
move or an audit; answers still being sent after :data:`STOP_SECONDS` are dropped.

A request's head (its request line and headers) is bounded too (:data:`MAX_HEAD`): uvicorn's
fast HTTP protocol (httptools) keeps a head of any length in memory, so a visitor could grow
the server by sending one header without end. :class:`BoundedHead` answers 431 and closes the
connection as soon as a head passes the bound. (uvicorn's pure-Python protocol, h11, has such a
bound, but answers half as many requests a second.)
"""

from __future__ import annotations

import asyncio
import logging
import socket
from types import FrameType

import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

STOP_SECONDS = 1
"""How long, once stopped, the server waits for answers being sent before it drops them."""

MAX_HEAD = 64 * 1024
"""The longest request head read, in bytes, with what arrives with it (a browser sends one or
two KiB of head; the body after it is bounded on its own, :data:`web.guard.MAX_BODY`)."""


class BoundedHead(HttpToolsProtocol):
    """uvicorn's httptools protocol, with a request's head bounded by :data:`MAX_HEAD`."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.head_bytes: int | None = 0  # None once the head is complete

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.head_bytes = 0

    def on_headers_complete(self) -> None:
        self.head_bytes = None
        super().on_headers_complete()

    def data_received(self, data: bytes) -> None:
        if self.head_bytes is not None:
            self.head_bytes += len(data)
            if self.head_bytes > MAX_HEAD:
                self.refuse_head()
                return
        super().data_received(data)

    def refuse_head(self) -> None:
        message = f"the request's head is longer than this server reads ({MAX_HEAD:,} bytes)"
        body = message.encode()
        self.transport.write(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: text/plain; charset=utf-8\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body
        )
        self.transport.close()
        self.head_bytes = None


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, app: Starlette) -> None:
        super().__init__(config)
        self.app = app

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        for pool in getattr(self.app.state, "workers", ()):
            pool.kill()
        super().handle_exit(sig, frame)


def run(app: Starlette, listener: socket.socket, *, access_log: bool) -> None:
    """Serve ``app`` on ``listener`` until Ctrl-C or SIGTERM (which return normally).

    With ``access_log``, a line a request on the standard output, as uvicorn prints them
    (``INFO:     127.0.0.1:50312 - "GET /game/3x3k3 HTTP/1.1" 200 OK``); uvicorn's own news
    (its start, its stop) stays silent, its warnings and errors on the standard error."""
    config = uvicorn.Config(
        app,
        log_level="warning",  # uvicorn's log, "uvicorn.error": warnings and errors only
        access_log=access_log,
        http=BoundedHead,
        timeout_graceful_shutdown=STOP_SECONDS,
    )
    if access_log:  # uvicorn writes its request lines at INFO: let them through
        logging.getLogger("uvicorn.access").setLevel(logging.INFO)
    try:
        _Server(config, app).run(sockets=[listener])
    except KeyboardInterrupt:
        pass  # the signal that stopped the server, raised again by uvicorn once it has stopped
