"""The tablebase's ply step on a CUDA GPU (Numba's CUDA target): the twin of
:func:`solver.tablebase.step.back_up_range`.

The work is the CPU kernel's, from the same source: the formulas of
:mod:`solver.tablebase.index`, :mod:`solver.tablebase.record` and :mod:`solver.tablebase.step`
compiled again as device functions. A part's numbers take two launches: one thread per class
of the part fills in what the class's numbers share (:func:`~solver.tablebase.step.land_class`),
then one thread per number unranks its own O set (a thread cannot step through a run of
numbers as a CPU block does) and backs it up
(:func:`~solver.tablebase.step.back_up_number`). The two kernels must give the same bytes: the
tests run this one on Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, no GPU needed)
against the CPU kernel on small boards. :func:`back_up_range_on` chooses: the GPU when one is
present or asked for, with :class:`GpuUnavailableError` when one is asked for and absent.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numba.cuda
import numpy as np
from numba.core.errors import NumbaPerformanceWarning
from numpy.typing import NDArray

from ttt_solve.errors import TttError
from ttt_solve.solver.tablebase.compiled import FORMULAS
from ttt_solve.solver.tablebase.index import twins
from ttt_solve.solver.tablebase.record import NONE, RECORD_SLOTS, RecordCounts
from ttt_solve.solver.tablebase.step import FORMULAS as STEP_FORMULAS
from ttt_solve.solver.tablebase.step import PlyStep, back_up_range, in_pieces
from ttt_solve.solver.vocabulary import Device

cuda: Any = numba.cuda
"""Numba's CUDA target, untyped for mypy (under the simulator, the simulator's module)."""

_DEVICE = twins(FORMULAS + STEP_FORMULAS, cuda.jit(device=True))
"""Every formula compiled as a device function, by name."""
land_class_gpu = _DEVICE["land_class"]
back_up_number_gpu = _DEVICE["back_up_number"]
compressed_o_gpu = _DEVICE["compressed_o"]
expand_gpu = _DEVICE["expand"]
lines_held_gpu = _DEVICE["lines_held"]

THREADS = 256
"""Threads a CUDA block."""

MAX_CELLS = 32
"""Room a thread keeps for its children's numbers."""


class GpuUnavailableError(TttError):
    """A GPU was asked for and there is none (or Numba cannot reach it)."""


def gpu_available() -> bool:
    """Whether Numba sees a CUDA device (the simulator counts as one)."""
    try:
        return bool(cuda.is_available())
    except Exception:  # noqa: BLE001 - a broken driver is no device
        return False


def gpu_chosen(device: Device | str) -> bool:
    """Whether ``device`` (a :class:`Device` or its word) runs the ply step on the GPU."""
    chosen = Device.parse(device, "device")
    return chosen is Device.GPU or (chosen is Device.AUTO and gpu_available())


def back_up_range_on(
    device: Device | str, step: PlyStep, start: int, stop: int, child_records: NDArray[np.uint8]
) -> tuple[NDArray[np.uint8], RecordCounts]:
    """:func:`back_up_range` on ``device``: the CPU, the GPU (an error without one) or
    ``auto`` (the GPU when one is present)."""
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
    return in_pieces(step, start, stop, child_records, _back_up_piece)


def _back_up_piece(
    step: PlyStep, start: int, child_records: NDArray[np.uint8], out: NDArray[np.uint8]
) -> tuple[NDArray[np.int64], int]:
    """The numbers from ``start`` on, as many as ``out`` holds, on the GPU (a
    :data:`~solver.tablebase.step.PieceKernel`)."""
    count = len(out)
    counts = np.zeros((2, RECORD_SLOTS), dtype=np.int64)
    if count == 0:
        return counts, 0
    on_device, device_records = _resident(step, child_records)
    part = _part_classes(step, start, start + count)
    device_out = cuda.device_array(count, dtype=np.uint8)
    device_counts = cuda.to_device(counts)
    device_missing = cuda.to_device(np.zeros(1, dtype=np.int64))
    with warnings.catch_warnings():
        # a small ply is a small grid: Numba's warning of low occupancy says nothing here
        warnings.simplefilter("ignore", NumbaPerformanceWarning)
        land, back_up = _kernels()
        land[_blocks(len(part.fixing)), THREADS](on_device, part)
        back_up[_blocks(count), THREADS](
            on_device, part, start, count, device_records, device_out, device_counts, device_missing
        )
    device_out.copy_to_host(out)
    return device_counts.copy_to_host(), int(device_missing.copy_to_host()[0])


