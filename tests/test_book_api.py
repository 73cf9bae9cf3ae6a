"""The Python API of a book (book.reader) and the oracle (book.oracle)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from click.testing import CliRunner

from tests.pg_support import solve_into
from tests.support import random_walk
from ttt_solve.book.enginerows import EngineRows
from ttt_solve.book.errors import (
    GameNotFoundError,
    OutOfReachError,
    PositionNotFoundError,
    RowFilterError,
)
from ttt_solve.book.oracle import BOOK, BOOK_AND_SEARCH, SEARCH, Oracle
from ttt_solve.book.reader import Book, open_book
from ttt_solve.book.records import Entry, StoredRow
from ttt_solve.book.rowfilter import Condition, RowFilter
from ttt_solve.book.writer import write_game
from ttt_solve.cli.main import ttt
from ttt_solve.fixes import fix
from ttt_solve.solver.errors import IllegalMoveError, SearchTimeout
from ttt_solve.solver.exhaustive.solve import ExhaustiveSolver
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome, Value, move_value

T3 = Rules(3, 3, 3)


def all_positions(rules: Rules) -> list[Position]:
    """Every reachable position, by walking the game from the empty board."""
    seen = {Position.start(rules)}
    frontier = list(seen)
    while frontier:
        nxt = []
        for position in frontier:
            for cell in position.legal_moves():
                child = position.play(cell)
                if child not in seen:
                    seen.add(child)
                    nxt.append(child)
        frontier = nxt
    return sorted(seen, key=lambda p: (p.ply, p.key))


@pytest.fixture(scope="module")
def positions_3x3() -> list[Position]:
    return all_positions(T3)


def test_the_read_path_does_not_import_sqlalchemy_numpy_or_numba(book_3x3):
    import subprocess
    import sys

    code = (
        "import sys; from ttt_solve.book.reader import open_book;"
        "from ttt_solve.solver.position import Position; from ttt_solve.solver.rules import Rules\n"
        f"with open_book({book_3x3!r}) as b: b.find(Position.start(Rules(3, 3, 3)))\n"
        "print(sorted(m for m in ('sqlalchemy', 'numpy', 'numba') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stderr


def test_find_get_and_the_narrow_key_error(book_3x3):
    with open_book(book_3x3) as book:
        entry = book.find(Position.parse("xx./oo./...", T3))
        assert isinstance(entry, Entry)
        assert entry.value == Value(Outcome.WIN, 1) and entry.best_moves == (2,)
        assert book.get(Position.parse("xx./oo./...", T3)) == entry
        with pytest.raises(GameNotFoundError, match="holds no 4x4 k=3 game") as caught:
            book.find(Position.start(Rules(4, 4, 3)))
        assert caught.value.rules == Rules(4, 4, 3) and caught.value.kind == "missing-game"
        with pytest.raises(GameNotFoundError):
            book.get(Position.start(Rules(4, 4, 3)))


def test_positions_past_an_opening_book(opening_book):
    rules = Rules(3, 4, 3)
    deep = Position.from_moves(rules, ["a1", "b2", "c3"])
    with open_book(opening_book) as book:
        assert book.find(Position.from_moves(rules, ["a1", "b2"])).value.outcome is Outcome.WIN
        with pytest.raises(
            PositionNotFoundError, match="beyond the opening book's depth 2"
        ) as caught:
            book.find(deep)
        assert isinstance(caught.value, KeyError)
        assert book.get(deep) is None and book.get(deep, "absent") == "absent"
        with pytest.raises(PositionNotFoundError, match="depth 2"):
            book.moves(Position.from_moves(rules, ["a1", "b2"]))
        assert len(book.moves(Position.from_moves(rules, ["a1"]))) == 11


def test_every_entry_matches_its_moves(book_3x3, positions_3x3):
    """Each stored value is the best of its moves, and best_moves are exactly the best ones."""
    with open_book(book_3x3) as book:
        entries = book.find_many(positions_3x3)
        assert len(entries) == 5478
        for position in positions_3x3:
            entry = entries[position]
            if position.is_terminal:
                assert entry.value.remoteness == 0 and entry.best_moves == ()
                continue
            moves = {
                cell: move_value(entries[position.play(cell)].value)
                for cell in position.legal_moves()
            }
            best = max(moves.values(), key=lambda v: v.score)
            assert entry.value == best, position
            assert entry.best_moves == tuple(sorted(c for c, v in moves.items() if v == best))


def test_moves_best_first(book_3x3):
    position = Position.parse("x.o/.x./...", T3)
    with open_book(book_3x3) as book:
        moves = book.moves(position)
        assert [m.name for m in moves][0] == "c3"
        assert moves[0].value == Value(Outcome.DRAW, 6)
        assert all(m.value.outcome is Outcome.LOSS for m in moves[1:])
        keys = [(m.value.sort_key, m.cell) for m in moves]
        assert keys == sorted(keys)
        assert book.moves(Position.parse("xxx/oo./...", T3)) == []


def test_choose_is_a_best_move_with_a_seeded_tie_break(book_3x3):
    start = Position.start(T3)
    with open_book(book_3x3) as book:
        best = set(book.find(start).best_moves)
        picks = [book.choose(start, random.Random(seed)) for seed in range(200)]
        assert set(picks) == best == set(range(9))  # every first move draws
        assert [book.choose(start, seed) for seed in range(20)] == picks[:20]
        win_now = Position.parse("xx./oo./...", T3)
        assert Counter(book.choose(win_now, s) for s in range(10)) == {2: 10}
        with pytest.raises(IllegalMoveError, match="over"):
            book.choose(Position.parse("xxx/oo./...", T3), 1)


def test_find_many_refuses_mixed_games(book_small):
    with open_book(book_small) as book:
        with pytest.raises(ValueError, match="one game"):
            book.find_many([Position.start(T3), Position.start(Rules(3, 4, 3))])


def test_the_sqlalchemy_path_reads_the_same(book_small):
    """Non-SQLite databases are read through SQLAlchemy Core: same answers as sqlite3."""
    rules = Rules(4, 4, 3)
    rng = random.Random(5)
    samples = [random_walk(rules, rng, rng.randrange(0, 9)) for _ in range(50)]
    with open_book(book_small) as fast:
        expected = fast.find_many(samples)
        games = fast.games()
        engine_book = Book(fast.engine, fast.url, rows=EngineRows(fast.engine))
        assert engine_book.games() == games
        assert engine_book.find_many(samples) == expected
        assert engine_book.moves(samples[3]) == fast.moves(samples[3])


class FakeProver:
    """Answers every move as a draw in (empty cells - 1), or times out."""

    def __init__(self, rules, timeout=False):
        self.rules, self.timeout, self.calls, self.nodes = rules, timeout, 0, 0

    def move_values(self, position, deadline=None):
        self.calls += 1
        self.nodes += 7
        if self.timeout:
            raise SearchTimeout("past the deadline")
        return [(c, Value(Outcome.DRAW, position.empty_count - 1)) for c in position.legal_moves()]


def test_oracle_sources(book_3x3, opening_book):
    made = []

    def factory(rules):
        made.append(FakeProver(rules))
        return made[-1]

    with open_book(book_3x3) as book:
        oracle = Oracle(T3, book, prover_factory=factory)
        analysis = oracle.analyse(Position.parse("x.o/.x./...", T3))
        assert analysis.source == BOOK and not analysis.searched and not made
        assert analysis.best_moves == (8,) and analysis.value == Value(Outcome.DRAW, 6)
        finished = oracle.analyse(Position.parse("xxx/oo./...", T3))
        assert finished.moves == () and finished.value == Value(Outcome.LOSS, 0)
    rules = Rules(3, 4, 3)
    with open_book(opening_book) as book:
        oracle = Oracle(rules, book, prover_factory=factory)
        at_depth = oracle.analyse(Position.from_moves(rules, ["a1", "b2"]))
        assert at_depth.source == BOOK_AND_SEARCH and at_depth.value.outcome is Outcome.WIN
        assert len(at_depth.moves) == 10 and at_depth.nodes == 7
        past = oracle.analyse(Position.from_moves(rules, ["a1", "b2", "c3"]))
        assert past.source == SEARCH and past.value == Value(Outcome.DRAW, 8)
        assert len(made) == 1  # one prover, kept
    with open_book(book_3x3) as book:
        absent = Oracle(Rules(4, 4, 3), book, prover_factory=factory)
        assert absent.analyse(Position.start(Rules(4, 4, 3))).source == SEARCH


def test_oracle_out_of_reach_says_what_would_hold_it(book_3x3, opening_book):
    rules = Rules(4, 4, 3)
    with open_book(book_3x3) as book:
        slow = Oracle(rules, book, prover_factory=lambda r: FakeProver(r, timeout=True))
        with pytest.raises(
            OutOfReachError, match="holds no 4x4 k=3 game and a live search gave up after 3 s"
        ) as caught:
            slow.analyse(Position.start(rules))
        assert (caught.value.rules, caught.value.depth, caught.value.database) == (
            rules,
            None,
            book_3x3,
        )
        assert (
            fix(caught.value)
            == f"; build the book with: ttt-solve --size 4 --win 3 --db {book_3x3}"
        )
        off = Oracle(rules, book, search_seconds=0)
        with pytest.raises(OutOfReachError, match="turned off"):
            off.analyse(Position.start(rules))
    with open_book(opening_book) as book:
        off = Oracle(Rules(3, 4, 3), book, search_seconds=0)
        with pytest.raises(
            OutOfReachError, match="only to ply 2 and live search is turned off"
        ) as caught:
            off.analyse(Position.from_moves(Rules(3, 4, 3), ["a1", "b2", "c3"]))
        assert caught.value.depth == 4
        assert fix(caught.value).endswith("--method alphabeta --book-depth 4 --force")


def test_oracle_live_search_agrees_with_the_book(book_small):
    """The real prover, on positions the book also holds, gives the book's answers."""
    pytest.importorskip("ttt_solve.solver.prover.search")
    rules = Rules(3, 4, 3)
    rng = random.Random(11)
    with open_book(book_small) as book:
        live = Oracle(rules, None, search_seconds=30)
        stored = Oracle(rules, book)
        for _ in range(25):
            position = random_walk(rules, rng, rng.randrange(2, 7))
            searched, truth = live.analyse(position), stored.analyse(position)
            assert searched.source == SEARCH and truth.source == BOOK
            assert searched.value == truth.value, position
            assert searched.moves == truth.moves, position


