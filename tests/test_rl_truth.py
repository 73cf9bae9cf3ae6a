"""The truth the RL environments hand out from a game stored as a table, held to the table's
probe key by key, and its best moves read only when asked for: through PettingZoo's wrappers
and conversion, and through Gymnasium's ``SyncVectorEnv``, the same infos as from a book of
rows; and :class:`LazyInfo` as a dict to everything that reads one.

Skipped, saying what to install, without the ``rl`` extra.
"""

from __future__ import annotations

import copy
import json
import pickle
import random
from pathlib import Path

import pytest

pytest.importorskip("pettingzoo", reason="pip install -e '.[rl]'")
gymnasium = pytest.importorskip("gymnasium", reason="pip install -e '.[rl]'")

from pettingzoo.test import api_test  # noqa: E402
from pettingzoo.utils.conversions import turn_based_aec_to_parallel  # noqa: E402

from tests.test_rl_vector import legal_actions, same  # noqa: E402
from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.book.table.catalogue import catalogue_table  # noqa: E402
from ttt_solve.rl import GYMNASIUM_ID, aec  # noqa: E402
from ttt_solve.rl.info import LazyInfo  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402
from ttt_solve.solver.tablebase.build import build_table  # noqa: E402
from ttt_solve.solver.tablebase.probe import open_tablebase  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

KEYS = (
    "to_move",
    "value",
    "remoteness",
    "best_moves",
    "source",
    "last_move_kept",
    "last_move_best",
)
"""The truth's keys in ``infos``, in their order (docs/rl.md)."""


def table_book(folder: Path, rules: Rules) -> tuple[str, Path]:
    """A book holding ``rules`` as a table built in ``folder``, and the table's folder."""
    build_table(rules, folder / "table")
    db = str(folder / "table.sqlite")
    with open_book(db, create=True) as book:
        catalogue_table(book, folder / "table")
    return db, folder / "table"


