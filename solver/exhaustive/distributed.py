"""The exhaustive solve on a Dask cluster: the same retrograde analysis, ply by ply, with every
ply cut into partitions by key hash and kept as Parquet files.

* **Forward**, ply ``p`` to ``p + 1``: each partition of ply ``p`` makes the canonical children
  of its open positions (:func:`solver.exhaustive.plies.canonical_children`) and cuts them by owning
  partition (the hash of the key); each partition of ply ``p + 1`` takes its share from every
  partition of ply ``p`` (the shuffle), deduplicates it and marks the won positions.
* **Backward**, ply ``p`` from the solved ply ``p + 1``: each partition of ply ``p`` sends the
  canonical keys of its positions' children (kept by the forward pass, not made again) to
  their owning partitions, which answer with the children's scores (the join); with the
  answers gathered, :func:`solver.exhaustive.plies.back_up_ply` reduces each position's children to
  its
  score and best moves, exactly as in one process.

Every finished partition is written to the work directory (any fsspec URL; a local path on one
machine) as a Parquet file, and every finished ply is marked done there, so an interrupted run
resumes at the first ply not done. The work between the tasks moves through Dask, whose
workers keep a memory limit and spill to disk beyond it. The solved plies are read back from
the Parquet files one at a time (:meth:`DaskSolver.plies`) as :class:`PlyTable` values, the
same as the in-process solver yields.

Dask, distributed and pyarrow are an optional extra (``pip install ttt-solve[dask]``); this
module imports them only when a solver is made.
"""

from __future__ import annotations

import errno
import io
import json
import logging
import operator
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ttt_solve.errors import TttError, install_hint
from ttt_solve.solver import SOLVER_VERSION
from ttt_solve.solver.errors import InvalidRulesError
from ttt_solve.solver.exhaustive.keyarrays import key_arrays
from ttt_solve.solver.exhaustive.plies import back_up_ply, canonical_children, won_by_last_mover
from ttt_solve.solver.plytable import PlyTable, Progress
from ttt_solve.solver.rules import Rules

HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
"""Fibonacci hashing: the top bits of ``key * 2**64 / phi`` spread neighbouring keys (which
share their low bits) evenly over the partitions."""

CHILDREN_PER_PARTITION = 8_000_000
"""A ply is cut into as many partitions as its parents have children per this many (before
deduplication): a partition's task then holds a few hundred MB (its keys, their children and
the answers), well within a worker's memory limit, and small plies are one task each."""

SPREAD_FROM_CHILDREN = 200_000
"""A ply whose parents have at least this many children is cut into at least
:data:`PARTITIONS_PER_WORKER` partitions per worker, so that every worker has its share of the
ply (one partition a ply kept one worker of two busy); smaller plies are one task, whose
overhead would outweigh the work split."""

PARTITIONS_PER_WORKER = 2
"""Two tasks per worker: one worker that finishes early takes another's second task."""

WORK_LAYOUT = 2
"""The work directory's layout (2: the forward pass keeps each partition's children for the
backward pass); a work directory of another layout is emptied, not resumed."""

WORKER_MEMORY = "4GiB"
"""The memory limit of each worker of a local cluster; beyond 70% of it a worker spills."""


class DaskUnavailableError(TttError):
    """The Dask engine was asked for but its packages are not installed."""


class UnsolvedPlyError(TttError):
    """The solved plies were asked for before the run that makes them finished."""


class DaskRunError(TttError):
    """The run cannot go on: the work directory, the scheduler or the workers failed. The
    message says which, and, once the run has started, that the plies finished so far are
    kept in the work directory, from which the same solve resumes."""


def require_dask() -> None:
    """Raise :class:`DaskUnavailableError` unless dask.distributed, fsspec and pyarrow import."""
    try:
        import distributed  # noqa: F401
        import fsspec  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as missing:
        raise DaskUnavailableError(
            f"the dask engine needs the dask extra ({missing.name} is missing): "
            f"{install_hint('dask')}"
        ) from missing


