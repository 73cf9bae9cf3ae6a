"""The explorer's views: one per page, each building the page's one data object from the
library's answers.

A view (``position_view``, ``analysis_view``, ``editor_view``, ``audits_view``,
``audit_view``, ``play_view``; the ratings page's is ``ratings_view`` in
:mod:`ttt_solve.web.ratings`) takes what the route read of its request, asks the book, the
agents and the audits, and returns a :class:`Page`: the object, which the page's template
renders and its ``.json`` twin sends through the one encoder
(:func:`ttt_solve.web.answers.json_response`), as Datasette's views do, and how to draw the
pictures of the same answers (:mod:`ttt_solve.web.pictures`, called only for HTML). A template
reads nothing else, so whatever a page says, its JSON holds. The JSON API under ``/api/``
builds its objects with the same functions (the optimal line of a position page is the object
of ``/api/games/{game}/mainline``). Nothing here draws or speaks HTML.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple

from starlette.concurrency import run_in_threadpool

from ttt_solve.agents.audit import AuditMode, Graded, Truth, graded_json, summary_json
from ttt_solve.agents.review import CostlyRow, Review, player_number, results_table, review_game
from ttt_solve.book.oracle import Analysis
from ttt_solve.book.query import LineMove, analysis_json
from ttt_solve.book.records import GameInfo
from ttt_solve.book.stats import report
from ttt_solve.presentation import picture
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome, grade
from ttt_solve.solver.vocabulary import Side
from ttt_solve.web import links, pictures
from ttt_solve.web.audits import AuditJob, AuditRunner, JobStatus, job_json
from ttt_solve.web.common import answer, game_json, shortened
from ttt_solve.web.explorer import Asked, Explorer, game_name, symmetric_images, url_param


class Page(NamedTuple):
    """What a page's view builds: its data object, the whole of what its template reads and
    its ``.json`` twin answers, and how to draw its pictures (called only for HTML)."""

    data: dict[str, Any]
    pictures: Callable[[], dict[str, Any]] = dict


GROUP_TITLES = {"win": "Winning moves", "draw": "Drawing moves", "loss": "Losing moves"}

# -- what a position page's URL asks for ------------------------------------------------------


def number(text: str | None, what: str, low: int = 0, high: int | None = None) -> int | None:
    """A whole number of a URL parameter within ``low..high`` (``None`` when not given)."""
    if text is None or not text.strip():
        return None
    if len(text) > 12 or not text.strip().isdigit():
        raise ValueError(f"{what} {text[:20]!r} is not a whole number")
    value = int(text)
    if value < low or (high is not None and value > high):
        raise ValueError(f"{what} {value} is out of range: {low}..{high}")
    return value


class State(NamedTuple):
    """A position page's URL beyond the game it names: ``moves`` played on ``base`` (the
    ``position`` parameter), the position after the first ``ply`` of them, and how to show it.
    Every link of the page is made from it, so all state stays in the URL."""

    rules: Rules
    base: str | None
    moves: tuple[str, ...]  # the game's moves, shown or not
    ply: int  # how many of them are played on the board
    position: Position  # after them
    show_values: bool  # values=0 hides them (teaching)
    line: bool  # line=1 draws the optimal line on the board
    mark: int | None  # a cell framed: an agent's move under review
    audit: int | None  # the audit this page was opened from
    audit_game: int | None  # the number of that audit's game being replayed
    side: Side | None  # whose blunders the value history rings

    @property
    def showing(self) -> dict[str, object]:
        """How the page shows a position: kept by every link, to this game or another."""
        return {"values": None if self.show_values else "0", "line": "1" if self.line else None}

    @property
    def keep(self) -> dict[str, object]:
        """The options a link within the same game keeps."""
        return {**self.showing, "audit": self.audit, "game": self.audit_game, "side": self.side}

    def at(self, ply: int) -> str:
        """This game at another ply."""
        shown = None if ply == len(self.moves) else str(ply)
        return links.position_url(self.rules, self.base, self.moves, ply=shown, **self.keep)

    def here(self, **changes: object) -> str:
        """This page with some options changed (``mark`` kept)."""
        options: dict[str, object] = {**self.keep, "mark": self._mark_name, **changes}
        shown = None if self.ply == len(self.moves) else str(self.ply)
        return links.position_url(self.rules, self.base, self.moves, ply=shown, **options)

    def play(self, cell: int) -> str:
        """The page after ``cell`` is played here (a new game from this point on)."""
        moves = (*self.moves[: self.ply], self.rules.cell_name(cell))
        return links.position_url(self.rules, self.base, moves, **self.showing)

    @property
    def _mark_name(self) -> str | None:
        return None if self.mark is None else self.rules.cell_name(self.mark)


def state_of(
    params: Any, rules: Rules, base: str | None, start: Position, cells: Sequence[int]
) -> State:
    """The :class:`State` of a position page's query parameters (``params.get(name)``)."""
    ply = number(params.get("ply"), "ply", 0, len(cells))
    ply = len(cells) if ply is None else ply
    position = start
    for cell in cells[:ply]:
        position = position.play(cell)
    mark_text = params.get("mark")
    side_text = (params.get("side") or "").strip()
    side = Side.parse(side_text, "side") if side_text else None
    return State(
        rules=rules,
        base=base,
        moves=tuple(rules.cell_name(c) for c in cells),
        ply=ply,
        position=position,
        show_values=params.get("values") != "0",
        line=params.get("line") == "1",
        mark=rules.parse_cell(mark_text) if mark_text else None,
        audit=number(params.get("audit"), "audit", 1),
        audit_game=number(params.get("game"), "game", 1),
        side=side,
    )


