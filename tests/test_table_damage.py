"""A damaged table folder, as a user meets one: every byte of a file inside its digest, every
header field checked against the rules, only regular files opened (a FIFO or a device is
refused, never waited on), a malformed manifest in one line, one build at a time, and the
repair every damage message offers remaking what is damaged."""

from __future__ import annotations

import json
import os
import random
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.build import build_lock, build_table
from ttt_solve.solver.tablebase.files import (
    HEADER_SIZE,
    TableFileError,
    ply_path,
    read_header,
    read_manifest,
    verify,
)

TTT = [sys.executable, "-c", "from ttt_solve.cli.main import main; main()"]
TTT_SOLVE = [sys.executable, "-c", "from ttt_solve.cli.solve import main; main()"]
RULES = Rules(3, 4, 3)

FIELDS = {
    "rows": (10, 1),
    "columns": (11, 1),
    "k": (12, 1),
    "ply": (13, 1),
    "index kind": (14, 1),
    "record kind": (15, 1),
    "classes": (16, 8),
    "numbers per class": (24, 8),
    "first number": (32, 8),
    "numbers": (40, 8),
    "representatives": (48, 8),
    "padding": (700, 1),
}
"""Where each field of the header lies (docs/tablebase.md): offset and width."""


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sound") / "t"
    build_table(RULES, folder)
    return folder


