"""Bad input: one line naming what is wrong, exit status 2, through the CLI and the API."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ttt_solve.book.defaults import SCHEMA_VERSION
from ttt_solve.book.errors import BookNotFoundError, GameNotFoundError, SchemaVersionError
from ttt_solve.book.reader import open_book
from ttt_solve.cli.main import ttt
from ttt_solve.cli.query import parse_query
from ttt_solve.solver.errors import IllegalMoveError, InvalidPositionError
from ttt_solve.solver.rules import Rules

T3 = Rules(3, 3, 3)

# (position, --moves, message, exception of the API)
POSITIONS = [
    ("x.o/.x", None, "has 2 rows of 3/2 cells", InvalidPositionError),
    ("x.o.x", None, "has 5 cells; a 3x3 board has 9", InvalidPositionError),
    ("xq./.../...", None, "has 'q' at cell 1", InvalidPositionError),
    ("o../.../...", None, "O is ahead", InvalidPositionError),
    ("xx./.../...", None, "X is more than one move ahead", InvalidPositionError),
    ("xxx/ooo/...", None, "both players have a line", InvalidPositionError),
    ("xxx/oo./o..", None, "O moved after X had already won", InvalidPositionError),
    ("ooo/xx./xx.", None, "X moved after O had already won", InvalidPositionError),
    (None, "a1,a2,b1,b2,c1,c2", "the game is over", IllegalMoveError),
    (None, "b2,b2", "cell b2 is already taken", IllegalMoveError),
    ("x../.../...", "a1", "cell a1 is already taken", IllegalMoveError),
    (None, "b2,z9", "cell 'z9' is off the 3x3 board", IllegalMoveError),
    (None, "b2,9", "cell index 9 is off the 3x3 board", IllegalMoveError),
    (None, "b2,?", "'?' is not a cell", IllegalMoveError),
]


def one_line_error(args: list[str], message: str) -> None:
    result = CliRunner().invoke(ttt, args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr, result.stderr
    assert result.stderr.startswith("Error: ") and len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == "" and "Traceback" not in result.output


@pytest.mark.parametrize("position, moves, message, error", POSITIONS)
def test_bad_positions_and_moves_through_the_cli(book_3x3, position, moves, message, error):
    args = ["query", "--size", "3", "--win", "3", "--db", book_3x3]
    args += [position] if position else []
    args += ["--moves", moves] if moves else []
    one_line_error(args, message)


@pytest.mark.parametrize("position, moves, message, error", POSITIONS)
def test_bad_positions_and_moves_through_the_api(position, moves, message, error):
    with pytest.raises(error, match=message.replace("?", r"\?")) as caught:
        parse_query(T3, position, moves)
    assert isinstance(caught.value, ValueError)
    if position and error is InvalidPositionError:
        assert repr(position) in str(caught.value)  # the message quotes the input


DATABASES = [
    ("missing", "no book at", BookNotFoundError),
    (
        "newer",
        f"written by a newer ttt-solve: found schema version {SCHEMA_VERSION + 1}, "
        f"expected {SCHEMA_VERSION} or older",
        SchemaVersionError,
    ),
    ("other", "is not a ttt-solve book (found tables t", SchemaVersionError),
    ("garbage", "cannot read a book at", BookNotFoundError),
    ("empty", "it holds no tables", BookNotFoundError),
]


@pytest.mark.parametrize("command", ["query", "stats", "export"])
@pytest.mark.parametrize("name, message, error", DATABASES)
def test_bad_databases_through_the_cli(corrupt_books, command, name, message, error):
    db = corrupt_books[name]
    one_line_error([command, "--db", db], message)


@pytest.mark.parametrize("name, message, error", DATABASES)
def test_bad_databases_through_the_api(corrupt_books, name, message, error):
    db = corrupt_books[name]
    with pytest.raises(error, match=message.replace("(", r"\(")):
        with open_book(db):
            pass


@pytest.mark.parametrize("command", ["stats", "export"])
def test_game_not_in_the_book(book_3x3, command):
    one_line_error(
        [command, "--size", "4", "--win", "4", "--db", book_3x3],
        "holds no 4x4 k=4 game; build it with: ttt-solve --size 4 --win 4 --db",
    )
    with open_book(book_3x3) as book:
        with pytest.raises(GameNotFoundError) as caught:
            book.game(Rules(4, 4, 4))
        # the library says what is missing; the command line (above) adds the command
        error = caught.value
        assert (error.kind, error.rules, error.database) == (
            "missing-game",
            Rules(4, 4, 4),
            book_3x3,
        )
        assert "ttt-solve" not in str(error)
        assert book.find_game(Rules(4, 4, 4)) is None


def test_game_not_in_the_book_and_too_slow_to_search(book_3x3):
    one_line_error(
        ["query", "--size", "6x5", "--win", "5", "--db", book_3x3, "--search-seconds", "0"],
        "ttt-solve --size 6x5 --win 5",
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--size", "3", "--win", "4"], "need 1 <= k <= 3"),
        (["--size", "0"], "each side must be 1..26"),
        (["--size", "3by3"], "board size '3by3'"),
    ],
)
def test_bad_rules(book_3x3, args, message):
    for command in ("query", "stats", "export"):
        one_line_error([command, *args, "--db", book_3x3], message)


def test_a_database_url_that_cannot_be_reached_keeps_its_password_quiet():
    url = "postgresql+psycopg://someone:s3cret@127.0.0.1:1/books"
    for command in ("query", "stats", "export"):
        one_line_error([command, "--db", url], "someone:***@127.0.0.1:1/books")
        result = CliRunner().invoke(ttt, [command, "--db", url])
        assert "s3cret" not in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["query", "--search-seconds", "nan"], "--search-seconds nan must be"),
        (["query", "--search-seconds", "-1"], "--search-seconds -1.0 must be"),
        (["audit", "--agent", "mcts:c=nan"], "expected a finite number >= 0"),
        (["audit", "--agent", "mcts:c=-1"], "expected a finite number >= 0"),
        (["export", "--where", "ply<=99999999999999999999999"], "out of range"),
    ],
)
def test_numbers_out_of_range_are_one_line_errors(book_3x3, args, message):
    from click.testing import CliRunner

    from ttt_solve.cli.main import ttt

    result = CliRunner().invoke(ttt, args + ["--db", book_3x3])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
