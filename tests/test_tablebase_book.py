"""A tablebase catalogued in a book: the same rows, figures, answers and exports as blocks.

The oracle is the exhaustive solver's book in blocks, written by ``ttt-solve``'s writer; the
table is built by the tablebase engine and catalogued with ``book.table.catalogue``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support import stop_with
from ttt_solve.book.errors import DamagedBookError
from ttt_solve.book.reader import open_book
from ttt_solve.book.table.catalogue import catalogue_table
from ttt_solve.book.table.rows import recorded_folder, table_folder
from ttt_solve.book.writer import write_game
from ttt_solve.cli.main import ttt
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.build import build_table
from ttt_solve.solver.tablebase.probe import open_tablebase
from ttt_solve.solver.value import Outcome, Value

BOARDS = [Rules(3, 3, 3), Rules(3, 4, 3), Rules(4, 4, 3), Rules(4, 4, 4)]


def make_books(tmp_path, rules: Rules) -> tuple[str, str]:
    """A book of ``rules`` in blocks and one with its table beside it."""
    blocks = str(tmp_path / "blocks.sqlite")
    tables = str(tmp_path / "tables.sqlite")
    with open_book(blocks, create=True) as book:
        write_game(book, rules, ExhaustiveSolver(rules).solve(), method="exhaustive")
    build_table(rules, tmp_path / rules.name)
    with open_book(tables, create=True) as book:
        catalogue_table(book, tmp_path / rules.name)
    return blocks, tables


def random_positions(rules: Rules, count: int, seed: int) -> list[Position]:
    """Positions of seeded random games, every ply."""
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        position = Position.start(rules)
        while not position.is_terminal:
            found.append(position)
            position = position.play(rng.choice(position.legal_moves()))
        found.append(position)
    return found[:count]


@pytest.mark.parametrize(
    "rules", [*BOARDS[:2], pytest.param(BOARDS[2], marks=pytest.mark.slow)], ids=lambda r: r.name
)
def test_rows_figures_and_answers_are_the_blocks(tmp_path, rules):
    blocks, tables = make_books(tmp_path, rules)
    with open_book(blocks) as old, open_book(tables) as new:
        old_info, new_info = old.game(rules), new.game(rules)
        assert new_info.method == "table" and new_info.table_folder == rules.name
        assert (new_info.value, new_info.positions, new_info.reachable) == (
            old_info.value,
            old_info.positions,
            old_info.reachable,
        )
        assert new_info.figures.to_dict() == old_info.figures.to_dict()
        assert list(new.rows(rules)) == list(old.rows(rules))
        for position in random_positions(rules, 300, seed=7):
            assert new.find_with_moves(position) == old.find_with_moves(position)


@pytest.mark.parametrize(
    "rules", [*BOARDS[:3], pytest.param(BOARDS[3], marks=pytest.mark.slow)], ids=lambda r: r.name
)
def test_export_and_query_are_byte_identical(tmp_path, rules):
    blocks, tables = make_books(tmp_path, rules)
    runner = CliRunner()
    size = f"{rules.rows}x{rules.cols}"
    game = ["--size", size, "--win", str(rules.k)]
    for extra in ([], ["--format", "jsonl", "--where", "ply<=6", "--where", "remoteness>=2"]):
        old = runner.invoke(ttt, ["export", *game, "--db", blocks, "-q", *extra])
        new = runner.invoke(ttt, ["export", *game, "--db", tables, "-q", *extra])
        assert old.exit_code == 0, old.output
        assert new.exit_code == 0, new.output
        assert new.stdout_bytes == old.stdout_bytes and old.stdout_bytes
    for position in random_positions(rules, 20, seed=3):
        args = ["query", *game, str(position)]
        old = runner.invoke(ttt, [*args, "--db", blocks])
        new = runner.invoke(ttt, [*args, "--db", tables])
        assert old.exit_code == 0, old.output
        assert new.stdout == old.stdout.replace("blocks.sqlite", "tables.sqlite")


def test_an_export_reads_no_ply_that_where_rules_out(tmp_path):
    """Asked for the early plies of 4x4 k=4, an export of the table reads their files and
    the next ply's (the children, for the best moves) alone: with the files of plies 6 and on
    gone it gives the blocks' rows, byte for byte (it used to enumerate every ply, reading
    each ply's records, whatever --where said)."""
    rules = BOARDS[3]
    blocks, tables = make_books(tmp_path, rules)
    for ply in range(6, rules.cells + 1):
        (tmp_path / rules.name / f"ply-{ply:02d}.tb").unlink()
    runner = CliRunner()
    game = ["--size", "4", "--win", "4", "-q"]
    for where in ("ply<=4", "ply=3", "ply>=2 and ply<4"):
        old = runner.invoke(ttt, ["export", *game, "--db", blocks, "--where", where])
        new = runner.invoke(ttt, ["export", *game, "--db", tables, "--where", where])
        assert new.exit_code == 0, new.output
        assert new.stdout_bytes == old.stdout_bytes and old.stdout_bytes
    broken = runner.invoke(ttt, ["export", *game, "--db", tables, "--where", "ply<=5"])
    assert broken.exit_code == 2 and "ply-06.tb" in broken.output


