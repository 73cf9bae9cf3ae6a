"""The examples of README.md and docs/*.md are real sessions: this test runs them.

A console example is a fenced block marked ``console``: a line starting with ``$ `` is a
command, the lines after it, up to the next command, its expected output (standard output and
standard error together, in the order written). A Python example is a fenced block marked
``pycon``, run as a doctest. Both compare with doctest's checker, ELLIPSIS and
NORMALIZE_WHITESPACE, so ``...`` stands for times, dates and lines left out.

The blocks of one page run in order, in one temporary directory of their own, so a book solved
by an earlier command is there for the next command or Python example; ``examples/``,
``tests/engines/`` and the independent table reader are linked into it, as the commands are
written to run from a checkout.
Output that is shown but too slow to check goes in a block marked ``text``, which is not run.
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKDOWN = [*PAGES, ROOT / "data" / "README.md"]
"""Every Markdown page of the project: the pages and the data folder's notes."""
README_MAX_LINES = 200
CHECK_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
COMMAND_SECONDS = 120
# Prose and measured figures: the commands they cite take minutes, so they show no sessions.
PAGES_WITHOUT_CHECKED_EXAMPLES = {"design.md", "benchmarks.md"}
PAGE_NEEDS = {
    "web.md": ("uvicorn", "web"),
    "scale-out.md": ("distributed", "dask"),
    "notebooks.md": ("pandas", "notebook"),
    "rl.md": ("gymnasium", "rl"),
    "table-format.md": ("zstandard", "compressed"),
}
"""Pages whose examples run an optional extra: (the module it installs, the extra)."""

# Files and places that belong to the people working on the project, not to its users.
OUTSIDE_REFERENCE = re.compile(r"CONVENTIONS\.md|MEASURED\.md|STYLE\.md|\.\./shared")


class Block(NamedTuple):
    """One fenced block of a page."""

    kind: str  # the word after the opening fence: console, pycon, text, sh, ...
    text: str
    line: int  # line number of its first content line in the page


class Command(NamedTuple):
    """One ``$ `` line of a console block and the output expected from it."""

    command: str
    expected: str
    line: int


def fenced_blocks(page: Path) -> list[Block]:
    """Every fenced block of a Markdown page, in order."""
    return parse_fences(page.name, page.read_text(encoding="utf-8"))


def parse_fences(name: str, markdown: str) -> list[Block]:
    """Every fenced block of the Markdown text of page ``name``, in order. A fence is a line
    that starts with three backticks: an opening one may name the block's kind, a closing one
    holds nothing else. A closing fence with text after it is no fence to a Markdown renderer
    (CommonMark): the block would go on and swallow the rest of the page, so it is an error
    here, as is a block never closed or an opening fence whose kind is more than one word."""
    blocks = []
    kind = None
    body: list[str] = []
    start = 0
    for number, line in enumerate(markdown.splitlines(), start=1):
        fence = line.startswith("```")
        if kind is None:
            opening = re.match(r"^```(\S*)\s*$", line)
            assert opening or not fence, f"{name}, line {number}: a malformed opening fence"
            if opening:
                kind, body, start = opening.group(1), [], number + 1
        elif fence:
            assert line.rstrip() == "```", (
                f"{name}, line {number}: text after the fence closing the block of line "
                f"{start - 1}; it does not close it"
            )
            blocks.append(Block(kind, "".join(text + "\n" for text in body), start))
            kind = None
        else:
            body.append(line)
    assert kind is None, f"{name}: the block opened at line {start - 1} is never closed"
    return blocks


def console_commands(block: Block) -> list[Command]:
    """The commands of a console block, each with its expected output."""
    commands: list[Command] = []
    lines = block.text.splitlines()
    assert lines and lines[0].startswith("$ "), (
        f"line {block.line}: a console block starts with a '$ ' command line"
    )
    for offset, line in enumerate(lines):
        if line.startswith("$ "):
            commands.append(Command(line[2:], "", block.line + offset))
        else:
            last = commands[-1]
            commands[-1] = last._replace(expected=last.expected + line + "\n")
    return commands


def run_command(command: str, cwd: Path) -> str:
    """Run one documented command in a shell, as a user would; stdout and stderr together."""
    env = dict(os.environ)
    # The installed ttt and ttt-solve, and python3, are those of the interpreter running the tests.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    # Unbuffered, so that standard output and standard error interleave as in a terminal.
    env["PYTHONUNBUFFERED"] = "1"
    for name in ("TTT_DEBUG", "NO_COLOR", "FORCE_COLOR"):
        env.pop(name, None)
    result = subprocess.run(
        command,
        shell=True,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=COMMAND_SECONDS,
    )
    return result.stdout


