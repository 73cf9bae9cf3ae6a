"""Short functions: a function says one step, and its name says which. Read from the source of
the installed package: at most :data:`MOST_LONG` functions (methods and nested functions
counted) run past :data:`LONG` lines, and none past :data:`LONGEST`."""

from __future__ import annotations

import ast
import pathlib
from typing import NamedTuple

from tests.import_graph import package_modules

LONG = 60
"""Lines (from ``def`` to the last line of the body, docstring included) past which a
function is long."""
MOST_LONG = 20
"""How many long functions the library may hold."""
LONGEST = 120
"""No function runs past this."""


class Function(NamedTuple):
    lines: int
    name: str  # module.Class.function
    where: str  # path:line


def functions(modules: dict[str, pathlib.Path]) -> list[Function]:
    """Every function of ``modules`` with its length in lines, longest first."""
    found = []
    for module, path in modules.items():
        stack: list[tuple[ast.AST, str]] = [(ast.parse(path.read_text(), str(path)), module)]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = (child.end_lineno or child.lineno) - child.lineno + 1
                    found.append(
                        Function(lines, f"{prefix}.{child.name}", f"{path}:{child.lineno}")
                    )
                    stack.append((child, f"{prefix}.{child.name}"))
                elif isinstance(child, ast.ClassDef):
                    stack.append((child, f"{prefix}.{child.name}"))
                else:
                    stack.append((child, prefix))
    return sorted(found, reverse=True)


def listing(found: list[Function]) -> str:
    return "\n".join(f"{f.lines:4} {f.name} ({f.where})" for f in found)


def test_few_functions_are_long():
    long = [f for f in functions(package_modules()) if f.lines > LONG]
    assert len(long) <= MOST_LONG, listing(long)


def test_no_function_is_very_long():
    very_long = [f for f in functions(package_modules()) if f.lines > LONGEST]
    assert very_long == [], listing(very_long)


def test_a_long_function_is_found_where_it_stands(tmp_path):
    statements = "".join(f"        x{i} = {i}\n" for i in range(LONG))
    source = (
        "class C:\n    def ok(self):\n        return 1\n\n    def run(self):\n"
        + statements
        + "\n\ndef outer():\n    def inner():\n"
        + statements
        + "    return inner\n"
    )
    (tmp_path / "m.py").write_text(source)
    found = functions({"ttt_solve.m": tmp_path / "m.py"})
    long = {f.name: f.lines for f in found if f.lines > LONG}
    assert long == {
        "ttt_solve.m.C.run": LONG + 1,
        "ttt_solve.m.outer": LONG + 3,
        "ttt_solve.m.outer.inner": LONG + 1,
    }
