"""The OpenSpiel bridge: the book as an OpenSpiel bot and as a minimax oracle.

* :class:`BookBot`, a ``pyspiel.Bot``: plays OpenSpiel's own ``tic_tac_toe`` and ``mnk``
  games perfectly (a best move of the truth: fastest win, slowest loss), or at the strength an
  opponent spec names (``perfect:eps=0.1``, ``perfect:error=0.2``, ``rating:1200``, any agent
  of the project: :mod:`ttt_solve.rl.opponents`).
* :class:`BookOracle`: what ``open_spiel.python.algorithms.minimax_solver.MinimaxSolver``
  answers (``values_from_state``, ``action_values_from_state`` and their ``_from_string``
  forms: the value for the player to move, +1, 0 or -1, and each action's value for it, with
  ``min_utility - 1`` for an illegal action), read from the book or live search, without
  building a table of the whole game; and :meth:`BookOracle.value` with the remoteness.

States map to positions through :mod:`ttt_solve.agents.openspiel` (``mnk``'s ``m`` is the
number of columns, ``n`` of rows; actions are cells, row by row). Needs the ``openspiel``
extra.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from ttt_solve.agents.openspiel import _modules, from_state
from ttt_solve.agents.spec import AgentSpecError
from ttt_solve.book.oracle import DEFAULT_SEARCH_SECONDS
from ttt_solve.rl.opponents import make_opponent
from ttt_solve.rl.truth import Truth
from ttt_solve.solver.errors import IllegalMoveError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Value

pyspiel: Any = _modules()[0]  # or an error that names the openspiel extra


def rules_of(game: Any) -> Rules:
    """The rules of an OpenSpiel ``tic_tac_toe`` or ``mnk`` game (or its name)."""
    if isinstance(game, str):
        game = pyspiel.load_game(game)
    name = game.get_type().short_name
    if name == "tic_tac_toe":
        return Rules(3, 3, 3)
    if name == "mnk":
        params = game.get_parameters()
        return Rules(params["n"], params["m"], params["k"])
    raise ValueError(f"OpenSpiel's {name!r} is not an m,n,k-game: give tic_tac_toe or mnk")


class BookOracle:
    """The value of OpenSpiel states of ``game`` (a game or its string), from ``book`` (a
    book or its path; ``None``: live search within ``search_seconds``)."""

    def __init__(
        self,
        game: Any,
        book: Any = None,
        *,
        search_seconds: float = DEFAULT_SEARCH_SECONDS,
    ) -> None:
        self.game = pyspiel.load_game(game) if isinstance(game, str) else game
        self.rules = rules_of(self.game)
        self.truth = Truth(self.rules, book, search_seconds=search_seconds)
        self._illegal = self.game.min_utility() - 1

    def solve(self) -> None:
        """Nothing to do: the book is the table (MinimaxSolver builds its table here)."""

    def position(self, state: Any) -> Position:
        return from_state(state, self.rules)

    def value(self, state: Any) -> Value:
        """The value of ``state`` for the player to move, with its remoteness."""
        return self.truth.of(self.position(state)).value

    def values_from_state(self, state: Any) -> float:
        """The value for the player to move: +1 win, 0 draw, -1 loss."""
        return float(self.value(state).outcome.sign)

    def values_from_string(self, key: str) -> float:
        return self.values_from_state(_Text(key))

    def action_values_from_state(self, state: Any) -> np.ndarray:
        """Each action's value for the player to move (``min_utility - 1`` where illegal)."""
        verdict = self.truth.of(self.position(state))
        values = np.full(self.game.num_distinct_actions(), self._illegal, dtype=float)
        for cell, value in verdict.moves.items():
            values[cell] = value.outcome.sign
        return values

    def action_values_from_string(self, key: str) -> np.ndarray:
        return self.action_values_from_state(_Text(key))

    def close(self) -> None:
        self.truth.close()


class _Text:
    """A state string standing for the state (``from_state`` reads only its text)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


class BookBot(pyspiel.Bot):
    """An OpenSpiel bot for ``player_id`` that plays as ``spec`` says (default ``perfect``),
    its random choices seeded by ``seed``; ``book`` and ``search_seconds`` as for
    :class:`BookOracle`."""

    def __init__(
        self,
        game: Any,
        player_id: int,
        book: Any = None,
        *,
        spec: str = "perfect",
        seed: int = 0,
        search_seconds: float = DEFAULT_SEARCH_SECONDS,
    ) -> None:
        pyspiel.Bot.__init__(self)
        if not isinstance(spec, str):
            raise AgentSpecError(f"BookBot plays a spec string, not {type(spec).__name__}")
        self.rules = rules_of(game)
        self.truth = Truth(self.rules, book, search_seconds=search_seconds)
        self._player_id = player_id
        self.opponent = make_opponent(spec, self.truth, random.Random(seed))

    def player_id(self) -> int:
        return self._player_id

    def provides_policy(self) -> bool:
        return False

    def restart_at(self, state: Any) -> None:
        pass

    def step(self, state: Any) -> int:
        """The bot's action in ``state``; :class:`IllegalMoveError` where the game is over."""
        position = from_state(state, self.rules)
        if position.is_terminal:
            raise IllegalMoveError(
                f"BookBot ({self.opponent.name}) was asked to move in {position}, but the game "
                f"is over"
            )
        return self.opponent.move(position, {})