def owners(keys: NDArray[np.uint64], partitions: int) -> NDArray[np.intp]:
    """The partition owning each key."""
    return ((keys * HASH_MULTIPLIER) >> np.uint64(32)) % np.uint64(partitions)  # type: ignore[no-any-return]


def split_by_owner(keys: NDArray[np.uint64], partitions: int) -> list[NDArray[np.uint64]]:
    """``keys`` cut into one array per owning partition, each keeping the order of ``keys``."""
    owner = owners(keys, partitions)
    order = np.argsort(owner, kind="stable")
    bounds = np.searchsorted(owner[order], np.arange(partitions + 1))
    sorted_keys = keys[order]
    return [sorted_keys[bounds[p] : bounds[p + 1]] for p in range(partitions)]


# --- The work directory: one folder per ply, one Parquet file per partition ------------------


PROCESS_LOCAL = {"memory"}
"""fsspec protocols whose files live in the process that writes them (``memory://``)."""


@dataclass(frozen=True)
class WorkDir:
    """Where the plies live: ``ply-05/keys-0003.parquet`` (keys and won flags of partition 3 of
    ply 5), ``ply-05/children-0003.npz`` (their children by owning partition of ply 6, kept
    until ply 5 is solved), ``ply-05/solved-0003.parquet`` (keys, scores, best moves, images)
    and the markers ``ply-05/keys.done`` and ``ply-05/solved.done`` written once every
    partition is."""

    url: str

    def fs_path(self, *parts: str) -> tuple[Any, str]:
        import fsspec

        fs, root = fsspec.core.url_to_fs(self.url)
        return fs, "/".join([root.rstrip("/"), *parts])

    def check(self) -> None:
        """Raise :class:`DaskRunError` unless the directory's file system can be reached from
        here: its package is installed (``s3fs`` for ``s3://``...) and the URL names one,
        whose files the workers, other processes, can read."""
        try:
            fs, _ = self.fs_path()
        except (ImportError, ValueError) as error:  # fsspec: "Install s3fs to access S3"
            raise DaskRunError(f"cannot use the work folder {self.url}: {error}") from None
        protocols = {fs.protocol} if isinstance(fs.protocol, str) else set(fs.protocol)
        if protocols & PROCESS_LOCAL:
            raise DaskRunError(
                f"cannot use the work folder {self.url}: its files would live in this process "
                f"only, and the Dask workers, other processes, could not read them; name a "
                f"folder on a local or shared file system, or a URL every worker reaches "
                f"(s3://...)"
            )

    def part(self, ply: int, stage: str, partition: int) -> str:
        return f"ply-{ply:02d}/{stage}-{partition:04d}.parquet"

    def children(self, ply: int, partition: int) -> str:
        return f"ply-{ply:02d}/children-{partition:04d}.npz"

    def done(self, ply: int, stage: str) -> bool:
        fs, path = self.fs_path(f"ply-{ply:02d}/{stage}.done")
        return bool(fs.exists(path))

    def mark_done(self, ply: int, stage: str, facts: dict[str, Any]) -> None:
        self.write_bytes(f"ply-{ply:02d}/{stage}.done", json.dumps(facts).encode())

    def facts(self, ply: int, stage: str) -> dict[str, Any]:
        fs, path = self.fs_path(f"ply-{ply:02d}/{stage}.done")
        with fs.open(path, "rb") as handle:
            facts: dict[str, Any] = json.loads(handle.read())
        return facts

    def write_bytes(self, name: str, data: bytes) -> None:
        fs, path = self.fs_path(name)
        fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        with fs.open(path + ".partial", "wb") as handle:
            handle.write(data)
        fs.mv(path + ".partial", path)

    def write_columns(self, name: str, columns: dict[str, NDArray[Any]]) -> int:
        """Write aligned arrays as one Parquet file, atomically (a partial file moved into
        place); returns its size in bytes."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        buffer = io.BytesIO()
        pq.write_table(pa.table(columns), buffer)
        self.write_bytes(name, buffer.getvalue())
        return len(buffer.getvalue())

    def read_columns(self, name: str) -> dict[str, NDArray[Any]]:
        import pyarrow.parquet as pq

        fs, path = self.fs_path(name)
        table = pq.read_table(path, filesystem=fs)
        return {column: table.column(column).to_numpy() for column in table.column_names}

    def write_shares(self, name: str, shares: list[NDArray[np.uint64]]) -> None:
        """Keep arrays of keys, one per partition, as one ``.npz`` file (atomically)."""
        buffer = io.BytesIO()
        bounds = np.cumsum([0] + [len(share) for share in shares])
        np.savez(buffer, keys=np.concatenate(shares), bounds=bounds)
        self.write_bytes(name, buffer.getvalue())

    def read_shares(self, name: str) -> list[NDArray[np.uint64]]:
        fs, path = self.fs_path(name)
        with fs.open(path, "rb") as handle, np.load(io.BytesIO(handle.read())) as kept:
            keys, bounds = kept["keys"], kept["bounds"]
        return [keys[bounds[p] : bounds[p + 1]] for p in range(len(bounds) - 1)]

    def remove_children(self, ply: int) -> None:
        """Drop a ply's kept children once the ply is solved: nothing reads them again."""
        fs, path = self.fs_path(f"ply-{ply:02d}")
        for name in fs.glob(path + "/children-*.npz"):
            fs.rm(name)

    def claim(self, identity: dict[str, Any]) -> None:
        """A work directory belongs to one game, solver version and partitioning; one that
        belongs to another is emptied."""
        fs, path = self.fs_path("identity.json")
        if fs.exists(path):
            with fs.open(path, "rb") as handle:
                if json.loads(handle.read()) == identity:
                    return
            self.clear()
        self.write_bytes("identity.json", json.dumps(identity).encode())

    def clear(self) -> None:
        fs, path = self.fs_path()
        if fs.exists(path):
            fs.rm(path, recursive=True)


