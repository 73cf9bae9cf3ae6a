"""``ttt table``: a tablebase's own commands: build one into a folder, catalogue it in a book,
print its figures, verify its files.

``ttt-solve --method table`` builds and catalogues in one go, beside the book; these commands
are the steps one at a time, for a table built anywhere (a long build on another machine,
catalogued where it is read)."""

from __future__ import annotations

import json
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from ttt_solve.cli.common import (
    ProgressLines,
    db_option,
    duration_text,
    friendly_errors,
    stopped_by,
)
from ttt_solve.cli.options import HELP_SETTINGS, sample_option, seed_option
from ttt_solve.solver.vocabulary import Device

if TYPE_CHECKING:
    from ttt_solve.solver.tablebase.build import BuildProgress
    from ttt_solve.solver.tablebase.compressed import CompressProgress

SHOWN = 20
"""Problems a verify lists at most."""

every_option = click.option(
    "--every",
    type=click.FloatRange(0.1),
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="Seconds between progress lines.",
)


def _stopped(interrupt: KeyboardInterrupt, kept: str) -> NoReturn:
    """A stop of long work: one line saying what is kept, and the stop's status."""
    word, status = stopped_by(interrupt)
    click.echo(f"{word}: {kept}; rerun to resume", err=True)
    sys.exit(status)


@click.group("table", context_settings=HELP_SETTINGS)
def table() -> None:
    """A tablebase's own commands: build, catalogue, figures, verify, publish, upgrade.

    A tablebase holds every position's value and remoteness in a byte, in a folder of files
    (one a ply and table.json). ttt-solve --method table builds and catalogues one beside the
    book; these commands do each step apart. A release is a table compressed, with its
    digests, figures and a README, for anyone to check.

    \b
    Examples:
      ttt table build 4x4k4 tables/4x4k4
      ttt table catalogue tables/4x4k4 --db books.sqlite
      ttt table figures tables/4x4k4
      ttt table verify tables/4x4k4
      ttt table publish tables/4x4k4 releases/4x4k4
      ttt table verify releases/4x4k4
    """


@table.command("build", context_settings=HELP_SETTINGS)
@click.argument("game")
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--memory",
    default="4G",
    show_default=True,
    metavar="SIZE",
    help="Memory the build may use (e.g. 20G, 512M); the part a step makes is cut to fit.",
)
@click.option(
    "--device",
    type=click.Choice([str(device) for device in Device]),
    default=str(Device.AUTO),
    show_default=True,
    help="Where the ply step runs: the GPU when Numba finds one (auto), or as said.",
)
@every_option
@friendly_errors
def build(game: str, folder: Path, memory: str, device: str, every: float) -> None:
    """Build, or finish building, the tablebase of GAME (at most 25 cells) in FOLDER.

    Says first what it will make, the disk it needs and how long it should take; prints a
    progress line every --every seconds; a rerun keeps what is made and sound, and makes
    again (saying so) a file that fails its checksum or its header's check, or is of another
    format version. One build at a time holds a folder.

    \b
    Examples:
      ttt table build 4x5k4 tables/4x5k4
      ttt table build 5x5k4 /data/5x5k4 --memory 20G --device gpu
    """
    from ttt_solve.solver.rules import parse_game
    from ttt_solve.solver.tablebase.build import (
        build_table,
        describe_plan,
        parse_bytes,
        plan_build,
        size_text,
    )
    from ttt_solve.solver.tablebase.record import value_of_record

    rules = parse_game(game)
    allowed = parse_bytes(memory)
    click.echo(describe_plan(plan_build(rules, folder, device, allowed)), err=True)
    lines = _BuildLines(every)
    try:
        summary = build_table(
            rules,
            folder,
            allowed,
            lines,
            device=device,
            note=lambda text: click.echo(text, err=True),
        )
    except KeyboardInterrupt as interrupt:
        _stopped(interrupt, f"the parts made so far are kept in {folder}")
    value = value_of_record(summary.root_record, rules.cells)
    canonical = sum(counts.canonical for counts in summary.counts)
    reachable = sum(counts.reachable for counts in summary.counts)
    click.echo(
        f"{rules.name}: {value} for X; {canonical:,} canonical and {reachable:,} reachable "
        f"positions; {size_text(summary.bytes_on_disk)} in {folder}; "
        f"{duration_text(summary.seconds)}"
    )


