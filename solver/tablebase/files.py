"""The files of a tablebase: one per ply, a fixed header, then the ply's index and records.

A file is written under a temporary name, flushed to the disk and renamed into place only when
complete, so a file that has its name is whole; its header carries a BLAKE2b digest of the rest,
which :func:`verify` checks. The layout, byte by byte, is in docs/tablebase.md.

* ``ply-PP.tb``: a ply's file: the header, the ranks of its X-set classes' representatives
  (``uint64``), then one record a number (``uint8``; :mod:`solver.tablebase.step`).
* ``ply-PP-part-NNNNNN.tb``: a part of a ply being built: the header, then the records of the
  numbers ``first .. first + count - 1``. A ply's parts are joined into its file when all are
  done, then removed.
"""

from __future__ import annotations

import errno
import hashlib
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ttt_solve.errors import TttError
from ttt_solve.solver.rules import Rules

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

MAGIC = b"TTTTABLE"
FORMAT_VERSION = 1
HEADER_SIZE = 256
INDEX_X_CLASSES = 1
"""Index kind 1: numbers by X-set class (:mod:`solver.tablebase.index`)."""
RECORD_VALUE_REMOTENESS = 1
"""Record kind 1: one byte of value and remoteness (:mod:`solver.tablebase.step`)."""

_HEADER = struct.Struct("<8sH6B5Q32s12Q")
_DIGEST_SIZE = 32
_COPY = 1 << 24
"""Bytes hashed or copied at once (16 MiB)."""


class TableError(TttError):
    """A tablebase problem that a user can act on."""


class TableFileError(TableError):
    """A table file is missing, truncated, altered or of another game; quotes the file."""

    def __init__(self, path: Path | str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)


class TableDiskFullError(TableError):
    """The disk cannot hold the table (or filled up while it was written)."""


@dataclass(frozen=True)
class TableHeader:
    """The header of a table file (see docs/tablebase.md for the bytes)."""

    rules: Rules
    ply: int
    classes: int
    per_class: int
    first: int
    count: int
    reps: int
    digest: bytes = b"\0" * _DIGEST_SIZE
    counts: tuple[int, ...] = (0,) * 12
    index_kind: int = INDEX_X_CLASSES
    record_kind: int = RECORD_VALUE_REMOTENESS

    @property
    def reps_at(self) -> int:
        """Where the representatives' ranks start: right after the header."""
        return HEADER_SIZE

    @property
    def records_at(self) -> int:
        """Where the records start: after the representatives' ranks (8 bytes each)."""
        return self.reps_at + 8 * self.reps

    @property
    def payload_size(self) -> int:
        return self.file_size - HEADER_SIZE

    @property
    def file_size(self) -> int:
        return self.records_at + self.count

    def pack(self) -> bytes:
        packed = _HEADER.pack(
            MAGIC,
            FORMAT_VERSION,
            self.rules.rows,
            self.rules.cols,
            self.rules.k,
            self.ply,
            self.index_kind,
            self.record_kind,
            self.classes,
            self.per_class,
            self.first,
            self.count,
            self.reps,
            self.digest,
            *self.counts,
        )
        return packed + b"\0" * (HEADER_SIZE - len(packed))

    @classmethod
    def unpack(cls, data: bytes, path: Path | str) -> TableHeader:
        if len(data) < HEADER_SIZE:
            raise TableFileError(path, f"truncated: {len(data)} bytes, not a whole header")
        fields = _HEADER.unpack_from(data)
        if fields[0] != MAGIC:
            raise TableFileError(path, "not a ttt-solve table file (no TTTTABLE at its start)")
        if fields[1] != FORMAT_VERSION:
            raise TableFileError(
                path, f"table format version {fields[1]}; this ttt-solve reads {FORMAT_VERSION}"
            )
        rows, cols, k, ply, index_kind, record_kind = fields[2:8]
        return cls(
            Rules(rows, cols, k),
            ply,
            classes=fields[8],
            per_class=fields[9],
            first=fields[10],
            count=fields[11],
            reps=fields[12],
            digest=fields[13],
            counts=tuple(fields[14:26]),
            index_kind=index_kind,
            record_kind=record_kind,
        )


