"""Audits run in the background of the server, a few at a time, each within a time limit.

A job runs :func:`~ttt_solve.agents.grading.evaluate` (the audit of ``ttt audit`` and
``ttt.audit``) in a worker process of the server's audit pool (:mod:`web.workers`; one job,
one worker, one core, at a lower priority than the server), which reports its progress as it
goes. A job past its time is stopped by ending its worker; a fresh one takes its place.

What a visitor may ask is checked before a job is accepted: the agent's spec parses, names an
agent of the project (never an engine or a plug-in) with parameters within
:data:`WEB_AGENT_LIMITS`, and the figures are in range.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ttt_solve.agents import audit, review
from ttt_solve.agents.grading import evaluate
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.spec import AgentSpecError, make_agent, parse_spec
from ttt_solve.book.reader import Book
from ttt_solve.errors import TttError
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.vocabulary import Word
from ttt_solve.web.workers import BusyError, WorkerPool, WorkTimeout

KEPT_JOBS = 50
"""Finished audits kept for their pages; the oldest are forgotten first."""

MAX_SAMPLE = 1_000_000
MAX_GAMES = 10_000
MAX_SEED = 2**64 - 1

MAX_SPEC = 200
"""The longest agent spec the server reads (a spec of the project's agents needs far less)."""

WEB_AGENT_LIMITS: dict[tuple[str, str], int] = {
    ("mcts", "iterations"): 100_000,
    ("montecarlo", "playouts"): 10_000,
    ("minimax", "depth"): 9,
    ("alphabeta", "depth"): 16,
}
"""The largest value of an agent's parameter that the server takes from a visitor (the command
line takes any). A move and an audit are also bounded in time (``--search-seconds``,
``--audit-seconds``): these keep a visitor from asking for work no limit would let finish."""


def checked_spec(text: str, what: str = "agent") -> str:
    """A spec the web server may run: it parses, names an agent of the project (an external
    engine or plug-in would run code of the visitor's choosing on the server), within
    :data:`WEB_AGENT_LIMITS` and the agent's own checks."""
    if len(text) > MAX_SPEC:
        raise AgentSpecError(
            f"the {what} spec is {len(text):,} characters long; this server reads at most "
            f"{MAX_SPEC}"
        )
    spec = parse_spec(text)
    if spec.external:
        raise AgentSpecError(
            f"{what} {text!r} comes from outside the project; the web server runs only its "
            f"own agents (use ttt audit on the command line for engines and plug-ins)"
        )
    for (name, key), most in WEB_AGENT_LIMITS.items():
        if spec.name == name and spec.params[key] > most:
            raise AgentSpecError(
                f"{what} {text!r}: {key}={spec.params[key]:,} is more than this server allows "
                f"({most:,}); use ttt audit or ttt play on the command line for more"
            )
    if spec.name != "perfect":  # the agent's own checks (iterations >= 1, ...), at once
        make_agent(spec._replace(params={**spec.params, "book": False}), random.Random(0))
    return spec.text


class JobStatus(Word):
    """Where an audit job stands: running, done (its report is set) or failed (its error)."""

    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True)
class AuditRequest:
    """What to audit: an agent on a game, over positions (all or a sample) or in games."""

    rules: Rules
    agent: str
    mode: audit.AuditMode = audit.AuditMode.POSITIONS
    sample: int | None = None  # positions mode: None = every position
    games: int = 100  # games mode
    opponent: str = "random"
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", audit.AuditMode.parse(self.mode, "mode"))
        if self.sample is not None and not 1 <= self.sample <= MAX_SAMPLE:
            raise ValueError(f"sample {self.sample} is not between 1 and {MAX_SAMPLE:,}")
        if not 1 <= self.games <= MAX_GAMES:
            raise ValueError(f"games {self.games} is not between 1 and {MAX_GAMES:,}")
        if not 0 <= self.seed <= MAX_SEED:
            raise ValueError(f"seed {self.seed} is not between 0 and {MAX_SEED:,}")
        object.__setattr__(self, "agent", checked_spec(self.agent))
        object.__setattr__(self, "opponent", checked_spec(self.opponent, "opponent"))

    @property
    def description(self) -> str:
        """What the audit asks, in the words of ``ttt audit``'s mode line."""
        games = self.mode == audit.AuditMode.GAMES
        return audit.asked_sentence(
            self.mode,
            sample=self.sample,
            games=self.games if games else None,
            opponent=self.opponent if games else None,
        )


COSTLY_KEPT = 5_000
"""The costly moves an audit keeps for its page (250 pages of them), costliest first;
the page says how many there were in all. An audit of every position of 4x4 k=4 by a weak
agent has hundreds of thousands: kept whole, fifty audits would hold a GiB."""


class AuditDone(NamedTuple):
    """A finished audit as a worker hands it back: the report (without its graded moves, which
    an audit of a large game has by the million) and what the pages list of them."""

    report: audit.AuditReport
    costly: list[review.CostlyRow]  # the costliest COSTLY_KEPT, one row per position and move
    costly_count: int  # the rows in all
    blunders: list[int] | None  # games mode: the agent's blunders in each game