@pytest.mark.parametrize("rules", BOARDS, ids=lambda r: r.name)
def test_stats_finds_its_examples_in_the_table_records(tmp_path, rules):
    """The longest win's and loss's example, found by its record in the table's files, is the
    blocks' first row of that value in (ply, key) order, and no other ply's records are read:
    the files of the plies after the examples' are gone (the stream of rows read each ply's
    children for its best moves), and the records of the plies before them, whose headers
    count no position at the longest win's record, are all overwritten with that byte (a
    search of every ply from the empty board on found a position in the first)."""
    from ttt_solve.book.stats import report
    from ttt_solve.solver.tablebase.files import ply_path, read_header
    from ttt_solve.solver.tablebase.record import DECIDED, DRAW, score_of_record

    blocks, tables = make_books(tmp_path, rules)
    with open_book(blocks) as old:
        expected = report(old, old.game(rules))
    plies = [
        Position.parse(expected[name]["example"], rules).ply
        for name in ("longest_win", "longest_loss")
    ]
    for ply in range(max(plies) + 1, rules.cells + 1):
        ply_path(tmp_path / rules.name, ply).unlink()
    if rules == BOARDS[3]:
        assert min(plies) >= 2  # plies to overwrite
    win = Value(Outcome.WIN, expected["longest_win"]["remoteness"])
    slots = range(DRAW, DECIDED + rules.cells + 1)
    record = next(r for r in slots if score_of_record(r) == win.score)
    for ply in range(min(plies)):
        path = ply_path(tmp_path / rules.name, ply)
        header = read_header(path, rules, ply)
        assert header.record_counts.by_record[0, record] == 0
        data = path.read_bytes()
        path.write_bytes(data[: header.records_at] + bytes([record]) * header.count)
    with open_book(tables) as new:
        found = report(new, new.game(rules))
    for name in ("longest_win", "longest_loss"):
        assert found[name] == expected[name], name
    assert expected["longest_win"]["example"]


def test_verify_tells_its_progress_as_it_reads(tmp_path):
    """``verify_game`` tells a ``progress`` the rows read of the rows stored, as ``ttt
    verify`` prints lines with an ETA on every board (a table of 4x5 k=4 read for minutes with
    one line and then nothing)."""
    from ttt_solve.book.verify import PROGRESS_ROWS, verify_game

    rules = BOARDS[2]
    _, tables = make_books(tmp_path, rules)
    told: list[tuple[int, int]] = []
    with open_book(tables) as book:
        info, problems = verify_game(book, rules, progress=lambda *at: told.append(at))
        assert list(problems) == []
    assert len(told) >= 2 and told == [
        (n, info.positions) for n in range(PROGRESS_ROWS, info.positions, PROGRESS_ROWS)
    ]


def test_a_missing_or_damaged_table_is_a_one_line_error(tmp_path):
    rules = BOARDS[0]
    _, tables = make_books(tmp_path, rules)
    start = Position.start(rules)
    (tmp_path / rules.name / "ply-03.tb").write_bytes(b"TTTTABLE")  # truncated
    with open_book(tables) as book:
        book.find(start)  # ply 0 is sound
        with pytest.raises(DamagedBookError, match=r"ply-03\.tb") as caught:
            book.find(Position.parse("xo./x../...", rules))
    assert "\n" not in str(caught.value)
    shutil.rmtree(tmp_path / rules.name)
    with open_book(tables) as book, pytest.raises(DamagedBookError, match="no finished table"):
        book.find(start)
    result = CliRunner().invoke(ttt, ["query", "--size", "3", "--win", "3", "--db", tables])
    assert result.exit_code != 0
    assert "no finished table" in result.output and "Traceback" not in result.output


def test_a_relative_folder_moves_with_the_book(tmp_path):
    book_file = str(tmp_path / "books" / "b.sqlite")
    inside = tmp_path / "books" / "3x3k3"
    assert recorded_folder(inside, book_file) == "3x3k3"
    assert table_folder("3x3k3", book_file) == inside
    outside = tmp_path / "elsewhere"
    assert recorded_folder(outside, book_file) == str(outside)
    assert table_folder(str(outside), book_file) == outside
    assert os.path.isabs(recorded_folder("t", None))


