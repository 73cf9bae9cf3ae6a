"""The application: routes, the book opened read-only for the server's lifetime, the worker
processes of its live work, and errors.

Every error a visitor can cause (an unknown game, a malformed position or move list, an
illegal move, a spec that does not parse, a busy server) is answered with a 4xx status and a
one-line message: a page for the pages, ``{"error": ...}`` for the JSON routes and the pages'
``.json`` twins. The server's
own troubles (a book found damaged, a book it cannot read now, a worker that failed) are
answered with a 5xx status, the same one-line message, and a line in the server's log.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ttt_solve.book.errors import BookError, BookNotFoundError, DamagedBookError, OutOfReachError
from ttt_solve.book.memory import MemoryLoader
from ttt_solve.book.reader import open_book
from ttt_solve.errors import TttError, printable
from ttt_solve.fixes import explained
from ttt_solve.presentation.numbers import count, percent
from ttt_solve.web import api, benchmark, pages, ratings, uwapi
from ttt_solve.web.audits import AuditRunner
from ttt_solve.web.common import shortened
from ttt_solve.web.explorer import Explorer, Limits
from ttt_solve.web.guard import Hosts, RequestGuard, client_gone
from ttt_solve.web.workers import (
    BusyError,
    ClientGone,
    Setup,
    Stopping,
    Unavailable,
    WorkerFailed,
    WorkerPool,
    WorkTimeout,
)

HERE = os.path.dirname(os.path.abspath(__file__))
JSON_PREFIXES = ("/api/", "/uwapi/")
LOG = logging.getLogger("uvicorn.error")  # the server's log (uvicorn's, on stderr)

CLIENT_GONE = 499
"""The status logged for a request whose visitor left before its answer (nginx's)."""


def status_of(error: Exception) -> int:
    """The HTTP status of an error: 4xx when the visitor caused it, 5xx when the server did."""
    if isinstance(error, HTTPException):
        return error.status_code
    if isinstance(error, BusyError):
        return 429  # too many requests: the live-work slots are taken
    if isinstance(error, (OutOfReachError, WorkTimeout)):
        return 422  # understood, but the work it takes ran out of time
    if isinstance(error, ClientGone):
        return CLIENT_GONE
    if isinstance(error, (LookupError, BookNotFoundError)):
        return 404
    if isinstance(error, (DamagedBookError, WorkerFailed)):
        return 500  # the server's book or code is at fault, not the request
    if isinstance(error, Unavailable) or (
        isinstance(error, BookError) and not isinstance(error, ValueError)
    ):
        return 503  # the book cannot be read now (locked, a lost connection), or stopping
    return 400


def one_line(error: Exception) -> str:
    """The error in one line, its control characters escaped: a visitor's long input in it
    quoted shortened (:func:`shortened`); the server's own troubles (a damaged book) whole,
    file names and all, with the command that checks or fixes them, for whoever runs the
    server."""
    if isinstance(error, HTTPException):
        text = str(error.detail)
    elif isinstance(error, TttError) and status_of(error) >= 500:
        return printable(" ".join(explained(error).split()))
    else:
        text = str(error)
    return printable(shortened(" ".join(text.split()))) or "bad request"


async def error_response(request: Request, error: Exception) -> Response:
    status, message = status_of(error), one_line(error)
    if status >= 500 and not isinstance(error, Stopping):
        LOG.error("%s %s: %d %s", request.method, request.url.path, status, message)
    headers = {"Retry-After": "5"} if status == 429 else None
    path = request.url.path
    if path.startswith(JSON_PREFIXES) or path.endswith(".json"):  # the API, the pages' twins
        return JSONResponse({"error": message, "status": status}, status, headers=headers)
    response = pages.render(request, "error.html", status=status, message=message, code=status)
    if headers:
        response.headers.update(headers)
    return response


class UniversalApiCors:
    """Lets pages of other origins read ``/uwapi/`` (GamesmanUni is served from its own site):
    the universal API only reads, so any origin may."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/uwapi/"):
            await self.app(scope, receive, send)
            return

        async def send_with_cors(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *message.get("headers", []),
                    (b"access-control-allow-origin", b"*"),
                ]
            await send(message)

        await self.app(scope, receive, send_with_cors)


def _ignore(message: str) -> None:
    pass


WORKER_START_SECONDS = 120.0
"""How long workers may take to start (the first start on a machine compiles the search)."""


def _settle(app: Starlette, report: Callable[[str], None], freeze: bool) -> None:
    """Once the worker processes are ready (or said why not) and the games are in memory:
    report it, and with ``freeze`` freeze what the start made (:func:`gc.freeze`), the
    modules, the compiled code and the tables, which live as long as the server: the collector
    then never walks them again, neither while serving (a pause of a tenth of a second or more,
    each full collection) nor when the server stops (about a second)."""
    started = time.monotonic()
    pools: tuple[WorkerPool, ...] = app.state.workers
    if all([pool.wait_ready(WORKER_START_SECONDS) for pool in pools]):
        counts = ", ".join(f"{pool.size} for {pool.name}" for pool in pools)
        report(f"worker processes ready: {counts} ({time.monotonic() - started:.1f} s)")
    elif not any(pool.stopping for pool in pools):
        report("worker processes not ready: live searches, agent moves and audits are refused")
    app.state.memory.join()
    if freeze:
        gc.collect()
        gc.freeze()


class DataTemplates(jinja2.Environment):
    """The pages' templates. They read the pages' data objects, plain dicts, so ``d.links.clear``
    is the key ``clear`` even where a dict has a method of that name (Jinja's own rule reads
    the method first, and a link would be written ``<built-in method clear ...>``)."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, dict) and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)


def page_templates() -> jinja2.Environment:
    """The templates of the pages: everything a visitor typed escaped, and a key a template
    reads but its data lacks an error (``StrictUndefined``), never an empty string."""
    templates = DataTemplates(
        loader=jinja2.FileSystemLoader(os.path.join(HERE, "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    templates.filters["count"] = count
    templates.filters["percent"] = percent  # "-" where nothing could be judged
    return templates


def routes() -> list[Route | Mount]:
    """Every route, the JSON API's first (its position route is the one asked most)."""
    static = Mount("/static", StaticFiles(directory=os.path.join(HERE, "static")), name="static")
    return [*api.routes, *uwapi.routes, *pages.routes, *ratings.routes, *benchmark.routes, static]


def create_app(
    db: str,
    limits: Limits | None = None,
    report: Callable[[str], None] | None = None,
    *,
    freeze: bool = False,
    allowed_hosts: Sequence[str] | None = None,
) -> Starlette:
    """The web application over the book ``db``, opened read-only when the server starts
    (``open_book``'s errors, such as a missing book, are raised then).

    The rows of the book's smaller games (``limits.memory_rows`` in all) are then loaded into
    memory in the background (see :mod:`book.memory`); ``report`` is told of each game
    loaded. The loader is ``app.state.memory``. The worker processes of live searches and
    agent moves, and of audits, start with it (:mod:`web.workers`): ``app.state.workers``.
    ``freeze``: once started, exempt what the start made from the garbage collector (for a
    server in a process of its own; see :func:`_settle`). ``allowed_hosts``: the names
    besides IP addresses and ``localhost`` that a request's ``Host`` may give
    (:class:`~ttt_solve.web.guard.Hosts`); ``None``, any name (a test client's)."""
    limits = limits or Limits()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        with open_book(db, read_only=True) as book:
            setup = Setup(db, limits.search_seconds, warm=True)
            searches = WorkerPool("live searches and agent moves", limits.max_searches, setup)
            audits = WorkerPool("audits", limits.max_audits, setup._replace(warm=False))
            app.state.workers = (searches, audits)
            try:
                for pool in app.state.workers:
                    pool.start()
                app.state.explorer = Explorer(book, limits, searches, client_gone)
                app.state.audits = AuditRunner(book, audits, seconds=limits.audit_seconds)
                app.state.memory = MemoryLoader(book, limits.memory_rows, report or _ignore)
                app.state.memory.start()
                settle = threading.Thread(target=_settle, args=(app, report or _ignore, freeze))
                settle.daemon = True
                settle.start()
                try:
                    yield
                finally:
                    app.state.memory.stop()  # before the book closes
            finally:
                for pool in app.state.workers:
                    pool.stop()

    handlers: dict[Any, Any] = {TttError: error_response, ValueError: error_response}
    handlers[LookupError] = error_response
    handlers[HTTPException] = error_response
    app = Starlette(
        routes=routes(),
        lifespan=lifespan,
        exception_handlers=handlers,
        middleware=[
            Middleware(
                RequestGuard,
                respond=error_response,
                hosts=Hosts(allowed_hosts) if allowed_hosts is not None else None,
            ),
            Middleware(UniversalApiCors),
        ],
    )
    app.state.templates = page_templates()
    return app