# -- a position --------------------------------------------------------------------------------


def source_note(analysis: Analysis, depth: int | None) -> str:
    """Where the answer came from, in words."""
    if not analysis.searched:
        return "from the book"
    spent = f"{analysis.nodes:,} nodes, {analysis.seconds:.2f} s"
    if analysis.source == "book+search":
        return (
            f"value from the book; its moves searched live, past the opening book's depth "
            f"{depth} ({spent})"
        )
    return f"searched live: past the opening book's depth {depth} ({spent})"


def move_groups(analysis: Analysis, url: Callable[[int], str]) -> list[dict[str, Any]]:
    """The moves under winning, drawing and losing, each group best first (as syzygy-tables
    and lichess list them): fastest win, then any draw, then slowest loss."""
    best = set(analysis.best_moves)
    groups: dict[str, list[dict[str, Any]]] = {outcome: [] for outcome in Outcome}
    for move in analysis.moves:  # already best first
        groups[move.value.outcome.value].append(
            {
                "cell": move.name,
                "remoteness": move.value.remoteness,
                "label": picture.label(move.value.outcome, move.value.remoteness),
                "best": move.cell in best,
                "url": url(move.cell),
            }
        )
    return [
        {"value": outcome, "title": GROUP_TITLES[outcome], "moves": groups[outcome]}
        for outcome in Outcome
        if groups[outcome]
    ]


def mainline_json(
    rules: Rules, position: Position, line: Sequence[LineMove], url: Callable[[int], str] | None
) -> dict[str, Any]:
    """The optimal line from ``position``: one entry per ply to the end, each the move, its
    value for the player who makes it, the position it is played in, and (given ``url(i)``,
    the page after the first ``i`` moves of the line) where it leads."""
    return {
        "position": str(position),
        "moves": [
            {
                "cell": rules.cell_name(step.cell),
                "index": step.cell,
                "value": step.value.outcome.value,
                "remoteness": step.value.remoteness,
                "position": str(step.position),
                **({"url": url(i + 1)} if url is not None else {}),
            }
            for i, step in enumerate(line)
        ],
    }