def run_audit(
    truth: audit.Truth, request: AuditRequest, progress: Callable[[int, int], None]
) -> AuditDone:
    """The audit ``request`` asks for, graded against ``truth`` (in a worker)."""
    games = request.mode == audit.AuditMode.GAMES
    report = evaluate(
        AgentMaker(request.agent),  # built with the truth's book
        truth,
        sample=request.sample,
        games=request.games if games else None,
        opponent=AgentMaker(request.opponent) if games else None,
        seed=request.seed,
        jobs=1,
        worst_moves=10,
        progress=progress,
    )
    costly, costly_count = review.costly_rows(report.records, weighted=not games, limit=COSTLY_KEPT)
    blunders = None if report.games is None else review.blunders_per_game(truth, report.games)
    return AuditDone(dataclasses.replace(report, records=()), costly, costly_count, blunders)


@dataclass
class AuditJob:
    """One audit and where it stands; ``report`` is set when it is done."""

    id: int
    request: AuditRequest
    started: float = field(default_factory=time.monotonic)
    done: int = 0
    total: int = 0
    status: JobStatus = JobStatus.RUNNING
    error: str | None = None
    report: audit.AuditReport | None = None
    costly: list[review.CostlyRow] = field(default_factory=list)
    costly_count: int = 0
    blunders: list[int] | None = None
    seconds: float = 0.0

    @property
    def summary(self) -> audit.Summary | None:
        return None if self.report is None else self.report.summary

    @property
    def results(self) -> tuple[audit.GameResult, ...] | None:
        """The games (games mode), once done."""
        return None if self.report is None else self.report.games

    def progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total


class AuditRunner:
    """Starts audits in the workers of ``workers`` (as many at once as it has), each within
    ``seconds``."""

    def __init__(self, book: Book, workers: WorkerPool, *, seconds: float) -> None:
        self.book = book
        self.workers = workers
        self.max_running = workers.size
        self.seconds = seconds
        self._lock = threading.Lock()
        self._jobs: OrderedDict[int, AuditJob] = OrderedDict()
        self._ids = itertools.count(1)

    def start(self, request: AuditRequest) -> AuditJob:
        """A new job, running; :class:`BusyError` when ``max_running`` already run."""
        self.book.game(request.rules)  # a game not in the book fails here, at once
        with self._lock:
            running = sum(job.status == JobStatus.RUNNING for job in self._jobs.values())
            if running >= self.max_running:
                raise BusyError(
                    f"{running} audit{'s are' if running > 1 else ' is'} running, the most this "
                    f"server runs at once; try again when it is done"
                )
            task = self.workers.submit("audit", request, what="the audit")
            job = AuditJob(next(self._ids), request)
            self._jobs[job.id] = job
            while len(self._jobs) > KEPT_JOBS:
                oldest = next(iter(self._jobs))
                if self._jobs[oldest].status == JobStatus.RUNNING:
                    break
                del self._jobs[oldest]
        threading.Thread(
            target=self._finish, args=(job, task), daemon=True, name=f"audit-{job.id}"
        ).start()
        return job

    def recent(self) -> list[AuditJob]:
        """The jobs kept, newest first."""
        with self._lock:
            return list(reversed(self._jobs.values()))

    def get(self, job_id: int) -> AuditJob | None:
        with self._lock:
            return self._jobs.get(job_id)

    def _finish(self, job: AuditJob, task: Any) -> None:
        try:
            finished: AuditDone = task.result(self.seconds, grace=0, progress=job.progress)
            job.report, job.costly, job.costly_count, job.blunders = finished
            job.status = JobStatus.DONE
        except WorkTimeout:
            job.error = (
                f"the audit ran past this server's limit of {self.seconds:g} s after "
                f"{job.done:,} of {job.total:,} tasks and was stopped; audit a sample, or run "
                f"ttt audit"
            )
            job.status = JobStatus.FAILED
        except (TttError, ValueError) as error:
            job.error = " ".join(str(error).split())
            job.status = JobStatus.FAILED
        except Exception as error:  # noqa: BLE001 - a bug: shown on the job, not lost in a thread
            job.error = f"the audit failed unexpectedly: {type(error).__name__}: {error}"
            job.status = JobStatus.FAILED
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
        "games": request.games if request.mode == audit.AuditMode.GAMES else None,
        "opponent": request.opponent if request.mode == audit.AuditMode.GAMES else None,
        "seed": request.seed,
        "description": request.description,
        "done": job.done,
        "total": job.total,
        "seconds": round(job.seconds or time.monotonic() - job.started, 3),
        "error": job.error,
    }
    report = job.report
    if report is None:
        return out
    result = report.to_dict()
    result["worst"] = [
        {**costly.to_dict(), **({"url": links(costly.graded)} if links else {})}
        for costly in report.worst
    ]
    out["result"] = result
    return out