class _BuildLines:
    """A build's progress as lines on stderr, one every ``every`` seconds and one at the end
    of each ply: the ply's share and ETA, the whole build's, the time so far."""

    def __init__(self, every: float) -> None:
        self.every = every
        self.last = 0.0

    def __call__(self, state: BuildProgress) -> None:
        if state.seconds - self.last < self.every and state.ply_done < state.ply_total:
            return
        self.last = state.seconds
        click.echo(
            f"ply {state.ply:2d}: {100 * state.ply_done / state.ply_total:5.1f}% "
            f"(ETA {_eta(state.ply_eta())}); whole: {100 * state.done / state.total:5.1f}% "
            f"(ETA {_eta(state.eta())}), {duration_text(state.seconds)} so far",
            err=True,
        )


def _eta(seconds: float | None) -> str:
    return "?" if seconds is None else duration_text(seconds)


@table.command("catalogue", context_settings=HELP_SETTINGS)
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False))
@db_option
@click.option("--force", is_flag=True, help="Replace the game if the book holds it.")
@friendly_errors
def catalogue(folder: Path, db: str, force: bool) -> None:
    """Record the finished table in FOLDER (raw, or a release: ttt table publish) as its game
    in the book (every digest checked first), so that every command reading the book finds it.

    \b
    Examples:
      ttt table catalogue /data/5x5k4 --db books.sqlite
      ttt table catalogue releases/4x6k4 --db books.sqlite
    """
    from ttt_solve.book.reader import open_book
    from ttt_solve.book.table.catalogue import catalogue_table
    from ttt_solve.solver.tablebase.probe import open_tablebase

    started = time.perf_counter()
    open_tablebase(folder).close()  # a folder of no sound table is refused before the book opens
    with open_book(db, create=True) as book:
        with closing(ProgressLines("digests", "bytes")) as progress:
            info = catalogue_table(book, folder, force=force, progress=progress)
        click.echo(
            f"{info.rules.name}: {info.value} for X, {info.positions:,} canonical positions "
            f"({info.reachable:,} reachable), catalogued in {book.display_url} "
            f"in {time.perf_counter() - started:.1f} s"
        )


@table.command("figures", context_settings=HELP_SETTINGS)
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@friendly_errors
def figures(folder: Path, as_json: bool) -> None:
    """The figures of the finished table in FOLDER: each ply's wins, draws and losses for the
    side to move (canonical and reachable, how many are over), its longest win with a
    position that has it, and every first move's value. Of a release, the figures it holds
    (made from its table when it was published; ttt table verify checks them).

    \b
    Examples:
      ttt table figures /data/5x5k4
      ttt table figures /data/5x5k4 --json
    """
    from ttt_solve.solver.tablebase.figures import describe, table_figures, to_dict
    from ttt_solve.solver.tablebase.release import is_release, release_figures

    if is_release(folder):
        click.echo(release_figures(folder, as_json))
        return
    found = table_figures(folder)
    click.echo(json.dumps(to_dict(found)) if as_json else describe(found))


@table.command("verify", context_settings=HELP_SETTINGS)
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False))
@sample_option("Positions checked in each ply, drawn at random from its canonical positions.")
@seed_option("Seed of that sample.")
@friendly_errors
def verify(folder: Path, sample: int, seed: int) -> None:
    """Check the finished table in FOLDER: every file's digest, then a seeded sample of each
    ply, each position against its children; or, where FOLDER is a release (ttt table
    publish), every digest and count of its files, sums and figures. Exits with status 1 if
    a check fails, listing the first problems. (ttt verify checks a game through the book,
    every position of it on boards of up to 20 cells.)

    \b
    Examples:
      ttt table verify /data/5x5k4
      ttt table verify /data/5x5k4 --sample 100000 --seed 7
      ttt table verify releases/5x5k4
    """
    from ttt_solve.book.table.rows import TableRows
    from ttt_solve.book.table.verify import TableCheck, digest_problems, sample_problems
    from ttt_solve.solver.position import Position
    from ttt_solve.solver.tablebase.files import read_manifest
    from ttt_solve.solver.tablebase.release import is_release

    if is_release(folder):
        _verify_release(folder)
        return
    rules = read_manifest(folder).rules
    check = TableCheck()
    click.echo(f"verifying the table of {rules.name} in {folder}...", err=True)
    with closing(ProgressLines("digests", "bytes")) as progress:
        problems = digest_problems(folder, rules, check, progress)
    if not problems:
        rows = TableRows(folder, rules)
        try:
            label = f"a sample of {sample:,} positions a ply"
            with closing(ProgressLines(label, "plies")) as progress:
                problems = list(sample_problems(rows, sample, seed, check, progress))
        finally:
            rows.close()
    for problem in problems[:SHOWN]:
        where = "the table"
        if problem.key >= 0:
            where = f"ply {problem.ply}, position {Position.from_key(rules, problem.key)}"
        click.echo(f"{where}: {problem.message}")
    if problems:
        more = f" (first {SHOWN} shown)" if len(problems) > SHOWN else ""
        click.echo(f"{rules.name}: {len(problems)} problem{'s' * (len(problems) > 1)}{more}")
        sys.exit(1)
    sampled = sum(check.sampled.values())
    click.echo(
        f"{rules.name}: OK, digests of {check.digests} files; {sampled:,} sampled positions in "
        f"{len(check.sampled)} plies: each position's value is the best of its children's "
        "(or its end's)"
    )


