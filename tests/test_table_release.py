"""A release folder: compressed files, manifest, sums, figures, README; checked whole."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

pytest.importorskip("zstandard", reason="compressed tables need: pip install -e '.[compressed]'")

from ttt_solve.cli.main import ttt  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402
from ttt_solve.solver.tablebase.build import build_table  # noqa: E402
from ttt_solve.solver.tablebase.compressed import Compression  # noqa: E402
from ttt_solve.solver.tablebase.release import publish, verify_release  # noqa: E402


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("release")
    build_table(Rules(3, 3, 3), base / "raw")
    publish(base / "raw", base / "out", Compression(block_records=64))
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


def ttt_table(*args: object) -> Result:
    return CliRunner().invoke(ttt, ["table", *(str(arg) for arg in args)])


@pytest.fixture(scope="module")
def raw_4x4(tmp_path_factory: pytest.TempPathFactory) -> Path:
    raw = tmp_path_factory.mktemp("raw") / "4x4k4"
    build_table(Rules(4, 4, 4), raw)
    return raw


def test_ttt_table_publish_then_verify(raw_4x4: Path, tmp_path: Path) -> None:
    out = tmp_path / "release"
    made = ttt_table("publish", raw_4x4, out)
    assert made.exit_code == 0, made.output
    assert f"{out}: a release of 17 files" in made.stdout
    checked = ttt_table("verify", out)
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.startswith("4x4 k=4: OK, a release of 17 compressed files")
    assert "ttt table verify ." in (out / "README.md").read_text()


def test_a_release_is_catalogued_and_read_as_its_table(release: Path, tmp_path: Path) -> None:
    """As its README says: catalogued into a book, a release answers every command as its raw
    table does (the book's figures from the manifest's record counts, no record read)."""
    out = tmp_path / "release"
    shutil.copytree(release, out)
    answers = {}
    for name, folder in (("raw", release.parent / "raw"), ("release", out)):
        db = str(tmp_path / f"{name}.sqlite")
        made = ttt_table("catalogue", folder, "--db", db)
        assert made.exit_code == 0, made.output
        asked = [
            ["stats", "--db", db],
            ["query", "--db", db, "x../.o./..x"],
            ["audit", "--agent", "heuristic", "--db", db, "--positions", "sample:300", "-q"]
            + ["--json"],
            ["export", "--db", db, "--where", "ply<=6", "-q", "-o", str(tmp_path / f"{name}.csv")],
        ]
        outputs = [CliRunner().invoke(ttt, args).output.replace(db, "BOOK") for args in asked]
        answers[name] = [re.sub(r"solved .* UTC", "solved", text) for text in outputs]
    assert answers["release"] == answers["raw"]
    assert (tmp_path / "release.csv").read_bytes() == (tmp_path / "raw.csv").read_bytes()
    assert "draw" in answers["raw"][1]
    figures = ttt_table("figures", out)
    assert figures.exit_code == 0 and figures.output == (out / "figures.md").read_text()
    manifest = json.loads((out / "table.json").read_text())
    manifest["plies"][7]["records_held"][0][1] += 1
    (out / "table.json").write_text(json.dumps(manifest))
    assert "ply 7's records_held do not sum to its counts" in "\n".join(verify_release(out))
    again = ttt_table("catalogue", out, "--db", str(tmp_path / "again.sqlite"))
    assert again.exit_code == 2 and "records_held" in again.output, again.output
    assert len(again.output.strip().splitlines()) == 1


def test_a_stopped_publish_goes_on_file_by_file(raw_4x4: Path, tmp_path: Path) -> None:
    """A stop leaves whole files and perhaps one under a temporary name, and no manifest:
    a rerun makes only the files missing, and the release is the same bytes."""
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert ttt_table("publish", raw_4x4, whole).exit_code == 0
    assert ttt_table("publish", raw_4x4, cut).exit_code == 0
    for name in ("table.json", "README.md", "SHA256SUMS", "ply-09.tbz", "ply-12.tbz"):
        (cut / name).unlink()
    (cut / "ply-09.tbz.tmp").write_bytes((whole / "ply-09.tbz").read_bytes()[:1000])
    kept = {p.name: p.stat().st_mtime_ns for p in cut.glob("*.tbz")}
    assert ttt_table("publish", raw_4x4, cut).exit_code == 0
    assert {p.name: p.stat().st_mtime_ns for p in cut.glob("*.tbz") if p.name in kept} == kept
    assert sorted(p.name for p in cut.iterdir()) == sorted(p.name for p in whole.iterdir())
    for path in whole.iterdir():
        assert (cut / path.name).read_bytes() == path.read_bytes(), path.name


def test_ttt_table_verify_catches_one_changed_byte_anywhere_in_a_file(
    raw_4x4: Path, tmp_path: Path
) -> None:
    """A byte of the header, the ranks, the block table, a block, the last byte: each caught,
    status 1, the file named."""
    out = tmp_path / "release"
    assert ttt_table("publish", raw_4x4, out).exit_code == 0
    path = out / "ply-08.tbz"
    clean = path.read_bytes()
    rng = random.Random(8)
    places = [0, 10, 100, 200, 300, len(clean) - 1, *rng.sample(range(len(clean)), 12)]
    for at in places:
        damaged = bytearray(clean)
        damaged[at] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(damaged))
        checked = ttt_table("verify", out)
        assert checked.exit_code == 1, at
        assert all("ply-08.tbz" in line for line in checked.stdout.splitlines()[:-1]), at
    path.write_bytes(clean)
    assert ttt_table("verify", out).exit_code == 0


@pytest.mark.parametrize(
    "args, words",
    [
        (["publish", "{raw}", "{raw}"], "not into its folder"),
        (["publish", "{tmp}/none", "{tmp}/out"], "no finished table here"),
        (["publish", "{raw}", "{raw2}"], "holds a table.json of no release"),
        (["verify", "{tmp}/none"], "no finished table here"),
    ],
    ids=["into its own folder", "no table", "onto another table", "verify nothing"],
)
def test_bad_input_is_one_line(raw_4x4: Path, tmp_path: Path, args: list[str], words: str) -> None:
    raw2 = tmp_path / "raw2"
    shutil.copytree(raw_4x4, raw2)
    filled = [arg.format(raw=raw_4x4, raw2=raw2, tmp=tmp_path) for arg in args]
    result = ttt_table(*filled)
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and words in result.stderr
    assert (raw2 / "table.json").exists()


def test_a_look_up_in_a_release_loads_no_numba(release: Path) -> None:
    """A one-shot probe of a compressed table (ttt query's) computes the records its stones
    give in plain Python: loading Numba would cost it a second or more."""
    script = (
        "import sys\n"
        "from ttt_solve.solver.position import Position\n"
        "from ttt_solve.solver.tablebase.probe import open_tablebase\n"
        f"with open_tablebase({str(release)!r}) as table:\n"
        "    rules = table.rules\n"
        "    probe = table.probe_moves(Position.parse('x../.o./...', rules))\n"
        "print(probe.value, 'numba' in sys.modules)\n"
    )
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split()[-1] == "False" and "draw" in ran.stdout, ran.stdout
