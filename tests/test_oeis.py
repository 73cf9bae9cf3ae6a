"""The OEIS's n x n tic-tac-toe rows (A317573-A317576) from a table's counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.build import build_table
from ttt_solve.solver.tablebase.oeis import main, manifest_counts, oeis_rows

ROOT = Path(__file__).resolve().parent.parent

# The rows n = 1 .. 4 as the OEIS publishes them (A317575: the sums, with A008907 for n = 3).
PUBLISHED = {
    "A317573": [
        [1, 1],
        [1, 1, 2, 2, 0],
        [0, 0, 7, 9, 85, 67, 139, 70, 23, 12],
        [0, 0, 0, 0, 0, 0, 1100, 280, 26771, 11535, 91567, 36362, 78138, 26146, 12900, 3774, 0],
    ],
    "A317574": [
        [0, 0],
        [0, 0, 0, 0, 0],
        [0, 0, 0, 8, 5, 72, 38, 56, 23, 0],
        [0, 0, 0, 0, 0, 0, 0, 2476, 642, 31841, 11251, 66364, 21718, 29258, 8496, 1335, 371],
    ],
    "A317576": [
        [0, 1],
        [0, 0, 0, 2, 0],
        [0, 0, 0, 0, 0, 21, 21, 58, 23, 15],
        [0, 0, 0, 0, 0, 0, 0, 280, 642, 4942, 6770, 20286, 16042, 20998, 7970, 3774, 1059],
    ],
}


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_the_rows_of_n_up_to_4_are_the_published_ones(tmp_path: Path, n: int) -> None:
    build_table(Rules(n, n, n), tmp_path)
    rows = oeis_rows(manifest_counts(tmp_path))
    for name, published in PUBLISHED.items():
        assert rows[name] == published[n - 1], name
    if n == 3:
        assert rows["A317575"] == [1, 3, 12, 38, 108, 174, 204, 153, 57, 15]  # A008907
    assert sum(rows["A317575"]) == {1: 2, 2: 6, 3: 765, 4: 1217977}[n]


def test_the_rows_of_5x5_k5_hold_the_published_rules() -> None:
    """The formulas and comments of the OEIS entries: A317576(n, k) = 0 for k < 2n - 1 and
    > 0 at 2n - 1, and every full board at n^2; A317574(n, n^2) = 0 for odd n (X moves last);
    the draws on a full board are A317576(n, n^2) - A317573(n, n^2) for odd n."""
    rows = oeis_rows(manifest_counts(ROOT / "data" / "tablebases" / "5x5k5.json"))
    assert rows["A317576"][:9] == [0] * 9 and rows["A317576"][9] > 0
    assert rows["A317576"][25] == rows["A317575"][25]
    assert rows["A317574"][25] == 0
    assert rows["A317576"][25] - rows["A317573"][25] == 391736  # docs/tablebase.md's draws


def test_the_command_prints_the_rows(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(ROOT / "data" / "tablebases" / "5x5k5.json")]) == 0
    assert "A317575 (positions): 1, 6, 85, 904," in capsys.readouterr().out
    assert main(["/nonexistent"]) == 2
