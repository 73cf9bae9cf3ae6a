"""The tablebase's probe (:mod:`solver.tablebase.probe`): one record a position, one a move,
many positions at once, and damage never served as truth by any front.

The oracle is the exhaustive solver's book in blocks; the table is built by the tablebase
engine and catalogued in a book of its own, as ``ttt-solve --method table`` does.
"""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tests.support import bench_script
from ttt_solve.book.errors import DamagedBookError
from ttt_solve.book.oracle import Oracle
from ttt_solve.book.reader import open_book
from ttt_solve.book.table.catalogue import catalogue_table
from ttt_solve.book.writer import write_game
from ttt_solve.cli.main import ttt
from ttt_solve.solver.errors import InvalidPositionError
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.build import build_table
from ttt_solve.solver.tablebase.probe import (
    NO_POSITION,
    MissingTableError,
    TableDamagedError,
    open_tablebase,
)

K4 = Rules(4, 4, 4)


def random_positions(rules: Rules, count: int, seed: int) -> list[Position]:
    """Positions of seeded random games, cut at random plies (finished games included)."""
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        position = Position.start(rules)
        for _ in range(rng.randrange(rules.cells + 1)):
            if position.is_terminal:
                break
            position = position.play(rng.choice(position.legal_moves()))
        found.append(position)
    return found


@pytest.fixture(scope="module")
def k4_books(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, Path]:
    """4x4 k=4 in a book of blocks, and in a book whose game is a table (with its folder)."""
    folder = tmp_path_factory.mktemp("k4")
    blocks, tables = str(folder / "blocks.sqlite"), str(folder / "tables.sqlite")
    with open_book(blocks, create=True) as book:
        write_game(book, K4, ExhaustiveSolver(K4).solve(), method="exhaustive")
    build_table(K4, folder / "4x4k4")
    with open_book(tables, create=True) as book:
        catalogue_table(book, folder / "4x4k4")
    return blocks, tables, folder / "4x4k4"


@pytest.mark.parametrize("compiled", [False, True], ids=["plain", "compiled"])
def test_every_answer_is_the_blocks_and_reads_one_record_a_move(k4_books, compiled):
    blocks, _, folder = k4_books
    with open_book(blocks) as book, open_tablebase(folder, compile_after=None) as table:
        if compiled:
            table.compile()
        for position in random_positions(K4, 300, seed=11):
            entry, moves = book.find_with_moves(position)
            before = table.reads
            assert table.probe(position) == entry.value
            assert table.reads == before + 1
            probe = table.probe_moves(position)
            assert table.reads == before + 2 + len(moves)
            assert probe.value == entry.value
            assert probe.moves == {move.cell: move.value for move in moves}
            assert probe.best_moves == entry.best_moves


def test_the_book_answers_a_table_game_with_one_read_a_move(k4_books):
    """Book.find, moves, find_with_moves and the oracle read the position's record and one
    a move: no row made, no best moves worked out for each child (151 records before)."""
    _, tables, _ = k4_books
    position = Position.from_moves(K4, ["b2"])
    with open_book(tables) as book:
        table = book.tablebase(K4)
        assert table is not None
        oracle = Oracle(K4, book)
        for answer in (book.find, book.moves, book.find_with_moves, oracle.analyse):
            before = table.reads
            answer(position)
            assert table.reads - before <= 1 + len(position.legal_moves()), answer.__name__


def reads_of(table, answer) -> int:
    """The records ``answer()`` reads from ``table``."""
    before = table.reads
    answer()
    return table.reads - before


def test_every_front_answers_a_table_game_with_one_read_a_move(k4_books):
    """The perfect agent, the RL environment's truth, the OpenSpiel oracle and bot, and the
    server's JSON, page and /uwapi/ answers each read the position's record and one a move
    from the book's probe (the truth of the environment, oracle and bot from its own probe
    of the book's table): no front answers through rows (each row a family of reads)."""
    pytest.importorskip("pettingzoo", reason="pip install -e '.[rl]'")
    pyspiel = pytest.importorskip("pyspiel", reason="pip install -e '.[rl]'")
    from ttt_solve.agents.spec import make_agent
    from ttt_solve.rl import aec
    from ttt_solve.rl.spiel import BookBot, BookOracle

    _, tables, _ = k4_books
    after_one = Position.from_moves(K4, ["b2"])
    after_two = after_one.play(0)
    game = pyspiel.load_game("mnk", {"m": 4, "n": 4, "k": 4})
    state = game.new_initial_state()
    state.apply_action(aec.action_of(K4, 5))
    state.apply_action(aec.action_of(K4, 0))
    with open_book(tables) as book, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        table = book.tablebase(K4)
        env = aec.env(rows=4, cols=4, k=4, book=book)
        env.reset(seed=1)
        oracle, bot = BookOracle(game, book), BookBot(game, 0, book)
        truths = env.unwrapped.truth.tablebase
        assert truths.folder == oracle.truth.tablebase.folder == table.folder
        fronts = [
            (
                after_one,
                table,
                lambda: make_agent("perfect", random.Random(1), book=book).select_move(after_one),
            ),
            (after_one, truths, lambda: env.step(aec.action_of(K4, 5))),
            (after_two, truths, lambda: env.step(aec.action_of(K4, 0))),
            (after_two, truths, lambda: env.unwrapped.infos["player_1"]["best_moves"]),
            (after_two, oracle.truth.tablebase, lambda: oracle.action_values_from_state(state)),
            (after_two, bot.truth.tablebase, lambda: bot.step(state)),
        ]
        for number, (position, read, answer) in enumerate(fronts):
            found = reads_of(read, answer)
            assert 1 <= found <= 1 + len(position.legal_moves()), f"front {number}: {found}"
        env.close()