def check_console(page: Path, block: Block, cwd: Path) -> list[str]:
    """Run a console block's commands; a message for each whose output differs."""
    checker = doctest.OutputChecker()
    failures = []
    for command in console_commands(block):
        got = run_command(command.command, cwd)
        if not checker.check_output(command.expected, got, CHECK_FLAGS):
            failures.append(
                f"{page.name}, line {command.line}: $ {command.command}\n"
                f"--- expected\n{command.expected}--- got\n{got}"
            )
    return failures


def check_pycon(page: Path, block: Block, cwd: Path, globs: dict) -> list[str]:
    """Run a pycon block as a doctest in ``cwd``, in the page's globals; its report on failure."""
    test = doctest.DocTestParser().get_doctest(
        block.text, globs, f"{page.name}:{block.line}", str(page), block.line - 1
    )
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=CHECK_FLAGS)
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        runner.run(test, out=report.append, clear_globs=False)
    finally:
        os.chdir(previous)
    # DocTest copies the globals it is given: keep this block's names for the next block.
    globs.update(test.globs)
    return ["".join(report)] if runner.failures else []


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_examples_are_real_sessions(page: Path, tmp_path: Path) -> None:
    if page.name in PAGE_NEEDS:
        module, extra = PAGE_NEEDS[page.name]
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{page.name} runs the {extra} extra: pip install -e '.[{extra}]'")
    for linked in ("examples", "tests/engines", "tests/independent_table_reader.py"):
        target = tmp_path / linked
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(ROOT / linked)
    globs: dict = {}
    failures = []
    for block in fenced_blocks(page):
        if block.kind == "console":
            failures += check_console(page, block, tmp_path)
        elif block.kind == "pycon":
            failures += check_pycon(page, block, tmp_path, globs)
    assert not failures, "\n".join(failures)


def test_pages_with_sessions_check_them() -> None:
    """Every page but the prose ones runs at least one example, so its sessions stay true."""
    for page in PAGES:
        if page.name in PAGES_WITHOUT_CHECKED_EXAMPLES:
            continue
        kinds = {block.kind for block in fenced_blocks(page)}
        assert kinds & {"console", "pycon"}, f"{page.name} has no checked example"


@pytest.mark.parametrize(
    "markdown",
    [
        "```console\n$ ttt\n``` and prose after the fence\n\nMore prose.\n",
        "```console\n$ ttt\n",
        "```python title\nprint()\n```\n",
    ],
    ids=["text after a closing fence", "unclosed", "two-word kind"],
)
def test_malformed_fences_are_caught(markdown: str) -> None:
    with pytest.raises(AssertionError, match="fence|never closed"):
        parse_fences("page.md", markdown)


@pytest.mark.parametrize("page", MARKDOWN, ids=[str(page.relative_to(ROOT)) for page in MARKDOWN])
def test_fences_are_well_formed(page: Path) -> None:
    """Every page, run or not, renders as written: each block closed by a bare fence."""
    fenced_blocks(page)


def test_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_docs_cite_nothing_outside_the_repository() -> None:
    for page in MARKDOWN:
        found = OUTSIDE_REFERENCE.search(page.read_text(encoding="utf-8"))
        assert found is None, f"{page.name} cites {found.group(0)}"


def test_links_between_pages_resolve() -> None:
    for page in MARKDOWN:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def heading_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation but ``-`` and ``_``
    dropped, spaces to hyphens, ``-1``, ``-2`` after repeats (fenced code has no headings)."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    in_code = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        heading = None if in_code else re.match(r"#{1,6} (.+)", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            repeats = seen.get(slug, 0)
            seen[slug] = repeats + 1
            anchors.add(slug if repeats == 0 else f"{slug}-{repeats}")
    return anchors


def test_heading_anchors_follow_github() -> None:
    page = (
        "# Benchmarks\n## Exporting a book: `bench/bench_export.py`\n"
        "```\n# not one\n```\n# Benchmarks"
    )
    assert heading_anchors(page) == {
        "benchmarks",
        "exporting-a-book-benchbench_exportpy",
        "benchmarks-1",
    }


def test_links_to_headings_resolve() -> None:
    for page in MARKDOWN:
        text = page.read_text(encoding="utf-8")
        for target, anchor in re.findall(r"\]\(([^)#\s]*)#([^)\s]+)\)", text):
            if "://" in target:
                continue
            linked = page.parent / target if target else page
            anchors = heading_anchors(linked.read_text(encoding="utf-8"))
            assert anchor in anchors, f"{page.name} links to {target}#{anchor}: no such heading"
