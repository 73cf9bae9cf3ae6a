"""``mnk_v0``: PettingZoo's tic-tac-toe, on any board, with the truth in ``infos``.

It follows ``pettingzoo.classic.tictactoe_v3`` exactly, so that code written for that
environment runs unchanged, and on 3x3 the two give the same observations, masks, rewards and
terminations move for move (the tests play them side by side):

* agents ``player_1`` (X, moves first) and ``player_2`` (O);
* an observation is a dict: ``observation``, an int8 array of shape ``(C, R, 2)`` indexed
  ``[column, row, plane]``, plane 0 the observed agent's stones and plane 1 the other's; and
  ``action_mask``, int8 of length ``R*C``, the empty cells for the agent to move and all zeros
  for the other (as in ``tictactoe_v3``, the empty cells stay marked once the game is over);
* action ``a`` is the cell at column ``a // R``, row ``a % R`` (column by column);
* rewards +1 to the winner, -1 to the loser, 0 each for a draw; a move to a cell that is not
  empty ends the game with -1 for its mover and 0 for the other (PettingZoo's
  ``TerminateIllegalWrapper``, as in ``tictactoe_v3``).

With ``truth=True`` (the default) both agents' ``infos`` hold, after ``reset`` and every
step, the truth about the position now on the board: ``to_move``, and for the side to move
``value`` (``win``, ``draw``, ``loss``), ``remoteness`` and ``best_moves`` (actions; from a
table, read when first asked for: :class:`~ttt_solve.rl.info.LazyInfo`); whether
the last move kept its mover's outcome (``last_move_kept``) and was best (``last_move_best``),
``None`` after ``reset``; and ``source`` (``book``, ``book+search`` or ``search``). With
``truth=False`` they are empty dicts, as in ``tictactoe_v3``. See docs/rl.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from ttt_solve.rl.extra import require

require()

import gymnasium  # noqa: E402 - after the check of the extra
import numpy as np  # noqa: E402
from gymnasium import spaces  # noqa: E402
from gymnasium.utils import EzPickle  # noqa: E402
from pettingzoo import AECEnv  # noqa: E402
from pettingzoo.utils import AgentSelector, wrappers  # noqa: E402

from ttt_solve.rl.info import LazyInfo  # noqa: E402
from ttt_solve.rl.truth import CACHE_LIMIT, Truth  # noqa: E402
from ttt_solve.solver.errors import IllegalMoveError  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402
from ttt_solve.solver.value import Value, move_value  # noqa: E402

NAME = "mnk_v0"
AGENTS = ("player_1", "player_2")
RENDER_SIZE = 400
"""The width in pixels of an ``rgb_array`` frame."""


def env(**kwargs: Any) -> AECEnv:
    """The environment as PettingZoo hands ``tictactoe_v3`` out: wrapped so that an illegal
    move loses, an action off the board is refused and calls out of order are errors."""
    raw = raw_env(**kwargs)
    wrapped: AECEnv = wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


def action_of(rules: Rules, cell: int) -> int:
    """The action of a cell (cells are numbered row by row, actions column by column)."""
    row, col = divmod(cell, rules.cols)
    return col * rules.rows + row


def cell_of(rules: Rules, action: int) -> int:
    """The cell of an action (the inverse of :func:`action_of`)."""
    col, row = divmod(action, rules.rows)
    return row * rules.cols + col


class Told(NamedTuple):
    """A position's truth as ``infos`` give it: the entries that depend on the position
    alone (``best_moves`` ``None`` where it is read when asked), its value for the side to
    move, and the value of the move that reached it for that move's mover (its negation, a
    ply further), to grade the moves on either side."""

    entries: dict[str, Any]
    value: Value
    move: Value


def describe(
    rules: Rules, value: Value, source: str, best: tuple[int, ...] | None
) -> dict[str, Any]:
    """The ``infos`` entries of a position's truth that depend on the position alone (see the
    module docstring): ``best`` the best moves' cells (``None``: not read yet)."""
    return {
        "value": value.outcome.value,
        "remoteness": value.remoteness,
        "best_moves": None if best is None else best_actions(rules, best),
        "source": source,
    }


def best_actions(rules: Rules, cells: tuple[int, ...]) -> tuple[int, ...]:
    """The actions of the best moves' cells, ascending."""
    return tuple(sorted(action_of(rules, cell) for cell in cells))


