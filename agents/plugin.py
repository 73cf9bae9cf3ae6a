"""``py:`` agents: a Python agent from anywhere, named by its factory.

``py:package.module:factory[,key=value...]`` imports ``package.module`` (with the current
directory on the import path, as ``python -m`` has it) and calls
``factory(rng, **params)``; ``py:path/to/file.py:factory`` loads a file instead. The factory
gets the ``random.Random`` the agent must draw every random choice from, and returns an object
with the project's agent interface: ``select_move(position) -> cell`` (a
:class:`agents.base.Agent` subclass is the natural choice, but any such object will do).

Parameter values are typed the obvious way: ``true``/``false`` (any case) become booleans,
whole numbers ``int``, other numbers ``float``, anything else stays a string. Two parameters
are the project's own and are not passed to the factory: ``book=true`` (play the book's move
where it holds the position) and ``timeout=SECONDS`` (a time limit per move, as ``cmd:``
engines have: a move that takes longer is stopped and counted as a ``timeout`` failure, so the
agent is then run in this process only, like an engine; code that does not return to Python,
such as a long NumPy or Numba call, is stopped when it returns).
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import operator
import os
import random
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

from ttt_solve.agents.base import Agent
from ttt_solve.agents.engine import EngineFailure
from ttt_solve.agents.spec import BOOK, AgentSpecError, Spec, _convert
from ttt_solve.errors import TttError
from ttt_solve.solver.position import Position

if TYPE_CHECKING:  # pragma: no cover
    from ttt_solve.book.reader import Book

_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_MODULE = re.compile(rf"{_IDENTIFIER}(\.{_IDENTIFIER})*")
_FACTORY = re.compile(_IDENTIFIER)
EXAMPLE = "py:examples.plugin_agent:make"

_FILE_MODULES: dict[str, ModuleType] = {}
"""Plugin files loaded so far, by absolute path: each file runs once per process."""


def _typed(raw: str) -> Any:
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw


def parse(text: str, rest: str) -> Spec:
    """The spec ``py:<rest>``: the target ``module:factory`` and the factory's parameters.

    Only the syntax is checked here; the module is imported when the agent is built.
    """
    target, _, items = rest.partition(",")
    target = target.strip()
    module, colon, factory = target.rpartition(":")
    is_file = module.endswith(".py")
    if not colon or not _FACTORY.fullmatch(factory) or not (is_file or _MODULE.fullmatch(module)):
        raise AgentSpecError(
            f"{text!r} does not name a factory: write py:package.module:factory "
            f"or py:path/to/file.py:factory (e.g. {EXAMPLE})"
        )
    params: dict[str, Any] = {}
    for item in items.split(",") if items.strip() else []:
        key, equals, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not equals or not _FACTORY.fullmatch(key) or not raw:
            raise AgentSpecError(
                f"{item.strip()!r} in {text!r} is not key=value with a Python "
                f"name as the key (e.g. {EXAMPLE},depth=2)"
            )
        key = key.lower() if key.lower() in _OWN_PARAMS else key
        if key in params:
            raise AgentSpecError(f"parameter {key!r} is given twice in {text!r}")
        if key == "book":
            params["book"] = _convert(text, "py", "book", raw, BOOK)
        elif key == "timeout":
            params["timeout"] = _seconds(text, raw)
        else:
            params[key] = _typed(raw)
    params.setdefault("book", False)
    params.setdefault("timeout", None)
    return Spec(
        "py",
        {
            "module": module,
            "factory": factory,
            "kwargs": {k: v for k, v in params.items() if k not in _OWN_PARAMS},
            "book": params["book"],
            "timeout": params["timeout"],
        },
        text,
    )


_OWN_PARAMS = ("book", "timeout")
"""Parameters of every ``py:`` agent, kept from the factory."""


def _seconds(text: str, raw: str) -> float:
    """The ``timeout=`` of a spec: seconds, above 0 and at most a day."""
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and 0 < seconds <= 86_400):
        raise AgentSpecError(
            f"py parameter timeout={raw!r} in {text!r}: expected seconds between 0 and "
            f"86400 (e.g. timeout=2)"
        )
    return seconds


_OLD_PACKAGES = ("agents", "solver", "book", "cli")
"""Top-level names of ttt-solve's parts before they moved under ``ttt_solve``."""


