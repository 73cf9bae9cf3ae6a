"""The URLs of the explorer's pages: every view's state is in its URL, so it can be shared."""

from __future__ import annotations

from urllib.parse import urlencode

from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.web.explorer import game_name


def query(**params: object) -> str:
    """``?a=1&b=x`` of the parameters that are set, keeping ``/`` and ``,`` readable."""
    shown = {key: value for key, value in params.items() if value not in (None, "", False)}
    return "?" + urlencode(shown, safe="/,") if shown else ""


def position_url(
    rules: Rules,
    base: str | None = None,
    moves: list[str] | tuple[str, ...] = (),
    **extra: object,
) -> str:
    """The explorer's page of the position ``base`` (None: the empty board) after ``moves``."""
    return f"/game/{game_name(rules)}" + query(position=base, moves=",".join(moves), **extra)


def position_link(position: Position, **extra: object) -> str:
    """The explorer's page of one position, written out (no move history)."""
    return position_url(position.rules, str(position), (), **extra)


def api_position_url(rules: Rules, base: str | None, moves: list[str] | tuple[str, ...]) -> str:
    return f"/api/games/{game_name(rules)}/position" + query(position=base, moves=",".join(moves))


def play_url(
    rules: Rules,
    agent: str,
    side: str,
    seed: int,
    moves: list[str] | tuple[str, ...] = (),
    **extra: object,
) -> str:
    return f"/play/{game_name(rules)}" + query(
        agent=agent, side=side, seed=seed, moves=",".join(moves), **extra
    )


def analysis_url(rules: Rules) -> str:
    return f"/game/{game_name(rules)}/analysis"


def editor_url(
    rules: Rules, position: str | None = None, turn: str | None = None, tool: str | None = None
) -> str:
    """The board editor with ``position`` set up (None: the empty board)."""
    return f"/game/{game_name(rules)}/edit" + query(
        position=position, turn=turn, tool=None if tool == "x" else tool
    )


def json_twin(url: str) -> str:
    """The URL of a page's JSON twin: ``/game/3x3k3?moves=b2`` -> ``/game/3x3k3.json?moves=b2``."""
    path, mark, rest = url.partition("?")
    return f"{path}.json{mark}{rest}"
