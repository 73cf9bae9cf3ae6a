"""Building a tablebase into a folder: ply by ply from the last, in parts, resumable.

:func:`build_table` runs the ply step (:mod:`solver.tablebase.step`) from the full board back
to the empty one. Each ply is made in parts of at most ``part_records`` numbers, each part a
file written whole (:mod:`solver.tablebase.files`), then the parts are joined into the ply's
file. A rerun keeps every file already there whose checksum and header hold, makes again
those that fail (saying so) and makes what is missing, so a kill loses at most the part in
progress; the files made are the same, byte for byte, however often the build was stopped.
One build at a time holds a folder (:func:`build_lock`). Memory is the next ply's records
(memory-mapped), the class tables of two X counts and one part.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.classes import ClassTable, class_table_bytes, class_tables
from ttt_solve.solver.tablebase.files import (
    MANIFEST,
    Manifest,
    PlyEntry,
    TableDiskFullError,
    TableError,
    TableFileError,
    TableHeader,
    map_ply,
    part_path,
    payload_pieces,
    ply_path,
    verify_digests,
    write_file,
    write_manifest,
)
from ttt_solve.solver.tablebase.gpu import back_up_range_on, gpu_chosen, release_gpu
from ttt_solve.solver.tablebase.index import MAX_TABLE_CELLS, ply_shape
from ttt_solve.solver.tablebase.record import RecordCounts
from ttt_solve.solver.tablebase.step import ply_step

DEFAULT_MEMORY = 4 << 30
"""The memory a build may use unless told otherwise (4 GiB)."""

MAX_PART_RECORDS = 1 << 26
"""A part holds at most 64 Mi numbers: about a minute of work on two cores, so a kill loses
little."""

ESTIMATED_RATE = 1.5e7
"""Work a second (numbers weighted by :func:`work_of`) the ply step was measured to do on 2
busy cores (load average 12): 1.7e7 over a whole 4x5 k=4 build, 1.5e7 by
``bench/bench_tablebase.py --probe-5x5``. The estimate given before a build starts."""

GPU_ESTIMATED_RATE = 1.0e9
"""The same on a GPU: 1.06e9 over a whole 5x5 k=4 build on one H200 (182 s, files written
and checked included)."""


ETA_AFTER = 0.01
"""The share of the whole work a run makes before its rate is taken for the whole build's."""


@dataclass(frozen=True)
class BuildProgress:
    """Where a build stands: the ply in hand and the work done, in numbers weighted by the
    children each has (:func:`work_of`), in the ply and in the whole build."""

    ply: int
    ply_done: int
    ply_total: int
    done: int
    total: int
    resumed: int
    """Work found done by an earlier run (counted in ``done``, not made by this one)."""
    seconds: float
    """Since this run started."""

    def eta(self, made: int | None = None) -> float | None:
        """Seconds left for the whole build at the rate of this run so far; ``None`` until
        this run has made :data:`ETA_AFTER` of the whole (the last plies, made first, are
        small, and their fixed costs would promise days)."""
        made = self.done - self.resumed if made is None else made
        if made <= 0 or self.seconds <= 0 or made < ETA_AFTER * self.total:
            return None
        return (self.total - self.done) * self.seconds / made

    def ply_eta(self) -> float | None:
        """Seconds left for the ply in hand at the rate of this run so far."""
        made = self.done - self.resumed
        if made <= 0 or self.seconds <= 0:
            return None
        return (self.ply_total - self.ply_done) * self.seconds / made


@dataclass
class BuildPlan:
    """What a build will make: each ply's numbers, the disk it needs and an estimate of its
    time (:func:`plan_build`)."""

    rules: Rules
    records: list[int]
    work: list[int]
    done: list[bool]
    disk_needed: int
    disk_free: int
    seconds: float
    rate: float

    @property
    def total_work(self) -> int:
        return sum(self.work)

    @property
    def fixed_memory(self) -> int:
        """The memory a build holds whatever its parts: two widest plies and the class
        tables."""
        return 2 * max(self.records) + class_table_bytes(self.rules)


@dataclass
class BuildSummary:
    """What a finished build made."""

    rules: Rules
    folder: Path
    counts: list[RecordCounts] = field(default_factory=list)
    bytes_on_disk: int = 0
    seconds: float = 0.0
    root_record: int = 0


def describe_plan(plan: BuildPlan, folder: Path | None = None) -> str:
    """The line said before a build starts: its records, the disk it needs and its time."""
    where = "" if folder is None else f" in {folder}"
    return (
        f"{plan.rules.name}: {sum(plan.records):,} records in {plan.rules.cells + 1} plies"
        f"{where}, {sum(plan.done)} already made; needs {size_text(plan.disk_needed)} on "
        f"disk ({size_text(plan.disk_free)} free), about {_duration(plan.seconds)} at "
        f"{plan.rate:.1e} weighted records/s"
    )


def work_of(rules: Rules, ply: int, records: int) -> int:
    """A ply's work: its numbers, each weighted by one plus the children it may have."""
    return records * (rules.cells - ply + 1)


