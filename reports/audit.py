"""An audit's report (:class:`~ttt_solve.agents.audit.AuditReport`): the rows of its tables,
its terminal text (``ttt audit``) and its notebook HTML.

The summary, games and by-ply tables are rows made once (:func:`summary_rows`,
:func:`game_rows`, :func:`ply_rows`), which the terminal lays out with tabulate and a notebook
as HTML, with the costliest moves drawn as small boards and the games with their value
histories (:mod:`ttt_solve.reports.game`).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from tabulate import tabulate

from ttt_solve.agents.engine import FailureKind
from ttt_solve.presentation import charts, html, picture, svg
from ttt_solve.presentation.numbers import count, percent
from ttt_solve.reports.game import game_view
from ttt_solve.solver.value import BlunderKind, Outcome
from ttt_solve.solver.vocabulary import Side

if TYPE_CHECKING:
    from ttt_solve.agents.audit import AuditReport, CostlyMove, Failure, GameResult, Summary
    from ttt_solve.solver.rules import Rules

ACCURACY_COUNTS = (
    "accuracy and perfection count every position asked that the book holds: a failed move "
    "kept no value and was no best move"
)
"""What an accuracy counts, said beside it."""

SHOWN_GAMES = 20
"""The games an audit's notebook display draws (lost first); the rest are counted."""


def headline(summary: Summary) -> str:
    """An audit's figures in one line: accuracy and perfection over the positions asked,
    blunders, failed moves (weighted as the positions are)."""
    if not summary.judged:
        return (
            f"nothing could be judged ({summary.asked:,} positions asked, "
            f"{summary.ungraded:,} not in the book)"
        )
    failed = summary.failures_total
    return (
        f"accuracy {percent(summary.accuracy)}, perfection {percent(summary.perfection)} "
        f"of {summary.judged:,} positions asked; {summary.blunders:,} blunders in "
        f"{summary.moves:,} moves made"
        + (f", {failed:,} failed move{'s' if failed != 1 else ''}" if failed else "")
        + (f", {summary.ungraded:,} not in the book" if summary.ungraded else "")
    )


# -- the rows of an audit's tables -----------------------------------------------------------


def _weighted(total: int, records: int, weighted: bool) -> str:
    """A weighted total, with the records behind it when each stands for several positions."""
    return count(total) + (f" ({count(records)} up to symmetry)" if weighted else "")


