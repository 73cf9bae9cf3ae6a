"""Helpers of the web tests: the application served in-process with its workers ready,
``ttt serve`` started as a real process on a free loopback port, and a book to serve."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

with warnings.catch_warnings():  # recent Starlette warns that it prefers httpx2 to httpx
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from tests.pg_support import solve_into  # noqa: E402
from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.book.writer import write_game  # noqa: E402
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402

DRAWN = "<svg></svg>"


class Drawn(str):
    """A picture the template asks for: any board of a page of boards is one too."""

    def __getitem__(self, key: Any) -> Drawn:  # type: ignore[override]
        return Drawn(DRAWN)


class Pictures(dict):
    """Whatever picture a template reads (the pictures are drawings, never figures: what a
    template reads of the page's figures it must read from the data)."""

    def __missing__(self, key: str) -> Drawn:
        return Drawn(DRAWN)


def render_from_json(client: TestClient, template: str, url: str) -> str:
    """``template`` rendered from the decoded ``.json`` twin of ``url`` and nothing else."""
    from ttt_solve.web.links import json_twin

    twin = client.get(json_twin(url))
    assert twin.status_code == 200, twin.text
    return render(client, template, twin.json())


def render(client: TestClient, template: str, data: Any) -> str:
    """``template`` rendered from ``data``, with what every page reads and the pictures."""
    from jinja2 import StrictUndefined

    from ttt_solve.web.pages import EVERY_PAGE

    templates = client.app.state.templates
    assert templates.undefined is StrictUndefined  # a key a template lacks is an error
    return templates.get_template(template).render(
        **EVERY_PAGE, data=data, pictures=Pictures(), json_url="/twin.json"
    )


def visible(html: str) -> list[str]:
    """The words of a page outside its pictures, as a visitor reads them."""
    html = re.sub(r"<svg.*?</svg>", "", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html).split()


TTT = os.path.join(os.path.dirname(sys.executable), "ttt")


def small_book(db: str) -> str:
    """Make ``db`` a book of 3x3 k=3 and 4x4 k=3 solved, and 3x4 k=3 as an opening book of
    depth 2 (positions past ply 2 are searched live); return it."""
    for rules in (Rules(3, 3, 3), Rules(4, 4, 3)):
        solve_into(db, rules)
    with open_book(db) as book:
        plies = (table for table in ExhaustiveSolver(Rules(3, 4, 3)).solve() if table.ply <= 2)
        write_game(book, Rules(3, 4, 3), plies, method="alphabeta", book_depth=2)
    return db


@contextlib.contextmanager
def served(app) -> Iterator[TestClient]:  # noqa: ANN001 - a Starlette app
    """A test client of ``app`` once its worker processes are ready."""
    with TestClient(app) as client:
        for pool in client.app.state.workers:
            assert pool.wait_ready(120), "the worker processes did not start"
        yield client


class Serving:
    """``ttt serve`` in a process of its own, on a port the system chose; :attr:`url` is its
    address once it listens, :attr:`lines` what it has printed (read by a thread of its own)."""

    def __init__(self, db: str, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [TTT, "serve", "--db", db, "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self.lines: list[str] = []
        self._printed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        first = self.wait_for("")
        found = re.search(r"at (http://\S+/) \(Ctrl-C stops\)", first)
        assert found, f"ttt serve said: {self.output}"
        self.url = found[1].rstrip("/")

    def _read(self) -> None:
        for line in self.process.stdout:
            with self._printed:
                self.lines.append(line)
                self._printed.notify_all()
        with self._printed:
            self.lines.append("")  # the end
            self._printed.notify_all()

    @property
    def output(self) -> str:
        with self._printed:
            return "".join(self.lines)

    def wait_for(self, words: str, seconds: float = 120) -> str:
        """The first line printed (now or before) that holds ``words``."""
        deadline = time.monotonic() + seconds
        with self._printed:
            while True:
                for line in self.lines:
                    if words in line and line:
                        return line
                if (self.lines and self.lines[-1] == "") or time.monotonic() > deadline:
                    printed = "".join(self.lines)
                    raise AssertionError(f"ttt serve never said {words!r}: {printed}")
                self._printed.wait(deadline - time.monotonic())

    def signal(self, number: int, seconds: float = 30) -> float:
        """Send a signal, wait for the server to end; the seconds it took."""
        sent = time.monotonic()
        self.process.send_signal(number)
        self.process.wait(seconds)
        took = time.monotonic() - sent
        self._reader.join(10)
        return took

    def stop(self) -> None:
        """Stop it as Ctrl-C does (or kill it, if that fails); :attr:`lines` then holds all
        it printed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join(10)

    def __enter__(self) -> Serving:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
