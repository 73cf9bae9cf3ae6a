"""The files of a tablebase: one per ply, a fixed header, then the ply's index and records.

A file is written under a temporary name, flushed to the disk and renamed into place only when
complete, so a file that has its name is whole. Its header carries a BLAKE2b digest of the
whole file (the header with its digest field zeroed, then the rest), which :func:`verify`
checks, and every other field of the header is checked against what the rules give whenever
a file is opened (:func:`read_header`). Only regular files are opened: a FIFO or a device
under a table's name is refused before anything could block on it. The layout, byte by byte,
is in docs/tablebase.md.

* ``ply-PP.tb``: a ply's file: the header, the ranks of its X-set classes' representatives
  (``uint64``), then one record a number (``uint8``; :mod:`solver.tablebase.record`).
* ``ply-PP-part-NNNNNN.tb``: a part of a ply being built: the header, then the records of the
  numbers ``first .. first + count - 1``. A ply's parts are joined into its file when all are
  done, then removed.
* ``table.json``: written last, the game and each ply's file, digests and counts
  (:class:`Manifest`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from math import comb
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from ttt_solve.errors import TttError
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.index import MAX_TABLE_CELLS, class_count, stone_counts
from ttt_solve.solver.tablebase.record import RECORD_SLOTS, RecordCounts

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

MAGIC = b"TTTTABLE"
FORMAT_VERSION = 2
HEADER_SIZE = 1024
INDEX_X_CLASSES = 1
"""Index kind 1: numbers by X-set class (:mod:`solver.tablebase.index`)."""
RECORD_VALUE_REMOTENESS = 1
"""Record kind 1: one byte of value and remoteness (:mod:`solver.tablebase.record`)."""

MANIFEST = "table.json"
"""Written last: the game, each ply's digests and counts. Its presence says the table is whole."""

MANIFEST_LIMIT = 1 << 20
"""The most bytes a manifest is read to (a 25-cell table's is about 20 kB)."""

_HEADER = struct.Struct(f"<8sH6B5Q32s{2 * RECORD_SLOTS}Q")
_DIGEST_AT = 56
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


class MissingTableError(TableError, LookupError):
    """No finished table in the folder, or a ply's file missing from it; quotes the path."""


class TableDiskFullError(TableError):
    """The disk cannot hold the table (or filled up while it was written)."""


class HeaderOpening(Protocol):
    """What every table file's header, raw or compressed, says after its magic and version."""

    @property
    def rules(self) -> Rules: ...
    @property
    def ply(self) -> int: ...
    @property
    def index_kind(self) -> int: ...
    @property
    def record_kind(self) -> int: ...


def header_opening(magic: bytes, version: int, header: HeaderOpening) -> tuple[bytes | int, ...]:
    """The fields a table file's header opens with, raw or compressed, in the order they are
    packed: the magic and format version, the game, the ply, the index and record kinds."""
    return (
        magic,
        version,
        header.rules.rows,
        header.rules.cols,
        header.rules.k,
        header.ply,
        header.index_kind,
        header.record_kind,
    )


def header_rules(path: Path | str, fields: tuple[Any, ...]) -> Rules:
    """The game named by a header's unpacked ``fields`` (in :func:`header_opening`'s order),
    or a :class:`TableFileError` quoting them."""
    rows, cols, k = fields[2:5]
    try:
        return Rules(rows, cols, k)
    except (TttError, ValueError):
        raise TableFileError(
            path, f"its header names no game ({rows} rows, {cols} columns, k={k})"
        ) from None


