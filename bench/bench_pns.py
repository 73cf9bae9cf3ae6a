"""Depth-first proof-number search (df-pn) against the alpha-beta prover, on the weak question.

The question is the one the split proofs of bench/bench_stretch.py ask: can X win from a
position (after X's first move: can O hold the draw?). This script answers it two ways and
prints the nodes and seconds of each, in one run:

* **df-pn** (A. Nagai, "Df-pn algorithm for searching AND/OR trees and its applications",
  PhD thesis, University of Tokyo, 2002; the survey of A. Kishimoto, M. Winands, M. Müller
  and J.-T. Saito, "Game-tree search using proof numbers: the first twenty years", ICGA
  Journal 35(3), 2012), with a transposition table (a dictionary keyed by the canonical key)
  and the 1+epsilon trick of J. Pawlewicz and L. Lew (2007). X's nodes are OR nodes (X
  proves a win), O's AND nodes. A node is checked when it is first met, with the checks
  the alpha-beta search applies at a node (``SearchEngine`` runs the same compiled ones): a
  threat cell of the mover, two threat cells of its opponent, the window clamps (no live
  line, too few empty cells), a win by continuous threats of the mover, the breaker's proofs
  (pairing, potential, partial pairing; for the breaker to move, also a pairing after one
  of its moves), and a move that makes two threats at once. Its moves are the alpha-beta
  search's (a forced block alone, one dead cell, dominated moves left out). The search
  itself is plain Python: compare its nodes first; its nodes per second show what a compiled
  df-pn would have to gain back.
* **alpha-beta**: ``Prover(rules, weak=True, prunings=...).bound`` with the null window of the
  question, a fresh prover each time, with the strongest prunings and with every pruning
  (``strongest`` and relevance zones).

Nodes: the alpha-beta search counts each call of its node function (a node closed at once by
a check or the table counts too); df-pn counts each position checked when first met plus each
expansion of a node (the ``checked`` and ``expanded`` columns). Each case is
``BOARD:WHAT[:SECONDS]``: the board as published (columns,rows,k); ``start``, ``all`` (every
canonical first move) or a first move's cell name; the CPU seconds allowed to each search
(else ``--limit``). Times are CPU seconds of this process, which a busy machine disturbs
less than the wall clock (but still: the caches are shared)::

    nice python bench/bench_pns.py                      # the cases of docs/prover.md
    nice python bench/bench_pns.py --cases 7,7,5:all 9,4,4:e2:300 --limit 120
    nice python bench/bench_pns.py --cases 8,8,5:a1:1200 --searches df-pn

A search out of time is "not proved"; df-pn then shows how far its root's proof and disproof
numbers got.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # common.py beside it
from bench_prover import PRUNINGS  # noqa: E402
from common import load_average  # noqa: E402
from tabulate import tabulate  # noqa: E402

from ttt_solve.solver.errors import SearchTimeout  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.prover.search import (  # noqa: E402
    Prover,
    Prunings,
    SearchEngine,
    default_engine,
    root_of,
)
from ttt_solve.solver.rules import Rules  # noqa: E402

INFINITY = 1 << 62
"""A proof or disproof number of a solved node; sums of numbers stop just below it."""

WON = (0, INFINITY)
"""(phi, delta) of a node whose side to move reaches its goal."""
LOST = (INFINITY, 0)
"""(phi, delta) of a node whose side to move does not."""
UNKNOWN = (1, 1)
"""(phi, delta) of a node not yet checked, or checked and not solved."""


CASES = ["7,7,5:start", "7,7,5:all", "9,4,4:a1:60", "9,4,4:e2:60", "8,8,5:a1:300"]
"""The cases of the table in docs/prover.md."""
SEARCHES = ("df-pn", "strongest", "every")
"""The searches compared: df-pn, and alpha-beta with the strongest and with every pruning."""
SLICE = 600.0
"""Wall seconds of one slice of an alpha-beta search (see :func:`alpha_beta`)."""


class ProofNumberSearch:
    """df-pn of "can X win?" with the alpha-beta search's checks and moves.

    In the negamax form of df-pn each node holds ``(phi, delta)``: the proof and disproof
    numbers of its side to move's goal (X: to win; O: to keep X from winning), so that
    ``phi(n) = min delta(child)`` and ``delta(n) = sum phi(child)``. ``prunings``: those of
    the checks and moves; ``epsilon``: the 1+epsilon trick (0: Nagai's plain df-pn).
    ``eager``: check every child of a node when the node is expanded (as L. V. Allis'
    proof-number search evaluates new nodes), so that the children solved at once count in
    the parent's numbers from the start; else a child is checked only when the search enters
    it, and counts as unknown (1, 1) until then.
    ``deadline``: a ``time.process_time()`` value (CPU seconds of this process), past it
    :class:`SearchTimeout`.
    ``report``: called with the root's proof and disproof numbers (for X) after each step
    at the root.
    """

    def __init__(
        self,
        rules: Rules,
        prunings: Prunings = PRUNINGS["strongest"],
        epsilon: float = 0.25,
        eager: bool = True,
        deadline: float | None = None,
        report: Callable[[int, int], None] | None = None,
    ) -> None:
        self.rules = rules
        self.prunings = prunings
        self.epsilon = epsilon
        self.eager = eager
        self.deadline = deadline if deadline is not None else float("inf")
        self.report = report
        compiled = default_engine(rules) == "compiled"
        self.engine = SearchEngine(rules, 1, compiled=compiled, prunings=prunings)
        self.table: dict[int, tuple[int, int]] = {}
        """Canonical key -> (phi, delta) of every position met."""
        self.checked = 0  # positions checked when first met
        self.expanded = 0  # expansions (calls of _mid)
        self.root_numbers = (1, 1)  # the root's (proof, disproof) numbers for X, last seen

    @property
    def nodes(self) -> int:
        return self.checked + self.expanded

    def x_wins(self, position: Position) -> bool:
        """Whether X wins from ``position`` (the side to move either)."""
        if position.winner is not None:
            return position.winner == "x"
        images = position.image_keys()
        numbers = self._mid(images, min(images), INFINITY, INFINITY, 0)
        mover_wins = numbers[0] == 0
        return mover_wins == position.x_to_move

    # -- the checks of a new node --------------------------------------------------------------

    def _check(self, x: int, o: int) -> tuple[int, int]:
        """(phi, delta) of a position first met: solved by the alpha-beta search's checks, or
        :data:`UNKNOWN`."""
        self.checked += 1
        position = Position(self.rules, x, o)
        x_to_move = position.x_to_move
        root = root_of(position)
        # X's goal is a win, O's that X does not win: who reaches its goal at once?
        if root.empties == 0:
            return LOST if x_to_move else WON
        if root.threats_me:
            return WON
        if root.threats_opp & (root.threats_opp - 1):
            return LOST
        if x_to_move and (not root.live_me or root.empties < 3):
            return LOST
        if not x_to_move and (not root.live_opp or root.empties < 4):
            return WON
        if self.prunings.threats and self.engine.threat_win(root):
            return WON
        if self.engine.breaker_holds(root, maker_to_move=x_to_move):
            return LOST if x_to_move else WON
        if self.engine.moves(root) is None:
            return WON
        return UNKNOWN

    # -- the search ------------------------------------------------------------------------------

    def _children(self, images: tuple[int, ...]) -> list[tuple[int, tuple[int, ...]]]:
        """The canonical key and image keys of each child the alpha-beta search would try,
        each one checked (and put in the table) when first met."""
        cells = self.rules.cells
        x, o = images[0] & self.rules.full, images[0] >> cells
        position = Position(self.rules, x, o)
        moves = self.engine.moves(root_of(position))
        assert moves is not None  # such a node was solved when first met
        offset = 0 if position.x_to_move else cells
        children = []
        for cell in moves:
            bits = self.rules.bit_images[offset + cell]
            child = tuple(image | bit for image, bit in zip(images, bits))
            key = min(child)
            if self.eager and key not in self.table:
                self.table[key] = self._check(child[0] & self.rules.full, child[0] >> cells)
            children.append((key, child))
        return children

    def _mid(
        self, images: tuple[int, ...], key: int, phi_limit: int, delta_limit: int, depth: int
    ) -> tuple[int, int]:
        """Search the node until its phi reaches ``phi_limit`` or its delta ``delta_limit``;
        its (phi, delta), also stored in the table."""
        table = self.table
        numbers = table.get(key)
        if numbers is None:
            numbers = self._check(images[0] & self.rules.full, images[0] >> self.rules.cells)
            table[key] = numbers
        if not all(numbers):  # solved
            return numbers
        self.expanded += 1
        if not self.expanded & 1023 and time.process_time() > self.deadline:
            raise SearchTimeout(f"df-pn passed its deadline after {self.nodes:,} nodes")
        children = self._children(images)
        while True:
            phi, delta, best, second = INFINITY, 0, 0, INFINITY
            for at, (child_key, _) in enumerate(children):
                child_phi, child_delta = table.get(child_key, UNKNOWN)
                delta = min(delta + child_phi, INFINITY - 1)
                if child_delta < phi:
                    best, second, phi = at, phi, child_delta
                elif child_delta < second:
                    second = child_delta
            if delta and not phi:
                delta = INFINITY  # a child where the opponent fails its goal: the node is won
            elif phi == INFINITY or not delta:
                phi, delta = LOST  # the opponent reaches its goal after every move
            table[key] = (phi, delta)
            if depth == 0:
                self._report(images, phi, delta)
            if phi >= phi_limit or delta >= delta_limit:
                return phi, delta
            child_key, child_images = children[best]
            child_phi, child_delta = table.get(child_key, UNKNOWN)
            self._mid(
                child_images,
                child_key,
                delta_limit - delta + child_phi,
                min(phi_limit, int(second * (1 + self.epsilon)) + 1),
                depth + 1,
            )

    def _report(self, images: tuple[int, ...], phi: int, delta: int) -> None:
        x_to_move = (images[0] & self.rules.full).bit_count() == (
            images[0] >> self.rules.cells
        ).bit_count()
        self.root_numbers = (phi, delta) if x_to_move else (delta, phi)
        if self.report:
            self.report(*self.root_numbers)


# -- the measurement -------------------------------------------------------------------------------


def first_moves(rules: Rules) -> list[int]:
    """One cell of each canonical first move, in cell order."""
    start = Position.start(rules)
    seen: dict[int, int] = {}
    for cell in start.legal_moves():
        seen.setdefault(start.play(cell).canonical_key, cell)
    return sorted(seen.values())


def alpha_beta(position: Position, prunings: Prunings, limit: float) -> tuple[str, int, float]:
    """("X wins" / "O holds" / "not proved", nodes, CPU seconds) of the weak prover, within
    ``limit`` CPU seconds: the prover's deadline is on the wall clock, so it runs in slices of
    :data:`SLICE` seconds (its table keeps what each proved) until done or out of time."""
    prover = Prover(position.rules, weak=True, prunings=prunings, table_bits=24)
    started = time.process_time()
    alpha, beta = (0, 1) if position.x_to_move else (-1, 0)
    while True:
        try:
            bound = prover.bound(position, alpha, beta, deadline=time.perf_counter() + SLICE)
            break
        except SearchTimeout:
            if time.process_time() - started > limit:
                return "not proved", prover.nodes, time.process_time() - started
    x_wins = bound > 0 if position.x_to_move else bound < 0
    return ("X wins" if x_wins else "O holds"), prover.nodes, time.process_time() - started


def df_pn(
    position: Position, limit: float, args: argparse.Namespace
) -> tuple[str, ProofNumberSearch, float]:
    """("X wins" / "O holds" / "not proved", the search, seconds), with a progress line
    every ``args.report_every`` seconds."""
    started = time.process_time()
    last = [started]

    def report(proof: int, disproof: int) -> None:
        now = time.process_time()
        if now - last[0] >= args.report_every:
            last[0] = now
            print(
                f"    df-pn {now - started:,.0f} s: {search.nodes:,} nodes, root proof number "
                f"{proof:,}, disproof number {disproof:,}, {len(search.table):,} positions "
                f"kept, load {load_average()}",
                file=sys.stderr,
                flush=True,
            )

    search = ProofNumberSearch(
        position.rules,
        epsilon=args.epsilon,
        eager=not args.lazy,
        deadline=started + limit,
        report=report,
    )
    try:
        found = "X wins" if search.x_wins(position) else "O holds"
    except SearchTimeout:
        found = "not proved"
    return found, search, time.process_time() - started


def positions_of(case: str, default_limit: float) -> list[tuple[str, Position, float]]:
    """The (board label, position, seconds allowed) of one ``BOARD:WHAT[:SECONDS]``."""
    board, what, *seconds = case.split(":")
    columns, rows, k = (int(part) for part in board.split(","))
    rules = Rules(rows, columns, k)
    limit = float(seconds[0]) if seconds else default_limit
    start = Position.start(rules)
    label = f"({board})"
    if what == "start":
        return [(f"{label} start", start, limit)]
    cells = first_moves(rules) if what == "all" else [rules.parse_cell(what)]
    return [(f"{label} {rules.cell_name(cell)}", start.play(cell), limit) for cell in cells]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=CASES, help="BOARD:WHAT[:SECONDS]")
    parser.add_argument("--limit", type=float, default=300.0, help="CPU seconds per search")
    parser.add_argument(
        "--searches",
        default=",".join(SEARCHES),
        help="which searches to run: df-pn, strongest, every (alpha-beta), comma-separated",
    )
    parser.add_argument(
        "--epsilon", type=float, default=0.25, help="df-pn's 1+epsilon trick (0: plain df-pn)"
    )
    parser.add_argument(
        "--lazy", action="store_true", help="df-pn checks a child only when it enters it"
    )
    parser.add_argument(
        "--report-every", type=float, default=60.0, help="CPU seconds between df-pn progress lines"
    )
    args = parser.parse_args()
    searches = args.searches.split(",")
    if set(searches) - set(SEARCHES):
        parser.error(f"--searches: choose among {', '.join(SEARCHES)}")
    print(f"load {load_average()} at the start", file=sys.stderr, flush=True)
    Prover(Rules(3, 3, 3)).solve(Position.start(Rules(3, 3, 3)))  # compile before timing
    rows = []
    for case in args.cases:
        for label, position, limit in positions_of(case, args.limit):
            for name in searches:
                if name == "df-pn":
                    found, search, seconds = df_pn(position, limit, args)
                    proof, disproof = search.root_numbers
                    numbers = "solved" if found != "not proved" else f"{proof:,} / {disproof:,}"
                    nodes, details = search.nodes, [search.checked, search.expanded, numbers]
                    del search  # its table before the next search's
                else:
                    found, nodes, seconds = alpha_beta(position, PRUNINGS[name], limit)
                    name, details = f"alpha-beta {name}", ["", "", ""]
                rows.append(
                    [label, name, found, nodes, *details]
                    + [f"{nodes / seconds:,.0f}", f"{seconds:,.1f}", load_average()]
                )
                print("  ", *rows[-1], file=sys.stderr, flush=True)
    headers = ["position", "search", "found", "nodes", "checked", "expanded", "root pn / dn"]
    headers += ["nodes/s", "CPU seconds", "load"]
    print(tabulate(rows, headers, intfmt=",", tablefmt="pipe"))


if __name__ == "__main__":
    main()
