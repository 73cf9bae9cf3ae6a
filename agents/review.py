"""Games and audits reviewed against the book, for a teacher: a finished game's moves of one
player graded, each with the best moves of its position, numbered as that player counts them
(their first move is 1); an audit's costly moves, one row per position; its games' results and
blunders.

The web explorer's play page grades the visitor's game with :func:`review_game`; its audit
pages list :func:`costly_rows`, :func:`results_table` and :func:`blunders_per_game`, all with
the grading of :mod:`agents.audit`.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from ttt_solve.agents.audit import (
    GameResult,
    Graded,
    Summary,
    Truth,
    grade_game,
    summarize,
)
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Grade, Outcome
from ttt_solve.solver.vocabulary import Side


class ReviewedMove(NamedTuple):
    """One of the player's moves: its number for that player, its grade, the best moves."""

    number: int  # 1 for the player's first move, 2 for their second, ...
    graded: Graded
    best: tuple[int, ...]  # the best moves of the position it was played in


class Review(NamedTuple):
    """A player's moves in one game, graded, and their figures."""

    side: Side
    moves: tuple[ReviewedMove, ...]
    summary: Summary
    ungraded: int  # moves in positions the book does not hold


def player_number(ply: int) -> int:
    """The number a player gives the move they make at ``ply`` (X at plies 0, 2, 4 and O at
    1, 3, 5 both count 1, 2, 3)."""
    return ply // 2 + 1


def review_game(truth: Truth, rules: Rules, moves: Sequence[int], side: Side) -> Review:
    """The moves ``side`` made in the game ``moves``, graded as
    ``ttt play`` and the audit grade them."""
    records, ungraded = grade_game(truth, rules, moves, side)
    reviewed = tuple(
        ReviewedMove(player_number(r.ply), r, tuple(truth.best_moves(r.position))) for r in records
    )
    return Review(side, reviewed, summarize(records, ungraded), ungraded)


class CostlyRow(NamedTuple):
    """A position where the agent did not play a best move, and that move: ``times`` is how
    often it played it there (games) or how many reachable positions the position stands for
    (positions mode, where each is graded once)."""

    record: Graded
    times: int


def costly_rows(
    records: Iterable[Graded], weighted: bool, limit: int | None = None
) -> tuple[list[CostlyRow], int]:
    """Every graded move that was not best, one row per position and move, costliest first
    (blunders, then the score given away, then the count); ``weighted``: counted by the
    records' weights (positions mode), else one a move. Returns the first ``limit`` rows (all
    without one) and how many rows there are in all."""
    rows: dict[tuple[int, int, int], CostlyRow] = {}
    for record in records:
        if record.grade is Grade.BEST:
            continue
        key = (record.position.x, record.position.o, record.cell)
        kept = rows.get(key)
        add = record.weight if weighted else 1
        rows[key] = CostlyRow(record, add + (kept.times if kept else 0))

    def costliest(row: CostlyRow) -> tuple[bool, int, int, int, int, int]:
        r = row.record
        return (r.grade is not Grade.BLUNDER, -r.cost, -row.times, r.ply, r.position.key, r.cell)

    if limit is None or limit >= len(rows):
        return sorted(rows.values(), key=costliest), len(rows)
    return heapq.nsmallest(limit, rows.values(), key=costliest), len(rows)


def results_table(results: Iterable[GameResult]) -> dict[str, dict[str, int]]:
    """The agent's games won, drawn and lost, and lost by forfeit (a failed move; among the
    lost), as X, as O and in all."""
    table = {side: {**dict.fromkeys(Outcome, 0), "forfeited": 0} for side in (*Side, "all")}
    for result in results:
        forfeited = int(result.forfeited_by == "agent")
        for side in (result.agent_side, "all"):
            table[side][result.outcome] += 1
            table[side]["forfeited"] += forfeited
    return table


def blunders_per_game(truth: Truth, results: Iterable[GameResult]) -> list[int]:
    """How many blunders the agent made in each game."""
    return [
        sum(
            r.grade is Grade.BLUNDER
            for r in grade_game(truth, truth.rules, g.moves, g.agent_side)[0]
        )
        for g in results
    ]