@dataclass(frozen=True)
class TableHeader:
    """The header of a table file (see docs/tablebase.md for the bytes), and where in the file
    the representatives' ranks and the records start."""

    rules: Rules
    ply: int
    classes: int
    per_class: int
    first: int
    count: int
    reps: int
    histogram: tuple[int, ...] = (0,) * (2 * RECORD_SLOTS)
    """The positions holding each record, :attr:`RecordCounts.by_record` flat."""
    digest: bytes = b"\0" * _DIGEST_SIZE
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
    def file_size(self) -> int:
        return self.records_at + self.count

    @property
    def record_counts(self) -> RecordCounts:
        return RecordCounts.of(self.histogram, self.ply == self.rules.cells)

    @property
    def counts(self) -> tuple[int, ...]:
        """The 12 counts ``[outcome][terminal][kind]`` (:attr:`RecordCounts.counts`, flat):
        what a manifest and a compressed file keep."""
        return tuple(int(count) for count in self.record_counts.counts.ravel())

    def pack(self) -> bytes:
        packed = _HEADER.pack(
            *header_opening(MAGIC, FORMAT_VERSION, self),
            self.classes,
            self.per_class,
            self.first,
            self.count,
            self.reps,
            self.digest,
            *self.histogram,
        )
        return packed + b"\0" * (HEADER_SIZE - len(packed))

    @classmethod
    def unpack(cls, data: bytes, path: Path | str) -> TableHeader:
        """The header in ``data``; a :class:`TableFileError` naming the file and the field
        for a header no build writes (its digest is not checked here)."""
        if len(data) < 10 or data[:8] != MAGIC:
            if len(data) < HEADER_SIZE:
                raise TableFileError(path, f"truncated: {len(data)} bytes, not a whole header")
            raise TableFileError(path, "not a ttt-solve table file (no TTTTABLE at its start)")
        version = int.from_bytes(data[8:10], "little")
        if version != FORMAT_VERSION:
            raise TableFileError(
                path,
                f"a table file of format version {version}; this ttt-solve reads version "
                f"{FORMAT_VERSION}: build the table again (ttt table build remakes every file "
                "of another version)",
            )
        if len(data) < HEADER_SIZE:
            raise TableFileError(path, f"truncated: {len(data)} bytes, not a whole header")
        fields = _HEADER.unpack_from(data)
        if any(data[_HEADER.size : HEADER_SIZE]):
            raise TableFileError(path, "its header's padding is not zero: the file is damaged")
        return cls.of_fields(
            header_rules(path, fields), fields, digest=fields[13], histogram=tuple(fields[14:])
        )

    @classmethod
    def of_fields(cls, rules: Rules, fields: tuple[Any, ...], **more: Any) -> TableHeader:
        """The header of a file's unpacked ``fields`` (format 1 or 2: both open alike, to the
        representatives' count), ``more`` for the fields of one format only."""
        return cls(
            rules,
            fields[5],
            classes=fields[8],
            per_class=fields[9],
            first=fields[10],
            count=fields[11],
            reps=fields[12],
            index_kind=fields[6],
            record_kind=fields[7],
            **more,
        )

    def problem(self, part: bool) -> str | None:
        """The first field that is not what the rules give, said as ``"its header's FIELD is
        FOUND, where the rules give EXPECTED"``; ``part``: the header of a part of a ply (no
        representatives), not of a ply's file."""
        rules = self.rules
        x, o = stone_counts(self.ply)
        records = self.classes * self.per_class
        # plain integers: a one-position look-up opens headers without loading NumPy
        canonical = sum(self.histogram[:RECORD_SLOTS])
        no_position = self.histogram[0] + self.histogram[RECORD_SLOTS]
        checks: list[tuple[str, object, bool, object]] = [
            ("cells", rules.cells, rules.cells <= MAX_TABLE_CELLS, f"at most {MAX_TABLE_CELLS}"),
            ("ply", self.ply, self.ply <= rules.cells, f"at most {rules.cells}"),
            ("index kind", self.index_kind, self.index_kind == INDEX_X_CLASSES, INDEX_X_CLASSES),
            (
                "record kind",
                self.record_kind,
                self.record_kind == RECORD_VALUE_REMOTENESS,
                RECORD_VALUE_REMOTENESS,
            ),
        ]
        if all(ok for _, _, ok, _ in checks):
            expected_classes = class_count(rules, x)
            per_class = comb(rules.cells - x, o)
            reps = 0 if part else self.classes
            checks += [
                ("classes", self.classes, self.classes == expected_classes, expected_classes),
                ("numbers per class", self.per_class, self.per_class == per_class, per_class),
                ("representatives", self.reps, self.reps == reps, reps),
            ]
        if part:
            within = 0 <= self.first < records and 0 < self.count <= records - self.first
            span = f"{self.first:,} + {self.count:,}"
            checks.append(("numbers", span, within, f"numbers within {records:,}"))
        else:
            checks += [
                ("first number", self.first, self.first == 0, 0),
                ("numbers", self.count, self.count == records, records),
            ]
        checks += [
            ("count of positions at no record", no_position, no_position == 0, 0),
            (
                "count of canonical positions",
                canonical,
                canonical <= self.count,
                f"at most {self.count:,}",
            ),
        ]
        for name, found, ok, expected in checks:
            if not ok:
                return f"its header's {name} is {found}, where the rules give {expected}"
        return None


