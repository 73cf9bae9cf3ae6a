"""Grading an agent's moves against the book, and the report of an audit.

The truth is the book: :class:`Truth` gives the value of a position for the side to move and
of each move for its mover. :func:`grade_move` grades one move as ``docs/conventions.md`` defines
(:func:`solver.value.grade`): **best**, **sound**, or a **blunder** of kind ``win->draw``,
``win->loss`` or ``draw->loss``; :func:`grade_game` grades one side's moves in a game.
:func:`summarize` turns graded moves (and the moves the agent failed, :class:`Failure`) into
accuracy (share of the positions asked in which the value was kept), perfection (share in which
a best move was played), blunders by kind and a by-ply table; :func:`worst` picks the moves
that cost the most.

What puts an agent to work (the positions posed, the games played, in one process or several)
is :mod:`agents.grading`, whose :func:`~agents.grading.evaluate` hands back an
:class:`AuditReport`: the figures, the moves behind them, and what the audit asked, in words
(:attr:`AuditReport.description`). Its text and HTML are :mod:`ttt_solve.reports.audit`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ttt_solve.agents.engine import EngineFailure, FailureKind
from ttt_solve.book.rowfilter import RowFilter
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import (
    WIN_SCORE,
    BlunderKind,
    Grade,
    Outcome,
    Value,
    grade,
    move_score,
)
from ttt_solve.solver.vocabulary import Side, Word

PRELOAD_LIMIT = 3_000_000
"""Games with at most this many stored positions are read into memory for grading."""


class AuditMode(Word):
    """What an audit asks: every position (or a sample), or the moves of games against an
    opponent."""

    POSITIONS = "positions"
    GAMES = "games"


class Truth:
    """The book's values of one game (raises ``GameNotFoundError`` if it holds none).

    A game of at most :data:`PRELOAD_LIMIT` positions is read once into a dict
    ``canonical key -> score``; larger ones are looked up position by position: in the book,
    or for a game stored as a table in its files, one record a position (the book's rows
    would rebuild each position's best moves from all its children). Unknown positions (past
    an opening book) give ``None``.
    """

    def __init__(self, book: Any, rules: Rules, *, preload_limit: int = PRELOAD_LIMIT) -> None:
        self.book = book
        self.rules = rules
        self.info = book.game(rules)
        self.scores: dict[int, int] | None = None
        self.table: Any = None
        if self.info.positions > preload_limit and self.info.table_folder is not None:
            from ttt_solve.solver.tablebase.probe import open_tablebase

            self.table = self._from_table(
                lambda: open_tablebase(book.table_folder(self.info), rules)
            )
        elif self.info.positions <= preload_limit:
            self.scores = {key: score for _, key, score, _ in self._rows()}
            if len(self.scores) != self.info.positions:
                raise book.damaged(
                    f"it holds {len(self.scores):,} rows of {rules.name}, its game row "
                    f"counts {self.info.positions:,}",
                    rules,
                )

    def _rows(self, nonterminal_only: bool = False):  # noqa: ANN202
        """``(ply, key, score, images)`` of stored rows in (ply, key) order."""
        where = RowFilter.of(open_only=True) if nonterminal_only else None
        for row in self.book.rows(self.rules, where=where):
            # The score of Value(outcome, remoteness), without building one per row.
            score = row.value * (WIN_SCORE - row.remoteness) if row.value else 0
            yield row.ply, row.key, score, row.images

    def nonterminal(self) -> list[tuple[int, int, int]]:
        """``(ply, canonical key, images)`` of every stored position that is not over."""
        return [(ply, key, images) for ply, key, _, images in self._rows(nonterminal_only=True)]

    def _from_table(self, read: Any) -> Any:
        """What ``read`` gets from the game's table; a damaged one is the book's damage."""
        from ttt_solve.solver.tablebase.files import TableError

        try:
            return read()
        except TableError as error:
            raise self.book.damaged(
                f"the table of {self.rules.name}: {error}", self.rules
            ) from None

    def score(self, x: int, o: int) -> int | None:
        """The score (:mod:`solver.value`) of a position for the side to move, or ``None``."""
        if self.scores is not None:
            score = self.scores.get(self.rules.canonical(x, o)[0])
        elif self.table is not None:
            from ttt_solve.solver.tablebase.record import NONE, score_of_record

            record = self._from_table(lambda: self.table.record(Position(self.rules, x, o)))
            score = None if record == NONE else score_of_record(record)
        else:
            entry = self.book.get(Position(self.rules, x, o))
            score = None if entry is None else entry.value.score
        position = Position(self.rules, x, o)
        if score is None and self.info.holds_ply(position.ply):
            # Graded positions come from play, so they are reachable: the book should hold it.
            raise self.book.missing(position)
        return score

    def value(self, position: Position) -> Value | None:
        score = self.score(position.x, position.o)
        return None if score is None else Value.from_score(score, position.empty_count)

    def move_value(self, position: Position, cell: int) -> Value | None:
        """The value of a move for its mover."""
        child = position.play(cell)
        score = self.score(child.x, child.o)
        return None if score is None else Value.from_score(move_score(score), position.empty_count)

    def move_values(self, position: Position) -> dict[int, Value] | None:
        """Every legal move's value, or ``None`` if the book lacks a child."""
        values = {}
        for cell in position.legal_moves():
            value = self.move_value(position, cell)
            if value is None:
                return None
            values[cell] = value
        return values

    def best_moves(self, position: Position) -> list[int]:
        """The best moves (fastest win, slowest loss), ascending; ``[]`` if unknown."""
        values = self.move_values(position)
        if not values:
            return []
        top = max(v.score for v in values.values())
        return [c for c, v in values.items() if v.score == top]


