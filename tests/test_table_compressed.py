"""The compressed tablebase: every record as the raw table's, every byte under a digest."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("zstandard", reason="compressed tables need: pip install -e '.[compressed]'")

from ttt_solve.solver.position import Position, iter_cells  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402
from ttt_solve.solver.tablebase.build import build_table  # noqa: E402
from ttt_solve.solver.tablebase.compressed import (  # noqa: E402
    HEADER_SIZE,
    CompressedPly,
    Compression,
    CompressProgress,
    compress_table,
    compressed_path,
    read_compressed_header,
)
from ttt_solve.solver.tablebase.files import (  # noqa: E402
    TableFileError,
    map_ply,
    ply_path,
    read_header,
    write_file,
)
from ttt_solve.solver.tablebase.known import known_range  # noqa: E402
from ttt_solve.solver.tablebase.knownrecord import UNKNOWN, known_record  # noqa: E402
from ttt_solve.solver.tablebase.step import solve_in_memory  # noqa: E402

FAST = [(1, 1, 1), (2, 2, 2), (3, 3, 1), (3, 3, 2), (3, 3, 3), (2, 4, 2), (2, 5, 3), (1, 6, 3),
        (3, 4, 3), (3, 4, 4), (3, 5, 3), (4, 4, 3)]  # fmt: skip
SLOW = [(r, c, k) for r in range(1, 5) for c in range(r, 6) if r * c <= 20 for k in range(1, c + 1)]


def built(tmp: Path, rules: Rules, block_records: int = 1 << 14) -> tuple[Path, Path]:
    raw, out = tmp / "raw", tmp / "compressed"
    build_table(rules, raw)
    compress_table(raw, out, Compression(block_records))
    return raw, out


def assert_same_records(rules: Rules, raw: Path, out: Path, sample: int = 2000) -> None:
    rng = random.Random(7)
    for ply in range(rules.cells + 1):
        _, records = map_ply(ply_path(raw, ply), read_header(ply_path(raw, ply)))
        ply_file = CompressedPly(compressed_path(out, ply), rules, ply)
        numbers = np.arange(len(records), dtype=np.int64)
        assert ply_file.records(numbers).tobytes() == records.tobytes(), f"ply {ply}"
        for number in rng.sample(range(len(records)), min(sample, len(records))):
            assert ply_file.record(number) == records[number]
            if records[number]:
                x, o = ply_file.index.stones(number)
                assert ply_file.record_at(x, o) == records[number]
        ply_file.close()


@pytest.mark.parametrize("game", FAST, ids=lambda g: "{}x{}k{}".format(*g))
def test_the_compressed_table_holds_every_record_of_the_raw_one(
    tmp_path: Path, game: tuple[int, int, int]
) -> None:
    rules = Rules(*game)
    raw, out = built(tmp_path, rules, block_records=1000)
    assert_same_records(rules, raw, out)


@pytest.mark.slow
@pytest.mark.parametrize("game", SLOW, ids=lambda g: "{}x{}k{}".format(*g))
def test_every_board_up_to_4x5_round_trips(tmp_path: Path, game: tuple[int, int, int]) -> None:
    rules = Rules(*game)
    raw, out = built(tmp_path, rules)
    assert_same_records(rules, raw, out, sample=200)


@pytest.mark.parametrize("game", [(3, 3, 3), (3, 4, 3), (4, 4, 4), (2, 5, 2), (4, 4, 2)])
def test_the_known_records_are_the_tables_where_they_speak_and_nowhere_else(
    game: tuple[int, int, int],
) -> None:
    """Each rule is exact: where the stones give a record it is the table's, and no number
    they leave holds a record they give (draws aside: the rules give one on a full board)."""
    rules = Rules(*game)
    from ttt_solve.solver.tablebase.classes import class_table

    for ply, (records, _) in enumerate(solve_in_memory(rules)):
        table = class_table(rules, (ply + 1) // 2)
        known = known_range(rules, ply, table.rep_ranks, 0, len(records))
        told = known != UNKNOWN
        assert (known[told] == records[told]).all(), f"ply {ply}"
        assert not np.isin(records[~told], [0, 2, 3, 4, 5]).any(), f"ply {ply}"
        for number in range(0, len(records), 97):  # the plain Python twin of the kernel
            from ttt_solve.solver.tablebase.lookup import PlyIndex

            x, o = PlyIndex(rules, ply, list(table.rep_ranks)).stones(number)
            assert known_record(x, o, ply, rules.cells, rules.lines, rules.k) == known[number]


def test_a_compressed_table_is_a_twentieth_of_the_raw_one(tmp_path: Path) -> None:
    rules = Rules(4, 4, 4)
    raw, out = built(tmp_path, rules)
    size = sum(compressed_path(out, ply).stat().st_size for ply in range(17))
    raw_size = sum(ply_path(raw, ply).stat().st_size for ply in range(17))
    assert raw_size / size > 20


def test_a_probe_reads_the_value_and_every_move_of_a_position(tmp_path: Path) -> None:
    from ttt_solve.solver.tablebase.probe import open_tablebase

    rules = Rules(4, 4, 4)
    raw, out = built(tmp_path, rules)
    table = open_tablebase(raw)
    plies = [CompressedPly(compressed_path(out, p), rules, p) for p in range(17)]
    rng = random.Random(3)
    for _ in range(30):
        position = Position.start(rules)
        while not position.is_terminal:
            assert plies[position.ply].record_at(position.x, position.o) == table.record(position)
            child = plies[position.ply + 1]
            for cell in iter_cells(position.empty):
                moved = position.play(cell)
                assert child.record_at(moved.x, moved.o) == table.record(moved)
            position = position.play(rng.choice(position.legal_moves()))


def flipped(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def all_records_of(path: Path, rules: Rules, ply: int) -> None:
    ply_file = CompressedPly(path, rules, ply)
    for number in range(len(ply_file)):
        ply_file.record(number)


def test_one_changed_byte_anywhere_is_caught_by_a_probe_of_its_block(tmp_path: Path) -> None:
    """Every byte of a small file, one at a time; then bytes of a larger one's every part."""
    rules = Rules(3, 3, 3)
    _, out = built(tmp_path, rules, block_records=40)
    path = compressed_path(out, 5)
    clean = path.read_bytes()
    for at in range(len(clean)):
        flipped(path, at)
        with pytest.raises(TableFileError, match="ply-05.tbz"):
            all_records_of(path, rules, 5)
        path.write_bytes(clean)
    for at in range(HEADER_SIZE - 64, HEADER_SIZE):
        flipped(path, at)
        with pytest.raises(TableFileError, match="checksum"):
            CompressedPly(path, rules, 5)
        path.write_bytes(clean)


