"""``py:`` agents: a Python agent from anywhere, named by its factory.

``py:package.module:factory[,key=value...]`` imports ``package.module`` (with the current
directory on the import path, as ``python -m`` has it) and calls
``factory(rng, **params)``; ``py:path/to/file.py:factory`` loads a file instead. The factory
gets the ``random.Random`` the agent must draw every random choice from, and returns an object
with the project's agent interface: ``select_move(position) -> cell`` (a
:class:`agents.base.Agent` subclass is the natural choice, but any such object will do).

Parameter values are typed the obvious way: ``true``/``false`` (any case) become booleans,
whole numbers ``int``, other numbers ``float``, anything else stays a string. Three parameters
are the project's own and are not passed to the factory: ``book=true`` (play the book's move
where it holds the position), ``timeout=SECONDS`` (a time limit per move, as ``cmd:``
engines have, 10 s unless told: the agent's moves run in a child process of its own, killed
when a move takes longer, which is counted as a ``timeout`` failure; see
:mod:`agents.isolation`; ``timeout=none`` runs them in this process, unbounded) and
``memory=MIB`` (how much that process may grow, 2048 MiB unless told; ``none``: no limit).

``py:module:function,board=SHAPE[,symbols=X/O/space][,side=name|symbol]`` names an agent
written against a board of its own instead: ``function`` is its move function, handed the
board as :mod:`agents.adapters` makes it (``flat``, ``grid``, ``numpy``, ``planes`` or
``position``), and answering as it allows. The move function may be a method:
``py:lab.py:Player().move[,board=...][,key=value...]`` makes ``Player(**params)`` (the spec's
own parameters go to it) and takes its ``move``; ``py:lab.py:player.move`` takes the method of
an instance the module made. Without ``board=`` such a method is handed the ``Position``.

Whatever the agent does besides answering a legal move (raising, calling ``sys.exit`` or
``os._exit``, running out of time, answering something that is no move, a taken cell) is
counted as that move's failure by the audit, which goes on, as an external engine's failures
are. A module or factory that calls ``sys.exit`` or ``os._exit`` as it is loaded or made is a
:class:`PluginFailedError`: a plug-in's code never ends the command (:func:`plugin_code`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import math
import os
import random
import re
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

from ttt_solve.agents.adapters import Adapter, AdapterError, CallableAgent
from ttt_solve.agents.base import Agent
from ttt_solve.agents.isolation import (
    DEFAULT_MEMORY_MIB,
    DEFAULT_MOVE_SECONDS,
    MAX_MEMORY_MIB,
    check_memory,
)
from ttt_solve.agents.spec import BOOK, AgentSpecError, Spec, _convert
from ttt_solve.errors import TttError

if TYPE_CHECKING:  # pragma: no cover
    from ttt_solve.book.reader import Book

_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_MODULE = re.compile(rf"{_IDENTIFIER}(\.{_IDENTIFIER})*")
_FACTORY = re.compile(_IDENTIFIER)
_TARGET = re.compile(rf"({_IDENTIFIER})(\(\))?((?:\.{_IDENTIFIER})*)")
"""``factory``, or a move function reached from a name: ``Class().method`` (an instance made
with the spec's parameters) or ``instance.method``."""
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
    named = _TARGET.fullmatch(factory)
    if (
        not colon
        or named is None
        or (named.group(2) and not named.group(3))
        or not (is_file or _MODULE.fullmatch(module))
    ):
        raise AgentSpecError(
            f"{text!r} does not name a factory: write py:package.module:factory, "
            f"py:path/to/file.py:factory, or a move function such as "
            f"py:file.py:Player().move (e.g. {EXAMPLE})"
        )
    assert named is not None
    made = bool(named.group(2))
    attributes = tuple(named.group(3).split(".")[1:])
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
        elif key == "memory":
            params["memory"] = _mebibytes(text, raw)
        elif key in _ADAPTER_PARAMS:
            params[key] = raw if key != "symbols" else _symbols(text, raw)
        else:
            params[key] = _typed(raw)
    params.setdefault("book", False)
    params.setdefault("timeout", DEFAULT_MOVE_SECONDS)
    if params["timeout"] is None and params.get("memory") is not None:
        raise AgentSpecError(
            f"{text!r}: memory= limits the agent's own process, which timeout=none does not "
            f"give it; drop one of them"
        )
    params.setdefault("memory", DEFAULT_MEMORY_MIB)
    adapter = None
    if attributes or any(key in params for key in _ADAPTER_PARAMS):
        try:
            adapter = Adapter.make(params.get("board"), params.get("symbols"), params.get("side"))
        except AdapterError as error:
            raise AgentSpecError(f"{text!r}: {error}") from None
        if "board" not in params and not attributes:
            raise AgentSpecError(f"{text!r}: symbols= and side= need board= (e.g. board=flat)")
    return Spec(
        "py",
        {
            "module": module,
            "factory": named.group(1),
            "made": made,
            "attributes": attributes,
            "kwargs": {k: v for k, v in params.items() if k not in _OWN_PARAMS},
            "book": params["book"],
            "timeout": params["timeout"],
            "memory": params["memory"],
            "adapter": adapter,
        },
        text,
    )


_ADAPTER_PARAMS = ("board", "symbols", "side")
"""With ``board=``, the target is the agent's move function itself, handed that board (see
:mod:`agents.adapters`); ``symbols=X/O/space`` and ``side=name|symbol`` as there."""

_OWN_PARAMS = ("book", "timeout", "memory", *_ADAPTER_PARAMS)
"""Parameters of every ``py:`` agent, kept from the factory."""


def _symbols(text: str, raw: str) -> tuple[object, object, object]:
    """``symbols=X/O/space``: three words for X, O and empty; whole numbers are numbers,
    ``none`` is ``None``, ``space`` a blank."""
    words = raw.split("/")
    if len(words) != 3:
        raise AgentSpecError(
            f"symbols={raw!r} in {text!r}: write three, for X, O and empty, separated by / "
            f"(e.g. symbols=X/O/space or symbols=1/2/0)"
        )
    special = {"none": None, "space": " "}
    return tuple(  # type: ignore[return-value]
        special[w.lower()] if w.lower() in special else int(w) if w.lstrip("-").isdigit() else w
        for w in words
    )


def _seconds(text: str, raw: str) -> float | None:
    """The ``timeout=`` of a spec: seconds, above 0 and at most a day; ``none``: no limit."""
    if raw.lower() == "none":
        return None
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and 0 < seconds <= 86_400):
        raise AgentSpecError(
            f"py parameter timeout={raw!r} in {text!r}: expected seconds between 0 and "
            f"86400 (e.g. timeout=2), or none to run the agent in ttt's own process"
        )
    return seconds


