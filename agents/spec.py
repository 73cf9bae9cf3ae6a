"""Spec strings: ``name`` or ``name:key=value,key=value``, e.g. ``mcts:iterations=1000,c=1.4``.

:func:`parse_spec` checks a spec against :data:`AGENTS` (names, parameters, types) and
:func:`make_agent` builds the agent. Every agent also takes ``book=true|false``: consult the
book where it holds the position. Mistakes raise :class:`AgentSpecError` (a ``ValueError``)
whose message quotes the spec and lists what exists.

Three prefixes name agents from outside the project (:data:`PREFIXES`): ``py:module:factory``
(a Python plugin, :mod:`agents.plugin`), ``cmd:COMMAND`` (an external engine speaking the line
protocol of docs/PROTOCOL.md, :mod:`agents.engine`) and ``openspiel:BOT`` (OpenSpiel's bots,
:mod:`agents.openspiel`). Each prefix's module parses the rest of the spec and builds the agent;
it is imported only when such a spec is used.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from ttt_solve.agents.base import Agent
from ttt_solve.agents.heuristic import RULES as HEURISTIC_RULES
from ttt_solve.agents.heuristic import HeuristicAgent
from ttt_solve.agents.mcts import MctsAgent
from ttt_solve.agents.minimax import AlphaBetaAgent, MinimaxAgent
from ttt_solve.agents.montecarlo import MonteCarloAgent
from ttt_solve.agents.perfect import PerfectAgent
from ttt_solve.agents.random_agent import RandomAgent
from ttt_solve.agents.rollout import PLAYOUTS
from ttt_solve.errors import TttError, install_hint

if TYPE_CHECKING:  # pragma: no cover
    from ttt_solve.book.reader import Book


class AgentSpecError(TttError, ValueError):
    """A spec string that names no agent, an unknown parameter, or a bad value."""


class Param(NamedTuple):
    """One parameter of an agent: how to read it, its default, what it means."""

    kind: str  # "int", "float", "bool" or "choice"
    default: Any
    help: str
    choices: tuple[str, ...] = ()

    def describe(self, name: str) -> str:
        kind = "|".join(self.choices) if self.kind == "choice" else self.kind
        default = str(self.default).lower() if self.kind == "bool" else self.default
        return f"{name} ({kind}, default {default})"


BOOK = Param("bool", False, "play the book's best move where the book holds the position")

AGENTS: dict[str, tuple[Callable[..., Agent], dict[str, Param], str]] = {
    "random": (RandomAgent, {}, "a uniformly random legal move"),
    "heuristic": (
        HeuristicAgent,
        {
            "rules": Param("int", len(HEURISTIC_RULES), "apply the first N rules, else random"),
        },
        "win, block, double threat, block double threat, best line-count score",
    ),
    "minimax": (
        MinimaxAgent,
        {
            "depth": Param("int", 3, "plies searched before the evaluation"),
        },
        "negamax to a depth, line-count evaluation at the horizon",
    ),
    "alphabeta": (
        AlphaBetaAgent,
        {
            "depth": Param("int", 4, "plies searched; at least the empty cells = exact"),
        },
        "minimax with alpha-beta pruning",
    ),
    "montecarlo": (
        MonteCarloAgent,
        {
            "playouts": Param("int", 100, "random games after each legal move"),
        },
        "pure Monte Carlo: best mean playout result",
    ),
    "mcts": (
        MctsAgent,
        {
            "iterations": Param("int", 1000, "simulations per move"),
            "c": Param("float", 1.4, "UCT exploration constant"),
            "rollout": Param("choice", "random", "playout policy", tuple(PLAYOUTS)),
            "solver": Param("bool", False, "back up proven wins and losses (MCTS-Solver)"),
        },
        "UCT tree search, final move by visit count",
    ),
    "perfect": (
        PerfectAgent,
        {
            "error": Param("float", 0.0, "chance of a random move that is not best"),
            "temperature": Param("float", 0.0, "softmax over the moves' values; 0: best only"),
        },
        "the book's best move (needs the book); error=P or temperature=T: graded strength",
    ),
}
"""Agent name -> (class, parameters, one-line description)."""

PREFIXES: dict[str, tuple[str, str]] = {
    "py": (
        "ttt_solve.agents.plugin",
        "py:package.module:factory[,key=value...]: a Python agent from "
        "anywhere (factory(rng, **params) returns an agent)",
    ),
    "cmd": (
        "ttt_solve.agents.engine",
        "cmd:COMMAND[,timeout=SECONDS]: an external engine speaking the "
        "line protocol of docs/PROTOCOL.md",
    ),
    "openspiel": (
        "ttt_solve.agents.openspiel",
        "openspiel:mcts|alphabeta|minimax[:key=value...]: "
        f"OpenSpiel's bots ({install_hint('openspiel')})",
    ),
}
"""Prefix -> (module that parses and builds such specs, one-line description).