def history_json(history: picture.History, current: int | None) -> dict[str, Any]:
    """A value history (:func:`ttt_solve.presentation.picture.history`) as plain data; each
    change of value with the link of the position after it."""
    after = {p.ply - 1: p.link for p in history.points}
    return {
        "points": [
            {
                "ply": p.ply,
                "move": p.move,
                "to_move": p.to_move,
                "value": p.value.outcome.value,
                "remoteness": p.value.remoteness,
                "url": p.link,
                "current": p.ply == current,
            }
            for p in history.points
        ],
        "changes": [
            {
                "ply": c.ply,
                "player": c.player,
                "move": c.move,
                "before": c.before.value,
                "after": c.after.value,
                "text": c.text,
                "url": after.get(c.ply),
            }
            for c in history.changes
        ],
    }


def game_history(state: State, answers: Sequence[Analysis], side: str | None) -> picture.History:
    """The value history of the page's whole game, each point a link to that ply; with
    ``side``, only that player's changes of value are kept (an audited agent's blunders)."""
    made = picture.history(
        state.rules,
        [(a.position, a.value) for a in answers],
        moves=[state.rules.parse_cell(m) for m in state.moves],
        links=[state.at(i) for i in range(len(answers))],
    )
    if side is not None:
        made = made._replace(changes=tuple(c for c in made.changes if c.player == side))
    return made


def mark_json(state: State, analysis: Analysis) -> dict[str, Any] | None:
    """The framed cell's move, graded against the position's value (``None`` without one)."""
    if state.mark is None:
        return None
    rules = state.rules
    moves = {m.cell: m for m in analysis.moves}
    entry = moves.get(state.mark)
    out: dict[str, Any] = {"cell": rules.cell_name(state.mark), "grade": None, "kind": None}
    if entry is not None:
        graded, kind = grade(analysis.value, entry.value)
        out.update(
            grade=graded.value,
            kind=kind,
            value=str(analysis.value),
            move_value=str(entry.value),
            best_moves=[rules.cell_name(c) for c in analysis.best_moves],
        )
    return out


def position_data(
    info: GameInfo,
    state: State,
    analysis: Analysis,
    line: Sequence[LineMove] | None,
    history: picture.History | None,
    audit: dict[str, Any] | None,
) -> dict[str, Any]:
    """The position page's object: the game, where the page stands in it, the answer of
    ``ttt query --json`` (``None`` with values hidden), the moves grouped, the optimal line,
    the value history, the position's images and every link the page shows."""
    rules = state.rules
    position = state.position
    names = state.moves
    shown = state.show_values
    images = [
        {"name": name, "position": str(image), "url": links.position_link(image)}
        for name, image in symmetric_images(position)
    ]
    return {
        "game": game_json(info),
        "position": str(position),
        "moves": list(names),
        "ply": state.ply,
        "to_move": None if position.is_terminal else position.to_move,
        "winner": position.winner,
        "last_move": names[state.ply - 1] if state.ply else None,
        "numbered": numbered_moves(
            names,
            position.ply - state.ply,
            state.at,
            state.ply,
            {change.ply for change in history.changes} if history is not None and shown else (),
        ),
        "show_values": shown,
        "answer": analysis_json(analysis) if shown else None,
        "source": source_note(analysis, info.book_depth) if shown else None,
        "groups": move_groups(analysis, state.play) if shown else [],
        "line": (
            mainline_json(rules, position, line, lambda i: _line_url(state, line, i))
            if line is not None
            else None
        ),
        "history": history_json(history, state.ply) if history is not None and shown else None,
        "mark": mark_json(state, analysis) if shown else None,
        "audit": audit,
        "images": images,
        "links": {
            "self": state.here(),
            "start": state.at(0) if names else None,
            "back": state.at(state.ply - 1) if state.ply else None,
            "forward": state.at(state.ply + 1) if state.ply < len(names) else None,
            "end": state.at(len(names)) if state.ply < len(names) else None,
            "undo": _undo(state),
            "line": state.here(line=None if state.line else "1"),
            "values_toggle": state.here(values="0" if shown else None),
            "edit": links.editor_url(rules, str(position)),
            "written": links.position_link(position),
            "analysis": links.analysis_url(rules),
            "api": links.api_position_url(rules, str(position), ()),
        },
    }


def _undo(state: State) -> str | None:
    """The page one move back, that move forgotten (``None`` at the start)."""
    if not state.ply:
        return None
    return links.position_url(
        state.rules, state.base, state.moves[: state.ply - 1], **state.showing
    )