class Graded(NamedTuple):
    """One graded move. ``value`` is the position's for the mover, ``move_value`` the move's."""

    position: Position
    cell: int
    weight: int
    value: Value
    move_value: Value
    grade: Grade
    kind: BlunderKind | None  # None: not a blunder

    @property
    def ply(self) -> int:
        return self.position.ply

    @property
    def cost(self) -> int:
        """How much score the move gave away (0 for a best move)."""
        return self.value.score - self.move_value.score


def grade_move(
    truth: Truth, position: Position, cell: int, weight: int = 1, value: Value | None = None
) -> Graded | None:
    """Grade one move, or ``None`` if the book does not know the position or the move."""
    value = value if value is not None else truth.value(position)
    move_value = truth.move_value(position, cell)
    if value is None or move_value is None:
        return None
    if move_value.score > value.score:  # no move is worth more than its position
        raise truth.book.damaged(
            f"in {position}, the move {position.rules.cell_name(cell)} is worth {move_value} "
            f"but the position only {value}",
            position.rules,
        )
    verdict, kind = grade(value, move_value)
    return Graded(position, cell, weight, value, move_value, verdict, kind)


class Failure(NamedTuple):
    """A request an agent failed (an engine's, a plug-in's or an adapted function's): counted
    under its kind, never graded.

    ``weight`` is the number of reachable positions the position stands for (positions mode)
    or 1 (games mode); ``spec`` names the engine that failed.
    """

    position: Position
    kind: FailureKind
    detail: str
    spec: str
    weight: int = 1

    @classmethod
    def of(cls, error: EngineFailure, weight: int = 1) -> Failure:
        return cls(error.position, error.kind, error.detail, error.spec, weight)

    @property
    def ply(self) -> int:
        return self.position.ply

    def to_dict(self) -> dict[str, object]:
        """The failure as plain data (``engine``: the agent that failed)."""
        return {
            "ply": self.ply,
            "position": str(self.position),
            "to_move": self.position.to_move,
            "weight": self.weight,
            "kind": self.kind,
            "detail": self.detail,
            "engine": self.spec,
        }


class _Rates:
    """Accuracy and perfection of totals that have ``moves`` (graded), ``failures`` (failed
    moves, weighted like the graded ones), ``best`` and ``sound``.

    **Accuracy** is the share of the positions asked (and known to the book) in which the agent
    kept the value: a failed move kept nothing, so it counts against the agent. **Perfection**
    is the share in which it played a best move. Where no position could be judged (none was
    asked, or the book knew none of them), both are ``None``, never 0.
    """

    moves: int
    best: int
    sound: int
    failures_total: int

    @property
    def judged(self) -> int:
        """The positions asked that the book could judge: graded moves and failed ones."""
        return self.moves + self.failures_total

    @property
    def accuracy(self) -> float | None:
        """The share of the positions asked in which the agent kept the value."""
        return (self.best + self.sound) / self.judged if self.judged else None

    @property
    def perfection(self) -> float | None:
        """The share of the positions asked in which the agent played a best move."""
        return self.best / self.judged if self.judged else None

    @property
    def accuracy_of_moves_made(self) -> float | None:
        """The share of the moves the agent made (its failures left out) that kept the value:
        a figure beside the accuracy, never instead of it."""
        return (self.best + self.sound) / self.moves if self.moves else None

    @property
    def perfection_of_moves_made(self) -> float | None:
        """The share of the moves the agent made (its failures left out) that were best."""
        return self.best / self.moves if self.moves else None


