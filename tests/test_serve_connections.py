"""What a connection may hold of a real ``ttt serve``, tried over loopback: half-open
connections closed after the head timeout and never shutting out a visitor, the connection
cap and its one log line, a body sent with its head, the framing and sniffing headers on every
answer, and the Host check. See docs/web.md, "What the server takes from a visitor"."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from tests.web_support import Serving, small_book  # noqa: E402
from ttt_solve.web.server import SAFETY_HEADERS  # noqa: E402

CAP = 40
"""The connection cap of the server under test (``--max-connections``)."""

HEAD_SECONDS = 4.0
"""The time it gives a request's head (``--head-seconds``; 10 s unless told)."""


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> str:
    return small_book(str(tmp_path_factory.mktemp("connections") / "book.sqlite"))


@pytest.fixture(scope="module")
def server(book: str):
    options = ["--memory-rows", "0", "--max-connections", str(CAP)]
    with Serving(book, "--quiet", *options, "--head-seconds", str(HEAD_SECONDS)) as serving:
        serving.wait_for("worker processes ready")
        yield serving


def address(server: Serving) -> tuple[str, int]:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def named(server: Serving) -> str:
    """The server's address as a ``Host`` header names it."""
    host, port = address(server)
    return f"{host}:{port}"


def exchange(server: Serving, raw: bytes, timeout: float = 30) -> bytes:
    """What the server answers ``raw`` with, until it closes or a whole answer has come."""
    with socket.create_connection(address(server), timeout=timeout) as connection:
        connection.sendall(raw)
        return read_answer(connection)


def read_answer(connection: socket.socket) -> bytes:
    """One answer (its head and the body its Content-Length gives), or what came before the
    server closed the connection."""
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while b"\r\n\r\n" not in data:
            part = connection.recv(65536)
            if not part:
                return data
            data += part
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ),
            None,
        )
        while length is not None and len(body) < length:
            part = connection.recv(65536)
            if not part:
                break
            body += part
        return head + b"\r\n\r\n" + body
    return data


def get(server: Serving, path: str, host: str | None = None, extra: str = "") -> bytes:
    name = host or named(server)
    return exchange(
        server, f"GET {path} HTTP/1.1\r\nHost: {name}\r\n{extra}Connection: close\r\n\r\n".encode()
    )


def headers_of(answer: bytes) -> dict[str, str]:
    head = answer.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")[1:]
    return {name.lower(): value.strip() for name, _, value in (h.partition(":") for h in head)}


def sockets_of(pid: int) -> int:
    """How many sockets the process holds open."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
    return count


def closed_by_server(connection: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing ``connection`` within ``seconds``; ``None`` if it
    is still open then."""
    connection.settimeout(seconds)
    data = b""
    try:
        while part := connection.recv(65536):
            data += part
    except ConnectionResetError:
        return data
    except TimeoutError:
        return None
    return data


