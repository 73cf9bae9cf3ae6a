"""The import graph of ttt_solve's modules, read from their source, and a cycle finder over it.

The modules are found as the package installs them: pyproject.toml's ``package-dir`` maps each
subpackage to its folder. An edge records where the import stands: at module level, under
``if TYPE_CHECKING:``, or inside which function (a lazy import)."""

from __future__ import annotations

import ast
import pathlib
from typing import NamedTuple

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = "ttt_solve"


class Import(NamedTuple):
    """One import statement of ``source`` naming the module ``target``."""

    source: str
    target: str
    type_only: bool
    """Under ``if TYPE_CHECKING:``: read by type checkers, never run."""
    functions: tuple[str, ...]
    """The functions it stands in, outermost first; empty at module level."""

    @property
    def at_import_time(self) -> bool:
        """Run when ``source`` is imported: at module level and not for type checkers only."""
        return not self.type_only and not self.functions


def package_modules(root: pathlib.Path = ROOT) -> dict[str, pathlib.Path]:
    """Every module of the installed package (``ttt_solve.agents.audit``; a subpackage's
    ``__init__.py`` under the subpackage's own name) and its source file."""
    setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = setuptools["package-dir"]
    modules = {}
    for package in setuptools["packages"]:
        # a subpackage without a mapping of its own lies in its parent's folder
        mapped = max((p for p in folders if package == p or package.startswith(p + ".")), key=len)
        folder = pathlib.Path(folders[mapped], *package[len(mapped) :].split(".")[1:])
        for path in sorted((root / folder).glob("*.py")):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            modules[name] = path
    return modules


def folder_modules(folder: pathlib.Path, package: str) -> dict[str, pathlib.Path]:
    """The modules of one folder read as ``package``."""
    paths = folder.glob("*.py")
    return {f"{package}.{path.stem}": path for path in paths if path.stem != "__init__"}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Finder(ast.NodeVisitor):
    """The imports of one module, each with where it stands."""

    def __init__(self, source: str, modules: set[str]) -> None:
        self.source = source
        self.modules = modules
        self.functions: list[str] = []
        self.type_only = False
        self.found: list[Import] = []

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking(node.test):
            self.generic_visit(node)
            return
        outer, self.type_only = self.type_only, True
        for child in node.body:
            self.visit(child)
        self.type_only = outer
        for child in node.orelse:
            self.visit(child)

    def _add(self, target: str) -> None:
        if target in self.modules and target != self.source:
            self.found.append(Import(self.source, target, self.type_only, tuple(self.functions)))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return
        for alias in node.names:
            submodule = f"{node.module}.{alias.name}"
            # ``from ttt_solve.book import schema`` imports the module schema; ``from
            # ttt_solve.book.reader import Book`` a name of the module reader.
            self._add(submodule if submodule in self.modules else node.module)


def imports(modules: dict[str, pathlib.Path]) -> list[Import]:
    """Every import between ``modules``, wherever it stands in its module."""
    found: list[Import] = []
    for name, path in sorted(modules.items()):
        finder = _Finder(name, set(modules))
        finder.visit(ast.parse(path.read_text(), str(path)))
        found.extend(finder.found)
    return found


def graph(edges: list[Import], modules: dict[str, pathlib.Path]) -> dict[str, set[str]]:
    """The modules each module imports, by the ``edges`` given."""
    result: dict[str, set[str]] = {name: set() for name in modules}
    for edge in edges:
        result[edge.source].add(edge.target)
    return result


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` (its modules in import order, the first again at the end), or
    ``None``."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        if module in path:
            return path[path.index(module) :] + [module]
        if module in done:
            return None
        path.append(module)
        for imported in sorted(graph[module]):
            found = visit(imported)
            if found:
                return found
        path.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        found = visit(module)
        if found:
            return found
    return None


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of ``graph`` with more than one module: each is one knot of
    cycles, which no import order can untie."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    parts: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in graph[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            part = []
            while True:
                top = stack.pop()
                part.append(top)
                if top == module:
                    break
            if len(part) > 1:
                parts.append(sorted(part))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(parts)
