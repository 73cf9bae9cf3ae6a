"""Strength curves: an agent audited at many values of one parameter, several seeds each.

A curve is many audits (:mod:`agents.audit`): for each value of the varied parameter (say
``iterations=10,30,100``) the agent ``mcts:iterations=10``, ... is audited once per seed, in
every position or in games, exactly as ``ttt audit`` would with that spec and seed, so a point's
figures per seed are that audit's. The truth is read from the book once and shared by every
point and seed; each audit uses both cores as an audit does.

Per point: accuracy and perfection as the mean over seeds with a 95% interval (Student's t),
blunders by kind, and the seeds' summaries and games for the caller to present.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ttt_solve.agents.audit import GameResult, Summary, Truth
from ttt_solve.agents.grading import evaluate, positions_asked
from ttt_solve.agents.intervals import Interval, interval
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.spec import AGENTS, parse_spec
from ttt_solve.errors import TttError
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import BlunderKind, Outcome
from ttt_solve.solver.vocabulary import Side


class CurveError(TttError, ValueError):
    """A ``--vary`` that does not parse or does not fit the agent."""


class Vary(NamedTuple):
    """A parameter and the values it takes along the curve, as typed and as numbers."""

    param: str
    values: tuple[str, ...]
    numbers: tuple[float, ...]


def parse_vary(text: str) -> Vary:
    """``iterations=10,30,100`` -> the parameter and at least two distinct numeric values."""
    param, equals, rest = str(text).partition("=")
    param = param.strip().lower()
    values = tuple(v.strip() for v in rest.split(","))
    if not equals or not param or not all(values):
        raise CurveError(
            f"--vary {text!r} is not PARAM=V1,V2,... (e.g. --vary iterations=10,30,100)"
        )
    numbers = []
    for value in values:
        try:
            number = float(value)
        except ValueError:
            raise CurveError(f"--vary {text!r}: {value!r} is not a number") from None
        if not math.isfinite(number):
            raise CurveError(f"--vary {text!r}: {value!r} is not a finite number")
        numbers.append(number)
    if len(values) < 2:
        raise CurveError(f"--vary {text!r} has a single value: a curve needs two or more")
    if len(set(numbers)) < len(numbers):
        raise CurveError(f"--vary {text!r} repeats a value")
    return Vary(param, values, tuple(numbers))


def point_spec(agent_spec: str, param: str, value: str) -> str:
    """The spec of one point: ``agent_spec`` with ``param=value`` added.

    Built-in agents and ``openspiel:BOT`` take parameters after a colon, the first one, then
    commas; ``py:`` and ``cmd:`` specs take them after a comma.
    """
    spec = agent_spec.strip()
    name = spec.partition(":")[0].strip().lower()
    colons_before_params = 1 if name in AGENTS else 2 if name == "openspiel" else None
    if colons_before_params is None or spec.count(":") >= colons_before_params:
        separator = ","
    else:
        separator = ":"
    return f"{spec}{separator}{param}={value}"


class PointPlan(NamedTuple):
    value: str  # as typed in --vary
    x: float
    spec: str  # the agent audited at this point
    maker: Any = None  # what builds it (default: the spec's AgentMaker)


class CurvePlan(NamedTuple):
    """One agent's curve before it runs: its spec, the parameter and one spec per point."""

    agent: str
    param: str
    points: tuple[PointPlan, ...]


def plan_curve(agent_spec: str, vary: Vary) -> CurvePlan:
    """Check that the agent takes the parameter and every value; raise before any work."""
    parse_spec(agent_spec)
    if vary.param in _typed_keys(agent_spec):
        raise CurveError(
            f"--agent {agent_spec!r} already sets {vary.param}, which --vary varies: "
            f"leave it out of the spec"
        )
    points = []
    for value, number in zip(vary.values, vary.numbers):
        spec = point_spec(agent_spec, vary.param, value)
        parse_spec(spec)  # raises for a parameter the agent lacks or a value of the wrong type
        points.append(PointPlan(value, number, spec))
    return CurvePlan(agent_spec, vary.param, tuple(points))


def check_agents(plans: Sequence[CurvePlan], book: Any, db: str | None) -> None:
    """Build every point's agent once, so that a value the agent refuses (a range its
    constructor checks) or a missing optional package is reported before any work. External
    engines (the only agents with a process to close) are not started here: their specs were
    checked when parsed."""
    for plan in plans:
        for point in plan.points:
            if parse_spec(point.spec).name == "cmd":
                continue
            AgentMaker(point.spec, db).build(book)


def _typed_keys(agent_spec: str) -> set[str]:
    """The parameter names written in a spec (not those filled in by default)."""
    keys = set()
    for item in agent_spec.replace(":", ",").split(","):
        key, equals, _ = item.partition("=")
        if equals:
            keys.add(key.strip().lower())
    return keys


class SeedRun(NamedTuple):
    """One audit of a point: its seed, its summary, and its games (``None`` in positions mode)."""

    seed: int
    summary: Summary
    games: list[GameResult] | None