@pytest.fixture(scope="module")
def table_4x5(tmp_path_factory) -> str:
    """A book whose 4x5 k=4 is a table (minutes to build)."""
    folder = tmp_path_factory.mktemp("table45")
    build_table(Rules(4, 5, 4), folder / "4x5k4")
    tables = str(folder / "tables.sqlite")
    with open_book(tables, create=True) as book:
        catalogue_table(book, folder / "4x5k4")
    return tables


@pytest.fixture(scope="module")
def blocks_4x5(tmp_path_factory) -> str:
    """A book holding 4x5 k=4 in blocks (minutes and 2.8 GB)."""
    blocks = str(tmp_path_factory.mktemp("blocks45") / "blocks.sqlite")
    rules = Rules(4, 5, 4)
    with open_book(blocks, create=True) as book:
        write_game(book, rules, ExhaustiveSolver(rules).solve(), method="exhaustive")
    return blocks


GAME_4X5 = ["--size", "4x5", "--win", "4"]


@pytest.mark.slow
def test_4x5_export_is_byte_identical(blocks_4x5, table_4x5):
    runner = CliRunner()
    for where in ("ply<=9", "ply=12"):
        old = runner.invoke(ttt, ["export", *GAME_4X5, "-q", "--db", blocks_4x5, "--where", where])
        new = runner.invoke(ttt, ["export", *GAME_4X5, "-q", "--db", table_4x5, "--where", where])
        assert new.exit_code == 0 and new.stdout_bytes == old.stdout_bytes


@pytest.mark.slow
def test_4x5_samples_are_drawn_alike_from_either_book(blocks_4x5, table_4x5, tmp_path):
    """A sample of 4x5 k=4 is drawn by number from the game's index, so a seed gives the
    same audit and the same evaluation set from blocks as from a table."""
    runner = CliRunner()
    outputs = []
    for db in (blocks_4x5, table_4x5):
        audit = ["audit", "--agent", "heuristic", "--positions", "sample:300", "--seed", "3"]
        result = runner.invoke(ttt, [*audit, *GAME_4X5, "--db", db, "--json"])
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert "drawn by number from the game's index" in report["description"]
        assert report["asked"] == 300
        out = tmp_path / os.path.basename(db)
        evalset = ["evalset", *GAME_4X5, "--count", "40", "--format", "jsonl", "-q"]
        made = runner.invoke(ttt, [*evalset, "--db", db, "--out", str(out)])
        assert made.exit_code == 0, made.output
        del report["book"]
        outputs.append((report, made.stdout.splitlines()[-1]))
    assert outputs[0] == outputs[1]


@pytest.mark.slow
def test_every_position_of_4x5_is_refused_with_an_estimate(blocks_4x5, table_4x5):
    runner = CliRunner()
    for db in (blocks_4x5, table_4x5):
        for extra in ([], ["--per-class"], ["--positions", "sample:600000000"]):
            audit = ["audit", "--agent", "heuristic", *GAME_4X5, "--db", db, *extra]
            result = runner.invoke(ttt, audit)
            assert result.exit_code == 2, result.output
            said = result.output.strip()
            assert len(said.splitlines()) == 1 and "Traceback" not in said
            per_class = extra == ["--per-class"]
            what = ", one board per symmetry class," if per_class else ""
            count = "148,597,165 boards" if per_class else "594,310,311 positions"
            assert f"4x5 k=4{what} is {count} to pose" in said
            assert "a second (timed on 64 of them" in said and "sample:N" in said


