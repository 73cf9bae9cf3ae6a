"""Agents as a teacher's lab notebook has them: plain functions of a grid of ``"X"``, ``"O"``
and ``" "``, answering ``(row, col)``; loaded by ``py:tests.lab_agents:NAME,board=grid``."""

from __future__ import annotations

import random
from typing import Any

CRASH_SEED = 35


def empty_cells(board: list[list[str]]) -> list[tuple[int, int]]:
    return [(r, c) for r, row in enumerate(board) for c, cell in enumerate(row) if cell == " "]


def crashes(board: list[list[str]]) -> bool:
    """Whether the buggy agent crashes on this board: always with six cells empty, else one
    time in ten, by a generator seeded with the board itself (so every front that asks the
    same board gets the same answer, whatever order it asks in)."""
    if len(empty_cells(board)) == 6:
        return True
    return random.Random(f"{CRASH_SEED}:{board!r}").random() < 0.1


def buggy_agent(board: list[list[str]]) -> tuple[int, int]:
    """The first empty cell, row by row; raises IndexError where :func:`crashes` says so."""
    if crashes(board):
        return empty_cells(board)[len(board) * len(board[0])]  # IndexError: a student's bug
    return empty_cells(board)[0]


def buggy_factory(**_params: Any) -> Any:
    """The buggy agent whatever a curve varies (its figures are the same at every point)."""
    return buggy_agent


class _BestAtEvenPlies:
    """A full-depth search where an even number of stones is on the board; a crash elsewhere."""

    def __init__(self, rng: random.Random) -> None:
        from ttt_solve.agents.spec import make_agent

        self.search = make_agent("alphabeta:depth=9", rng)

    def select_move(self, position: Any) -> int:
        if position.ply % 2:
            raise RuntimeError("no move at odd plies")
        return self.search.select_move(position)


def best_at_even_plies(rng: random.Random) -> Any:
    """A ``py:`` factory: every move it makes is best, and every other move fails."""
    return _BestAtEvenPlies(rng)


class _KeptDraw:
    """Plays the empty cell it draws with its generator's ``random`` method, kept from the
    start (as code written for speed may keep it)."""

    def __init__(self, rng: random.Random) -> None:
        self.draw = rng.random

    def select_move(self, position: Any) -> int:
        cells = position.legal_moves()
        return cells[int(self.draw() * len(cells))]


def kept_draw(rng: random.Random) -> Any:
    """A ``py:`` factory of :class:`_KeptDraw`."""
    return _KeptDraw(rng)