def test_half_open_connections_never_shut_out_a_visitor_and_end_after_the_head_timeout(server):
    before = sockets_of(server.process.pid)
    half_open = []
    try:
        for i in range(5 * CAP):  # five times the cap: most are closed to make room
            connection = socket.create_connection(address(server), timeout=10)
            connection.sendall(b"GET /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * i)
            half_open.append(connection)
            if i % CAP == CAP - 1:  # visitors come while they are held
                answer = get(server, "/api/games")
                assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
                assert len(json.loads(answer.partition(b"\r\n\r\n")[2])) == 3
        # the server holds at most its cap of connections
        assert sockets_of(server.process.pid) <= before + CAP
        page = get(server, "/game/3x3k3?moves=b2")
        assert page.startswith(b"HTTP/1.1 200")
        # the newest half-open connections were kept; each is closed after the head timeout,
        # saying why
        newest = half_open[-CAP // 2 :]
        assert closed_by_server(newest[0], 0.1) is None  # still open
        said = [closed_by_server(c, HEAD_SECONDS + 10) for c in newest]
        assert all(s is not None and s.startswith(b"HTTP/1.1 408") for s in said), said[:3]
        assert b"took more than" in said[0]
        # the oldest were closed to make room, without a word
        assert all(closed_by_server(c, 5) == b"" for c in half_open[: CAP // 2])
    finally:
        for connection in half_open:
            connection.close()
    lines = [line for line in server.lines if "the most this server keeps" in line]
    assert len(lines) == 1, server.output[-2000:]  # said once


def test_a_connection_that_sends_nothing_is_closed_after_the_head_timeout(server):
    with socket.create_connection(address(server), timeout=10) as connection:
        assert closed_by_server(connection, HEAD_SECONDS + 10) == b""


def test_a_kept_alive_connection_that_starts_a_head_and_stalls_is_closed(server):
    host = named(server)
    with socket.create_connection(address(server), timeout=10) as connection:
        connection.sendall(f"GET /api/games HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        assert read_answer(connection).startswith(b"HTTP/1.1 200")
        connection.sendall(b"GET /api/games HTTP/1.1\r\nHost: ")  # and no more
        said = closed_by_server(connection, HEAD_SECONDS + 10)
        assert said is not None and said.startswith(b"HTTP/1.1 408")


def test_with_every_connection_being_answered_a_new_one_is_refused(book):
    with Serving(book, "--quiet", "--memory-rows", "0", "--max-connections", "3") as serving:
        serving.wait_for("worker processes ready")
        host = named(serving)
        busy = []
        try:
            for _ in range(3):  # heads complete, bodies that never come: being answered
                connection = socket.create_connection(address(serving), timeout=10)
                connection.sendall(
                    f"POST /api/audits HTTP/1.1\r\nHost: {host}\r\n"
                    f"Content-Length: 100\r\n\r\n".encode()
                )
                busy.append(connection)
            time.sleep(0.5)  # the server reads them
            answer = get(serving, "/api/games")
            assert answer.startswith(b"HTTP/1.1 503"), answer[:200]
            assert headers_of(answer)["x-frame-options"] == "DENY"
        finally:
            for connection in busy:
                connection.close()
        # once they are gone, visitors are answered again
        deadline = time.monotonic() + 10
        while not get(serving, "/api/games").startswith(b"HTTP/1.1 200"):
            assert time.monotonic() < deadline, "still refused"
            time.sleep(0.2)
    assert serving.output.count("the most this server keeps") == 1


def test_a_body_over_the_limit_sent_with_its_head_is_413_not_431(server):
    host = named(server)
    for size in (70_000, 200_000):
        head = (
            f"POST /api/audits HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {size}\r\n\r\n"
        ).encode()
        answer = exchange(server, head + b" " * size)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    # a head that is itself too long is still 431
    answer = exchange(server, b"GET /api/games HTTP/1.1\r\nX-A: " + b"a" * 70_000)
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]


def test_every_answer_forbids_framing_and_sniffing(server):
    answers = [
        get(server, "/"),
        get(server, "/game/3x3k3?moves=b2"),
        get(server, "/api/games/3x3k3/position"),  # answered before routing
        get(server, "/game/3x3k3.json"),
        get(server, "/static/style.css"),
        get(server, "/nowhere"),
        get(server, "/uwapi/"),
        exchange(server, b"GET /api/games HTTP/1.1\r\nX-A: " + b"a" * 70_000),  # 431
        exchange(server, b"NOT HTTP AT ALL\r\n\r\n"),  # uvicorn's own 400
    ]
    for answer in answers:
        headers = headers_of(answer)
        for name, value in SAFETY_HEADERS:
            assert headers.get(name) == value, (answer[:80], headers)


def test_a_rebound_name_is_refused_and_an_allowed_one_served(book):
    form = b"game=3x3k3&agent=random&mode=positions&sample=5&seed=0"

    def post_as(serving: Serving, name: str) -> bytes:
        return exchange(
            serving,
            f"POST /audits HTTP/1.1\r\nHost: {name}\r\nOrigin: http://{name}\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {len(form)}\r\nConnection: close\r\n\r\n".encode()
            + form,
        )

    with Serving(book, "--quiet", "--memory-rows", "0") as serving:
        serving.wait_for("worker processes ready")
        refused = post_as(serving, "rebind.evil.example")
        assert refused.startswith(b"HTTP/1.1 400") and b"--allowed-host" in refused
        page = get(serving, "/", host=f"rebind.evil.example:{address(serving)[1]}")
        assert page.startswith(b"HTTP/1.1 400") and b"rebind.evil.example" in page
        assert get(serving, "/", host="localhost").startswith(b"HTTP/1.1 200")
    with Serving(book, "--quiet", "--allowed-host", "books.example") as serving:
        serving.wait_for("worker processes ready")
        assert get(serving, "/", host="books.example").startswith(b"HTTP/1.1 200")
        assert get(serving, "/", host="rebind.evil.example").startswith(b"HTTP/1.1 400")


def test_a_head_sent_a_byte_at_a_time_is_cut_at_its_deadline(server):
    """The head timeout is a deadline: bytes trickling in do not extend it (uvicorn's
    keep-alive timer restarts at each one)."""
    with socket.create_connection(address(server), timeout=10) as connection:
        said = None
        with contextlib.suppress(OSError):  # the server may close it between two bytes
            for byte in b"GET /api/games HTTP/1.1\r\nX-Slow: " + b"a" * 100:
                connection.sendall(bytes([byte]))
                said = closed_by_server(connection, 0.5)
                if said is not None:
                    break
        if said is None:
            said = closed_by_server(connection, 10)
        # cut while it trickled (65 s of bytes), or the connection would be open still
        assert said is not None and said.startswith(b"HTTP/1.1 408"), said