@dataclass(frozen=True)
class PlyRow(_Rates):
    """Weighted totals of the moves asked at one ply: graded, best, sound, blunders, failed."""

    ply: int
    moves: int
    best: int
    sound: int
    blunders: int
    failures_total: int = 0

    # A row exists only for a ply at which a move was asked: its shares are always known.
    @property
    def accuracy(self) -> float:
        return (self.best + self.sound) / self.judged

    @property
    def perfection(self) -> float:
        return self.best / self.judged


@dataclass(frozen=True)
class Summary(_Rates):
    """Weighted totals of the moves asked (``graded`` counts graded records, ``moves`` their
    weight; ``failed`` counts failure records, ``failures_total`` their weight)."""

    graded: int
    moves: int
    best: int
    sound: int
    blunders: int
    kinds: dict[BlunderKind, int] = field(default_factory=dict)
    by_ply: tuple[PlyRow, ...] = ()
    ungraded: int = 0
    failures: dict[FailureKind, int] = field(default_factory=dict)
    """Weighted failures by kind (every :class:`FailureKind` present, maybe 0)."""
    failed: int = 0
    """How many failure records (positions up to symmetry, or moves in games) those are."""
    failures_total: int = 0
    """The failed moves, weighted as the graded ones are: the sum of :attr:`failures`."""

    @property
    def asked(self) -> int:
        """Every position the agent was asked to move in (weighted): graded, failed, and those
        the book does not hold (not judged)."""
        return self.moves + self.failures_total + self.ungraded


def summarize(
    records: Sequence[Graded], ungraded: int = 0, failures: Sequence[Failure] = ()
) -> Summary:
    """Totals, blunders by kind and the by-ply table of the moves asked: the graded moves and
    the failed ones (which count against accuracy and perfection, and keep their ply's row)."""
    counts = {Grade.BEST: 0, Grade.SOUND: 0, Grade.BLUNDER: 0}
    kinds = dict.fromkeys(BlunderKind, 0)
    plies: dict[int, list[int]] = {}
    for r in records:
        counts[r.grade] += r.weight
        if r.kind:
            kinds[r.kind] += r.weight
        row = plies.setdefault(r.ply, [0, 0, 0, 0, 0])
        row[0] += r.weight
        row[1 + (Grade.BEST, Grade.SOUND, Grade.BLUNDER).index(r.grade)] += r.weight
    failed = dict.fromkeys(FailureKind, 0)
    for f in failures:
        failed[f.kind] += f.weight
        plies.setdefault(f.ply, [0, 0, 0, 0, 0])[4] += f.weight
    by_ply = tuple(PlyRow(ply, *plies[ply]) for ply in sorted(plies))
    return Summary(
        len(records),
        sum(counts.values()),
        counts[Grade.BEST],
        counts[Grade.SOUND],
        counts[Grade.BLUNDER],
        kinds,
        by_ply,
        ungraded,
        failed,
        len(failures),
        sum(failed.values()),
    )


def worst(records: Sequence[Graded], n: int = 5) -> list[Graded]:
    """The ``n`` costliest moves: blunders first, then by score given away, then weight."""
    ranked = sorted(
        (r for r in records if r.grade is not Grade.BEST),
        key=lambda r: (r.grade is not Grade.BLUNDER, -r.cost, -r.weight, r.ply, r.position.key),
    )
    return ranked[:n]


def graded_json(truth: Truth, record: Graded) -> dict[str, object]:
    """A graded move as plain data, with the best moves of its position (for JSON and CSV)."""
    return _graded_dict(record, truth.best_moves(record.position))


def _graded_dict(record: Graded, best_moves: Sequence[int]) -> dict[str, object]:
    rules = record.position.rules
    return {
        "ply": record.ply,
        "position": str(record.position),
        "to_move": record.position.to_move,
        "weight": record.weight,
        "move": rules.cell_name(record.cell),
        "grade": record.grade.value,
        "kind": record.kind,
        "value": str(record.value),
        "move_value": str(record.move_value),
        "best_moves": [rules.cell_name(c) for c in best_moves],
    }


def _figures(source: object, names: str) -> dict[str, object]:
    return {name: getattr(source, name) for name in names.split()}


def ply_row_json(row: PlyRow) -> dict[str, object]:
    """One row of the by-ply table as plain data (``failures``: the failed moves)."""
    out = _figures(row, "ply moves best sound blunders accuracy perfection")
    out["failures"] = row.failures_total
    return out


