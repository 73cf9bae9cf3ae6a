"""An atlas of m,n,k-games: the value of every small game, and how each was decided.

Connect-Four has John Tromp's table of every board size; the known values of m,n,k-games are
scattered over papers. :func:`atlas_games` lists every game (R, C, k) with 1 <= R <= C <= 8
and 3 <= k <= 6 (R <= C: a board turned a quarter is the same game), and :func:`decide`
decides one within a time limit by the first method that does:

* ``rule``: k > C, no line of k fits the board: a draw (the board fills);
* ``exhaustive``: a board of at most :data:`EXHAUSTIVE_CELLS` cells, by the exhaustive
  solver: the value and remoteness of the empty board;
* ``pairing``: each side has a pairing (:mod:`solver.prover.pairing`) from the empty board, checked
  by the code: neither can complete a line, a draw with no search;
* ``threats``: X wins by continuous threats from the empty board (:func:`Prover.threat_win`);
* ``search``: the alpha-beta prover (:class:`~solver.prover.search.Prover`). X can never lose an
  m,n,k-game (strategy stealing: an extra stone never hurts, so the first player is never
  worse off than the second; A. W. Hales and R. I. Jewett, "Regularity and positional games",
  1963), so a draw needs only the search's proof that X cannot win.

The remoteness of a win is searched with the time left after its value; a draw's is the
number of cells. An entry the time limit stops is ``unknown``, with the nodes searched by then.
Every entry with a published value (:data:`PUBLISHED`) is checked against it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from ttt_solve.processes import results_as_done, submit_all, worker_pool
from ttt_solve.solver.errors import SearchTimeout
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Value

if TYPE_CHECKING:
    from ttt_solve.solver.prover.search import Prunings

LARGEST_SIDE = 8
"""The atlas's boards: at most 8 x 8 (64 cells, the compiled prover's limit)."""
K_RANGE = range(3, 7)
"""The atlas's k: 3 to 6."""
EXHAUSTIVE_CELLS = 16
"""Boards of at most this many cells are solved exhaustively (4x4: about a second)."""

PUBLISHED: dict[tuple[int, int, int], tuple[str, str]] = {
    (3, 3, 3): ("draw", "tic-tac-toe"),
    (3, 4, 3): ("win", "exhaustive enumerations, cross-checked"),
    (4, 4, 3): ("win", "exhaustive enumerations, cross-checked"),
    (4, 4, 4): ("draw", "exhaustive enumerations, cross-checked"),
    (4, 5, 4): ("draw", "exhaustive enumerations, cross-checked"),
    (4, 6, 4): ("draw", "published m,n,k values"),
    (4, 7, 4): ("draw", "published m,n,k values"),
    (4, 8, 4): ("draw", "published m,n,k values"),
    (5, 5, 4): ("draw", "published m,n,k values"),
    (5, 6, 4): ("win", "published m,n,k values"),
    (5, 5, 5): ("draw", "published m,n,k values"),
    (6, 6, 5): ("draw", "published m,n,k values"),
    (7, 7, 5): ("draw", "Hsu, Ko, Chen, Wei, Hsueh and Wu 2020"),
    (8, 8, 5): ("draw", "Hsu, Ko, Chen, Wei, Hsueh and Wu 2020 (17.4 hours)"),
}
"""Published values for X of the atlas's games, by (rows, columns, k), rows <= columns (the
literature writes columns first: (5,4,4) is 4 rows of 5), and where from; the project's
docs/conventions.md lists them."""


class Entry(NamedTuple):
    """One game of the atlas."""

    rows: int
    cols: int
    k: int
    value: str  # for X, who moves first: "win", "draw" or "unknown" (X never loses)
    remoteness: int | None  # plies to the end under perfect play, when known
    method: str  # rule, exhaustive, pairing, threats, search, or unknown
    note: str  # what the method rests on, or how far the search got
    nodes: int  # positions solved (exhaustive) or nodes searched
    seconds: float

    @property
    def published(self) -> str | None:
        """The published value for X, if any."""
        known = PUBLISHED.get((self.rows, self.cols, self.k))
        return known[0] if known else None

    @property
    def agrees(self) -> bool:
        """Whether the entry agrees with the published value (an unknown entry, or one with
        none published, agrees)."""
        return self.published is None or self.value in ("unknown", self.published)

    def as_dict(self) -> dict[str, Any]:
        return self._asdict() | {"published": self.published}


