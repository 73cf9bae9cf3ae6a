"""In front of every route: what a request may send, where it may come from, and whether its
visitor is still there.

:class:`RequestGuard` is the outermost ASGI middleware of the application:

* a body longer than :data:`MAX_BODY` is refused with 413 as soon as that is known (from its
  ``Content-Length``, or while it is read), never read whole; a body that takes longer than
  :data:`BODY_SECONDS` to arrive is refused with 408;
* a request whose ``Host`` does not name this server (:class:`Hosts`) is refused with 400: a
  page of another site that has its own name point at this server's address (DNS
  rebinding) would otherwise read every page, and pass the check below;
* a query parameter given twice is refused with 400 (which of the two was meant cannot be
  known; the last one would win silently);
* a POST sent by a page of another site (a browser says so in ``Origin`` or
  ``Sec-Fetch-Site``) is refused with 403: the server has no login, so a page elsewhere must not
  start work on it through its visitors' browsers (the pages' own forms are same-origin, and
  scripts that send no ``Origin`` are not browsers' cross-site requests);
* :func:`client_gone` gives, to the code answering a request (threads included), an event set
  once its visitor has closed the connection, which stops its live work.

A request with no body (nearly all of them) costs a look at its headers and no more.
"""

from __future__ import annotations

import asyncio
import contextvars
import ipaddress
import threading
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY = 10_000
"""The longest request body read, in bytes (an audit's form or JSON needs a few hundred)."""

BODY_SECONDS = 10.0
"""The longest a request's body may take to arrive."""

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SAME_SITE = frozenset({b"same-origin", b"none"})
"""``Sec-Fetch-Site`` values of a request the page itself (or the visitor, typing) made."""

Respond = Callable[[Request, Exception], Awaitable[Response]]


class Visitor:
    """The connection of the request being answered, watched for its end only when asked
    (:meth:`gone`): most requests are answered before anyone needs to know."""

    __slots__ = ("_receive", "_loop", "_gone")

    def __init__(self, receive: Receive, loop: asyncio.AbstractEventLoop) -> None:
        self._receive = receive
        self._loop = loop
        self._gone: threading.Event | None = None

    def gone(self) -> threading.Event:
        """An event set once the visitor has closed the connection; callable from any thread."""
        if self._gone is None:
            self._gone = threading.Event()
            self._loop.call_soon_threadsafe(self._watch)
        return self._gone

    def _watch(self) -> None:
        self._loop.create_task(self._wait_for_disconnect())

    async def _wait_for_disconnect(self) -> None:
        # The body has been read (by the guard, or not at all on a GET): what comes next is
        # the end of the connection, or of the response (the server then says "disconnect"
        # too, and the work is over anyway).
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                assert self._gone is not None
                self._gone.set()
                return


_VISITOR: contextvars.ContextVar[Visitor | None] = contextvars.ContextVar(
    "ttt_visitor", default=None
)


def client_gone() -> threading.Event | None:
    """The event set once the visitor of the request being answered has gone; ``None``
    outside a request. Works in the threads Starlette runs work in (they share the request's
    context)."""
    visitor = _VISITOR.get()
    return visitor.gone() if visitor is not None else None


class RequestGuard:
    """The outermost middleware (see the module). ``respond(request, error)`` makes the error
    answers, as the application makes its own."""

    def __init__(self, app: ASGIApp, respond: Respond, hosts: Hosts | None = None) -> None:
        self.app = app
        self.respond = respond
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length: int | None = None
        chunked = False
        origin = fetch_site = host = None
        for name, value in scope["headers"]:
            if name == b"content-length":
                length = int(value) if value.isdigit() and len(value) < 20 else MAX_BODY + 1
            elif name == b"transfer-encoding":
                chunked = True
            elif name == b"origin":
                origin = value
            elif name == b"sec-fetch-site":
                fetch_site = value
            elif name == b"host":
                host = value
        if self.hosts is not None and host is not None:
            wrong = self.hosts.refusal(host)
            if wrong is not None:
                await self._refuse(scope, receive, send, 400, wrong)
                return
        if b"&" in scope["query_string"]:
            twice = _given_twice(scope["query_string"])
            if twice is not None:
                await self._refuse(scope, receive, send, 400, twice)
                return
        if scope["method"] in UNSAFE_METHODS:
            refusal = _cross_site(origin, fetch_site, host)
            if refusal is not None:
                await self._refuse(scope, receive, send, 403, refusal)
                return
        if length is not None and length > MAX_BODY:
            await self._refuse(scope, receive, send, 413, _too_long(length))
            return
        if chunked or length:
            try:
                body = await asyncio.wait_for(_read_body(receive), BODY_SECONDS)
            except asyncio.TimeoutError:
                slow = f"the request's body took more than {BODY_SECONDS:g} s to arrive"
                await self._refuse(scope, receive, send, 408, slow)
                return
            except _TooLong as error:
                await self._refuse(scope, receive, send, 413, str(error))
                return
            except _Gone:
                return
            receive = _replay(body, receive)
        token = _VISITOR.set(Visitor(receive, asyncio.get_running_loop()))
        try:
            await self.app(scope, receive, send)
        finally:
            _VISITOR.reset(token)

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, status: int, why: str
    ) -> None:
        response = await self.respond(Request(scope), HTTPException(status, why))
        # the body is left unread: the connection is closed after the answer
        response.headers["connection"] = "close"
        await response(scope, receive, send)


