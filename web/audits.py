"""Audits run in the background of the server, a few at a time, each within a time limit.

A job runs :func:`~ttt_solve.agents.audit.audit_positions` or
:func:`~ttt_solve.agents.audit.audit_games` (the functions behind ``ttt audit``) in a thread of
its own, in this process (one job, one core), and reports its progress through the audit's
``progress`` callback, which also stops a job that runs past its time.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ttt_solve.agents import audit
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.spec import AgentSpecError, parse_spec
from ttt_solve.book.reader import Book
from ttt_solve.errors import TttError
from ttt_solve.solver.rules import Rules
from ttt_solve.web.explorer import BusyError

KEPT_JOBS = 50
"""Finished audits kept for their pages; the oldest are forgotten first."""

MAX_SAMPLE = 1_000_000
MAX_GAMES = 10_000


class AuditTimeout(TttError):
    """An audit ran past the server's time limit for one audit."""


def checked_spec(text: str, what: str = "agent") -> str:
    """A spec the web server may run: it parses, and it names an agent of the project (an
    external engine or plug-in would run code of the visitor's choosing on the server)."""
    spec = parse_spec(text)
    if spec.external:
        raise AgentSpecError(
            f"{what} {text!r} comes from outside the project; the web server runs only its "
            f"own agents (use ttt audit on the command line for engines and plug-ins)"
        )
    return spec.text


@dataclass(frozen=True)
class AuditRequest:
    """What to audit: an agent on a game, over positions (all or a sample) or in games."""

    rules: Rules
    agent: str
    mode: str = "positions"  # "positions" or "games"
    sample: int | None = None  # positions mode: None = every position
    games: int = 100  # games mode
    opponent: str = "random"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.mode not in ("positions", "games"):
            raise ValueError(f"mode {self.mode!r} is not 'positions' or 'games'")
        if self.sample is not None and not 1 <= self.sample <= MAX_SAMPLE:
            raise ValueError(f"sample {self.sample} is not between 1 and {MAX_SAMPLE:,}")
        if not 1 <= self.games <= MAX_GAMES:
            raise ValueError(f"games {self.games} is not between 1 and {MAX_GAMES:,}")
        object.__setattr__(self, "agent", checked_spec(self.agent))
        object.__setattr__(self, "opponent", checked_spec(self.opponent, "opponent"))


@dataclass
class AuditJob:
    """One audit and where it stands; ``result`` is set when it is done."""

    id: int
    request: AuditRequest
    started: float = field(default_factory=time.monotonic)
    done: int = 0
    total: int = 0
    status: str = "running"  # "running", "done" or "failed"
    error: str | None = None
    truth: audit.Truth | None = None
    summary: audit.Summary | None = None
    worst: list[audit.Graded] = field(default_factory=list)
    results: list[audit.GameResult] | None = None
    seconds: float = 0.0


class AuditRunner:
    """Starts audits in threads, at most ``max_running`` at once, each within ``seconds``."""

    def __init__(self, book: Book, db: str, *, max_running: int, seconds: float) -> None:
        self.book = book
        self.db = db
        self.max_running = max_running
        self.seconds = seconds
        self._lock = threading.Lock()
        self._jobs: OrderedDict[int, AuditJob] = OrderedDict()
        self._ids = itertools.count(1)
        self._truths: dict[Rules, audit.Truth] = {}

    def truth(self, rules: Rules) -> audit.Truth:
        """The book's values of a game, read once and kept for later audits of it."""
        with self._lock:
            if rules not in self._truths:
                self._truths[rules] = audit.Truth(self.book, rules)
            return self._truths[rules]

    def start(self, request: AuditRequest) -> AuditJob:
        """A new job, running; :class:`BusyError` when ``max_running`` already run."""
        self.book.game(request.rules)  # a game not in the book fails here, at once
        with self._lock:
            running = sum(job.status == "running" for job in self._jobs.values())
            if running >= self.max_running:
                raise BusyError(
                    f"{running} audit{'s are' if running > 1 else ' is'} running, the most this "
                    f"server runs at once; try again when it is done"
                )
            job = AuditJob(next(self._ids), request)
            self._jobs[job.id] = job
            while len(self._jobs) > KEPT_JOBS:
                oldest = next(iter(self._jobs))
                if self._jobs[oldest].status == "running":
                    break
                del self._jobs[oldest]
        threading.Thread(target=self._run, args=(job,), daemon=True, name=f"audit-{job.id}").start()
        return job

    def recent(self) -> list[AuditJob]:
        """The jobs kept, newest first."""
        with self._lock:
            return list(reversed(self._jobs.values()))

    def get(self, job_id: int) -> AuditJob | None:
        with self._lock:
            return self._jobs.get(job_id)

    def _run(self, job: AuditJob) -> None:
        request = job.request
        deadline = job.started + self.seconds

        def progress(done: int, total: int) -> None:
            job.done, job.total = done, total
            if time.monotonic() > deadline:
                raise AuditTimeout(
                    f"the audit ran past this server's limit of {self.seconds:g} s after "
                    f"{done:,} of {total:,} tasks; audit a sample, or run ttt audit"
                )

        try:
            # read in the job's thread: a large game takes seconds, the server goes on meanwhile
            truth = job.truth = self.truth(request.rules)
            maker = AgentMaker(request.agent, self.db)
            if request.mode == "positions":
                records, ungraded = audit.audit_positions(
                    maker,
                    truth,
                    sample=request.sample,
                    seed=request.seed,
                    jobs=1,
                    progress=progress,
                )
            else:
                records, ungraded, job.results = audit.audit_games(
                    maker,
                    AgentMaker(request.opponent, self.db),
                    truth,
                    games=request.games,
                    seed=request.seed,
                    jobs=1,
                    progress=progress,
                )
            job.summary = audit.summarize(records, ungraded)
            job.worst = audit.worst(records, 10)
            job.status = "done"
        except (TttError, ValueError) as error:
            job.error = " ".join(str(error).split())
            job.status = "failed"
        except Exception as error:  # noqa: BLE001 - a bug: shown on the job, not lost in a thread
            job.error = f"the audit failed unexpectedly: {type(error).__name__}: {error}"
            job.status = "failed"
        finally:
            job.seconds = time.monotonic() - job.started


def job_json(job: AuditJob, links: Any = None) -> dict[str, Any]:
    """A job as plain data: request, progress, and once done the figures (``links(record)``
    gives each worst move's explorer URL, if given)."""
    request = job.request
    rules = request.rules
    out: dict[str, Any] = {
        "id": job.id,
        "status": job.status,
        "game": rules.as_dict(),
        "agent": request.agent,
        "mode": request.mode,
        "sample": request.sample,
        "games": request.games if request.mode == "games" else None,
        "opponent": request.opponent if request.mode == "games" else None,
        "seed": request.seed,
        "done": job.done,
        "total": job.total,
        "seconds": round(job.seconds or time.monotonic() - job.started, 3),
        "error": job.error,
    }
    summary, truth = job.summary, job.truth
    if summary is None or truth is None:
        return out
    out["result"] = {
        **audit.summary_json(summary),
        "worst": [
            {**audit.graded_json(truth, r), **({"url": links(r)} if links else {})}
            for r in job.worst
        ],
    }
    if job.results is not None:
        out["result"]["games"] = [audit.game_result_json(rules, r) for r in job.results]
    return out