def ply_path(folder: Path, ply: int) -> Path:
    return folder / f"ply-{ply:02d}.tb"


def part_path(folder: Path, ply: int, part: int) -> Path:
    return folder / f"ply-{ply:02d}-part-{part:06d}.tb"


def write_file(
    path: Path, header: TableHeader, payload: Iterable[bytes | memoryview]
) -> TableHeader:
    """Write a file whole or not at all: under a temporary name, its digest put in its header,
    flushed to the disk, then renamed. Returns the header written. A full disk raises
    :class:`TableDiskFullError` and leaves nothing behind."""
    temporary = path.with_name(path.name + ".tmp")
    digest = hashlib.blake2b(digest_size=_DIGEST_SIZE)
    try:
        with open(temporary, "wb") as out:
            out.write(b"\0" * HEADER_SIZE)
            for piece in payload:
                digest.update(piece)
                out.write(piece)
            header = replace(header, digest=digest.digest())
            out.seek(0)
            out.write(header.pack())
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
        _sync_folder(path.parent)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        if error.errno == errno.ENOSPC:
            raise TableDiskFullError(f"{path}: the disk is full; nothing of it was kept") from None
        raise
    return header


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries, so a rename survives a crash of the machine."""
    handle = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def read_header(path: Path, rules: Rules | None = None, ply: int | None = None) -> TableHeader:
    """The header of a file, checked against its length (a truncated file is refused), and
    against the game and the ply expected."""
    try:
        with open(path, "rb") as handle:
            header = TableHeader.unpack(handle.read(HEADER_SIZE), path)
            size = os.fstat(handle.fileno()).st_size
    except FileNotFoundError:
        raise TableFileError(path, "missing") from None
    if size != header.file_size:
        raise TableFileError(
            path, f"{size:,} bytes where its header says {header.file_size:,}: truncated or grown"
        )
    if rules is not None and header.rules != rules:
        raise TableFileError(path, f"a table of {header.rules.name}, not of {rules.name}")
    if ply is not None and header.ply != ply:
        raise TableFileError(path, f"a table of ply {header.ply}, not of ply {ply}")
    return header


def verify(path: Path, rules: Rules | None = None, ply: int | None = None) -> TableHeader:
    """:func:`read_header`, and the digest of everything after the header checked."""
    header = read_header(path, rules, ply)
    digest = hashlib.blake2b(digest_size=_DIGEST_SIZE)
    with open(path, "rb") as handle:
        handle.seek(HEADER_SIZE)
        while piece := handle.read(_COPY):
            digest.update(piece)
    if digest.digest() != header.digest:
        raise TableFileError(path, "its checksum does not match: the file was altered or damaged")
    return header


def payload_pieces(path: Path, skip: int = 0) -> Iterable[bytes]:
    """A file's payload after its first ``skip`` bytes, a piece at a time (to join parts)."""
    with open(path, "rb") as handle:
        handle.seek(HEADER_SIZE + skip)
        while piece := handle.read(_COPY):
            yield piece


def map_ply(path: Path, header: TableHeader) -> tuple[NDArray[np.uint64], NDArray[np.uint8]]:
    """A ply file's representatives' ranks and its records, memory-mapped (read-only)."""
    import numpy as np

    reps = np.memmap(path, dtype="<u8", mode="r", offset=header.reps_at, shape=(header.reps,))
    if header.count == 0:
        return np.asarray(reps), np.zeros(0, dtype=np.uint8)
    records = np.memmap(
        path, dtype=np.uint8, mode="r", offset=header.records_at, shape=(header.count,)
    )
    return np.asarray(reps), np.asarray(records)
