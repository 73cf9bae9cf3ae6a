"""``ttt benchmark``: score agents on a frozen benchmark set, cell by cell of its grid; make a
set from a table; reproduce the leaderboard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ttt_solve.agents.benchset import (
    DATA,
    PER_CELL,
    BenchmarkSet,
    Grid,
    game_name,
    load_set,
    make_set,
    set_path,
)
from ttt_solve.agents.parallel import AgentMaker
from ttt_solve.agents.spec import describe_agents, parse_spec
from ttt_solve.cli.common import CliError, LazyProgress, friendly_errors, game_options
from ttt_solve.cli.options import (
    HELP_SETTINGS,
    agent_option,
    agents_run_options,
    count_option,
    quiet_option,
    seed_option,
)
from ttt_solve.errors import install_hint
from ttt_solve.solver.rules import Rules, parse_game

EXAMPLES = """
\b
Examples:
  ttt benchmark --agent heuristic --size 5 --win 4
  ttt benchmark --agent mcts:iterations=1000 --size 4x5 --win 4 --json
  ttt benchmark --agent 'cmd:python3 examples/benchmark_llm.py' --size 4 --win 4
  ttt benchmark --agent random --agent heuristic --size 4 --win 4
  ttt benchmark make-set 4x4k4 --table t.sqlite.tables/4x4k4 --check
"""


def _set_of(rules: Rules, set_file: Path | None) -> tuple[BenchmarkSet, str]:
    """The set to score on, and how to name it: a published one by its place in the
    project (``data/benchmarks/GAME.jsonl``), another by the path given."""
    if set_file is not None:
        return load_set(set_file), str(set_file)
    path = set_path(rules)
    return load_set(path), f"{DATA.parent.name}/{DATA.name}/{path.name}"


@click.group(
    "benchmark",
    invoke_without_command=True,
    context_settings=HELP_SETTINGS,
    epilog=EXAMPLES + "\n\b\nAgents (SPEC is name or name:key=value,...):\n" + describe_agents(),
)
@agent_option("An agent to score (repeat for several: one line each).", multiple=True)
@game_options
@click.option(
    "--set",
    "set_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A set file (its SHA256SUMS beside it); default: the game's set in data/benchmarks.",
)
@agents_run_options(
    "Seed of every random choice the agent makes (same seed, same figures).",
    "Processes (results do not depend on it).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option(
    "--svg",
    "svg_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the heatmaps of one agent into this SVG file.",
)
@quiet_option()
@click.pass_context
@friendly_errors
def benchmark(
    context: click.Context,
    agent_specs: tuple[str, ...],
    rules: Rules,
    set_file: Path | None,
    db: str,
    seed: int,
    jobs: int,
    as_json: bool,
    svg_path: Path | None,
    quiet: bool,
) -> None:
    """Score agents on the benchmark set of a game: positions drawn from its tablebase in a
    3 x 3 grid, stage (plies played) by difficulty (remoteness), each with every move's exact
    value. Prints, per cell, the share of moves that kept the value and the share that were
    best, with 95% intervals, for the decisive positions (some move loses the value) and for
    every position. See docs/benchmark.md.

    The book (--db) is read only by agents that need it (perfect, book=true)."""
    if context.invoked_subcommand is not None:
        return
    if not agent_specs:
        raise CliError("give an agent to score: --agent SPEC (e.g. --agent heuristic)")
    for spec in agent_specs:
        parse_spec(spec)
    if svg_path is not None and len(agent_specs) > 1:
        raise CliError("--svg draws one agent's heatmaps: give one --agent")
    found, source = _set_of(rules, set_file)
    reports = [_score(spec, found, db, seed, jobs, quiet) for spec in agent_specs]
    if svg_path is not None:
        from ttt_solve.reports.benchmark import benchmark_svgs

        _write_svg(svg_path, benchmark_svgs(reports[0]))
    if as_json:
        dicts = [report.to_dict() for report in reports]
        click.echo(json.dumps(dicts[0] if len(dicts) == 1 else dicts, indent=2))
    elif len(reports) == 1:
        from ttt_solve.reports.benchmark import benchmark_lines

        click.echo("\n".join(benchmark_lines(reports[0], source)))
    else:
        from ttt_solve.reports.benchmark import leaderboard_lines

        click.echo("\n".join(leaderboard_lines(reports, source)))


def _score(spec: str, found: BenchmarkSet, db: str, seed: int, jobs: int, quiet: bool) -> Any:
    """One agent's report; an agent that reads the book opens ``db`` itself."""
    from ttt_solve.agents.benchmark import run_benchmark

    progress = LazyProgress(spec, enabled=not quiet)
    try:
        return run_benchmark(AgentMaker(spec, db), found, seed=seed, jobs=jobs, progress=progress)
    finally:
        progress.close()


def _write_svg(path: Path, pictures: list[str]) -> None:
    """The heatmaps one above the other in one SVG file, written whole or not at all."""
    from ttt_solve.cli.output import output_file
    from ttt_solve.presentation.svg import stack

    with output_file(str(path)) as out:
        out.write(stack(pictures) + "\n")


