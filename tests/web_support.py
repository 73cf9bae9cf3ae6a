"""Helpers of the web tests: the application served in-process with its workers ready, and
``ttt serve`` started as a real process on a free loopback port."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator

with warnings.catch_warnings():  # recent Starlette warns that it prefers httpx2 to httpx
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

TTT = os.path.join(os.path.dirname(sys.executable), "ttt")


@contextlib.contextmanager
def served(app) -> Iterator[TestClient]:  # noqa: ANN001 - a Starlette app
    """A test client of ``app`` once its worker processes are ready."""
    with TestClient(app) as client:
        for pool in client.app.state.workers:
            assert pool.wait_ready(120), "the worker processes did not start"
        yield client


class Serving:
    """``ttt serve`` in a process of its own, on a port the system chose; :attr:`url` is its
    address once it listens, :attr:`lines` what it printed."""

    def __init__(self, db: str, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [TTT, "serve", "--db", db, "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self.lines: list[str] = []
        first = self.readline()
        found = re.search(r"at (http://\S+/) \(Ctrl-C stops\)", first)
        assert found, f"ttt serve said: {first!r} {self.process.stdout.read() if not found else ''}"
        self.url = found[1].rstrip("/")

    def readline(self) -> str:
        line = self.process.stdout.readline()
        self.lines.append(line)
        return line

    def wait_for(self, words: str, seconds: float = 120) -> str:
        """The first line printed from now on that holds ``words``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            line = self.readline()
            if words in line:
                return line
            if not line and self.process.poll() is not None:
                break
        raise AssertionError(f"ttt serve never said {words!r}: {''.join(self.lines)}")

    def stop(self) -> None:
        """Stop it as Ctrl-C does (or kill it, if that fails); :attr:`lines` then holds all
        it printed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            rest, _ = self.process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            rest, _ = self.process.communicate()
        self.lines.extend((rest or "").splitlines(keepends=True))

    def __enter__(self) -> Serving:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