@pytest.fixture(scope="module")
def small_table(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """3x4 k=3 as a table (a second or two to build)."""
    return table_book(tmp_path_factory.mktemp("t3x4"), Rules(3, 4, 3))


def probed_infos(table: Path, rules: Rules, games: int, seed: int):
    """``(position, expected)`` along seeded random games: the infos the truth should give,
    worked out from the table's probe read on its own (plain Python look-ups, every move's
    value), and the actions played."""
    rng = random.Random(seed)
    with open_tablebase(table, rules, compile_after=None) as probe:
        for _ in range(games):
            position, before, agent = Position.start(rules), None, 0
            while True:
                value, moves = probe.probe_moves(position)
                if before is None:
                    kept = best = None
                else:
                    moved = before[1][before[2]]
                    kept, best = moved.outcome is before[0].outcome, moved == before[0]
                expected = {
                    "to_move": aec.AGENTS[agent],
                    "value": value.outcome.value,
                    "remoteness": value.remoteness,
                    "best_moves": tuple(
                        sorted(aec.action_of(rules, c) for c, m in moves.items() if m == value)
                    ),
                    "source": "book",
                    "last_move_kept": kept,
                    "last_move_best": best,
                }
                if position.is_terminal:
                    yield position, expected, None
                    break
                cell = rng.choice(position.legal_moves())
                yield position, expected, aec.action_of(rules, cell)
                before, position, agent = (value, moves, cell), position.play(cell), 1 - agent


def check_infos_against_the_probe(db: str, table: Path, rules: Rules, games: int) -> None:
    """Every key of both agents' infos, along seeded random games, is the probe's; the best
    moves are read only when an info is asked for them."""
    env = aec.env(rows=rules.rows, cols=rules.cols, k=rules.k, book=db)
    truth = env.unwrapped.truth
    env.reset()
    for position, expected, action in probed_infos(table, rules, games, seed=7):
        infos = env.unwrapped.infos
        for agent in aec.AGENTS:
            info = infos[agent]
            assert isinstance(info, dict) and tuple(info) == KEYS
            assert {key: info[key] for key in KEYS} == expected, position
        assert infos[aec.AGENTS[0]] == infos[aec.AGENTS[1]] == expected
        if action is None:
            env.reset()
            continue
        env.step(action)
        reads = truth.tablebase.reads
        if not env.unwrapped.terminations[env.agent_selection]:
            env.unwrapped.infos[env.agent_selection]["value"]
            assert truth.tablebase.reads == reads  # nothing more for the value
    env.close()


def test_the_truth_from_a_table_is_the_probes(small_table):
    check_infos_against_the_probe(*small_table, Rules(3, 4, 3), games=40)


@pytest.mark.slow
def test_the_truth_from_a_4x4_table_is_the_probes(tmp_path):
    """The same on 4x4 k=3, 300 seeded random games (its table takes a minute to build)."""
    db, table = table_book(tmp_path, Rules(4, 4, 3))
    check_infos_against_the_probe(db, table, Rules(4, 4, 3), games=300)


def test_best_moves_are_read_only_when_asked_for(small_table):
    """A step reads the position's record alone; asking for ``best_moves`` reads a record a
    move, once for both agents' infos."""
    db, _ = small_table
    env = aec.raw_env(rows=3, cols=4, k=3, book=db)
    table = env.truth.tablebase
    env.step(5)
    reads = table.reads
    env.step(0)
    assert table.reads == reads + 1
    best = env.infos["player_1"]["best_moves"]
    assert table.reads == reads + 1 + 1 + 10  # the position and its ten moves
    assert env.infos["player_2"]["best_moves"] == best and table.reads == reads + 12
    env.close()


def test_pettingzoos_api_test_and_parallel_conversion_with_the_truth_from_a_table(
    small_table, book_small
):
    """PettingZoo's ``api_test`` passes, and its parallel conversion hands out the same
    infos as with the truth from a book of rows (every key read)."""
    db, _ = small_table
    api_test(aec.env(rows=3, cols=4, k=3, book=db), num_cycles=200)
    envs = [
        turn_based_aec_to_parallel(aec.env(rows=3, cols=4, k=3, book=book))
        for book in (db, book_small)
    ]
    rng = random.Random(2)
    for game in range(20):
        (_, tables), (_, rows) = (env.reset(seed=game) for env in envs)
        assert tables == rows
        while envs[0].agents:
            position = envs[0].aec_env.unwrapped.position
            action = aec.action_of(Rules(3, 4, 3), rng.choice(position.legal_moves()))
            actions = dict.fromkeys(envs[0].agents, action)  # only the mover's is played
            tables, rows = (env.step(actions)[4] for env in envs)
            assert json.dumps(tables, sort_keys=True) == json.dumps(rows, sort_keys=True)


@pytest.mark.parametrize("mode", ["sync", "vector_entry_point"])
def test_gymnasiums_vector_envs_with_the_truth_from_a_table(small_table, book_small, mode):
    """``SyncVectorEnv`` of ``Mnk-v0`` (and the batched one), with the truth from a table,
    gives the infos it gives with the truth from a book of rows, step for step."""
    db, _ = small_table
    kwargs = {"rows": 3, "cols": 4, "k": 3, "opponent": "perfect:eps=0.5", "learner": "random"}
    envs = [
        gymnasium.make_vec(GYMNASIUM_ID, num_envs=4, vectorization_mode=mode, book=b, **kwargs)
        for b in (db, book_small)
    ]
    assert mode != "sync" or isinstance(envs[0], gymnasium.vector.SyncVectorEnv)
    first, second = (env.reset(seed=3) for env in envs)
    assert same(first[1], second[1])
    rng, observations = random.Random(3), first[0]
    for _ in range(60):
        actions = legal_actions(observations["action_mask"], rng)
        tables, rows = (env.step(actions) for env in envs)
        for a, b in zip(tables, rows, strict=True):
            assert same(a, b)
        observations = tables[0]
    for env in envs:
        env.close()


# -- LazyInfo ---------------------------------------------------------------------------------


class Counted:
    """A deferred value that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> tuple[int, ...]:
        self.calls += 1
        return (1, 4)


def lazy() -> tuple[LazyInfo, Counted]:
    work = Counted()
    info = LazyInfo.deferring(
        {"value": "win", "best_moves": None, "source": "book"}, "best_moves", work
    )
    return info, work


WHOLE = {"value": "win", "best_moves": (1, 4), "source": "book"}


def test_lazy_info_reads_nothing_for_its_other_entries():
    info, work = lazy()
    assert info["value"] == "win" and info.get("source") == "book"
    assert "best_moves" in info and len(info) == 3 and list(info) == list(WHOLE)
    assert list(info.keys()) == list(WHOLE) and isinstance(info, dict)
    assert work.calls == 0


@pytest.mark.parametrize(
    "read",
    [
        lambda info: info["best_moves"],
        lambda info: info.get("best_moves"),
        lambda info: dict(info),
        lambda info: {**info},
        lambda info: info.copy(),
        lambda info: copy.copy(info),
        lambda info: copy.deepcopy(info),
        lambda info: pickle.loads(pickle.dumps(info)),
        lambda info: json.loads(json.dumps(info)),
        lambda info: dict(info.items()),
        lambda info: list(info.values()),
        lambda info: info | {},
        lambda info: {} | info,
        lambda info: eval(repr(info)),
        lambda info: (lambda **entries: entries)(**info),
    ],
)
def test_lazy_info_reads_its_deferred_entry_once_for_whatever_reads_it(read):
    info, work = lazy()
    found = read(info)
    assert work.calls == 1
    if isinstance(found, dict):
        whole = {**WHOLE, "best_moves": list(WHOLE["best_moves"])}
        assert found in (WHOLE, whole)  # json gives a list
    assert info == WHOLE and WHOLE == info and not info != WHOLE
    assert work.calls == 1


def test_lazy_info_keeps_what_is_written_to_it():
    info, work = lazy()
    info["best_moves"] = ()
    assert info["best_moves"] == () and work.calls == 1
    other, _ = lazy()
    other.update(extra=1)
    assert other == {**WHOLE, "extra": 1}
    third, _ = lazy()
    assert third.pop("best_moves") == (1, 4) and "best_moves" not in third
    fourth, work = lazy()
    fourth.clear()
    assert fourth == {} and work.calls == 0