def test_every_backend_gives_the_same_answers(book_db, book_3x3, positions_3x3):
    """On each backend (PostgreSQL with a server, see tests/pg_support.py), the API and the
    commands answer as from the SQLite book of the session."""
    solve_into(book_db, T3)
    with open_book(book_3x3) as reference, open_book(book_db) as book:
        assert book.find_many(positions_3x3) == reference.find_many(positions_3x3)
        position = Position.parse("x.o/.x./...", T3)
        assert book.moves(position) == reference.moves(position)
        with pytest.raises(GameNotFoundError):
            book.get(Position.start(Rules(4, 4, 3)))
    for command in (
        ["query", "x.o/.x./...", "--json"],
        ["stats", "--json"],
        ["export", "--expand", "-q"],
    ):
        ours = CliRunner().invoke(ttt, [*command, "--db", book_db])
        theirs = CliRunner().invoke(ttt, [*command, "--db", book_3x3])
        assert ours.exit_code == 0, ours.output
        assert ours.stdout == theirs.stdout


def test_rows_streams_every_row_in_order(book_3x3):
    with open_book(book_3x3) as book:
        rows = list(book.rows(T3))
        assert len(rows) == 765 and sum(r.images for r in rows) == 5478
        assert rows == sorted(rows, key=lambda r: (r.ply, r.key))
        open_rows = list(book.rows(T3, where=RowFilter.of(open_only=True)))
        assert len(open_rows) == 765 - 138 and all(r.remoteness > 0 for r in open_rows)
        assert sum(r.images for r in open_rows) == 5478 - 958


