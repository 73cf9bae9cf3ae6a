"""A release folder: compressed files, manifest, sums, figures, README; checked whole."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("zstandard", reason="compressed tables need: pip install -e '.[compressed]'")

from ttt_solve.solver.rules import Rules  # noqa: E402
from ttt_solve.solver.tablebase.build import build_table  # noqa: E402
from ttt_solve.solver.tablebase.release import publish, verify_release  # noqa: E402


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("release")
    build_table(Rules(3, 3, 3), base / "raw")
    publish(base / "raw", base / "out", block_records=64)
    return base / "out"


def test_a_release_holds_its_files_and_checks_whole(release: Path) -> None:
    names = sorted(path.name for path in release.iterdir())
    assert names == sorted(
        ["B2SUMS", "README.md", "SHA256SUMS", "figures.json", "figures.md", "table.json"]
        + [f"ply-{ply:02d}.tbz" for ply in range(10)]
    )
    assert list(verify_release(release)) == []
    for program, sums in (("sha256sum", "SHA256SUMS"), ("b2sum", "B2SUMS")):
        result = subprocess.run([program, "-c", sums], cwd=release, capture_output=True, text=True)
        assert result.returncode == 0 and result.stdout.count(": OK") == 10
    readme = (release / "README.md").read_text()
    assert "5,478 positions" in readme and "draw in 9 for X" in readme
    figures = json.loads((release / "figures.json").read_text())
    assert figures["root"] == "draw in 9"


def test_one_changed_byte_of_any_table_file_is_a_problem_naming_it(
    release: Path, tmp_path: Path
) -> None:
    """Every byte of one file, header included, then one byte of each file."""
    path = release / "ply-04.tbz"
    clean = path.read_bytes()
    try:
        for at in range(len(clean)):
            damaged = bytearray(clean)
            damaged[at] ^= 0x04
            path.write_bytes(bytes(damaged))
            problems = list(verify_release(release))
            assert problems and all("ply-04.tbz" in problem for problem in problems), at
    finally:
        path.write_bytes(clean)
    assert list(verify_release(release)) == []


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m["plies"][3]["counts"].__setitem__(0, 5),
        lambda m: m["plies"][5].__setitem__("sha256", "0" * 64),
        lambda m: m["rules"].__setitem__("k", 2),
        lambda m: m["plies"].pop(),
        lambda m: m.__setitem__("version", 9),
    ],
    ids=["counts", "digest", "game", "a ply left out", "version"],
)
def test_a_changed_manifest_is_a_problem(release: Path, tmp_path: Path, change: object) -> None:
    manifest_path = release / "table.json"
    clean = manifest_path.read_text()
    manifest = json.loads(clean)
    change(manifest)  # type: ignore[operator]
    try:
        manifest_path.write_text(json.dumps(manifest))
        assert list(verify_release(release))
    finally:
        manifest_path.write_text(clean)


def test_a_missing_file_is_one_line(release: Path) -> None:
    path = release / "ply-07.tbz"
    data = path.read_bytes()
    path.unlink()
    try:
        assert list(verify_release(release)) == [f"{path}: missing, or not a regular file"]
    finally:
        path.write_bytes(data)
