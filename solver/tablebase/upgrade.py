"""A table of format version 1 rewritten as version 2, in place, file by file.

Version 1's header was 256 bytes: the fields of version 2's up to its digest, then the
BLAKE2b-256 of the bytes after the header (the header outside it), then 12 counts
``[outcome][over][kind]``; its ranks and records are version 2's. Version 2 (a 1024-byte
header, a digest of every byte, the positions counted by record:
:mod:`solver.tablebase.files`) counts what version 1 did not, so each file is read whole once:
its version 1 digest is checked and its positions counted by record (:func:`count_range`),
the counts held to its header's 12; then it is written again under a temporary name, its
bytes checked against that digest on the way, and renamed over the old one. The folder's
``table.json`` is written last. A stop loses the file in hand at most; a rerun takes the
files still of version 1.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ttt_solve.errors import TttError
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.build import build_lock
from ttt_solve.solver.tablebase.classes import sets_of_ranks
from ttt_solve.solver.tablebase.files import (
    FORMAT_VERSION,
    MAGIC,
    MANIFEST,
    MANIFEST_LIMIT,
    Manifest,
    PlyEntry,
    TableError,
    TableFileError,
    TableHeader,
    header_rules,
    open_regular,
    ply_path,
    read_header,
    read_manifest,
    write_file,
    write_manifest,
)
from ttt_solve.solver.tablebase.index import stone_counts

V1 = 1
V1_HEADER_SIZE = 256
_V1_HEADER = struct.Struct("<8sH6B5Q32s12Q")
_PIECE = 1 << 24
"""Bytes hashed, counted or copied at once (16 MiB)."""

Progress = Callable[[int, int], None]
"""``progress(done, total)``: bytes read and written so far, of all this run will."""


@dataclass(frozen=True)
class V1File:
    """A version 1 file's header: its fields as version 2 holds them (no counts by record
    yet), the digest of its payload and its 12 counts."""

    header: TableHeader
    payload_digest: bytes
    counts: tuple[int, ...]


def file_version(path: Path) -> int:
    """The format version of a table file (a :class:`TableFileError` for no table file)."""
    with open_regular(path) as handle:
        start = handle.read(10)
    if len(start) < 10 or start[:8] != MAGIC:
        raise TableFileError(path, "not a ttt-solve table file (no TTTTABLE at its start)")
    return int.from_bytes(start[8:10], "little")


def read_v1(path: Path, rules: Rules, ply: int) -> V1File:
    """A version 1 file's header, each field checked as version 2's are, and its length."""
    with open_regular(path) as handle:
        data = handle.read(V1_HEADER_SIZE)
        size = handle.seek(0, 2)
    if len(data) < V1_HEADER_SIZE:
        raise TableFileError(path, f"truncated: {len(data)} bytes, not a whole header")
    fields = _V1_HEADER.unpack_from(data)
    if fields[0] != MAGIC or fields[1] != V1:
        raise TableFileError(path, "not a table file of format version 1")
    header = TableHeader.of_fields(header_rules(path, fields), fields)
    if (header.rules, header.ply) != (rules, ply):
        raise TableFileError(
            path, f"a table of {header.rules.name} ply {header.ply}, not of ply {ply}"
        )
    problem = header.problem(part=False)
    if problem is not None:
        raise TableFileError(path, f"{problem}: the file is damaged")
    if any(data[_V1_HEADER.size :]):
        raise TableFileError(path, "its header's padding is not zero: the file is damaged")
    wanted = V1_HEADER_SIZE + 8 * header.reps + header.count
    if size != wanted:
        raise TableFileError(path, f"{size:,} bytes where its header says {wanted:,}")
    return V1File(header, fields[13], tuple(fields[14:26]))


def upgrade_ply(
    path: Path, rules: Rules, ply: int, progress: Callable[[int], None] | None = None
) -> PlyEntry:
    """Rewrite one version 1 file as version 2 (whole or not at all); its manifest entry.
    ``progress(bytes)`` as it goes: the file's size twice (read, then rewritten)."""
    import numpy as np

    from ttt_solve.solver.tablebase.step import count_range, ply_step

    old = read_v1(path, rules, ply)
    header = old.header
    data = np.memmap(path, dtype=np.uint8, mode="r")
    records_at = V1_HEADER_SIZE + 8 * header.reps
    ranks = np.frombuffer(data[V1_HEADER_SIZE:records_at], dtype="<u8").astype(np.int64)
    reps = sets_of_ranks(ranks, stone_counts(ply)[0], rules.cells)
    step = ply_step(rules, ply, None, None)._replace(reps=reps)
    digest = hashlib.blake2b(data[V1_HEADER_SIZE:records_at].data, digest_size=32)
    records = data[records_at:]
    if progress is not None:
        progress(records_at)
    counts = None
    for first in range(0, header.count, _PIECE):
        piece = records[first : first + _PIECE]
        digest.update(piece.data)
        made = count_range(step, first, first + len(piece), piece)
        counts = made if counts is None else counts + made
        if progress is not None:
            progress(len(piece))
    if digest.digest() != old.payload_digest:
        raise TableFileError(path, "its checksum does not match: the file was altered or damaged")
    assert counts is not None  # a ply holds a number at least
    if tuple(int(count) for count in counts.counts.ravel()) != old.counts:
        raise TableFileError(path, "its records' counts are not its header's: the file is damaged")
    written, payload_digest = write_file(
        path,
        replace(header, histogram=counts.flat()),
        _pieces(data[V1_HEADER_SIZE:], progress),
        payload_digest_wanted=old.payload_digest,
    )
    del data
    if progress is not None:
        progress(V1_HEADER_SIZE)
    return PlyEntry.of(written, payload_digest)