def _mebibytes(text: str, raw: str) -> float | None:
    """The ``memory=`` of a spec: MiB its process may grow by; ``none``: no limit."""
    if raw.lower() == "none":
        return None
    try:
        return check_memory(float(raw))
    except (ValueError, TypeError):
        raise AgentSpecError(
            f"py parameter memory={raw!r} in {text!r}: expected MiB between 16 and "
            f"{MAX_MEMORY_MIB} (e.g. memory=4096), or none for no limit"
        ) from None


_OLD_PACKAGES = ("agents", "solver", "book", "cli")
"""Top-level names of ttt-solve's parts before they moved under ``ttt_solve``."""


class PluginFailedError(TttError):
    """A plug-in's code tried to end the process: the message names the agent and what it was
    doing, ``did`` says what it did (``called sys.exit(3), which would end ttt``)."""

    def __init__(self, what: str, did: str) -> None:
        super().__init__(f"{what} {did}")
        self.did = did


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
    """``call()``, a plug-in's own code (its module, its factory, its move), kept from ending
    or moving the caller's process:

    * ``sys.exit()`` (``SystemExit``) and ``os._exit()`` become :class:`PluginFailedError`
      naming ``what`` it was doing;
    * so does a ``KeyboardInterrupt`` it raises when no Ctrl-C came (:class:`_CtrlC`); the
      user's Ctrl-C goes on up, even where the plug-in caught it and answered;
    * the working directory and the Ctrl-C handler it changed are put back.

    (A plug-in runs in this process: one that kills it otherwise, by a signal, ``os._exit``
    from a thread of its own or a crash in C, ends the command with it.)"""
    if os._exit is not _exit_unless_in_plugin:  # once, for the whole process; only a thread
        os._exit = _exit_unless_in_plugin  # inside a plug-in call is refused the real exit
    folder = _working_directory()
    ctrl_c = _CtrlC()
    _RUNNING.depth = getattr(_RUNNING, "depth", 0) + 1
    _RUNNING.pid = os.getpid()
    try:
        answer = _contained(what, call, ctrl_c)
    except BaseException as error:
        if ctrl_c.stopped and not isinstance(error, KeyboardInterrupt):
            raise KeyboardInterrupt from None  # the user's, which the plug-in caught
        raise
    finally:
        _RUNNING.depth -= 1
        ctrl_c.close()
        _go_back_to(folder)
    if ctrl_c.stopped:
        raise KeyboardInterrupt  # the user's, which the plug-in caught and answered on
    return answer