def _line_url(state: State, line: Sequence[LineMove], steps: int) -> str:
    """The page after the first ``steps`` moves of the optimal line from here."""
    names = (*state.moves[: state.ply], *(state.rules.cell_name(s.cell) for s in line[:steps]))
    return links.position_url(state.rules, state.base, names, values=state.showing["values"])


async def position_view(
    explorer: Explorer, audits: AuditRunner, asked: Asked, params: Mapping[str, str]
) -> Page:
    """The position page of ``asked``, as the page's query parameters show it: the answer,
    the optimal line if asked, the value history of the game played to it."""
    state = state_of(params, asked.rules, asked.base, asked.start, asked.cells)
    analysis = await answer(explorer, state.position)
    line = await run_in_threadpool(explorer.line, state.position) if state.line else None
    history = None
    if asked.cells:
        answers = await run_in_threadpool(explorer.history, asked.start, list(asked.cells))
        history = game_history(state, answers, state.side)
    banner = audit_banner(audits, state)
    data = position_data(asked.info, state, analysis, line, history, banner)
    return Page(data, partial(pictures.position, state, analysis, line, history))


def audit_banner(audits: AuditRunner, state: State) -> dict[str, Any] | None:
    """What a page opened from an audit says about it: the audit, its agent, a way back. An
    audit the server no longer holds (audits live in memory: a link shared before a restart)
    is named, with ``url`` ``None`` and no agent: the page shows the game all the same."""
    if state.audit is None:
        return None
    job = audits.get(state.audit)
    about: dict[str, Any] = {"url": None, "agent": None, "opponent": None, "mode": None}
    if job is not None:
        games = job.request.mode == AuditMode.GAMES
        about = {
            "url": f"/audits/{job.id}",
            "agent": job.request.agent,
            "opponent": job.request.opponent if games else None,
            "mode": job.request.mode,
        }
    return {"id": state.audit, **about, "game": state.audit_game, "side": state.side}


# -- a game's analysis -------------------------------------------------------------------------


async def analysis_view(explorer: Explorer, game: str) -> Page:
    """A game's analysis: its entry among the games, the figures of ``ttt stats --json``
    (each longest win and loss with its example's page), and the remotenesses the remoteness
    table has a row for."""
    info = explorer.game(game)
    stats = await run_in_threadpool(report, explorer.book, info)
    for found in (stats["longest_win"], stats["longest_loss"]):
        if found and found["example"]:
            found["url"] = links.position_url(info.rules, found["example"])
    remoteness = info.figures.remoteness
    depths = sorted(
        {r for w in ("reachable", "canonical") for o in Outcome for r in remoteness[w][o]}
    )
    data = {"game": game_json(info), "stats": stats, "depths": depths}
    return Page(data, partial(pictures.analysis, info))


# -- the board editor --------------------------------------------------------------------------

STONE_TOOLS = ("x", "o", ".")


class Setup(NamedTuple):
    """A board being set up in the editor: its cells as written (``x``, ``o``, ``.``), the
    side to move chosen, and the tool a click applies."""

    rules: Rules
    cells: str  # one character a cell, row-major
    turn: Side | None  # None: as the stones say
    tool: str  # "x", "o" or "." (remove)

    @property
    def written(self) -> str:
        return _written(self.rules, self.cells)

    def with_cell(self, cell: int) -> str:
        """The editor's URL once ``cell`` is clicked: the tool's stone placed, or the cell
        emptied when it already holds that stone."""
        now = self.cells[cell]
        put = "." if now == self.tool else self.tool
        cells = self.cells[:cell] + put + self.cells[cell + 1 :]
        return links.editor_url(self.rules, _written(self.rules, cells), self.turn, self.tool)

    def url(self, **changes: Any) -> str:
        options = {"turn": self.turn, "tool": self.tool, **changes}
        return links.editor_url(self.rules, self.written, options["turn"], options["tool"])