def test_the_server_answers_a_table_game_with_one_read_a_move(k4_books):
    pytest.importorskip("starlette", reason="pip install -e '.[web]'")
    from starlette.testclient import TestClient

    from ttt_solve.web.app import create_app

    _, tables, _ = k4_books
    asked = ["x.../..../..../....", "x.../.o../..../....", "x.../.o../..x./...."]
    urls = [
        f"/api/games/4x4k4/position?position={asked[0]}",
        f"/game/4x4k4?position={asked[1]}",
        "/uwapi/mnk/4x4k4/positions/?p=2_x----o----x-----",
    ]
    with TestClient(create_app(tables)) as client:
        table = client.app.state.explorer.book.tablebase(K4)
        for position, url in zip(asked, urls):
            moves = len(Position.parse(position, K4).legal_moves())
            found = reads_of(table, lambda url=url: client.get(url).raise_for_status())
            assert 1 <= found <= 1 + moves, f"{url}: {found}"


def test_a_sample_gets_one_value_from_every_front(k4_books):
    """Seeded positions of random games: the probe, ``ttt query --json``, the server's JSON,
    the PettingZoo infos and the audit's truth give each the same value and remoteness
    (``bench/check_fronts.py``, which checks 5x5 the same way)."""
    pytest.importorskip("pettingzoo", reason="pip install -e '.[rl]'")
    pytest.importorskip("starlette", reason="pip install -e '.[web]'")
    check_fronts = bench_script("check_fronts")
    _, tables, _ = k4_books
    checked = list(check_fronts.front_answers(tables, K4, check_fronts.random_games(K4, 12, 8)))
    assert len(checked) == 12
    for answers in checked:
        assert set(answers) == {"position", "probe", "query", "web", "pettingzoo", "audit"}
        assert not check_fronts.disagreements(answers), answers
    plies = {ply for (ply,) in (answers["position"][1:] for answers in checked)}
    assert len(plies) > 4  # the sample is spread over the game


def test_probe_many_gives_each_position_its_value_in_any_orientation(k4_books):
    _, _, folder = k4_books
    positions = random_positions(K4, 400, seed=5)
    images = [position.transform(i % 8) for i, position in enumerate(positions)]
    with open_tablebase(folder) as table:
        x = np.array([p.x for p in images], dtype=np.int64)
        o = np.array([p.o for p in images], dtype=np.int64)
        found = table.probe_many(x, o)
        for position, value, remoteness in zip(positions, found.values, found.remoteness):
            expected = table.probe(position)
            assert (int(value), int(remoteness)) == (expected.outcome.sign, expected.remoteness)
        one = table.probe_many(x[:1].reshape(1, 1), o[:1].reshape(1, 1))
        assert one.values.shape == (1, 1)
        # X has a line and O moved after it: no game reaches it
        none = table.probe_many(np.array([0b1111]), np.array([0b1111 << 4]))
        assert none.remoteness.tolist() == [NO_POSITION]
        for bad_x, bad_o in [(1, 1), (1 << 16, 0), (0b11, 0), (0, 1)]:
            with pytest.raises(InvalidPositionError, match="position 0"):
                table.probe_many(np.array([bad_x]), np.array([bad_o]))


def test_a_process_that_asks_many_positions_switches_to_the_compiled_look_ups(k4_books):
    _, _, folder = k4_books
    positions = random_positions(K4, 30, seed=4)
    with open_tablebase(folder, compile_after=20) as table:
        answers = [table.probe_moves(position) for position in positions]
        assert table.kernels is not None  # switched at the 20th
    with open_tablebase(folder, compile_after=None) as table:
        assert [table.probe_moves(position) for position in positions] == answers
        assert table.kernels is None


