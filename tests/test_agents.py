"""Agents: spec strings, legal and reproducible play, and play checked against the truth."""

from __future__ import annotations

import random
from functools import cache

import pytest

from tests.support import over_boards, refused_spec
from ttt_solve.agents.base import Agent
from ttt_solve.agents.heuristic import HeuristicAgent
from ttt_solve.agents.match import play_game
from ttt_solve.agents.mcts import MctsAgent
from ttt_solve.agents.minimax import AlphaBetaAgent, MinimaxAgent
from ttt_solve.agents.rollout import random_playout
from ttt_solve.agents.spec import AGENTS, make_agent, parse_spec
from ttt_solve.agents.tables import Tables, tables
from ttt_solve.book.reader import open_book
from ttt_solve.solver.errors import IllegalMoveError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

R3 = Rules(3, 3, 3)
SEARCHERS = [
    "random",
    "heuristic",
    "minimax:depth=2",
    "alphabeta:depth=3",
    "montecarlo:playouts=10",
    "mcts:iterations=200",
    "mcts:iterations=200,rollout=heuristic,solver=true",
]


# -- an independent solver for 3x3: plain recursion over strings, no bitboards ---------------

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def board_of(position: Position) -> str:
    return str(position).replace("/", "")


def winner(board: str) -> str | None:
    for a, b, c in LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return board[a]
    return None


@cache
def solve(board: str) -> tuple[int, int]:
    """(outcome for the side to move: 1, 0, -1; remoteness) by full recursion."""
    if winner(board):
        return -1, 0
    if "." not in board:
        return 0, 0
    results = [move_result(board, i) for i, ch in enumerate(board) if ch == "."]
    return max(results, key=rank)


def move_result(board: str, cell: int) -> tuple[int, int]:
    """(outcome, remoteness) of a move for its mover."""
    mover = "x" if board.count("x") == board.count("o") else "o"
    outcome, remoteness = solve(board[:cell] + mover + board[cell + 1 :])
    return -outcome, remoteness + 1


def rank(result: tuple[int, int]) -> tuple[int, int]:
    """Bigger is better: outcome first, then fast wins and slow losses."""
    outcome, remoteness = result
    return outcome, -remoteness if outcome > 0 else remoteness


def reachable(position: Position | None = None, seen: set | None = None) -> set[Position]:
    position = Position.start(R3) if position is None else position
    seen = set() if seen is None else seen
    if position not in seen:
        seen.add(position)
        for cell in position.legal_moves():
            reachable(position.play(cell), seen)
    return seen


ALL_3X3 = sorted(reachable(), key=lambda p: (p.ply, p.key))


def test_oracle_matches_conventions():
    assert len(ALL_3X3) == 5478
    assert solve("." * 9) == (0, 9)


# -- spec strings ----------------------------------------------------------------------------


def test_spec_parses_typed_parameters():
    spec = parse_spec("MCTS:iterations=50, c=2,rollout=Heuristic,solver=yes")
    assert spec.name == "mcts"
    assert spec.params == {
        "iterations": 50,
        "c": 2.0,
        "rollout": "heuristic",
        "solver": True,
        "book": False,
    }
    agent = make_agent(spec, random.Random(1))
    assert isinstance(agent, MctsAgent) and agent.iterations == 50 and agent.solver
    assert parse_spec("alphabeta").params["depth"] == 4
    assert parse_spec("random:book=true").needs_book and parse_spec("perfect").needs_book


# A spec that cannot make an agent, and the words its error must hold (separated by " | ").
BAD_SPECS = [
    (
        "mtcs",
        "unknown agent 'mtcs' | random, heuristic, minimax, alphabeta, montecarlo, mcts, perfect",
    ),
    (
        "mcts:iters=5",
        "unknown parameter 'iters' | iterations (int, default 1000) | c (float "
        "| rollout (random|heuristic | solver (bool | book (bool",
    ),
    ("heuristic:depth=2", "unknown parameter 'depth' for heuristic | book (bool"),
    ("alphabeta:depth=two", "depth='two' | whole number"),
    ("mcts:c=fast", "c='fast' | expected a number"),
    ("mcts:rollout=smart", "expected one of random, heuristic"),
    ("mcts:solver=maybe", "expected true or false"),
    ("mcts:iterations", "'iterations' | is not key=value"),
    ("mcts:iterations=0", "at least 1"),
    ("perfect", "reads the book, but no book was given"),
    # engines over the line protocol
    ("cmd:./e --weights a,b", "'b' | is not key=value"),
    ("cmd:./e,depth=2", "unknown parameter 'depth' for cmd | timeout (float, default 5.0)"),
    ("cmd:./e,timeout=nan", "timeout=nan"),
    ("cmd:./e,timeout=0", "timeout=0.0 | between 0 and 86400"),
    ("cmd:./e,timeout=soon", "expected a number"),
    ("cmd:", "names no command"),
    ('cmd:"",timeout=1', "names no command"),
    ('cmd:"./e', "cannot split the command | closing quotation"),
    # plug-ins in Python
    ("py", "does not name a factory | py:package.module:factory"),
    ("py:examples.plugin_agent", "does not name a factory"),
    ("py:examples.plugin_agent:9lives", "does not name a factory"),
    ("py:not a module:make", "does not name a factory"),
    ("py:examples.plugin_agent:make,depth", "'depth' | is not key=value"),
    ("py:examples.plugin_agent:make,a=1,a=2", "given twice"),
    ("py:examples.plugin_agent:make,book=maybe", "expected true or false"),
    ("py:examples.plugin_agent:nope", "no callable 'nope' | make"),
    ("py:no_such_package.agent:make", "cannot load | ModuleNotFoundError"),
    ("py:/no/such/file.py:make", "cannot load | no file"),
    ("py:examples.plugin_agent:make,depth=2", "make(rng, depth=2) failed | depth"),
    ("py:tests.test_plugin:not_an_agent", "returned int | no select_move"),
]