@table.command("upgrade", context_settings=HELP_SETTINGS)
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False))
@every_option
@friendly_errors
def upgrade(folder: Path, every: float) -> None:
    """Rewrite the finished table in FOLDER, of format version 1, as version 2, in place.

    Each file's own digest is checked, its positions counted by record (what version 2's
    header holds) and held to its header's counts, then it is written again and renamed over
    the old one; table.json last. A stop loses the file in hand at most; a rerun takes the
    files still of version 1. A table of version 2 is left as it is.

    \b
    Example:
      ttt table upgrade /data/4x6k4
    """
    from ttt_solve.solver.tablebase.upgrade import upgrade_table

    started = time.perf_counter()
    try:
        with closing(ProgressLines("upgrading", "bytes", every)) as progress:
            manifest, rewritten = upgrade_table(folder, progress)
    except KeyboardInterrupt as interrupt:
        _stopped(interrupt, f"the files rewritten so far are kept in {folder}")
    click.echo(
        f"{manifest.rules.name}: {rewritten} of {len(manifest.plies)} files rewritten as format "
        f"version {manifest.format} in {folder}; {duration_text(time.perf_counter() - started)}"
    )


def _verify_release(folder: Path) -> None:
    """``ttt table verify`` of a release: every problem, one line each; status 1 if any."""
    from ttt_solve.solver.tablebase.release import release_files, verify_release

    click.echo(f"verifying the release in {folder}...", err=True)
    with closing(ProgressLines("digests", "bytes")) as progress:
        problems = list(verify_release(folder, progress))
    for problem in problems[:SHOWN]:
        click.echo(problem)
    if problems:
        more = f" (first {SHOWN} shown)" if len(problems) > SHOWN else ""
        click.echo(f"{folder}: {len(problems)} problem{'s' * (len(problems) > 1)}{more}")
        sys.exit(1)
    rules, files = release_files(folder)
    click.echo(
        f"{rules.name}: OK, a release of {files} compressed files: each one's SHA-256, "
        "BLAKE2b, head and block digests and counts are table.json's, and so are SHA256SUMS, "
        "B2SUMS and figures.json"
    )


@table.command("publish", context_settings=HELP_SETTINGS)
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False))
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@every_option
@friendly_errors
def publish(folder: Path, out: Path, every: float) -> None:
    """Make a release of the finished table in FOLDER in OUT: its plies compressed in zstd
    blocks, table.json (the game, each file's digests and counts), SHA256SUMS, B2SUMS, the
    figures and a README saying how to check and read it (ttt table verify OUT).

    Each file is written whole under a temporary name, then renamed: a stop loses the file
    in hand at most, and a rerun keeps the files made and goes on.

    \b
    Examples:
      ttt table publish tables/4x5k4 releases/4x5k4
      ttt table verify releases/4x5k4
    """
    from ttt_solve.solver.tablebase.release import publish as publish_release

    started = time.perf_counter()
    try:
        with closing(_CompressLines(every)) as lines:
            manifest = publish_release(folder, out, progress=lines)
    except KeyboardInterrupt as interrupt:
        _stopped(interrupt, f"the files made so far are kept in {out}")
    plies = manifest["plies"]
    assert isinstance(plies, list)
    size = sum(int(entry["bytes"]) for entry in plies)
    click.echo(
        f"{out}: a release of {len(plies)} files, {size / 1e6:,.1f} MB; "
        f"{duration_text(time.perf_counter() - started)}"
    )


class _CompressLines:
    """A compression's progress as lines on stderr, its ETA from this run's own rate (the
    plies an earlier run made are not counted as done by this one)."""

    def __init__(self, every: float) -> None:
        self.lines = ProgressLines("compressing", "numbers", every)

    def __call__(self, state: CompressProgress) -> None:
        self.lines(state.done - state.resumed, state.total - state.resumed)

    def close(self) -> None:
        self.lines.close()