def told_of(truth: Truth, position: Position, by_value: dict[Value, Told]) -> Told:
    """What ``infos`` tell of ``position``: from a table, its value (one record), its best
    moves left to be read when asked (:func:`deferring_best_moves`; the same for every
    position of that value, kept in ``by_value``); else its whole verdict."""
    if truth.tablebase is None:
        value, best, source = truth.standing(position)
        return Told(describe(position.rules, value, source, best), value, move_value(value))
    value, source = truth.value_of(position)
    told = by_value.get(value)
    if told is None:
        entries = describe(position.rules, value, source, None)
        told = by_value[value] = Told(entries, value, move_value(value))
    return told


def deferring_best_moves(info: dict[str, Any], read: Callable[[], Any]) -> dict[str, Any]:
    """A copy of ``info``, where its ``best_moves`` is ``None`` (not read yet) with
    ``best_moves`` from ``read()`` (:func:`best_moves_reader`) when first asked for
    (:class:`~ttt_solve.rl.info.LazyInfo`)."""
    if info["best_moves"] is not None:
        return dict(info)
    return LazyInfo.deferring(info, "best_moves", read)


def best_moves_reader(truth: Truth, x: int, o: int) -> Callable[[], tuple[int, ...]]:
    """The actions of the best moves of the position of stones ``x`` and ``o``, read from
    the truth at the first call and kept for the next (both agents' infos share one)."""
    kept: list[tuple[int, ...]] = []

    def read() -> tuple[int, ...]:
        if not kept:
            rules = truth.rules
            kept.append(best_actions(rules, truth.standing(Position(rules, x, o)).best))
        return kept[0]

    return read


