"""A tablebase compressed: each ply's records in independent zstd blocks, read one block at a time.

A compressed ply file, ``ply-PP.tbz``, holds what its raw file does (:mod:`solver.tablebase.files`)
in about a twentieth of the bytes. Its records are cut into blocks of ``block_records`` numbers,
each compressed alone (a zstd frame), so a look-up decodes one block and no more; a block table
gives each block's place and its own BLAKE2b-64 digest, and the header's BLAKE2b-256 digest
covers the header, the representatives' ranks and the block table, so every byte of the file
lies under a digest that a reader checks: the head when the file is opened, a block when it is
decoded. The layout, byte by byte, is in docs/table-format.md.

Records known from the stones alone (:mod:`solver.tablebase.known`) are stored as a draw, the
commonest record, whatever they are: a reader computes them again. Only a stored draw can hide
one, so a stored record other than a draw is the record.

``zstandard`` is an optional dependency (the ``compressed`` extra): nothing here imports it
until a block is compressed or decoded.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from math import comb
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ttt_solve.errors import install_hint
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.files import (
    INDEX_X_CLASSES,
    RECORD_VALUE_REMOTENESS,
    TableDiskFullError,
    TableError,
    TableFileError,
    _sync_folder,
    header_opening,
    header_rules,
)
from ttt_solve.solver.tablebase.index import stone_counts
from ttt_solve.solver.tablebase.lookup import PlyIndex, stored_ranks
from ttt_solve.solver.tablebase.record import DRAW, RECORD_SLOTS, RecordCounts

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

MAGIC = b"TTTBLOCK"
FORMAT_VERSION = 1
HEADER_SIZE = 256
CODEC_ZSTD = 1
"""Codec 1: each block a zstd frame (RFC 8878) with its content size."""
KNOWN_RULES = 1
"""Known-record rules 1: those of :mod:`solver.tablebase.known`."""
BLOCK_RECORDS = 1 << 14
"""Numbers a block holds by default: 16 Ki (docs/table-format.md says why)."""
LEVEL = 9
"""The zstd level compressions use by default. On the records of 4x5 k=4's plies 10, 13 and
16 as the writer stores them, level 9 is 12% larger than level 15 and ten times faster (45.6
MB a CPU second against 4.4: ``bench/bench_compressed.py FOLDER --levels 15,12,9,6``), so the
rules' own pass (the records the stones give) is most of a compression's time; level 12 is
no smaller than 9 at half its speed. Decoders need not know the level."""
FEW_NUMBERS = 64
"""At most this many numbers (a position and its moves) are read one by one, not as arrays."""
SUFFIX = ".tbz"
EXTRA = "compressed"
"""The optional extra that installs zstandard."""

_HEADER = struct.Struct("<8sH8B6x5Q12Q32s")
_DIGEST_AT = _HEADER.size - 32
_BLOCK_ENTRY = struct.Struct("<Q8s")
_RANK = struct.Struct("<I")
"""A representative's rank: 4 bytes suffice (``C(32, 16) < 2**32``)."""
_CHUNK_BLOCKS = 256
"""Blocks compressed at once (4 Mi numbers by default)."""


@dataclass(frozen=True)
class Compression:
    """How a table's records are compressed: the numbers a block holds, and the zstd level."""

    block_records: int = BLOCK_RECORDS
    level: int = LEVEL


COMPRESSION = Compression()
"""How a table is compressed unless told otherwise."""


class MissingZstandardError(TableError):
    """Compressed tables need the ``zstandard`` package, which is not installed."""


def zstandard() -> ModuleType:
    """The ``zstandard`` module, or one line saying which extra installs it."""
    try:
        import zstandard as module
    except ImportError:
        raise MissingZstandardError(
            f"compressed tables need the zstandard package: {install_hint(EXTRA)}"
        ) from None
    return module


def compressed_path(folder: Path, ply: int) -> Path:
    return folder / f"ply-{ply:02d}{SUFFIX}"


