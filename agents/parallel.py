"""Running agent work on both cores, with the same results as one core.

Work is a list of chunks of small picklable tasks. :func:`run_chunks` starts serially in this
process; if work remains after ``probe_seconds`` and more than one job is allowed, the rest
goes to a process pool whose workers build their own agents (and open the book themselves).
Every task carries its own seed, so who runs it does not change the result.
"""

from __future__ import annotations

import functools
import multiprocessing
import signal
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack
from typing import Any, NamedTuple

from ttt_solve.agents.base import Agent
from ttt_solve.agents.engine import EngineFailure
from ttt_solve.agents.match import play_game
from ttt_solve.agents.seeding import SeededOnUse, reseed
from ttt_solve.agents.spec import make_agent, parse_spec
from ttt_solve.processes import end_with_parent, pool_held, results_as_done
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.vocabulary import Side

PROBE_SECONDS = 0.5
"""Serial work done before deciding that a pool pays for its start-up (about 0.1 s)."""


class AgentMaker(NamedTuple):
    """A picklable recipe for an agent: its spec and the book it may read."""

    spec: str
    db: str | None = None

    def build(self, book: Any = None) -> Agent:
        parsed = parse_spec(self.spec)
        if parsed.needs_book and book is None and self.db is not None:
            book = _process_book(self.db)
        return make_agent(parsed, SeededOnUse(0), book)


_BOOKS: dict[str, Any] = {}
_EXIT = ExitStack()


def _process_book(db: str) -> Any:
    """One open book per process and database (a worker opens its own)."""
    if db not in _BOOKS:
        from ttt_solve.book.reader import open_book

        _BOOKS[db] = _EXIT.enter_context(open_book(db, read_only=True))
    return _BOOKS[db]


class Worker:
    """The agents of one process and the two kinds of task they run."""

    def __init__(self, rules: Rules, agents: Sequence[Agent]) -> None:
        self.rules = rules
        self.agents = list(agents)
        self.failed: list[EngineFailure] = []
        """Every failure so far, also where a later error stops the work (an engine that
        cannot restart): the caller still counts the ones before it."""

    def moves(
        self, tasks: Sequence[tuple[Position, Callable[[int], int]]]
    ) -> list[int | EngineFailure]:
        """Agent 0's move in each ``(position, seed_of)``, its generator seeded with
        ``seed_of(position.key)`` (worked out only if the agent draws: :func:`reseed`); where
        the agent failed the request (:class:`EngineFailure`), the failure instead."""
        agent = self.agents[0]
        out: list[int | EngineFailure] = []
        for position, seed_of in tasks:
            reseed(agent.rng, functools.partial(seed_of, position.key))
            try:
                out.append(agent.select_move(position))
            except EngineFailure as failure:
                out.append(failure)
                self.failed.append(failure)
        return out

    def games(
        self, tasks: Sequence[tuple[int, int, int, int]]
    ) -> list[tuple[tuple[int, ...], Side | None]]:
        """``(x agent index, o agent index, x seed, o seed)`` -> (moves, winner) per game; an
        agent's failed request (:class:`EngineFailure`) is raised."""
        out = []
        for moves, winner, failure in self.games_to_failure(tasks):
            if failure is not None:
                raise failure
            out.append((moves, winner))
        return out

    def games_to_failure(
        self, tasks: Sequence[tuple[int, int, int, int]]
    ) -> list[tuple[tuple[int, ...], Side | None, EngineFailure | None]]:
        """As :meth:`games`, but a game in which an agent fails a request stops there:
        ``(moves so far, winner, the failure or None)`` per game."""
        out = []
        for xi, oi, x_seed, o_seed in tasks:
            # Two instances even for one spec: each side draws from its own seeded generator.
            if xi == oi:
                raise ValueError("a game needs two agent instances, got one index twice")
            x_agent, o_agent = self.agents[xi], self.agents[oi]
            reseed(x_agent.rng, x_seed)
            reseed(o_agent.rng, o_seed)
            record = play_game(x_agent, o_agent, self.rules, stop_on_failure=True)
            out.append((record.moves, record.winner, record.failure))
            if record.failure is not None:
                self.failed.append(record.failure)
        return out


_WORKER: Worker | None = None


def _init_worker(rules: Rules, makers: Sequence[AgentMaker]) -> None:
    global _WORKER
    # A terminal's Ctrl-C reaches the workers too: end them at once. (As a KeyboardInterrupt,
    # the pool would hand it back as the chunk's result and go on with the queued chunks.)
    # Where the parent ignores Ctrl-C (started with nohup, say), so do they.
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    end_with_parent()  # a parent killed outright (SIGKILL) cannot stop the pool itself
    _WORKER = Worker(rules, [maker.build() for maker in makers])


def _run_in_worker(method: str, chunk: Any) -> Any:
    return getattr(_WORKER, method)(chunk)


def run_chunks(
    worker: Worker,
    method: str,
    chunks: Sequence[Any],
    *,
    makers: Sequence[AgentMaker] | None,
    jobs: int = 2,
    probe_seconds: float = PROBE_SECONDS,
    progress: Callable[[int, int], None] | None = None,
    sizes: Sequence[int] | None = None,
) -> list[Any]:
    """``worker.<method>(chunk)`` for every chunk, results concatenated in chunk order.

    ``makers`` rebuild the worker's agents in other processes (``None``: stay serial).
    ``progress(done, total)`` counts tasks (``sizes`` gives each chunk's task count).
    """
    sizes = list(sizes) if sizes is not None else [len(c) for c in chunks]
    total = sum(sizes)
    results: list[Any] = []
    done = 0
    started = time.perf_counter()
    index = 0
    parallel = makers is not None and jobs > 1
    while index < len(chunks) and not (parallel and time.perf_counter() - started >= probe_seconds):
        results.extend(getattr(worker, method)(chunks[index]))
        done += sizes[index]
        index += 1
        if progress:
            progress(done, total)
    if index < len(chunks):
        assert makers is not None  # only a parallel run gets here
        make_pool = functools.partial(
            ProcessPoolExecutor,
            max_workers=jobs,
            initializer=functools.partial(_init_worker, worker.rules, list(makers)),
        )
        before = multiprocessing.active_children()
        with pool_held(make_pool) as (pool, held):
            futures: list[Future[Any]] = []
            for chunk in chunks[index:]:
                if held:  # seconds for hundreds of thousands of chunks: stop handing out
                    break
                futures.append(pool.submit(_run_in_worker, method, chunk))
            workers = [c for c in multiprocessing.active_children() if c not in before]
            try:
                for offset, result in enumerate(results_as_done(futures, True, held)):
                    results.extend(result)
                    done += sizes[index + offset]
                    if progress:
                        progress(done, total)
            except BrokenProcessPool:
                if not held and _ended_by_ctrl_c(workers):
                    held.append(signal.SIGINT)
                raise
    return results


def _ended_by_ctrl_c(workers: Sequence[multiprocessing.process.BaseProcess]) -> bool:
    """Whether a worker was ended by Ctrl-C, which a terminal sends to every process of the
    group: the pool broke because of it, before this process raised it (where Python would
    lose the exception, the signal comes a moment later)."""
    return any(worker.exitcode == -signal.SIGINT for worker in workers)


def chunked(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]