def summary_json(summary: Summary) -> dict[str, object]:
    """The figures of a summary as plain data: the positions asked, totals, rates (over every
    position asked; ``null`` when none could be judged), blunders by kind, by ply."""
    figures = _figures(
        summary,
        "asked graded moves ungraded accuracy perfection best sound blunders "
        "accuracy_of_moves_made perfection_of_moves_made",
    )
    figures["failed_moves"] = summary.failures_total
    figures["blunder_kinds"] = summary.kinds
    figures["by_ply"] = [ply_row_json(row) for row in summary.by_ply]
    return figures


def game_result_json(rules: Rules, result: GameResult) -> dict[str, object]:
    """One audit game as plain data: the agent's side, its result, who forfeited (the side
    that failed a move: ``"agent"``, ``"opponent"`` or ``null``) and why, the moves."""
    return {
        "agent_side": result.agent_side,
        "outcome": result.outcome.value,
        "forfeit": result.forfeited_by,
        "failure": result.failure,
        "moves": [rules.cell_name(c) for c in result.moves],
    }


class GameResult(NamedTuple):
    """One audit game: which side the agent played, the moves, and the winner.

    ``failure`` is the kind of failure that ended the game early, and ``failed_side`` the side
    that failed: that side forfeited the game, so ``winner`` is the other.
    """

    agent_side: Side
    moves: tuple[int, ...]
    winner: Side | None
    failure: FailureKind | None = None
    failed_side: Side | None = None

    @property
    def outcome(self) -> Outcome:
        """The result for the agent (a forfeit is a loss for the side that failed)."""
        if self.winner is None:
            return Outcome.DRAW
        return Outcome.WIN if self.winner == self.agent_side else Outcome.LOSS

    @property
    def forfeited_by(self) -> str | None:
        """``"agent"`` or ``"opponent"``: who lost the game by failing a move; else ``None``."""
        if self.failed_side is None:
            return None
        return "agent" if self.failed_side == self.agent_side else "opponent"


def grade_game(
    truth: Truth,
    rules: Rules,
    moves: Sequence[int],
    side: Side,
) -> tuple[list[Graded], int]:
    """The grades of one side's moves in a game, and how many
    of them could not be graded (positions the book does not hold)."""
    records, ungraded = [], 0
    position = Position.start(rules)
    for cell in moves:
        if position.to_move == side:
            record = grade_move(truth, position, cell)
            if record is None:
                ungraded += 1
            else:
                records.append(record)
        position = position.play(cell)
    return records, ungraded


# -- one audit, run and reported --------------------------------------------------------------


class CostlyMove(NamedTuple):
    """One of the costliest moves of an audit, with what a picture of it needs: the best moves
    of its position and every legal move's value for the mover."""

    graded: Graded
    best_moves: tuple[int, ...]
    move_values: dict[int, Value]

    def to_dict(self) -> dict[str, object]:
        return _graded_dict(self.graded, self.best_moves)


