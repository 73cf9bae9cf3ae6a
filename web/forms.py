"""What a visitor sends to start an audit (a form or a JSON object) read into a request, an
agent spec checked before anything runs, and the audit a URL names: shared by the pages and
the JSON API."""

from __future__ import annotations

import random
from collections.abc import Iterable

from starlette.requests import Request

from ttt_solve.agents.audit import AuditMode
from ttt_solve.agents.spec import make_agent, parse_spec
from ttt_solve.book.reader import Book
from ttt_solve.web.audits import AuditJob, AuditRequest, checked_spec
from ttt_solve.web.common import audits_of
from ttt_solve.web.explorer import parse_game_name


def _int(text: str | None, what: str, default: int | None = None) -> int | None:
    if text is None or not text.strip():
        return default
    if len(text) > 40:  # Python refuses to read numbers of thousands of digits
        raise ValueError(f"{what} {text[:12]}... ({len(text):,} characters) is out of range")
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not a whole number") from None


def agent_spec(text: str, what: str, book: Book) -> str:
    """A spec the web server may run (:func:`checked_spec`), with the checks of an agent that
    reads the book made too, with the server's book (``perfect:error=2`` is refused here, with
    a 400, rather than accepted and failing in its worker)."""
    checked = checked_spec(text, what)
    spec = parse_spec(checked)
    if spec.needs_book:
        make_agent(spec, random.Random(0), book)
    return checked


def audit_request(fields: dict[str, str], book: Book) -> AuditRequest:
    """An audit request from form or JSON fields (game, agent, mode, sample, games, ...), its
    agent and opponent checked against ``book`` (:func:`agent_spec`)."""
    mode = AuditMode.parse(fields.get("mode") or "positions", "mode")
    return AuditRequest(
        rules=parse_game_name(fields.get("game") or "3x3k3"),
        agent=agent_spec(fields.get("agent") or "", "agent", book),
        mode=mode,
        sample=_int(fields.get("sample"), "sample") if mode == AuditMode.POSITIONS else None,
        games=_int(fields.get("games"), "games", 100) or 0,  # 0 (refused) stays 0
        opponent=agent_spec(fields.get("opponent") or "random", "opponent", book),
        seed=_int(fields.get("seed"), "seed", 0) or 0,
    )


class RepeatedField(ValueError):
    """A field of a form or JSON object given twice."""


def once_each(pairs: Iterable[tuple[str, object]], where: str) -> dict[str, object]:
    """The fields of a form or JSON object, each named once; a field given twice is refused
    (which of the two was meant cannot be known)."""
    fields: dict[str, object] = {}
    for key, value in pairs:
        if key in fields:
            raise RepeatedField(f"{where} {key!r} is given twice; give it once")
        fields[key] = value
    return fields


def job_of(request: Request) -> AuditJob:
    """The audit of the URL's ``job`` (a 404-worthy ``LookupError`` when the server has none)."""
    try:
        job_id = int(request.path_params["job"])
    except ValueError:
        job_id = -1
    job = audits_of(request).get(job_id)
    if job is None:
        raise LookupError(f"no audit {request.path_params['job']!r} on this server")
    return job
