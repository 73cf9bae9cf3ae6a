"""The reference ladder: played once per game and cached in the book, atomically, and reused:
rating another agent plays only that agent's games. And ``ttt rate``."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from tests.pg_support import solve_into
from ttt_solve.agents import ladder as ladder_module
from ttt_solve.agents import plugin
from ttt_solve.agents.ladder import LadderError, LadderSpec, rate_on_ladder
from ttt_solve.book import schema
from ttt_solve.book.errors import SchemaVersionError
from ttt_solve.book.ladder import (
    LadderKey,
    LadderRow,
    cached_ladders,
    forfeits_of,
    read_rows,
    write_batch,
)
from ttt_solve.book.reader import open_book
from ttt_solve.cli.main import ttt
from ttt_solve.solver.rules import Rules

R3 = Rules(3, 3, 3)
SMALL = LadderSpec("test-1", ("random", "perfect:error=0.5", "perfect"))


@pytest.fixture
def counted(monkeypatch):
    """The pairs the ladder plays, call by call."""
    calls: list[list[tuple[str, str]]] = []
    real = ladder_module.play_pairs

    def spy(makers, rules, pairs, games, **kwargs):  # noqa: ANN001, ANN202
        calls.append([(makers[i].spec, makers[j].spec) for i, j in pairs])
        return real(makers, rules, pairs, games, **kwargs)

    monkeypatch.setattr(ladder_module, "play_pairs", spy)
    return calls


def rated(db: str, *specs: str, games: int = 6, **kwargs):  # noqa: ANN201
    with open_book(db) as book:
        return rate_on_ladder(
            book, db, R3, list(specs), ladder=SMALL, games=games, jobs=1, sample=50, **kwargs
        )


def test_the_ladder_is_played_once_and_each_agent_once(book_db, counted):
    solve_into(book_db, R3)
    estimates: list[float | None] = []
    first = rated(book_db, "heuristic", estimate=estimates.append)
    assert first.played == 3 * 6 and first.agents[0].played == 3 * 6
    # Before perfect has played, the time left cannot be told; at the end none is left.
    assert estimates[0] is None and estimates[-1] == 0.0
    assert any(seconds is not None and seconds > 0 for seconds in estimates[:-1])
    assert counted == [
        [("random", "perfect:error=0.5"), ("random", "perfect"), ("perfect:error=0.5", "perfect")],
        [("heuristic", "random"), ("heuristic", "perfect:error=0.5"), ("heuristic", "perfect")],
    ]
    counted.clear()
    second = rated(book_db, "heuristic", "mcts:iterations=20", "perfect")
    assert counted == [  # only the new agent's games: the ladder and heuristic's are cached
        [
            ("mcts:iterations=20", "random"),
            ("mcts:iterations=20", "perfect:error=0.5"),
            ("mcts:iterations=20", "perfect"),
        ]
    ]
    assert second.played == 0 and [one.played for one in second.agents] == [0, 18, 0]
    assert second.fit == first.fit  # the same ladder games, the same ladder ratings
    assert second.rating("heuristic").rating == first.rating("heuristic").rating  # unmoved
    assert second.rating("perfect").rating == second.fit.of("perfect").rating  # as a rung
    with open_book(book_db) as book:
        ((key, agents),) = cached_ladders(book, R3)
        assert key == LadderKey("test-1", 6, 0)
        assert agents == ["heuristic", "mcts:iterations=20"]
        rows = read_rows(book, R3, key)
        assert len(rows) == 6 + 2 * (3 * 2 + 1)  # a row per pair and colour; and the forfeits
        assert forfeits_of([row for row in rows if row.rated == "heuristic"]) == 0
    counted.clear()
    rated(book_db, "heuristic", games=4)  # another number of games is another ladder
    assert len(counted) == 2


def test_a_batch_is_written_whole_or_not_at_all(book_db):
    solve_into(book_db, R3)
    key = LadderKey("test-1", 2, 0)
    good = LadderRow("random", "perfect", 0, 1, 1)
    with open_book(book_db) as book:
        with pytest.raises(sa.exc.IntegrityError):  # the last row breaks the insert
            write_batch(book, R3, key, "", [good, good._replace(x_wins=None)])
        assert read_rows(book, R3, key) == []
        assert write_batch(book, R3, key, "", [good]) is True
        assert write_batch(book, R3, key, "", [good._replace(draws=2)]) is False  # kept
        assert read_rows(book, R3, key) == [good]


def test_an_interrupted_ladder_leaves_nothing_and_is_played_again(book_db, counted):
    solve_into(book_db, R3)

    def interrupt(done: int, total: int) -> None:
        if done >= 8:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        rated(book_db, "heuristic", progress=interrupt)
    with open_book(book_db) as book:
        assert cached_ladders(book, R3) == []
    counted.clear()
    again = rated(book_db, "heuristic")
    assert again.played == 18 and len(counted) == 2


def test_resolving_the_game_drops_its_cached_games(book_db):
    solve_into(book_db, R3)
    rated(book_db)
    with open_book(book_db) as book:
        assert cached_ladders(book, R3)
        from ttt_solve.book.writer import write_game
        from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver

        write_game(book, R3, ExhaustiveSolver(R3).solve(), method="exhaustive", force=True)
        assert cached_ladders(book, R3) == []


def test_an_opening_book_has_no_ladder(opening_book):
    with open_book(opening_book) as book, pytest.raises(LadderError, match="opening book"):
        rate_on_ladder(book, opening_book, Rules(3, 4, 3), ladder=SMALL, games=2)


def test_a_version_3_book_is_upgraded_by_ttt_rate(tmp_path, book_3x3):
    db = str(tmp_path / "v3.sqlite")
    shutil.copy(book_3x3, db)
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE ladder_games")
        conn.execute(sa.update(schema.meta).values(value="3"))
    engine.dispose()
    with pytest.raises(
        SchemaVersionError, match=f"found schema version 3, expected {schema.SCHEMA_VERSION}"
    ):
        with open_book(db):
            pass
    result = CliRunner().invoke(ttt, ["rate", "--db", db, "--games", "2", "-q", "--json"])
    assert result.exit_code == 0, result.output
    with open_book(db) as book:  # upgraded, its game kept, the ladder cached
        assert book.game(R3).positions == 765
        assert len(cached_ladders(book, R3)) == 1


def test_ttt_rate_places_an_agent_on_the_ladder(tmp_path, book_3x3):
    db = str(tmp_path / "rate.sqlite")
    shutil.copy(book_3x3, db)
    args = ["rate", "--db", db, "--games", "2", "--agent", "heuristic", "-q"]
    first = CliRunner().invoke(ttt, [*args, "--json"])
    assert first.exit_code == 0, first.output
    data = json.loads(first.output)
    rungs = data["ladder"]["rungs"]
    assert rungs[0] == "random" and rungs[-1] == "mcts:iterations=10000" and len(rungs) == 9
    assert data["ladder"]["played"] == 36 * 2 and data["agents"][0]["played"] == 9 * 2
    (agent,) = data["agents"]
    assert agent["agent"] == "heuristic" and agent["low"] < agent["rating"] < agent["high"]
    assert agent["accuracy"] == pytest.approx(0.9930, abs=1e-4)  # 1,000 positions, seed 0
    assert {row["agent"] for row in data["table"]["ratings"]} == {*rungs, "heuristic"}
    again = CliRunner().invoke(ttt, args)
    assert again.exit_code == 0, again.output
    assert "ladder games: from the cache" in again.output
    assert "heuristic: 2 games against each rung, from the cache" in again.output
    assert "heuristic *" in again.output
    assert "accuracy 99.30%, perfection 99.30% (1,000 sampled positions, seed 0)" in again.output


@pytest.mark.parametrize(
    "args, words",
    [
        (["--agent", "bogus"], "unknown agent 'bogus'"),
        (["--anchor", "heuristic=100"], "is no rung of the ladder standard-1"),
        (["--anchor", "random"], "is not SPEC=RATING"),
        (["--positions", "some"], "is not 'all' or 'sample:N'"),
        (["--plot", "x.gif"], "must end in .svg or .png"),
        (["--size", "4"], "holds no 4x4 k=4 game"),
    ],
)
def test_ttt_rate_errors(book_3x3, args, words):
    result = CliRunner().invoke(ttt, ["rate", "--db", book_3x3, "--games", "1", *args])
    assert result.exit_code == 2 and words in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1


def test_the_time_left_weights_each_game_by_the_cost_of_its_pair():
    from ttt_solve.agents.eta import seconds_left

    # 100 cheap games took 1 s, 10 costly ones 50 s: 90 costly games left take 450 s,
    # not the 57 s that a count of games (110 done in 51 s, 90 left) would say.
    finished = {("random", "mcts"): (10, 50.0), ("random", "perfect"): (100, 1.0)}
    assert seconds_left(finished, {("random", "mcts"): 90}) == pytest.approx(450.0)
    assert seconds_left(finished, {("random", "perfect"): 50, ("random", "mcts"): 0}) == (
        pytest.approx(0.5)
    )
    assert seconds_left(finished, {}) == 0.0
    # A pair not played yet: its two agents' costs, fitted to the pairs played.
    costs = {"a": 0.01, "b": 0.1, "c": 1.0}
    played = {(x, y): (20, 20 * (costs[x] + costs[y])) for x, y in [("a", "b"), ("a", "c")]}
    played[("b", "c")] = (20, 20 * (costs["b"] + costs["c"]))
    assert seconds_left(played, {("c", "c"): 10}) == pytest.approx(10 * 2.0)
    # An agent that has played no game: no estimate, rather than a guess.
    assert seconds_left(played, {("a", "d"): 10}) is None
    assert seconds_left({}, {("a", "b"): 10}) is None


def test_a_python_agent_is_cached_by_its_code_not_by_how_it_is_spelled(
    tmp_path, book_3x3, monkeypatch
):
    """A student fixes the crash and rates again: the games are played again (the code
    changed), not read from the cache under the same name; ``py:lab:move`` and
    ``py:lab.py:move`` are one agent. Forfeits read from the cache are still said."""
    from ttt_solve.reports.ratings import ladder_lines

    db = str(tmp_path / "rate.sqlite")
    shutil.copy(book_3x3, db)
    monkeypatch.chdir(tmp_path)
    lab = tmp_path / "lab.py"
    lab.write_text("def move(board):\n    raise RuntimeError('not written yet')\n")
    games = 3 * 6

    def rate(spec: str):  # noqa: ANN202 - a fresh ttt rate: its module imported anew
        monkeypatch.delitem(sys.modules, "lab", raising=False)
        monkeypatch.setattr(plugin, "_FILE_MODULES", {})
        (agent,) = (result := rated(db, spec)).agents
        return result, agent

    _, crashing = rate("py:lab.py:move,board=flat")
    assert (crashing.played, crashing.forfeits) == (games, games)
    cached, again = rate("py:lab:move,board=flat")
    assert (again.played, again.forfeits) == (0, games)  # the same code: from the cache
    assert any(
        f"forfeited {games} of its {games} games by failing a move" in line
        for line in ladder_lines(cached, "the book")
    )
    one_failure = dataclasses.replace(cached, agents=(dataclasses.replace(again, failed_moves=1),))
    assert any("; 1 failed move, counted" in line for line in ladder_lines(one_failure, "book"))
    lab.write_text("def move(board):\n    return board.index(' ')\n")
    fixed_result, fixed = rate("py:lab.py:move,board=flat")
    assert (fixed.played, fixed.forfeits) == (games, 0)  # new code: played again
    assert fixed_result.rating("py:lab.py:move,board=flat").rating.mean > (
        cached.rating("py:lab:move,board=flat").rating.mean
    )
    _, spelt = rate("py:lab:move,board=flat")
    assert (spelt.played, spelt.forfeits) == (0, 0)
    monkeypatch.setitem(ladder_module.LADDERS, SMALL.name, SMALL)
    with open_book(db) as book:
        (listed,) = ladder_module.from_cache(book, R3)
    names = [one.agent for one in listed.agents]  # the file before and after its edit
    assert len(set(names)) == 2 and all(
        name.startswith("py:lab.py:move,board=flat (code ") for name in names
    ), names
    assert sorted(one.forfeits for one in listed.agents) == [0, games]
