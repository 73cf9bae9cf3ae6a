"""ttt serve answers the positions of games it holds in memory with the same bytes."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")
pytest.importorskip("httpx", reason="Starlette's test client needs httpx: pip install httpx")

with warnings.catch_warnings():  # recent Starlette warns that it prefers httpx2 to httpx
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from tests.test_memory import sample  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402
from ttt_solve.web.app import create_app  # noqa: E402
from ttt_solve.web.explorer import Limits  # noqa: E402


def test_the_server_answers_the_same_bytes_from_memory(book_small):
    rules = Rules(4, 4, 3)
    paths = [
        f"/api/games/4x4k3/position?position={position}"
        for position in sample(book_small, rules, 200)
    ]
    bodies = {}
    for memory_rows in (0, 10**7):
        with TestClient(create_app(book_small, Limits(memory_rows=memory_rows))) as client:
            client.app.state.memory.join()
            held = client.app.state.explorer.book.memory
            assert len(held) == (0 if memory_rows == 0 else 3)
            bodies[memory_rows] = [client.get(path).content for path in paths]
    assert bodies[0] == bodies[10**7]
