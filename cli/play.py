"""``ttt play``: play an agent in the terminal; your moves are graded against the book."""

from __future__ import annotations

import random
from contextlib import ExitStack

import click
from tabulate import tabulate

from ttt_solve.agents.audit import Truth, grade_game, summarize
from ttt_solve.agents.match import checked_move
from ttt_solve.agents.spec import describe_agents, make_agent, parse_spec
from ttt_solve.book.errors import BookError
from ttt_solve.book.reader import open_book
from ttt_solve.cli.common import db_option, friendly_errors, game_options
from ttt_solve.cli.options import agent_option, command, seed_option
from ttt_solve.fixes import explained, solve_command
from ttt_solve.solver.errors import IllegalMoveError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.vocabulary import Side

EXAMPLES = """
\b
Examples:
  ttt play --agent heuristic
  ttt play --agent mcts:iterations=2000 --as o
  ttt play --agent alphabeta:depth=3 --size 4 --win 3 --db books/small.sqlite

\b
At the prompt: a cell (b2, or its index 4), undo (take back your last move and the
reply), hint (the book's best moves), quit.
"""

HELP_LINE = "moves: a cell like b2 or an index like 4; undo, hint, quit"


def _open_truth(stack: ExitStack, db: str, rules: Rules, needs_book: bool):  # noqa: ANN202
    """The book and its truth for this game, or ``(book or None, None)`` with a warning."""
    try:
        book = stack.enter_context(open_book(db, read_only=True))
    except BookError as error:
        if needs_book:
            raise
        click.echo(f"note: {explained(error)}; playing without hints or grading", err=True)
        return None, None
    if book.find_game(rules) is None:
        if needs_book:
            book.game(rules)  # raises, naming the command that builds the game
        click.echo(
            f"note: {book.describe()} holds no {rules.name} game; playing without "
            f"hints or grading (build it: {solve_command(rules, book.db_argument)})",
            err=True,
        )
        return book, None
    # Per-position lookups: a game played by hand needs a few dozen, not the whole table.
    return book, Truth(book, rules, preload_limit=0)


@command(
    "play",
    epilog=EXAMPLES + "\n\b\nAgents:\n" + describe_agents(),
)
@agent_option(
    "Your opponent, e.g. heuristic or mcts:iterations=1000.",
    default="heuristic",
    show_default=True,
)
@click.option(
    "--as",
    "side_name",
    type=click.Choice(["x", "o"], case_sensitive=False),
    default="x",
    show_default=True,
    help="Your side; X moves first.",
)
@game_options
@db_option
@seed_option("Seed of the agent's random choices (default: a fresh one each game).", None)
@friendly_errors
def play(agent_spec: str, side_name: str, rules: Rules, db: str, seed: int | None) -> None:
    """Play an agent on the terminal. At the end your own moves are graded against the book:
    best, sound, or a blunder (win->draw, win->loss, draw->loss).
    """
    parsed = parse_spec(agent_spec)
    side = Side.parse(side_name)
    with ExitStack() as stack:
        book, truth = _open_truth(stack, db, rules, parsed.needs_book)
        seed = random.SystemRandom().randrange(2**32) if seed is None else seed
        agent = make_agent(parsed, random.Random(seed), book)
        click.echo(
            f"you are {side.upper()} against {agent_spec} on {rules.name} "
            f"(agent seed {seed}); {HELP_LINE}"
        )
        moves = _game(rules, agent, side, truth)
        position = Position.from_moves(rules, moves)
        click.echo(_board(position, moves))
        if position.is_terminal:
            winner = position.winner
            click.echo(
                "draw."
                if winner is None
                else "you win."
                if winner == side
                else f"{agent_spec} wins."
            )
        else:
            click.echo("game left unfinished.")
        _report(rules, truth, moves, side)


def _game(rules: Rules, agent, side: Side, truth: Truth | None) -> list[int]:  # noqa: ANN001
    """The interactive loop; returns the moves played (undone ones removed)."""
    moves: list[int] = []
    while True:
        position = Position.from_moves(rules, moves)
        if position.is_terminal:
            return moves
        if position.to_move != side:
            cell = checked_move(agent.spec, position, agent.select_move(position))
            moves.append(cell)
            click.echo(f"{agent.spec} plays {rules.cell_name(cell)}")
            continue
        click.echo(_board(position, moves))
        try:
            text = click.prompt(f"your move ({side.upper()})", prompt_suffix="> ").strip().lower()
        except click.Abort as abort:
            if isinstance(abort.__context__, KeyboardInterrupt):
                raise KeyboardInterrupt from None  # Ctrl-C: stopped, exit 130 (not end of input)
            click.echo("")  # end of input: the game ends here, graded so far
            return moves
        if text in ("quit", "q", "exit"):
            return moves
        if text in ("undo", "u"):
            mine = [i for i in range(len(moves)) if (i % 2 == 0) == (side == Side.X)]
            if not mine:
                click.echo("nothing to undo")
            else:
                del moves[mine[-1] :]
            continue
        if text in ("hint", "h", "?"):
            click.echo(_hint(truth, position))
            continue
        if text in ("help",):
            click.echo(HELP_LINE)
            continue
        try:
            cell = rules.parse_cell(text)
            position.play(cell)
        except IllegalMoveError as error:
            click.echo(f"{error}; {HELP_LINE}")
            continue
        moves.append(cell)


def _board(position: Position, moves: list[int]) -> str:
    """The board in text, from the picture module's cell model."""
    from ttt_solve.presentation import picture

    drawn = picture.board(position, lastmove=moves[-1] if moves else None)
    return picture.text(drawn)


def _hint(truth: Truth | None, position: Position) -> str:
    if truth is None:
        return "no hints: the book does not hold this game"
    values = truth.move_values(position)
    if values is None:
        return "no hints: the book does not hold this position"
    rules = position.rules
    ranked = sorted(values.items(), key=lambda item: (item[1].sort_key, item[0]))
    best = ranked[0][1].score
    tops = [f"{rules.cell_name(c)}" for c, v in ranked if v.score == best]
    return f"best: {' '.join(tops)} ({ranked[0][1]}); all: " + ", ".join(
        f"{rules.cell_name(c)} {v}" for c, v in ranked
    )


def _report(rules: Rules, truth: Truth | None, moves: list[int], side: Side) -> None:
    """Grade the person's moves and print a table."""
    if truth is None:
        return
    records, ungraded = grade_game(truth, rules, moves, side)
    if not records:
        click.echo("no moves of yours to grade.")
        return
    rows = []
    for r in records:
        best = truth.best_moves(r.position)
        rows.append(
            [
                r.ply + 1,
                rules.cell_name(r.cell),
                r.grade.value + (f" {r.kind}" if r.kind else ""),
                f"{r.value} -> {r.move_value}",
                " ".join(rules.cell_name(c) for c in best),
            ]
        )
    click.echo("your moves, graded against the book:")
    click.echo(
        tabulate(
            rows,
            headers=["move", "you", "grade", "value -> after your move", "best"],
            tablefmt="simple_outline",
        )
    )
    summary = summarize(records, ungraded)
    click.echo(
        f"accuracy {_whole(summary.accuracy)} (value kept), perfection "
        f"{_whole(summary.perfection)} (best moves), blunders {summary.blunders}"
        + (f", {ungraded} not in the book" if ungraded else "")
    )


def _whole(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.0f}%"