@pytest.mark.slow
@pytest.mark.parametrize(
    "signum, status, said",
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_signal_stops_an_export_of_4x5_within_seconds(table_4x5, tmp_path, signum, status, said):
    """An export of 4x5 k=4's wide plies, stopped at random moments, ends within seconds
    with its line and no file (a SIGTERM took 100 s to act while a ply was enumerated)."""
    ttt_script = Path(sys.executable).parent / "ttt"
    out = tmp_path / "out.csv"
    rng = random.Random(signum)
    for _ in range(3):
        export = [str(ttt_script), "export", *GAME_4X5, "--db", table_4x5, "--where", "ply>=12"]
        process = subprocess.Popen(
            [*export, "-o", str(out)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(rng.uniform(3, 25))
        took = stop_with(process, signum, status, said, "export")
        assert not out.exists() and list(tmp_path.iterdir()) == []
        assert took < 15, f"the export stopped only {took:.1f} s after the signal"


def test_ttt_solve_builds_the_table_beside_the_book_and_resumes(tmp_path):
    db = str(tmp_path / "b.sqlite")
    runner = CliRunner()
    args = ["solve", "--size", "3x4", "--win", "3", "--method", "table", "--db", db]
    first = runner.invoke(ttt, args)
    assert first.exit_code == 0, first.output
    folder = tmp_path / "b.sqlite.tables" / "3x4k3"
    assert (folder / "table.json").exists()
    assert "needs 1.1 MB on disk" in first.stderr
    assert "│ method" in first.stdout and "table" in first.stdout
    # as if stopped while ply 4 was made: the table unfinished, the game not catalogued
    (folder / "ply-04.tb").unlink()
    (folder / "table.json").unlink()
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM games")
    again = runner.invoke(ttt, args)
    assert again.exit_code == 0, again.output
    assert "12 already made" in again.stderr
    blocks = str(tmp_path / "blocks.sqlite")
    runner.invoke(ttt, ["solve", "--size", "3x4", "--win", "3", "--db", blocks, "-q"])
    with open_book(db) as new, open_book(blocks) as old:
        assert list(new.rows(Rules(3, 4, 3))) == list(old.rows(Rules(3, 4, 3)))


def test_ttt_solve_refuses_a_table_of_more_than_25_cells(tmp_path):
    db = str(tmp_path / "b.sqlite")
    result = CliRunner().invoke(
        ttt, ["solve", "--size", "5x6", "--win", "4", "--method", "table", "--db", db]
    )
    assert result.exit_code != 0
    assert result.output.strip().splitlines() == [
        "Error: 5x6 k=4 has 30 cells; a table is made for boards of at most 25 cells "
        "(larger boards: --method alphabeta)"
    ]


def test_verify_checks_digests_and_samples(tmp_path):
    from ttt_solve.book.table.rows import TableRows
    from ttt_solve.book.table.verify import TableCheck, sample_problems
    from ttt_solve.solver.tablebase.files import HEADER_SIZE

    rules = Rules(3, 4, 3)
    _, tables = make_books(tmp_path, rules)
    runner = CliRunner()
    args = ["verify", "--size", "3x4", "--win", "3", "--db", tables]
    result = runner.invoke(ttt, args)
    assert result.exit_code == 0, result.output
    assert "OK, " in result.stdout
    rows = TableRows(tmp_path / rules.name, rules)
    assert list(sample_problems(rows, 200, 1, TableCheck())) == []
    rows.close()
    path = tmp_path / rules.name / "ply-06.tb"
    data = bytearray(path.read_bytes())
    reps = int.from_bytes(data[48:56], "little")
    records = HEADER_SIZE + 8 * reps
    changed = next(i for i in range(records, len(data)) if data[i] == 1)  # a draw
    data[changed] = 3  # now a win in 1
    path.write_bytes(bytes(data))
    result = runner.invoke(ttt, args)
    assert result.exit_code == 1
    assert "ply-06.tb" in result.stdout and "digest" in result.stdout
    rows = TableRows(tmp_path / rules.name, rules)
    found = list(sample_problems(rows, 5000, 1, TableCheck()))
    rows.close()
    assert found and all("the table says" in problem.message for problem in found)


@pytest.fixture(scope="module")
def two_books_3x3(tmp_path_factory):
    """3x3 k=3 in a book of blocks and in a book whose game is a table."""
    return make_books(tmp_path_factory.mktemp("books"), BOARDS[0])


SAME_ANSWERS = [
    ["stats"],
    ["export", "--format", "parquet", "--output", "OUT"],
    ["audit", "--agent", "heuristic", "--seed", "3"],
    ["audit", "--agent", "mcts:iterations=30", "--positions", "sample:40", "--seed", "1"],
    ["tournament", "--agents", "perfect,random", "--games", "6", "--json", "-q", "--seed", "2"],
    ["curve", "--agent", "mcts", "--vary", "iterations=5,20", "--positions", "sample:30"],
    ["rate", "--agent", "mcts:iterations=10", "--games", "2", "--positions", "sample:20"],
    ["play", "--agent", "perfect", "--as", "x", "--seed", "4"],
]


@pytest.mark.parametrize("command", SAME_ANSWERS, ids=lambda c: " ".join(c[:2]))
def test_the_commands_answer_alike_from_a_table(two_books_3x3, tmp_path, command):
    if "parquet" in command:
        pytest.importorskip("pyarrow", reason="pip install -e '.[notebook]'")
    blocks, tables = two_books_3x3
    outputs = []
    for db in (blocks, tables):
        args = [part.replace("OUT", str(tmp_path / f"{len(outputs)}.parquet")) for part in command]
        moves = "b2\na1\nc3\nb1\nb3\nc1\na3\n" if command[0] == "play" else None
        result = CliRunner().invoke(
            ttt, [*args, "--size", "3", "--win", "3", "--db", db], input=moves
        )
        assert result.exit_code == 0, result.output
        text = result.stdout.replace(db, "BOOK").replace(os.path.basename(db), "BOOK")
        lines = [line for line in text.splitlines() if "solved 20" not in line]
        outputs.append("\n".join(lines))
    assert outputs[0] == outputs[1]
    assert outputs[0].strip() or command[0] == "export"  # an export to a file prints nothing
    if command[0] == "export":
        first, second = (tmp_path / f"{i}.parquet" for i in (0, 1))
        assert first.read_bytes() == second.read_bytes()


def test_book_frame_and_the_perfect_agent_read_a_table(two_books_3x3):
    pytest.importorskip("pandas", reason="pip install -e '.[notebook]'")
    from ttt_solve.agents.spec import make_agent

    blocks, tables = two_books_3x3
    rules = BOARDS[0]
    with open_book(blocks) as old, open_book(tables) as new:
        assert new.frame(rules, where="ply<=6").equals(old.frame(rules, where="ply<=6"))
        assert new.frame(rules, expand=True).equals(old.frame(rules, expand=True))
        position = Position.parse("x../.o./...", rules)
        choices = set()
        for seed in range(10):
            agent = make_agent("perfect", random.Random(seed), book=new)
            choices.add(agent.select_move(position))
        assert choices <= set(new.find(position).best_moves) and choices


def test_serve_and_the_notebook_audit_answer_alike_from_a_table(two_books_3x3):
    pytest.importorskip("starlette", reason="pip install -e '.[web]'")
    from starlette.testclient import TestClient

    from ttt_solve import session
    from ttt_solve.web.app import create_app

    answers = []
    for db in two_books_3x3:
        with TestClient(create_app(db)) as client:
            responses = [
                client.get("/api/games/3x3k3/position?moves=b2,a1"),
                client.get("/api/games/3x3k3/mainline?moves=b2"),
                client.get("/uwapi/mnk/3x3k3/"),
            ]
            assert all(response.status_code == 200 for response in responses)
            pages = [response.json() for response in responses]
        report = session.audit("heuristic", "3x3k3", db=db, seed=1)
        answers.append((pages, report.summary, report.records))
    assert answers[0] == answers[1]
    assert answers[0][0][0]["moves"]  # a position with its moves, not an empty answer


@pytest.mark.parametrize("game", [(3, 4, 3), (4, 4, 4)])
def test_the_figures_from_the_files_counts_are_the_exhaustive_solvers(tmp_path, game):
    """What a book records for a table, read from the counts of its files' headers (no row
    read), or of a release's manifest, held to the figures the exhaustive solver counts from
    its rows: values, terminal positions and the remoteness table, canonical and reachable."""
    pytest.importorskip("zstandard", reason="releases need: pip install -e '.[compressed]'")
    from ttt_solve.book.table.catalogue import table_figures
    from ttt_solve.solver.figures import Figures
    from ttt_solve.solver.tablebase.release import publish

    rules = Rules(*game)
    build_table(rules, tmp_path / "t")
    publish(tmp_path / "t", tmp_path / "release")
    counted = Figures(rules.cells)
    for table in ExhaustiveSolver(rules).solve():
        counted.add(table)
    counted.start_score = None
    for folder in ("t", "release"):
        with open_tablebase(tmp_path / folder) as table:
            assert table_figures(table).to_dict() == counted.to_dict(), folder


def test_a_version_4_book_gains_the_table_folder_column(tmp_path):
    import sqlalchemy as sa

    from ttt_solve.book.migrate import prepare_schema
    from ttt_solve.book.schema import database_url, make_engine

    db = str(tmp_path / "old.sqlite")
    with open_book(db, create=True) as book:
        write_game(book, BOARDS[0], ExhaustiveSolver(BOARDS[0]).solve(), method="exhaustive")
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE games DROP COLUMN table_folder")
        conn.execute("UPDATE meta SET value = '4' WHERE name = 'schema_version'")
    engine = make_engine(database_url(db))
    assert prepare_schema(engine) == 4
    columns = {column["name"] for column in sa.inspect(engine).get_columns("games")}
    engine.dispose()
    assert "table_folder" in columns
    with open_book(db) as book:
        assert book.game(BOARDS[0]).table_folder is None
        assert book.find(Position.start(BOARDS[0])).value.outcome.value == "draw"