@dataclass(frozen=True)
class CompressedHeader:
    """The header of a compressed ply file (docs/table-format.md)."""

    rules: Rules
    ply: int
    classes: int
    per_class: int
    count: int
    block_records: int
    blocks: int
    counts: tuple[int, ...] = (0,) * 12
    digest: bytes = b"\0" * 32
    codec: int = CODEC_ZSTD
    known_rules: int = KNOWN_RULES
    index_kind: int = INDEX_X_CLASSES
    record_kind: int = RECORD_VALUE_REMOTENESS

    @property
    def table_at(self) -> int:
        """Where the block table starts (after the header and the representatives' ranks)."""
        return HEADER_SIZE + _RANK.size * self.classes

    @property
    def data_at(self) -> int:
        """Where the first block starts: the end of the head."""
        return self.table_at + _BLOCK_ENTRY.size * self.blocks

    def pack(self) -> bytes:
        packed = _HEADER.pack(
            *header_opening(MAGIC, FORMAT_VERSION, self),
            self.codec,
            self.known_rules,
            self.classes,
            self.per_class,
            self.count,
            self.block_records,
            self.blocks,
            *self.counts,
            self.digest,
        )
        return packed + b"\0" * (HEADER_SIZE - len(packed))

    @classmethod
    def unpack(cls, data: bytes, path: Path | str) -> CompressedHeader:
        if len(data) < HEADER_SIZE:
            raise TableFileError(path, f"truncated: {len(data)} bytes, not a whole header")
        fields = _HEADER.unpack_from(data)
        if fields[0] != MAGIC:
            raise TableFileError(path, "not a compressed table file (no TTTBLOCK at its start)")
        if fields[1] != FORMAT_VERSION:
            raise TableFileError(
                path,
                f"compressed table format version {fields[1]}; this ttt-solve reads "
                f"{FORMAT_VERSION}",
            )
        ply, index_kind, record_kind, codec, known_rules = fields[5:10]
        return cls(
            header_rules(path, fields),
            ply,
            classes=fields[10],
            per_class=fields[11],
            count=fields[12],
            block_records=fields[13],
            blocks=fields[14],
            counts=tuple(fields[15:27]),
            digest=fields[27],
            codec=codec,
            known_rules=known_rules,
            index_kind=index_kind,
            record_kind=record_kind,
        )

    def problems(self) -> Iterator[str]:
        """What in the header is not what the rules give (any, for a damaged head)."""
        x, o = stone_counts(self.ply)
        expected = {
            "index kind": (self.index_kind, INDEX_X_CLASSES),
            "record kind": (self.record_kind, RECORD_VALUE_REMOTENESS),
            "codec": (self.codec, CODEC_ZSTD),
            "known-record rules": (self.known_rules, KNOWN_RULES),
            "numbers per class": (self.per_class, comb(self.rules.cells - x, o)),
            "numbers": (self.count, self.classes * self.per_class),
            "blocks": (self.blocks, -(-self.count // max(1, self.block_records))),
        }
        for name, (found, wanted) in expected.items():
            if found != wanted:
                yield f"its header says {name} {found}, where {wanted} was expected"
        if not 0 <= self.ply <= self.rules.cells:
            yield f"ply {self.ply} on a board of {self.rules.cells} cells"
        if self.block_records < 1:
            yield "blocks of no numbers"


def head_digest(head: bytes) -> bytes:
    """The BLAKE2b-256 digest of a file's head (header, ranks, block table), its own digest
    field read as zeros."""
    digest = hashlib.blake2b(head[:_DIGEST_AT], digest_size=32)
    digest.update(b"\0" * 32)
    digest.update(head[_DIGEST_AT + 32 :])
    return digest.digest()


def block_digest(block: bytes | memoryview) -> bytes:
    """A block's own digest, BLAKE2b-64 of its compressed bytes."""
    return hashlib.blake2b(block, digest_size=8).digest()


# -- writing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompressProgress:
    """Where a compression stands: numbers done in the ply in hand and in the whole table,
    of which ``resumed`` were found done by an earlier run."""

    ply: int
    ply_done: int
    ply_total: int
    done: int
    total: int
    resumed: int = 0


def compress_ply(
    raw: Path,
    out: Path,
    rules: Rules,
    ply: int,
    compression: Compression = COMPRESSION,
    progress: Callable[[int, int], None] | None = None,
) -> CompressedHeader:
    """Compress one ply's raw file into ``out``, written whole or not at all (under a
    temporary name, flushed, renamed). The raw file's digest is checked first, and each
    number's record against the rules of :mod:`solver.tablebase.known`: a table that disagrees
    is refused (:class:`TableFileError` naming the number). ``progress(done, total)`` after
    each chunk of numbers."""
    import numpy as np

    from ttt_solve.solver.tablebase.files import map_ply, verify
    from ttt_solve.solver.tablebase.known import known_range
    from ttt_solve.solver.tablebase.knownrecord import UNKNOWN

    zstd = zstandard()
    source = verify(raw, rules, ply)
    rep_ranks, records = map_ply(raw, source)
    count = source.count
    block_records = compression.block_records
    header = CompressedHeader(
        rules,
        ply,
        source.classes,
        source.per_class,
        count,
        block_records,
        -(-count // block_records),
        counts=source.counts,
    )
    compressor = zstd.ZstdCompressor(
        level=compression.level, write_content_size=True, write_checksum=False
    )
    temporary = out.with_name(out.name + ".tmp")
    entries: list[bytes] = []
    chunk = block_records * _CHUNK_BLOCKS
    ranks = np.ascontiguousarray(rep_ranks, dtype=np.int64)
    try:
        with open(temporary, "wb") as handle:
            handle.write(b"\0" * header.data_at)
            offset = header.data_at
            for start in range(0, count, chunk):
                stop = min(count, start + chunk)
                stored = np.array(records[start:stop])
                known = known_range(rules, ply, ranks, start, stop)
                _check_known(raw, ply, start, stored, known)
                stored[known != UNKNOWN] = DRAW
                pieces = [
                    stored[i : i + block_records].tobytes()
                    for i in range(0, stop - start, block_records)
                ]
                for block in _compress_all(compressor, pieces):
                    handle.write(block)
                    entries.append(_BLOCK_ENTRY.pack(offset, block_digest(block)))
                    offset += len(block)
                if progress is not None:
                    progress(stop, count)
            head = bytearray(header.pack())
            head += ranks.astype("<u4").tobytes()
            head += b"".join(entries)
            header = replace(header, digest=head_digest(bytes(head)))
            head[:HEADER_SIZE] = header.pack()
            handle.seek(0)
            handle.write(head)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, out)
        _sync_folder(out.parent)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        if error.errno == 28:  # ENOSPC
            raise TableDiskFullError(f"{out}: the disk is full; nothing of it was kept") from None
        raise
    except BaseException:
        temporary.unlink(missing_ok=True)  # a stop or a refusal: nothing half-written kept
        raise
    return header


def _compress_all(compressor: object, pieces: list[bytes]) -> list[bytes]:
    """The pieces compressed, over every core (zstandard's threads release the GIL)."""
    if len(pieces) < 4:
        return [compressor.compress(piece) for piece in pieces]  # type: ignore[attr-defined]
    result = compressor.multi_compress_to_buffer(pieces, threads=-1)  # type: ignore[attr-defined]
    return [bytes(segment) for segment in result]


def _check_known(
    raw: Path, ply: int, start: int, stored: NDArray[np.uint8], known: NDArray[np.uint8]
) -> None:
    """Each number's record must be what its stones give where they give one, and none of
    those records where they do not."""
    import numpy as np

    from ttt_solve.solver.tablebase.knownrecord import KNOWN_RECORDS, UNKNOWN

    told = known != UNKNOWN
    wrong = told & (known != stored)
    # The rules name every position holding their records but draws (a draw is theirs only on
    # a full board), so a number they leave must hold none of the others.
    wrong |= ~told & np.isin(stored, [r for r in KNOWN_RECORDS if r != DRAW])
    if wrong.any():
        at = int(np.flatnonzero(wrong)[0])
        said = "no record" if known[at] == UNKNOWN else f"record {known[at]}"
        raise TableFileError(
            raw,
            f"ply {ply}, number {start + at}: the table holds record {stored[at]} where the "
            f"stones give {said}: the table is damaged",
        )


# -- reading -------------------------------------------------------------------------------


class BlockCache:
    """The blocks decoded last, up to ``limit`` bytes, shared by a table's plies."""

    def __init__(self, limit: int = 32 << 20) -> None:
        self.limit = limit
        self.size = 0
        self.blocks: OrderedDict[tuple[int, int], bytes] = OrderedDict()

    def get(self, key: tuple[int, int]) -> bytes | None:
        block = self.blocks.get(key)
        if block is not None:
            self.blocks.move_to_end(key)
        return block

    def put(self, key: tuple[int, int], block: bytes) -> None:
        self.blocks[key] = block
        self.size += len(block)
        while self.size > self.limit and len(self.blocks) > 1:
            _, dropped = self.blocks.popitem(last=False)
            self.size -= len(dropped)


def read_compressed_header(
    path: Path, rules: Rules | None = None, ply: int | None = None
) -> CompressedHeader:
    """A compressed file's header, checked against the game and ply expected and against its
    head's digest and the file's length."""
    try:
        with open(path, "rb") as handle:
            if not os.path.isfile(path):
                raise TableFileError(path, "not a regular file")
            header = CompressedHeader.unpack(handle.read(HEADER_SIZE), path)
            if rules is not None and header.rules != rules:
                raise TableFileError(path, f"a table of {header.rules.name}, not of {rules.name}")
            if ply is not None and header.ply != ply:
                raise TableFileError(path, f"a table of ply {header.ply}, not of ply {ply}")
            for problem in header.problems():
                raise TableFileError(path, f"{problem}: the file was altered or damaged")
            size = os.fstat(handle.fileno()).st_size
            if size < header.data_at:
                raise TableFileError(path, f"truncated: {size:,} bytes, not a whole head")
            handle.seek(0)
            head = handle.read(header.data_at)
    except FileNotFoundError:
        raise TableFileError(path, "missing") from None
    if head_digest(head) != header.digest:
        raise TableFileError(
            path, "its header's checksum does not match: the file was altered or damaged"
        )
    return header


class CompressedPly:
    """One ply's compressed file, mapped: records by number, one block decoded at a time.

    :meth:`record` gives a number's record (known ones computed from its stones);
    :meth:`stored` the byte as stored, the record wherever the stones do not give it."""

    def __init__(self, path: Path, rules: Rules, ply: int, cache: BlockCache | None = None) -> None:
        self.path = path
        self.header = read_compressed_header(path, rules, ply)
        self.rules = rules
        self.ply = ply
        with open(path, "rb") as handle:
            self.data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self.size = len(self.data)
        self.count = self.header.count
        ranks, self._view = stored_ranks(self.data, HEADER_SIZE, self.header.classes, _RANK.size)
        self.index = PlyIndex(rules, ply, ranks)
        self.cache = cache if cache is not None else BlockCache()
        self._decompressor = zstandard().ZstdDecompressor()
        self._last = -1
        self._last_block = b""
        self._lines: NDArray[np.int64] | None = None
        self._rep_ranks: NDArray[np.int64] | None = None

    def __len__(self) -> int:
        return self.header.count

    def _bounds(self, block: int) -> tuple[int, int, bytes]:
        at = self.header.table_at + _BLOCK_ENTRY.size * block
        start, digest = _BLOCK_ENTRY.unpack_from(self.data, at)
        if block + 1 < self.header.blocks:
            end = _BLOCK_ENTRY.unpack_from(self.data, at + _BLOCK_ENTRY.size)[0]
        else:
            end = self.size
        if not self.header.data_at <= start <= end <= self.size:
            raise TableFileError(self.path, f"block {block} lies outside the file: damaged")
        return start, end, digest

    def block(self, block: int) -> bytes:
        """The stored records of one block, decoded and checked (or found in the cache)."""
        key = (self.ply, block)
        found = self.cache.get(key)
        if found is not None:
            return found
        start, end, digest = self._bounds(block)
        frame = self.data[start:end]
        if block_digest(frame) != digest:
            raise TableFileError(
                self.path,
                f"block {block}'s checksum does not match: the file was altered or damaged",
            )
        wanted = min(
            self.header.block_records, self.header.count - block * self.header.block_records
        )
        try:
            decoded: bytes = self._decompressor.decompress(frame)
        except Exception as error:  # zstandard.ZstdError: a frame its checksum let through
            raise TableFileError(self.path, f"block {block} does not decode: {error}") from None
        if len(decoded) != wanted:
            raise TableFileError(
                self.path, f"block {block} holds {len(decoded)} numbers, not {wanted}"
            )
        self.cache.put(key, decoded)
        return decoded

    def stored(self, number: int) -> int:
        """The byte stored for ``number``: its record unless its stones give the record."""
        if not 0 <= number < self.count:
            raise ValueError(f"number {number} is not within ply {self.ply}")
        block, at = divmod(number, self.header.block_records)
        if block != self._last:  # the block read last is kept at hand: children share one
            self._last_block = self.block(block)
            self._last = block
        return self._last_block[at]

    def record(self, number: int) -> int:
        """The record of ``number``: stored, or computed from its stones."""
        stored = self.stored(number)
        if stored != DRAW:
            return stored
        return self._known(*self.index.stones(number))

    def record_at(self, x: int, o: int) -> int:
        """The record of the position with these stones (of this ply's counts): ranked, read,
        and computed from the stones where the byte read is a draw."""
        stored = self.stored(self.index.index(x, o))
        if stored != DRAW:
            return stored
        return self._known(x, o)

    def _known(self, x: int, o: int) -> int:
        """The record of a position stored as a draw: the one its stones give, or a draw.
        Compiled where Numba is loaded already (a tenth of the time); else in plain Python,
        so that a one-shot look-up does not load it (a second or more)."""
        from ttt_solve.solver.tablebase.knownrecord import UNKNOWN, known_record

        rules = self.rules
        if "numba" in sys.modules:
            from ttt_solve.solver.tablebase.known import known_record_compiled

            if self._lines is None:
                import numpy as np

                self._lines = np.array(rules.lines, dtype=np.int64)
            known = int(known_record_compiled(x, o, self.ply, rules.cells, self._lines, rules.k))
        else:
            known = known_record(x, o, self.ply, rules.cells, rules.lines, rules.k)
        return DRAW if known == UNKNOWN else known

    def records(self, numbers: Sequence[int] | NDArray[np.int64]) -> NDArray[np.uint8]:
        """The records of many numbers (an array of them), each block decoded once."""
        import numpy as np

        from ttt_solve.solver.tablebase.known import known_numbers
        from ttt_solve.solver.tablebase.knownrecord import UNKNOWN

        wanted = np.asarray(numbers, dtype=np.int64)
        if len(wanted) and (wanted.min() < 0 or wanted.max() >= self.header.count):
            raise ValueError(f"numbers outside ply {self.ply}'s {self.header.count}")
        if len(wanted) <= FEW_NUMBERS:  # a probe's family: array operations cost more
            out = np.fromiter(map(self.stored, wanted.tolist()), np.uint8, len(wanted))
        else:
            per = self.header.block_records
            out = np.empty(len(wanted), dtype=np.uint8)
            blocks = wanted // per
            for block in np.unique(blocks):
                chosen = blocks == block
                decoded = np.frombuffer(self.block(int(block)), dtype=np.uint8)
                out[chosen] = decoded[wanted[chosen] - block * per]
        draws = out == DRAW
        if draws.any():
            known = known_numbers(self.rules, self.ply, self.rep_ranks(), wanted[draws])
            out[draws] = np.where(known == UNKNOWN, DRAW, known)
        return out

    def array(self) -> NDArray[np.uint8]:
        """Every record of the ply, one byte a number (each block decoded once, in order; the
        records the stones give computed): what a raw file's records are."""
        import numpy as np

        from ttt_solve.solver.tablebase.known import known_numbers
        from ttt_solve.solver.tablebase.knownrecord import UNKNOWN

        out = np.empty(self.count, dtype=np.uint8)
        per = self.header.block_records
        for block in range(self.header.blocks):
            decoded = np.frombuffer(self.block(block), dtype=np.uint8)
            out[block * per : block * per + len(decoded)] = decoded
        draws = np.flatnonzero(out == DRAW)
        if len(draws):
            known = known_numbers(self.rules, self.ply, self.rep_ranks(), draws)
            out[draws] = np.where(known == UNKNOWN, DRAW, known)
        return out

    def rep_ranks(self) -> NDArray[np.int64]:
        """The ranks of the ply's representatives, read once (a 5x5 ply holds 700,000)."""
        import numpy as np

        if self._rep_ranks is None:
            self._rep_ranks = np.frombuffer(
                self.data, dtype="<u4", count=self.header.classes, offset=HEADER_SIZE
            ).astype(np.int64)
        return self._rep_ranks

    def verify(self) -> None:
        """Check every block's digest (the head's was checked on opening)."""
        for block in range(self.header.blocks):
            start, end, digest = self._bounds(block)
            if block_digest(self.data[start:end]) != digest:
                raise TableFileError(
                    self.path,
                    f"block {block}'s checksum does not match: the file was altered or damaged",
                )

    def close(self) -> None:
        if self._view is not None:
            self._view.release()
        try:
            self.data.close()
        except BufferError:
            pass  # an array still views the map; it is unmapped when the last of them goes


# -- a whole table ---------------------------------------------------------------------------

MANIFEST = "table.json"
MANIFEST_FORMAT = "ttt-solve compressed tablebase"


def file_digests(path: Path) -> tuple[str, str]:
    """``(sha256, blake2b)`` of a whole file, hex (BLAKE2b-512, as ``b2sum`` prints it)."""
    sha, blake = hashlib.sha256(), hashlib.blake2b()
    with open(path, "rb") as handle:
        while piece := handle.read(1 << 24):
            sha.update(piece)
            blake.update(piece)
    return sha.hexdigest(), blake.hexdigest()


def compress_table(
    folder: Path | str,
    out: Path | str,
    compression: Compression = COMPRESSION,
    progress: Callable[[CompressProgress], None] | None = None,
) -> dict[str, object]:
    """Compress the finished raw table in ``folder`` into ``out``, ply by ply, and write its
    manifest (``table.json``, last). Resumable: a ply whose compressed file is already there,
    whole and of this table, is kept; a stop loses at most the ply in hand. Returns the
    manifest."""
    import json

    from ttt_solve.solver.tablebase.files import ply_path, read_header, read_manifest

    folder, out = Path(folder), Path(out)
    rules = read_manifest(folder).rules
    headers = [read_header(ply_path(folder, ply), rules, ply) for ply in range(rules.cells + 1)]
    total = sum(header.count for header in headers)
    out.mkdir(parents=True, exist_ok=True)
    for leftover in out.glob("*.tmp"):
        leftover.unlink()  # a file whose write was cut short: never taken as done
    (out / MANIFEST).unlink(missing_ok=True)
    kept = [
        _made(compressed_path(out, ply), rules, ply, header.counts)
        for ply, header in enumerate(headers)
    ]
    resumed = sum(header.count for header, made in zip(headers, kept) if made)
    done = 0
    for ply, source_header in enumerate(headers):
        if not kept[ply]:

            def report(ply_done: int, ply_total: int, ply: int = ply, before: int = done) -> None:
                if progress is not None:
                    state = CompressProgress(
                        ply, ply_done, ply_total, before + ply_done, total, resumed
                    )
                    progress(state)

            path = compressed_path(out, ply)
            compress_ply(ply_path(folder, ply), path, rules, ply, compression, report)
        done += source_header.count
        if progress is not None:
            count = source_header.count
            progress(CompressProgress(ply, count, count, done, total, resumed))
    manifest = table_manifest(out, rules, [header.record_counts for header in headers])
    text = json.dumps(manifest, indent=1) + "\n"
    temporary = out / (MANIFEST + ".tmp")
    with open(temporary, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, out / MANIFEST)
    _sync_folder(out)
    return manifest


def _made(path: Path, rules: Rules, ply: int, counts: tuple[int, ...]) -> bool:
    """Whether a compressed ply is there already, whole, of this table (else it is removed)."""
    if not path.exists():
        return False
    try:
        header = read_compressed_header(path, rules, ply)
    except TableFileError:
        header = None
    if header is not None and header.counts == tuple(counts):
        return True
    path.unlink()
    return False


def table_manifest(out: Path, rules: Rules, held: Sequence[RecordCounts]) -> dict[str, object]:
    """The manifest of the compressed plies in ``out``: the game, the format, and each file's
    size, numbers, counts, record counts (``held``, the raw table's), own digest and
    whole-file digests."""
    plies = []
    for ply in range(rules.cells + 1):
        path = compressed_path(out, ply)
        header = read_compressed_header(path, rules, ply)
        sha256, blake2b = file_digests(path)
        plies.append(
            {
                "ply": ply,
                "file": path.name,
                "bytes": path.stat().st_size,
                "records": header.count,
                "counts": list(header.counts),
                "records_held": held_entry(held[ply]),
                "digest": header.digest.hex(),
                "sha256": sha256,
                "blake2b": blake2b,
            }
        )
    return {
        "format": MANIFEST_FORMAT,
        "version": FORMAT_VERSION,
        "rules": rules.as_dict(),
        "codec": "zstd",
        "block_records": read_compressed_header(compressed_path(out, 0)).block_records,
        "plies": plies,
    }


def held_entry(counts: RecordCounts) -> list[list[int]]:
    """A ply's record counts as a manifest keeps them: ``[record, canonical, reachable]`` for
    each record some position holds."""
    by_record = counts.by_record
    return [
        [record, int(by_record[0, record]), int(by_record[1, record])]
        for record in range(1, RECORD_SLOTS)
        if by_record[:, record].any()
    ]


def held_counts(entry: dict[str, object], rules: Rules, ply: int) -> RecordCounts:
    """A manifest's ply entry's record counts, checked against its 12 counts; ``ValueError``
    saying what is wrong (no ``records_held``: a release of an earlier ttt-solve)."""
    import numpy as np

    held = entry.get("records_held")
    if held is None:
        raise ValueError(
            f"ply {ply} has no records_held (published by an earlier ttt-solve: publish it "
            "again from its table)"
        )
    rows: list[list[int]] = held if isinstance(held, list) else []
    sound = isinstance(held, list) and all(
        isinstance(row, list) and len(row) == 3 and all(type(n) is int and n >= 0 for n in row)
        for row in rows
    )
    if not sound or len({row[0] for row in rows}) != len(rows):
        raise ValueError(f"ply {ply}'s records_held are not [record, canonical, reachable] rows")
    counts = RecordCounts.zero(ply == rules.cells)
    for record, canonical, reachable in rows:
        if not 0 < record < RECORD_SLOTS:
            raise ValueError(f"ply {ply}'s records_held name record {record}")
        counts.by_record[:, record] = (canonical, reachable)
    if not np.array_equal(counts.counts.ravel(), np.array(entry.get("counts"), dtype=np.int64)):
        raise ValueError(f"ply {ply}'s records_held do not sum to its counts")
    return counts


def _read_json(path: Path, limit: int = 1 << 24) -> dict[str, object]:
    """A manifest, read with a bound on its size (a link to a device is refused)."""
    import json

    if not path.is_file():
        raise TableFileError(path, "missing, or not a regular file")
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TableFileError(path, f"over {limit:,} bytes: not a manifest")
    try:
        found = json.loads(data)
    except (ValueError, RecursionError):
        raise TableFileError(path, "not JSON") from None
    if not isinstance(found, dict):
        raise TableFileError(path, "not a manifest (not a JSON object)")
    return found
