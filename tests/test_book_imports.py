"""The modules of the book package import one way: no cycle, lazy and type-only imports included."""

import ast
import pathlib

BOOK = pathlib.Path(__file__).resolve().parent.parent / "book"


def book_imports(folder: pathlib.Path) -> dict[str, set[str]]:
    """The book modules each module of ``folder`` imports, wherever the import is (at the
    top, in a function, under ``TYPE_CHECKING``)."""
    modules = {path.stem for path in folder.glob("*.py")} - {"__init__"}
    graph: dict[str, set[str]] = {}
    for name in modules:
        found = set()
        for node in ast.walk(ast.parse((folder / f"{name}.py").read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "ttt_solve.book":
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module.removeprefix("ttt_solve.book."))
            elif isinstance(node, ast.Import):
                found.update(alias.name.removeprefix("ttt_solve.book.") for alias in node.names)
        graph[name] = found & modules
    return graph


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


def test_the_book_package_has_no_import_cycle():
    graph = book_imports(BOOK)
    assert {"reader", "records", "backend", "sqliterows", "enginerows"} <= set(graph)
    assert "reader" in graph["writer"] and "records" in graph["reader"]
    assert cycle(graph) is None


def test_the_cycle_check_can_fail(tmp_path):
    (tmp_path / "reader.py").write_text("from ttt_solve.book.records import GameInfo\n")
    (tmp_path / "records.py").write_text(
        "def f():\n    from ttt_solve.book import schema\n    return schema\n"
    )
    (tmp_path / "schema.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from ttt_solve.book.reader import Book\n"
    )
    graph = book_imports(tmp_path)
    assert graph == {"reader": {"records"}, "records": {"schema"}, "schema": {"reader"}}
    assert cycle(graph) == ["reader", "records", "schema", "reader"]