def summary_rows(
    summary: Summary, weighted: bool, engine: bool = False, in_games: bool = False
) -> list[tuple[str, str]]:
    """The summary table: the positions asked, accuracy and perfection over them, the moves
    graded and failed; ``engine`` shows an engine's failures by kind even when there are none
    (the failures of any agent are shown when there are some)."""
    rows = [
        (
            "moves asked of the agent" if in_games else "positions asked",
            _weighted(summary.asked, summary.graded + summary.failed, weighted),
        ),
        ("accuracy (value kept)", percent(summary.accuracy)),
        ("perfection (best moves)", percent(summary.perfection)),
        ("moves graded", _weighted(summary.moves, summary.graded, weighted)),
    ]
    if engine or summary.failed:
        rows.append(
            (
                "failed moves (count against accuracy)",
                _weighted(summary.failures_total, summary.failed, weighted),
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


def all_best(summary: Summary) -> str:
    """What an audit whose graded moves were all best says where its costliest moves would
    be: that they were, and that its failed moves, if any, were not."""
    failed = summary.failures_total
    if not failed:
        return "every graded move was best."
    return (
        f"every move the agent made was best, but {failed:,} failed (listed below), "
        f"counted against it."
    )


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


def chart_title(report: AuditReport) -> str:
    """The title of an audit's by-ply chart."""
    return f"audit of {report.agent} on {report.rules.name}, {report.scope} (seed {report.seed})"


# -- the terminal -------------------------------------------------------------------------------


def _cells(rules: Rules, cells: Sequence[int]) -> str:
    return " ".join(rules.cell_name(c) for c in cells) or "-"


def worst_text(costly: CostlyMove, index: int, weighted: bool) -> str:
    """One of the costliest moves: what was played, what was best, and the board with the
    agent's move (``*``) and the best moves (``+``) marked."""
    record, best = costly.graded, costly.best_moves
    position = record.position
    rules = position.rules
    best_value = costly.move_values.get(best[0]) if best else None
    verdict = record.grade.value + (f" {record.kind}" if record.kind else "")
    stands = f"; stands for {record.weight}" if weighted else ""
    head = (
        f"#{index} ply {position.ply}, {position.to_move.upper()} to move, {position} "
        f"(value {record.value}{stands})\n"
        f"    agent played {rules.cell_name(record.cell)} ({record.move_value}: {verdict}); "
        f"best: {_cells(rules, best)}" + (f" ({best_value})" if best_value else "")
    )
    marks = {record.cell: "*", **{c: "+" for c in best if c != record.cell}}
    board = picture.text(picture.board(position, marked=[record.cell], best=best), stones=marks)
    return head + "\n" + "\n".join("    " + line for line in board.splitlines())


def failure_text(failure: Failure, index: int, weighted: bool) -> str:
    position = failure.position
    stands = f" (stands for {failure.weight})" if weighted else ""
    return (
        f"#{index} ply {position.ply}, {position.to_move.upper()} to move, {position}"
        f"{stands}: {failure.kind}: {failure.detail}"
    )


def _table(rows: Sequence[Sequence[object]], headers: Sequence[str] = ()) -> str:
    return tabulate(rows, headers=headers, tablefmt="simple_outline", disable_numparse=True)


def text_lines(report: AuditReport, engine: bool, worst: int) -> list[str]:
    """``ttt audit``'s report: the mode, the summary, the games, the by-ply table, the
    costliest moves (``worst`` were asked for) and the failures; ``engine``: the agent is an
    external engine (its failures are shown by kind, and it restarts after each)."""
    summary = report.summary
    lines = [f"mode: {report.description}."]
    rows = summary_rows(summary, report.weighted, engine, report.mode == "games")
    lines += [tabulate(rows, tablefmt="simple_outline"), f"({ACCURACY_COUNTS}.)"]
    if report.games is not None:
        lines.append("\ngames (results for the agent):")
        lines.append(
            tabulate(
                game_rows(report.games),
                headers=game_headers(report.games),
                tablefmt="simple_outline",
            )
        )
        lines += [sentence for sentence in [forfeit_sentence(report.games)] if sentence]
    if summary.by_ply:
        lines += ["\nby ply:", _table(ply_rows(summary), PLY_HEADERS)]
    else:
        lines.append(f"\n{nothing_graded(summary)}")
    if report.worst:
        lines.append("\ncostliest moves (* the agent's move, + best moves):")
        lines += [worst_text(c, i, report.weighted) for i, c in enumerate(report.worst, 1)]
    elif worst and summary.moves:
        lines.append(f"\n{all_best(summary)}")
    return lines + _failure_lines(report, engine, worst)


def _failure_lines(report: AuditReport, engine: bool, worst: int) -> list[str]:
    failures = report.failures
    if not failures:
        return []
    shown = failures[: max(worst, 1) * 2]
    restarted = "; the engine was restarted after each timeout, garbage or crash"
    head = (
        f"\n{'engine failures' if engine else 'failed moves'} "
        f"({count(report.summary.failures_total)}, counted against accuracy"
        f"{restarted if engine else ''})"
        + (f", the first {len(shown)}:" if len(shown) < len(failures) else ":")
    )
    return [head] + [failure_text(f, i, report.weighted) for i, f in enumerate(shown, 1)]


# -- a notebook ---------------------------------------------------------------------------------


def audit_html(report: AuditReport) -> str:
    """An audit's summary, by-ply chart, costliest moves, games and failures."""
    summary = report.summary
    engine = report.agent.lower().startswith("cmd:")
    parts = [
        html.heading(f"Audit of {report.agent} on {report.rules.name} (seed {report.seed})"),
        f'<div style="{html.QUIET}">truth: book {escape(report.book)}; '
        f"{escape(report.description)}</div>",
        html.table(summary_rows(summary, report.weighted, engine, report.mode == "games")),
        f'<div style="{html.QUIET} font-size: 12px;">{escape(ACCURACY_COUNTS)}.</div>',
    ]
    if report.games is not None:
        parts.append(html.heading("Games (results for the agent)"))
        parts.append(html.table(game_rows(report.games), game_headers(report.games)))
        parts.append(html.lines(s for s in [forfeit_sentence(report.games)] if s))
    if summary.by_ply:
        parts.append(html.chart_or_nothing(lambda: ply_chart(summary, chart_title(report))))
        parts.append(
            "<details><summary>by ply</summary>"
            + html.table(ply_rows(summary), PLY_HEADERS)
            + "</details>"
        )
    parts.append(_worst_html(report))
    if report.games is not None:
        parts.append(html.heading("The games, lost first"))
        parts.append(games_html(report))
    parts.append(_failures_html(report))
    return html.frame("".join(parts))


def _worst_html(report: AuditReport) -> str:
    """The costliest moves as small boards, or why there are none."""
    summary = report.summary
    if not report.worst:
        if summary.moves:
            return f"<div>{escape(all_best(summary).capitalize())}</div>"
        return f"<div>{escape(nothing_graded(summary).capitalize())}</div>"
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
        caption = (
            f"#{index}, ply {record.ply}: played <b>{rules.cell_name(record.cell)}</b> "
            f"({escape(str(record.move_value))}, {escape(verdict)}); best "
            f"{escape(_cells(rules, costly.best_moves))} ({escape(str(record.value))})"
            + (f"; stands for {record.weight}" if report.weighted else "")
        )
        boards.append((svg.board(drawn, size=html.SMALL_BOARD), caption))
    return html.heading(
        "Costliest moves (framed: the agent's move; ★ the best moves)"
    ) + html.tiles(boards)


def _failures_html(report: AuditReport) -> str:
    if not report.failures:
        return ""
    shown = report.failures[:10]
    items = "".join(
        f"<li>ply {f.ply}, {escape(str(f.position))}: <b>{escape(f.kind)}</b>: "
        f"{escape(f.detail)}</li>"
        for f in shown
    )
    more = f" (the first {len(shown)})" if len(shown) < len(report.failures) else ""
    return (
        html.heading(
            f"Failed moves: {report.failed_moves:,}, counted against accuracy and perfection{more}"
        )
        + f'<ul style="margin: 0;">{items}</ul>'
    )


def games_html(report: AuditReport) -> str:
    """An audit's games, lost first, each drawn with its moves and value history."""
    from ttt_solve.agents.match import GameRecord

    assert report.games is not None
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
        record = GameRecord(report.rules, game.moves, game.winner)
        parts.append(
            f'<div style="margin: 10px 0;">{html.heading(title)}'
            f"{game_view(record, values, size=html.SMALL_BOARD)}</div>"
        )
    more = len(ordered) - SHOWN_GAMES
    if more > 0:
        parts.append(f"<div>and {more:,} more games (report.games holds them all)</div>")
    return "".join(parts)