@dataclass(frozen=True, eq=False)
class AuditReport:
    """An audit's figures and the moves behind them: what ``ttt audit`` prints, its ``--json``
    (:meth:`to_dict`), the web explorer's audit pages and the notebook's display.

    ``records`` are every graded move, ``failures`` the requests the agent failed, ``games``
    the games played (``None`` in positions mode), ``worst`` the costliest moves.
    """

    agent: str
    rules: Rules
    book: str
    seed: int
    mode: AuditMode
    summary: Summary
    records: tuple[Graded, ...]
    failures: tuple[Failure, ...]
    games: tuple[GameResult, ...] | None
    worst: tuple[CostlyMove, ...]
    sample: int | None = None
    opponent: str | None = None
    per_class: bool = False
    """Positions mode: one board per symmetry class, weighted (else each position itself)."""
    game_values: tuple[tuple[Value, ...] | None, ...] = ()
    """Games mode: the value of each position of each game for the side to move (``None``
    for a game the book does not hold whole), for its value history."""
    drawn: bool = False
    """Positions mode: the sample was drawn by number from the game's index (a large game)."""

    def games_lost_first(self) -> list[tuple[int, GameResult]]:
        """The games with their numbers (1 for the first), lost first (forfeits first among
        them), then drawn, then won."""
        order = {Outcome.LOSS: 0, Outcome.DRAW: 1, Outcome.WIN: 2}
        numbered = list(enumerate(self.games or (), 1))
        return sorted(
            numbered,
            key=lambda item: (order[item[1].outcome], item[1].forfeited_by != "agent", item[0]),
        )

    @property
    def accuracy(self) -> float | None:
        """The share of the positions asked in which the agent kept the value (a failed move
        kept nothing); ``None`` when none could be judged."""
        return self.summary.accuracy

    @property
    def perfection(self) -> float | None:
        """The share of the positions asked in which the agent played a best move."""
        return self.summary.perfection

    @property
    def asked(self) -> int:
        """The positions the agent was asked to move in (weighted as the mode says)."""
        return self.summary.asked

    @property
    def failed_moves(self) -> int:
        """The moves the agent failed (weighted as the graded ones)."""
        return self.summary.failures_total

    @property
    def blunders(self) -> int:
        """Moves that changed the value (weighted)."""
        return self.summary.blunders

    @property
    def blunder_kinds(self) -> dict[BlunderKind, int]:
        return self.summary.kinds

    @property
    def moves(self) -> int:
        """Moves graded (weighted)."""
        return self.summary.moves

    @property
    def by_ply(self) -> tuple[PlyRow, ...]:
        return self.summary.by_ply

    @property
    def weighted(self) -> bool:
        """Whether each graded move stands for several reachable positions (one board per
        symmetry class)."""
        return self.mode == AuditMode.POSITIONS and self.per_class

    def to_dict(self) -> dict[str, object]:
        """The report as plain data: the figures of ``ttt audit --json``."""
        out: dict[str, object] = {
            "agent": self.agent,
            "game": self.rules.as_dict(),
            "book": self.book,
            "seed": self.seed,
            "mode": self.mode,
            "sample": self.sample,
            "per_class": self.per_class,
            "opponent": self.opponent,
            "description": self.description,
            **summary_json(self.summary),
            "worst": [costly.to_dict() for costly in self.worst],
            "failures": self.summary.failures,
            "failed_records": self.summary.failed,
            "failed": [failure.to_dict() for failure in self.failures],
        }
        if self.games is not None:
            out["games"] = [game_result_json(self.rules, game) for game in self.games]
        return out

    @property
    def description(self) -> str:
        """What the audit asked, in words, with how many: ``ttt audit``'s mode line."""
        games = None if self.games is None else len(self.games)
        asked = asked_sentence(
            self.mode,
            sample=self.sample,
            per_class=self.per_class,
            games=games,
            opponent=self.opponent,
            drawn=self.drawn,
        )
        summary = self.summary
        if self.mode == AuditMode.GAMES:
            return f"{asked}; the agent's own moves are graded, and a failed move forfeits its game"
        if self.per_class:
            return (
                f"{asked}: {summary.graded + summary.failed:,} boards standing for "
                f"{summary.asked:,} reachable positions; figures are weighted by the positions "
                f"each stands for (exact only for an agent that plays the same way in every "
                f"orientation)"
            )
        return f"{asked}: {summary.asked:,} positions asked"

    @property
    def scope(self) -> str:
        """What the audit asked in a few words, for a title (:func:`scope_phrase`)."""
        games = None if self.games is None else len(self.games)
        return scope_phrase(self.sample, self.per_class, games, self.opponent)

    def __repr__(self) -> str:
        from ttt_solve.reports.audit import headline

        return f"<AuditReport of {self.agent} on {self.rules.name}: {headline(self.summary)}>"

    def _repr_html_(self) -> str:
        from ttt_solve.reports.audit import audit_html

        return audit_html(self)


def asked_sentence(
    mode: AuditMode,
    *,
    sample: int | None = None,
    per_class: bool = False,
    games: int | None = None,
    opponent: str | None = None,
    drawn: bool = False,
) -> str:
    """What an audit asks of the agent, in words, before any figure is known: the start of
    :attr:`AuditReport.description`, and what the web's page of an audit says while it runs
    (``drawn``: a sample drawn by number from the game's index)."""
    how = ", drawn by number from the game's index" if drawn else ""
    if mode == AuditMode.GAMES:
        return f"{games} games against {opponent}, colours alternating (game 1: the agent is X)"
    if per_class:
        scope = (
            "every reachable non-terminal position, one board per symmetry class"
            if sample is None
            else f"a uniform random sample of {sample:,} symmetry classes of reachable "
            f"non-terminal positions{how}"
        )
        return f"{scope}, each posed once in the project's orientation"
    scope = (
        "every reachable non-terminal position"
        if sample is None
        else f"a uniform random sample of {sample:,} reachable non-terminal positions{how}"
    )
    return f"{scope}, each posed once in its own orientation"


def scope_phrase(
    sample: int | None, per_class: bool, games: int | None, opponent: str | None
) -> str:
    """What an audit (or each audit of a curve) asks, in a few words, for a title: ``every
    position``, ``500 sampled positions, one board per symmetry class``, ``100 games against
    random``."""
    if games is not None:
        return f"{games:,} games against {opponent}"
    asked = "every position" if sample is None else f"{sample:,} sampled positions"
    return asked + (", one board per symmetry class" if per_class else "")