def file_size(rules: Rules, ply: int) -> int:
    classes, per_class = ply_shape(rules, ply)
    return TableHeader(rules, ply, classes, per_class, 0, classes * per_class, classes).file_size


def plan_build(
    rules: Rules, folder: Path, device: str = "auto", memory: int | None = None
) -> BuildPlan:
    """The plies to make, the disk they need (the files missing, plus the parts of the largest
    ply, held beside its file while they are joined) and the time they should take on
    ``device`` (as :func:`build_table` takes it). Given the ``memory`` the build may use, a
    build that the disk or that memory cannot hold is refused (:class:`TableDiskFullError`,
    :class:`TableError`)."""
    if rules.cells > MAX_TABLE_CELLS:
        raise TableError(
            f"{rules.name}: {rules.cells} cells; a table is made for boards of at most "
            f"{MAX_TABLE_CELLS} cells (larger boards stay with the prover)"
        )
    records = [ply_shape(rules, p)[0] * ply_shape(rules, p)[1] for p in range(rules.cells + 1)]
    work = [work_of(rules, p, n) for p, n in enumerate(records)]
    done = [ply_path(folder, p).exists() for p in range(rules.cells + 1)]
    missing = [file_size(rules, p) for p in range(rules.cells + 1) if not done[p]]
    needed = sum(missing) + (max(missing) if missing else 0) + (1 << 20)
    existing = folder
    while not existing.exists():
        existing = existing.parent
    free = shutil.disk_usage(existing).free
    left = sum(w for w, d in zip(work, done, strict=True) if not d)
    rate = GPU_ESTIMATED_RATE if gpu_chosen(device) else ESTIMATED_RATE
    plan = BuildPlan(rules, records, work, done, needed, free, left / rate, rate)
    if memory is not None:
        if plan.disk_needed > plan.disk_free:
            raise TableDiskFullError(
                f"{rules.name}: the table needs {size_text(plan.disk_needed)} more on disk and "
                f"{folder} has {size_text(plan.disk_free)} free"
            )
        if plan.fixed_memory > memory:
            raise TableError(
                f"{rules.name}: a build needs at least {plan.fixed_memory / 2**30:.2f} GiB of "
                f"memory (two plies and the class tables); {memory / 2**30:.2f} GiB was allowed"
            )
    return plan


def build_table(
    rules: Rules,
    folder: Path | str,
    memory: int = DEFAULT_MEMORY,
    progress: Callable[[BuildProgress], None] | None = None,
    part_records: int | None = None,
    on_part: Callable[[int, int], None] | None = None,
    device: str = "auto",
    note: Callable[[str], None] | None = None,
) -> BuildSummary:
    """Build (or finish building) the table of a game in ``folder``.

    ``memory``: the bytes the build may hold (the next ply's records, which are memory-mapped
    and so paged in by the system, are counted); a part is cut to fit what is left, and the
    build refuses to start when the two widest plies cannot fit. ``progress`` is called after
    each part; ``on_part(ply, part)`` after each part is written (a hook for tests).
    ``part_records``: at most this many numbers a part (default: as memory allows, at most
    :data:`MAX_PART_RECORDS`). ``device``: ``"cpu"``, ``"gpu"`` or ``"auto"`` (the GPU when
    Numba finds one; :mod:`solver.tablebase.gpu`): the files are the same either way.
    ``note(text)`` is told each file found damaged (or of another format version) and made
    again. Raises :class:`TableDiskFullError` when the disk cannot hold what is missing, and
    :class:`TableBusyError` when another build holds the folder, before anything is made."""
    from ttt_solve.solver.tablebase.gpu import GpuUnavailableError, gpu_available

    folder = Path(folder)
    started = time.monotonic()
    if device == "gpu" and not gpu_available():
        raise GpuUnavailableError(
            "a GPU was asked for, but Numba finds no CUDA device; build with --device cpu"
        )
    plan = plan_build(rules, folder, device, memory)
    folder.mkdir(parents=True, exist_ok=True)
    with build_lock(folder):
        for leftover in folder.glob("*.tmp"):
            leftover.unlink()  # a file whose write was cut short: never taken as done
        (folder / MANIFEST).unlink(missing_ok=True)
        build = _Build(rules, folder, plan, started, progress, on_part, device, note)
        per_part = part_records or max(1 << 16, min(MAX_PART_RECORDS, memory - plan.fixed_memory))
        try:
            entries = [build.ply(ply, per_part) for ply in range(rules.cells, -1, -1)][::-1]
        finally:
            release_gpu()  # the last ply's copies, on a GPU build
        manifest_path = write_manifest(folder, Manifest(rules, tuple(entries)))
    summary = BuildSummary(rules, folder)
    summary.counts = [header.record_counts for header in build.headers[::-1]]
    summary.bytes_on_disk = sum(h.file_size for h in build.headers) + manifest_path.stat().st_size
    summary.seconds = time.monotonic() - started
    summary.root_record = int(build.child_records[0])
    return summary


LOCK = ".build.lock"
"""The file a build holds locked in its folder while it runs."""


class TableBusyError(TableError):
    """Another build holds the folder."""


