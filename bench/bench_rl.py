"""Benchmark of ``mnk_v0``'s ``env.step``: side by side with PettingZoo's ``tictactoe_v3`` on
3x3, in one run, on the same games.

The same seeded random games (``--games``, each a list of legal actions drawn beforehand) are
replayed in each environment, in turns, ``--repeat`` times; a row's figure is the median over
the repeats of the time per step, for ``env.step`` alone and for the loop an agent runs
(``env.last()`` then ``env.step``), both through the wrappers ``env()`` returns, as
``tictactoe_v3``'s. Our environment runs with the truth off and on: on, it reads the book
(solved beforehand, not timed) and keeps each answer, so after the first game it reads a
dictionary; the first pass over the games (the answers not yet kept) is shown apart.
Targets: with the truth off, no slower per step than ``tictactoe_v3``; with it on, at most
twice its time.

``--new-games`` measures the truth's cost where it cannot be kept: every pass plays new seeded
random games (a training run's episodes), on 4x4 k=3 from a table built here, and on the
largest game a book holds as a table (``--book BOOK``; ``--game 5x5k4``: that one); ``mnk_v0``
with the truth off, on, and on with every key read after each step (``best_moves`` too, which a
table's truth reads only when asked for), in turns game by game, the mean and median time of
``env.step`` (and of the read). Target: with the truth on, at most 1.5 times the step without
it. A table larger than the page cache (or evicted from it: this machine pages out what it
has not read for a minute) costs a read from the disk a step, and a page of its map the
process has not touched yet a page fault; ``--warm`` plays each pass's games once in each way
before timing them, to measure the truth's own cost.

Needs the rl and notebook extras (PettingZoo's tic-tac-toe imports pygame).

    python bench/bench_rl.py
    python bench/bench_rl.py --games 2000 --repeat 7
    python bench/bench_rl.py --new-positions --games 300   # 4x4 k=3: new positions
    python bench/bench_rl.py --new-games --book books.sqlite
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import warnings

from tabulate import tabulate

warnings.filterwarnings("ignore", category=DeprecationWarning)

from pettingzoo.classic import tictactoe_v3  # noqa: E402

from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.book.solving import solve  # noqa: E402
from ttt_solve.rl import aec  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.rules import Rules, parse_game  # noqa: E402

THREE = Rules(3, 3, 3)


def games_of(count: int, seed: int, rules: Rules = THREE) -> list[list[int]]:
    """Random games as PettingZoo's actions (column by column: on 3x3, col * 3 + row)."""
    return random_games(rules, count, seed)


def replay(env, games: list[list[int]], observe: bool) -> tuple[float, int]:
    """Seconds spent in ``step`` (and ``last``, if ``observe``) over ``games``, and steps."""
    spent, steps = 0.0, 0
    clock = time.perf_counter
    for actions in games:
        env.reset()
        for action in actions:
            started = clock()
            if observe:
                env.last()
            env.step(action)
            spent += clock() - started
        steps += len(actions)
    return spent, steps


def random_games(rules: Rules, count: int, seed: int) -> list[list[int]]:
    """Seeded random games of ``rules``, as ``mnk_v0``'s actions."""
    rng = random.Random(seed)
    games = []
    for _ in range(count):
        position, actions = Position.start(rules), []
        while not position.is_terminal:
            cell = rng.choice(position.legal_moves())
            actions.append(aec.action_of(rules, cell))
            position = position.play(cell)
        games.append(actions)
    return games


def step_times(env, games: list[list[int]], read: bool = False) -> list[float]:
    """The time of each ``env.step`` over ``games`` (with ``read``, and of reading every
    key of the info of the agent to move after it)."""
    times = []
    clock = time.perf_counter
    for actions in games:
        env.reset()
        for action in actions:
            started = clock()
            env.step(action)
            if read:
                dict(env.infos[env.agent_selection])
            times.append(clock() - started)
    return times


