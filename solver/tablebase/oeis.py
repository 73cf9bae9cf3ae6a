"""The OEIS rows a table of n x n tic-tac-toe (k = n) gives: A317573 to A317576.

Each is a triangle read by rows, row ``n`` holding ``T(n, p)`` for ``p = 0 .. n^2`` plies
(tokens on the board), counting the positions **that occur in a game, up to rotation and
reflection** (a table's canonical positions):

* **A317573**: those that allow a winning strategy for X (X to move and winning, or O to move
  and losing), positions where X has already won included;
* **A317574**: the same for O;
* **A317575**: all of them;
* **A317576**: those that end a game: a line was made, or the board is full.

Every one is a sum of a table's counts (the 12 numbers each ply's file and manifest hold:
``[outcome][over][kind]``, outcome win, draw, loss for the side to move; kind 0 the canonical
positions), so the rows come from ``table.json`` alone, raw or compressed.

    python -m ttt_solve.solver.tablebase.oeis FOLDER_OR_MANIFEST
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

SEQUENCES = {
    "A317573": "positions X wins (X has won included)",
    "A317574": "positions O wins (O has won included)",
    "A317575": "positions",
    "A317576": "positions that end a game",
}


def oeis_rows(counts: Sequence[Sequence[int]]) -> dict[str, list[int]]:
    """The four rows from each ply's 12 counts (ply 0 first)."""
    rows: dict[str, list[int]] = {name: [] for name in SEQUENCES}
    for ply, ply_counts in enumerate(counts):
        canonical = [ply_counts[outcome * 4 + over * 2] for outcome in range(3) for over in (0, 1)]
        wins, draws, losses = (canonical[2 * o] + canonical[2 * o + 1] for o in range(3))
        x_wins, o_wins = (wins, losses) if ply % 2 == 0 else (losses, wins)
        rows["A317573"].append(x_wins)
        rows["A317574"].append(o_wins)
        rows["A317575"].append(wins + draws + losses)
        rows["A317576"].append(sum(canonical[1::2]))
    return rows


def manifest_counts(path: Path) -> list[list[int]]:
    """Each ply's counts from a table's manifest (a folder's ``table.json``, or the file)."""
    if path.is_dir():
        path = path / "table.json"
    manifest = json.loads(path.read_text())
    return [list(entry["counts"]) for entry in manifest["plies"]]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(
            "usage: python -m ttt_solve.solver.tablebase.oeis FOLDER_OR_MANIFEST", file=sys.stderr
        )
        return 2
    try:
        rows = oeis_rows(manifest_counts(Path(args[0])))
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"error: {args[0]}: not a table's manifest ({error})", file=sys.stderr)
        return 2
    for name, row in rows.items():
        print(f"{name} ({SEQUENCES[name]}): {', '.join(str(value) for value in row)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