class _TooLong(Exception):
    pass


class _Gone(Exception):
    pass


def _too_long(length: int | None = None) -> str:
    size = f" of {length:,} bytes" if length is not None else ""
    return f"the request's body{size} is longer than this server reads ({MAX_BODY:,} bytes)"


async def _read_body(receive: Receive) -> bytes:
    """The whole body, or :class:`_TooLong` as soon as it passes :data:`MAX_BODY`."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Gone
        part = message.get("body", b"")
        size += len(part)
        if size > MAX_BODY:
            raise _TooLong(_too_long())
        parts.append(part)
        if not message.get("more_body", False):
            return b"".join(parts)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the body already read, then what the connection says next."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _cross_site(origin: Any, fetch_site: Any, host: Any) -> str | None:
    """Why a request that changes something comes from a page of another site, or ``None``.

    ``Sec-Fetch-Site`` is the browser's own word (a page cannot set it), so it decides where
    it is sent; elsewhere ``Origin`` must name this server as the visitor reached it (its
    ``Host``; the scheme is left aside, so that a proxy that adds TLS changes nothing)."""
    if fetch_site is not None:
        if fetch_site in SAME_SITE:
            return None
        return (
            f"a page of another site ({fetch_site.decode('latin-1')}) may not send this request; "
            f"use this server's own pages"
        )
    if origin is not None and host is not None:
        _, _, netloc = origin.partition(b"://")
        if netloc.lower() != host.lower():
            return (
                f"a page of {origin.decode('latin-1')[:100]!r} may not send this request to "
                f"this server; use its own pages"
            )
    return None


def _given_twice(query: bytes) -> str | None:
    """Why a query string is refused: a parameter given twice (its name as the server reads
    it, ``mo%76es`` as ``moves``), or ``None``."""
    seen = set()
    for name, _ in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        if name in seen:
            return f"the parameter {name[:40]!r} is given twice; give it once"
        seen.add(name)
    return None


class Hosts:
    """The names a request's ``Host`` may give this server: every IP address (a page cannot
    rebind those), ``localhost`` and its subdomains, and the names allowed: ``books.example``
    exactly, ``.example.org`` that name and its subdomains (as Django's ``ALLOWED_HOSTS``
    reads them), ``*`` any name (behind a proxy that checks it)."""

    def __init__(self, allowed: Iterable[str]) -> None:
        names = [name.strip().lower().rstrip(".") for name in allowed if name.strip()]
        self.any = "*" in names
        self.exact = frozenset(n for n in names if not n.startswith(".")) | {"localhost"}
        self.suffixes = tuple(n for n in names if n.startswith(".")) + (".localhost",)
        self._verdicts: dict[bytes, str | None] = {}

    def refusal(self, host: bytes) -> str | None:
        """Why a request with this ``Host`` is refused, or ``None``."""
        if self.any:
            return None
        try:
            return self._verdicts[host]
        except KeyError:
            pass
        if len(self._verdicts) > 256:  # a visitor may send any number of names
            self._verdicts.clear()
        verdict = self._verdicts[host] = self._judge(host.decode("latin-1"))
        return verdict

    def _judge(self, host: str) -> str | None:
        name = _name_of(host)
        if name in self.exact or name.endswith(self.suffixes) or f".{name}" in self.suffixes:
            return None
        try:
            ipaddress.ip_address(name)
            return None
        except ValueError:
            pass
        if not name:
            return (
                "the request's Host is empty: send the name this server is reached by (as a "
                "browser does)"
            )
        shown = name[:60]
        return (
            f"this server does not answer to the name {shown!r} (the request's Host); "
            f"start it with --allowed-host {shown} to serve it under that name"
        )


def _name_of(host: str) -> str:
    """The name of a ``Host`` header, without its port: ``[::1]:8000`` -> ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    name, colon, port = host.rpartition(":")
    return (name if colon and port.isdigit() else host).rstrip(".")