def _written(rules: Rules, cells: str) -> str:
    return "/".join(cells[i : i + rules.cols] for i in range(0, len(cells), rules.cols))


def setup_of(params: Any, rules: Rules) -> tuple[Setup, str | None]:
    """The editor's board from its URL, and why its ``position`` cannot be read as a board
    (``None`` when it can). The cells are read leniently here (any text of the right length):
    whether they make a legal position is said by :func:`check_setup`, through the parser
    every other page uses."""
    text = params.get("position")
    empty = "." * rules.cells
    problem = None
    cells = empty
    if text:
        compact = "".join(text.split()).replace("/", "").lower()
        compact = re.sub(r"[-_]", ".", compact)
        if len(compact) == rules.cells and not compact.strip("xo."):
            cells = compact
        else:
            problem = _parse_problem(text, rules)
    turn_text = (params.get("turn") or "").strip()
    turn = Side.parse(turn_text, "turn") if turn_text else None
    tool = (params.get("tool") or "x").lower()
    if tool not in STONE_TOOLS:
        raise ValueError(f"tool {tool!r} is not x, o or . (remove)")
    return Setup(rules, cells, turn, tool), problem


def _parse_problem(text: str, rules: Rules) -> str | None:
    try:
        Position.parse(text, rules)
    except ValueError as error:
        return str(error)
    return None


def check_setup(setup: Setup) -> tuple[Position | None, str | None]:
    """The position set up, read by the parser every page uses, or why it is not legal
    (counts, lines, the side chosen to move)."""
    try:
        position = Position.parse(setup.written, setup.rules)
    except ValueError as error:
        return None, str(error)
    if setup.turn is not None and setup.turn != position.to_move:
        x, o = position.x.bit_count(), position.o.bit_count()
        needs = "as many X as O stones" if setup.turn == "x" else "one X stone more than O"
        return None, (
            f"{setup.turn.upper()} cannot be to move here: X moves first, so "
            f"{setup.turn.upper()} to move needs {needs}; this board has {x} X and {o} O"
        )
    return position, None


def editor_data(info: GameInfo, setup: Setup, problem: str | None) -> dict[str, Any]:
    """The editor's object: the board set up, whether it is legal (and why not), the links."""
    rules = info.rules
    position, why = (None, problem) if problem else check_setup(setup)
    x, o = setup.cells.count("x"), setup.cells.count("o")
    return {
        "game": game_json(info),
        "position": setup.written,
        "turn": setup.turn,
        "tool": setup.tool,
        "stones": {"x": x, "o": o},
        "legal": position is not None,
        "problem": shortened(why) if why else None,  # it may quote a long input
        "to_move": position.to_move if position is not None and not position.is_terminal else None,
        "explore": links.position_link(position) if position is not None else None,
        "links": {
            "self": setup.url(),
            "clear": links.editor_url(rules, None, setup.turn, setup.tool),
            "tools": {tool: setup.url(tool=tool) for tool in STONE_TOOLS},
            "turns": {turn: setup.url(turn=turn) for turn in ("x", "o")},
            "cells": {rules.cell_name(c): setup.with_cell(c) for c in range(rules.cells)},
        },
    }


def editor_view(explorer: Explorer, game: str, params: Mapping[str, str]) -> Page:
    """The board editor of ``game``, set up as its query parameters say."""
    info = explorer.game(game)
    setup, problem = setup_of(params, info.rules)
    data = editor_data(info, setup, problem)
    return Page(data, partial(pictures.editor, setup, data["legal"]))


# -- audits ------------------------------------------------------------------------------------

COSTLY_PAGE = 20
"""Costly moves shown a page."""
GAMES_PAGE = 50
"""Games of an audit listed a page."""


def progress_text(done: int, total: int, seconds: float) -> str:
    """``96 of 20,088 (0.5%), about 3 min left`` (the time left from the pace so far)."""
    if not total:
        return f"{done:,} done" if done else "starting"
    share = done / total
    text = f"{done:,} of {total:,} ({100 * share:.1f}%)"
    if done and done < total and seconds > 0:
        text += f", about {duration(seconds * (total - done) / done)} left"
    return text


