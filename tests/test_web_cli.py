"""``ttt serve`` as a command: it prints its URL, answers, stops cleanly on Ctrl-C, and a book
that cannot be opened is one line and exit status 2."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from click.testing import CliRunner  # noqa: E402

from ttt_solve.cli.main import ttt  # noqa: E402

TTT = os.path.join(os.path.dirname(sys.executable), "ttt")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_serve_prints_the_url_answers_and_stops_on_ctrl_c(book_3x3):
    port = free_port()
    server = subprocess.Popen(
        [TTT, "serve", "--db", book_3x3, "--port", str(port), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        first = server.stdout.readline()
        assert f"at http://127.0.0.1:{port}/" in first and "1 game" in first
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/games", timeout=2) as r:
                    games = json.load(r)
                break
            except OSError:
                assert time.monotonic() < deadline, "ttt serve did not answer"
                time.sleep(0.1)
        assert [g["name"] for g in games] == ["3x3k3"]
        server.send_signal(signal.SIGINT)
        out, _ = server.communicate(timeout=20)
    finally:
        if server.poll() is None:
            server.kill()
    assert server.returncode == 0
    assert "stopped" in out and "Traceback" not in out


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--db", "no/such/book.sqlite"], "no book at"),
        (["--search-seconds", "0"], "--search-seconds"),
        (["--audit-seconds", "nan"], "--audit-seconds"),
        (["--head-seconds", "-1"], "--head-seconds"),
        (["--max-searches", "0"], "0"),
    ],
)
def test_serve_refuses_bad_options_in_one_line(args, words, book_3x3):
    if "--db" not in args:
        args = [*args, "--db", book_3x3]
    result = CliRunner().invoke(ttt, ["serve", *args])
    assert result.exit_code == 2
    assert words in result.output
    assert "Traceback" not in result.output


def test_serve_refuses_a_file_that_is_not_a_book(tmp_path):
    bad = tmp_path / "notes.sqlite"
    bad.write_text("not a database")
    result = CliRunner().invoke(ttt, ["serve", "--db", str(bad)])
    assert result.exit_code == 2 and "cannot read a book" in result.output


def test_serve_logs_a_line_a_request_unless_quiet(book_3x3):
    """A line a request, as uvicorn prints them (the method, path, protocol and status);
    with --quiet, none."""
    from tests.web_support import Serving

    for quiet in (False, True):
        with Serving(book_3x3, *(["--quiet"] if quiet else [])) as serving:
            for path, status in (("/api/games", 200), ("/game/9x9k9?moves=b2", 404)):
                try:
                    urllib.request.urlopen(serving.url + path, timeout=30).read()
                except urllib.error.HTTPError as error:
                    assert error.code == status
            urllib.request.urlopen(serving.url + "/api/games/3x3k3", timeout=30).read()
            if not quiet:  # the last request's line says the ones before it were written
                serving.wait_for('"GET /api/games/3x3k3 HTTP/1.1" 200', seconds=30)
        lines = serving.output.splitlines()
        logged = [line for line in lines if '"GET /' in line]
        if quiet:
            assert logged == [], lines
        else:
            assert len(logged) == 3, lines
            assert '"GET /api/games HTTP/1.1" 200' in logged[0]
            assert '"GET /game/9x9k9?moves=b2 HTTP/1.1" 404' in logged[1]
            assert all(line.startswith("INFO:") and "127.0.0.1:" in line for line in logged)
        assert "Uvicorn running" not in serving.output  # uvicorn's own news stays silent