The module provides ``parse(text, rest) -> Spec`` (``rest`` is what follows ``prefix:``) and
``build(spec, rng, book) -> Agent``.
"""

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


class Spec(NamedTuple):
    """A checked spec: the agent's name and its typed parameters (defaults filled in)."""

    name: str
    params: dict[str, Any]
    text: str

    @property
    def external(self) -> bool:
        """Whether the spec names an agent from outside the project (a :data:`PREFIXES` one)."""
        return self.name in PREFIXES

    @property
    def needs_book(self) -> bool:
        """Whether the agent reads the book (``perfect``, or ``book=true``)."""
        return self.name == "perfect" or bool(self.params.get("book"))


def agent_names() -> str:
    return ", ".join(AGENTS)


def describe_agents() -> str:
    """One line per agent with its parameters: for ``--help`` texts and errors."""
    lines = []
    for name, (_, params, about) in AGENTS.items():
        shown = ", ".join(p.describe(key) for key, p in params.items())
        lines.append(f"{name}: {about}" + (f"; {shown}" if shown else ""))
    lines += [about for _, about in PREFIXES.values()]
    return "\n".join(lines)


def _prefix_module(prefix: str):  # noqa: ANN202 - a module
    import importlib

    return importlib.import_module(PREFIXES[prefix][0])


def _convert(spec: str, agent: str, key: str, raw: str, param: Param) -> Any:
    what = f"{agent} parameter {key}={raw!r} in {spec!r}"
    if param.kind == "int":
        try:
            return int(raw)
        except ValueError:
            raise AgentSpecError(f"{what}: expected a whole number") from None
    if param.kind == "float":
        try:
            number = float(raw)
        except ValueError:
            raise AgentSpecError(f"{what}: expected a number") from None
        if not math.isfinite(number) or number < 0:  # nan/inf would poison every UCT score
            raise AgentSpecError(f"{what}: expected a finite number >= 0")
        return number
    if param.kind == "bool":
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise AgentSpecError(f"{what}: expected true or false")
    if raw.lower() in param.choices:
        return raw.lower()
    raise AgentSpecError(f"{what}: expected one of {', '.join(param.choices)}")


def parse_spec(text: str) -> Spec:
    """Check a spec string; :class:`AgentSpecError` says what is wrong and what exists."""
    spec = str(text).strip()
    name, _, rest = spec.partition(":")
    name = name.strip().lower()
    if name in PREFIXES:
        return _prefix_module(name).parse(spec, rest)
    if name not in AGENTS:
        raise AgentSpecError(
            f"unknown agent {name!r} in {spec!r}; agents: {agent_names()}; "
            f"from outside: {', '.join(p + ':...' for p in PREFIXES)}"
        )
    params = parse_params(spec, name, rest, {**AGENTS[name][1], "book": BOOK})
    return Spec(name, params, spec)


def parse_params(spec: str, name: str, text: str, params_of: dict[str, Param]) -> dict[str, Any]:
    """The typed values of ``key=value,...`` in ``text``, defaults filled in, for the agent
    called ``name`` whose parameters are ``params_of``; ``spec`` is quoted in errors."""
    params = {key: p.default for key, p in params_of.items()}
    if text.strip():
        for item in text.split(","):
            key, equals, raw = item.partition("=")
            key, raw = key.strip().lower(), raw.strip()
            if not equals or not key or not raw:
                raise AgentSpecError(
                    f"{item.strip()!r} in {spec!r} is not key=value "
                    f"(e.g. mcts:iterations=1000,c=1.4)"
                )
            if key not in params_of:
                known = ", ".join(p.describe(k) for k, p in params_of.items())
                raise AgentSpecError(
                    f"unknown parameter {key!r} for {name} in {spec!r}; {name} takes: {known}"
                )
            params[key] = _convert(spec, name, key, raw, params_of[key])
    return params


def make_agent(
    spec: str | Spec, rng: random.Random | None = None, book: Book | None = None
) -> Agent:
    """The agent a spec names, drawing from ``rng`` (default: ``random.Random(0)``).

    ``book`` is handed to agents that read it (``perfect``, ``book=true``) and ignored by the
    others, so one call fits every spec.
    """
    parsed = spec if isinstance(spec, Spec) else parse_spec(spec)
    if parsed.needs_book and book is None:
        raise AgentSpecError(f"{parsed.text!r} reads the book, but no book was given (--db)")
    rng = rng if rng is not None else random.Random(0)
    if parsed.external:
        return _prefix_module(parsed.name).build(parsed, rng, book if parsed.needs_book else None)
    cls = AGENTS[parsed.name][0]
    params = dict(parsed.params)
    params.pop("book")
    try:
        return cls(rng, book=book if parsed.needs_book else None, spec=parsed.text, **params)
    except ValueError as error:
        raise AgentSpecError(f"{parsed.text!r}: {error}") from None
