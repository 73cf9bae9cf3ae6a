"""The benchmark's reports: one agent's grids by split and figure with their 95% intervals
(terminal text, heatmaps, notebook HTML) and the leaderboard of several agents on one set
(terminal text and Markdown)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from tabulate import tabulate

from ttt_solve.presentation import html, svg

BENCHMARK_METRICS = (("value_kept", "value kept"), ("best_share", "best"))
"""A benchmark cell's figures (the attribute of a ``CellScore``) and their names."""
BENCHMARK_SPLITS = {
    "decisive": "decisive positions (some move loses the value)",
    "every": "every position",
}


def benchmark_cells(report: Any, split: str, metric: str) -> list[list[svg.HeatCell]]:
    """One split's figure (``value_kept`` or ``best_share``) in each cell, stages by
    difficulties, as a heatmap draws them."""
    from ttt_solve.agents.benchset import DIFFICULTIES, STAGES

    grid = []
    for stage in STAGES:
        row = []
        for difficulty in DIFFICULTIES:
            cell = report.cell(split, stage, difficulty)
            share = getattr(cell, metric)
            row.append(
                svg.HeatCell(
                    share.mean if cell.positions else None, share.low, share.high, cell.positions
                )
            )
        grid.append(row)
    return grid


def _heat_text(cell: svg.HeatCell) -> str:
    if cell.share is None:
        return "-"
    return f"{100 * cell.share:.1f}% [{100 * cell.low:.1f}-{100 * cell.high:.1f}]"


def _grid_labels(report: Any) -> tuple[list[str], list[str], list[str], list[str]]:
    from ttt_solve.agents.benchset import DIFFICULTIES, STAGES

    words = report.grid.describe()
    return (
        list(STAGES),
        [words[s] for s in STAGES],
        list(DIFFICULTIES),
        [words[d] for d in DIFFICULTIES],
    )


def benchmark_lines(report: Any, source: str) -> list[str]:
    """``ttt benchmark``'s report of one agent: what was asked, a grid per split and figure
    with 95% intervals, the failures, and the one-line summary."""
    stages, stage_notes, difficulties, notes = _grid_labels(report)
    failed = len(report.failures)
    lines = [
        f"{report.agent} on {report.rules.name}: benchmark set {source} "
        f"(sha256 {report.set_checksum}), seed {report.seed}",
        f"{report.positions:,} positions asked in {report.seconds:.1f} s"
        + (f"; {failed:,} failed moves, counted as misses" if failed else "; no failed move"),
    ]
    headers = ["stage", *(f"{d} ({n})" for d, n in zip(difficulties, notes))]
    for split, title in BENCHMARK_SPLITS.items():
        for metric, name in BENCHMARK_METRICS:
            rows = [
                [f"{stage} ({note})", *(_heat_text(cell) for cell in cells)]
                for stage, note, cells in zip(
                    stages, stage_notes, benchmark_cells(report, split, metric)
                )
            ]
            total = report.total(split)
            lines += [
                "",
                f"{title}: {name} [95% interval], {total.positions:,} positions",
                tabulate(rows, headers=headers, tablefmt="simple_outline", disable_numparse=True),
            ]
    return [*lines, "", report.summary()]


def benchmark_svgs(report: Any) -> list[str]:
    """The heatmaps of a report: one per split and figure."""
    stages, stage_notes, difficulties, notes = _grid_labels(report)
    return [
        svg.heatmap(
            benchmark_cells(report, split, metric),
            stages,
            difficulties,
            title=f"{name}, {split} positions"
            if split == "decisive"
            else f"{name}, every position",
            row_notes=stage_notes,
            column_notes=notes,
        )
        for split in BENCHMARK_SPLITS
        for metric, name in BENCHMARK_METRICS
    ]


def benchmark_html(report: Any) -> str:
    """A benchmark report in a notebook: its heatmaps side by side (wrapping on a narrow
    screen) and its one-line summary."""
    pictures = "".join(
        f'<div style="flex: 0 1 auto;">{html.fluid(picture_)}</div>'
        for picture_ in benchmark_svgs(report)
    )
    return html.frame(
        html.heading(f"Benchmark of {report.agent} on {report.rules.name}")
        + f'<div style="display: flex; flex-wrap: wrap; gap: 12px;">{pictures}</div>'
        + f"<div>{escape(report.summary())}</div>"
    )


LEADERBOARD_HEADERS = [
    "agent",
    "decisive: value kept",
    "decisive: best",
    "every: value kept",
    "every: best",
    "failed",
    "seconds",
]


def leaderboard_rows(reports: Sequence[Any]) -> list[list[str]]:
    """One row per agent: each split's totals with their 95% intervals, failures, time."""
    rows = []
    for report in reports:
        row = [report.agent]
        for split in BENCHMARK_SPLITS:
            total = report.total(split)
            for metric, _ in BENCHMARK_METRICS:
                share = getattr(total, metric)
                row.append(_heat_text(svg.HeatCell(share.mean, share.low, share.high, 0)))
        rows.append([*row, f"{len(report.failures):,}", f"{report.seconds:.1f}"])
    return rows


def leaderboard_lines(reports: Sequence[Any], source: str) -> list[str]:
    """Several agents on one set: a row each (the totals of each split over its cells)."""
    first = reports[0]
    return [
        f"benchmark of {len(reports)} agents on {first.rules.name}: set {source} "
        f"(sha256 {first.set_checksum}), seed {first.seed}, {first.positions:,} positions",
        tabulate(
            leaderboard_rows(reports),
            headers=LEADERBOARD_HEADERS,
            tablefmt="simple_outline",
            disable_numparse=True,
        ),
    ]


def leaderboard_markdown(
    bench_set: Any, source: str, reports: Sequence[Any], left_out: Sequence[str]
) -> list[str]:
    """The leaderboard of one set as Markdown: a heading, the set and its checksum, a row per
    agent (its totals with 95% intervals, its processor and clock time), and the agents left
    out with why."""
    headers = [*LEADERBOARD_HEADERS[:-1], "CPU s", "wall s"]
    rows = [
        [f"`{row[0]}`", *row[1:-1], f"{report.cpu_seconds:.1f}", row[-1]]
        for row, report in zip(leaderboard_rows(reports), reports)
    ]
    decisive, every = (len(bench_set.split(split)) for split in ("decisive", "every"))
    lines = [
        f"### {bench_set.rules.name}",
        "",
        f"Set `{source}`, sha256 `{bench_set.checksum}`: {len(bench_set.items):,} positions "
        f"({decisive:,} decisive, {every:,} in the every-position split), seed "
        f"{reports[0].seed if reports else 0}.",
        "",
        tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True),
    ]
    if left_out:
        lines += ["", "Left out: " + "; ".join(left_out) + "."]
    return lines