def ply_path(folder: Path, ply: int) -> Path:
    return folder / f"ply-{ply:02d}.tb"


def part_path(folder: Path, ply: int, part: int) -> Path:
    return folder / f"ply-{ply:02d}-part-{part:06d}.tb"


def open_regular(path: Path) -> IO[bytes]:
    """``path`` opened to read, refused (:class:`TableFileError`) unless it is a regular file:
    a FIFO or a device under a table's name would block a reader or never end. The check is
    made on the file opened, which opening cannot block on."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise TableFileError(path, "missing") from None
    except IsADirectoryError:
        raise TableFileError(path, "a folder, not a table file") from None
    except ValueError:  # a NUL in the name, which no file can have
        raise TableFileError(path, "no file can have this name") from None
    mode = os.fstat(handle).st_mode
    if not stat.S_ISREG(mode):
        os.close(handle)
        raise TableFileError(path, f"{_kind_of(mode)}, not a regular file: refused")
    os.set_blocking(handle, True)
    return os.fdopen(handle, "rb")


def _kind_of(mode: int) -> str:
    kinds = [
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ]
    return next((name for test, name in kinds if test(mode)), "not a file")


def write_file(
    path: Path,
    header: TableHeader,
    payload: Iterable[bytes | memoryview],
    payload_digest_wanted: bytes | None = None,
) -> tuple[TableHeader, bytes]:
    """Write a file whole or not at all: under a temporary name, its digest put in its header,
    flushed to the disk, then renamed. Returns the header written and the digest of its
    payload (the bytes after the header). A full disk raises :class:`TableDiskFullError` and
    leaves nothing behind; so does a payload whose digest is not ``payload_digest_wanted``
    (where given), raising :class:`TableFileError`."""
    temporary = path.with_name(path.name + ".tmp")
    unsigned = replace(header, digest=b"\0" * _DIGEST_SIZE).pack()
    whole = hashlib.blake2b(unsigned, digest_size=_DIGEST_SIZE)
    payload_digest = hashlib.blake2b(digest_size=_DIGEST_SIZE)
    try:
        with open(temporary, "wb") as out:
            out.write(unsigned)
            for piece in payload:
                whole.update(piece)
                payload_digest.update(piece)
                out.write(piece)
            if payload_digest_wanted not in (None, payload_digest.digest()):
                raise TableFileError(
                    path, "the bytes to write are not those expected (their digest differs)"
                )
            header = replace(header, digest=whole.digest())
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
    except BaseException:
        temporary.unlink(missing_ok=True)  # a refusal or a stop: nothing half-written kept
        raise
    return header, payload_digest.digest()


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries, so a rename survives a crash of the machine."""
    handle = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def read_header(
    path: Path, rules: Rules | None = None, ply: int | None = None, part: bool = False
) -> TableHeader:
    """The header of a file, each field checked against what the rules give, against the
    file's length (a truncated file is refused), and against the game and the ply expected.
    ``part``: a part of a ply being built."""
    with open_regular(path) as handle:
        header = TableHeader.unpack(handle.read(HEADER_SIZE), path)
        size = os.fstat(handle.fileno()).st_size
    if rules is not None and header.rules != rules:
        raise TableFileError(path, f"a table of {header.rules.name}, not of {rules.name}")
    if ply is not None and header.ply != ply:
        raise TableFileError(path, f"a table of ply {header.ply}, not of ply {ply}")
    problem = header.problem(part)
    if problem is not None:
        raise TableFileError(path, f"{problem}: the file is damaged")
    if size != header.file_size:
        raise TableFileError(
            path, f"{size:,} bytes where its header says {header.file_size:,}: truncated or grown"
        )
    return header


