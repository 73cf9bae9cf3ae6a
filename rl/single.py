"""``ttt_solve/Mnk-v0``: one learner against an opponent, as a Gymnasium environment.

The learner sees what ``mnk_v0`` (:mod:`ttt_solve.rl.aec`) shows the agent to move: the dict of
``observation`` planes ``(C, R, 2)`` (its own stones in plane 0) and ``action_mask``; actions
are numbered column by column as there. After the learner's move the opponent (a spec string
or a policy, :mod:`ttt_solve.rl.opponents`) answers within the same ``step``.

Rewards, for the learner: +1 for a win, -1 for a loss, 0 for a draw and for every move before
the end; a move to a cell that is not empty ends the game at -1 (``info["illegal"]``), and an
opponent's policy that answers one ends it at +1 (``info["opponent_illegal"]``). An action that
is no whole number (``2.7``, ``"3"``, ``True``) is refused, as the wrapped ``mnk_v0`` refuses it.

An opponent that answers no legal move at ``reset`` (as X, against a learner playing O) ends
the episode before the learner's first move: ``reset``'s ``info`` says so
(``opponent_illegal``, the result ``win`` with no moves), and the learner's next ``step``,
whatever its action, returns the +1 with ``terminated``, as a ``step`` that the opponent's
illegal answer ends does. A Gymnasium ``reset`` returns no reward; this is where the reward
comes.

``shaping=w`` (0, off, by default) adds ``w * (s_move - s_position)`` to the reward of each
learner move, where ``s`` is the sign (+1, 0, -1) of the value for the learner before the move
(``s_position``) and of the move itself (``s_move``): 0 for a move that keeps the value, -1 or
-2 for one that loses it. This is reward shaping from the truth: it speeds learning but changes
the return a policy is trained on; report results on the plain reward.
"""

from __future__ import annotations

import random
from typing import Any, NamedTuple

from ttt_solve.rl.extra import require

require()

import gymnasium  # noqa: E402 - after the check of the extra
import numpy as np  # noqa: E402

from ttt_solve.book.oracle import DEFAULT_SEARCH_SECONDS  # noqa: E402
from ttt_solve.rl.aec import (  # noqa: E402
    AGENTS,
    Told,
    action_of,
    best_moves_reader,
    deferring_best_moves,
    raw_env,
    told_of,
)
from ttt_solve.rl.opponents import Policy, make_opponent  # noqa: E402
from ttt_solve.rl.truth import Truth  # noqa: E402
from ttt_solve.solver.errors import IllegalMoveError  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402
from ttt_solve.solver.value import Value, move_value  # noqa: E402

SIDES = ("x", "o", "random")
"""The learner's side: X (moves first), O, or drawn at each reset."""

NO_ACTION = -1
"""``info["opponent_action"]`` where the opponent played no move: a whole number like every
action, so that a vector environment gathers the games' answers in one integer array."""


Step = tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]
"""What ``step`` returns: observation, reward, terminated, truncated, info."""


class Played(NamedTuple):
    """A learner's move played: the value of the position before it, for the learner
    (``None`` without the truth and shaping), and the position it reached, whose value
    grades the move (:meth:`MnkVsOpponent.finish`)."""

    before: Value | None
    reached: Position


def _action(action: Any) -> int:
    """An action as a whole number: a Python or NumPy integer (a 0-d array of one too);
    anything else, a ``bool`` among them, is refused as ``Discrete`` refuses it."""
    if isinstance(action, np.ndarray) and action.shape == ():
        action = action[()]
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    raise IllegalMoveError(
        f"action {action!r} ({type(action).__name__}) is no action: give a whole number, as "
        f"Discrete spaces hold"
    )