def work_problem(url: str, error: OSError, kept: bool = True) -> str:
    """One line for a failed read or write of the work directory ``url`` (by this process or
    a worker): a full disk, or the system's reason; with ``kept``, what is kept and how to
    resume."""
    resume = (
        f"; the plies finished so far are kept in {url}, and the same command resumes from them"
        if kept
        else ""
    )
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"no space left on the disk of the work folder {url}: free some space{resume}"
    reason = error.strerror or str(error) or type(error).__name__
    if isinstance(error, FileNotFoundError) and not error.strerror:  # fsspec: the path alone
        reason = f"a file written there is missing, {reason} (do all the Dask workers reach it?)"
    return f"cannot write the work folder {url}: {reason}{resume}"


# --- The tasks: plain functions of one partition, run on the workers -------------------------


def task_children_by_owner(
    rules: Rules, work: WorkDir, ply: int, partition: int, partitions: int
) -> list[NDArray[np.uint64]]:
    """The canonical children of the open positions of one partition of ``ply``, one sorted
    array per owning partition of ``ply + 1``; also kept in the work directory, where the
    backward pass reads them (:func:`task_requests`) instead of making them again."""
    columns = work.read_columns(work.part(ply, "keys", partition))
    parents = columns["key"][~columns["won"]]
    shares = split_by_owner(canonical_children(key_arrays(rules), parents, ply), partitions)
    work.write_shares(work.children(ply, partition), shares)
    return shares


def task_requests(work: WorkDir, ply: int, partition: int) -> list[NDArray[np.uint64]]:
    """The children of one partition of ``ply`` by owning partition of ``ply + 1``, as the
    forward pass kept them: the keys whose scores the partition asks for."""
    return work.read_shares(work.children(ply, partition))


