"""The package's shape: one import name, one version, and a clear word for old plug-ins."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import ttt_solve
from ttt_solve.cli.main import ttt

ROOT = Path(__file__).resolve().parent.parent


def test_ttt_version_is_the_package_version():
    result = CliRunner().invoke(ttt, ["--version"])
    assert result.exit_code == 0
    assert result.output.split()[-1] == ttt_solve.__version__


@pytest.mark.slow
def test_the_wheel_installs_one_top_level_package(tmp_path):
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        pytest.skip(f"pip could not build the wheel here: {built.stderr.strip()[-300:]}")
    (wheel,) = tmp_path.glob("ttt_solve-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        top_level = next(n for n in archive.namelist() if n.endswith("top_level.txt"))
        assert archive.read(top_level).decode().split() == ["ttt_solve"]
        tops = {name.split("/")[0] for name in archive.namelist()}
        modules = {name for name in archive.namelist() if name.endswith(".py")}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"ttt_solve"}
    for part in ("solver/rules.py", "book/reader.py", "cli/main.py", "agents/base.py"):
        assert f"ttt_solve/{part}" in modules
    assert f"ttt_solve-{ttt_solve.__version__}.dist-info" in tops


def test_the_plugin_api_is_importable_from_the_agents_package():
    from ttt_solve.agents import Agent
    from ttt_solve.agents.base import Agent as BaseAgent

    assert Agent is BaseAgent


def test_a_plugin_written_for_the_old_import_names_gets_a_one_line_error(tmp_path, book_3x3):
    (tmp_path / "old_plugin.py").write_text(
        "from agents.base import Agent\n\ndef make(rng, **params):\n    return Agent(rng)\n"
    )
    # A fresh process in a folder of its own, where no old top-level 'agents' can be found.
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from ttt_solve.cli.main import main; main()",
            "audit",
            "--agent",
            "py:old_plugin:make",
            "--db",
            book_3x3,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "from ttt_solve.agents import Agent" in lines[0]
    assert "'agents.base'" in lines[0] or "'agents'" in lines[0]
