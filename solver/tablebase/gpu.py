"""The tablebase's ply step on a CUDA GPU (Numba's CUDA target): the twin of
:func:`solver.tablebase.step.back_up_range`.

One GPU thread per number: each unranks its own O set (a thread cannot step through a run of
numbers as a CPU block does) and ranks each child from the class tables (the CPU kernel
tabulates where the O stones land once per class instead). The helpers are the CPU kernel's
own compiled functions (:mod:`solver.tablebase.index`, :mod:`solver.tablebase.step`), called from
the device code. The two kernels must give the same bytes: the tests run this one on Numba's
CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, no GPU needed) against the CPU kernel on small
boards. :func:`back_up_range_on` chooses: the GPU when one is present or asked for, with
:class:`GpuUnavailableError` when one is asked for and absent.
"""

from __future__ import annotations

import warnings
from typing import Any

import numba.cuda
import numpy as np
from numba.core.errors import NumbaPerformanceWarning
from numpy.typing import NDArray

from ttt_solve.errors import TttError
from ttt_solve.solver.tablebase import index as tablebase_index
from ttt_solve.solver.tablebase import step as tablebase
from ttt_solve.solver.tablebase.index import binomials, cell_tables
from ttt_solve.solver.tablebase.lookup import NONE
from ttt_solve.solver.tablebase.step import PlyStep, RecordCounts, back_up_range
from ttt_solve.solver.value import WIN_SCORE

cuda: Any = numba.cuda
"""Numba's CUDA target, untyped for mypy (under the simulator, the simulator's module)."""

# The CPU kernel's helpers, compiled again as device functions from the same Python source.
_device = cuda.jit(device=True)
rank_set = _device(tablebase_index.rank_set.py_func)
unrank_set = _device(tablebase_index.unrank_set.py_func)
permute_set = _device(tablebase_index.permute_set.py_func)
compress = _device(tablebase_index.compress.py_func)
expand = _device(tablebase_index.expand.py_func)
_lines_held = _device(tablebase._lines_held.py_func)
_end_record = _device(tablebase._end_record.py_func)
_outcome = _device(tablebase._outcome.py_func)
_score = _device(tablebase._score.py_func)
_record = _device(tablebase._record.py_func)
_move_score = _device(tablebase._move_score.py_func)

THREADS = 256
"""Threads a CUDA block."""


class GpuUnavailableError(TttError):
    """A GPU was asked for and there is none (or Numba cannot reach it)."""


def gpu_available() -> bool:
    """Whether Numba sees a CUDA device (the simulator counts as one)."""
    try:
        return bool(cuda.is_available())
    except Exception:  # noqa: BLE001 - a broken driver is no device
        return False


def gpu_chosen(device: str) -> bool:
    """Whether ``device`` (``"cpu"``, ``"gpu"`` or ``"auto"``) runs the ply step on the GPU."""
    if device not in ("cpu", "gpu", "auto"):
        raise ValueError(f"device {device!r} is not cpu, gpu or auto")
    return device == "gpu" or (device == "auto" and gpu_available())


def back_up_range_on(
    device: str, step: PlyStep, start: int, stop: int, child_records: NDArray[np.uint8]
) -> tuple[NDArray[np.uint8], RecordCounts]:
    """:func:`back_up_range` on ``device``: ``"cpu"``, ``"gpu"`` (an error without one) or
    ``"auto"`` (the GPU when one is present)."""
    if not gpu_chosen(device):
        return back_up_range(step, start, stop, child_records)
    if not gpu_available():
        raise GpuUnavailableError(
            "a GPU was asked for, but Numba finds no CUDA device (and no CUDA driver); "
            "build on the CPU instead"
        )
    return back_up_range_gpu(step, start, stop, child_records)


