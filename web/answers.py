"""The one JSON encoder of the server: every JSON answer, of the API and of the pages' ``.json``
twins, is encoded here, as Starlette's ``JSONResponse`` encodes (compact, UTF-8, no NaN).

A position's answer is the object of ``ttt query --json`` (:func:`book.query.analysis_json`),
encoded: :func:`encode_analysis`. The explorer keeps the bytes of the book's answers it gave
last, so a position asked again is neither looked up nor encoded again.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response

from ttt_solve.book.oracle import Analysis
from ttt_solve.book.query import analysis_json

ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
"""Starlette's ``JSONResponse`` encoding, made once (``json.dumps`` with options makes an
encoder per call)."""


def encode(data: Any) -> bytes:
    """``data`` as the server's JSON bytes."""
    return ENCODER.encode(data).encode()


def encode_analysis(analysis: Analysis) -> bytes:
    """A position's answer (``ttt query --json``'s object) as the server's JSON bytes."""
    return encode(analysis_json(analysis))


def json_response(
    data: Any, status_code: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """A JSON answer of ``data``: the bytes and headers of Starlette's ``JSONResponse``."""
    return Response(encode(data), status_code, headers, media_type="application/json")
