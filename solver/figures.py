"""Summary figures of a solved game, accumulated ply by ply as the solver yields them.

The figures are the ones published for solved games (counts by ply, terminal results, side-to-move
values, the remoteness table), each both over all reachable positions and over canonical
(symmetry-reduced) ones. :meth:`Figures.to_dict` gives plain JSON-able data for storage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ttt_solve.solver.value import Outcome
from ttt_solve.solver.vocabulary import Side

if TYPE_CHECKING:
    from ttt_solve.solver.plytable import PlyTable


@dataclass
class Figures:
    """Counts of one solved game; fill with :meth:`add`, one ply table at a time."""

    cells: int
    by_ply: dict[str, dict[int, int]] = field(
        default_factory=lambda: {"reachable": {}, "canonical": {}}
    )
    terminal: dict[str, dict[str, int]] = field(
        default_factory=lambda: {
            w: {**dict.fromkeys(Side, 0), "draw": 0} for w in ("reachable", "canonical")
        }
    )
    values: dict[str, dict[str, int]] = field(
        default_factory=lambda: {w: dict.fromkeys(Outcome, 0) for w in ("reachable", "canonical")}
    )
    values_for_x: dict[str, dict[str, int]] = field(
        default_factory=lambda: {w: dict.fromkeys(Outcome, 0) for w in ("reachable", "canonical")}
    )
    # remoteness[weight][outcome][r] = count
    remoteness: dict[str, dict[str, dict[int, int]]] = field(
        default_factory=lambda: {w: {o: {} for o in Outcome} for w in ("reachable", "canonical")}
    )
    start_score: int | None = None

    def add(self, table: PlyTable) -> None:
        """Count one solved ply."""
        # NumPy is imported here, not at the top: reading stored figures (every ``ttt query``)
        # must not pay for it.
        import numpy as np

        from ttt_solve.solver.plytable import split_scores

        ply, scores = table.ply, table.scores.astype(np.int32)
        weights = {
            "reachable": table.images.astype(np.int64),
            "canonical": np.ones(len(scores), dtype=np.int64),
        }
        outcome_masks = {
            Outcome.WIN: scores > 0,
            Outcome.DRAW: scores == 0,
            Outcome.LOSS: scores < 0,
        }
        _, remoteness = split_scores(scores, self.cells - ply)
        terminal = remoteness == 0
        x_to_move = ply % 2 == 0
        for name, weight in weights.items():
            self.by_ply[name][ply] = int(weight.sum())
            for outcome, mask in outcome_masks.items():
                count = int(weight[mask].sum())
                self.values[name][outcome] += count
                for_x = outcome if x_to_move else Outcome.from_sign(-outcome.sign)
                self.values_for_x[name][for_x] += count
                if count:
                    r_counts = np.bincount(remoteness[mask], weights=weight[mask])
                    table_r = self.remoteness[name][outcome]
                    for r in np.flatnonzero(r_counts):
                        table_r[int(r)] = table_r.get(int(r), 0) + int(r_counts[r])
            lost = terminal & (scores < 0)
            drawn = terminal & (scores == 0)
            # A terminal loss for the side to move was won by the other side.
            self.terminal[name][Side.O if x_to_move else Side.X] += int(weight[lost].sum())
            self.terminal[name]["draw"] += int(weight[drawn].sum())
        if ply == 0:
            self.start_score = int(scores[0])

    @property
    def reachable(self) -> int:
        return sum(self.by_ply["reachable"].values())

    @property
    def canonical(self) -> int:
        return sum(self.by_ply["canonical"].values())

    def to_dict(self) -> dict[str, Any]:
        """Plain data (str keys) for JSON storage; :meth:`from_dict` reads it back."""

        def keys_to_str(d: dict[Any, Any]) -> dict[str, Any]:
            return {
                str(k): (keys_to_str(v) if isinstance(v, dict) else v)
                for k, v in sorted(d.items(), key=lambda kv: (str(type(kv[0])), kv[0]))
            }

        return {
            "cells": self.cells,
            "by_ply": keys_to_str(self.by_ply),
            "terminal": self.terminal,
            "values": self.values,
            "values_for_x": self.values_for_x,
            "remoteness": keys_to_str(self.remoteness),
            "start_score": self.start_score,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Figures:
        def int_keys(d: dict[str, Any]) -> dict[int, Any]:
            return {int(k): v for k, v in d.items()}

        return cls(
            cells=data["cells"],
            by_ply={w: int_keys(d) for w, d in data["by_ply"].items()},
            terminal=data["terminal"],
            values=data["values"],
            values_for_x=data["values_for_x"],
            remoteness={
                w: {o: int_keys(d) for o, d in per.items()} for w, per in data["remoteness"].items()
            },
            start_score=data["start_score"],
        )
