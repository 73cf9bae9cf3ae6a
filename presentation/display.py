"""Reports for people: the tables of an audit for the terminal, and the HTML a notebook shows.

The command line prints an audit's summary, games and by-ply tables from the rows made here
(:func:`summary_rows`, :func:`game_rows`, :func:`ply_rows`); a notebook shows the same rows as
HTML, with the boards drawn by :mod:`ttt_solve.presentation.svg` from the cell model of
:mod:`ttt_solve.presentation.picture` and the charts drawn by :mod:`ttt_solve.presentation.charts`:

* :func:`analysis_html`: a position's board with every move's value, and its moves grouped
  winning / drawing / losing, each group best first;
* :func:`audit_html`: the summary, the by-ply chart, the costliest moves as small boards (the
  agent's move framed, the best moves starred), the games and the failures;
* :func:`curve_html`: a strength curve's chart and table;
* :func:`game_html`: a played game: its last position, its moves and its value history.

Every function returns a self-contained HTML fragment (inline styles, no script), the same
for the same input. Nothing here is imported until something is displayed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from tabulate import tabulate

from ttt_solve.agents.audit import all_best, share_text
from ttt_solve.agents.engine import FailureKind
from ttt_solve.presentation import charts, picture, svg
from ttt_solve.presentation.palette import VALUES
from ttt_solve.solver.value import BlunderKind, Outcome
from ttt_solve.solver.vocabulary import Side

if TYPE_CHECKING:
    from ttt_solve.agents.audit import AuditReport, GameResult, Summary
    from ttt_solve.agents.intervals import Interval
    from ttt_solve.book.oracle import Analysis

SMALL_BOARD = 150
"""The width of a board among several (the costliest moves), in pixels."""

_FONT = "font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; font-size: 14px;"
_TABLE = "border-collapse: collapse; margin: 4px 0 12px 0;"
_CELL = "padding: 2px 10px; border-bottom: 1px solid #d9e2ec; text-align: left;"
_NUMBER = "padding: 2px 10px; border-bottom: 1px solid #d9e2ec; text-align: right;"


def percent(share: float | None) -> str:
    return share_text(share)


def count(n: int) -> str:
    return f"{n:,}"


# -- the rows of an audit's tables -----------------------------------------------------------


ACCURACY_COUNTS = (
    "accuracy and perfection count every position asked that the book holds: a failed move "
    "kept no value and was no best move"
)
"""What an accuracy counts, said beside it."""


def summary_rows(
    summary: Summary, weighted: bool, engine: bool = False, in_games: bool = False
) -> list[tuple[str, str]]:
    """The summary table: the positions asked, accuracy and perfection over them, the moves
    graded and failed; ``engine`` shows an engine's failures by kind even when there are none
    (the failures of any agent are shown when there are some)."""
    symmetry = " up to symmetry" if weighted else ""
    asked = count(summary.asked) + (
        f" ({count(summary.graded + summary.failed)}{symmetry})" if weighted else ""
    )
    rows = [
        ("moves asked of the agent" if in_games else "positions asked", asked),
        ("accuracy (value kept)", percent(summary.accuracy)),
        ("perfection (best moves)", percent(summary.perfection)),
        (
            "moves graded",
            count(summary.moves) + (f" ({count(summary.graded)}{symmetry})" if weighted else ""),
        ),
    ]
    if engine or summary.failed:
        rows.append(
            (
                "failed moves (count against accuracy)",
                count(summary.failures_total)
                + (f" ({count(summary.failed)}{symmetry})" if weighted else ""),
            )
        )
        rows += [(f"  failures {kind}", count(summary.failures[kind])) for kind in FailureKind]
    rows.append(
        (
            "best / sound / blunder",
            f"{count(summary.best)} / {count(summary.sound)} / {count(summary.blunders)}",
        )
    )
    rows += [(f"  blunders {kind}", count(summary.kinds[kind])) for kind in BlunderKind]
    if summary.failed and summary.moves:
        rows.append(
            (
                "accuracy of the moves made (failures left out)",
                percent(summary.accuracy_of_moves_made),
            )
        )
    if summary.ungraded:
        rows.append(("not in the book (not judged)", count(summary.ungraded)))
    return rows


def nothing_graded(summary: Summary) -> str:
    """What an audit that graded no move says instead of its by-ply figures."""
    why = []
    if summary.failed:
        why.append("every move asked of the agent failed (see the failures below)")
    if summary.ungraded:
        why.append("the book holds none of the positions reached")
    return "no move was graded" + (f": {'; '.join(why)}" if why else "") + "."


PLY_HEADERS = ["ply", "asked", "best", "sound", "blunders", "failed", "accuracy", "perfection"]


def ply_rows(summary: Summary) -> list[list[object]]:
    """One row per ply at which the agent was asked to move, also where every move failed."""
    return [
        [
            row.ply,
            count(row.judged),
            count(row.best),
            count(row.sound),
            count(row.blunders),
            count(row.failures_total),
            percent(row.accuracy),
            percent(row.perfection),
        ]
        for row in summary.by_ply
    ]


def game_rows(results: Sequence[GameResult]) -> list[list[object]]:
    """Per colour: games, won, drawn, lost, and (if any game was) lost and won by forfeit."""
    lost_by, won_by = _forfeit_columns(results)
    rows = []
    for side in Side:
        mine = [r for r in results if r.agent_side == side]
        tally = {o: sum(r.outcome is o for r in mine) for o in Outcome}
        rows.append(
            [
                f"agent as {side.upper()}",
                len(mine),
                tally[Outcome.WIN],
                tally[Outcome.DRAW],
                tally[Outcome.LOSS],
            ]
            + ([sum(r.forfeited_by == "agent" for r in mine)] if lost_by else [])
            + ([sum(r.forfeited_by == "opponent" for r in mine)] if won_by else [])
        )
    return rows


def _forfeit_columns(results: Sequence[GameResult]) -> tuple[bool, bool]:
    return (
        any(r.forfeited_by == "agent" for r in results),
        any(r.forfeited_by == "opponent" for r in results),
    )


def game_headers(results: Sequence[GameResult]) -> list[str]:
    lost_by, won_by = _forfeit_columns(results)
    return [
        "",
        "games",
        "won",
        "drawn",
        "lost",
        *(["lost by forfeit"] if lost_by else []),
        *(["won by forfeit"] if won_by else []),
    ]


def forfeit_sentence(results: Sequence[GameResult]) -> str | None:
    """The forfeits of an audit's games in words, or ``None`` when there were none."""
    lost = sum(r.forfeited_by == "agent" for r in results)
    won = sum(r.forfeited_by == "opponent" for r in results)
    if not lost and not won:
        return None
    parts = []
    if lost:
        parts.append(
            f"The agent forfeited {lost:,} of {len(results):,} games by failing a move "
            f"(counted as lost)"
        )
    if won:
        parts.append(
            f"{'the' if parts else 'The'} opponent forfeited {won:,} (counted as won by the agent)"
        )
    return "; ".join(parts) + "."


