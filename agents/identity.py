"""What an agent is, as a seed: the same agent gets the same games however it is written.

A ladder's and a tournament's games are seeded from the names of the two agents that play
them. Seeding from the spec as typed would give one engine different games, and so a different
rating, as its path is spelled ``./e``, ``e`` or ``/home/me/e``. :func:`identity` names the
agent by what it runs instead:

* a ``cmd:`` engine: each word of its command that is a file (the program, found on ``PATH``
  as the engine's start would find it, and a script it is handed) by the SHA-256 of its
  contents; the other words as written; then its options;
* a ``py:`` plug-in from a file: the file by its contents, then the factory and parameters;
* a ``py:`` plug-in from a module, and an agent made in a Python session (a function, an
  object's method): its module and qualified name (and the factory's parameters), so that
  ``ttt.rate(f)`` and ``ttt rate --agent py:module:f`` play the same games;
* the project's agents: the spec as written.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from typing import Any

from ttt_solve.agents.spec import parse_spec


def identity(agent: Any) -> str:
    """The name that seeds an agent's games: a spec string's or a maker's (see the module)."""
    spec = getattr(agent, "spec", agent)
    if not isinstance(spec, str) or not _is_spec(agent):
        return _made_here(agent)
    parsed = parse_spec(spec)
    if parsed.name == "cmd":
        argv = parsed.params["argv"]
        words = [_file_or_word(argv[0], program=True)]
        words += [_file_or_word(word) for word in argv[1:]]
        options = sorted((k, v) for k, v in parsed.params.items() if k != "argv")
        return f"cmd:{' '.join(words)};{options}"
    if parsed.name == "py":
        module, factory = parsed.params["module"], parsed.params["factory"]
        kwargs = sorted(parsed.params["kwargs"].items())
        if module.endswith(".py"):
            return f"py:{_file_or_word(module)}:{factory},{kwargs}"
        # As a session names the same function: ttt.rate(f) plays the games of py:module:f.
        return f"python:{module}.{factory}" + (f",{kwargs}" if kwargs else "")
    return parsed.text.strip()


def _is_spec(agent: Any) -> bool:
    """Whether the agent is named by a spec (a string or an ``AgentMaker``), not made here."""
    from ttt_solve.agents.parallel import AgentMaker

    return isinstance(agent, (str, AgentMaker))


def _made_here(agent: Any) -> str:
    """A session's agent: the qualified name of what it calls (its function or its class)."""
    built = agent.build() if hasattr(agent, "build") else agent
    move = getattr(built, "move", None) or getattr(built, "select_move", built)
    target = getattr(move, "__func__", move)
    module = getattr(target, "__module__", None) or type(built).__module__
    name = getattr(target, "__qualname__", None) or type(built).__qualname__
    return f"python:{module}.{name}"


def _file_or_word(word: str, *, program: bool = False) -> str:
    """A word of a command: a file by the hash of its contents, else the word itself."""
    path = shutil.which(word) if program and os.sep not in word else word
    if path and os.path.isfile(path):
        with open(os.path.realpath(path), "rb") as file:
            return "sha256:" + hashlib.sha256(file.read()).hexdigest()
    return word