def atlas_games(max_cells: int | None = None) -> list[tuple[int, int, int]]:
    """Every ``(rows, cols, k)`` of the atlas, smallest boards first, up to ``max_cells``."""
    games = [
        (rows, cols, k)
        for rows in range(1, LARGEST_SIDE + 1)
        for cols in range(rows, LARGEST_SIDE + 1)
        for k in K_RANGE
        if max_cells is None or rows * cols <= max_cells
    ]
    return sorted(games, key=lambda game: (game[0] * game[1], game))


def decide(
    rows: int,
    cols: int,
    k: int,
    seconds: float,
    table_bits: int = 22,
    prunings: Prunings | None = None,
) -> Entry:
    """The atlas's entry for ``(rows, cols, k)``, decided within about ``seconds`` (see the
    module docstring); ``table_bits``: the prover's table (``2 ** (bits + 1)`` slots)."""
    # The solvers load NumPy and Numba: imported when a game is decided, not with the atlas's
    # list of games (``ttt atlas --help``).
    from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
    from ttt_solve.solver.prover.pairing import pairing_for
    from ttt_solve.solver.prover.search import Prover, Prunings

    started = time.perf_counter()

    def entry(value: str, remoteness: int | None, method: str, note: str, nodes: int) -> Entry:
        elapsed = round(time.perf_counter() - started, 2)
        return Entry(rows, cols, k, value, remoteness, method, note, nodes, elapsed)

    if k > cols:
        return entry("draw", rows * cols, "rule", f"k > C: no line of {k} fits", 0)
    rules = Rules(rows, cols, k)
    if rules.cells <= EXHAUSTIVE_CELLS:
        plies = list(ExhaustiveSolver(rules).solve())
        start = Value.from_score(int(plies[-1].scores[0]), rules.cells)
        solved = sum(len(ply.keys) for ply in plies)
        # the empty board's value is X's: X is to move there
        return entry(start.outcome.value, start.remoteness, "exhaustive", "every position", solved)
    start_position = Position.start(rules)
    if all(pairing_for(start_position, defender_is_x) for defender_is_x in (True, False)):
        return entry("draw", rules.cells, "pairing", "a pairing for each side", 0)
    prover = Prover(rules, table_bits=table_bits, prunings=prunings or Prunings.every())
    deadline = started + seconds
    method, note = "search", ""
    if prover.threat_win(start_position):
        method, note, x_wins = "threats", "X wins by continuous threats", True
    else:
        try:
            x_wins = prover.bound(start_position, 0, 1, deadline) > 0
        except SearchTimeout:
            return entry("unknown", None, "unknown", f"not decided in {seconds:g} s", prover.nodes)
    if not x_wins:
        note = "X cannot win (search); X cannot lose (strategy stealing)"
        return entry("draw", rules.cells, method, note, prover.nodes)
    try:
        remoteness = prover.solve(start_position, deadline).value.remoteness
    except SearchTimeout:
        note = (note + "; " if note else "") + "remoteness not found in time"
        return entry("win", None, method, note, prover.nodes)
    return entry("win", remoteness, method, note or "X wins (search)", prover.nodes)


def decide_games(
    games: list[tuple[int, int, int]], seconds: float, jobs: int = 1, table_bits: int = 22
) -> Iterator[Entry]:
    """:func:`decide` each game, in this process (``jobs`` 1) or in ``jobs`` worker processes,
    yielding the entries as they are decided (with workers, in any order)."""
    tasks = [(rows, cols, k, seconds, table_bits) for rows, cols, k in games]
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield decide(*task)
        return
    with worker_pool(min(jobs, len(tasks))) as (pool, held):
        yield from results_as_done(submit_all(pool, _decide_task, tasks), held=held)


def _decide_task(task: tuple[int, int, int, float, int]) -> Entry:
    return decide(*task)
