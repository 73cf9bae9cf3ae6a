"""``ttt``: the command group. Each command lives in its own module, imported only when run,
so that ``ttt query`` does not pay for the solver's imports and the reverse."""

from __future__ import annotations

import importlib
from typing import NamedTuple

import click

from ttt_solve import __version__
from ttt_solve.cli.common import debug_option, run_entry


class Listed(NamedTuple):
    """A command as the group knows it before loading it: where it lives, and the line that
    names it in ``ttt --help``."""

    target: str  # "module:attribute"
    summary: str


COMMANDS = {
    "solve": Listed("ttt_solve.cli.solve:solve", "Solve a game and store it in the book."),
    "query": Listed(
        "ttt_solve.cli.query:query", "Show the value of a position and of every legal move."
    ),
    "stats": Listed(
        "ttt_solve.cli.stats:stats", "Analyse a solved game: positions, outcomes, remoteness."
    ),
    "export": Listed("ttt_solve.cli.export:export", "Export a solved game's table."),
    "verify": Listed("ttt_solve.cli.verify:verify", "Check a stored game against its children."),
    "audit": Listed("ttt_solve.cli.audit:audit", "Grade an agent's moves against the book."),
    "curve": Listed("ttt_solve.cli.curve:curve", "Audit agents at many values of one parameter."),
    "tournament": Listed(
        "ttt_solve.cli.tournament:tournament", "Round robin: every pair of agents plays N games."
    ),
    "rate": Listed(
        "ttt_solve.cli.rate:rate_command", "Rate agents on the Elo scale against a ladder."
    ),
    "play": Listed("ttt_solve.cli.play:play", "Play an agent on the terminal."),
    "serve": Listed("ttt_solve.cli.serve:serve", "Serve a web explorer of the book."),
    "atlas": Listed("ttt_solve.cli.atlas:atlas", "Decide every game up to 8x8 with k from 3 to 6."),
    "evalset": Listed(
        "ttt_solve.cli.evalset:evalset", "Write an evaluation set of decisive positions."
    ),
    "benchmark": Listed(
        "ttt_solve.cli.benchmark:benchmark", "Score agents on a frozen set against perfect play."
    ),
    "table": Listed(
        "ttt_solve.cli.table:table",
        "A tablebase's own commands: build, catalogue, figures, verify.",
    ),
}
"""Command name -> where it lives and its line in the group's help."""


class LazyGroup(click.Group):
    """A group whose commands are imported on first use (click's lazy-loading pattern): its
    own help lists them from :data:`COMMANDS` without importing any."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        listed = COMMANDS.get(name)
        if listed is None:
            return None
        module_name, attribute = listed.target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name == module_name:
                return None
            raise
        command: click.Command = getattr(module, attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, listed.summary) for name, listed in COMMANDS.items()])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="ttt-solve")
@debug_option
def ttt() -> None:
    """Solve m,n,k-games (generalised tic-tac-toe), query the truth, grade agents.

    \b
    Start with:
      ttt solve --size 3 --win 3      # or: ttt-solve --size 3 --win 3
      ttt query x.o/.x./... --size 3 --win 3
    """


def main() -> None:
    """Entry point of the ``ttt`` script."""
    run_entry(ttt, "ttt")