def new_games(args: argparse.Namespace) -> None:
    """The truth's cost per step with new games every pass, from tables (see the module's
    docstring)."""
    from ttt_solve.book.table.catalogue import catalogue_table
    from ttt_solve.solver.tablebase.build import build_table

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        books = [(Rules(4, 4, 3), os.path.join(folder, "t.sqlite"))]
        build_table(books[0][0], os.path.join(folder, "4x4k3"))
        with open_book(books[0][1], create=True) as book:
            catalogue_table(book, os.path.join(folder, "4x4k3"))
        if args.book:
            with open_book(args.book) as book:
                games = [info.rules for info in book.games()]  # smallest first
            chosen = parse_game(args.game) if args.game else games[-1]
            if chosen not in games:
                sys.exit(f"{args.book} holds no {chosen.name}")
            books.append((chosen, args.book))
        for rules, db in books:
            with open_book(db) as book:
                board = {"rows": rules.rows, "cols": rules.cols, "k": rules.k}
                envs = {
                    "off": aec.env(**board, truth=False),
                    "on": aec.env(**board, book=book),
                    "read": aec.env(**board, book=book),
                }
                for env in envs.values():  # compiled, files mapped: not timed
                    step_times(env, random_games(rules, 20, seed=-1))
                times: dict[str, list[float]] = {name: [] for name in envs}
                for repeat in range(args.repeat):
                    games = random_games(rules, args.games, seed=args.seed + repeat)
                    if args.warm:  # the records these games read, in memory and mapped
                        for name in ("on", "read"):  # by each way's own maps: not timed
                            step_times(envs[name], games, read=name == "read")
                    for game in games:  # in turns game by game: a slow spell of a shared
                        for name, env in envs.items():  # machine falls on every way alike
                            times[name] += step_times(env, [game], read=name == "read")
            rows += _figures(rules.name, times)
    warmed = ", each pass's games played once in each way just before" if args.warm else ""
    print(
        f"{args.repeat} passes of {args.games} new random games each, truth off, on, and on "
        f"with every key read, in turns game by game{warmed}; Python {sys.version.split()[0]}, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    headers = ("game", "", "off us", "on us", "on/off", "read us", "read/off")
    print(tabulate(rows, headers=headers, colalign=("left", "left", *["right"] * 5)))


def _figures(game: str, times: dict[str, list[float]]) -> list[tuple[str, ...]]:
    """A game's rows: the mean and the median time of each way, and their ratios to the
    truth off."""
    rows = []
    for kind, of in (("mean", statistics.mean), ("median", statistics.median)):
        off, on, read = (of(times[name]) for name in ("off", "on", "read"))
        rows.append(
            (
                game,
                kind,
                f"{off * 1e6:.1f}",
                f"{on * 1e6:.1f}",
                f"{on / off:.2f}x",
                f"{read * 1e6:.1f}",
                f"{read / off:.2f}x",
            )
        )
    return rows


NEW_POSITIONS = Rules(4, 4, 3)
"""The board of ``--new-positions``: big enough that random games rarely meet a position
twice (about 6 million reachable), small enough to solve in seconds."""


def new_positions(count: int, seed: int) -> None:
    """What the truth costs where nearly every position is new: one pass over ``count``
    random games of :data:`NEW_POSITIONS`, truth off, from a book, and by live search."""
    rules = NEW_POSITIONS
    games = games_of(count, seed, rules)
    dims = {"rows": rules.rows, "cols": rules.cols, "k": rules.k}
    with tempfile.TemporaryDirectory() as folder:
        db = os.path.join(folder, "bench.sqlite")
        solve(rules, db)
        with open_book(db) as book:
            kinds = {
                "truth off": {"truth": False},
                "truth from the book": {"book": book},
                "truth by live search (no book)": {},
            }
            rows = []
            for name, options in kinds.items():
                spent, steps = replay(aec.env(**dims, **options), games, observe=False)
                rows.append((name, f"{spent / steps * 1e6:.0f}"))
    off = float(rows[0][1])
    print(
        f"{count} random {rules.name} games ({steps} steps, one pass: most positions "
        f"met once); Python {sys.version.split()[0]}, load {os.getloadavg()[0]:.1f}"
    )
    print(
        tabulate(
            [(name, step, f"{float(step) / off:.1f}x") for name, step in rows],
            headers=("mnk_v0", "step (us)", "vs truth off"),
            colalign=("left", "right", "right"),
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--new-positions",
        action="store_true",
        help=f"measure instead what the truth costs in games of {NEW_POSITIONS.name}, where "
        "nearly every position is new",
    )
    parser.add_argument("--new-games", action="store_true", help="the truth's cost from tables")
    parser.add_argument("--book", metavar="BOOK", help="a book holding a game as a table")
    parser.add_argument("--game", default="", help="with --book: the game (as 5x5k4)")
    parser.add_argument(
        "--warm",
        action="store_true",
        help="with --new-games: play each pass's games once in each way, untimed, before "
        "timing them, so that their records are in memory and mapped (the truth's own cost, as "
        "in a long run on a machine whose memory holds the table)",
    )
    args = parser.parse_args()
    if args.new_positions:
        new_positions(args.games, args.seed)
        return
    if args.new_games:
        new_games(args)
        return
    games = games_of(args.games, args.seed)
    with tempfile.TemporaryDirectory() as folder:
        db = os.path.join(folder, "bench.sqlite")
        solve(Rules(3, 3, 3), db)
        with open_book(db) as book:
            envs = {
                "tictactoe_v3": tictactoe_v3.env(),
                "mnk_v0, truth off": aec.env(truth=False),
                "mnk_v0, truth on": aec.env(book=book),
            }
            first_pass = replay(aec.env(book=book), games, observe=False)
            times: dict[tuple[str, bool], list[float]] = {}
            for _ in range(args.repeat):
                for name, env in envs.items():
                    for observe in (False, True):
                        spent, steps = replay(env, games, observe)
                        times.setdefault((name, observe), []).append(spent / steps)
    base = {o: statistics.median(times[("tictactoe_v3", o)]) for o in (False, True)}
    rows = []
    for name in envs:
        step, loop = (statistics.median(times[(name, o)]) for o in (False, True))
        rows.append(
            (
                name,
                f"{step * 1e6:.1f}",
                f"{step / base[False]:.2f}x",
                f"{loop * 1e6:.1f}",
                f"{loop / base[True]:.2f}x",
            )
        )
    steps = sum(len(g) for g in games)
    rows.append(
        (
            "mnk_v0, truth on, first pass",
            f"{first_pass[0] / first_pass[1] * 1e6:.1f}",
            f"{first_pass[0] / first_pass[1] / base[False]:.2f}x",
            "",
            "",
        )
    )
    print(
        f"{args.games} random 3x3 games ({steps} steps), median of {args.repeat} passes; "
        f"Python {sys.version.split()[0]}, load {os.getloadavg()[0]:.1f}"
    )
    print(
        tabulate(
            rows,
            headers=(
                "environment",
                "step (us)",
                "vs tictactoe_v3",
                "last+step (us)",
                "vs tictactoe_v3",
            ),
            colalign=("left", "right", "right", "right", "right"),
        )
    )


if __name__ == "__main__":
    main()