FILTERS = [
    (RowFilter(), lambda r: True),
    (RowFilter.of(ply=4), lambda r: r.ply == 4),
    (RowFilter.of(value=-1, remoteness=2), lambda r: r.value == -1 and r.remoteness == 2),
    (RowFilter.of(open_only=True), lambda r: r.remoteness > 0),
    (
        RowFilter((Condition("ply", ">=", 2), Condition("images", "!=", 8))),
        lambda r: r.ply >= 2 and r.images != 8,
    ),
    (
        RowFilter((Condition("value", "==", 1), Condition("remoteness", "<", 3))),
        lambda r: r.value == 1 and r.remoteness < 3,
    ),
]


@pytest.mark.parametrize("where, keep", FILTERS)
def test_rows_filters_agree_on_both_read_paths(book_3x3, where, keep):
    """The sqlite3 path and the SQLAlchemy path give the same StoredRows for every filter,
    and they are the rows the filter describes."""
    with open_book(book_3x3) as fast:
        every = list(fast.rows(T3))
        expected = [row for row in every if keep(row)]
        assert 0 < len(expected) <= 765
        got = list(fast.rows(T3, where=where, batch=7))
        engine_book = Book(fast.engine, fast.url, rows=EngineRows(fast.engine))
        through_engine = list(engine_book.rows(T3, where=where, batch=7))
    assert got == expected == through_engine
    assert all(type(row) is StoredRow for row in got + through_engine)