class raw_env(AECEnv, EzPickle):  # noqa: N801 - PettingZoo's name for the unwrapped class
    """The unwrapped environment; :func:`env` wraps it as PettingZoo's classic games are.

    ``rows``, ``cols``, ``k``: the board and the line to make. ``truth``: put the truth in
    ``infos`` (``True``, or a :class:`Truth` to share); ``book``: a book (or its path) that
    holds the game, else live search, each position within ``search_seconds``.
    ``render_mode``: ``"ansi"`` (the board as text), ``"rgb_array"`` (the project's SVG board
    as pixels) or ``"human"`` (the text board printed after every move).
    """

    metadata: dict[str, Any] = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": NAME,
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        rows: int = 3,
        cols: int = 3,
        k: int = 3,
        *,
        truth: bool | Truth = True,
        book: Any = None,
        search_seconds: float = 3.0,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        EzPickle.__init__(
            self,
            rows,
            cols,
            k,
            truth=truth,
            book=book,
            search_seconds=search_seconds,
            render_mode=render_mode,
        )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            modes = ", ".join(self.metadata["render_modes"])
            raise ValueError(f"render_mode {render_mode!r} is not one of {modes}")
        self.rules = Rules(rows, cols, k)
        cells = self.rules.cells
        self.agents = list(AGENTS)
        self.possible_agents = self.agents[:]
        self.action_spaces = {agent: spaces.Discrete(cells) for agent in self.agents}
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(low=0, high=1, shape=(cols, rows, 2), dtype=np.int8),
                    "action_mask": spaces.Box(low=0, high=1, shape=(cells,), dtype=np.int8),
                }
            )
            for agent in self.agents
        }
        if isinstance(truth, Truth):
            self.truth: Truth | None = truth
        else:
            self.truth = Truth(self.rules, book, search_seconds=search_seconds) if truth else None
        self.render_mode = render_mode
        self._cells = [cell_of(self.rules, action) for action in range(cells)]
        self._selector = AgentSelector(self.agents)
        self._now: Told | None = None
        self._told: dict[tuple[int, int], Told] = {}
        self._told_by_value: dict[Value, Told] = {}
        self._infos: dict[tuple[str, Value, Value | None], dict[str, Any]] = {}
        self.agent_selection: str = self.agents[0]
        self.terminations: dict[str, bool] = {}
        self.truncations: dict[str, bool] = {}
        self.reset()

    # -- the game ----------------------------------------------------------------------------

    @property
    def position(self) -> Position:
        """The position on the board."""
        return Position(self.rules, self._x, self._o)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        mark = self.possible_agents.index(agent) + 1
        squares = self._squares
        observation = np.empty((self.rules.cols, self.rules.rows, 2), dtype=np.int8)
        observation[:, :, 0] = squares == mark
        observation[:, :, 1] = squares == 3 - mark
        mask = np.zeros(self.rules.cells, dtype=np.int8)
        if agent == self.agent_selection:
            mask[squares.reshape(-1) == 0] = 1
        return {"observation": observation, "action_mask": mask}

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        action = int(action)
        if not 0 <= action < self.rules.cells:
            raise IllegalMoveError(f"action {action} is off the board (0..{self.rules.cells - 1})")
        cell = self._cells[action]
        bit = 1 << cell
        if (self._x | self._o) & bit:
            raise IllegalMoveError(
                f"action {action} ({self.rules.cell_name(cell)}) is taken in {self.position}"
            )
        mover = self.agents.index(agent)
        before = self._now
        if mover == 0:
            self._x |= bit
            stones = self._x
        else:
            self._o |= bit
            stones = self._o
        self._squares.reshape(-1)[action] = mover + 1
        if self.rules.wins_through(stones, cell):
            self.rewards[self.agents[mover]] += 1
            self.rewards[self.agents[1 - mover]] -= 1
            self.terminations = dict.fromkeys(self.agents, True)
            self._accumulate_rewards()
        elif (self._x | self._o) == self.rules.full:
            self.terminations = dict.fromkeys(self.agents, True)
            self._accumulate_rewards()
        self.agent_selection = self._selector.next()
        if self.truth is not None:
            assert before is not None
            self._tell_truth(before.value)
        if self.render_mode == "human":
            self.render()

    def _tell_truth(self, before: Value | None) -> None:
        """Both agents' ``infos``: the truth of the position on the board now, and whether
        the move that reached it kept the value of the position before it (``before``, for
        the move's mover; ``None`` after ``reset``) and was best: a move is worth the value
        of the position it leads to, negated. From a table, ``best_moves`` (a record a move)
        is read when an ``info`` is asked for it."""
        truth = self.truth
        assert truth is not None
        key = x, o = self._x, self._o
        if truth.tablebase is not None:
            # a look-up costs less than keeping its answer, which the collector would walk
            told = told_of(truth, Position(self.rules, x, o), self._told_by_value)
        elif key in self._told:
            told = self._told[key]
        else:
            told = told_of(truth, Position(self.rules, x, o), self._told_by_value)
            if len(self._told) >= CACHE_LIMIT:
                self._told.clear()
            self._told[key] = told
        self._now = told
        info = self._info(told, before)
        read = best_moves_reader(truth, x, o)
        self.infos = {
            self.agents[0]: deferring_best_moves(info, read),
            self.agents[1]: deferring_best_moves(info, read),
        }

    def _info(self, told: Told, before: Value | None) -> dict[str, Any]:
        """The entries of both agents' infos (copied before they are handed out), made once
        for each side to move, value and value before where they depend on nothing else (no
        best moves read yet)."""
        kept = told.entries["best_moves"] is None
        key = (self.agent_selection, told.value, before)
        info = self._infos.get(key) if kept else None
        if info is None:
            move = told.move
            info = {
                "to_move": self.agent_selection,
                **told.entries,
                "last_move_kept": None if before is None else move.outcome is before.outcome,
                "last_move_best": None if before is None else move == before,
            }
            if kept:
                self._infos[key] = info
        return info

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game; ``seed`` seeds the agents' action spaces (the game itself has no
        chance), so that ``action_space(agent).sample()`` repeats after the same seed."""
        self._x = self._o = 0
        self._squares = np.zeros((self.rules.cols, self.rules.rows), dtype=np.int8)
        self._now = None
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self._selector.reinit(self.agents)
        self.agent_selection = self._selector.reset()
        if seed is not None:
            for index, agent in enumerate(self.agents):
                self.action_spaces[agent].seed(seed + index)
        if self.truth is not None:
            self._tell_truth(None)

    # -- pictures ----------------------------------------------------------------------------

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called, but no render_mode was given")
            return None
        from ttt_solve.presentation import picture

        position = self.position
        if self.render_mode == "rgb_array":
            return rasterise(position)
        text = picture.text(picture.board(position))
        if self.render_mode == "ansi":
            return text
        print(text)  # "human": the board on the terminal, after every move
        return None

    def close(self) -> None:
        if self.truth is not None:
            self.truth.close()


def rasterise(position: Position, width: int = RENDER_SIZE) -> np.ndarray:
    """The project's SVG board of ``position`` as an RGB array ``(height, width, 3)`` uint8,
    drawn by pygame's SVG loader (the one PettingZoo's classic games already use); the
    loader draws no text, so the board is drawn without its coordinates and caption."""
    import io
    import os

    from ttt_solve.presentation import svg

    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    try:
        import pygame
    except ImportError:
        raise ImportError("render_mode='rgb_array' draws with pygame: pip install pygame") from None
    text = svg.board(position, size=width, coordinates=False, caption=False)
    image = pygame.image.load(io.BytesIO(text.encode()), "board.svg")
    return np.ascontiguousarray(np.transpose(pygame.surfarray.array3d(image), (1, 0, 2)))
