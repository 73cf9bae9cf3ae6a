"""The published tables (3x7, 3x8, 4x6, 5x5): the manifests in data/tablebases (each
ply's records, counts and digest, as the builds wrote them) against the index's arithmetic, and
the figures printed in docs/tablebase.md against the manifests."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.build import plan_build

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = {
    "3x7k3": Rules(3, 7, 3),
    "3x7k4": Rules(3, 7, 4),
    "3x7k5": Rules(3, 7, 5),
    "3x7k6": Rules(3, 7, 6),
    "3x8k3": Rules(3, 8, 3),
    "3x8k4": Rules(3, 8, 4),
    "3x8k5": Rules(3, 8, 5),
    "3x8k6": Rules(3, 8, 6),
    "4x6k3": Rules(4, 6, 3),
    "4x6k4": Rules(4, 6, 4),
    "4x6k5": Rules(4, 6, 5),
    "4x6k6": Rules(4, 6, 6),
    "5x5k3": Rules(5, 5, 3),
    "5x5k4": Rules(5, 5, 4),
    "5x5k5": Rules(5, 5, 5),
}


def manifest(name: str) -> dict:
    return json.loads((ROOT / "data" / "tablebases" / f"{name}.json").read_text())


def documented_rows(rules: Rules) -> dict[int, list[int]]:
    """The per-ply rows of the page's table for this game, as numbers ('-' as None)."""
    page = (ROOT / "docs" / "tablebase.md").read_text()
    start = page.index(f"**{rules.name}:**")
    rows = {}
    for line in page[start:].splitlines()[2:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if not cells[0].isdigit():
            continue
        rows[int(cells[0])] = [None if c == "-" else int(c.replace(",", "")) for c in cells[1:]]
    return rows


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_the_manifest_holds_every_ply_of_the_index(name: str) -> None:
    rules = PUBLISHED[name]
    data = manifest(name)
    assert data["rules"] == rules.as_dict()
    plan = plan_build(rules, Path("/nonexistent"), "cpu")
    assert [entry["records"] for entry in data["plies"]] == plan.records
    for entry in data["plies"]:
        counts = np.array(entry["counts"]).reshape(3, 2, 2)
        assert (counts[..., 1] >= counts[..., 0]).all()  # every canonical position is reachable
        assert counts[0, 1].sum() == 0  # a game over is never won by the side to move
        assert re.fullmatch(r"[0-9a-f]{64}", entry["blake2b"])
    root = np.array(data["plies"][0]["counts"]).reshape(3, 2, 2)
    # the atlas's values: X wins k=3, and no other of these boards
    won = name in ("3x7k3", "3x8k3", "4x6k3", "5x5k3")
    assert root[0 if won else 1, 0, 0] == 1 and root.sum() == 2  # the empty board, once


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_the_documented_figures_are_the_manifests(name: str) -> None:
    rules = PUBLISHED[name]
    rows = documented_rows(rules)
    assert sorted(rows) == list(range(rules.cells + 1))
    for entry in manifest(name)["plies"]:
        counts = np.array(entry["counts"]).reshape(3, 2, 2)
        expected = [int(counts[outcome, :, kind].sum()) for kind in (0, 1) for outcome in range(3)]
        expected += [int(counts[2, 1, 0]), int(counts[1, 1, 0])]
        assert rows[entry["ply"]][:8] == expected, entry["ply"]


RELEASES = ROOT / "data" / "tablebases" / "releases"


@pytest.mark.parametrize("name", sorted(p.name for p in RELEASES.iterdir()))
def test_a_released_tables_manifest_and_sums_are_its_builds(name: str) -> None:
    """A release (``ttt table publish``) holds the build's records and counts, ply by ply,
    and its SHA256SUMS and B2SUMS list the digests its manifest gives each file."""
    folder = RELEASES / name
    release, built = json.loads((folder / "table.json").read_text()), manifest(name)
    assert release["rules"] == built["rules"]
    assert [(e["ply"], e["records"], e["counts"]) for e in release["plies"]] == [
        (e["ply"], e["records"], e["counts"]) for e in built["plies"]
    ]
    for sums, field in (("SHA256SUMS", "sha256"), ("B2SUMS", "blake2b")):
        listed = dict(reversed(line.split()) for line in (folder / sums).read_text().splitlines())
        for entry in release["plies"]:
            assert listed.pop(entry["file"]) == entry[field], (sums, entry["file"])
        assert set(listed) <= {"table.json", "figures.json", "figures.md", "README.md"}