@pytest.fixture
def table(sound: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "t"
    shutil.copytree(sound, folder)
    return folder


def table_bytes(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.tb"))}


def changed(path: Path, offset: int, width: int = 1, by: int = 1) -> None:
    """Add ``by`` to the little-endian field at ``offset``."""
    data = bytearray(path.read_bytes())
    value = int.from_bytes(data[offset : offset + width], "little") + by
    data[offset : offset + width] = (value % (1 << 8 * width)).to_bytes(width, "little")
    path.write_bytes(bytes(data))


def one_line(run: subprocess.CompletedProcess[str], *words: str) -> None:
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr, run.stderr
    for word in words:
        assert word in run.stderr, run.stderr


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_each_header_field_is_checked_against_the_rules(table: Path, field: str) -> None:
    path = ply_path(table, 6)
    changed(path, *FIELDS[field])
    with pytest.raises(TableFileError) as caught:
        read_header(path, RULES, 6)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    identity = {"rows": "a table of 4x4 k=3, not of 3x4 k=3", "columns": "a table of 3x5 k=3"}
    identity |= {"k": "a table of 3x4 k=4", "ply": "a table of ply 7, not of ply 6"}
    assert identity.get(field, f"its header's {field}") in message


def test_every_byte_of_a_file_is_inside_its_digest(table: Path) -> None:
    """A byte changed anywhere, header included (its counts too), fails the check."""
    path = ply_path(table, 6)
    sound = path.read_bytes()
    rng = random.Random(40)
    for offset in sorted(rng.sample(range(len(sound)), 60)) + list(range(56, 88, 8)):
        data = bytearray(sound)
        data[offset] ^= 0x10
        path.write_bytes(bytes(data))
        with pytest.raises(TableFileError):
            verify(path, RULES, 6)
    path.write_bytes(sound)
    verify(path, RULES, 6)


def test_a_changed_count_in_a_header_fails_ttt_table_verify(table: Path) -> None:
    changed(ply_path(table, 6), 88 + 8 * 3)  # canonical positions lost in 1
    run = subprocess.run([*TTT, "table", "verify", str(table)], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    assert "ply-06.tb: its checksum does not match" in run.stdout


def test_a_file_of_format_version_1_is_refused_and_made_again(table: Path) -> None:
    sound = table_bytes(table)
    path = ply_path(table, 3)
    header = struct.pack("<8sH6B", b"TTTTABLE", 1, 3, 4, 3, 3, 1, 1) + bytes(248)
    path.write_bytes(header + bytes(100))
    with pytest.raises(TableFileError, match="format version 1; this ttt-solve reads version 2"):
        read_header(path)
    said: list[str] = []
    build_table(RULES, table, note=said.append)
    assert said == [
        "remaking ply-03.tb: a table file of format version 1; this ttt-solve reads version 2: "
        "build the table again (ttt table build remakes every file of another version)"
    ]
    assert table_bytes(table) == sound


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("name", ["ply-05.tb", "table.json"])
def test_a_fifo_in_a_table_folder_is_refused_at_once(table: Path, name: str) -> None:
    (table / name).unlink()
    os.mkfifo(table / name)
    for command in (["verify"], ["figures"]):
        run = subprocess.run(
            [*TTT, "table", *command, str(table)], capture_output=True, text=True, timeout=120
        )
        if run.returncode == 1:  # verify lists the file among its problems
            assert f"{name}: a FIFO, not a regular file: refused" in run.stdout
            continue
        one_line(run, str(table / name), "a FIFO, not a regular file")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
@pytest.mark.parametrize("name", ["ply-05.tb", "table.json"])
def test_a_link_to_a_device_is_refused_at_once(table: Path, name: str) -> None:
    (table / name).unlink()
    os.symlink("/dev/zero", table / name)
    run = subprocess.run(
        [*TTT, "table", "figures", str(table)], capture_output=True, text=True, timeout=120
    )
    one_line(run, str(table / name), "a character device, not a regular file")


@pytest.mark.parametrize(
    ("manifest", "said"),
    [
        ("{}", "no 'format'"),
        ('{"format": 2, "rules": {"rows": 3, "cols": 4, "k": 3}}', "no 'plies'"),
        ('{"format": 2, "rules": {"rows": "3", "cols": 4, "k": 3}, "plies": []}', "'rows'"),
        ('{"format": 2, "rules": [3, 4, 3], "plies": []}', "'rules' is not an object"),
        ("[" * 100_000 + "]" * 100_000, "nested too deep"),
        ("not json", "not a table manifest"),
        (
            '{"rules": {"rows": 3, "cols": 4, "k": 3}, "plies": []}',
            "a manifest of format version 1",
        ),
    ],
    ids=["empty", "no plies", "text for a number", "a list for rules", "deep", "text", "v1"],
)
def test_a_malformed_manifest_is_one_line_naming_it(table: Path, manifest: str, said: str) -> None:
    (table / "table.json").write_text(manifest)
    with pytest.raises(TableFileError, match="table.json: ") as caught:
        read_manifest(table)
    assert said in str(caught.value) and "\n" not in str(caught.value)
    book = ["--db", str(table.parent / "b.sqlite")]
    for command in (["figures"], ["verify"], ["catalogue", *book]):
        run = subprocess.run(
            [*TTT, "table", command[0], str(table), *command[1:]],
            capture_output=True,
            text=True,
            timeout=120,
        )
        one_line(run, "table.json: ", said)
    assert not (table.parent / "b.sqlite").exists()


def test_a_long_manifest_is_refused_unread(table: Path) -> None:
    (table / "table.json").write_text(" " * (2 << 20))
    with pytest.raises(TableFileError, match="longer than 1,048,576 bytes"):
        read_manifest(table)


def test_two_builds_into_one_folder_the_second_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    with build_lock(folder):  # another build holds the folder
        run = subprocess.run(
            [*TTT, "table", "build", "3x4k3", str(folder)], capture_output=True, text=True
        )
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().splitlines()[-1] == (
        f"Error: another build is running in {folder}; wait for it to finish, or stop it"
    )
    assert not list(folder.glob("*.tb"))


@pytest.mark.slow
def test_the_offered_repair_remakes_a_damaged_table(tmp_path: Path) -> None:
    """A record byte of one ply and a header field of another, damaged in a 4x4 k=4 table book
    (a table by default on 16 cells): the commands say the book is damaged and offer
    ``ttt-solve ... --force``, which remakes those two files, saying so; the table is then
    sound and the same as before."""
    db = str(tmp_path / "b.sqlite")
    game = ["--size", "4", "--win", "4", "--db", db]
    subprocess.run([*TTT_SOLVE, *game, "-q"], check=True, capture_output=True)
    folder = tmp_path / "b.sqlite.tables" / "4x4k4"
    sound = table_bytes(folder)
    record = ply_path(folder, 10)
    data = bytearray(record.read_bytes())
    data[-1000] ^= 1
    record.write_bytes(bytes(data))
    changed(ply_path(folder, 9), *FIELDS["classes"])
    checked = subprocess.run([*TTT, "verify", *game], capture_output=True, text=True)
    assert checked.returncode == 1 and "ply-09.tb" in checked.stdout, checked.stdout
    ply_8 = "xoxo/oxox/..../...."  # its moves are looked up in ply 9
    query = subprocess.run([*TTT, "query", ply_8, *game], capture_output=True, text=True)
    one_line(query, "looks damaged", "ply-09.tb", "--force")
    repair = subprocess.run([*TTT_SOLVE, *game, "--force"], capture_output=True, text=True)
    assert repair.returncode == 0, repair.stderr
    assert "remaking ply-10.tb: its checksum does not match" in repair.stderr
    assert "remaking ply-09.tb: its header's classes is" in repair.stderr
    assert table_bytes(folder) == sound
    again = subprocess.run([*TTT, "verify", *game], capture_output=True, text=True)
    assert again.returncode == 0, again.stdout + again.stderr


def test_ttt_table_build_remakes_a_damaged_header(table: Path) -> None:
    sound = table_bytes(table)
    changed(ply_path(table, 7), *FIELDS["numbers per class"], by=8)
    run = subprocess.run(
        [*TTT, "table", "build", "3x4k3", str(table)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert "remaking ply-07.tb: its header's numbers per class is" in run.stderr
    assert table_bytes(table) == sound
    assert HEADER_SIZE == 1024
    assert json.loads((table / "table.json").read_text())["format"] == 2