@benchmark.command("make-set", context_settings=HELP_SETTINGS)
@click.argument("game")
@click.option(
    "--table",
    "table",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="The game's tablebase folder (ttt-solve --method table builds one).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=DATA,
    show_default="data/benchmarks",
    help="Folder to write GAME.jsonl and its line of SHA256SUMS into.",
)
@seed_option("The order in which positions are drawn and the orientation of each.")
@count_option("--per-cell", PER_CELL, "Positions in each split of each cell.", 100_000)
@click.option("--stages", default=None, metavar="A-B,C-D,E-F", help="Plies of each stage.")
@click.option(
    "--difficulties", default=None, metavar="A-B,C-D,E-", help="Remoteness of each difficulty."
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing: make the set again and compare it byte for byte with the one in --out "
    "(exit 1 if it differs).",
)
@quiet_option()
@friendly_errors
def make_set_command(
    game: str,
    table: Path,
    out: Path,
    seed: int,
    per_cell: int,
    stages: str | None,
    difficulties: str | None,
    check: bool,
    quiet: bool,
) -> None:
    """Draw the benchmark set of a game from its table. GAME is named as 5x5k4; the set is
    seeded, one file of JSON lines with its SHA-256 in SHA256SUMS beside it, and the same
    table and options give the same bytes.

    \b
    Examples:
      ttt benchmark make-set 4x4k4 --table t.sqlite.tables/4x4k4
      ttt benchmark make-set 5x5k4 --table /data/5x5k4 --check
    """
    rules = parse_game(game)
    grid = None
    if stages is not None or difficulties is not None:
        if stages is None or difficulties is None:
            raise CliError("--stages and --difficulties go together: give both")
        grid = Grid.parse(stages, difficulties, rules)
    progress = LazyProgress(f"drawing {rules.name}", enabled=not quiet)
    try:
        made = make_set(table, grid, per_cell=per_cell, seed=seed, progress=progress)
    finally:
        progress.close()
    if made.rules != rules:
        raise CliError(f"{table} holds the table of {made.rules.name}, not of {rules.name}")
    name = f"{game_name(rules)}.jsonl"
    if check:
        published = out / name
        if not published.exists():
            raise CliError(f"--check: there is no {published} to compare with")
        same = published.read_text() == made.text()
        click.echo(
            f"{published}: "
            + (
                f"rebuilt byte for byte, sha256 {made.checksum}"
                if same
                else f"differs from the set made now (sha256 {made.checksum})"
            )
        )
        load_set(published)  # and it matches its published checksum
        if not same:
            raise click.exceptions.Exit(1)
        return
    path = made.write(out)
    click.echo(f"wrote {path}: {len(made.items):,} positions of {rules.name}, seed {seed}")
    click.echo(f"sha256 {made.checksum}")


@benchmark.command("leaderboard", context_settings=HELP_SETTINGS)
@click.option(
    "--game",
    "games",
    multiple=True,
    metavar="GAME",
    help="A game whose published set to score on (repeat); default: every published set.",
)
@agent_option("An agent (repeat); default: the leaderboard's roster.", multiple=True)
@agents_run_options(
    "Seed of every random choice the agents make.", "Processes (results do not depend on it)."
)
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write every report as JSON into this file (the web explorer's "
    "/benchmark pages read data/benchmarks/leaderboard.json).",
)
@quiet_option()
@friendly_errors
def leaderboard(
    games: tuple[str, ...],
    agent_specs: tuple[str, ...],
    db: str,
    seed: int,
    jobs: int,
    out: Path | None,
    quiet: bool,
) -> None:
    """Score the leaderboard's agents on each published set and print the leaderboard of
    docs/benchmark.md: a Markdown table a board, each agent's totals with 95% intervals and
    the time it took. An agent that cannot run here is left out, and the table says why.

    \b
    Examples:
      ttt benchmark leaderboard --game 4x4k4 --db books.sqlite
      ttt benchmark leaderboard --agent heuristic --agent mcts:iterations=1000
    """
    from ttt_solve.agents.benchmark import ROSTER
    from ttt_solve.reports.benchmark import leaderboard_markdown

    specs = agent_specs or ROSTER
    for spec in specs:
        parse_spec(spec)
    paths = [set_path(parse_game(game)) for game in games] or sorted(DATA.glob("*.jsonl"))
    boards: dict[str, Any] = {}
    for number, path in enumerate(paths):
        found = load_set(path)
        reports, left_out = [], []
        for spec in specs:
            reason = _cannot_run(spec, found.rules, db)
            if reason is not None:
                left_out.append(f"`{spec}`: {reason}")
                continue
            reports.append(_score(spec, found, db, seed, jobs, quiet))
        if number:
            click.echo("")
        click.echo("\n".join(leaderboard_markdown(found, path.name, reports, left_out)))
        boards[found.name] = {
            "set": found.checksum,
            "reports": [report.to_dict() for report in reports],
            "left_out": left_out,
        }
    if out is not None:
        from ttt_solve.agents.benchmark import LEADERBOARD_FORMAT
        from ttt_solve.cli.output import output_file

        with output_file(str(out)) as stream:
            json.dump({"format": LEADERBOARD_FORMAT, "boards": boards}, stream, indent=1)
            stream.write("\n")


def _cannot_run(spec: str, rules: Rules, db: str) -> str | None:
    """Why an agent cannot be scored here (``None``: it can)."""
    import importlib.util

    parsed = parse_spec(spec)
    if parsed.name == "openspiel" and importlib.util.find_spec("pyspiel") is None:
        return f"OpenSpiel is not installed ({install_hint('openspiel')})"
    if parsed.needs_book:
        from ttt_solve.book.errors import BookError
        from ttt_solve.book.reader import open_book

        try:
            with open_book(db) as book:
                if book.find_game(rules) is None:
                    return f"the book {db} holds no {rules.name}"
        except BookError as error:
            return str(error)
    return None
