"""Benchmark of the compressed tablebase against the raw one, side by side, in one run.

For a built raw table (a folder; by default 4x4 k=4 is built into a temporary one): each
block size compresses the whole table (a process of its own: wall time, CPU time, peak
memory), then, in one process, the look-up of a position's value and every move's value,
from the raw files and from the compressed ones, alternating over the same 2,000 positions of
seeded random games (the same Python loop, so only the storage differs): the median and the
90th percentile, and a block's decode time (median over the blocks read). Then the probe a
program calls, ``Tablebase.probe_moves`` (every check, compiled look-ups), on the raw folder
and on the compressed one, over the same positions: the median.

    python bench/bench_compressed.py                        # 4x4 k=4
    python bench/bench_compressed.py /work/t45/4x5k4        # a table built apart
    python bench/bench_compressed.py FOLDER --blocks 16384  # one block size
    python bench/bench_compressed.py FOLDER --levels 15,12,9,6 --plies 10,13,16

``--levels``: instead, zstd's levels side by side on the first 2**24 numbers of each of
``--plies`` as the writer stores them (the records the stones give stored as draws), in
blocks of the default size over every core: the size, the ratio and the CPU time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

from ttt_solve.solver.position import Position, iter_cells
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.compressed import BlockCache, CompressedPly, compressed_path
from ttt_solve.solver.tablebase.files import HEADER_SIZE, map_ply, ply_path, read_header
from ttt_solve.solver.tablebase.knownrecord import UNKNOWN, known_record
from ttt_solve.solver.tablebase.lookup import PlyIndex
from ttt_solve.solver.tablebase.record import DRAW

POSITIONS = 2000
BLOCK_SIZES = [1 << 12, 1 << 14, 1 << 16]


class RawPly:
    """A raw ply file read as the probe reads it: ranked in Python, one byte through a map."""

    def __init__(self, folder: Path, rules: Rules, ply: int) -> None:
        path = ply_path(folder, ply)
        header = read_header(path, rules, ply)
        reps, self.records = map_ply(path, header)
        self.index = PlyIndex(rules, ply, [int(rank) for rank in reps])
        self.offset = HEADER_SIZE + 8 * header.reps

    def record_at(self, x: int, o: int) -> int:
        return int(self.records[self.index.index(x, o)])


def compress(folder: Path, out: Path, block_records: int) -> dict[str, float]:
    """Compress in a process of its own: wall and CPU seconds, peak MiB."""
    code = (
        "import sys; from ttt_solve.solver.tablebase.compressed import Compression, "
        "compress_table; compress_table(sys.argv[1], sys.argv[2], Compression(int(sys.argv[3])))"
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-c", code, str(folder), str(out), str(block_records)], check=True
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall": wall, "cpu": cpu, "peak": after.ru_maxrss / 1024}


class PlainKnownPly(CompressedPly):
    """A compressed ply whose known records are computed by the plain Python function (what
    the probe did before it called the compiled one), for the side-by-side column."""

    def _known(self, x: int, o: int) -> int:
        rules = self.rules
        known = known_record(x, o, self.ply, rules.cells, rules.lines, rules.k)
        return DRAW if known == UNKNOWN else known


def positions_of_games(rules: Rules, count: int, seed: int = 1) -> list[Position]:
    rng = random.Random(seed)
    found: list[Position] = []
    while len(found) < count:
        position = Position.start(rules)
        while True:
            found.append(position)
            if position.is_terminal:
                break
            position = position.play(rng.choice(position.legal_moves()))
    rng.shuffle(found)
    return found[:count]


def analyse(plies: dict[int, object], position: Position) -> int:
    """A position's record and every move's, as a probe reads them; their sum (to use them)."""
    total = plies[position.ply].record_at(position.x, position.o)  # type: ignore[attr-defined]
    if not position.is_terminal:
        child = plies[position.ply + 1]
        for cell in iter_cells(position.empty):
            bit = 1 << cell
            if position.x_to_move:
                total += child.record_at(position.x | bit, position.o)  # type: ignore[attr-defined]
            else:
                total += child.record_at(position.x, position.o | bit)  # type: ignore[attr-defined]
    return total


def probe_times(plies: dict[int, object], positions: list[Position]) -> list[float]:
    times = []
    for position in positions:
        started = time.perf_counter()
        analyse(plies, position)
        times.append(time.perf_counter() - started)
    return sorted(times)


def api_times(folder: Path, positions: list[Position]) -> list[float]:
    """Times of :meth:`Tablebase.probe_moves` (value and every move's value, every check) on
    a table opened and compiled as a process that probes many does, warmed first."""
    from ttt_solve.solver.tablebase.probe import open_tablebase

    with open_tablebase(folder) as table:
        table.compile()
        for position in positions[:200]:
            table.probe_moves(position)
        times = []
        for position in positions:
            started = time.perf_counter()
            table.probe_moves(position)
            times.append(time.perf_counter() - started)
    return sorted(times)


def decode_micros(out: Path, rules: Rules) -> float:
    """The median time to decode a block, over up to 200 blocks of the widest plies."""
    times = []
    for ply in range(rules.cells + 1):
        ply_file = CompressedPly(compressed_path(out, ply), rules, ply, BlockCache(0))
        for block in range(0, ply_file.header.blocks, max(1, ply_file.header.blocks // 10)):
            started = time.perf_counter()
            ply_file.block(block)
            times.append(time.perf_counter() - started)
            ply_file.cache.blocks.clear()
    times.sort()
    return times[len(times) // 2] * 1e6


def compare_levels(folder: Path, plies: list[int], levels: list[int]) -> None:
    """zstd's ``levels`` on the blocks the writer would compress from ``plies``."""
    import numpy as np

    from ttt_solve.solver.tablebase import compressed
    from ttt_solve.solver.tablebase.files import verify
    from ttt_solve.solver.tablebase.known import known_range

    game = json.loads((folder / "table.json").read_text())["rules"]
    rules = Rules(game["rows"], game["cols"], game["k"])
    pieces = []
    for ply in plies:
        source = verify(ply_path(folder, ply), rules, ply)
        ranks, records = map_ply(ply_path(folder, ply), source)
        stop = min(source.count, 1 << 24)
        stored = np.array(records[:stop])
        known = known_range(rules, ply, np.ascontiguousarray(ranks, dtype=np.int64), 0, stop)
        stored[known != UNKNOWN] = DRAW
        block = compressed.BLOCK_RECORDS
        pieces += [stored[i : i + block].tobytes() for i in range(0, stop, block)]
    size = sum(map(len, pieces))
    rows = []
    for level in levels:
        zstd = compressed.zstandard().ZstdCompressor(
            level=level, write_content_size=True, write_checksum=False
        )
        started, cpu = time.perf_counter(), time.process_time()
        out = sum(len(block) for block in compressed._compress_all(zstd, pieces))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        rows.append([level, f"{out / 1e6:.2f}", f"{size / out:.1f}", f"{wall:.2f}", f"{cpu:.2f}"])
        rows[-1].append(f"{size / cpu / 1e6:.1f}")
    print(f"{rules.name}, plies {plies}: {size / 1e6:.0f} MB of records")
    headers = ["level", "MB", "ratio", "wall s", "CPU s", "MB a CPU second"]
    print(tabulate(rows, headers=headers))
    print(f"\n{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, help="a built raw table (default: 4x4 k=4)")
    parser.add_argument("--blocks", type=int, action="append", help="numbers a block")
    parser.add_argument("--levels", help="zstd levels to compare (as 15,12,9,6), with --plies")
    parser.add_argument("--plies", default="10,13,16", help="the plies --levels reads")
    args = parser.parse_args()
    if args.levels:
        if args.folder is None:
            sys.exit("--levels needs a built table's FOLDER")
        plies = [int(ply) for ply in args.plies.split(",")]
        compare_levels(args.folder, plies, [int(level) for level in args.levels.split(",")])
        return 0
    work = Path(tempfile.mkdtemp(prefix="bench-compressed-"))
    folder = args.folder
    if folder is None:
        from ttt_solve.solver.tablebase.build import build_table

        folder = work / "4x4k4"
        build_table(Rules(4, 4, 4), folder)
    game = json.loads((folder / "table.json").read_text())["rules"]
    rules = Rules(game["rows"], game["cols"], game["k"])
    raw_size = sum(ply_path(folder, ply).stat().st_size for ply in range(rules.cells + 1))
    positions = positions_of_games(rules, POSITIONS)
    raw = {ply: RawPly(folder, rules, ply) for ply in range(rules.cells + 1)}
    rows = []
    for block_records in args.blocks or BLOCK_SIZES:
        out = work / f"blocks-{block_records}"
        made = compress(folder, out, block_records)
        size = sum(compressed_path(out, p).stat().st_size for p in range(rules.cells + 1))
        compressed = {
            p: CompressedPly(compressed_path(out, p), rules, p) for p in range(rules.cells + 1)
        }
        plain = {
            p: PlainKnownPly(compressed_path(out, p), rules, p) for p in range(rules.cells + 1)
        }
        probe_times(raw, positions[:200])  # warm all: files mapped, pages read, code compiled
        probe_times(compressed, positions[:200])
        probe_times(plain, positions[:200])
        raw_times, compressed_times, plain_times = [], [], []
        for half in (positions[: POSITIONS // 2], positions[POSITIONS // 2 :]):
            raw_times += probe_times(raw, half)
            compressed_times += probe_times(compressed, half)
            plain_times += probe_times(plain, half)
        raw_times.sort()
        compressed_times.sort()
        plain_times.sort()
        api_raw, api_compressed = api_times(folder, positions), api_times(out, positions)
        rows.append(
            [
                f"{block_records:,}",
                f"{raw_size / 1e6:.1f}",
                f"{size / 1e6:.2f}",
                f"{raw_size / size:.1f}",
                f"{made['wall']:.1f}",
                f"{made['cpu']:.1f}",
                f"{made['peak']:.0f}",
                f"{decode_micros(out, rules):.0f}",
                f"{raw_times[len(raw_times) // 2] * 1e3:.3f}",
                f"{compressed_times[len(compressed_times) // 2] * 1e3:.3f}",
                f"{compressed_times[int(0.9 * len(compressed_times))] * 1e3:.3f}",
                f"{plain_times[len(plain_times) // 2] * 1e3:.3f}",
                f"{api_raw[len(api_raw) // 2] * 1e3:.3f}",
                f"{api_compressed[len(api_compressed) // 2] * 1e3:.3f}",
            ]
        )
    print(f"{rules.name}: {sum(len(r.records) for r in raw.values()):,} numbers")
    print(
        tabulate(
            rows,
            [
                "block",
                "raw MB",
                "compressed MB",
                "ratio",
                "compress s",
                "CPU s",
                "peak MiB",
                "decode us",
                "raw p50 ms",
                "compressed p50 ms",
                "p90 ms",
                "p50 ms, known in Python",
                "probe_moves raw p50 ms",
                "probe_moves compressed p50 ms",
            ],
        )
    )
    print(
        f"\n{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end; probe: a "
        "position's record and every move's, 2,000 positions of seeded random games"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
