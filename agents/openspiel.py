"""``openspiel:`` agents: OpenSpiel's bots, audited like any other agent.

An optional extra (``pip install 'ttt-solve[openspiel]'``); ``open_spiel`` is imported only
when such an agent is built. Three bots:

* ``openspiel:mcts[:simulations=1000,uct_c=2,rollouts=1,solve=true]``: the Python
  ``open_spiel.python.algorithms.mcts.MCTSBot`` with a ``RandomRolloutEvaluator`` (the defaults
  are OpenSpiel's own: its example's ``uct_c=2`` and one rollout, the bot's ``solve=True``).
* ``openspiel:alphabeta[:depth=D]``: ``open_spiel.python.algorithms.minimax.alpha_beta_search``.
* ``openspiel:minimax[:depth=D]``: ``expectiminimax`` from the same module (no pruning).

``depth=0`` (the default) searches to the end of the game, which is exact; with a smaller depth
a position at the horizon counts as a draw (OpenSpiel itself has no evaluation for the game).

Boards: OpenSpiel's ``mnk`` game takes ``m`` columns and ``n`` rows (the reverse of this
project's R x C), numbers its actions row by row, ``row * m + column``, and calls X player 0.
:func:`to_state` and :func:`from_state` convert, and the tests check that every position
survives the round trip. Every random choice comes from a NumPy ``RandomState`` seeded, move by
move, from the agent's ``random.Random``, so audits are reproducible.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from ttt_solve.agents.base import Agent
from ttt_solve.agents.spec import BOOK, AgentSpecError, Param, Spec, parse_params
from ttt_solve.errors import install_hint
from ttt_solve.solver.position import Position, iter_cells
from ttt_solve.solver.rules import Rules

if TYPE_CHECKING:  # pragma: no cover
    from ttt_solve.book.reader import Book

DEPTH = Param("int", 0, "plies searched; 0 searches to the end of the game (exact)")
BOTS: dict[str, tuple[dict[str, Param], str]] = {
    "mcts": (
        {
            "simulations": Param("int", 1000, "MCTS simulations per move (max_simulations)"),
            "uct_c": Param("float", 2.0, "UCT exploration constant"),
            "rollouts": Param("int", 1, "random rollouts per evaluated leaf (n_rollouts)"),
            "solve": Param("bool", True, "back up proven results (MCTS-Solver)"),
        },
        "OpenSpiel's Python MCTSBot, random rollouts",
    ),
    "alphabeta": ({"depth": DEPTH}, "OpenSpiel's alpha_beta_search"),
    "minimax": ({"depth": DEPTH}, "OpenSpiel's expectiminimax, no pruning"),
}
"""Bot name -> (parameters, one-line description)."""
INSTALL = install_hint("openspiel")


def parse(text: str, rest: str) -> Spec:
    """The spec ``openspiel:<bot>[:key=value,...]``."""
    bot, _, items = rest.partition(":")
    bot = bot.strip().lower()
    if bot not in BOTS:
        raise AgentSpecError(
            f"unknown OpenSpiel bot {bot!r} in {text!r}; bots: "
            f"{', '.join(BOTS)} (e.g. openspiel:mcts:simulations=1000)"
        )
    params = parse_params(text, f"openspiel:{bot}", items, {**BOTS[bot][0], "book": BOOK})
    for key in ("simulations", "rollouts"):
        if key in params and params[key] < 1:
            raise AgentSpecError(f"openspiel:{bot} {key} must be at least 1 in {text!r}")
    if params.get("depth", 0) < 0 or params.get("uct_c", 0) < 0:
        raise AgentSpecError(f"openspiel:{bot} parameters must not be negative in {text!r}")
    return Spec("openspiel", {"bot": bot, **params}, text)


def build(spec: Spec, rng: random.Random, book: Book | None) -> Agent:
    params = dict(spec.params)
    params.pop("book")
    return OpenSpielAgent(rng, book=book, spec=spec.text, **params)


def _modules() -> tuple[Any, Any, Any, Any]:
    """``(pyspiel, numpy, mcts, minimax)``, or an error that says how to install them."""
    try:
        import numpy
        import pyspiel
        from open_spiel.python.algorithms import mcts, minimax
    except ImportError as error:
        raise AgentSpecError(
            f"OpenSpiel agents need OpenSpiel ({error}); install the extra: {INSTALL}"
        ) from None
    return pyspiel, numpy, mcts, minimax


# -- boards ------------------------------------------------------------------------------------


def load_game(rules: Rules) -> Any:
    """OpenSpiel's game for these rules: ``mnk`` with m = columns, n = rows."""
    pyspiel = _modules()[0]
    return pyspiel.load_game("mnk", {"m": rules.cols, "n": rules.rows, "k": rules.k})