def test_errors_are_narrow(tmp_path, k4_books):
    _, _, folder = k4_books
    with pytest.raises(MissingTableError, match="no finished table"):
        open_tablebase(tmp_path)
    with open_tablebase(folder) as table, pytest.raises(InvalidPositionError, match="3x3"):
        table.probe(Position.start(Rules(3, 3, 3)))
    with open_tablebase(folder, K4) as table, pytest.raises(InvalidPositionError, match="both"):
        table.probe(Position(K4, 1, 1))


# -- a damaged record (a draw at ply 10 changed into a win in 1) ------------------------------

DAMAGED = "o.../.x../xoxx/ooxo"
"""A drawn position of ply 10 whose record is changed into a win in 1 (X to move)."""


def parent_of(position: Position) -> Position:
    """A position one move before ``position`` (its last mover's first stone taken back)."""
    rules = position.rules
    last = position.o if position.x_to_move else position.x
    bit = last & -last
    if position.x_to_move:
        return Position(rules, position.x, position.o & ~bit)
    return Position(rules, position.x & ~bit, position.o)


def moves_to(position: Position) -> list[int]:
    """Moves from the empty board to ``position`` (which has no line)."""
    x = [c for c in range(position.rules.cells) if position.x >> c & 1]
    o = [c for c in range(position.rules.cells) if position.o >> c & 1]
    return [cell for pair in zip(x, o + [-1]) for cell in pair if cell >= 0]


@pytest.fixture
def damaged(tmp_path: Path) -> tuple[str, Path]:
    """A 4x4 k=4 table book whose record of :data:`DAMAGED` says win in 1."""
    build_table(K4, tmp_path / "4x4k4")
    db = str(tmp_path / "b.sqlite")
    with open_book(db, create=True) as book:
        catalogue_table(book, tmp_path / "4x4k4")
    position = Position.parse(DAMAGED, K4)
    with open_tablebase(tmp_path / "4x4k4") as table:
        assert table.probe(position).outcome.value == "draw"
        ply_file = table.ply_file(10)
        at = ply_file.records_at + ply_file.index.index(position.x, position.o)
    path = tmp_path / "4x4k4" / "ply-10.tb"
    data = bytearray(path.read_bytes())
    data[at] = 3  # a win in 1
    path.write_bytes(bytes(data))
    return db, path


def test_the_probe_refuses_a_damaged_record_and_its_parent(damaged):
    _, path = damaged
    position = Position.parse(DAMAGED, K4)
    with open_tablebase(path.parent) as table:
        with pytest.raises(TableDamagedError, match=r"ply-10\.tb, number [\d,]+: .*win in 1"):
            table.probe(position)
        with pytest.raises(TableDamagedError, match=r"ply-10\.tb"):
            table.probe_moves(position)
        with pytest.raises(TableDamagedError, match=r"ply-10\.tb"):
            table.probe_moves(parent_of(position))  # a move's record is checked too
        with pytest.raises(TableDamagedError, match=r"ply-10\.tb"):
            table.probe_best(parent_of(position))
        table.compile()
        for probe in (table.probe_moves, table.probe_best):
            with pytest.raises(TableDamagedError, match=r"ply-10\.tb"):
                probe(parent_of(position))
        with pytest.raises(TableDamagedError, match=r"ply-10\.tb, number [\d,]+: .*win in 1"):
            table.probe(position)  # through the compiled look-up of one position


@pytest.mark.parametrize(
    ("record", "said"),
    [
        (0, "records no position"),
        (2, "loss in 0 .* where the game is not over"),
        (2 + 7, "no value at ply 10"),
    ],
    ids=["no position", "lost in 0", "beyond its empty cells"],
)
def test_each_probe_plain_and_compiled_says_what_the_rules_forbid(tmp_path, record, said):
    """A record the rules forbid at an open position (:func:`lookup.record_fault`), found by
    the one-position probe and by those that read its moves, looked up plainly and through
    the compiled kernels, each in the same words."""
    build_table(K4, tmp_path / "4x4k4")
    position = Position.parse(DAMAGED, K4)
    with open_tablebase(tmp_path / "4x4k4") as table:
        ply_file = table.ply_file(10)
        at = ply_file.records_at + ply_file.index.index(position.x, position.o)
    path = tmp_path / "4x4k4" / "ply-10.tb"
    data = bytearray(path.read_bytes())
    data[at] = record
    path.write_bytes(bytes(data))
    expected = rf"ply-10\.tb, number [\d,]+: .*{said}"
    with open_tablebase(path.parent, compile_after=None) as table:
        for compiled in (False, True):
            if compiled:
                table.compile()
            for probe in (table.probe, table.probe_moves, table.probe_best):
                with pytest.raises(TableDamagedError, match=expected):
                    probe(position)