class PluginFailedError(TttError):
    """A plug-in's ``select_move`` raised, or tried to end the process: the message names the
    agent and what it did."""


class _PluginExit(BaseException):
    """Raised in place of a plug-in's ``os._exit(status)``, which would end ``ttt`` on the
    spot, silently and with the plug-in's status; a ``BaseException`` so that the plug-in's
    own ``except Exception`` does not swallow it."""

    def __init__(self, status: object) -> None:
        super().__init__(status)
        self.status = status


_REAL_EXIT = os._exit
_RUNNING = threading.local()
"""``depth``: how many plug-in calls this thread is inside; ``pid``: of the process that made
them (a process the plug-in forks inherits both, and must exit as it asks)."""


def _inside_plugin() -> bool:
    return getattr(_RUNNING, "depth", 0) > 0 and _RUNNING.pid == os.getpid()


def _exit_unless_in_plugin(status: int) -> NoReturn:
    if _inside_plugin():
        raise _PluginExit(status)
    _REAL_EXIT(status)


def plugin_code(what: str, call: Callable[[], Any]) -> Any:
    """``call()``, a plug-in's own code (its module, its factory, its move), with its ways of
    ending the process turned into :class:`PluginFailedError` naming ``what`` it was doing:
    ``sys.exit()`` (``SystemExit``) and ``os._exit()``. (A plug-in runs in this process: one
    that kills it otherwise, by a signal or a crash in C, ends the command with that signal.)"""
    if os._exit is not _exit_unless_in_plugin:  # once, for the whole process; only a thread
        os._exit = _exit_unless_in_plugin  # inside a plug-in call is refused the real exit
    _RUNNING.depth = getattr(_RUNNING, "depth", 0) + 1
    _RUNNING.pid = os.getpid()
    try:
        return call()
    except SystemExit as stop:
        if not _inside_plugin():
            raise  # a process the plug-in forked, ending as it asks
        raise PluginFailedError(
            f"{what} called sys.exit({stop.code!r}), which would end ttt"
        ) from None
    except _PluginExit as stop:
        raise PluginFailedError(
            f"{what} called os._exit({stop.status!r}), which would end ttt"
        ) from None
    finally:
        _RUNNING.depth -= 1


def load_module(name: str, spec_text: str) -> ModuleType:
    """The plugin's module: a dotted name imported as ``python -m`` would, or a ``.py`` file."""
    try:
        if name.endswith(".py"):
            path = os.path.abspath(name)
            if path not in _FILE_MODULES:
                if not os.path.isfile(path):
                    raise FileNotFoundError(f"no file {name!r}")
                loader_spec = importlib.util.spec_from_file_location(
                    f"ttt_plugin_{len(_FILE_MODULES)}", path
                )
                if loader_spec is None or loader_spec.loader is None:
                    raise ImportError(f"{name!r} is not a Python file")
                module = importlib.util.module_from_spec(loader_spec)
                loader = loader_spec.loader
                plugin_code(f"{spec_text!r}: loading {name!r}", lambda: loader.exec_module(module))
                _FILE_MODULES[path] = module
            return _FILE_MODULES[path]
        # A console script's path starts with its bin/ directory, not the current one.
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())
        return plugin_code(
            f"{spec_text!r}: importing {name!r}", lambda: importlib.import_module(name)
        )
    except PluginFailedError:
        raise
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] in _OLD_PACKAGES:
            raise AgentSpecError(
                f"{spec_text!r}: {name!r} imports {error.name!r}, a name ttt-solve no longer "
                f"installs; write 'from ttt_solve.agents import Agent' (every part of ttt-solve "
                f"is now under ttt_solve: ttt_solve.solver, ttt_solve.book, ...)"
            ) from None
        raise AgentSpecError(
            f"{spec_text!r}: cannot load {name!r}: {type(error).__name__}: {error}"
        ) from None
    except Exception as error:  # noqa: BLE001 - the plugin's own code ran; say what it raised
        raise AgentSpecError(
            f"{spec_text!r}: cannot load {name!r}: {type(error).__name__}: {error}"
        ) from None


