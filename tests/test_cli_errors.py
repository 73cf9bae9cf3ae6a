"""Errors at the CLI's edge: a ``TttError`` is the user's to fix (one line, exit 2); anything
else is a bug in ttt-solve (one line naming it, exit 1), shown with its traceback under
``--debug`` or ``TTT_DEBUG=1``; Ctrl-C exits 130. And the CLI knows nothing of the tables."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest
from click.testing import CliRunner

import ttt_solve.book.solving
import ttt_solve.cli.stats
from ttt_solve.cli.main import ttt
from ttt_solve.cli.solve import solve

CLI = pathlib.Path(ttt_solve.cli.stats.__file__).parent


def internal_bug(*_args: object, **_kwargs: object) -> None:
    raise ValueError("list index went\nwrong")


def test_an_internal_value_error_is_reported_as_a_bug_not_as_bad_input(book_3x3, monkeypatch):
    monkeypatch.setattr(ttt_solve.cli.stats, "report", internal_bug)
    monkeypatch.delenv("TTT_DEBUG", raising=False)
    result = CliRunner().invoke(ttt, ["stats", "--db", book_3x3])
    assert result.exit_code == 1  # not 2: the user did nothing wrong
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and result.stdout == ""
    assert "bug in ttt-solve" in lines[0]
    assert "ValueError: list index went wrong" in lines[0]
    assert "--debug" in lines[0] and "TTT_DEBUG=1" in lines[0]
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "args, env",
    [(["--debug", "stats"], {}), (["stats"], {"TTT_DEBUG": "1"})],
    ids=["--debug", "TTT_DEBUG=1"],
)
def test_debug_lets_the_exception_through(book_3x3, monkeypatch, args, env):
    monkeypatch.setattr(ttt_solve.cli.stats, "report", internal_bug)
    result = CliRunner().invoke(ttt, [*args, "--db", book_3x3], env=env)
    assert result.exit_code == 1
    assert type(result.exception) is ValueError  # raised as it is, for Python to print
    assert "bug in ttt-solve" not in result.output


def test_ttt_solve_has_debug_too(tmp_path, monkeypatch):
    monkeypatch.setattr(ttt_solve.book.solving, "choose_method", internal_bug)
    monkeypatch.delenv("TTT_DEBUG", raising=False)
    db = str(tmp_path / "b.sqlite")
    plain = CliRunner().invoke(solve, ["--db", db])
    assert plain.exit_code == 1 and "bug in ttt-solve: ValueError" in plain.stderr
    debug = CliRunner().invoke(solve, ["--debug", "--db", db])
    assert debug.exit_code == 1 and type(debug.exception) is ValueError


def test_the_traceback_is_printed_with_debug(book_3x3):
    """In a real process: --debug prints Python's traceback, without it one line."""
    script = (
        "import sys, ttt_solve.cli.stats as stats\n"
        "def report(*args): raise ValueError('list index went wrong')\n"
        "stats.report = report\n"
        "from ttt_solve.cli.main import main\n"
        "sys.argv[0] = 'ttt'\n"
        "main()\n"
    )

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", script, *args, "stats", "--db", book_3x3],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )

    debug = run("--debug")
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert "ValueError: list index went wrong" in debug.stderr
    plain = run()
    assert plain.returncode == 1 and "Traceback" not in plain.stderr
    assert len(plain.stderr.strip().splitlines()) == 1


def test_a_user_error_is_still_one_line_and_exit_2(tmp_path):
    result = CliRunner().invoke(ttt, ["stats", "--db", str(tmp_path / "none.sqlite")])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1 and "no book at" in result.stderr


def test_ctrl_c_still_exits_130(book_3x3, monkeypatch):
    def interrupted(*_args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(ttt_solve.cli.stats, "report", interrupted)
    result = CliRunner().invoke(ttt, ["stats", "--db", book_3x3])
    assert result.exit_code == 130 and "interrupted" in result.stderr


def imported_modules(path: pathlib.Path) -> set[str]:
    """Every module a source file imports (``from a import b`` counts as a and a.b)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_the_cli_knows_nothing_of_the_tables():
    sources = sorted(CLI.glob("*.py"))
    assert len(sources) >= 10
    for path in sources:
        imports = imported_modules(path)
        assert not any(name.split(".")[0] == "sqlalchemy" for name in imports), path.name
        assert "ttt_solve.book.schema" not in imports, path.name


def test_the_import_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from ttt_solve.book import schema\nimport sqlalchemy as sa\n")
    assert {"ttt_solve.book.schema", "sqlalchemy"} <= imported_modules(bad)


def test_a_dask_work_folder_in_memory_is_refused_in_one_line_before_any_work(tmp_path):
    """``memory://`` names files that live in this process only: the Dask workers, other
    processes, found nothing there. It is refused before a cluster starts, saying why, and
    promising no resume (the error named a bare path, and said the same command resumed)."""
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    pytest.importorskip("pyarrow", reason="the dask extra is not installed")
    args = ["--size", "3", "--win", "3", "--engine", "dask", "--workdir", "memory://work"]
    result = CliRunner().invoke(solve, [*args, "--db", str(tmp_path / "b.sqlite")])
    assert result.exit_code == 2, result.output
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("Error: cannot use the work folder memory://work: "), line
    assert "local or shared file system" in line and "this process only" in line, line
    assert "resume" not in line, line


def test_a_work_file_missing_for_a_worker_is_said_so():
    """fsspec's ``FileNotFoundError`` holds the path alone; the line says what it means."""
    from ttt_solve.solver.exhaustive.distributed import work_problem

    line = work_problem("/shared/work", FileNotFoundError("/shared/work/ply-00/keys-0000.parquet"))
    assert "a file written there is missing, /shared/work/ply-00/keys-0000.parquet" in line
    assert "do all the Dask workers reach it?" in line


@pytest.mark.parametrize("kind", ["CliError", "DamageError"])
def test_an_error_of_many_lines_is_said_on_one(kind):
    import ttt_solve.cli.common as common

    error = getattr(common, kind)("a table\n  is damaged:\tply-10.tb")
    assert error.format_message() == "a table is damaged: ply-10.tb"
