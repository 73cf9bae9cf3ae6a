"""A reader written from docs/table-format.md alone decodes every record as the package does."""

from __future__ import annotations

import ast
import random
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("zstandard", reason="compressed tables need: pip install -e '.[compressed]'")

from ttt_solve.solver.rules import Rules  # noqa: E402
from ttt_solve.solver.tablebase.build import build_table  # noqa: E402
from ttt_solve.solver.tablebase.compressed import (  # noqa: E402
    Compression,
    compress_table,
    compressed_path,
)
from ttt_solve.solver.tablebase.files import map_ply, ply_path, read_header  # noqa: E402

READER = Path(__file__).with_name("independent_table_reader.py")
sys.path.insert(0, str(READER.parent))
import independent_table_reader as reader  # noqa: E402


def test_the_reader_imports_nothing_of_the_package() -> None:
    tree = ast.parse(READER.read_text())
    imported = {
        name.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for name in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])
    }
    assert imported <= set(sys.stdlib_module_names) | {"zstandard"}, imported


@pytest.mark.parametrize(
    "game", [(3, 3, 3), pytest.param((4, 4, 4), marks=pytest.mark.slow)], ids=["3x3k3", "4x4k4"]
)
def test_the_reader_agrees_with_the_package_on_every_record(
    tmp_path: Path, game: tuple[int, int, int]
) -> None:
    rules = Rules(*game)
    raw, out = tmp_path / "raw", tmp_path / "release"
    build_table(rules, raw)
    compress_table(raw, out, Compression(block_records=1 << 12))
    rng = random.Random(5)
    for ply in range(rules.cells + 1):
        _, records = map_ply(ply_path(raw, ply), read_header(ply_path(raw, ply)))
        ply_file = reader.CompressedPly(compressed_path(out, ply))
        assert bytes(ply_file.records()) == records.tobytes(), f"ply {ply}"
        for number in rng.sample(range(len(records)), min(300, len(records))):
            x, o = ply_file.stones(number)
            assert records[ply_file.number(x, o)] == records[number]
    result = subprocess.run(
        [sys.executable, str(READER), str(out), "x" + "." * (rules.cells - 1)],
        capture_output=True,
        text=True,
    )
    assert result.stdout == (
        "draw, remoteness 8\n" if game == (3, 3, 3) else "draw, remoteness 15\n"
    )


def test_the_reader_refuses_a_changed_byte(tmp_path: Path) -> None:
    rules = Rules(3, 3, 3)
    raw, out = tmp_path / "raw", tmp_path / "release"
    build_table(rules, raw)
    compress_table(raw, out, Compression(block_records=50))
    path = compressed_path(out, 6)
    clean = path.read_bytes()
    for at in range(0, len(clean), 7):
        damaged = bytearray(clean)
        damaged[at] ^= 0x10
        path.write_bytes(bytes(damaged))
        with pytest.raises((AssertionError, struct_error(), ValueError)):
            list(reader.CompressedPly(path).records())
    path.write_bytes(clean)


def struct_error() -> type[Exception]:
    import struct

    return struct.error