class PluginAgent(Agent):
    """The project-side wrapper of a plugin's agent: spec, book moves, move checks."""

    name = "py"

    def __init__(
        self,
        rng: random.Random,
        inner: Any,
        *,
        book: Book | None = None,
        spec: str | None = None,
        timeout: float | None = None,
    ) -> None:
        super().__init__(rng, book=book, spec=spec)
        self.inner = inner
        self.timeout = timeout
        self.external = timeout is not None
        """With a time limit the agent runs in this process only and its timeouts are counted
        as an engine's failures (the limit is kept by a timer signal of this process)."""

    def search(self, position: Position) -> int:
        what = f"{self.spec!r}: select_move({position})"
        try:
            if self.timeout is None:
                cell = plugin_code(what, lambda: self.inner.select_move(position))
            else:
                cell = within(
                    self.timeout,
                    lambda: plugin_code(what, lambda: self.inner.select_move(position)),
                )
        except _OutOfTime:
            raise EngineFailure(
                "timeout",
                position.rules,
                position.x,
                position.o,
                f"no move within {self.timeout:g} s",
                self.spec,
            ) from None
        except PluginFailedError:
            raise
        except Exception as error:  # noqa: BLE001 - the plugin's own code ran; say what it raised
            raise PluginFailedError(f"{what} raised {type(error).__name__}: {error}") from None
        if isinstance(cell, bool):
            return cell  # True is no cell (though int(True) is 1): reported as illegal
        try:
            return operator.index(cell)  # a NumPy integer is a fine cell
        except TypeError:
            return cell  # not an int at all: play_game / the audit report it as illegal


class _OutOfTime(BaseException):
    """Raised into a ``py:`` agent's move when its time is up; a ``BaseException`` so that the
    agent's own ``except Exception`` does not swallow it."""


def within(seconds: float, move: Callable[[], Any]) -> Any:
    """``move()``, stopped with :class:`_OutOfTime` after ``seconds``.

    In the main thread a timer signal (``SIGALRM``) interrupts it; elsewhere, where signals
    cannot be delivered, a move that took too long is refused when it returns.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "setitimer"
    ):
        started = time.monotonic()
        result = move()
        if time.monotonic() - started > seconds:
            raise _OutOfTime
        return result

    def out_of_time(_signum: int, _frame: Any) -> None:
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, out_of_time)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return move()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def build(spec: Spec, rng: random.Random, book: Book | None) -> Agent:
    """Import the module, call the factory with ``rng`` and the parameters, wrap the result."""
    params = spec.params
    module = load_module(params["module"], spec.text)
    factory = getattr(module, params["factory"], None)
    if not callable(factory):
        names = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]
        raise AgentSpecError(
            f"{spec.text!r}: {params['module']!r} has no callable "
            f"{params['factory']!r}; it has: {', '.join(sorted(names)) or '-'}"
        )
    arguments = ", ".join(["rng", *(f"{k}={v!r}" for k, v in params["kwargs"].items())])
    call = f"{params['factory']}({arguments})"
    try:
        inner = plugin_code(f"{spec.text!r}: {call}", lambda: factory(rng, **params["kwargs"]))
    except PluginFailedError:
        raise
    except Exception as error:  # noqa: BLE001 - the plugin's own code ran; say what it raised
        raise AgentSpecError(
            f"{spec.text!r}: {call} failed: {type(error).__name__}: {error}"
        ) from None
    if not callable(getattr(inner, "select_move", None)):
        raise AgentSpecError(
            f"{spec.text!r}: {params['factory']} returned "
            f"{type(inner).__name__}, which has no select_move(position) method"
        )
    return PluginAgent(rng, inner, book=book, spec=spec.text, timeout=params.get("timeout"))
