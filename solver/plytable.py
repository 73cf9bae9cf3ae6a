"""What passes from a solver to the book: a solved ply as aligned arrays, and the score codec.

A solver produces :class:`PlyTable` values; the book stores each score as a value sign
(1 win, 0 draw, -1 loss, for the side to move) and a remoteness, and reads them back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ttt_solve.solver.value import WIN_SCORE

Progress = Callable[[int, int], None]
"""``progress(done, total)``: units of work done so far out of a total."""


class PlyTable(NamedTuple):
    """The solved canonical positions of one ply, as aligned arrays sorted by key.

    * ``keys``: canonical packed keys (``uint64``, ascending),
    * ``scores``: side-to-move scores (``int16``; see :mod:`solver.value`),
    * ``best_moves``: bitmask of the best cells in the canonical orientation (``uint64``;
      0 for terminal positions),
    * ``images``: how many reachable positions each canonical one stands for (``uint8``).
    """

    ply: int
    keys: np.ndarray
    scores: np.ndarray
    best_moves: np.ndarray
    images: np.ndarray


def split_scores(scores: np.ndarray, empty_cells: int) -> tuple[np.ndarray, np.ndarray]:
    """Arrays of scores (all with ``empty_cells`` empty cells) -> (value sign, remoteness)."""
    scores = scores.astype(np.int32)
    signs = np.sign(scores).astype(np.int8)
    remoteness = np.where(
        scores > 0, WIN_SCORE - scores, np.where(scores < 0, WIN_SCORE + scores, empty_cells)
    ).astype(np.int16)
    return signs, remoteness


def join_scores(values: np.ndarray, remoteness: np.ndarray) -> np.ndarray:
    """The inverse of :func:`split_scores`: (value sign, remoteness) arrays -> scores."""
    values = np.asarray(values, dtype=np.int32)
    remoteness = np.asarray(remoteness, dtype=np.int32)
    return np.where(
        values > 0, WIN_SCORE - remoteness, np.where(values < 0, remoteness - WIN_SCORE, 0)
    ).astype(np.int16)
