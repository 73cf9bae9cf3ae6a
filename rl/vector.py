"""``ttt_solve/Mnk-v0`` as a vector environment: many games stepped together, the truth of the
batch read at once.

``gymnasium.make_vec("ttt_solve/Mnk-v0", num_envs=N, ...)`` makes it (the registered vector
entry point). Each game is a :class:`~ttt_solve.rl.single.MnkVsOpponent` made with the same
arguments, and the batch gives what Gymnasium's ``SyncVectorEnv`` of them gives
(``vectorization_mode="sync"``): the same observations, rewards, terminations and infos for the
same seeds and actions, a finished game reset on the next step (``AutoresetMode.NEXT_STEP``).
What differs is how the truth is read: a step runs each phase of the games' steps over the
whole batch (the learners' moves, the opponents' answers, the results) and before each phase
reads the truth it needs for every game in one batched read of the book (:meth:`Truth.read`),
where the sync version reads it a position at a time.
"""

from __future__ import annotations

from typing import Any

from ttt_solve.rl.extra import require

require()

import numpy as np  # noqa: E402
from gymnasium.vector import AutoresetMode, VectorEnv  # noqa: E402
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array  # noqa: E402

from ttt_solve.book.oracle import DEFAULT_SEARCH_SECONDS  # noqa: E402
from ttt_solve.rl.opponents import Opponent, Trembling  # noqa: E402
from ttt_solve.rl.single import MnkVsOpponent, Played, Step  # noqa: E402
from ttt_solve.rl.truth import Truth  # noqa: E402
from ttt_solve.solver.position import Position  # noqa: E402
from ttt_solve.solver.rules import Rules  # noqa: E402


def _always_reads_truth(opponent: Opponent) -> bool:
    return isinstance(opponent, Trembling) and not opponent.eps


class MnkVectorEnv(VectorEnv):
    """``num_envs`` games of ``ttt_solve/Mnk-v0`` sharing one :class:`Truth`.

    The other arguments are :class:`MnkVsOpponent`'s, the same for every game. ``reset(seed=s)``
    seeds game ``i`` with ``s + i`` (or ``seed[i]`` from a list), as ``SyncVectorEnv`` does.
    """

    metadata: dict[str, Any] = {
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": ["ansi", "rgb_array"],
    }

    def __init__(
        self,
        num_envs: int = 1,
        rows: int = 3,
        cols: int = 3,
        k: int = 3,
        *,
        book: Any = None,
        search_seconds: float = DEFAULT_SEARCH_SECONDS,
        **arguments: Any,
    ) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs {num_envs!r} is not a positive number of games")
        self.truth_source = Truth(Rules(rows, cols, k), book, search_seconds=search_seconds)
        self.envs = [
            MnkVsOpponent(rows, cols, k, shared_truth=self.truth_source, **arguments)
            for _ in range(num_envs)
        ]
        first = self.envs[0]
        self.num_envs = num_envs
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(first.observation_space, num_envs)
        self.action_space = batch_space(first.action_space, num_envs)
        self.render_mode = first.render_mode
        self._autoreset = np.zeros(num_envs, dtype=np.bool_)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        elif len(seed) == self.num_envs:
            seeds = list(seed)
        else:
            raise ValueError(f"{len(seed)} seeds given for {self.num_envs} games")
        observations: list[dict[str, np.ndarray]] = []
        infos: dict[str, Any] = {}
        for i, (env, game_seed) in enumerate(zip(self.envs, seeds, strict=True)):
            observation, info = env.reset(seed=game_seed, options=options)
            observations.append(observation)
            infos = self._add_info(infos, info, i)
        self._autoreset[:] = False
        return self._batch(observations), infos

    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        actions = np.asarray(actions)
        envs = self.envs
        steps: list[Step | None] = [None] * self.num_envs
        moving = [i for i in range(self.num_envs) if not self._autoreset[i]]
        self._read(envs[i].position for i in moving if envs[i].truth or envs[i].shaping)
        played: dict[int, Played] = {}
        for i, env in enumerate(envs):
            if self._autoreset[i]:
                observation, info = env.reset()
                steps[i] = (observation, 0.0, False, False, info)
                continue
            result = env.play(actions[i])
            if isinstance(result, Played):
                played[i] = result
            else:
                steps[i] = result
        # the positions the learners' moves reached (their values grade the moves), and for
        # an opponent that always plays from the truth its moves: one that trembles would
        # have the truth read for moves it then plays at random
        self._read(
            envs[i].position
            for i in played
            if envs[i].truth or envs[i].shaping or _always_reads_truth(envs[i].opponent)
        )
        answers = {i: envs[i].answer() for i in played}
        self._read(envs[i].position for i in played if envs[i].truth and not envs[i].over)
        for i, move in played.items():
            steps[i] = envs[i].finish(move, answers[i])
        return self._gather(steps)

    def _gather(
        self, steps: list[Step | None]
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The games' steps as one batch."""
        assert all(step is not None for step in steps)
        done = [step for step in steps if step is not None]
        infos: dict[str, Any] = {}
        for i, step in enumerate(done):
            infos = self._add_info(infos, step[4], i)
        rewards = np.array([step[1] for step in done], dtype=np.float64)
        terminated = np.array([step[2] for step in done], dtype=np.bool_)
        truncated = np.array([step[3] for step in done], dtype=np.bool_)
        self._autoreset = terminated | truncated
        return self._batch([step[0] for step in done]), rewards, terminated, truncated, infos

    def _batch(self, observations: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        space = self.single_observation_space
        empty = create_empty_array(space, self.num_envs)
        assert isinstance(empty, dict)  # the space is a Dict: a dict of arrays
        batched = concatenate(space, observations, empty)
        assert isinstance(batched, dict)
        return batched

    def _read(self, positions: Any) -> None:
        """The truth of a phase's positions, in one batched read of the book."""
        wanted: list[Position] = list(positions)
        if wanted:
            self.truth_source.read(wanted)

    def action_masks(self) -> np.ndarray:
        """Each game's legal actions as booleans, one row a game (``MnkVsOpponent``'s)."""
        return np.stack([env.action_masks() for env in self.envs])

    def render(self) -> tuple[Any, ...] | None:
        return tuple(env.render() for env in self.envs)

    def close_extras(self, **kwargs: Any) -> None:
        for env in self.envs:
            env.close()
        self.truth_source.close()
