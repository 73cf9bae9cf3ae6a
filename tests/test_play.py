"""``ttt play`` through click's CliRunner, with the person's moves as input text."""

from __future__ import annotations

from click.testing import CliRunner

from ttt_solve.cli.main import ttt


def play(book, text, *args):
    return CliRunner().invoke(ttt, ["play", "--db", book, "--seed", "1", *args], input=text)


def test_a_whole_game_is_graded(book_3x3):
    # Against alphabeta at full depth X cannot win; whatever happens the game ends.
    moves = "\n".join(["b2", "a1", "c1", "a3", "c3", "b1", "c2", "a2", "b3"]) + "\n"
    result = play(book_3x3, moves, "--agent", "alphabeta:depth=9")
    assert result.exit_code == 0, result.output
    assert "graded against the book" in result.output
    assert "accuracy" in result.output and ("draw." in result.output or "wins." in result.output)


def test_quitting_grades_the_moves_so_far(book_3x3):
    # X b1 (a draw like any opening), then a1 beside it, which the book says loses.
    result = play(book_3x3, "b1\na1\nc3\nquit\n", "--agent", "perfect", "--as", "x")
    assert result.exit_code == 0, result.output
    assert "game left unfinished" in result.output and "your moves, graded" in result.output
    assert "draw in 7 -> loss in 6" in result.output and "blunder draw->loss" in result.output


def test_hint_undo_bad_input_and_index_moves(book_3x3):
    result = play(book_3x3, "hint\n4\nundo\nundo\nzz\nc9\n4\nquit\n", "--agent", "heuristic")
    out = result.output
    assert result.exit_code == 0, out
    assert "best: a1 b1 c1 a2 b2 c2 a3 b3 c3 (draw in 9)" in out
    assert "nothing to undo" in out
    assert "'zz' is not a cell" in out and "off the 3x3 board" in out
    assert out.count("heuristic plays") == 2  # one reply undone, one kept


def test_playing_o_and_a_lost_game_is_graded_as_blunders(book_3x3):
    # O at a2 and then b1 after X's centre: the perfect agent wins; O's blunder is named.
    result = play(book_3x3, "b1\na2\nc2\nb3\nc1\n", "--agent", "perfect", "--as", "o")
    assert result.exit_code == 0, result.output
    assert "perfect wins." in result.output
    assert "blunder draw->loss" in result.output


def test_without_the_game_in_the_book(book_3x3):
    result = play(book_3x3, "a1\nquit\n", "--agent", "random", "--size", "3x4", "--win", "3")
    assert result.exit_code == 0, result.output
    assert "holds no 3x4 k=3 game" in result.output and "graded" not in result.output


def test_bad_agent_and_perfect_without_book(tmp_path):
    bad = CliRunner().invoke(ttt, ["play", "--agent", "nobody"], input="quit\n")
    assert bad.exit_code == 2 and "unknown agent 'nobody'" in bad.output
    missing = CliRunner().invoke(
        ttt, ["play", "--agent", "perfect", "--db", str(tmp_path / "none.sqlite")], input="quit\n"
    )
    assert missing.exit_code == 2 and "no book at" in missing.output


def test_end_of_input_quits(book_3x3):
    result = play(book_3x3, "b2\n", "--agent", "heuristic")
    assert result.exit_code == 0 and "game left unfinished" in result.output