def test_a_changed_block_is_caught_only_by_a_probe_that_decodes_it(tmp_path: Path) -> None:
    rules = Rules(4, 4, 4)
    _, out = built(tmp_path, rules, block_records=1 << 12)
    path = compressed_path(out, 8)
    header = read_compressed_header(path, rules, 8)
    ply_file = CompressedPly(path, rules, 8)
    start, end, _ = ply_file._bounds(3)
    ply_file.close()
    flipped(path, (start + end) // 2)
    damaged = CompressedPly(path, rules, 8)
    damaged.record(0)  # block 0 is whole
    with pytest.raises(TableFileError, match="block 3's checksum does not match"):
        damaged.record(3 * header.block_records + 5)


def test_a_stopped_compression_keeps_its_finished_plies_and_resumes(tmp_path: Path) -> None:
    rules = Rules(3, 4, 3)
    raw, out = tmp_path / "raw", tmp_path / "out"
    build_table(rules, raw)
    whole = tmp_path / "whole"
    compress_table(raw, whole)

    def stop_at_ply_7(state: CompressProgress) -> None:
        if state.ply == 7:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        compress_table(raw, out, progress=stop_at_ply_7)
    assert sorted(p.name for p in out.iterdir()) == [f"ply-{p:02d}.tbz" for p in range(7)]
    compress_table(raw, out)
    for path in whole.iterdir():
        assert (out / path.name).read_bytes() == path.read_bytes(), path.name


def test_a_table_its_stones_contradict_is_refused_naming_the_number(tmp_path: Path) -> None:
    """A record changed with its digest made again: only the rules can see it."""
    rules = Rules(3, 3, 3)
    raw = tmp_path / "raw"
    build_table(rules, raw)
    path = ply_path(raw, 6)
    header = read_header(path, rules, 6)
    reps, records = map_ply(path, header)
    changed = np.array(records)
    number = int(np.flatnonzero(changed == 3)[0])  # a win in 1 ...
    changed[number] = 1  # ... made a draw
    payload = np.asarray(reps, dtype="<u8").tobytes() + changed.tobytes()
    del reps, records
    write_file(path, header, [payload])
    with pytest.raises(TableFileError, match=f"ply 6, number {number}: the table holds record 1"):
        compress_table(raw, tmp_path / "out")


def test_the_manifest_names_each_file_with_its_digests(tmp_path: Path) -> None:
    import hashlib

    rules = Rules(3, 3, 3)
    _, out = built(tmp_path, rules)
    manifest = json.loads((out / "table.json").read_text())
    assert manifest["rules"] == {"rows": 3, "cols": 3, "k": 3}
    assert [entry["ply"] for entry in manifest["plies"]] == list(range(10))
    for entry in manifest["plies"]:
        data = (out / entry["file"]).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
        assert entry["blake2b"] == hashlib.blake2b(data).hexdigest()
        assert entry["bytes"] == len(data)
    assert sum(sum(entry["counts"][1::2]) for entry in manifest["plies"]) == 5478


def test_without_zstandard_a_compressed_table_says_which_extra_to_install(
    tmp_path: Path,
) -> None:
    rules = Rules(3, 3, 3)
    _, out = built(tmp_path, rules)
    code = (
        "import sys; sys.modules['zstandard'] = None\n"
        "from pathlib import Path\n"
        "from ttt_solve.solver.rules import Rules\n"
        "from ttt_solve.solver.tablebase.compressed import CompressedPly\n"
        f"CompressedPly(Path({str(compressed_path(out, 3))!r}), Rules(3, 3, 3), 3)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 1
    assert "pip install 'ttt-solve[compressed]'" in result.stderr.splitlines()[-1]
