"""What a visitor sends to start an audit (a form or a JSON object) read into a request, and
the audit a URL names: shared by the pages and the JSON API."""

from __future__ import annotations

from starlette.requests import Request

from ttt_solve.web.audits import AuditJob, AuditRequest
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


def audit_request(fields: dict[str, str]) -> AuditRequest:
    """An audit request from form or JSON fields (game, agent, mode, sample, games, ...)."""
    mode = fields.get("mode") or "positions"
    return AuditRequest(
        rules=parse_game_name(fields.get("game") or "3x3k3"),
        agent=fields.get("agent") or "",
        mode=mode,
        sample=_int(fields.get("sample"), "sample") if mode == "positions" else None,
        games=_int(fields.get("games"), "games", 100) or 0,  # 0 (refused) stays 0
        opponent=fields.get("opponent") or "random",
        seed=_int(fields.get("seed"), "seed", 0) or 0,
    )


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