def back_up_range_gpu(
    step: PlyStep, start: int, stop: int, child_records: NDArray[np.uint8]
) -> tuple[NDArray[np.uint8], RecordCounts]:
    """:func:`back_up_range` on the GPU: the same bytes and counts."""
    rules = step.rules
    if not 0 <= start <= stop <= len(step.reps) * step.per_class:
        raise ValueError(f"numbers {start}..{stop} are not within ply {step.ply}")
    count = stop - start
    out = np.zeros(count, dtype=np.uint8)
    counts = np.zeros((3, 2, 2), dtype=np.int64)
    missing = np.zeros(1, dtype=np.int64)
    if count:
        device_out = cuda.to_device(out)
        device_counts = cuda.to_device(counts)
        device_missing = cuda.to_device(missing)
        kernel = _kernel()
        with warnings.catch_warnings():
            # a small ply is a small grid: Numba's warning of low occupancy says nothing here
            warnings.simplefilter("ignore", NumbaPerformanceWarning)
            launch = kernel[(count + THREADS - 1) // THREADS, THREADS]
        launch(
            step.ply,
            rules.cells,
            start,
            count,
            *_resident(step, child_records),
            device_out,
            device_counts,
            device_missing,
        )
        out = device_out.copy_to_host()
        counts = device_counts.copy_to_host()
        missing = device_missing.copy_to_host()
    if missing[0]:
        raise AssertionError(f"ply {step.ply}: {missing[0]} children stand at no position")
    return out, RecordCounts(counts)


_RESIDENT: tuple[PlyStep, NDArray[np.uint8], tuple[Any, ...]] | None = None
"""The arrays of the last ply step on the GPU, with the step and the children's records they
were copied from (held, so that ``is`` cannot match a new object at a reused address)."""


def _resident(step: PlyStep, child_records: NDArray[np.uint8]) -> tuple[Any, ...]:
    """The step's tables and the children's records on the GPU: copied once a ply, since every
    part of a ply reads the same (the children's records of a wide ply are gigabytes). The
    records must not change between the parts of a ply (a build's are a read-only map)."""
    global _RESIDENT
    if _RESIDENT is None or _RESIDENT[0] is not step or _RESIDENT[1] is not child_records:
        _RESIDENT = None  # the last ply's arrays go before the next ply's are copied
        rules = step.rules
        arrays = (
            cuda.to_device(step.reps),
            step.per_class,
            step.child_per_class,
            cuda.to_device(step.child_classes),
            cuda.to_device(step.child_symmetries),
            cuda.to_device(step.child_reps),
            cuda.to_device(cell_tables(rules)),
            cuda.to_device(np.array(rules.lines, dtype=np.int64)),
            cuda.to_device(binomials(rules.cells)),
            cuda.to_device(np.ascontiguousarray(child_records, dtype=np.uint8)),
        )
        _RESIDENT = (step, child_records, arrays)
    return _RESIDENT[2]


def release_gpu() -> None:
    """Free the GPU copies of the last ply step (a build calls this when it ends)."""
    global _RESIDENT
    _RESIDENT = None


_KERNEL: Any = None


def _kernel() -> Any:
    """The CUDA kernel, compiled on first use (importing this module needs no GPU)."""
    global _KERNEL
    if _KERNEL is None:
        _KERNEL = cuda.jit(_back_up_number)
    return _KERNEL


def _back_up_number(  # type: ignore[no-untyped-def]
    ply,
    cells,
    start,
    count,
    reps,
    per_class,
    child_per_class,
    child_classes,
    child_symmetries,
    child_reps,
    tables,
    lines,
    binom,
    child_records,
    out,
    counts,
    missing,
):
    """One number's record (the thread's), as the CPU kernel makes it."""
    i = cuda.grid(1)
    if i >= count:
        return
    index = start + i
    x_count = (ply + 1) // 2
    x_moves = ply % 2 == 0
    full = (1 << cells) - 1
    number = index // per_class
    compressed = unrank_set(index % per_class, ply // 2, cells - x_count, binom)
    rep = reps[number]
    free = full & ~rep
    o = expand(compressed, free)
    mover = rep if x_moves else o
    last_mover_common = _lines_held(o, lines) if x_moves else _lines_held(rep, lines)
    if _lines_held(mover, lines) != -1 or last_mover_common == 0:
        out[i] = NONE
        return
    canonical = 1
    fixing = 0
    for s in range(1, tables.shape[0]):
        if permute_set(rep, tables, s) == rep:
            fixing += 1
            if compress(permute_set(o, tables, s), free) < compressed:
                canonical = 0
    record = _end_record(last_mover_common, ply, cells)
    terminal = 1
    if record == NONE:
        terminal = 0
        top = -2 * WIN_SCORE
        empty = free & ~o
        while empty:
            bit = empty & -empty
            empty ^= bit
            if x_moves:
                child_rank = rank_set(rep | bit, binom)
                child_number = child_classes[child_rank]
                image = permute_set(o, tables, child_symmetries[child_rank])
                positions = compress(image, full & ~child_reps[child_number])
            else:
                child_number = number
                positions = compress(o | bit, free)
            child = child_number * child_per_class + rank_set(positions, binom)
            child_record = child_records[child]
            if child_record == NONE:
                cuda.atomic.add(missing, 0, 1)
                continue
            top = max(top, _move_score(_score(child_record)))
        record = _record(top)
    out[i] = record
    outcome = _outcome(record)
    cuda.atomic.add(counts, (outcome, terminal, 0), canonical)
    cuda.atomic.add(counts, (outcome, terminal, 1), tables.shape[0] // (fixing + 1))
