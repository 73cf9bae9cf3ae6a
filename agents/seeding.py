"""Seeding an agent's generator for each task, paid for only by the tasks that draw from it.

The grading pipeline seeds the agent's generator before every position it poses and every game
it plays (:mod:`ttt_solve.agents.parallel`), with a seed hashed from the run's seed and the
task, so that a result does not depend on the order or the process its task ran in. Hashing
the seed and seeding Python's Mersenne Twister with it cost several microseconds, a good share
of a fast agent's move, yet most positions never touch the generator: ``heuristic`` draws only
to break a tie (``bench/bench_benchmark.py`` counts the positions in which it does).

:class:`SeededOnUse` is a ``random.Random`` whose seeding can wait: :func:`reseed` notes the
seed (or the function that works it out), and the first time anything of the generator is
looked up (a draw, ``getstate``, any method or attribute) it is seeded with it, exactly as
``seed`` would have seeded it at once. Every draw after ``reseed(rng, s)`` is then the one
after ``rng.seed(s)``, and a task that draws nothing costs neither the seed nor the seeding.

The one thing that could tell the two apart is a method looked up before :func:`reseed` and
called after it, with nothing of the generator looked up in between (``draw = rng.random`` kept
across tasks): it would draw from the state before. An agent that :class:`AgentMaker
<ttt_solve.agents.parallel.AgentMaker>` builds never does: the project's own agents look their
generator's methods up when they use them, and an agent written elsewhere (a ``py:`` plugin,
handed the generator itself) is asked through
:class:`~ttt_solve.agents.adapters.CallableAgent`, which reads the generator's state before
each move to seed the global ones. A generator of another kind (a notebook's agent, made with
its own ``random.Random``) is seeded at once.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

_set = object.__setattr__
_get = object.__getattribute__


class SeededOnUse(random.Random):
    """A ``random.Random`` that :func:`reseed` can seed lazily (see the module)."""


class _SeedDue(SeededOnUse):
    """A :class:`SeededOnUse` with a seed waiting: the first look-up seeds it and turns it
    back into a plain :class:`SeededOnUse`."""

    def __getattribute__(self, name: str) -> Any:
        _seed_now(self)
        return _get(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        _seed_now(self)
        _set(self, name, value)

    def __delattr__(self, name: str) -> None:
        _seed_now(self)
        object.__delattr__(self, name)


def _seed_now(rng: _SeedDue) -> None:
    due = _get(rng, "_due")
    _set(rng, "__class__", SeededOnUse)
    random.Random.seed(rng, _worked_out(due))


def _worked_out(seed: int | Callable[[], int]) -> int:
    return seed if isinstance(seed, int) else seed()


def reseed(rng: random.Random, seed: int | Callable[[], int]) -> None:
    """``rng.seed(seed)`` (``seed()`` if it is a function), put off until ``rng`` is next used
    where ``rng`` is a :class:`SeededOnUse`: its draws are the same either way, and neither the
    seeding nor ``seed()`` costs anything if it is not used."""
    kind = type(rng)
    if kind is SeededOnUse or kind is _SeedDue:
        _set(rng, "_due", seed)
        _set(rng, "__class__", _SeedDue)
    else:
        rng.seed(_worked_out(seed))