@pytest.mark.parametrize(
    "condition, message",
    [
        (Condition("key", "=", 1), "row condition 'key=1': unknown column 'key'"),
        (Condition("ply", "; DROP", 1), "unknown operator '; DROP'"),
        (Condition("ply", "<=", 10**20), "is out of range for ply"),
        (Condition("ply", "<=", "4"), "ply compares with a whole number"),
    ],
)
def test_row_filters_refuse_what_they_cannot_apply(condition, message):
    with pytest.raises(RowFilterError, match=message.replace("(", r"\(")) as caught:
        RowFilter((condition,))
    assert isinstance(caught.value, ValueError)


def test_an_open_book_sees_a_game_re_solved_by_another_writer(tmp_path):
    """A game replaced (``--force``) through another connection gets a new id; a book left
    open must follow it instead of reporting its positions missing."""
    db = str(tmp_path / "resolved.sqlite")
    with open_book(db, create=True) as writer:
        write_game(
            writer, Rules(3, 4, 3), ExhaustiveSolver(Rules(3, 4, 3)).solve(), method="exhaustive"
        )
        write_game(writer, T3, ExhaustiveSolver(T3).solve(), method="exhaustive")
    position = Position.parse("xx./oo./...", T3)
    with open_book(db) as reader:
        old_id = reader.game(T3).id
        assert reader.find(position).value == Value(Outcome.WIN, 1)
        with open_book(db) as writer:
            # 3x4 re-solved first takes a new id, so that 3x3's next one is new as well
            write_game(
                writer,
                Rules(3, 4, 3),
                ExhaustiveSolver(Rules(3, 4, 3)).solve(),
                method="exhaustive",
                force=True,
            )
            write_game(writer, T3, ExhaustiveSolver(T3).solve(), method="exhaustive", force=True)
            assert writer.game(T3).id != old_id
        assert reader.find(position).value == Value(Outcome.WIN, 1)
        assert reader.game(T3).id != old_id
        assert [m.name for m in reader.moves(position)][:1] == ["c1"]
        assert len(reader.find_many([position, Position.start(T3)])) == 2


def test_find_with_moves_reads_what_find_and_moves_read(book_small, opening_book, monkeypatch):
    """One query for a position and its children answers as :meth:`find` and :meth:`moves`,
    on square and oblong boards (whose symmetric children share a key), through both read
    paths, and raises what they raise past an opening book."""
    with open_book(book_small) as book:
        engine_book = Book(book.engine, book.url, rows=EngineRows(book.engine))
        rng = random.Random(3)
        oblong = [random_walk(Rules(3, 4, 3), rng, rng.randrange(0, 13)) for _ in range(300)]
        lookups = []  # the one-key and many-key queries of find and moves, not the family's
        positions = book._rows.positions

        def counted(*args):
            lookups.append(args)
            return positions(*args)

        monkeypatch.setattr(book._rows, "positions", counted)
        for position in all_positions(T3) + oblong:
            expected = (book.find(position), book.moves(position))
            lookups.clear()
            assert book.find_with_moves(position) == expected, position
            assert lookups == [] or position.is_terminal, position
        for position in oblong[:30]:
            expected = (book.find(position), book.moves(position))
            assert engine_book.find_with_moves(position) == expected, position
    rules = Rules(3, 4, 3)
    with open_book(opening_book) as book:
        first = Position.from_moves(rules, ["a1"])
        assert book.find_with_moves(first) == (book.find(first), book.moves(first))
        with pytest.raises(PositionNotFoundError, match="depth 2"):
            book.find_with_moves(Position.from_moves(rules, ["a1", "b2"]))