@pytest.mark.parametrize("which", ["damaged", "parent"])
def test_query_says_the_table_is_damaged(damaged, which):
    db, path = damaged
    position = Position.parse(DAMAGED, K4)
    asked = position if which == "damaged" else parent_of(position)
    args = ["query", str(asked), "--size", "4", "--win", "4", "--db", db]
    for extra in ([], ["--json"]):
        result = CliRunner().invoke(ttt, [*args, *extra])
        assert result.exit_code == 1, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: the table is damaged: ")
        assert str(path) in lines[0]
        assert f"rebuild it with: ttt-solve --size 4 --win 4 --db {db} --method table" in lines[0]


def test_export_and_audit_stop_at_the_damage(damaged):
    db, path = damaged
    game = ["--size", "4", "--win", "4", "--db", db]
    for command in (["export", "-q", "--where", "ply<=10"], ["audit", "--agent", "heuristic"]):
        result = CliRunner().invoke(ttt, [*command, *game])
        assert result.exit_code == 1, result.output
        assert "the table is damaged" in result.output and path.name in result.output


def test_the_server_answers_a_damaged_table_with_an_error(damaged):
    pytest.importorskip("starlette", reason="pip install -e '.[web]'")
    from starlette.testclient import TestClient

    from ttt_solve.web.app import create_app

    db, path = damaged
    with TestClient(create_app(db), raise_server_exceptions=False) as client:
        for asked in (DAMAGED, str(parent_of(Position.parse(DAMAGED, K4)))):
            response = client.get(f"/api/games/4x4k4/position?position={asked}")
            assert response.status_code == 500
            error = response.json()["error"]
            assert error.startswith("the table is damaged: ") and "rebuild it with" in error
            page = client.get(f"/game/4x4k4?position={asked}")
            assert page.status_code == 500 and "the table is damaged" in page.text
            board = ("1_" if asked.count("x") == asked.count("o") else "2_") + asked.replace(
                "/", ""
            ).replace(".", "-")
            universal = client.get(f"/uwapi/mnk/4x4k4/positions/?p={board}")
            assert universal.status_code == 500
            assert "the table is damaged" in universal.json()["error"]


def test_pettingzoo_infos_never_hold_a_damaged_value(damaged):
    pytest.importorskip("pettingzoo", reason="pip install -e '.[rl]'")
    from ttt_solve.rl import aec

    db, _ = damaged
    position = Position.parse(DAMAGED, K4)
    moves = moves_to(position)
    with open_book(db) as book, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        env = aec.env(rows=4, cols=4, k=4, book=book)
        env.reset()
        with pytest.raises((TableDamagedError, DamagedBookError), match=r"ply-10\.tb"):
            for cell in moves:
                env.step(aec.action_of(K4, cell))
        env.close()


def test_a_query_of_a_table_loads_neither_numpy_nor_numba(tmp_path):
    """``ttt query`` on a table book, as a whole process: the one-position path is plain."""
    import subprocess
    import sys

    rules = Rules(3, 3, 3)
    build_table(rules, tmp_path / "3x3k3")
    db = str(tmp_path / "b.sqlite")
    with open_book(db, create=True) as book:
        catalogue_table(book, tmp_path / "3x3k3")
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(sorted(m for m in ('numpy', 'numba', 'sqlalchemy')"
        " if m in sys.modules), file=sys.stderr))\n"
        "from ttt_solve.cli.entry import ttt\n"
        f"sys.argv = ['ttt', 'query', 'x../.o./...', '--size', '3', '--win', '3', '--db', {db!r}]\n"
        "ttt()\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "draw, remoteness 7" in result.stdout, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("compiled", [False, True], ids=["plain", "compiled"])
def test_a_compressed_table_is_probed_as_its_raw_files(k4_books, tmp_path, compiled):
    """A release's compressed plies (read a block at a time, known records computed) give the
    raw table's answers through the same probe."""
    pytest.importorskip("zstandard", reason="pip install -e '.[compressed]'")
    from ttt_solve.solver.tablebase.compressed import compress_table

    _, _, folder = k4_books
    compress_table(folder, tmp_path / "release")
    positions = random_positions(K4, 200, seed=9)
    x = np.array([p.x for p in positions], dtype=np.int64)
    o = np.array([p.o for p in positions], dtype=np.int64)
    with open_tablebase(folder) as raw, open_tablebase(tmp_path / "release") as compressed:
        assert compressed.compressed and not raw.compressed
        if compiled:
            compressed.compile()
        assert compressed.verify() == K4.cells + 1
        for position in positions:
            assert compressed.probe_moves(position) == raw.probe_moves(position)
            assert compressed.probe(position) == raw.probe(position)
        found, expected = compressed.probe_many(x, o), raw.probe_many(x, o)
        assert found.values.tolist() == expected.values.tolist()
        assert found.remoteness.tolist() == expected.remoteness.tolist()