@contextlib.contextmanager
def build_lock(folder: Path) -> Iterator[None]:
    """Hold the folder's build lock (:data:`LOCK`) within the block; :class:`TableBusyError`
    at once when another process holds it. The system lets it go with the process, however
    that ends."""
    handle = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TableBusyError(
                f"another build is running in {folder}; wait for it to finish, or stop it"
            ) from None
        yield
    finally:
        os.close(handle)


class _Build:
    """One run of :func:`build_table`: the plies made or found, from the last."""

    def __init__(
        self,
        rules: Rules,
        folder: Path,
        plan: BuildPlan,
        started: float,
        progress: Callable[[BuildProgress], None] | None,
        on_part: Callable[[int, int], None] | None,
        device: str,
        note: Callable[[str], None] | None,
    ) -> None:
        self.rules = rules
        self.folder = folder
        self.plan = plan
        self.started = started
        self.progress = progress
        self.on_part = on_part
        self.device = device
        self.note = note or (lambda _text: None)
        self.done = self.resumed = 0
        self.cache: dict[int, ClassTable] = {}
        self.headers: list[TableHeader] = []
        self.child_records: NDArray[np.uint8] = np.zeros(0, dtype=np.uint8)

    def found(self, path: Path, ply: int, part: bool = False) -> tuple[TableHeader, bytes] | None:
        """The header and payload digest of a file made before, if it is sound; a damaged
        one (or one of another format version) is removed, and said."""
        if not path.exists():
            return None
        try:
            return verify_digests(path, self.rules, ply, part)
        except TableFileError as error:
            self.note(f"remaking {path.name}: {str(error).removeprefix(f'{path}: ')}")
            path.unlink()
            return None

    def ply(self, ply: int, per_part: int) -> PlyEntry:
        """Make ply ``ply``'s file, or take the sound one found; its manifest entry."""
        path = ply_path(self.folder, ply)
        found = self.found(path, ply)
        if found is not None:
            header, payload_digest = found
            for part in self.folder.glob(f"{path.stem}-part-*.tb"):
                part.unlink()  # left by a run stopped after the ply's file was renamed
            self.done += self.plan.work[ply]
            self.resumed += self.plan.work[ply]
        else:
            header, payload_digest = self._make(ply, per_part)
        self.headers.append(header)
        self.child_records = map_ply(path, header)[1]
        return PlyEntry.of(header, payload_digest)

    def _make(self, ply: int, per_part: int) -> tuple[TableHeader, bytes]:
        """Make one ply's parts (keeping those already made), then join them into its file."""
        rules = self.rules
        classes, child = class_tables(rules, ply, self.cache)
        step = ply_step(rules, ply, classes, child)
        weight = rules.cells - ply + 1
        counts = RecordCounts.zero(ply == rules.cells)
        shape = TableHeader(rules, ply, len(step.reps), step.per_class, 0, step.records, 0)
        parts = []
        ply_done = 0
        for number, first in enumerate(range(0, step.records, per_part)):
            count = min(per_part, step.records - first)
            path = part_path(self.folder, ply, number)
            found = self.found(path, ply, part=True)
            if found is not None and (found[0].first, found[0].count) != (first, count):
                path.unlink()  # cut by another run's memory
                found = None
            if found is None:
                made, made_counts = back_up_range_on(
                    self.device, step, first, first + count, self.child_records
                )
                header, _ = write_file(
                    path,
                    replace(shape, first=first, count=count, histogram=made_counts.flat()),
                    [made.data],
                )
                if self.on_part is not None:
                    self.on_part(ply, number)
            else:
                header = found[0]
            counts = counts + header.record_counts
            parts.append(path)
            ply_done += count * weight
            self._advance(ply, ply_done, count * weight, found is not None)
        reps = np.ascontiguousarray(classes.rep_ranks, dtype="<u8")
        written = write_file(
            ply_path(self.folder, ply),
            replace(shape, reps=len(step.reps), histogram=counts.flat()),
            _joined(reps, parts),
        )
        for path in parts:
            path.unlink()
        return written

    def _advance(self, ply: int, ply_done: int, work: int, found_done: bool) -> None:
        self.done += work
        if found_done:
            self.resumed += work
        if self.progress is not None:
            self.progress(
                BuildProgress(
                    ply,
                    ply_done,
                    self.plan.work[ply],
                    self.done,
                    self.plan.total_work,
                    self.resumed,
                    time.monotonic() - self.started,
                )
            )


def _joined(reps: NDArray[np.uint64], parts: list[Path]) -> Iterator[bytes | memoryview]:
    yield reps.view(np.uint8).data
    for path in parts:
        yield from payload_pieces(path)


def parse_bytes(text: str) -> int:
    """``"20G"``, ``"512M"`` or a number of bytes."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    text = text.strip().lower().removesuffix("ib").removesuffix("b")
    try:
        if text and text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(text)
    except ValueError:
        raise TableError(f"{text!r} is not an amount of memory: write e.g. 20G or 512M") from None


def size_text(count: int) -> str:
    """Bytes as people read them: kB below a megabyte, MB below a gigabyte, then GB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count / 1e3:.1f} kB"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"