def _over_seeds(shares: Sequence[float | None]) -> Interval | None:
    known = [share for share in shares if share is not None]
    return interval(known) if known else None


@dataclass(frozen=True)
class Point:
    """One point of a curve: the agent at one value of the parameter, audited once per seed;
    with its rating against the reference ladder when the curve was rated
    (:func:`rate_points`)."""

    value: str
    x: float
    spec: str
    runs: tuple[SeedRun, ...]
    rating: Interval | None = None

    @property
    def accuracy(self) -> Interval | None:
        """Accuracy over the positions asked (failed moves count against it), mean over the
        seeds, with its 95% interval; ``None`` when no seed's positions could be judged."""
        return _over_seeds([run.summary.accuracy for run in self.runs])

    @property
    def perfection(self) -> Interval | None:
        """Perfection over the positions asked, as :attr:`accuracy`."""
        return _over_seeds([run.summary.perfection for run in self.runs])

    def failed_moves(self) -> float:
        """The failed moves, mean per seed (weighted like the audit's)."""
        return sum(run.summary.failures_total for run in self.runs) / len(self.runs)

    @property
    def kept_value(self) -> bool:
        """Whether the agent kept the value in every position asked of every seed: no blunder,
        no failed move, and some move graded."""
        return all(
            run.summary.moves and not run.summary.blunders and not run.summary.failures_total
            for run in self.runs
        )

    def blunder_kinds(self) -> dict[str, float]:
        """Blunders by kind, mean over seeds (weighted like the audit's)."""
        return {
            kind: sum(run.summary.kinds[kind] for run in self.runs) / len(self.runs)
            for kind in BlunderKind
        }

    def results(self) -> dict[Side, tuple[int, int, int, int]]:
        """Games, won, drawn and lost by the agent's side (a forfeit is a loss)."""
        out = {}
        for side in Side:
            mine = [game for game in self.games() if game.agent_side == side]
            won, drawn, lost = (sum(g.outcome is o for g in mine) for o in Outcome)
            out[side] = (len(mine), won, drawn, lost)
        return out

    def games(self) -> list[GameResult]:
        """Every seed's games, in seed order (empty in positions mode)."""
        return [game for run in self.runs for game in run.games or ()]


@dataclass(frozen=True)
class Curve:
    agent: str
    param: str
    points: tuple[Point, ...]

    @property
    def kept_value_from(self) -> Point | None:
        """The point of smallest value at which every graded move of every seed kept the
        value, if any."""
        kept = [point for point in self.points if point.kept_value]
        return min(kept, key=lambda point: point.x) if kept else None


class ReadOnceTruth(Truth):
    """A :class:`Truth` that also keeps the list of non-terminal positions after the first
    read, so that the audits of a curve read the book once between them."""

    def __init__(self, book: Any, rules: Rules, **kwargs: Any) -> None:
        super().__init__(book, rules, **kwargs)
        self._nonterminal: list[tuple[int, int, int]] | None = None

    def nonterminal(self) -> list[tuple[int, int, int]]:
        if self._nonterminal is None:
            self._nonterminal = super().nonterminal()
        return self._nonterminal