def task_new_partition(
    rules: Rules, work: WorkDir, ply: int, partition: int, *shares: NDArray[np.uint64]
) -> dict[str, int]:
    """Partition ``partition`` of ``ply`` from its share of every parent partition's children:
    deduplicated, its won positions marked, written. Returns its figures."""
    arrays = key_arrays(rules)
    keys = arrays.sorted_unique(np.concatenate(shares))
    won = won_by_last_mover(arrays, keys, ply)
    written = work.write_columns(work.part(ply, "keys", partition), {"key": keys, "won": won})
    return {
        "positions": len(keys),
        "open": len(keys) - int(np.count_nonzero(won)),
        "shuffled": sum(share.nbytes for share in shares),
        "stored": written,
    }


def task_answer(
    work: WorkDir, ply: int, partition: int, *requests: NDArray[np.uint64]
) -> list[NDArray[np.int16]]:
    """The scores, in solved partition ``partition`` of ``ply``, of the keys each partition of
    the previous ply asks for (every asked key is there: it is a reachable child)."""
    solved = work.read_columns(work.part(ply, "solved", partition))
    keys, scores = solved["key"], solved["score"]
    answers = []
    for asked in requests:
        where = np.searchsorted(keys, asked)
        if len(asked) and (where.max() >= len(keys) or not (keys[where] == asked).all()):
            raise AssertionError(f"ply {ply}: a child is missing from partition {partition}")
        answers.append(scores[where])
    return answers


def task_back_up(
    rules: Rules,
    work: WorkDir,
    ply: int,
    partition: int,
    requests: list[NDArray[np.uint64]] | None,
    *answers: NDArray[np.int16],
) -> dict[str, int]:
    """Solve partition ``partition`` of ``ply`` from its children's scores (the answers to its
    requests, one pair per partition of the next ply) and write it. Returns its figures."""
    arrays = key_arrays(rules)
    columns = work.read_columns(work.part(ply, "keys", partition))
    keys, won = columns["key"], columns["won"]
    next_keys: NDArray[np.uint64] | None = None
    next_scores: NDArray[np.int16] | None = None
    if requests is not None:
        asked = np.concatenate(requests) if requests else np.zeros(0, dtype=np.uint64)
        scores = np.concatenate(answers) if answers else np.zeros(0, dtype=np.int16)
        order = np.argsort(asked)
        next_keys, next_scores = asked[order], scores[order]
    scores, best = back_up_ply(arrays, ply, keys, won, next_keys, next_scores)
    written = work.write_columns(
        work.part(ply, "solved", partition),
        {"key": keys, "score": scores, "best": best, "images": arrays.orbit_sizes(keys)},
    )
    return {
        "positions": len(keys),
        # Moved between tasks: the keys asked for and the scores answered.
        "shuffled": sum(asked.nbytes for asked in requests or [])
        + sum(answer.nbytes for answer in answers),
        "stored": written,
    }


def task_load_kernels(rules: Rules) -> None:
    """Run the tasks' per-ply operations once on the empty board: a worker then loads the
    compiled kernels' machine code (seconds on a busy machine) before its first task, every
    worker at the same time, instead of in whichever task first needs each kernel."""
    arrays = key_arrays(rules)
    keys = np.zeros(1, dtype=np.uint64)
    won = won_by_last_mover(arrays, keys, 0)
    children = canonical_children(arrays, keys[~won], 0)
    back_up_ply(arrays, 0, keys, won, children, np.zeros(len(children), dtype=np.int16))
    keys.setflags(write=False)  # as a Parquet column arrives: a kernel signature of its own
    arrays.orbit_sizes(keys)


# --- The driver ------------------------------------------------------------------------------

_DASK_LOG_LEVEL = logging.CRITICAL
"""Dask's own log lines (a failed task's traceback, a worker restarted) are kept off the
terminal while a solve runs: the solve says itself, in one line, what stopped it."""


