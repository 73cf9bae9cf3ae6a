"""The OpenSpiel bridge: the book's oracle against OpenSpiel's MinimaxSolver and alpha-beta,
and the book's bot in OpenSpiel's own games.

Skipped, saying what to install, without the ``openspiel`` and ``rl`` extras.
"""

from __future__ import annotations

import contextlib
import random

import numpy as np
import pytest

pytest.importorskip("pyspiel", reason="pip install -e '.[openspiel]'")
pytest.importorskip("pettingzoo", reason="pip install -e '.[rl]'")

import pyspiel  # noqa: E402
from open_spiel.python.algorithms import minimax, minimax_solver  # noqa: E402
from open_spiel.python.bots.uniform_random import UniformRandomBot  # noqa: E402

from ttt_solve.agents.openspiel import to_state  # noqa: E402
from ttt_solve.book.reader import open_book  # noqa: E402
from ttt_solve.rl.spiel import BookBot, BookOracle, rules_of  # noqa: E402
from ttt_solve.solver.errors import IllegalMoveError  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402


def test_rules_of_openspiels_games():
    assert rules_of("tic_tac_toe") == Rules(3, 3, 3)
    assert rules_of("mnk(m=5,n=4,k=4)") == Rules(4, 5, 4)
    with pytest.raises(ValueError, match="connect_four"):
        rules_of("connect_four")


@pytest.mark.parametrize(
    "game_string, states",
    [("tic_tac_toe", None), ("mnk(m=3,n=3,k=3)", None), ("mnk(m=4,n=3,k=3)", 1500)],
)
def test_oracle_agrees_with_minimax_solver(book_small, game_string, states):
    """Every state MinimaxSolver tabled (or a seeded sample of them): the same value for the
    player to move and the same value of every action."""
    solver = minimax_solver.MinimaxSolver(game_string)
    table = solver.solve()
    keys = sorted(table)
    if states is not None:
        keys = random.Random(1).sample(keys, states)
    with open_book(book_small) as book:
        oracle = BookOracle(game_string, book)
        oracle.solve()
        for key in keys:
            assert oracle.values_from_string(key) == solver.values_from_string(key), key
            assert np.array_equal(
                oracle.action_values_from_string(key), solver.action_values_from_string(key)
            ), key
        assert oracle.truth.of(Position.start(oracle.rules)).source == "book"


def test_oracle_by_live_search_agrees_with_minimax_solver():
    solver = minimax_solver.MinimaxSolver("tic_tac_toe")
    table = solver.solve()
    oracle = BookOracle("tic_tac_toe")  # no book: live search
    for key in random.Random(2).sample(sorted(table), 300):
        assert oracle.values_from_string(key) == solver.values_from_string(key), key


def late_positions(rules: Rules, count: int, ply: int, seed: int) -> list[Position]:
    """Seeded random positions of at least ``ply`` stones, not over."""
    rng = random.Random(seed)
    found: list[Position] = []
    while len(found) < count:
        position = Position.start(rules)
        while position.ply < ply and not position.is_terminal:
            position = position.play(rng.choice(position.legal_moves()))
        if not position.is_terminal:
            found.append(position)
    return found


def check_against_alpha_beta(book_db: str | None, rules: Rules, count: int, ply: int) -> None:
    """Where MinimaxSolver's table would not fit: OpenSpiel's exact alpha-beta on late
    positions, the same value as the oracle's (from the book, or by live search without one)."""
    game = pyspiel.load_game("mnk", {"m": rules.cols, "n": rules.rows, "k": rules.k})
    with contextlib.ExitStack() as stack:
        book = stack.enter_context(open_book(book_db)) if book_db is not None else None
        oracle = BookOracle(game, book)
        for position in late_positions(rules, count, ply, seed=3):
            state = to_state(game, position)
            depth, player = position.empty_count, state.current_player()
            value, _ = minimax.alpha_beta_search(game, state, None, depth, player)  # exact
            assert oracle.values_from_state(state) == value, position
            assert oracle.truth.of(position).source == ("book" if book else "search")


def test_oracle_agrees_with_alpha_beta_on_4x4_k4(book_4x4k4):
    check_against_alpha_beta(book_4x4k4, Rules(4, 4, 4), 30, 8)


@pytest.mark.slow
def test_oracle_agrees_with_alpha_beta_on_4x5_k4():
    """4x5 k=4's exhaustive book takes hours here: late positions by live search."""
    check_against_alpha_beta(None, Rules(4, 5, 4), 40, 11)


@pytest.mark.parametrize("game_string", ["tic_tac_toe", "mnk(m=4,n=3,k=3)"])
def test_book_bot_never_loses_to_random_and_plays_best_moves(book_small, game_string):
    game = pyspiel.load_game(game_string)
    solver_values = BookOracle(game)  # live search: an answer apart from the bot's book
    with open_book(book_small) as book:
        for seed in range(60):
            side = seed % 2
            bots = [UniformRandomBot(1 - side, np.random.RandomState(seed))]
            bots.insert(side, BookBot(game, side, book, seed=seed))
            returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, seed)
            assert returns[side] >= 0
            if game_string.startswith("mnk") and side == 0:  # 3x4 k=3 is a win for X
                assert returns[side] == 1
        bot = BookBot(game, 0, book, seed=1)
        state = game.new_initial_state()
        for action in (0, 5):
            state.apply_action(action)
        for _ in range(20):
            values = solver_values.action_values_from_state(state)
            assert values[bot.step(state)] == values.max()


def test_book_bot_at_a_rungs_strength(book_3x3):
    """``perfect:eps=1`` is uniformly random: it loses some games to perfect play."""
    game = pyspiel.load_game("tic_tac_toe")
    with open_book(book_3x3) as book:
        losses = 0
        for seed in range(30):
            bots = [BookBot(game, 0, book, spec="perfect:eps=1", seed=seed), BookBot(game, 1, book)]
            losses += pyspiel.evaluate_bots(game.new_initial_state(), bots, seed)[0] < 0
        assert losses > 5
        BookBot(game, 0, book, spec="perfect:error=0.2")  # an agent of the project


@pytest.mark.parametrize("spec", ["perfect", "perfect:eps=0.5", "heuristic"])
def test_book_bot_asked_to_move_in_a_finished_game_says_so(book_3x3, spec):
    game = pyspiel.load_game("tic_tac_toe")
    state = game.new_initial_state()
    for action in (0, 3, 1, 4, 2):  # X takes the top row
        state.apply_action(action)
    bot = BookBot(game, 1, book_3x3, spec=spec)
    with pytest.raises(IllegalMoveError, match="the game is over") as refused:
        bot.step(state)
    assert "\n" not in str(refused.value)