def verify_digests(
    path: Path, rules: Rules | None = None, ply: int | None = None, part: bool = False
) -> tuple[TableHeader, bytes]:
    """:func:`read_header`, and the digest of the whole file checked; returns the header and
    the digest of the payload (the bytes after the header: the digest format version 1 kept
    in the header, which the published manifests of those tables hold)."""
    header = read_header(path, rules, ply, part)
    unsigned = replace(header, digest=b"\0" * _DIGEST_SIZE).pack()
    whole = hashlib.blake2b(unsigned, digest_size=_DIGEST_SIZE)
    payload_digest = hashlib.blake2b(digest_size=_DIGEST_SIZE)
    with open_regular(path) as handle:
        handle.seek(HEADER_SIZE)
        while piece := handle.read(_COPY):
            whole.update(piece)
            payload_digest.update(piece)
    if whole.digest() != header.digest:
        raise TableFileError(path, "its checksum does not match: the file was altered or damaged")
    return header, payload_digest.digest()


def verify(path: Path, rules: Rules | None = None, ply: int | None = None) -> TableHeader:
    """:func:`read_header` of a ply's file, and the digest of the whole file checked."""
    return verify_digests(path, rules, ply)[0]


def payload_pieces(path: Path, skip: int = 0) -> Iterator[bytes]:
    """A file's payload after its first ``skip`` bytes, a piece at a time (to join parts)."""
    with open_regular(path) as handle:
        handle.seek(HEADER_SIZE + skip)
        while piece := handle.read(_COPY):
            yield piece


def map_ply(path: Path, header: TableHeader) -> tuple[NDArray[np.uint64], NDArray[np.uint8]]:
    """A ply file's representatives' ranks and its records, memory-mapped (read-only)."""
    import numpy as np

    with open_regular(path):
        pass  # refused before NumPy opens it, if it is no regular file
    reps = np.memmap(path, dtype="<u8", mode="r", offset=header.reps_at, shape=(header.reps,))
    if header.count == 0:
        return np.asarray(reps), np.zeros(0, dtype=np.uint8)
    records = np.memmap(
        path, dtype=np.uint8, mode="r", offset=header.records_at, shape=(header.count,)
    )
    return np.asarray(reps), np.asarray(records)


# -- the manifest ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PlyEntry:
    """A ply's line in the manifest: its file, numbers, digests (of the whole file, and of
    its payload alone) and counts ``[outcome][terminal][kind]`` (:attr:`RecordCounts.counts`,
    flat)."""

    ply: int
    file: str
    records: int
    blake2b: str
    payload_blake2b: str
    counts: tuple[int, ...]

    @classmethod
    def of(cls, header: TableHeader, payload_digest: bytes) -> PlyEntry:
        return cls(
            header.ply,
            ply_path(Path(), header.ply).name,
            header.count,
            header.digest.hex(),
            payload_digest.hex(),
            header.counts,
        )


@dataclass(frozen=True)
class Manifest:
    """A finished table's ``table.json``: the game, and each ply's :class:`PlyEntry`."""

    rules: Rules
    plies: tuple[PlyEntry, ...]
    format: int = FORMAT_VERSION

    def to_json(self) -> str:
        data = {
            "format": self.format,
            "rules": self.rules.as_dict(),
            "plies": [
                {
                    "ply": entry.ply,
                    "file": entry.file,
                    "records": entry.records,
                    "blake2b": entry.blake2b,
                    "payload_blake2b": entry.payload_blake2b,
                    "counts": list(entry.counts),
                }
                for entry in self.plies
            ],
        }
        return json.dumps(data, indent=1) + "\n"

    def digest(self, ply: int) -> str | None:
        """The digest of ply ``ply``'s file, or ``None`` where the manifest has no such ply."""
        return next((entry.blake2b for entry in self.plies if entry.ply == ply), None)


