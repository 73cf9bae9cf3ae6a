"""What an agent is, as a seed: the same agent gets the same games however it is written.

A ladder's and a tournament's games are seeded from the names of the two agents that play
them. Seeding from the spec as typed would give one engine different games, and so a different
rating, as its path is spelled ``./e``, ``e`` or ``/home/me/e``. :func:`identity` names the
agent by what it runs instead:

* a ``cmd:`` engine: each word of its command that is a file (the program, found on ``PATH``
  as the engine's start would find it, and a script it is handed) by the SHA-256 of its
  contents; the other words as written; then its options;
* a ``py:`` plug-in, and an agent made in a Python session (a function, an object's method):
  the file of its module by the SHA-256 of its contents, then the name of what it calls (and
  the factory's parameters), so that ``py:lab:f``, ``py:lab.py:f`` and ``ttt.rate(f)`` (``f``
  from ``lab.py``) are one agent and play the same games, and an edited file is another
  agent. A module with no file (a notebook's ``__main__``) is named instead;
* the project's agents: the spec as written.

The ladder caches a rated agent's games under this name (:mod:`agents.ladder`), so a changed
program or module is played again. (Only the file that defines the agent is read: a module it
imports may change unseen.)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from importlib.machinery import PathFinder
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
        params = parsed.params
        target = ".".join([params["factory"], *params["attributes"]])
        kwargs = sorted(params["kwargs"].items())
        # As a session names the same function: ttt.rate(f) plays the games of py:lab:f.
        return _python(params["module"], module_file(params["module"]), target) + (
            f",{kwargs}" if kwargs else ""
        )
    return parsed.text.strip()


def _python(module: str, path: str | None, name: str) -> str:
    """A Python agent: its module's file by its contents (else the module's name), and the
    name of what it calls there."""
    code = _file_or_word(path) if path is not None else module
    return f"python:{code}:{name}"


def module_file(module: str) -> str | None:
    """The source file of a plug-in's module (a ``.py`` path, or a dotted name found as its
    import would find it, the current directory first), without running any of it; ``None``
    where it has none."""
    if module.endswith(".py"):
        return module
    loaded = sys.modules.get(module)
    if loaded is not None:
        return getattr(loaded, "__file__", None)
    search: list[str] | None = [os.getcwd(), *sys.path]
    found = None
    for part in module.split("."):
        found = PathFinder.find_spec(part, search)
        if found is None:
            return None
        search = list(found.submodule_search_locations or [])
    return found.origin if found is not None and found.has_location else None


def _is_spec(agent: Any) -> bool:
    """Whether the agent is named by a spec (a string or an ``AgentMaker``), not made here."""
    from ttt_solve.agents.parallel import AgentMaker

    return isinstance(agent, (str, AgentMaker))


def _made_here(agent: Any) -> str:
    """A session's agent: its module's file and the qualified name of what it calls (its
    function or its class)."""
    built = agent.build() if hasattr(agent, "build") else agent
    move = getattr(built, "move", None) or getattr(built, "select_move", built)
    target = getattr(move, "__func__", move)
    module = getattr(target, "__module__", None) or type(built).__module__
    name = getattr(target, "__qualname__", None) or type(built).__qualname__
    return _python(module, getattr(sys.modules.get(module), "__file__", None), name)


def _file_or_word(word: str, *, program: bool = False) -> str:
    """A word of a command: a file by the hash of its contents, else the word itself."""
    path = shutil.which(word) if program and os.sep not in word else word
    if path and os.path.isfile(path):
        with open(os.path.realpath(path), "rb") as file:
            return "sha256:" + hashlib.sha256(file.read()).hexdigest()
    return word
