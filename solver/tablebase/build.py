"""Building a tablebase into a folder: ply by ply from the last, in parts, resumable.

:func:`build_table` runs the ply step (:mod:`solver.tablebase.step`) from the full board back to the
empty one. Each ply is made in parts of at most ``part_records`` numbers, each part a file
written whole (:mod:`solver.tablebase.files`), then the parts are joined into the ply's file. A
rerun
keeps every file already there whose checksum holds and makes only what is missing, so a kill
loses at most the part in progress; the files made are the same, byte for byte, however often
the build was stopped. Memory is the next ply's records (memory-mapped), the class tables of
two X counts and one part.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ttt_solve.errors import TttError
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.classes import (
    ClassTable,
    class_table_bytes,
    class_tables,
    ply_shape,
)
from ttt_solve.solver.tablebase.files import (
    TableDiskFullError,
    TableError,
    TableHeader,
    map_ply,
    part_path,
    payload_pieces,
    ply_path,
    verify,
    write_file,
)
from ttt_solve.solver.tablebase.gpu import back_up_range_on, gpu_chosen, release_gpu
from ttt_solve.solver.tablebase.index import MAX_TABLE_CELLS
from ttt_solve.solver.tablebase.record import RecordCounts, value_of_record
from ttt_solve.solver.tablebase.step import ply_step

MANIFEST = "table.json"
"""Written last: the game, each ply's digest and counts. Its presence says the table is whole."""

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
        f"{where}, {sum(plan.done)} already made; needs {plan.disk_needed / 1e9:.2f} GB on "
        f"disk ({plan.disk_free / 1e9:.2f} GB free), about {_duration(plan.seconds)} at "
        f"{plan.rate:.1e} weighted records/s"
    )


def work_of(rules: Rules, ply: int, records: int) -> int:
    """A ply's work: its numbers, each weighted by one plus the children it may have."""
    return records * (rules.cells - ply + 1)


def file_size(rules: Rules, ply: int) -> int:
    classes, per_class = ply_shape(rules, ply)
    return TableHeader(rules, ply, classes, per_class, 0, classes * per_class, classes).file_size


def plan_build(rules: Rules, folder: Path, device: str = "auto") -> BuildPlan:
    """The plies to make, the disk they need (the files missing, plus the parts of the largest
    ply, held beside its file while they are joined) and the time they should take on
    ``device`` (as :func:`build_table` takes it)."""
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
    return BuildPlan(rules, records, work, done, needed, free, left / rate, rate)