def read_manifest(folder: Path) -> Manifest:
    """The manifest of the finished table in ``folder``: a :class:`MissingTableError` when
    there is none (the table is not finished), a :class:`TableFileError` naming it when it is
    no regular file, too long, not JSON or not a manifest of this format."""
    return manifest_of(manifest_json(folder), folder / MANIFEST)


def manifest_json(folder: Path) -> Any:
    """The JSON of ``folder``'s manifest, of whatever form (a raw table's, a compressed
    one's), read from a regular file to at most :data:`MANIFEST_LIMIT` bytes; the errors of
    :func:`read_manifest`."""
    path = folder / MANIFEST
    try:
        handle = open_regular(path)
    except TableFileError as error:
        if not os.path.lexists(path):
            raise MissingTableError(
                f"{folder}: no finished table here (no {MANIFEST}); build it first"
            ) from None
        raise error from None
    with handle:
        text = handle.read(MANIFEST_LIMIT + 1)
    if len(text) > MANIFEST_LIMIT:
        raise TableFileError(path, f"longer than {MANIFEST_LIMIT:,} bytes: not a table manifest")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise TableFileError(path, f"not a table manifest ({_reason(error)})") from None


def manifest_of(data: Any, path: Path) -> Manifest:
    """The :class:`Manifest` a raw table's manifest's JSON holds (read from ``path``)."""
    try:
        version = _version(data)
        if version == FORMAT_VERSION:
            return _manifest_of(data)
    except (ValueError, TypeError, KeyError, RecursionError, TttError) as error:
        raise TableFileError(path, f"not a table manifest ({_reason(error)})") from None
    raise TableFileError(
        path,
        f"a manifest of format version {version}; this ttt-solve reads version "
        f"{FORMAT_VERSION}: build the table again (ttt table build)",
    )


def _version(data: Any) -> int:
    """A manifest's format version (1 had none: the game and its plies only)."""
    if isinstance(data, dict) and "format" not in data and {"rules", "plies"} <= data.keys():
        return 1
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return _int(data, "format")


def _reason(error: BaseException) -> str:
    if isinstance(error, KeyError):
        return f"no {error.args[0]!r}"
    if isinstance(error, RecursionError):
        return "nested too deep"
    return " ".join(str(error).split())[:200]


def _manifest_of(data: dict[str, Any]) -> Manifest:
    game = data["rules"]
    if not isinstance(game, dict):
        raise ValueError("'rules' is not an object")
    rules = Rules(_int(game, "rows"), _int(game, "cols"), _int(game, "k"))
    entries = data["plies"]
    if not isinstance(entries, list) or len(entries) != rules.cells + 1:
        raise ValueError(f"'plies' is not a list of {rules.cells + 1} plies")
    plies = []
    for ply, entry in enumerate(entries):
        if not isinstance(entry, dict) or _int(entry, "ply") != ply:
            raise ValueError(f"entry {ply} of 'plies' is not ply {ply}'s")
        counts = entry["counts"]
        if not isinstance(counts, list) or len(counts) != 12:
            raise ValueError(f"ply {ply}'s 'counts' are not 12 numbers")
        plies.append(
            PlyEntry(
                ply,
                _text(entry, "file"),
                _int(entry, "records"),
                _text(entry, "blake2b"),
                _text(entry, "payload_blake2b"),
                tuple(_int({"count": count}, "count") for count in counts),
            )
        )
    return Manifest(rules, tuple(plies))


def _int(data: dict[str, Any], key: str) -> int:
    value = data[key]
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{key!r} is not a whole number")
    return value


def _text(data: dict[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise TypeError(f"{key!r} is not a string")
    return value


def write_manifest(folder: Path, manifest: Manifest) -> Path:
    """Write ``table.json`` whole or not at all (last: its presence says the table is done)."""
    path = folder / MANIFEST
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w") as out:
        out.write(manifest.to_json())
        out.flush()
        os.fsync(out.fileno())
    temporary.replace(path)
    _sync_folder(folder)
    return path
