"""Options that several commands declare alike, and the checks that go with them.

Each function returns a click decorator; a command stacks them as it would ``click.option``.
The help texts that differ between commands are arguments.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, NamedTuple

import click

from ttt_solve.cli.common import CliError, db_option, jobs_option, quoted, whole_number
from ttt_solve.errors import TttError

# The agents and the charts are imported where grading options are checked: most commands
# (a lookup above all) declare options from here and never need them.

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

HELP_SETTINGS = {"help_option_names": ["-h", "--help"]}


def command(name: str, epilog: str | None = None) -> Callable[[Callable[..., Any]], click.Command]:
    """A command that also takes ``-h`` for help."""
    return click.command(name, context_settings=HELP_SETTINGS, epilog=epilog)


def stacked(*decorators: Decorator) -> Decorator:
    """One decorator applying ``decorators`` as if written one above the other, in order."""

    def apply(function: Callable[..., Any]) -> Callable[..., Any]:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


def agent_option(help: str, **settings: Any) -> Decorator:
    """``--agent SPEC``; ``settings`` go to ``click.option`` (default, required, multiple...)."""
    destination = "agent_specs" if settings.get("multiple") else "agent_spec"
    return click.option("--agent", destination, metavar="SPEC", help=help, **settings)


class Bounded(click.IntRange):
    """A whole number from ``lowest`` to ``largest``: anything else (a number out of range,
    thousands of digits, a word) is a one-line error that quotes it, names the option and
    says the range, before any work. (A book keeps counts and seeds as 64-bit integers; past
    that, storing one failed, and a count past any machine's patience ran until killed.)"""

    def __init__(self, lowest: int, largest: int, shown: str | None = None) -> None:
        super().__init__(lowest, largest)
        self.lowest, self.largest = lowest, largest
        self.shown = shown or f"{lowest:,} to {largest:,}"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        name = param.opts[0] if param is not None and param.opts else "the number"
        text = str(value).strip()
        digits = text.lstrip("+-").lstrip("0")
        if not re.fullmatch(r"[+-]?[0-9]+", text):
            raise CliError(f"{name} {quoted(text)} is not a whole number ({self.shown})")
        if len(digits) > len(str(self.largest)) or not self.lowest <= int(text) <= self.largest:
            raise CliError(f"{name} {quoted(text)} is out of range: {self.shown}")
        return int(text)

    def _describe_range(self) -> str:
        return self.shown


MAX_GAMES = 100_000
"""The most games a command plays per pair of agents, or grades an agent on."""

MAX_BOOTSTRAP = 10_000
"""The most resamples of a bootstrap (each refits every rating)."""

MAX_SEED = 2**63 - 1
"""The largest seed: a book keeps a ladder's seed as a 64-bit integer."""

MAX_RATING = 10_000
"""The largest rating (plus or minus) an anchor may fix: past any Elo scale in use."""

GAMES = Bounded(1, MAX_GAMES)
BOOTSTRAP = Bounded(0, MAX_BOOTSTRAP)
SEED = Bounded(0, MAX_SEED, "0 to 2**63-1")


class Anchor(click.ParamType):
    """``SPEC=RATING``, the rating at most :data:`MAX_RATING` either side of 0; the text is
    passed on as given (the command reads it as it did)."""

    name = "SPEC=RATING"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from ttt_solve.agents.rating import parse_anchor

        text = str(value)
        try:
            _, rating = parse_anchor(text)
        except TttError as error:
            raise CliError(str(error)) from None
        if abs(rating) > MAX_RATING:
            raise CliError(
                f"--anchor {quoted(text)}: the rating must be from -{MAX_RATING:,} "
                f"to {MAX_RATING:,}"
            )
        return text


ANCHOR = Anchor()


def seed_option(help: str, default: int | None = 0) -> Decorator:
    return click.option(
        "--seed",
        type=SEED,
        default=default,
        show_default=default is not None,
        metavar="N",
        help=help,
    )


def sample_option(help: str) -> Decorator:
    """``--sample N``: how many positions of each ply a tablebase's check draws."""
    return click.option(
        "--sample",
        type=click.IntRange(1),
        default=10_000,
        show_default=True,
        metavar="N",
        help=help,
    )


def search_seconds_option(default: float, help: str) -> Decorator:
    return click.option(
        "--search-seconds", type=float, default=default, show_default=True, metavar="S", help=help
    )


def count_option(name: str, default: int, help: str, largest: int) -> Decorator:
    """An option taking a whole number of at least 1 (``N``) and at most ``largest``, shown
    with its default."""
    return click.option(
        name,
        type=Bounded(1, largest),
        default=default,
        show_default=True,
        metavar="N",
        help=help,
    )


def quiet_option(help: str = "No progress bar.") -> Decorator:
    return click.option("--quiet", "-q", is_flag=True, help=help)


def agents_run_options(seed_help: str, jobs_help: str) -> Decorator:
    """``--db``, ``--seed`` and ``--jobs``, in that order: the book agents may read, the seed
    of their random choices and the processes they play in, for a command that runs agents
    over many positions or games."""
    return stacked(db_option, seed_option(seed_help), jobs_option(jobs_help))


class Grading(NamedTuple):
    """The options of :func:`grading_mode_options` as typed, handed to the command as one
    ``grading``: checked by :func:`grading_sample` before any work."""

    positions: str | None  # all|sample:N, None where not given
    games: int | None
    opponent: str  # a spec: the opponent in games mode
    per_class: bool


def _as_grading(command: Callable[..., Any]) -> Callable[..., Any]:
    """The command, called with its grading options as one ``grading``."""

    @functools.wraps(command)
    def graded(
        *args: Any,
        positions: str | None,
        games: int | None,
        opponent_spec: str,
        per_class: bool,
        **kwargs: Any,
    ) -> Any:
        return command(*args, grading=Grading(positions, games, opponent_spec, per_class), **kwargs)

    return graded


def grading_mode_options(positions_help: str, games_help: str, per_class_help: str) -> Decorator:
    """``--positions``, ``--games``, ``--opponent`` and ``--per-class``: the two ways of
    grading an agent, handed to the command as one ``grading`` (:class:`Grading`)."""
    return stacked(
        _as_grading,
        click.option("--positions", default=None, metavar="all|sample:N", help=positions_help),
        click.option("--games", type=GAMES, default=None, metavar="N", help=games_help),
        click.option(
            "--opponent",
            "opponent_spec",
            default="random",
            show_default=True,
            metavar="SPEC",
            help="The opponent in --games mode.",
        ),
        click.option("--per-class", is_flag=True, help=per_class_help),
    )


def report_options(plot_help: str, csv_help: str) -> Decorator:
    """``--plot FILE``, ``--json`` and ``--csv``: where a grading's figures go."""
    return stacked(
        click.option(
            "--plot", "plot_path", default=None, metavar="FILE.svg|FILE.png", help=plot_help
        ),
        click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON."),
        click.option("--csv", "as_csv", is_flag=True, help=csv_help),
    )


def parse_positions(text: str) -> int | None:
    """``all`` -> ``None``; ``sample:N`` -> ``N``; anything else is a :class:`CliError`."""
    token = text.strip().lower()
    if token == "all":
        return None
    match = re.fullmatch(r"sample:(\d+)", token)
    if match:
        number = whole_number(match.group(1))
        if number is not None and number > 0:
            return number
    raise CliError(
        f"--positions {quoted(text)} is not 'all' or 'sample:N' with 1 <= N < 10**18 "
        f"(e.g. --positions sample:500)"
    )


def check_plot(plot_path: str | None) -> None:
    """A ``--plot`` file that could not be written is refused before any work."""
    if plot_path is None:
        return
    from ttt_solve.presentation import charts

    try:
        charts.check_target(plot_path)
    except TttError as error:
        raise CliError(str(error)) from None


def grading_sample(
    grading: Grading, plot_path: str | None, as_json: bool, as_csv: bool
) -> int | None:
    """Checks the options of :func:`grading_mode_options` and :func:`report_options` together,
    before any work: the positions to sample (None: all, or games mode)."""
    from ttt_solve.agents.spec import parse_spec

    if as_json and as_csv:
        raise CliError("--json and --csv are alternatives: choose one")
    positions, games = grading.positions, grading.games
    if games is not None and positions is not None:
        raise CliError("--positions and --games are two modes: choose one")
    if games is not None:
        parse_spec(grading.opponent)
    check_plot(plot_path)
    return parse_positions(positions or "all") if games is None else None