def ply_chart(summary: Summary, title: str) -> charts.Figure:
    """Accuracy and perfection by ply over the moves asked (``ttt audit --plot``, and an
    audit's display)."""
    plies = [row.ply for row in summary.by_ply]
    return charts.line_chart(
        [
            charts.Series("accuracy (value kept)", plies, [r.accuracy for r in summary.by_ply]),
            charts.Series("perfection (best moves)", plies, [r.perfection for r in summary.by_ply]),
        ],
        title=title,
        xlabel="ply (moves already played)",
        ylabel="share of the agent's moves",
        percent=True,
    )


# -- HTML pieces ------------------------------------------------------------------------------


def table(rows: Iterable[Sequence[object]], headers: Sequence[str] = ()) -> str:
    """A plain HTML table; numbers and percentages right-aligned."""
    head = ""
    if headers:
        head = "<tr>" + "".join(
            f'<th style="{_CELL} font-weight: 600;">{escape(str(h))}</th>' for h in headers
        )
        head += "</tr>"
    body = []
    for row in rows:
        cells = []
        for index, value in enumerate(row):
            text = str(value)
            numeric = index > 0 and text.replace(",", "").replace("%", "").replace(".", "")
            style = _NUMBER if numeric and numeric.split(" ")[0].isdigit() else _CELL
            cells.append(f'<td style="{style}">{escape(text)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table style="{_TABLE}">{head}{"".join(body)}</table>'


def figure_svg(figure: charts.Figure) -> str:
    """A chart as inline SVG (its XML prolog left out, so that it sits inside HTML)."""
    text = charts.render(figure, "svg").decode("utf-8")
    start = text.find("<svg")
    return text[start:] if start >= 0 else text


def chart_or_nothing(make: Any) -> str:
    """``make()``'s chart as inline SVG, or ``""`` when matplotlib is not installed."""
    try:
        return f'<div style="max-width: 720px;">{fluid(figure_svg(make()))}</div>'
    except charts.ChartsUnavailableError:
        return ""


def fluid(picture_svg: str) -> str:
    """An SVG that shrinks to a narrow screen (a phone) instead of being cut off there."""
    return picture_svg.replace("<svg ", '<svg style="max-width: 100%; height: auto;" ', 1)


def tiles(items: Iterable[tuple[str, str]]) -> str:
    """Pictures side by side, each with its caption under it, wrapping on narrow screens."""
    parts = [
        f'<figure style="margin: 0; width: {SMALL_BOARD + 20}px;">{picture_}'
        f'<figcaption style="font-size: 12px; line-height: 1.35;">{caption}</figcaption></figure>'
        for picture_, caption in items
    ]
    return (
        '<div style="display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start;">'
        + "".join(parts)
        + "</div>"
    )


def _frame(body: str) -> str:
    return f'<div style="{_FONT} line-height: 1.4;">{body}</div>'


def _heading(text: str) -> str:
    return f'<div style="font-weight: 600; font-size: 15px; margin: 6px 0;">{escape(text)}</div>'


def _value_text(outcome: Outcome, remoteness: int) -> str:
    colour = VALUES[outcome].edge
    return (
        f'<span style="color: {colour}; font-weight: 600;">{outcome.value} in {remoteness}</span>'
    )


# -- a position's analysis -------------------------------------------------------------------

_GROUPS = ((Outcome.WIN, "winning"), (Outcome.DRAW, "drawing"), (Outcome.LOSS, "losing"))


def analysis_html(analysis: Analysis) -> str:
    """A position's board with every move's value, and its moves grouped by value."""
    position, value = analysis.position, analysis.value
    board = svg.board(picture.of_analysis(analysis))
    if position.is_terminal:
        head = f"{picture.board(position).caption}: the game is over"
    else:
        head = f"{position.to_move.upper()} to move (ply {position.ply}): "
    lines = [
        f"<div>{escape(head)}"
        + ("" if position.is_terminal else _value_text(value.outcome, value.remoteness))
        + f' <span style="color: #5f6b7a;">({escape(_source(analysis))})</span></div>'
    ]
    best = set(analysis.best_moves)
    for outcome, word in _GROUPS:
        moves = [m for m in analysis.moves if m.value.outcome is outcome]
        if not moves:
            continue
        entries = ", ".join(
            f"<b>{escape(m.name)}</b>" + ("★" if m.cell in best else "") + f" {m.value.remoteness}"
            for m in moves
        )
        lines.append(
            f'<div><span style="color: {VALUES[outcome].edge}; font-weight: 600;">'
            f"{word} ({len(moves)}):</span> {entries}</div>"
        )
    if analysis.moves:
        lines.append(
            '<div style="color: #5f6b7a; font-size: 12px;">each move: its cell and the plies to '
            "the end under perfect play; ★ best</div>"
        )
    return _frame(
        '<div style="display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start;">'
        f"<div>{board}</div><div>{''.join(lines)}</div></div>"
    )


def _source(analysis: Analysis) -> str:
    if analysis.source == "book":
        return "from the book"
    searched = f"searched live: {analysis.nodes:,} nodes, {analysis.seconds:.2f} s"
    return searched if analysis.source == "search" else "value from the book; moves " + searched


# -- an audit ---------------------------------------------------------------------------------


def audit_html(report: AuditReport) -> str:
    """An audit's summary, by-ply chart, costliest moves, games and failures."""
    summary = report.summary
    engine = report.agent.lower().startswith("cmd:")
    parts = [
        _heading(f"Audit of {report.agent} on {report.rules.name} (seed {report.seed})"),
        f'<div style="color: #5f6b7a;">truth: book {escape(report.book)}; '
        f"{escape(report.description)}</div>",
        table(summary_rows(summary, report.weighted, engine, report.mode == "games")),
        f'<div style="color: #5f6b7a; font-size: 12px;">{escape(ACCURACY_COUNTS)}.</div>',
    ]
    if report.games is not None:
        parts.append(_heading("Games (results for the agent)"))
        parts.append(table(game_rows(report.games), game_headers(report.games)))
        forfeits = forfeit_sentence(report.games)
        if forfeits:
            parts.append(f"<div>{escape(forfeits)}</div>")
        games_part = games_html(report)
    if summary.by_ply:
        where = "every position" if report.games is None else f"{len(report.games)} games"
        title = f"{report.agent} on {report.rules.name}, {where}"
        parts.append(chart_or_nothing(lambda: ply_chart(summary, title)))
        parts.append(
            "<details><summary>by ply</summary>"
            + table(ply_rows(summary), PLY_HEADERS)
            + "</details>"
        )
    if report.worst:
        parts.append(_heading("Costliest moves (framed: the agent's move; ★ the best moves)"))
        boards = []
        for index, costly in enumerate(report.worst, 1):
            record = costly.graded
            rules = record.position.rules
            drawn = picture.board(
                record.position,
                values=costly.move_values,
                best=costly.best_moves,
                marked=[record.cell],
            )
            verdict = record.grade.value + (f" {record.kind}" if record.kind else "")
            best = " ".join(rules.cell_name(c) for c in costly.best_moves) or "-"
            caption = (
                f"#{index}, ply {record.ply}: played <b>{rules.cell_name(record.cell)}</b> "
                f"({escape(str(record.move_value))}, {escape(verdict)}); best {escape(best)} "
                f"({escape(str(record.value))})"
                + (f"; stands for {record.weight}" if report.weighted else "")
            )
            boards.append((svg.board(drawn, size=SMALL_BOARD), caption))
        parts.append(tiles(boards))
    elif summary.moves:
        parts.append(f"<div>{escape(all_best(summary).capitalize())}</div>")
    else:
        parts.append(f"<div>{escape(nothing_graded(summary).capitalize())}</div>")
    if report.games is not None:
        parts.append(_heading("The games, lost first"))
        parts.append(games_part)
    if report.failures:
        shown = report.failures[:10]
        items = "".join(
            f"<li>ply {f.ply}, {escape(str(f.position))}: <b>{escape(f.kind)}</b>: "
            f"{escape(f.detail)}</li>"
            for f in shown
        )
        more = f" (the first {len(shown)})" if len(shown) < len(report.failures) else ""
        parts.append(
            _heading(
                f"Failed moves: {report.failed_moves:,}, counted against accuracy and "
                f"perfection{more}"
            )
        )
        parts.append(f'<ul style="margin: 0;">{items}</ul>')
    return _frame("".join(parts))


# -- a curve ---------------------------------------------------------------------------------


def interval_text(share: Any) -> str:
    """A share over seeds with its interval (``None``: nothing could be judged)."""
    if share is None:
        return percent(None)
    mean, low, high = share
    if low == high:
        return percent(mean)
    return f"{percent(mean)} [{100 * low:.1f}-{100 * high:.1f}]"


def curve_lines(report: Any) -> list[str]:
    """``ttt curve``'s report: what was audited, the seeds, a table per agent, and the value
    from which each kept the value."""
    seeds = report.seeds
    lines = [f"curve on {report.rules.name}, {report.mode}; truth: {report.truth}"]
    lines.append(
        f"seed {seeds[0]}"
        if len(seeds) == 1
        else f"seeds {seeds[0]} to {seeds[-1]}; shares are the mean over seeds "
        f"[95% interval]; blunders: mean per seed"
        + ("; games: summed over seeds" if report.games_mode else "")
    )
    for one in report.curves:
        failed = curve_failed(one)
        lines.append("")
        lines.append(
            tabulate(
                [curve_row(point, report.games_mode, failed) for point in one.points],
                headers=curve_headers(one, report.games_mode),
                tablefmt="simple_outline",
                disable_numparse=True,
            )
        )
        lines.append(kept_sentence(one))
    return lines


def curve_html(report: Any) -> str:
    """Strength curves: the chart and one table per agent, as the terminal's."""
    parts = [_heading(f"Strength curves: {report.title}"), chart_or_nothing(report.chart)]
    for one in report.curves:
        rows = [curve_row(point, report.games_mode, curve_failed(one)) for point in one.points]
        parts.append(table(rows, curve_headers(one, report.games_mode)))
        parts.append(f"<div>{escape(kept_sentence(one))}</div>")
    return _frame("".join(parts))


def kept_sentence(one: Any) -> str:
    kept = one.kept_value_from
    if kept is None:
        return f"{one.agent}: no value tried kept the value in every position asked, every seed."
    return (
        f"{one.agent}: kept the value in every position asked, every seed, from "
        f"{one.param}={kept.value} (the smallest such value tried)."
    )


def curve_headers(one: Any, games_mode: bool) -> list[str]:
    headers = [one.param, "accuracy", "perfection", *BlunderKind]
    if curve_failed(one):
        headers.append("failed moves")
    if games_mode:
        headers += ["as X: won/drawn/lost", "as O: won/drawn/lost"]
    if one.points[0].rating is not None:
        headers.append("rating [95%]")
    return [f"{one.agent}: {one.param}", *headers[1:]]


def curve_failed(one: Any) -> bool:
    """Whether any point of a curve failed a move (its tables then count them)."""
    return any(point.failed_moves() for point in one.points)


def rating_text(rating: Interval) -> str:
    return f"{elo(rating.mean)} [{elo(rating.low)} to {elo(rating.high)}]"


def curve_row(point: Any, games_mode: bool, failed: bool) -> list[str]:
    kinds = point.blunder_kinds()
    row = [
        point.value,
        interval_text(point.accuracy),
        interval_text(point.perfection),
        *(f"{kinds[kind]:,.1f}" for kind in BlunderKind),
    ]
    if failed:
        row.append(f"{point.failed_moves():,.1f}")
    if games_mode:
        for _label, _games, won, drawn, lost, *_ in game_rows(point.games()):
            row.append(f"{won}/{drawn}/{lost}")
    if point.rating is not None:
        row.append(rating_text(point.rating))
    return row


# -- a played game ----------------------------------------------------------------------------


def game_html(game: Any) -> str:
    """A played game (a :class:`~ttt_solve.session.PlayedGame`): its last position with the
    last move shaded and any winning line struck, its moves, and its value history when the
    values of its positions are known."""
    record = game.record
    heading = f"{game.x_name} (X) against {game.o_name} (O) on {record.rules.name}: {game.result}"
    return _frame(_heading(heading) + game_view(record, game.values))


def game_view(record: Any, values: Sequence[Any] | None, *, size: int | None = None) -> str:
    """A game (a :class:`~ttt_solve.agents.match.GameRecord`) drawn: its last position, its
    moves named by cell and numbered, and its value history when ``values`` (one per
    position) are known."""
    rules = record.rules
    positions = record.positions()
    last = record.moves[-1] if record.moves else None
    drawn = picture.board(positions[-1], lastmove=last)
    board = svg.board(drawn) if size is None else svg.board(drawn, size=size)
    first = positions[0]
    names = [rules.cell_name(cell) for cell in record.moves]
    if not first.x_to_move:  # numbered as a game from the empty board: O's move ends a pair
        names.insert(0, "...")
    numbered = " ".join(
        f"{(first.ply + index) // 2 + 1}. {' '.join(names[index : index + 2])}"
        for index in range(0, len(names), 2)
    )
    if first.ply:
        numbered = f"from {first}: {numbered}"
    parts = [
        '<div style="display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start;">'
        f'<div style="max-width: 100%;">{board}<div>{escape(numbered) or "no moves"}</div></div>'
    ]
    if values is not None:
        history = picture.history(rules, list(zip(positions, values)), moves=record.moves)
        parts.append(f'<div style="max-width: 100%;">{fluid(svg.value_history(history))}</div>')
    parts.append("</div>")
    return "".join(parts)


SHOWN_GAMES = 20
"""The games an audit's notebook display draws (lost first); the rest are counted."""


def games_html(report: AuditReport) -> str:
    """An audit's games, lost first, each drawn with its moves and value history."""
    from ttt_solve.agents.match import GameRecord

    assert report.games is not None
    rules = report.rules
    ordered = report.games_lost_first()
    parts = []
    for number, game in ordered[:SHOWN_GAMES]:
        words = {"win": "won", "draw": "drawn", "loss": "lost"}[game.outcome.value]
        if game.forfeited_by == "agent":
            words += f" by forfeit: its move at ply {len(game.moves)} failed ({game.failure})"
        elif game.forfeited_by == "opponent":
            words += f" by forfeit: the opponent's move at ply {len(game.moves)} failed"
        title = f"Game {number}: the agent as {game.agent_side.upper()}, {words}"
        values = report.game_values[number - 1] if report.game_values else None
        record = GameRecord(rules, game.moves, game.winner)
        parts.append(
            f'<div style="margin: 10px 0;">{_heading(title)}'
            f"{game_view(record, values, size=SMALL_BOARD)}</div>"
        )
    more = len(ordered) - SHOWN_GAMES
    if more > 0:
        parts.append(f"<div>and {more:,} more games (report.games holds them all)</div>")
    return "".join(parts)


# -- ratings ----------------------------------------------------------------------------------


def elo(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 0.5 else "0"


def likelihood_text(share: float | None) -> str:
    """A likelihood of superiority as people read it: a percentage, never rounded up (or
    down) to a certainty."""
    if share is None:
        return ""
    if share > 0.999:
        return ">99.9%"
    if share < 0.001:
        return "<0.1%"
    return f"{100 * share:.1f}%"


def ratings_rows(ratings: Any, marked: str | None = None) -> list[list[str]]:
    """One row per agent, best first; ``marked`` (an agent label) gets a ``*``."""
    rows = []
    for rank, one in enumerate(ratings.rated, 1):
        low, high = one.rating.low, one.rating.high
        shown = "-" if low == high else f"{elo(low)} to {elo(high)}"
        rows.append(
            [
                str(rank),
                one.agent + (" *" if one.agent == marked else ""),
                elo(one.rating.mean),
                shown,
                f"{one.games:,}",
                f"{100 * one.score:.1f}%",
                likelihood_text(one.stronger_than_next),
            ]
        )
    return rows


HEADERS = ["#", "agent", "rating", "95% interval", "games", "score", "stronger than next"]


def model_text(ratings: Any) -> str:
    """The fitted first-move advantage and draw parameter, the anchor and the intervals."""
    anchor = (
        f"{ratings.anchor} = {elo(ratings.anchor_rating)}"
        if ratings.anchor
        else f"the mean = {elo(ratings.anchor_rating)}"
    )
    parts = [f"anchor: {anchor}"]
    if ratings.first_move is not None:
        first = ratings.first_move
        parts.append(f"first move worth {elo(first.mean)} [{elo(first.low)} to {elo(first.high)}]")
    parts.append(f"draw parameter nu {ratings.nu:.3g}")
    parts.append(f"prior: {ratings.prior_draws:g} virtual draws per pair")
    if ratings.method == "bootstrap":
        parts.append(f"intervals: bootstrap of {ratings.resamples} resamples (seed {ratings.seed})")
    else:
        parts.append("intervals: likelihood")
    return "; ".join(parts)


def fit_text(ratings: Any) -> str:
    """The model's goodness of fit to the games, and why the intervals shown were chosen."""
    fit = ratings.goodness
    if fit is None:
        return f"fit: not tested ({ratings.reason}); intervals: {ratings.method}"
    p = "p < 0.001" if fit.p_value < 0.001 else f"p = {fit.p_value:.3f}"
    if fit.simulated:
        if fit.p_value * (fit.simulated + 1) < 1.5:  # no simulation came as far: a bound
            p = f"p <= {fit.p_value:.3f}"
        p += f" (from {fit.simulated} simulations: cells too sparse for the chi-square)"
    return (
        f"fit: Pearson X² {fit.statistic:,.0f} on {fit.degrees:,} degrees of freedom over "
        f"{fit.cells:,} pair-and-colour cells, {p}; intervals: {ratings.method}, because "
        f"{ratings.reason}"
    )


def ratings_lines(ratings: Any, marked: str | None = None) -> list[str]:
    """The ratings as the commands print them: a title, the table, the model's figures."""
    return [
        "ratings (Elo scale, Davidson model: draws and the first move modelled; 95% intervals):",
        tabulate(
            ratings_rows(ratings, marked),
            headers=HEADERS,
            tablefmt="simple_outline",
            disable_numparse=True,
        ),
        model_text(ratings),
        fit_text(ratings),
    ]


def played_text(count: int) -> str:
    return f"{count:,} games played now" if count else "from the cache"


def ladder_lines(result: Any, where: str) -> list[str]:
    """``ttt rate``'s report: what was played, the table, each agent's place and audit."""
    key, ladder = result.key, result.ladder
    lines = [
        f"ladder {ladder.name} on {result.rules.name}: {len(ladder.rungs)} rungs, "
        f"{key.games} games per pair (seed {key.seed}); {where}; ladder games: "
        f"{played_text(result.played)}",
    ]
    if not result.cached and (result.played or any(one.played for one in result.agents)):
        lines.append("(the book cannot be written: the games played now are not cached)")
    for one in result.agents:
        lines.append(
            f"{one.agent}: "
            + (
                "a rung of the ladder"
                if one.agent in ladder.rungs
                else f"{key.games} games against each rung, {played_text(one.played)}"
            )
        )
    marked = result.agents[0].agent if len(result.agents) == 1 else None
    lines += ratings_lines(result.table, marked)
    if len(result.agents) > 1 or (result.agents and result.agents[0].agent not in ladder.rungs):
        lines.append(
            "each agent is rated on its games against the rungs, the rungs' ratings held; "
            "its interval includes theirs"
        )
    for one in result.agents:
        rated = result.rating(one.agent)
        below, above = result.between(one.agent)
        place = (
            f"between {below.agent} ({elo(below.rating.mean)}) and {above.agent} "
            f"({elo(above.rating.mean)})"
            if below is not None and above is not None
            else f"above every rung (the best: {below.agent}, {elo(below.rating.mean)})"
            if below is not None
            else f"below every rung (the weakest: {above.agent}, {elo(above.rating.mean)})"
        )
        lines.append(
            f"{one.agent}: rating {elo(rated.rating.mean)} [{elo(rated.rating.low)} to "
            f"{elo(rated.rating.high)}], {place}"
        )
        if one.forfeits:
            games = key.games * len(ladder.rungs)
            lines.append(
                f"{' ' * len(one.agent)}  forfeited {one.forfeits:,} of its {games:,} games "
                f"by failing a move (each counted as lost; the rest were played)"
            )
        if one.failed_moves is not None:
            from ttt_solve.agents.audit import share_text

            every = one.sample is None or one.graded < one.sample
            scope = "every position" if every else f"{one.graded:,} sampled positions"
            failed = (
                f"; {one.failed_moves:,} failed move{'s' if one.failed_moves != 1 else ''}, "
                f"counted against it"
                if one.failed_moves
                else ""
            )
            lines.append(
                f"{' ' * len(one.agent)}  accuracy {share_text(one.accuracy)}, perfection "
                f"{share_text(one.perfection)} ({scope}, seed {key.seed}{failed})"
            )
    return lines


def ratings_chart(result: Any) -> Any:
    """The table's ratings with their intervals, the rated agents highlighted."""
    anchor = result.table.anchor or "the mean"
    return charts.interval_chart(
        [charts.Estimate(*row) for row in result.estimates()],
        title=f"Ratings on {result.rules.name}, ladder {result.ladder.name}, "
        f"{result.key.games} games per pair",
        xlabel=f"rating (Elo, {anchor} = {elo(result.table.anchor_rating)}), 95% interval",
        legend=("ladder rungs", "rated agents"),
    )


def ladder_html(result: Any) -> str:
    """A ladder's ratings in a notebook: the chart, the table, and each agent's place."""
    lines = ladder_lines(result, result.book or "the book")
    marked = result.agents[0].agent if len(result.agents) == 1 else None
    return _frame(
        _heading(lines[0])
        + chart_or_nothing(lambda: ratings_chart(result))
        + table(ratings_rows(result.table, marked), HEADERS)
        + "".join(f"<div>{escape(line)}</div>" for line in lines[1:] if "\n" not in line)
    )


# -- a tournament -----------------------------------------------------------------------------


def tournament_rows(result: Any) -> tuple[list[list[str]], list[str]]:
    """The matrix of a round robin: each row agent's wins-draws-losses against each column."""
    names = result.names
    matrix = [[""] * len(names) for _ in names]
    for p in result.pairings:
        matrix[p.a][p.b] = f"{p.a_wins}-{p.draws}-{p.b_wins}"
        matrix[p.b][p.a] = f"{p.b_wins}-{p.draws}-{p.a_wins}"
    for i in range(len(names)):
        matrix[i][i] = "-"
    return [[names[i], *row] for i, row in enumerate(matrix)], ["", *names]


def standing_rows(result: Any) -> tuple[list[list[object]], list[str]]:
    """The standings, best first, with a forfeits column when an agent forfeited a game."""
    table = result.standings
    forfeited = any(s.forfeits for s in table)
    rows: list[list[object]] = [
        [
            rank,
            result.names[s.entrant],
            s.games,
            s.won,
            s.drawn,
            s.lost,
            *([s.forfeits] if forfeited else []),
            f"{s.points:g}",
            f"{100 * s.score:.1f}%",
        ]
        for rank, s in enumerate(table, 1)
    ]
    headers = ["#", "agent", "games", "won", "drawn", "lost"]
    headers += ["lost by forfeit"] if forfeited else []
    return rows, [*headers, "points", "score"]


def forfeit_lines(result: Any) -> list[str]:
    """Each agent that forfeited games, in words."""
    return [
        f"{result.names[s.entrant]} forfeited {s.forfeits:,} of its {s.games:,} games by "
        f"failing a move (crash, timeout, garbage or an illegal move): each counts as lost, "
        f"and the tournament went on."
        for s in result.standings
        if s.forfeits
    ]


def tournament_title(result: Any) -> str:
    return (
        f"round robin on {result.rules.name}, {result.games} games per pair, colours "
        f"alternating (seed {result.seed}); cells: row agent's wins-draws-losses against the "
        f"column agent"
    )


def tournament_lines(result: Any) -> list[str]:
    """``ttt tournament``'s report: the matrix, the standings, the forfeits, the ratings."""
    matrix, matrix_headers = tournament_rows(result)
    rows, headers = standing_rows(result)
    return [
        tournament_title(result),
        tabulate(matrix, headers=matrix_headers, tablefmt="simple_outline", disable_numparse=True),
        "",
        "standings (win 1, draw 1/2):",
        tabulate(rows, headers=headers, tablefmt="simple_outline"),
        *forfeit_lines(result),
        "",
        *ratings_lines(result.ratings),
    ]


def tournament_html(result: Any) -> str:
    """A round robin in a notebook: the matrix, the standings, the forfeits, the ratings."""
    matrix, matrix_headers = tournament_rows(result)
    rows, headers = standing_rows(result)
    return _frame(
        _heading(tournament_title(result))
        + table(matrix, matrix_headers)
        + _heading("Standings (win 1, draw 1/2)")
        + table(rows, headers)
        + "".join(f"<div>{escape(line)}</div>" for line in forfeit_lines(result))
        + _heading("Ratings (Elo scale, 95% intervals)")
        + table(ratings_rows(result.ratings), HEADERS)
        + f"<div>{escape(model_text(result.ratings))}</div>"
        + f"<div>{escape(fit_text(result.ratings))}</div>"
    )