def _pieces(payload: Any, progress: Callable[[int], None] | None) -> Iterator[memoryview]:
    for first in range(0, len(payload), _PIECE):
        piece = payload[first : first + _PIECE]
        yield memoryview(piece)
        if progress is not None:
            progress(len(piece))


def upgrade_table(folder: Path | str, progress: Progress | None = None) -> tuple[Manifest, int]:
    """Rewrite the finished version 1 table in ``folder`` as version 2, file by file, then
    its ``table.json``; returns the manifest and the files rewritten. A table of version 2
    already is left as it is; a rerun after a stop takes the files still of version 1."""
    folder = Path(folder)
    try:
        return read_manifest(folder), 0
    except TableFileError:
        pass  # version 1's, or damaged: read as version 1's below
    rules, entries = _v1_manifest(folder)
    paths = [ply_path(folder, ply) for ply in range(rules.cells + 1)]
    with build_lock(folder):
        for leftover in folder.glob("*.tmp"):
            leftover.unlink()  # a rewrite cut short: the old file is still there
        old = [path for path in paths if file_version(path) == V1]
        total = 2 * sum(path.stat().st_size for path in old)
        done = 0

        def advance(count: int) -> None:
            nonlocal done
            done += count
            if progress is not None:
                progress(done, total)

        made = []
        for ply, path in enumerate(paths):
            entry = entries[ply]
            if path in old:
                if read_v1(path, rules, ply).payload_digest.hex() != entry["blake2b"]:
                    raise TableFileError(path, "its digest is not the manifest's: another table's")
                made.append(upgrade_ply(path, rules, ply, advance))
            else:
                header = read_header(path, rules, ply)
                made.append(PlyEntry.of(header, bytes.fromhex(str(entry["blake2b"]))))
            if list(made[-1].counts) != entry["counts"]:
                raise TableFileError(path, "its counts are not the manifest's")
        manifest = Manifest(rules, tuple(made), FORMAT_VERSION)
        write_manifest(folder, manifest)
    return manifest, len(old)


def _v1_manifest(folder: Path) -> tuple[Rules, list[dict[str, object]]]:
    """The game and the plies of a version 1 ``table.json`` (no ``format``)."""
    path = folder / MANIFEST
    with open_regular(path) as handle:
        text = handle.read(MANIFEST_LIMIT + 1)
    try:
        data = json.loads(text)
        if "format" in data:
            raise ValueError(f"format {data['format']!r}")
        game = data["rules"]
        rules = Rules(game["rows"], game["cols"], game["k"])
        plies = data["plies"]
        if [entry["ply"] for entry in plies] != list(range(rules.cells + 1)):
            raise ValueError("not one entry a ply")
    except (ValueError, TypeError, KeyError, RecursionError, TttError) as error:
        raise TableError(
            f"{path}: not a finished table of format version 1 or 2 ({error})"
        ) from None
    return rules, plies
