"""``ttt``: the command group. Each command lives in its own module, imported only when run,
so that ``ttt query`` does not pay for the solver's imports and the reverse."""

from __future__ import annotations

import importlib

import click

from ttt_solve import __version__
from ttt_solve.cli.common import debug_option, run_entry

COMMANDS = {
    "solve": "ttt_solve.cli.solve:solve",
    "query": "ttt_solve.cli.query:query",
    "stats": "ttt_solve.cli.stats:stats",
    "export": "ttt_solve.cli.export:export",
    "verify": "ttt_solve.cli.verify:verify",
    "audit": "ttt_solve.cli.audit:audit",
    "curve": "ttt_solve.cli.curve:curve",
    "tournament": "ttt_solve.cli.tournament:tournament",
    "rate": "ttt_solve.cli.rate:rate_command",
    "play": "ttt_solve.cli.play:play",
    "serve": "ttt_solve.cli.serve:serve",
    "atlas": "ttt_solve.cli.atlas:atlas",
    "evalset": "ttt_solve.cli.evalset:evalset",
    "table": "ttt_solve.cli.table:table",
}
"""Command name -> ``module:attribute``."""


class LazyGroup(click.Group):
    """A group whose commands are imported on first use (click's lazy-loading pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in COMMANDS if self._load(name) is not None]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._load(name)

    @staticmethod
    def _load(name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name == module_name:
                return None
            raise
        return getattr(module, attribute)


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