def duration(seconds: float) -> str:
    """``45 s``, ``3 min 20 s``, ``1 h 5 min``."""
    seconds = max(0, math.ceil(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def page_of(items: Sequence[Any], page: int, size: int) -> tuple[Sequence[Any], int]:
    """The items of page ``page`` (from 1) and the number of pages."""
    pages = max(1, math.ceil(len(items) / size))
    page = min(max(page, 1), pages)
    return items[(page - 1) * size : page * size], pages


def costly_json(truth: Truth, row: CostlyRow, audit: int) -> dict[str, Any]:
    """A costly move with its count and the explorer's page of it, from its audit."""
    return {
        **graded_json(truth, row.record),
        "count": row.times,
        "url": worst_link(truth.rules, audit)(row.record),
    }


def game_rows(
    rules: Rules, results: Sequence[Any], blunders: Sequence[int], audit: int, first: int
) -> list[dict[str, Any]]:
    """Audit games ``first``, ``first + 1``, ... as rows: the agent's side and result, the
    moves, the agent's blunders, and the link that replays the game in the explorer (from the
    start, the value history ringing the agent's blunders)."""
    rows = []
    for offset, (result, count) in enumerate(zip(results, blunders)):
        moves = [rules.cell_name(c) for c in result.moves]
        number_ = first + offset
        rows.append(
            {
                "number": number_,
                "agent_side": result.agent_side,
                "outcome": result.outcome.value if result.outcome is not None else "stopped",
                "failure": result.failure,
                "moves": moves,
                "blunders": count,
                "url": links.position_url(
                    rules, None, moves, ply="0", audit=audit, game=number_, side=result.agent_side
                ),
            }
        )
    return rows


def review_rows(review: Review, url: Callable[[Graded], str]) -> list[dict[str, Any]]:
    """A player's graded moves as rows, numbered as the player counts them."""
    rows = []
    for move in review.moves:
        record = move.graded
        position_rules = record.position.rules
        rows.append(
            {
                "number": move.number,
                "ply": record.ply,
                "move": position_rules.cell_name(record.cell),
                "grade": record.grade.value,
                "kind": record.kind,
                "value": str(record.value),
                "move_value": str(record.move_value),
                "best_moves": [position_rules.cell_name(c) for c in move.best],
                "url": url(record),
            }
        )
    return rows


def numbered_moves(
    moves: Sequence[str],
    first_ply: int = 0,
    url: Callable[[int], str] | None = None,
    current: int | None = None,
    blunders: Collection[int] = (),
) -> list[dict[str, Any]]:
    """A game's moves numbered as players count them, X's and O's of each number side by side
    (``1. b2 a1 2. c3 ...``); ``first_ply`` is the ply of the first move (a game set up with O
    to move starts ``1. ... a1``). Each move has ``url(i)``, the page after the first ``i``
    moves, ``current`` (how many moves are shown) marks the last move shown, and ``blunder``
    whether its ply is one of ``blunders`` (a move that changed its player's value: the page
    writes it ``c3??``, as lichess does)."""
    rows: list[dict[str, Any]] = []
    for index, name in enumerate(moves):
        ply = first_ply + index
        side = "x" if ply % 2 == 0 else "o"
        if side == "x" or not rows:
            rows.append({"number": player_number(ply), "x": None, "o": None})
        rows[-1][side] = {
            "cell": name,
            "url": url(index + 1) if url is not None else None,
            "current": current == index + 1,
            "blunder": ply in blunders,
        }
    return rows


def worst_link(rules: Rules, audit: int) -> Callable[[Graded], str]:
    """The explorer's page of one of an audit's graded moves: the agent's move framed, the
    page naming the audit."""

    def link(record: Graded) -> str:
        return links.position_link(record.position, mark=rules.cell_name(record.cell), audit=audit)

    return link


def audits_view(explorer: Explorer, audits: AuditRunner, params: Mapping[str, str]) -> Page:
    """The audit form, filled with the game and agent the URL names (else the first game
    and ``heuristic``), and the audits the server holds, latest first."""
    games = [game_name(info.rules) for info in explorer.games()]
    jobs = [
        {
            "id": job.id,
            "agent": job.request.agent,
            "game": job.request.rules.name,
            "mode": job.request.mode,
            "status": job.status,
            "url": f"/audits/{job.id}",
        }
        for job in audits.recent()
    ]
    form = {
        "game": url_param(params, "game") or (games[0] if games else ""),
        "agent": url_param(params, "agent") or "heuristic",
    }
    return Page({"games": games, "jobs": jobs, "form": form})


async def audit_view(
    explorer: Explorer, job: AuditJob, params: Mapping[str, str], html: bool
) -> Page:
    """An audit's page (:func:`audit_data`); for ``html``, its costly moves' small boards are
    drawn here, in a worker thread, as they read the book."""
    # The values of the moves shown, read from the book as the page needs them (the audit
    # read the whole game's in its worker; the server's memory does not grow with audits).
    truth = Truth(explorer.book, job.request.rules, preload_limit=0)
    data = await run_in_threadpool(audit_data, job, truth, params)
    boards: dict[str, str] = {}
    if data["costly"] and html:
        boards = await run_in_threadpool(pictures.small_boards, truth, data["costly"]["rows"])
    return Page(data, partial(pictures.audit, job.summary, job.request.agent, boards))


def audit_data(job: AuditJob, truth: Truth, params: Mapping[str, str]) -> dict[str, Any]:
    """The audit page's object: the job (as ``/api/audits/{id}`` gives it), the game's name in
    URLs, its progress in words, and once done the won/drawn/lost table and the games (games
    mode) and every costly move, one row a position, a page of each at a time."""
    data: dict[str, Any] = {
        "job": job_json(job),
        "name": game_name(job.request.rules),
        "progress": progress_text(job.done, job.total, job.seconds or _elapsed(job)),
        "costly": None,
        "games": None,
    }
    if job.status != JobStatus.DONE or job.summary is None:
        return data
    rules = job.request.rules
    costly_page = number(params.get("costly"), "costly page", 1) or 1
    shown, pages = page_of(job.costly, costly_page, COSTLY_PAGE)
    page_number = min(costly_page, pages)
    data["costly"] = {
        "all": len(job.costly) == job.costly_count,
        "count": job.costly_count,
        "kept": len(job.costly),
        "page": page_number,
        "pages": pages,
        "first": (page_number - 1) * COSTLY_PAGE + 1,
        "rows": [costly_json(truth, row, job.id) for row in shown],
        "links": _pager(job, "costly", page_number, pages, params),
    }
    if job.results is not None and job.blunders is not None:
        games_page = number(params.get("games"), "games page", 1) or 1
        results, pages = page_of(job.results, games_page, GAMES_PAGE)
        page_number = min(games_page, pages)
        first = (page_number - 1) * GAMES_PAGE
        data["games"] = {
            "table": results_table(job.results),
            "count": len(job.results),
            "page": page_number,
            "pages": pages,
            "rows": game_rows(
                rules, results, job.blunders[first : first + len(results)], job.id, first + 1
            ),
            "links": _pager(job, "games", page_number, pages, params),
        }
    return data


def _elapsed(job: AuditJob) -> float:
    return time.monotonic() - job.started


def _pager(
    job: AuditJob, name: str, page_: int, pages: int, params: Mapping[str, str]
) -> dict[str, Any]:
    """The links to the other pages of one of an audit's lists (the other list's page kept)."""
    other = "games" if name == "costly" else "costly"
    keep = {other: params.get(other)} if params.get(other) else {}

    def url(number_: int) -> str:
        return f"/audits/{job.id}" + links.query(**keep, **{name: str(number_)}) + f"#{name}"

    return {
        "previous": url(page_ - 1) if page_ > 1 else None,
        "next": url(page_ + 1) if page_ < pages else None,
    }


# -- play --------------------------------------------------------------------------------------


class Game(NamedTuple):
    """A game against an agent as its URL states it: the agent, the visitor's side, the seed
    of the agent's moves (``None``: not chosen yet) and how the page shows the game."""

    agent: str
    side: Side  # the visitor's
    seed: int | None
    show_values: bool
    hint: bool


async def play_view(explorer: Explorer, asked: Asked, game: Game) -> Page | str:
    """The page of a game against an agent, or the URL to go to instead: the same game with
    a seed chosen, or with the agent's reply played when it is the agent's turn."""
    rules, position = asked.rules, asked.position
    agent, side = game.agent, game.side
    if asked.base is not None:
        raise ValueError("a game is played from the empty board: give moves, not a position")
    options = {"values": "1" if game.show_values else None}
    seed = game.seed
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
        return links.play_url(rules, agent, side, seed, asked.move_names, **options)
    if not position.is_terminal and position.to_move != side:
        reply = await run_in_threadpool(explorer.agent_move, agent, seed, position)
        names = (*asked.move_names, rules.cell_name(reply))
        return links.play_url(rules, agent, side, seed, names, **options)
    show_values, hint = game.show_values, game.hint
    analysis = None
    if (show_values or hint) and not position.is_terminal:
        analysis = await answer(explorer, position)
    review = None
    if position.is_terminal:
        review = await run_in_threadpool(
            review_game, Truth(explorer.book, rules, preload_limit=0), rules, asked.cells, side
        )

    def play(names: tuple[str, ...], **extra: object) -> str:
        return links.play_url(rules, agent, side, seed, names, **{**options, **extra})

    data = {
        "game": game_json(asked.info),
        "agent": agent,
        "side": side,
        "seed": seed,
        "moves": list(asked.move_names),
        "numbered": numbered_moves(asked.move_names),
        "position": str(position),
        "to_move": None if position.is_terminal else position.to_move,
        "winner": position.winner,
        "result": _result(position, side, agent),
        "show_values": show_values,
        "hint": ([rules.cell_name(c) for c in analysis.best_moves] if hint and analysis else None),
        "hint_every_move": bool(
            hint and analysis and len(analysis.best_moves) == len(analysis.moves)
        ),
        "answer": analysis_json(analysis) if analysis is not None and show_values else None,
        "graded": None if review is None else _graded_json(review, asked),
        "links": _play_links(asked, game, seed, play),
    }

    def move_url(cell: int) -> str:
        return play((*asked.move_names, rules.cell_name(cell)))

    last = asked.cells[-1] if asked.cells else None
    return Page(data, partial(pictures.play, position, analysis, show_values, hint, last, move_url))


def _graded_json(review: Any, asked: Asked) -> dict[str, Any]:
    """A finished game's moves graded, each linked to its position in the explorer."""
    rules = asked.rules

    def link(row: Any) -> str:
        mark = rules.cell_name(row.cell)
        return links.position_url(rules, None, asked.move_names, ply=str(row.ply), mark=mark)

    return {"moves": review_rows(review, link), "summary": summary_json(review.summary)}


def _play_links(
    asked: Asked, game: Game, seed: int, play: Callable[..., str]
) -> dict[str, str | None]:
    """Where a game's page leads: back a move, a hint, the values shown or hidden, a new
    game, the position in the explorer."""
    rules, position, side = asked.rules, asked.position, game.side
    mine = [i for i in range(len(asked.cells)) if (i % 2 == 0) == (side == Side.X)]
    undo = asked.move_names[: mine[-1]] if mine else None
    values = None if game.show_values else "1"
    return {
        "undo": play(undo) if undo is not None else None,
        "hint": play(asked.move_names, hint="1") if not position.is_terminal else None,
        "values_toggle": links.play_url(
            rules, game.agent, side, seed, asked.move_names, values=values
        ),
        "new_game": links.play_url(
            rules,
            game.agent,
            side,
            random.SystemRandom().randrange(2**32),
            values="1" if game.show_values else None,
        ),
        "explore": links.position_url(rules, None, asked.move_names),
    }


def _result(position: Position, side: str, agent: str) -> str | None:
    if not position.is_terminal:
        return None
    if position.winner is None:
        return "Draw: the board is full."
    return "You win." if position.winner == side else f"{agent} wins."
