"""The grading pipeline: every front that puts an agent to work goes through here.

Two ways to ask an agent for moves, one function each, and one audit built on them:

* :func:`pose`: the agent moves once in each of the given positions;
* :func:`play`: games between agents, as ``(x, o, x seed, o seed)`` tasks;
* :func:`evaluate`: an agent audited against the book, in positions or in games, as one
  :class:`~ttt_solve.agents.audit.AuditReport`. ``ttt audit``, ``ttt.audit``, the web's audit
  jobs, strength curves and the ladder's audits call it; tournaments and the ladder's games
  call :func:`play`.

An agent either answers a legal cell or fails the request (:class:`EngineFailure`: ``illegal``,
``timeout``, ``garbage``, ``crash``); an illegal answer of an in-process agent is an
``illegal`` failure too. A failure never stops the work: in positions, the position is counted
as failed (it kept no value and was no best move); in a game, the side that failed forfeits
it (the other side wins) and the next game is played. Only what makes an agent unusable at all
(an engine that cannot start) is raised.

Every task is seeded from the run's seed and the position's key (or the game's number), so one
core and two give the same figures.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ttt_solve.agents.audit import (
    AuditMode,
    AuditReport,
    CostlyMove,
    Failure,
    GameResult,
    Graded,
    Truth,
    grade_game,
    grade_move,
    summarize,
    worst,
)
from ttt_solve.agents.engine import EngineFailure
from ttt_solve.agents.match import SeedDeriver, checked_move, derive_seed, illegal
from ttt_solve.agents.parallel import PROBE_SECONDS, AgentMaker, Worker, chunked, run_chunks
from ttt_solve.book.errors import ErrorKind
from ttt_solve.book.records import GameInfo
from ttt_solve.errors import TttError
from ttt_solve.solver.errors import IllegalMoveError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.sampling import open_positions
from ttt_solve.solver.vocabulary import Side

POSITION_CHUNK = 16
GAME_CHUNK = 4

Progress = Callable[[int, int], None]


DRAWN_ABOVE = 3_000_000
"""A game that the book holds whole (every reachable position) with more stored positions than
this is sampled by number from its index (:mod:`solver.sampling`), so that no list of its rows
is made: 4x5 k=4 (168.7 million) and 5x5. A smaller game, or an opening book, is sampled from
the list of its rows, read in seconds (4x4 k=4: 1.2 million). Either way the draw depends on
the game and the seed alone, never on whether it is stored in blocks or as a table."""

TIMED_POSITIONS = 64
"""Positions an agent is timed on, to say how long a refused audit would take."""

EVERY_POSITION_LIMIT = 10_000_000
"""The most positions an audit poses: it keeps every graded move (about 400 bytes each, measured
on 3x4 k=3), and every reachable non-terminal position of 4x4 k=4 is 9.1 million (3.6 GB).
Every position of 4x5 k=4 (594 million, days of most agents' time) is refused with an
estimate, in favour of a sample."""


class AuditTooLargeError(TttError, ValueError):
    """An audit of every position of a game that has more than :data:`EVERY_POSITION_LIMIT`."""

    kind = ErrorKind.TOO_MANY_POSITIONS


def open_count(truth: Truth, per_class: bool) -> int:
    """How many positions the book holds whose game is not over, from its figures: reachable
    ones, or symmetry classes with ``per_class``."""
    figures = truth.info.figures
    total = figures.canonical if per_class else figures.reachable
    return total - sum(figures.terminal["canonical" if per_class else "reachable"].values())


def drawn_from_index(info: GameInfo) -> bool:
    """Whether positions of this game are drawn by number from its index
    (:data:`DRAWN_ABOVE`), rather than from the list of the book's rows."""
    return info.is_complete and info.positions > DRAWN_ABOVE


def drawn_by_number(truth: Truth, sample: int | None, per_class: bool) -> bool:
    """Whether :func:`select_positions` draws this sample from the game's index (a sample
    of every position lists them)."""
    return (
        sample is not None
        and drawn_from_index(truth.info)
        and sample < open_count(truth, per_class)
    )


def positions_asked(truth: Truth, sample: int | None, per_class: bool) -> int:
    """How many positions :func:`select_positions` gives, without selecting them."""
    count = open_count(truth, per_class)
    return count if sample is None else min(sample, count)


def select_positions(
    truth: Truth, sample: int | None, seed: int, *, per_class: bool = False
) -> list[tuple[int, int]]:
    """The ``(key, weight)`` positions to pose, in (ply, class, key) order.

    By default every reachable non-terminal position in its own orientation, weight 1, or
    ``sample`` of them drawn uniformly by a generator seeded with ``seed``. With
    ``per_class``, one board per symmetry class instead (its canonical orientation), weighted
    by the reachable positions it stands for (or ``sample`` classes drawn uniformly): exact
    only for an agent that plays the same way in every orientation.

    A sample of a large game is drawn by number (:func:`drawn_by_number`); more than
    :data:`EVERY_POSITION_LIMIT` positions are refused (:class:`AuditTooLargeError`).
    """
    if sample is not None and drawn_by_number(truth, sample, per_class):
        return drawn_positions(truth.rules, sample, seed, per_class=per_class)
    asked = positions_asked(truth, sample, per_class)
    if asked > EVERY_POSITION_LIMIT:
        raise AuditTooLargeError(too_large(truth, asked, per_class))
    return listed_positions(truth, sample, seed, per_class=per_class)


def too_large(truth: Truth, asked: int, per_class: bool, rate: float | None = None) -> str:
    """Why an audit of ``asked`` positions is refused, with its time at ``rate`` positions a
    second (the agent's, timed) where known."""
    what = ", one board per symmetry class," if per_class else ""
    boards = "boards" if per_class else "positions"
    took = ""
    if rate is not None:
        hours = asked / rate / 3600
        span = f"{hours:,.1f} hours" if hours >= 1 else f"{hours * 60:.0f} minutes"
        took = (
            f", about {span} at this agent's {rate:,.0f} a second (timed on "
            f"{TIMED_POSITIONS} of them in one process)"
        )
    return (
        f"every reachable non-terminal position of {truth.rules.name}{what} is {asked:,} "
        f"{boards} to pose{took}; an audit keeps every graded move and poses at most "
        f"{EVERY_POSITION_LIMIT:,}: draw a sample of them instead"
    )


def timed_rate(maker: Any, truth: Truth, seed: int, probe_seconds: float | None) -> float:
    """The agent's positions a second, posed in one process on :data:`TIMED_POSITIONS`
    positions drawn at random (after a few more, which load what it needs)."""
    drawn = keyed(truth.rules, drawn_positions(truth.rules, TIMED_POSITIONS + 8, seed))
    shared: dict[str, Any] = {"seed": seed, "jobs": 1, "probe_seconds": probe_seconds}
    pose(maker, truth.book, truth.rules, drawn[:8], **shared)
    started = time.perf_counter()
    pose(maker, truth.book, truth.rules, drawn[8:], **shared)
    return TIMED_POSITIONS / max(time.perf_counter() - started, 1e-6)


def drawn_positions(
    rules: Rules, sample: int, seed: int, *, per_class: bool = False
) -> list[tuple[int, int]]:
    """``sample`` positions (or classes) drawn by number from the game's index
    (:func:`solver.sampling.open_positions`), as :func:`select_positions` gives them."""
    drawn = itertools.islice(
        open_positions(rules, derive_seed(seed, "sample"), per_class=per_class), sample
    )
    chosen = sorted((p.ply, p.canonical_key, p.key, len(set(p.image_keys()))) for p in drawn)
    return [(key, images if per_class else 1) for _, _, key, images in chosen]


def listed_positions(
    truth: Truth, sample: int | None, seed: int, *, per_class: bool = False
) -> list[tuple[int, int]]:
    """The positions of :func:`select_positions`, drawn from the list of the book's rows."""
    rows = truth.nonterminal()
    rng = random.Random(derive_seed(seed, "sample"))
    if per_class:
        if sample is not None and sample < len(rows):
            rows = [rows[i] for i in sorted(rng.sample(range(len(rows)), sample))]
        return [(key, images) for _, key, images in rows]
    total = sum(images for _, _, images in rows)
    picked = None
    if sample is not None and sample < total:
        picked = sorted(rng.sample(range(total), sample))
    out: list[tuple[int, int]] = []
    start, index = 0, 0  # the first position of the class; the next picked one
    for _, key, images in rows:
        end = start + images
        if picked is None or (index < len(picked) and picked[index] < end):
            keys = sorted(set(Position.from_key(truth.rules, key).image_keys()))
            if len(keys) != images:
                raise truth.book.damaged(
                    f"its position {key} stands for {images} reachable positions, but it "
                    f"has {len(keys)} images",
                    truth.rules,
                )
            if picked is None:
                out += [(image, 1) for image in keys]
            else:
                while index < len(picked) and picked[index] < end:
                    out.append((keys[picked[index] - start], 1))
                    index += 1
        start = end
    return out


def _stays_here(makers: Sequence[Any], agents: Sequence[Any]) -> bool:
    """Whether the agents must run in this process: one made here (a notebook's function), or
    one that keeps a process or a timer of this one (an engine, a time limit)."""
    return not all(isinstance(m, AgentMaker) for m in makers) or any(
        getattr(agent, "external", False) for agent in agents
    )


def _close(agent: Any) -> None:
    """Stop what an agent runs outside this process (an engine), if it has a ``close``."""
    close = getattr(agent, "close", None)
    if callable(close):
        close()


def keyed(rules: Rules, rows: Sequence[tuple[int, int]]) -> list[tuple[Position, int]]:
    """The ``(key, weight)`` rows of :func:`select_positions` as :func:`pose` takes them."""
    return [(Position.from_key(rules, key), weight) for key, weight in rows]


class Answer(NamedTuple):
    """The agent's answer in one posed position: a legal cell, or the failure."""

    position: Position
    weight: int
    cell: int | None
    failure: Failure | None


def pose(
    maker: Any,
    book: Any,
    rules: Rules,
    rows: Sequence[tuple[Position, int]],
    *,
    seed: int = 0,
    jobs: int = 2,
    progress: Progress | None = None,
    probe_seconds: float | None = None,
) -> list[Answer]:
    """The agent's answer in each ``(position, weight)`` (``maker.build(book)`` makes it), its
    generator seeded per position from ``seed`` and the position's key."""
    seed_of = SeedDeriver(seed, "position")
    tasks = [(position, seed_of) for position, _ in rows]
    agent = maker.build(book)
    worker = Worker(rules, [agent])
    try:
        moves = run_chunks(
            worker,
            "moves",
            chunked(tasks, POSITION_CHUNK),
            makers=None if _stays_here([maker], [agent]) else [maker],
            jobs=jobs,
            progress=progress,
            probe_seconds=PROBE_SECONDS if probe_seconds is None else probe_seconds,
        )
    finally:
        _close(agent)
    answers = []
    for (position, weight), answer in zip(rows, moves):
        if not isinstance(answer, EngineFailure):
            try:
                answer = checked_move(agent.spec, position, answer)
            except IllegalMoveError as error:
                answer = illegal(agent.spec, position, error)
        if isinstance(answer, EngineFailure):
            answers.append(Answer(position, weight, None, Failure.of(answer, weight)))
        else:
            answers.append(Answer(position, weight, answer, None))
    return answers


class Played(NamedTuple):
    """One game: its moves, its winner (the other side when one forfeited), and the failure
    that ended it early, if any (its position says which side failed)."""

    moves: tuple[int, ...]
    winner: Side | None
    failure: EngineFailure | None

    @property
    def failed_side(self) -> Side | None:
        return None if self.failure is None else self.failure.position.to_move


def play(
    makers: Sequence[Any],
    rules: Rules,
    tasks: Sequence[tuple[int, int, int, int]],
    *,
    book: Any = None,
    jobs: int = 2,
    progress: Progress | None = None,
    probe_seconds: float | None = None,
) -> list[Played]:
    """The games ``(x maker index, o maker index, x seed, o seed)``, each to its end or to a
    failure, which forfeits it for the side that failed; every game is played whatever
    happened in the others."""
    agents = [maker.build(book) for maker in makers]
    worker = Worker(rules, agents)
    try:
        played = run_chunks(
            worker,
            "games_to_failure",
            chunked(tasks, GAME_CHUNK),
            makers=None if _stays_here(makers, agents) else list(makers),
            jobs=jobs,
            progress=progress,
            probe_seconds=PROBE_SECONDS if probe_seconds is None else probe_seconds,
        )
    finally:
        for agent in agents:
            _close(agent)
    return [Played(tuple(moves), winner, failure) for moves, winner, failure in played]


def audit_positions(
    maker: Any,
    truth: Truth,
    *,
    sample: int | None = None,
    per_class: bool = False,
    seed: int = 0,
    jobs: int = 2,
    progress: Progress | None = None,
    probe_seconds: float | None = None,
) -> tuple[list[Graded], int, list[Failure]]:
    """The agent's move in every (or a sample of the) reachable non-terminal positions
    (:func:`select_positions`), graded: the graded moves, how many positions the book could
    not grade (weighted), the failures."""
    asked = positions_asked(truth, sample, per_class)
    if asked > EVERY_POSITION_LIMIT and not drawn_by_number(truth, sample, per_class):
        rate = timed_rate(maker, truth, seed, probe_seconds)
        raise AuditTooLargeError(too_large(truth, asked, per_class, rate))
    answers = pose(
        maker,
        truth.book,
        truth.rules,
        keyed(truth.rules, select_positions(truth, sample, seed, per_class=per_class)),
        seed=seed,
        jobs=jobs,
        progress=progress,
        probe_seconds=probe_seconds,
    )
    records, ungraded, failures = [], 0, []
    for answer in answers:
        if answer.failure is not None:
            failures.append(answer.failure)
            continue
        assert answer.cell is not None
        record = grade_move(truth, answer.position, answer.cell, answer.weight)
        if record is None:
            ungraded += answer.weight
        else:
            records.append(record)
    return records, ungraded, failures


def audit_games(
    maker: Any,
    opponent: Any,
    truth: Truth,
    *,
    games: int,
    seed: int = 0,
    jobs: int = 2,
    progress: Progress | None = None,
    probe_seconds: float | None = None,
) -> tuple[list[Graded], int, list[GameResult], list[Failure]]:
    """``games`` games against ``opponent``, colours alternating (game 1: the agent is X); the
    agent's moves graded. Returns the graded moves, the agent's moves the book could not
    grade, the games, and the agent's failures (each forfeited its game; the opponent's
    forfeits are in the games)."""
    rules = truth.rules
    tasks = []
    for index in range(games):
        x_seed = derive_seed(seed, "game", index, "x")
        o_seed = derive_seed(seed, "game", index, "o")
        tasks.append((0, 1, x_seed, o_seed) if index % 2 == 0 else (1, 0, x_seed, o_seed))
    played = play(
        [maker, opponent],
        rules,
        tasks,
        book=truth.book,
        jobs=jobs,
        progress=progress,
        probe_seconds=probe_seconds,
    )
    records, ungraded, results, failures = [], 0, [], []
    for index, game in enumerate(played):
        side = Side.X if index % 2 == 0 else Side.O
        if game.failure is not None and game.failed_side == side:
            failures.append(Failure.of(game.failure))
        results.append(
            GameResult(
                side,
                game.moves,
                game.winner,
                None if game.failure is None else game.failure.kind,
                game.failed_side,
            )
        )
        graded, missing = grade_game(truth, rules, game.moves, side)
        records.extend(graded)
        ungraded += missing
    return records, ungraded, results, failures


def game_values(truth: Truth, moves: Sequence[int]) -> tuple[Any, ...] | None:
    """The value of each position of a game for the side to move, or ``None`` if the book
    lacks one."""
    position = Position.start(truth.rules)
    values = []
    for cell in (None, *moves):
        if cell is not None:
            position = position.play(cell)
        value = truth.value(position)
        if value is None:
            return None
        values.append(value)
    return tuple(values)


def evaluate(
    maker: Any,
    truth: Truth,
    *,
    sample: int | None = None,
    per_class: bool = False,
    games: int | None = None,
    opponent: Any = None,
    seed: int = 0,
    jobs: int = 2,
    worst_moves: int = 5,
    progress: Progress | None = None,
    probe_seconds: float | None = None,
    name: str | None = None,
    book: str | None = None,
) -> AuditReport:
    """Audit one agent against the book: its move in every (or ``sample`` of the) reachable
    non-terminal positions, each in its own orientation (``per_class``: one board per symmetry
    class, weighted; see :func:`select_positions`), or, given ``games``, its moves in that many
    games against ``opponent`` (a maker too), colours alternating.

    ``maker.build(book)`` makes the agent (an :class:`AgentMaker` may also run in other
    processes). Its failures are counted against it, never raised. ``name`` names the agent and
    ``book`` the truth in the report (default: the maker's spec, the book's display name);
    ``worst_moves``: how many of the costliest moves the report keeps with their pictures.
    """
    results: list[GameResult] | None = None
    shared: dict[str, Any] = {
        "seed": seed,
        "jobs": jobs,
        "progress": progress,
        "probe_seconds": probe_seconds,
    }
    if games is None:
        records, ungraded, failures = audit_positions(
            maker, truth, sample=sample, per_class=per_class, **shared
        )
    else:
        if opponent is None:
            raise ValueError("an audit in games needs an opponent")
        records, ungraded, results, failures = audit_games(
            maker, opponent, truth, games=games, **shared
        )
    summary = summarize(records, ungraded, failures)
    agent = name or str(getattr(maker, "spec", maker))
    opponent_name = None if games is None else str(getattr(opponent, "spec", opponent))
    histories: tuple[tuple[Any, ...] | None, ...] = ()
    if results is not None:
        histories = tuple(game_values(truth, game.moves) for game in results)
    costly = []
    for record in worst(records, worst_moves):
        values = truth.move_values(record.position) or {}
        costly.append(CostlyMove(record, tuple(truth.best_moves(record.position)), values))
    return AuditReport(
        agent=agent,
        rules=truth.rules,
        book=book if book is not None else truth.book.display_url,
        seed=seed,
        mode=AuditMode.POSITIONS if games is None else AuditMode.GAMES,
        summary=summary,
        records=tuple(records),
        failures=tuple(failures),
        games=None if results is None else tuple(results),
        worst=tuple(costly),
        sample=sample,
        opponent=opponent_name,
        per_class=per_class,
        game_values=histories,
        drawn=games is None and drawn_by_number(truth, sample, per_class),
    )