class PartClasses(NamedTuple):
    """What the numbers of each class of a part share (:func:`~solver.tablebase.step.land_class`),
    on the GPU: the classes ``first`` on, a row each."""

    first: int
    child_base: Any
    landing: Any
    stabiliser: Any
    fixing: Any


def _part_classes(step: PlyStep, start: int, stop: int) -> PartClasses:
    """Room on the GPU for the classes of the numbers ``start .. stop-1``."""
    first = start // step.per_class
    classes = (stop - 1) // step.per_class - first + 1
    return PartClasses(
        first,
        cuda.device_array((classes, step.cells), dtype=np.int64),
        cuda.device_array((classes, step.cells, step.cells), dtype=np.int64),
        cuda.device_array((classes, 8), dtype=np.int64),
        cuda.device_array(classes, dtype=np.int64),
    )


def _blocks(threads: int) -> int:
    return (threads + THREADS - 1) // THREADS


_RESIDENT: tuple[PlyStep, NDArray[np.uint8], tuple[PlyStep, Any]] | None = None
"""The arrays of the last ply step on the GPU, with the step and the children's records they
were copied from (held, so that ``is`` cannot match a new object at a reused address)."""


def _resident(step: PlyStep, child_records: NDArray[np.uint8]) -> tuple[PlyStep, Any]:
    """The step with its arrays on the GPU, and the children's records there: copied once a
    ply, since every part of a ply reads the same (the children's records of a wide ply are
    gigabytes). The records must not change between the parts of a ply (a build's are a
    read-only map)."""
    global _RESIDENT
    if _RESIDENT is None or _RESIDENT[0] is not step or _RESIDENT[1] is not child_records:
        _RESIDENT = None  # the last ply's arrays go before the next ply's are copied
        on_device = step._replace(
            reps=cuda.to_device(step.reps),
            child_classes=cuda.to_device(step.child_classes),
            child_symmetries=cuda.to_device(step.child_symmetries),
            child_reps=cuda.to_device(step.child_reps),
            tables=cuda.to_device(step.tables),
            lines=cuda.to_device(step.lines),
            binom=cuda.to_device(step.binom),
        )
        records = cuda.to_device(np.ascontiguousarray(child_records, dtype=np.uint8))
        _RESIDENT = (step, child_records, (on_device, records))
    return _RESIDENT[2]


def release_gpu() -> None:
    """Free the GPU copies of the last ply step (a build calls this when it ends)."""
    global _RESIDENT
    _RESIDENT = None


_KERNELS: tuple[Any, Any] | None = None


def _kernels() -> tuple[Any, Any]:
    """The two CUDA kernels, compiled on first use (importing this module needs no GPU)."""
    global _KERNELS
    if _KERNELS is None:
        _KERNELS = (cuda.jit(_land_classes), cuda.jit(_back_up_numbers))
    return _KERNELS


def _land_classes(step, part):  # type: ignore[no-untyped-def]
    """One class of the part (the thread's): :func:`~solver.tablebase.step.land_class`."""
    i = cuda.grid(1)
    if i >= len(part.fixing):
        return
    number = part.first + i
    part.fixing[i] = land_class_gpu(
        number, step.reps[number], step, part.child_base[i], part.landing[i], part.stabiliser[i]
    )


def _back_up_numbers(step, part, start, count, child_records, out, counts, missing):  # type: ignore[no-untyped-def]
    """One number of the part (the thread's): :func:`~solver.tablebase.step.back_up_number`,
    as the CPU kernel calls it."""
    i = cuda.grid(1)
    if i >= count:
        return
    index = start + i
    number = index // step.per_class
    c = number - part.first
    rep = step.reps[number]
    compressed = compressed_o_gpu(index % step.per_class, step)
    o = expand_gpu(compressed, ((1 << step.cells) - 1) & ~rep)
    children = cuda.local.array(MAX_CELLS, dtype=np.int64)
    fixing = part.fixing[c]
    record, canonical, lost = back_up_number_gpu(
        o,
        compressed,
        rep,
        lines_held_gpu(rep, step.lines),
        fixing,
        part.stabiliser[c],
        part.child_base[c],
        part.landing[c],
        children,
        step,
        child_records,
    )
    out[i] = record
    if record == NONE:
        return
    if lost:
        cuda.atomic.add(missing, 0, lost)
    cuda.atomic.add(counts, (0, record), canonical)
    cuda.atomic.add(counts, (1, record), step.symmetries // (fixing + 1))
