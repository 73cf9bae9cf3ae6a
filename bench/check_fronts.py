"""Check that every front gives a position the table's value: the probe, ``ttt query --json``,
the server's JSON, the PettingZoo infos and the audit's truth, on the positions of seeded random
games of a game that a book holds as a table.

Each game is a random first move and up to ``2 * cells / 3`` random moves more, so the sample
reaches every stage of the game; the moves are played in the PettingZoo environment to reach
its position, as a user's agent would. The exit status is 1 when any front disagrees with the
probe, and each disagreement is printed.

    python bench/check_fronts.py 5x5k4 --db books.sqlite --games 200 --seed 0
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import warnings
from collections.abc import Iterator

from click.testing import CliRunner

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import checked  # noqa: E402

from ttt_solve.agents.audit import Truth
from ttt_solve.book.reader import open_book
from ttt_solve.cli.main import ttt
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules, parse_game
from ttt_solve.solver.tablebase.probe import open_tablebase
from ttt_solve.solver.value import Value

Answer = tuple[str, int]  # (value, remoteness) as the JSON fronts write them


def random_games(rules: Rules, count: int, seed: int) -> list[list[int]]:
    """The cells played by ``count`` seeded random games, each cut at a random length."""
    rng = random.Random(seed)
    games = []
    for _ in range(count):
        moves = [rng.randrange(rules.cells)]
        position = Position.start(rules).play(moves[0])
        for _ in range(rng.randrange(2 * rules.cells // 3)):
            if position.is_terminal:
                break
            moves.append(rng.choice(position.legal_moves()))
            position = position.play(moves[-1])
        games.append(moves)
    return games


def front_answers(db: str, rules: Rules, games: list[list[int]]) -> Iterator[dict[str, Answer]]:
    """For each game, the answer of every front to its last position, the probe's first."""
    from starlette.testclient import TestClient

    from ttt_solve.rl import aec
    from ttt_solve.web.app import create_app
    from ttt_solve.web.links import api_position_url

    game_options = ["--size", f"{rules.rows}x{rules.cols}", "--win", str(rules.k), "--db", db]
    with (
        open_book(db) as book,
        open_tablebase(book.table_folder(book.game(rules)), rules) as table,
        TestClient(create_app(db)) as client,
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore", DeprecationWarning)
        truth = Truth(book, rules, preload_limit=0)
        env = aec.env(rows=rules.rows, cols=rules.cols, k=rules.k, book=book)
        for moves in games:
            position = Position.start(rules)
            env.reset()
            for cell in moves:
                position = position.play(cell)
                env.step(aec.action_of(rules, cell))
            probed = table.probe(position)
            answers = {"probe": (probed.outcome.value, probed.remoteness)}
            query = CliRunner().invoke(ttt, ["query", str(position), *game_options, "--json"])
            answers["query"] = as_answer(query.stdout if query.exit_code == 0 else query.output)
            url = api_position_url(rules, str(position), ())
            answers["web"] = as_answer(client.get(url).text)
            info = env.infos[env.agent_selection]
            answers["pettingzoo"] = (info["value"], info["remoteness"])
            score = truth.score(position.x, position.o)
            if score is not None:
                scored = Value.from_score(score, position.empty_count)
                answers["audit"] = (scored.outcome.value, scored.remoteness)
            yield {"position": (str(position), len(moves)), **answers}
        env.close()


def as_answer(text: str) -> Answer:
    """The value and remoteness of a front's JSON, or the text itself when it is not JSON."""
    try:
        answer = json.loads(text)
        return (answer["value"], answer["remoteness"])
    except (ValueError, KeyError, TypeError):
        return (text.strip(), -1)


def disagreements(answers: dict[str, Answer]) -> list[str]:
    """The fronts whose answer is not the probe's, each with its answer."""
    expected = answers["probe"]
    return [
        f"{front} {answer}"
        for front, answer in answers.items()
        if front not in ("position", "probe") and answer != expected
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game", help="the game, as 5x5k4")
    parser.add_argument("--db", required=True, help="a book that holds the game as a table")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    return checked(check, parser.parse_args(argv))


def check(args: argparse.Namespace) -> int:
    rules = parse_game(args.game)
    started = time.perf_counter()
    asked = wrong = 0
    fronts: set[str] = set()
    for answers in front_answers(args.db, rules, random_games(rules, args.games, args.seed)):
        asked += 1
        fronts.update(front for front in answers if front != "position")
        found = disagreements(answers)
        if found:
            wrong += 1
            print(f"{answers['position'][0]}: probe {answers['probe']}; " + "; ".join(found))
    seconds = time.perf_counter() - started
    print(
        f"{rules.name}: {asked} positions of seeded random games (seed {args.seed}), "
        f"{wrong} with a front that disagrees; fronts: {', '.join(sorted(fronts))}; "
        f"{seconds:.1f} s"
    )
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