def build_table(
    rules: Rules,
    folder: Path | str,
    memory: int = DEFAULT_MEMORY,
    progress: Callable[[BuildProgress], None] | None = None,
    part_records: int | None = None,
    on_part: Callable[[int, int], None] | None = None,
    device: str = "auto",
) -> BuildSummary:
    """Build (or finish building) the table of a game in ``folder``.

    ``memory``: the bytes the build may hold (the next ply's records, which are memory-mapped
    and so paged in by the system, are counted); a part is cut to fit what is left, and the
    build refuses to start when the two widest plies cannot fit. ``progress`` is called after
    each part; ``on_part(ply, part)`` after each part is written (a hook for tests).
    ``part_records``: at most this many numbers a part (default: as memory allows, at most
    :data:`MAX_PART_RECORDS`). ``device``: ``"cpu"``, ``"gpu"`` or ``"auto"`` (the GPU when
    Numba finds one; :mod:`solver.tablebase.gpu`): the files are the same either way.
    Raises :class:`TableDiskFullError` when the disk cannot hold what is missing, before
    anything is made."""
    from ttt_solve.solver.tablebase.gpu import GpuUnavailableError, gpu_available

    folder = Path(folder)
    started = time.monotonic()
    if device == "gpu" and not gpu_available():
        raise GpuUnavailableError(
            "a GPU was asked for, but Numba finds no CUDA device; build with --device cpu"
        )
    plan = plan_build(rules, folder, device)
    if plan.disk_needed > plan.disk_free:
        raise TableDiskFullError(
            f"{rules.name}: the table needs {plan.disk_needed / 1e9:.2f} GB more on disk and "
            f"{folder} has {plan.disk_free / 1e9:.2f} GB free"
        )
    fixed = 2 * max(plan.records) + class_table_bytes(rules)
    if fixed > memory:
        raise TableError(
            f"{rules.name}: a build needs at least {fixed / 2**30:.2f} GiB of memory (two plies "
            f"and the class tables); {memory / 2**30:.2f} GiB was allowed"
        )
    folder.mkdir(parents=True, exist_ok=True)
    for leftover in folder.glob("*.tmp"):
        leftover.unlink()  # a file whose write was cut short: never taken as done
    manifest_path = folder / MANIFEST
    manifest_path.unlink(missing_ok=True)
    summary = BuildSummary(rules, folder)
    cache: dict[int, ClassTable] = {}
    total = plan.total_work
    done = resumed = 0
    counts: list[RecordCounts] = []
    headers: list[TableHeader] = []
    child_records: NDArray[np.uint8] = np.zeros(0, dtype=np.uint8)
    try:
        for ply in range(rules.cells, -1, -1):
            path = ply_path(folder, ply)
            if path.exists():
                header = verify(path, rules, ply)
                for part in folder.glob(f"{path.stem}-part-*.tb"):
                    part.unlink()  # left by a run stopped after the ply's file was renamed
                done += plan.work[ply]
                resumed += plan.work[ply]
            else:
                per_part = part_records or max(1 << 16, min(MAX_PART_RECORDS, memory - fixed))
                state = _PlyState(ply, plan.work[ply], done, resumed, total, started, progress)
                header = _make_ply(
                    rules, folder, ply, cache, child_records, per_part, state, on_part, device
                )
                done, resumed = state.done, state.resumed
            headers.append(header)
            counts.append(RecordCounts.of(header.counts))
            child_records = map_ply(path, header)[1]
    finally:
        release_gpu()  # the last ply's copies, on a GPU build
    _write_manifest(manifest_path, rules, headers[::-1])
    summary.counts = counts[::-1]
    summary.bytes_on_disk = sum(h.file_size for h in headers) + manifest_path.stat().st_size
    summary.seconds = time.monotonic() - started
    summary.root_record = int(child_records[0])
    return summary


@dataclass
class _PlyState:
    ply: int
    ply_total: int
    done: int
    resumed: int
    total: int
    started: float
    progress: Callable[[BuildProgress], None] | None
    ply_done: int = 0

    def advance(self, work: int, found_done: bool) -> None:
        self.ply_done += work
        self.done += work
        if found_done:
            self.resumed += work
        if self.progress is not None:
            self.progress(
                BuildProgress(
                    self.ply,
                    self.ply_done,
                    self.ply_total,
                    self.done,
                    self.total,
                    self.resumed,
                    time.monotonic() - self.started,
                )
            )


def _make_ply(
    rules: Rules,
    folder: Path,
    ply: int,
    cache: dict[int, ClassTable],
    child_records: NDArray[np.uint8],
    per_part: int,
    state: _PlyState,
    on_part: Callable[[int, int], None] | None,
    device: str,
) -> TableHeader:
    """Make one ply's parts (keeping those already made), then join them into its file."""
    classes, child = class_tables(rules, ply, cache)
    step = ply_step(rules, ply, classes, child)
    records = step.records
    weight = rules.cells - ply + 1
    counts = RecordCounts.zero()
    parts = []
    for number, first in enumerate(range(0, records, per_part)):
        count = min(per_part, records - first)
        path = part_path(folder, ply, number)
        found = path.exists()
        if found:
            header = verify(path, rules, ply)
            if (header.first, header.count) != (first, count):  # cut by another run's memory
                path.unlink()
                found = False
        if not found:
            made, made_counts = back_up_range_on(device, step, first, first + count, child_records)
            header = write_file(
                path,
                TableHeader(
                    rules,
                    ply,
                    len(step.reps),
                    step.per_class,
                    first,
                    count,
                    0,
                    counts=made_counts.flat(),
                ),
                [made.data],
            )
            if on_part is not None:
                on_part(ply, number)
        counts = counts + RecordCounts.of(header.counts)
        parts.append(path)
        state.advance(count * weight, found)
    reps = np.ascontiguousarray(classes.rep_ranks, dtype="<u8")
    header = write_file(
        ply_path(folder, ply),
        TableHeader(
            rules,
            ply,
            len(step.reps),
            step.per_class,
            0,
            records,
            len(step.reps),
            counts=counts.flat(),
        ),
        _joined(reps, parts),
    )
    for path in parts:
        path.unlink()
    return header