def _contained(what: str, call: Callable[[], Any], ctrl_c: _CtrlC) -> Any:
    """``call()``, its ways of ending the process raised as :class:`PluginFailedError`."""
    try:
        return call()
    except SystemExit as stop:
        if not _inside_plugin():
            raise  # a process the plug-in forked, ending as it asks
        raise PluginFailedError(
            what, f"called sys.exit({stop.code!r}), which would end ttt"
        ) from None
    except _PluginExit as stop:
        raise PluginFailedError(
            what, f"called os._exit({stop.status!r}), which would end ttt"
        ) from None
    except KeyboardInterrupt:
        if ctrl_c.came or not _inside_plugin():
            raise  # the user's Ctrl-C
        raise PluginFailedError(what, "raised KeyboardInterrupt, though no Ctrl-C came") from None


class _CtrlC:
    """Whether the user's Ctrl-C (a real SIGINT) came while a plug-in's code ran: its handler
    is wrapped, from :func:`plugin_code`'s start to its :meth:`close`, which puts the handler
    back (whatever the plug-in set meanwhile).

    Python runs signal handlers in the main thread only, so only there is one wrapped;
    elsewhere a ``KeyboardInterrupt`` is never the user's. Nor where SIGINT is ignored or
    not handled in Python: there it raises nothing."""

    def __init__(self) -> None:
        self.came = False
        """A SIGINT came."""
        self.stopped = False
        """Its handler raised ``KeyboardInterrupt`` (it may defer one that would be lost)."""
        self.previous: Any = None
        if threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGINT)
        if callable(previous):
            self.previous = previous
            signal.signal(signal.SIGINT, self.handle)

    def handle(self, signum: int, frame: FrameType | None) -> None:
        self.came = True
        try:
            self.previous(signum, frame)
        except KeyboardInterrupt:
            self.stopped = True
            raise

    def close(self) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
            self.previous = None


def _working_directory() -> str | None:
    """The working directory, or None where it is gone."""
    try:
        return os.getcwd()
    except OSError:
        return None


def _go_back_to(folder: str | None) -> None:
    """Back to ``folder`` where a plug-in moved elsewhere (os.chdir) and it is still there."""
    if folder is not None and _working_directory() != folder:
        with contextlib.suppress(OSError):
            os.chdir(folder)


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