def placing_order(position: Position) -> list[int]:
    """The stones of a legal position as a game that reaches it: X and O alternate, and a
    winner's line is completed by its last stone only (so no earlier position is over)."""
    rules = position.rules
    x, o = list(iter_cells(position.x)), list(iter_cells(position.o))
    for stones, cells in ((position.x, x), (position.o, o)):
        if rules.has_line(stones):
            last = next(c for c in cells if not rules.has_line(stones & ~(1 << c)))
            cells.remove(last)
            cells.append(last)
    order = []
    for index in range(len(x)):
        order.append(x[index])
        if index < len(o):
            order.append(o[index])
    return order


def to_state(game: Any, position: Position) -> Any:
    """The OpenSpiel state of ``position`` in ``game`` (from :func:`load_game`)."""
    state = game.new_initial_state()
    for cell in placing_order(position):
        state.apply_action(cell)  # action = row * m + column = this project's cell index
    return state


def from_state(state: Any, rules: Rules) -> Position:
    """The position an OpenSpiel ``mnk`` state shows (its text: rows of x, o and .)."""
    return Position.parse("/".join(str(state).split("\n")), rules)


# -- the agent ---------------------------------------------------------------------------------


class OpenSpielAgent(Agent):
    """One of OpenSpiel's bots behind the agent interface."""

    name = "openspiel"

    def __init__(
        self,
        rng: random.Random,
        *,
        book: Book | None = None,
        spec: str | None = None,
        bot: str,
        **params: Any,
    ) -> None:
        super().__init__(rng, book=book, spec=spec)
        if bot not in BOTS:
            raise ValueError(f"unknown OpenSpiel bot {bot!r}; bots: {', '.join(BOTS)}")
        self.bot = bot
        self.params = {key: params.get(key, p.default) for key, p in BOTS[bot][0].items()}
        self._games: dict[Rules, Any] = {}
        _modules()  # fail at construction, not at the first move, if OpenSpiel is missing

    def game(self, rules: Rules) -> Any:
        if rules not in self._games:
            self._games[rules] = load_game(rules)
        return self._games[rules]

    def search(self, position: Position) -> int:
        _, numpy, mcts, minimax = _modules()
        game = self.game(position.rules)
        state = to_state(game, position)
        # Seeded per move from the injected generator, which the audit reseeds per task.
        random_state = numpy.random.RandomState(self.rng.getrandbits(32))
        if self.bot == "mcts":
            evaluator = mcts.RandomRolloutEvaluator(
                n_rollouts=self.params["rollouts"], random_state=random_state
            )
            bot = mcts.MCTSBot(
                game,
                self.params["uct_c"],
                self.params["simulations"],
                evaluator,
                solve=self.params["solve"],
                random_state=random_state,
            )
            action = bot.step(state)
        else:
            depth = self.params["depth"] or position.empty_count
            player = state.current_player()
            if self.bot == "alphabeta":
                _, action = minimax.alpha_beta_search(
                    game,
                    state=state,
                    value_function=lambda s: 0.0,
                    maximum_depth=depth,
                    maximizing_player_id=player,
                )
            else:
                _, action = minimax.expectiminimax(state, depth, lambda s: 0.0, player)
        return int(action)