def _joined(reps: NDArray[np.uint64], parts: list[Path]) -> Iterator[bytes | memoryview]:
    yield reps.view(np.uint8).data
    for path in parts:
        yield from payload_pieces(path)


def _write_manifest(path: Path, rules: Rules, headers: list[TableHeader]) -> None:
    manifest = {
        "rules": rules.as_dict(),
        "plies": [
            {
                "ply": h.ply,
                "file": ply_path(path.parent, h.ply).name,
                "records": h.count,
                "blake2b": h.digest.hex(),
                "counts": list(h.counts),
            }
            for h in headers
        ],
    }
    text = json.dumps(manifest, indent=1) + "\n"
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    temporary.replace(path)


def _parse_bytes(text: str) -> int:
    """``"20G"``, ``"512M"`` or a number of bytes."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    text = text.strip().lower().removesuffix("ib").removesuffix("b")
    try:
        if text and text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(text)
    except ValueError:
        raise TableError(f"{text!r} is not an amount of memory: write e.g. 20G or 512M") from None


def _size(count: int) -> str:
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


def main(argv: list[str] | None = None) -> int:
    """``python -m ttt_solve.solver.tablebase.build GAME FOLDER``: build (or resume) a table, with
    the estimate first, progress with ETAs, and a summary at the end."""
    import argparse
    import sys

    from ttt_solve.solver.rules import parse_game

    parser = argparse.ArgumentParser(
        prog="python -m ttt_solve.solver.tablebase.build",
        description="Build, or resume building, the tablebase of a game (at most 25 cells) "
        "into a folder: every position's value and remoteness, one byte each.",
    )
    parser.add_argument("game", help="the game, e.g. 4x5k4 or 5x5k4")
    parser.add_argument("folder", help="the table's folder (a rerun resumes what is there)")
    parser.add_argument("--memory", default="4G", help="memory the build may use (default 4G)")
    parser.add_argument(
        "--device",
        choices=["auto", "cpu", "gpu"],
        default="auto",
        help="where the ply step runs: the GPU when Numba finds one (auto), or as said",
    )
    parser.add_argument("--every", type=float, default=10.0, help="seconds between progress lines")
    args = parser.parse_args(argv)
    try:
        rules = parse_game(args.game)
        memory = _parse_bytes(args.memory)
        folder = Path(args.folder)
        print(describe_plan(plan_build(rules, folder, args.device)), flush=True)
        last = [0.0]

        def report(state: BuildProgress) -> None:
            if state.seconds - last[0] < args.every and state.ply_done < state.ply_total:
                return
            last[0] = state.seconds
            print(
                f"ply {state.ply:2d}: {100 * state.ply_done / state.ply_total:5.1f}% "
                f"(ETA {_duration(state.ply_eta())}); whole: "
                f"{100 * state.done / state.total:5.1f}% (ETA {_duration(state.eta())}), "
                f"{_duration(state.seconds)} so far",
                flush=True,
            )

        summary = build_table(rules, folder, memory, report, device=args.device)
    except TttError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: the parts made so far are kept; rerun to resume", file=sys.stderr)
        return 130
    root = summary.root_record
    value = value_of_record(root, rules.cells)
    canonical = sum(c.canonical for c in summary.counts)
    reachable = sum(c.reachable for c in summary.counts)
    print(
        f"{rules.name}: {value} for X; {canonical:,} canonical and {reachable:,} reachable "
        f"positions; {_size(summary.bytes_on_disk)} in {folder}; "
        f"{_duration(summary.seconds)}",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