def run_curves(
    plans: Sequence[CurvePlan],
    truth: Truth,
    *,
    db: str | None,
    seeds: Sequence[int],
    sample: int | None = None,
    per_class: bool = False,
    games: int | None = None,
    opponent: Any = None,
    jobs: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> list[Curve]:
    """Audit every point of every plan once per seed (:func:`agents.grading.evaluate`): in
    positions mode (every position, or ``sample`` of them), or, given ``games``, in that many
    games against ``opponent`` (a spec or a maker).

    ``progress(done, total)`` counts the tasks of the whole run (positions or games).
    """
    if games is not None and opponent is None:
        raise CurveError("games mode needs an opponent")
    audits = sum(len(plan.points) for plan in plans) * len(seeds)
    per_audit = games if games is not None else positions_asked(truth, sample, per_class)
    total = audits * per_audit
    finished = 0

    def step(done: int, _of: int) -> None:
        if progress is not None:
            progress(finished + done, total)

    rival = AgentMaker(opponent, db) if isinstance(opponent, str) else opponent
    curves = []
    for plan in plans:
        points = []
        for point in plan.points:
            runs = []
            maker = point.maker or AgentMaker(point.spec, db)
            for seed in seeds:
                report = evaluate(
                    maker,
                    truth,
                    sample=sample,
                    per_class=per_class,
                    games=games,
                    opponent=rival,
                    seed=seed,
                    jobs=jobs,
                    progress=step,
                    worst_moves=0,
                    name=point.spec,
                )
                results = None if report.games is None else list(report.games)
                runs.append(SeedRun(seed, report.summary, results))
                finished += per_audit
                step(0, total)
            points.append(Point(point.value, point.x, point.spec, tuple(runs)))
        curves.append(Curve(plan.agent, plan.param, tuple(points)))
    return curves


def rate_points(
    curves: Sequence[Curve],
    book: Any,
    db: str | None,
    rules: Rules,
    *,
    games: int,
    seed: int,
    cache: bool = True,
    jobs: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[Curve], Any]:
    """Each point's agent rated against the reference ladder (:mod:`agents.ladder`, played
    and cached on first use), ``games`` games per pair; the curves with their points' ratings
    and the ladder's :class:`agents.ladder.LadderRatings`."""
    import dataclasses

    from ttt_solve.agents.ladder import rate_on_ladder

    specs = [point.spec for one in curves for point in one.points]
    result = rate_on_ladder(
        book,
        db,
        rules,
        specs,
        games=games,
        seed=seed,
        audit=False,
        cache=cache,
        jobs=jobs,
        progress=progress,
    )
    rated = [
        dataclasses.replace(
            one,
            points=tuple(
                dataclasses.replace(point, rating=result.rating(point.spec).rating)
                for point in one.points
            ),
        )
        for one in curves
    ]
    return rated, result


@dataclass(frozen=True)
class CurveReport:
    """Strength curves (one :class:`Curve` per agent) of one game: ``ttt curve`` prints
    :meth:`text`, its ``--json`` is :meth:`to_dict`, a notebook shows :meth:`_repr_html_`.
    ``mode`` says what was audited ("every position", "100 games against random")."""

    rules: Rules
    mode: str
    seeds: tuple[int, ...]
    curves: tuple[Curve, ...]
    games_mode: bool = False
    book: str = ""  # the book's name, for JSON
    truth: str = "the book"  # the book described, for the text

    @property
    def title(self) -> str:
        seeds = len(self.seeds)
        return f"{self.rules.name}, {self.mode}, {seeds} seed{'s' if seeds > 1 else ''}"

    def to_dict(self) -> dict[str, object]:
        """The curves as plain data: the figures of ``ttt curve --json``."""
        return _curves_dict(self)

    def text(self) -> str:
        from ttt_solve.presentation import display

        return "\n".join(display.curve_lines(self))

    def __repr__(self) -> str:
        lines = [f"<CurveReport {self.title}:"]
        for one in self.curves:
            shares = ", ".join(
                f"{point.value}: "
                + ("-" if point.accuracy is None else f"{100 * point.accuracy.mean:.1f}%")
                for point in one.points
            )
            lines.append(f"  {one.agent} accuracy by {one.param}: {shares}")
        return "\n".join(lines) + ">"

    def chart(self) -> Any:
        """The curves' chart (a matplotlib figure; needs the plot extra)."""
        from ttt_solve.presentation.charts import curve_chart

        return curve_chart(list(self.curves), self.title)

    def _repr_html_(self) -> str:
        from ttt_solve.presentation import display

        return display.curve_html(self)


def _curves_dict(report: CurveReport) -> dict[str, object]:
    curves, rules, book = report.curves, report.rules, report.book
    games_mode, description, seeds = report.games_mode, report.mode, list(report.seeds)

    def share(value: Interval | None) -> dict[str, float] | None:
        if value is None:
            return None
        return {"mean": value.mean, "low": value.low, "high": value.high}

    out_curves = []
    for one in curves:
        kept = one.kept_value_from
        points = []
        for point in one.points:
            entry: dict[str, object] = {
                "value": point.value,
                "spec": point.spec,
                "accuracy": share(point.accuracy),
                "perfection": share(point.perfection),
                "blunder_kinds": point.blunder_kinds(),
                "failed_moves": point.failed_moves(),
                "kept_value": point.kept_value,
                "runs": [
                    {
                        "seed": run.seed,
                        "asked": run.summary.asked,
                        "moves": run.summary.moves,
                        "failed_moves": run.summary.failures_total,
                        "accuracy": run.summary.accuracy,
                        "perfection": run.summary.perfection,
                        "best": run.summary.best,
                        "sound": run.summary.sound,
                        "blunders": run.summary.blunders,
                        "blunder_kinds": run.summary.kinds,
                        "ungraded": run.summary.ungraded,
                        "failures": run.summary.failures,
                    }
                    for run in point.runs
                ],
            }
            if point.rating is not None:
                entry["rating"] = {
                    "rating": point.rating.mean,
                    "low": point.rating.low,
                    "high": point.rating.high,
                }
            if point.runs[0].games is not None:
                entry["games"] = {
                    side: {"games": n, "won": won, "drawn": drawn, "lost": lost}
                    for side, (n, won, drawn, lost) in point.results().items()
                }
            points.append(entry)
        out_curves.append(
            {
                "agent": one.agent,
                "param": one.param,
                "kept_value_from": None if kept is None else kept.value,
                "points": points,
            }
        )
    return {
        "game": rules.as_dict(),
        "book": book,
        "mode": "games" if games_mode else "positions",
        "description": description,
        "seeds": seeds,
        "curves": out_curves,
    }
