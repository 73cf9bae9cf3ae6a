"""``ttt serve``: the web explorer of a book (its pages and JSON API), until Ctrl-C."""

from __future__ import annotations

import math

import click

from ttt_solve.book.oracle import DEFAULT_SEARCH_SECONDS
from ttt_solve.book.reader import open_book
from ttt_solve.cli.common import CliError, db_option, friendly_errors
from ttt_solve.cli.options import command, count_option, search_seconds_option


def _positive(name: str, value: float) -> None:
    if not math.isfinite(value) or value <= 0:
        raise CliError(f"{name} {value} must be a number > 0")


@command("serve")
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@search_seconds_option(
    DEFAULT_SEARCH_SECONDS, "Time allowed to each live search of a position past the book."
)
@count_option(
    "--max-searches", 2, "Live searches (and agent moves) at once; more are refused with 429."
)
@count_option("--max-audits", 1, "Audits at once.")
@click.option(
    "--audit-seconds",
    type=float,
    default=120.0,
    show_default=True,
    metavar="S",
    help="Time allowed to one audit before it is stopped.",
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
    try:
        import uvicorn

        from ttt_solve.web.app import create_app
        from ttt_solve.web.explorer import Limits
    except ImportError as error:
        raise CliError(
            f"ttt serve needs the web extra ({error.name} is missing): pip install 'ttt-solve[web]'"
        ) from None
    with open_book(db, read_only=True) as book:  # a book that cannot be read: one line, exit 2
        count = len(book.games())
    app = create_app(db, Limits(search_seconds, max_searches, max_audits, audit_seconds))
    shown = f"[{host}]" if ":" in host else host
    click.echo(
        f"serving {count} game{'s' if count != 1 else ''} of {db} at http://{shown}:{port}/ "
        f"(Ctrl-C stops)"
    )
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=not quiet,
    )
    click.echo("stopped")
