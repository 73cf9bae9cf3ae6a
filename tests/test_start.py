"""A fast start: the help of ``ttt``, of each of its commands and of ``ttt-solve`` is printed
without importing SQLAlchemy or Numba (nor NumPy): each is read in a fresh process from its
``sys.modules``, started as the console scripts start."""

import json
import subprocess
import sys

import pytest

from ttt_solve.cli.main import COMMANDS

HEAVY = ("sqlalchemy", "numba", "numpy")
"""The libraries a help text must not load: each costs a tenth of a second or more."""

ENVIRONMENTS = {("ttt", "evalset"): "numpy"}
"""What a help may load all the same, and why: the evaluation sets live in ``ttt_solve.rl``,
whose import registers the environments with Gymnasium and PettingZoo where they are
installed, and those import NumPy."""

HELP = """
import io, json, sys
from contextlib import redirect_stdout
from ttt_solve.cli import entry
sys.argv = [sys.argv[1], *sys.argv[2:], "--help"]
try:
    with redirect_stdout(io.StringIO()) as shown:
        getattr(entry, sys.argv[0].replace("-", "_"))()
except SystemExit as end:
    code = end.code
print(json.dumps([code, shown.getvalue(), sorted({name.split(".")[0] for name in sys.modules})]))
"""


def help_imports(*argv: str) -> tuple[str, set[str]]:
    """The help that ``argv`` prints (``ttt audit``: ``("ttt", "audit")``) and the top-level
    packages its process imported."""
    done = subprocess.run(
        [sys.executable, "-c", HELP, *argv], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    code, shown, modules = json.loads(done.stdout.splitlines()[-1])
    assert code == 0 and "--help" in shown
    return shown, set(modules)


@pytest.mark.parametrize(
    "argv", [("ttt",), ("ttt-solve",), *(("ttt", name) for name in COMMANDS)], ids=" ".join
)
def test_help_imports_neither_sqlalchemy_nor_numba_nor_numpy(argv):
    _, modules = help_imports(*argv)
    allowed = {ENVIRONMENTS[argv]} & modules if argv in ENVIRONMENTS else set()
    assert modules & set(HEAVY) == allowed


def test_the_group_lists_every_command_without_importing_one():
    shown, _ = help_imports("ttt")
    for name, listed in COMMANDS.items():
        assert f"  {name}" in shown and listed.summary in shown
    code = "import sys, ttt_solve.cli.main as m; m.ttt.get_help(m.click.Context(m.ttt)); " + (
        "print(sorted(n for n in sys.modules if n.startswith('ttt_solve.cli.') and n not in "
        "('ttt_solve.cli.main', 'ttt_solve.cli.common', 'ttt_solve.cli.signals')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr


def test_a_heavy_import_is_seen():
    shown, modules = help_imports("ttt", "solve")
    assert "Usage: ttt solve" in shown and "sqlalchemy" not in modules
    loaded = HELP.replace("import io,", "import numpy, io,")
    done = subprocess.run([sys.executable, "-c", loaded, "ttt"], capture_output=True, text=True)
    assert "numpy" in json.loads(done.stdout.splitlines()[-1])[2]
