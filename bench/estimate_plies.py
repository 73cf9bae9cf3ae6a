"""Positions per ply of a game too large to enumerate: exact for the first plies, sampled after.

* **Exact** (plies up to ``--exact-to``): the forward pass of the solver itself
  (:func:`solver.exhaustive.plies.canonical_children`), counting canonical keys and, through
  their orbit sizes, reachable positions.
* **Sampled** (the other plies): a ply's placements (``C(cells, p) * C(p, ceil(p / 2))``
  boards with the right stone counts) are drawn uniformly; a drawn board is reachable when the
  player who did not move last has no line and the last mover either has none or has a stone
  whose removal leaves none (the winning move). The reachable count is the placements times
  the reachable fraction, the canonical count the placements times the mean of
  ``1 / orbit size`` over reachable draws; both with a standard error.

    python bench/estimate_plies.py --size 5 --win 4 --exact-to 8
    python bench/estimate_plies.py --size 4x5 --win 4 --exact-to 20   # the check: all exact
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from numpy.typing import NDArray
from tabulate import tabulate

from ttt_solve.solver.exhaustive.keyarrays import KeyArrays
from ttt_solve.solver.exhaustive.plies import canonical_children, won_by_last_mover
from ttt_solve.solver.rules import Rules


def exact_plies(arrays: KeyArrays, last_ply: int) -> list[tuple[int, int, int]]:
    """(canonical, reachable, open canonical) of plies 0..last_ply, by enumeration."""
    keys = np.zeros(1, dtype=np.uint64)
    counts = []
    for ply in range(last_ply + 1):
        won = won_by_last_mover(arrays, keys, ply)
        reachable = int(arrays.orbit_sizes(keys).astype(np.int64).sum())
        counts.append((len(keys), reachable, int(np.count_nonzero(~won))))
        if ply == last_ply or ply == arrays.cells:
            break
        keys = canonical_children(arrays, keys[~won], ply)
    return counts


def sampled_ply(
    arrays: KeyArrays, ply: int, samples: int, rng: np.random.Generator
) -> tuple[float, float, float, float, float]:
    """(canonical, its standard error, reachable, its standard error, open fraction of the
    reachable) of one ply, estimated from ``samples`` uniform placements."""
    cells = arrays.cells
    x_count, o_count = (ply + 1) // 2, ply // 2
    placements = math.comb(cells, ply) * math.comb(ply, x_count)
    order = np.argsort(rng.random((samples, cells)), axis=1)
    bits = np.left_shift(np.uint64(1), order.astype(np.uint64))
    x_stones = (
        np.bitwise_or.reduce(bits[:, :x_count], axis=1) if x_count else np.zeros(samples, np.uint64)
    )
    o_stones = (
        np.bitwise_or.reduce(bits[:, x_count:ply], axis=1)
        if o_count
        else np.zeros(samples, np.uint64)
    )
    last, other = (x_stones, o_stones) if ply % 2 == 1 else (o_stones, x_stones)
    last_order = order[:, :x_count] if ply % 2 == 1 else order[:, x_count:ply]
    reachable = ~arrays.has_line(other)
    last_won = arrays.has_line(last)
    if ply:
        winning_move = np.zeros(samples, dtype=bool)
        for stone in range(last_order.shape[1]):
            removed = last & ~np.left_shift(np.uint64(1), last_order[:, stone].astype(np.uint64))
            winning_move |= ~arrays.has_line(removed)
        reachable &= ~last_won | winning_move
    keys = x_stones | (o_stones << np.uint64(cells))
    weight = np.where(reachable, 1.0 / arrays.orbit_sizes(keys), 0.0)
    open_fraction = float(np.count_nonzero(reachable & ~last_won)) / max(1, int(reachable.sum()))
    return (
        placements * float(weight.mean()),
        placements * float(weight.std()) / math.sqrt(samples),
        placements * float(reachable.mean()),
        placements * float(reachable.std()) / math.sqrt(samples),
        open_fraction,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="5", help="N or RxC (default 5)")
    parser.add_argument("--win", type=int, default=4, help="k in a row (default 4)")
    parser.add_argument("--exact-to", type=int, default=7, help="last ply counted exactly")
    parser.add_argument("--samples", type=int, default=200_000, help="draws per sampled ply")
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    rules = Rules.from_size(args.size, args.win)
    arrays = KeyArrays(rules)
    rng = np.random.default_rng(args.seed)
    exact = exact_plies(arrays, min(args.exact_to, rules.cells))
    rows: list[tuple[object, ...]] = []
    totals: NDArray[np.float64] = np.zeros(2)
    for ply in range(rules.cells + 1):
        if ply < len(exact):
            canonical, reachable, open_count = exact[ply]
            rows.append(
                (
                    ply,
                    "exact",
                    f"{canonical:,}",
                    "",
                    f"{reachable:,}",
                    "",
                    f"{open_count / canonical:.3f}",
                )
            )
            totals += (canonical, reachable)
            continue
        canonical_f, canonical_se, reachable_f, reachable_se, open_fraction = sampled_ply(
            arrays, ply, args.samples, rng
        )
        rows.append(
            (
                ply,
                "sampled",
                f"{canonical_f:,.3g}",
                f"{canonical_se:,.2g}",
                f"{reachable_f:,.3g}",
                f"{reachable_se:,.2g}",
                f"{open_fraction:.3f}",
            )
        )
        totals += (canonical_f, reachable_f)
    print(f"{rules.name}: plies up to {len(exact) - 1} exact, {args.samples:,} draws a ply after")
    print(
        tabulate(
            rows,
            headers=["ply", "how", "canonical", "± s.e.", "reachable", "± s.e.", "open share"],
        )
    )
    print(f"total: canonical {totals[0]:,.4g}, reachable {totals[1]:,.4g}")


if __name__ == "__main__":
    main()