class PluginAgent(CallableAgent):
    """The project-side wrapper of a plugin's agent: spec, book moves, and its answers read
    as any agent's written in Python are (:class:`~agents.adapters.CallableAgent`): an
    exception, a time-out, a call of ``sys.exit`` or ``os._exit``, or an answer that is no
    legal move is that move's failure.

    With a time limit its moves run in a child process of their own (:mod:`agents.isolation`).
    """

    name = "py"

    def __init__(
        self,
        rng: random.Random,
        inner: Any,
        *,
        book: Book | None = None,
        spec: str | None = None,
        timeout: float | None = None,
        memory: float | None = DEFAULT_MEMORY_MIB,
        adapter: Adapter | None = None,
    ) -> None:
        move = inner if adapter is not None else inner.select_move
        super().__init__(rng, move, adapter, book=book, spec=spec, timeout=timeout, memory=memory)
        self.inner = inner


def build(spec: Spec, rng: random.Random, book: Book | None) -> Agent:
    """Import the module, call the factory with ``rng`` and the parameters, wrap the result;
    or find the move function the spec names (``board=``, ``Class().method``)."""
    params = spec.params
    module = load_module(params["module"], spec.text)
    name = params["factory"]
    target = getattr(module, name, None)
    if not (callable(target) or (params["attributes"] and target is not None)):
        names = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]
        raise AgentSpecError(
            f"{spec.text!r}: {params['module']!r} has no callable "
            f"{name!r}; it has: {', '.join(sorted(names)) or '-'}"
        )
    limits = {"timeout": params["timeout"], "memory": params["memory"]}
    adapter = params.get("adapter")
    if adapter is not None:  # the target is the move function itself
        move = _move_function(spec, target)
        return PluginAgent(rng, move, book=book, spec=spec.text, adapter=adapter, **limits)
    arguments = ", ".join(["rng", *(f"{k}={v!r}" for k, v in params["kwargs"].items())])
    call = f"{name}({arguments})"
    inner = _made(spec, call, lambda: target(rng, **params["kwargs"]))
    if not callable(getattr(inner, "select_move", None)):
        raise AgentSpecError(
            f"{spec.text!r}: {name} returned "
            f"{type(inner).__name__}, which has no select_move(position) method"
        )
    return PluginAgent(rng, inner, book=book, spec=spec.text, **limits)


def _move_function(spec: Spec, target: Any) -> Callable[..., Any]:
    """The move function a spec with ``board=`` or ``Class().method`` names: the target, or
    the method reached from it (the instance made with the spec's parameters)."""
    params = spec.params
    name, kwargs, attributes = params["factory"], params["kwargs"], params["attributes"]
    if kwargs and not params["made"]:
        raise AgentSpecError(
            f"{spec.text!r}: the target is the agent's move function, which takes no "
            f"parameters; give only book=, timeout=, memory=, board=, symbols=, side= (or name a "
            f"method of an instance made with them: py:file.py:Player().move,depth=2)"
        )
    if params["made"]:
        arguments = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        target = _made(spec, f"{name}({arguments})", lambda: target(**kwargs))
    path = name + ("()" if params["made"] else "")
    for attribute in attributes:
        found = _made(spec, f"{path}.{attribute}", functools.partial(_attribute, target, attribute))
        if found is None:
            raise AgentSpecError(
                f"{spec.text!r}: {path} ({type(target).__name__}) has no attribute {attribute!r}"
            )
        target, path = found, f"{path}.{attribute}"
    if not callable(target):
        raise AgentSpecError(f"{spec.text!r}: {path} is no function ({type(target).__name__})")
    return target


def _attribute(target: Any, name: str) -> Any:
    return getattr(target, name, None)


def _made(spec: Spec, call: str, make: Callable[[], Any]) -> Any:
    """``make()``, the plug-in's code that makes its agent: what it raises is one line."""
    try:
        return plugin_code(f"{spec.text!r}: {call}", make)
    except PluginFailedError:
        raise
    except Exception as error:  # noqa: BLE001 - the plugin's own code ran; say what it raised
        raise AgentSpecError(
            f"{spec.text!r}: {call} failed: {type(error).__name__}: {error}"
        ) from None