@pytest.mark.parametrize("spec, words", BAD_SPECS)
def test_bad_specs_say_what_exists(spec, words):
    assert isinstance(refused_spec(spec, words.split(" | ")), ValueError)


def test_every_agent_is_registered_with_a_description():
    assert set(AGENTS) == {
        "random",
        "heuristic",
        "minimax",
        "alphabeta",
        "montecarlo",
        "mcts",
        "perfect",
    }


def test_agents_need_an_injected_generator():
    with pytest.raises(TypeError):
        HeuristicAgent(None)  # type: ignore[arg-type]


# -- legal, reproducible play on any board -------------------------------------------------


@over_boards("3x3 k=3", "3x4 k=3", "4x4 k=4", "5x5 k=4", "2x3 k=2", "1x4 k=1")
@pytest.mark.parametrize("spec", SEARCHERS)
def test_agents_play_legal_reproducible_games(rules, spec):
    if rules.cells > 16 and spec.startswith(("minimax", "alphabeta")):
        spec = spec.split(":")[0] + ":depth=1"
    games = []
    for _ in range(2):
        x = make_agent(spec, random.Random(7))
        o = make_agent("random", random.Random(8))
        games.append(play_game(x, o, rules))
    assert games[0] == games[1]
    position = Position.start(rules)
    for cell in games[0].moves:
        position = position.play(cell)  # raises on an illegal move
    assert position.is_terminal and position.winner == games[0].winner


def test_mcts_with_a_seed_is_reproducible_move_for_move():
    rules = Rules(4, 4, 3)
    runs = []
    for _ in range(2):
        a = make_agent("mcts:iterations=300", random.Random(42))
        b = make_agent("mcts:iterations=300,rollout=heuristic,solver=true", random.Random(43))
        record = play_game(a, b, rules)
        a.rng.seed(5)
        root = a.tree(Position.start(rules))
        runs.append((record.moves, [(ch.bit, ch.visits, ch.value) for ch in root.children]))
    assert runs[0] == runs[1]
    others = [
        play_game(
            make_agent("mcts:iterations=300", random.Random(s)),
            make_agent("random", random.Random(s)),
            rules,
        ).moves
        for s in range(4)
    ]
    assert len(set(others)) > 1  # the seed does matter


def test_random_playout_reads_the_win_table_and_the_lines_alike():
    # Boards past WIN_TABLE_CELLS have no win table; the same playout then tests the lines
    # through each move. With one seed both ways must reach the same results.
    with_table = tables(Rules(4, 4, 3))
    without_table = Tables(Rules(4, 4, 3))
    without_table.win = None
    results = []
    for t in (with_table, without_table):
        draw = random.Random(11).random
        results.append([random_playout(t, 0, 0, list(t.bits), t.cells, draw) for _ in range(300)])
    assert results[0] == results[1]
    assert set(results[0]) == {-1, 0, 1}


def test_mcts_simulation_count_and_solver_proof():
    agent = MctsAgent(random.Random(0), iterations=500)
    root = agent.tree(Position.start(R3))
    assert root.visits == 500 == sum(ch.visits for ch in root.children) + 0
    # X to move wins at once at c1 (a1 b1 held): the solver proves it and stops early.
    won = Position.parse("xx./oo./...", R3)
    solver = MctsAgent(random.Random(0), iterations=500, solver=True)
    root = solver.tree(won)
    assert root.proven == -1 and root.visits < 500
    assert solver.select_move(won) == 2
    # O to move must block at c1 (and then holds the draw); every other move is a proven loss.
    must_block = Position.parse("xx./.o./...", R3)
    root = solver.tree(must_block)
    lost = {ch.bit.bit_length() - 1 for ch in root.children if ch.proven == -1}
    assert lost and 2 not in lost
    assert solver.select_move(must_block) == 2