@contextmanager
def _dask_logs_quiet() -> Iterator[None]:
    """Within the block, Dask's loggers in this process say only what is critical (each of
    them: Dask's configuration gives some their own level, ``distributed.client``'s among
    them)."""
    import distributed  # noqa: F401 - its loggers exist once it is imported

    names = [
        name
        for name in list(logging.root.manager.loggerDict)
        if name == "distributed" or name.startswith("distributed.")
    ]
    loggers = [logging.getLogger(name) for name in names]
    previous = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(_DASK_LOG_LEVEL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, previous):
            logger.setLevel(level)


def _reason(error: BaseException) -> str:
    """An exception as a few words on one line: its text, else its name."""
    text = " ".join(str(error).split())
    return text or type(error).__name__


@dataclass
class PlyStats:
    """What one ply's step cost: positions made, bytes moved between tasks, bytes on disk."""

    ply: int
    stage: str
    partitions: int
    positions: int
    shuffled: int
    stored: int
    seconds: float


@dataclass
class DaskSolver:
    """Solves every reachable position of one game on a Dask cluster.

    ``client``: a connected :class:`distributed.Client`; ``None`` connects to ``scheduler``
    (an address) or, without one, starts a :class:`distributed.LocalCluster` of ``workers``
    single-threaded processes, each limited to ``memory_limit`` and spilling beyond it.
    ``partitions``: how many parts every ply but the empty board is cut into (default: as many
    as the ply's size asks for, see :data:`CHILDREN_PER_PARTITION`, and at least two per worker
    from :data:`SPREAD_FROM_CHILDREN` children on).
    """

    rules: Rules
    workdir: str
    client: Any = None  # a distributed.Client (the package has no type hints)
    scheduler: str | None = None
    workers: int = 2
    memory_limit: str = WORKER_MEMORY
    partitions: int | None = None
    progress: Progress | None = None
    stats: list[PlyStats] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.rules.fits_key:
            raise InvalidRulesError(
                f"{self.rules.name}: {self.rules.cells} cells do not fit a 64-bit key"
            )
        require_dask()
        self.work = WorkDir(self.workdir)
        self._own_cluster: Any = None
        self._own_client = self.client is None  # else the caller's, to close
        self._workers = self.workers  # the cluster's, once connected

    @property
    def identity(self) -> dict[str, Any]:
        return {
            "rules": [self.rules.rows, self.rules.cols, self.rules.k],
            "solver": SOLVER_VERSION,
            "partitions": self.partitions,
            "layout": WORK_LAYOUT,
        }

    def _connect(self) -> Any:
        import distributed

        # The package has no type hints: its classes are called as Any.
        make_client: Any = distributed.Client
        make_cluster: Any = distributed.LocalCluster
        if self.client is None:
            if self.scheduler is not None:
                try:
                    self.client = make_client(self.scheduler)
                except Exception as error:  # noqa: BLE001 - said in one line, whatever it is
                    reason = (  # a length prefix of exabytes: whatever answered is no scheduler
                        "what answers there does not speak Dask's protocol"
                        if isinstance(error, MemoryError)
                        else _reason(error)
                    )
                    raise DaskRunError(
                        f"cannot connect to the Dask scheduler {self.scheduler!r}: "
                        f"{reason}; give --scheduler tcp://HOST:PORT of a running "
                        f"scheduler (or none, for a local cluster)"
                    ) from None
            else:
                try:
                    self._own_cluster = make_cluster(
                        n_workers=self.workers,
                        threads_per_worker=1,
                        memory_limit=self.memory_limit,
                        dashboard_address=":0",
                        silence_logs=_DASK_LOG_LEVEL,
                    )
                except Exception as error:  # noqa: BLE001 - said in one line, whatever it is
                    raise DaskRunError(
                        f"cannot start a local Dask cluster: {_reason(error)}"
                    ) from None
                self.client = make_client(self._own_cluster)
        self._workers = max(1, sum(self.client.nthreads().values()))  # tasks at once
        return self.client

    def close(self) -> None:
        """Close the client and the local cluster if this solver started them (a client of
        a scheduler that went away would otherwise go on trying to reach it)."""
        with _dask_logs_quiet():
            if self._own_client and self.client is not None:
                self.client.close()
                self.client = None
            if self._own_cluster is not None:
                self._own_cluster.close()
                self._own_cluster = None

    def clear(self) -> None:
        """Remove the work directory (once the book holds the game)."""
        self.work.clear()

    def _partitions_after(self, ply: int) -> int:
        """How many partitions ply ``ply + 1`` is cut into (ply ``ply`` being made)."""
        if self.partitions is not None:
            return self.partitions
        children: int = self.work.facts(ply, "keys")["open"] * (self.rules.cells - ply)
        by_size = -(-children // CHILDREN_PER_PARTITION)
        spread = PARTITIONS_PER_WORKER * self._workers if children >= SPREAD_FROM_CHILDREN else 1
        return max(1, by_size, spread)

    def _record(self, ply: int, stage: str, results: list[dict[str, int]], started: float) -> None:
        """Mark a ply's stage done, with its figures summed over the partitions."""
        facts = {name: sum(result[name] for result in results) for name in results[0]}
        facts["partitions"] = len(results)
        self.work.mark_done(ply, stage, facts)
        self.stats.append(
            PlyStats(
                ply,
                stage,
                len(results),
                facts["positions"],
                facts["shuffled"],
                facts["stored"],
                time.perf_counter() - started,
            )
        )

    def _step(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(done, total)

    def run(self) -> int:
        """Forward and backward passes, each ply resumed from the work directory when done
        there; returns the number of solved positions (canonical).

        Raises :class:`DaskRunError` naming what failed (the work directory, the scheduler, a
        worker) and keeping every ply finished, for the same solve to resume from."""
        self.work.check()  # before a cluster is started, not in the first task
        try:
            self.work.claim(self.identity)  # also finds a directory that cannot be written
        except OSError as error:
            raise DaskRunError(work_problem(self.workdir, error, kept=False)) from None
        with _dask_logs_quiet():
            client = self._connect()
            try:
                return self._run(client)
            except TttError:
                raise
            except Exception as error:
                problem = self._problem(error)
                if problem is None:
                    raise
                raise DaskRunError(problem) from None

    def _problem(self, error: Exception) -> str | None:
        """One line for what stopped the run (``None``: a failure of this program)."""
        import distributed
        from distributed.comm.core import CommClosedError

        kept = (
            f"; the plies finished so far are kept in {self.workdir}, and the same command "
            f"resumes from them"
        )
        if isinstance(error, distributed.KilledWorker):
            return (
                f"Dask workers died running the same task, {error.allowed_failures + 1} times "
                f"(killed, or out of memory: a worker of a local cluster may use "
                f"{self.memory_limit}){kept}"
            )
        if isinstance(
            error, distributed.client.FutureCancelledError
        ):  # "scheduler-connection-lost"
            reason = f"the work was cancelled ({error.reason})"
        elif isinstance(error, (CommClosedError, TimeoutError)):
            reason = _reason(error)
        else:
            reason = None
        if reason is not None:
            where = repr(self.scheduler) if self.scheduler else "of the local cluster"
            return f"lost the connection to the Dask scheduler {where}: {reason}{kept}"
        if isinstance(error, OSError):  # a task's read or write of the work directory
            return work_problem(self.workdir, error)
        if isinstance(error, ImportError):
            return (
                f"a Dask worker cannot import {error.name or 'a module'}: install ttt-solve "
                f"with its dask extra where the workers run{kept}"
            )
        return None

    def _run(self, client: Any) -> int:
        rules, work = self.rules, self.work
        # Loads the kernels ahead of the first task; a worker lost meanwhile is replaced, and
        # its replacement loads them in its first task.
        client.run(task_load_kernels, rules, on_error="ignore")
        total = 2 * (rules.cells + 1)
        if not work.done(0, "keys"):
            started = time.perf_counter()
            results = [task_new_partition(rules, work, 0, 0, np.zeros(1, dtype=np.uint64))]
            self._record(0, "keys", results, started)
        plies = rules.cells + 1
        for ply in range(rules.cells):  # forward: make ply + 1 from ply
            self._step(ply + 1, total)
            if work.facts(ply, "keys")["open"] == 0:  # nothing to play on: the last ply
                plies = ply + 1
                break
            if work.done(ply + 1, "keys"):
                continue
            started = time.perf_counter()
            parents, partitions = self._partitions(ply), self._partitions_after(ply)
            children = [
                client.submit(task_children_by_owner, rules, work, ply, p, partitions, pure=False)
                for p in range(parents)
            ]
            made = [
                client.submit(
                    task_new_partition,
                    rules,
                    work,
                    ply + 1,
                    q,
                    *[client.submit(operator.getitem, part, q, pure=False) for part in children],
                    pure=False,
                )
                for q in range(partitions)
            ]
            self._record(ply + 1, "keys", client.gather(made), started)
            del children, made
        total = 2 * plies
        solved = 0
        for ply in reversed(range(plies)):  # backward: solve ply from ply + 1
            self._step(2 * plies - ply, total)
            if work.done(ply, "solved"):
                solved += work.facts(ply, "solved")["positions"]
                continue
            started = time.perf_counter()
            results = client.gather(self._back_up(client, ply, last=ply == plies - 1))
            self._record(ply, "solved", results, started)
            work.remove_children(ply)
            solved += sum(result["positions"] for result in results)
        self._step(total, total)
        return solved

    def _back_up(self, client: Any, ply: int, last: bool) -> list[Any]:
        """The tasks solving every partition of ``ply``: each partition's children asked of
        their owners in ``ply + 1`` (none for the last ply), answered, and backed up."""
        rules, work = self.rules, self.work
        partitions = self._partitions(ply)
        requests: list[Any] = [None] * partitions
        answers: list[Any] = []
        if not last:
            next_partitions = self._partitions(ply + 1)
            requests = [
                client.submit(task_requests, work, ply, p, pure=False) for p in range(partitions)
            ]
            answers = [
                client.submit(
                    task_answer,
                    work,
                    ply + 1,
                    q,
                    *[client.submit(operator.getitem, r, q, pure=False) for r in requests],
                    pure=False,
                )
                for q in range(next_partitions)
            ]
        return [
            client.submit(
                task_back_up,
                rules,
                work,
                ply,
                p,
                requests[p],
                *[client.submit(operator.getitem, a, p, pure=False) for a in answers],
                pure=False,
            )
            for p in range(partitions)
        ]

    def _partitions(self, ply: int) -> int:
        """How many partitions ply ``ply`` (made) is cut into."""
        partitions: int = self.work.facts(ply, "keys")["partitions"]
        return partitions

    def _count_plies(self) -> int:
        """The plies made: the consecutive ones from the empty board whose keys are done."""
        plies = 0
        while plies <= self.rules.cells and self.work.done(plies, "keys"):
            plies += 1
        return plies

    def plies(self) -> Iterator[PlyTable]:
        """The solved plies from the work directory, from the last to the empty board, one at
        a time: each ply's partitions joined and sorted by key."""
        plies = self._count_plies()
        for ply in reversed(range(plies)):
            if not self.work.done(ply, "solved"):
                raise UnsolvedPlyError(f"ply {ply} is not solved in {self.workdir}")
            parts = [
                self.work.read_columns(self.work.part(ply, "solved", p))
                for p in range(self._partitions(ply))
            ]
            columns = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
            order = np.argsort(columns["key"])
            yield PlyTable(
                ply,
                columns["key"][order],
                columns["score"][order],
                columns["best"][order],
                columns["images"][order],
            )

    def solve(self) -> Iterator[PlyTable]:
        """Run the solve, then yield every ply, solved, from the last one back to the empty
        board (as the in-process solver does)."""
        self.run()
        yield from self.plies()
