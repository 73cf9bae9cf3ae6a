"""What passes from a solver to the book: a solved ply as aligned arrays, and the score codec.

A solver produces :class:`PlyTable` values; the book stores each score as a value sign
(1 win, 0 draw, -1 loss, for the side to move) and a remoteness, and reads them back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ttt_solve.solver.value import remoteness_of, score_of

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


def split_scores(
    scores: NDArray[np.integer[Any]], empty_cells: int
) -> tuple[NDArray[np.int8], NDArray[np.int16]]:
    """Arrays of scores (all with ``empty_cells`` empty cells) -> (value sign, remoteness)."""
    scores = scores.astype(np.int32)
    signs = np.sign(scores).astype(np.int8)
    remoteness = np.asarray(remoteness_of(scores, empty_cells)).astype(np.int16)
    return signs, remoteness


def join_scores(
    values: NDArray[np.integer[Any]], remoteness: NDArray[np.integer[Any]]
) -> NDArray[np.int16]:
    """The inverse of :func:`split_scores`: (value sign, remoteness) arrays -> scores."""
    values = np.asarray(values, dtype=np.int32)
    remoteness = np.asarray(remoteness, dtype=np.int32)
    return np.asarray(score_of(np.sign(values), remoteness)).astype(np.int16)