def test_play_game_rejects_an_illegal_agent():
    class Cheat(Agent):
        name = "cheat"

        def search(self, position):
            return 0  # a1, even when taken

    with pytest.raises(IllegalMoveError, match="cheat played 0"):
        play_game(Cheat(random.Random(0)), Cheat(random.Random(0)), R3)


def test_an_agent_refuses_a_finished_game():
    with pytest.raises(IllegalMoveError, match="game is over"):
        HeuristicAgent(random.Random(0)).select_move(Position.parse("xxx/oo./...", R3))


# -- play checked against the truth ----------------------------------------------------------


def test_perfect_never_loses_and_never_misses_a_faster_win(book_3x3):
    with open_book(book_3x3) as book:
        agent = make_agent("perfect", random.Random(3), book)
        for position in ALL_3X3:
            if position.is_terminal:
                continue
            board = board_of(position)
            cell = agent.select_move(position)
            assert rank(move_result(board, cell)) == rank(solve(board)), position


def test_book_true_plays_from_the_book_and_searches_past_it(book_3x3):
    with open_book(book_3x3) as book:
        agent = make_agent("random:book=true", random.Random(0), book)
        for position in ALL_3X3[:200]:
            if not position.is_terminal:
                board = board_of(position)
                assert rank(move_result(board, agent.select_move(position))) == rank(solve(board))
        assert agent.book_moves > 0
        # 3x4 is not in this book: the agent falls back to its own (random) choice.
        other = Position.start(Rules(3, 4, 3))
        assert agent.select_move(other) in other.legal_moves()


def _never_loses(candidates, side: str) -> int:
    """Walk every game where ``side`` plays any of ``candidates(position)`` and the opponent
    plays anything; assert the opponent never wins. Returns the positions visited."""
    seen: set[Position] = set()

    def walk(position: Position) -> None:
        if position in seen:
            return
        seen.add(position)
        if position.is_terminal:
            assert position.winner in (None, side), f"{side} lost: {position}"
            return
        moves = candidates(position) if position.to_move == side else position.legal_moves()
        for cell in moves:
            walk(position.play(cell))

    walk(Position.start(R3))
    return len(seen)


@pytest.mark.parametrize("side", ["x", "o"])
def test_heuristic_never_loses_3x3_against_any_replies(side):
    agent = HeuristicAgent(random.Random(0))
    assert _never_loses(agent.candidates, side) > 100


@pytest.mark.parametrize("side", ["x", "o"])
def test_full_depth_alphabeta_never_loses_3x3_against_any_replies(side):
    agent = AlphaBetaAgent(random.Random(0), depth=9)
    cache: dict[Position, list[int]] = {}

    def candidates(position):
        if position not in cache:
            cache[position] = agent.candidates(position)
            board = board_of(position)
            # Exact at full depth: the candidates are exactly the perfect moves.
            best = rank(solve(board))
            perfect = [c for c in position.legal_moves() if rank(move_result(board, c)) == best]
            assert cache[position] == perfect, position
        return cache[position]

    assert _never_loses(candidates, side) > 100


def test_minimax_and_alphabeta_agree_on_root_scores():
    for text in ("...|...|...", "x..|.o.|...", "xo.|.x.|..."):
        position = Position.parse(text.replace("|", "/"), R3)
        for depth in (1, 2, 3):
            plain = MinimaxAgent(random.Random(0), depth=depth)
            pruned = AlphaBetaAgent(random.Random(0), depth=depth)
            assert plain.candidates(position) == pruned.candidates(position)
            assert pruned.nodes <= plain.nodes


def test_heuristic_rules_in_order():
    h = HeuristicAgent(random.Random(0))
    assert h.candidates(Position.start(R3)) == [4]  # centre first
    assert h.candidates(Position.parse(".../.x./...", R3)) == [0, 2, 6, 8]  # then a corner
    assert h.candidates(Position.parse("xx./oo./...", R3)) == [2]  # win now
    assert h.candidates(Position.parse("xx./o../...", R3)) == [2]  # block
    # X: a1 and c3, O: b2 to move: a corner loses to a double threat, an edge holds.
    assert set(h.candidates(Position.parse("x../.o./..x", R3))) <= {1, 3, 5, 7}
    # 4 in a row on 4x4: block the open three.
    r4 = Rules(4, 4, 4)
    assert h.candidates(Position.parse("xxx./oo../..../o...", r4)) == [3]
