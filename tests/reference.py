"""Readers of the reference figures in data/ (the oracles of the tests)."""

from __future__ import annotations

import csv
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"


def rows(name: str) -> list[dict[str, str]]:
    with open(DATA / name, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def boards() -> dict[tuple[int, int, int], dict[str, str]]:
    """(rows, cols, k) -> reachable, canonical, value_for_x."""
    return {(int(r["rows"]), int(r["cols"]), int(r["k"])): r for r in rows("boards.csv")}
