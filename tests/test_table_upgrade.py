"""A table of format version 1 rewritten as version 2 in place: byte for byte a fresh build."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.build import build_table
from ttt_solve.solver.tablebase.files import MANIFEST, TableFileError, ply_path, read_header
from ttt_solve.solver.tablebase.step import count_range, solve_in_memory
from ttt_solve.solver.tablebase.upgrade import upgrade_table

V1_HEADER = struct.Struct("<8sH6B5Q32s12Q")


def write_version_1(table: Path, out: Path) -> None:
    """The format version 1 twin of a version 2 table, by docs/table-format.md's layout of
    version 1: a 256-byte header whose digest covers the bytes after it, then 12 counts."""
    out.mkdir()
    manifest = json.loads((table / MANIFEST).read_text())
    plies = []
    for entry in manifest["plies"]:
        data = (table / entry["file"]).read_bytes()
        payload = data[1024:]
        fields = struct.unpack_from("<8sH6B5Q", data)
        digest = hashlib.blake2b(payload, digest_size=32).digest()
        header = V1_HEADER.pack(b"TTTTABLE", 1, *fields[2:], digest, *entry["counts"])
        (out / entry["file"]).write_bytes(header.ljust(256, b"\0") + payload)
        plies.append(
            {key: entry[key] for key in ("ply", "file", "records", "counts")}
            | {"blake2b": digest.hex()}
        )
    (out / MANIFEST).write_text(json.dumps({"rules": manifest["rules"], "plies": plies}))


def table_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix in (".tb", ".json")}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("fresh")
    tables = {}
    for name, rules in (("3x3k3", Rules(3, 3, 3)), ("4x4k4", Rules(4, 4, 4))):
        build_table(rules, base / name)
        tables[name] = base / name
    return tables


@pytest.mark.parametrize("name", ["3x3k3", "4x4k4"])
def test_an_upgraded_table_is_a_fresh_build_byte_for_byte(
    fresh: dict[str, Path], tmp_path: Path, name: str
) -> None:
    old = tmp_path / "old"
    write_version_1(fresh[name], old)
    with pytest.raises(TableFileError, match="format version 1"):
        read_header(ply_path(old, 4))
    seen: list[tuple[int, int]] = []
    manifest, rewritten = upgrade_table(old, lambda done, total: seen.append((done, total)))
    assert rewritten == manifest.rules.cells + 1
    assert table_files(old) == table_files(fresh[name])
    assert (
        seen[-1][0]
        == seen[-1][1]
        == 2 * sum(ply_path(old, ply).stat().st_size - 768 for ply in range(rewritten))
    )
    assert upgrade_table(old)[1] == 0  # a table of version 2 is left as it is


def test_a_stopped_upgrade_resumes_file_by_file(fresh: dict[str, Path], tmp_path: Path) -> None:
    """Stopped after some files (the manifest of version 1 still there, a temporary file
    left), a rerun rewrites only the files still of version 1."""
    old = tmp_path / "old"
    write_version_1(fresh["3x3k3"], old)
    for ply in (2, 7):
        shutil.copy(ply_path(fresh["3x3k3"], ply), ply_path(old, ply))
    (old / "ply-05.tb.tmp").write_bytes(b"cut short")
    _, rewritten = upgrade_table(old)
    assert rewritten == 8
    assert not list(old.glob("*.tmp"))
    assert table_files(old) == table_files(fresh["3x3k3"])


@pytest.mark.parametrize("at", [0, 9, 40, 100, 255, 256, 300, -1])
def test_a_damaged_version_1_file_is_refused_and_kept(
    fresh: dict[str, Path], tmp_path: Path, at: int
) -> None:
    old = tmp_path / "old"
    write_version_1(fresh["4x4k4"], old)
    path = ply_path(old, 9)
    data = bytearray(path.read_bytes())
    data[at] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(TableFileError, match="ply-09.tb"):
        upgrade_table(old)
    assert path.read_bytes() == bytes(data)
    assert json.loads((old / MANIFEST).read_text()).keys() == {"rules", "plies"}


def test_counting_a_plys_records_gives_the_builds_counts() -> None:
    """:func:`count_range` (by record, canonical and reachable) against the counts the
    build made as it went, on every ply of 4x4 k=4, from ranges cut anywhere."""
    from ttt_solve.solver.tablebase.classes import ClassTable, class_tables
    from ttt_solve.solver.tablebase.step import ply_step

    rules = Rules(4, 4, 4)
    cache: dict[int, ClassTable] = {}
    for ply, (records, counts) in enumerate(solve_in_memory(rules)):
        step = ply_step(rules, ply, class_tables(rules, ply, cache)[0], None)
        cut = len(records) // 3
        found = count_range(step, 0, cut, records[:cut]) + count_range(
            step, cut, len(records), records[cut:]
        )
        assert np.array_equal(found.by_record, counts.by_record), ply