class MnkVsOpponent(gymnasium.Env):
    """The learner against ``opponent`` on an R x C board with lines of ``k``.

    ``learner``: one of :data:`SIDES`. ``book``: a book (or its path) that holds the game,
    else live search within ``search_seconds``. ``truth``: the truth for the learner in
    ``info`` (see :meth:`_truth_info`). ``shaping``: the weight of the shaping reward
    (module docstring). ``render_mode``: ``"ansi"`` or ``"rgb_array"``. ``shared_truth``: a
    :class:`Truth` of the same game to read instead of one of its own (the games of a vector
    environment share one; ``book`` and ``search_seconds`` are then its).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 1}

    def __init__(
        self,
        rows: int = 3,
        cols: int = 3,
        k: int = 3,
        *,
        opponent: str | Policy = "perfect",
        learner: str = "x",
        book: Any = None,
        truth: bool = True,
        shaping: float = 0.0,
        search_seconds: float = DEFAULT_SEARCH_SECONDS,
        render_mode: str | None = None,
        shared_truth: Truth | None = None,
    ) -> None:
        if learner not in SIDES:
            raise ValueError(f"learner {learner!r} is not one of {', '.join(SIDES)}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not one of ansi, rgb_array")
        self.rules = Rules(rows, cols, k)
        self._owns_truth = shared_truth is None
        if shared_truth is None:
            shared_truth = Truth(self.rules, book, search_seconds=search_seconds)
        self.oracle_truth = shared_truth
        self.game = raw_env(rows, cols, k, truth=False, render_mode=render_mode)
        self.truth = truth
        self.learner = learner
        self.shaping = float(shaping)
        self.render_mode = render_mode
        self.opponent = make_opponent(opponent, self.oracle_truth, random.Random(0))
        self.observation_space = self.game.observation_space(AGENTS[0])
        self.action_space = self.game.action_space(AGENTS[0])
        self._me = AGENTS[0]
        self._told_by_value: dict[Value, Told] = {}
        self._forfeited = False
        """Whether the opponent's illegal first answer ended the game at ``reset``, the
        learner's +1 still to be handed by its next ``step``."""

    @property
    def opponent_agent(self) -> str:
        return AGENTS[1] if self._me == AGENTS[0] else AGENTS[0]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        self.opponent.rng.seed(int(self.np_random.integers(2**63)))
        side = self.learner
        if side == "random":
            side = "x" if self.np_random.integers(2) == 0 else "o"
        self._me = AGENTS[0] if side == "x" else AGENTS[1]
        self.game.reset()
        self._forfeited = False
        info: dict[str, Any] = {"opponent_action": NO_ACTION}
        if self._me == AGENTS[1]:
            info = self._opponent_moves()
            self._forfeited = self._ended_by_the_opponent(info)
        return self.game.observe(self._me), self._truth_info(None, info)

    def _truth_info(self, kept: tuple[bool, bool] | None, info: dict[str, Any]) -> dict[str, Any]:
        """``info`` after the truth for the learner: its position's value, remoteness and best
        moves (at the end, the result: remoteness 0, no moves; from a table, the best moves
        read when asked for, as ``mnk_v0`` reads them), and whether its last move kept the
        value and was best (``kept``; ``None`` before its first move)."""
        if not self.truth:
            return info
        game = self.game
        if game.terminations[self._me]:
            reward = game.rewards[self._me]
            value = "win" if reward > 0 else "loss" if reward else "draw"
            entries = {"value": value, "remoteness": 0, "best_moves": (), "source": "end"}
        else:
            entries = told_of(self.oracle_truth, game.position, self._told_by_value).entries
        told = {
            **entries,
            "last_move_kept": None if kept is None else kept[0],
            "last_move_best": None if kept is None else kept[1],
            **info,
        }
        position = game.position
        return deferring_best_moves(
            told, best_moves_reader(self.oracle_truth, position.x, position.o)
        )

    def _opponent_moves(self) -> dict[str, Any]:
        """The opponent's answer, played: ``opponent_action``, or ``opponent_illegal`` (and
        ``opponent_action`` :data:`NO_ACTION`) where it answered no legal move."""
        game = self.game
        position = game.position
        cell = self.opponent.move(position, game.observe(self.opponent_agent))
        if not (0 <= cell < self.rules.cells) or (position.occupied >> cell) & 1:
            return {"opponent_action": NO_ACTION, "opponent_illegal": True}
        action = action_of(self.rules, cell)
        game.step(action)
        return {"opponent_action": action}

    def _ended_by_the_opponent(self, info: dict[str, Any]) -> bool:
        """End the game as the learner's win where the opponent's answer was illegal."""
        if not info.get("opponent_illegal"):
            return False
        game = self.game
        game.terminations = dict.fromkeys(game.agents, True)
        game.rewards[self._me] = 1
        return True

    def step(self, action: Any) -> Step:
        played = self.play(action)
        if not isinstance(played, Played):
            return played  # refused, or ended at reset by the opponent
        return self.finish(played, self.answer())

    def play(self, action: Any) -> Played | Step:
        """The learner's move: what :meth:`finish` needs, or the whole step where the move is
        refused. :meth:`step` is ``play``, :meth:`answer`, ``finish``; a vector environment
        runs each phase over its games and reads the truth of the batch in between."""
        game, me = self.game, self._me
        action = _action(action)
        if self._forfeited:  # the opponent's illegal first answer ended it at reset
            self._forfeited = False
            forfeit = {"opponent_action": NO_ACTION, "opponent_illegal": True}
            return game.observe(me), 1.0, True, False, self._truth_info(None, forfeit)
        if game.terminations[me]:
            raise RuntimeError("the game is over: call reset() before step()")
        mask = game.observe(me)["action_mask"]
        if not 0 <= action < self.rules.cells or not mask[action]:
            game.terminations = dict.fromkeys(game.agents, True)
            game.rewards[me] = -1
            illegal = {"illegal": True, "opponent_action": NO_ACTION}
            return (
                game.observe(me),
                -1.0,
                True,
                False,
                self._truth_info((False, False), illegal),
            )
        wanted = self.shaping or self.truth
        before = self.oracle_truth.value_of(game.position)[0] if wanted else None
        game.step(action)
        return Played(before, game.position)

    @property
    def over(self) -> bool:
        """Whether the game is over."""
        return bool(self.game.terminations[self._me])

    def answer(self) -> dict[str, Any]:
        """The opponent's move, where the game goes on: its ``info`` entries
        (``opponent_action`` :data:`NO_ACTION` where it made none)."""
        if self.over:
            return {"opponent_action": NO_ACTION}
        info = self._opponent_moves()
        self._ended_by_the_opponent(info)
        return info

    def finish(self, played: Played, info: dict[str, Any]) -> Step:
        """The step's result once both sides have moved."""
        game, me = self.game, self._me
        reward, kept, before = 0.0, None, played.before
        if before is not None:  # the move is worth the position it reached, negated
            move = move_value(self.oracle_truth.value_of(played.reached)[0])
            kept = (move.outcome is before.outcome, move.score == before.score)
            reward += self.shaping * (move.outcome.sign - before.outcome.sign)
        terminated = game.terminations[me]
        if terminated:
            reward += float(game.rewards[me])
        info = self._truth_info(kept, info)
        return game.observe(me), reward, terminated, False, info

    @property
    def position(self) -> Position:
        """The game's position."""
        return self.game.position

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as booleans (all false once the game is over): the
        method sb3-contrib's ``MaskablePPO`` asks for, the observation's ``action_mask``."""
        return self.game.observe(self._me)["action_mask"].astype(bool)

    def render(self) -> str | np.ndarray | None:
        return self.game.render()

    def close(self) -> None:
        if self._owns_truth:
            self.oracle_truth.close()
