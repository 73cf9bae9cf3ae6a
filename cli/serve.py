"""``ttt serve``: the web explorer of a book (its pages and JSON API), until Ctrl-C."""

from __future__ import annotations

import errno
import ipaddress
import math
import socket

import click

from ttt_solve.book.defaults import DEFAULT_MAX_ROWS
from ttt_solve.book.oracle import DEFAULT_SEARCH_SECONDS
from ttt_solve.book.reader import open_book
from ttt_solve.book.urls import hide_password
from ttt_solve.cli.common import CliError, db_option, friendly_errors
from ttt_solve.cli.options import command, count_option, search_seconds_option
from ttt_solve.errors import install_hint

MAX_CONNECTIONS = 1000
"""The most connections open at once by default (nginx's ``worker_connections`` is 512 to
1024); the server lowers it where the process may open fewer files."""

HEAD_SECONDS = 10.0
"""The longest a request's head may take to arrive by default (Apache's ``mod_reqtimeout``
gives 20 to 40 s; a browser sends its head at once)."""

MAX_WORKERS = 16
"""The most worker processes of one kind (``--max-searches``, ``--max-audits``): each is a
process of its own, about 150 MiB."""


def _positive(name: str, value: float) -> None:
    if not math.isfinite(value) or value <= 0:
        raise CliError(f"{name} {value} must be a number > 0")


@command("serve")
@db_option
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. The server has no login: beyond loopback, anyone who can "
    "reach it can use it (0.0.0.0: every interface).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port to listen on (0: a free one, printed).",
)
@search_seconds_option(
    DEFAULT_SEARCH_SECONDS,
    "Time allowed to each live search of a position past the book, and to each agent move.",
)
@count_option(
    "--max-searches",
    2,
    "Live searches and agent moves at once, each in a worker process; more are refused with 429.",
    MAX_WORKERS,
)
@count_option("--max-audits", 1, "Audits at once, each in a worker process.", MAX_WORKERS)
@click.option(
    "--audit-seconds",
    type=float,
    default=120.0,
    show_default=True,
    metavar="S",
    help="Time allowed to one audit before it is stopped.",
)
@click.option(
    "--memory-rows",
    type=click.IntRange(0),
    default=DEFAULT_MAX_ROWS,
    show_default=True,
    metavar="N",
    help="Rows of the book's smaller games read into memory at start-up (about 15 bytes "
    "each), smallest game first: their positions are then answered without reading the "
    "book. 0: none.",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="A name visitors reach the server by, besides its IP addresses and localhost (repeat "
    "it for several): requests whose Host header names another are refused, so that a page "
    "of another site cannot read this one through DNS rebinding. '.example.org': that name "
    "and its subdomains; '*': any (behind a proxy that checks it).",
)
@count_option(
    "--max-connections",
    MAX_CONNECTIONS,
    "Connections open at once; past it the oldest one still sending its request is closed "
    "to make room.",
    1_000_000,
)
@click.option(
    "--head-seconds",
    type=float,
    default=HEAD_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="How long a request's head (its request line and headers) may take to arrive, from "
    "the connection or from the answer before it; a connection that takes longer is closed.",
)
@click.option("--quiet", "-q", is_flag=True, help="No log line per request.")
@friendly_errors
def serve(
    db: str,
    host: str,
    port: int,
    search_seconds: float,
    max_searches: int,
    max_audits: int,
    audit_seconds: float,
    memory_rows: int,
    allowed_hosts: tuple[str, ...],
    max_connections: int,
    head_seconds: float,
    quiet: bool,
) -> None:
    """Serve a web explorer of the book: every game's positions with each move's value, the
    value history of a game, its analysis, audits of agents, and play against an agent. The
    book is opened read-only. Listens on loopback unless --host says otherwise.

    \b
    Examples:
      ttt serve --db ttt.sqlite
      ttt serve --db 4x4.sqlite --port 8080 --search-seconds 5
    """
    _positive("--search-seconds", search_seconds)
    _positive("--audit-seconds", audit_seconds)
    _positive("--head-seconds", head_seconds)
    if not host.strip():
        raise CliError(
            "--host is empty: give an address (127.0.0.1, or 0.0.0.0 for every interface)"
        )
    try:
        from ttt_solve.web.app import create_app
        from ttt_solve.web.explorer import Limits
        from ttt_solve.web.server import run
    except ImportError as error:
        raise CliError(
            f"ttt serve needs the web extra ({error.name} is missing): {install_hint('web')}"
        ) from None
    with open_book(db, read_only=True) as book:  # a book that cannot be read: one line, exit 2
        count = len(book.games())
    if not _is_loopback(host):
        click.echo(
            f"warning: listening on {host}, beyond this machine, and ttt serve has no login: "
            f"anyone who can reach it can explore the book, play, and start audits (within "
            f"the limits of its options)",
            err=True,
        )
    listener = listening_socket(host, port)  # a port in use: one line, exit 2, before serving
    port = listener.getsockname()[1]
    limits = Limits(search_seconds, max_searches, max_audits, audit_seconds, memory_rows)
    names = (host, *allowed_hosts)  # the name it listens on, if a name, is one it answers to
    app = create_app(db, limits, report=click.echo, freeze=True, allowed_hosts=names)
    shown = f"[{host}]" if ":" in host else host
    click.echo(
        f"serving {count} game{'s' if count != 1 else ''} of {hide_password(db)} at "
        f"http://{shown}:{port}/ (Ctrl-C stops)"
    )
    try:
        run(
            app,
            listener,
            access_log=not quiet,
            max_connections=max_connections,
            head_seconds=head_seconds,
        )
    finally:
        listener.close()
    click.echo("stopped")


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket listening on ``host`` and ``port``; :class:`CliError` in one line if it cannot
    be had (a port in use, an address not of this machine, a port that needs root)."""
    where = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
    try:
        family, _, _, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        return socket.create_server(address[:2], family=family)
    except socket.gaierror as error:
        raise CliError(
            f"cannot listen on {where}: {host!r} is not an address ({error.strerror})"
        ) from None
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            reason = "the port is in use (another server?); choose another --port"
        elif error.errno == errno.EADDRNOTAVAIL:
            reason = "no interface of this machine has that address"
        elif error.errno == errno.EACCES:
            reason = "permission denied (ports below 1024 need root); choose another --port"
        else:
            reason = error.strerror or str(error)
        raise CliError(f"cannot listen on {where}: {reason}") from None


def _is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is one of this machine's loopback addresses."""
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        return all(ipaddress.ip_address(address[0]).is_loopback for *_, address in found)
    except (OSError, ValueError):  # not an address: listening on it fails, and says why
        return True
