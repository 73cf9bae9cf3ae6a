"""The package's import graph, laid out as it installs: each floor imports only the floors below
it (a value reaches the report above it only from the hook that shows it), no cycle at import
time, and no cycle at all but those a drawing's lazy ``_repr_*`` hook explains (python-chess's
``Board._repr_svg_`` importing ``chess.svg``), or a lazy edge listed below with why it is
there."""

from __future__ import annotations

from tests.import_graph import (
    FLOORS,
    PACKAGE,
    Import,
    circles,
    cycle,
    folder_modules,
    graph,
    imports,
    package_modules,
)

ALLOWED = {
    ("agents.adapters", "agents.plugin", "play"): "the plug-in module builds its agents on the "
    "adapters; an adapter calls the plug-in guard only when it plays a move",
    (
        "solver.exhaustive.keyarrays",
        "solver.exhaustive.kernels",
        "__init__",
    ): "the compiled kernels cost Numba's load "
    "(seconds): loaded only by the key arrays that use them; they read keyarrays' NO_MOVE",
    (
        "solver.prover.pairing",
        "solver.prover.negamax",
        "find_pairing",
    ): "the pairing finder is negamax's own, "
    "so that the search runs the same code; pairing is its front end for a whole position",
    (
        "solver.prover.negamax",
        "solver.prover.search",
        "TYPE_CHECKING",
    ): "negamax is also compiled by search, which it reads for its table types only",
    **{
        ("solver.tablebase.probe", "solver.tablebase.many", where): "the probe's compiled "
        "look-ups cost Numba's load: loaded only by a process that asks many positions (a "
        "one-position query loads neither NumPy nor Numba); they read the probe's records"
        for where in ("compile", "probe_many", "TYPE_CHECKING")
    },
    ("web.workers", "web.work", "_spawn"): "a worker process runs web.work, which answers "
    "through the pool's own types",
    ("web.pictures", "web.views", "TYPE_CHECKING"): "the pictures read a page's Setup and State, "
    "for their types only",
}
"""Lazy and type-only imports that close a cycle in the full graph, by (importer, imported,
where: the function the import stands in, or ``TYPE_CHECKING``) under ``ttt_solve.``."""

LAYERS = ("solver", "book", "agents")
"""The subpackages of values that a picture draws: they reach the presentation only lazily."""

SHOWN_BY = ("__repr__", "text", "chart")
"""The methods (beside ``_repr_*``) through which a value shows itself: a report module above
the value is imported there, when it is called."""


def floor(module: str) -> int:
    """The floor of a module of the package (its subpackage's, or its own at the root)."""
    name = module.removeprefix(PACKAGE).removeprefix(".").split(".")[0]
    return next(level for level, names in enumerate(FLOORS) if name in names)


def shown_by_hook(edge: Import) -> bool:
    """Whether ``edge`` is a lazy import in a method through which a value shows itself
    (``_repr_*``, or one of :data:`SHOWN_BY`)."""
    if not edge.functions or not edge.in_method or edge.type_only:
        return False
    return edge.functions[-1].startswith("_repr_") or edge.functions[-1] in SHOWN_BY


def where(edge: Import) -> str:
    return "TYPE_CHECKING" if edge.type_only and not edge.functions else edge.functions[-1]


def explained(edge: Import, allowed: dict[tuple[str, str, str], str]) -> bool:
    """Whether ``edge`` may close a cycle: it stands in a ``_repr_*`` hook or a value's method
    that shows it (:func:`shown_by_hook`), or is listed."""
    if any(function.startswith("_repr_") for function in edge.functions) or shown_by_hook(edge):
        return True
    if edge.at_import_time:
        return False
    short = (edge.source.removeprefix(f"{PACKAGE}."), edge.target.removeprefix(f"{PACKAGE}."))
    return (*short, where(edge)) in allowed


def unexplained_cycle(modules, allowed) -> list[str] | None:
    """A cycle of the full import graph of ``modules`` that no allowed edge explains."""
    edges = [edge for edge in imports(modules) if not explained(edge, allowed)]
    return cycle(graph(edges, modules))


def test_no_module_imports_itself_back_at_import_time():
    modules = package_modules()
    assert {f"{PACKAGE}.presentation.svg", f"{PACKAGE}.agents.audit"} <= set(modules)
    edges = [edge for edge in imports(modules) if edge.at_import_time]
    assert cycle(graph(edges, modules)) is None


def test_every_cycle_goes_through_a_repr_hook_or_an_allowed_lazy_edge():
    modules = package_modules()
    assert unexplained_cycle(modules, ALLOWED) is None
    # The board's own cycle is still there, through Position._repr_svg_: lazy edges are read.
    knots = circles(graph(imports(modules), modules))
    drawing = {f"{PACKAGE}.{name}" for name in ("presentation.picture", "presentation.svg")}
    assert sorted({*drawing, f"{PACKAGE}.solver.position"}) in knots


def test_every_allowed_edge_is_still_there():
    found = {
        (
            edge.source.removeprefix(f"{PACKAGE}."),
            edge.target.removeprefix(f"{PACKAGE}."),
            where(edge),
        )
        for edge in imports(package_modules())
        if not edge.at_import_time
    }
    assert set(ALLOWED) - found == set()


def test_values_reach_the_drawings_and_reports_only_from_functions():
    shown = (f"{PACKAGE}.presentation.", f"{PACKAGE}.reports.")
    eager = [
        edge
        for edge in imports(package_modules())
        if edge.source.split(".")[1] in LAYERS
        and (edge.target + ".").startswith(shown)
        and not edge.functions
    ]
    assert eager == []


def upward(edges: list[Import]) -> list[Import]:
    """The imports of ``edges`` that reach a floor above their own other than from a value's
    method that shows it (:func:`shown_by_hook`)."""
    return [
        edge
        for edge in edges
        if floor(edge.target) > floor(edge.source) and not shown_by_hook(edge)
    ]


def test_each_floor_imports_only_the_floors_below_it():
    modules = package_modules()
    assert {floor(name) for name in modules} == set(range(len(FLOORS)))
    assert upward(imports(modules)) == []


def test_the_drawings_import_nothing_above_the_solver():
    """Drawings are functions of positions, values and plain figures: not even a type of the
    book, the agents or the reports, and not even lazily (a report draws with them)."""
    drawings = floor(f"{PACKAGE}.presentation")
    above = [
        (edge.source, edge.target)
        for edge in imports(package_modules())
        if floor(edge.source) == drawings and floor(edge.target) > drawings
    ]
    assert above == []


def test_an_import_up_a_floor_is_found(tmp_path):
    (tmp_path / "audit.py").write_text(
        "class AuditReport:\n    def _repr_html_(self):\n"
        "        from ttt_solve.reports.audit import html\n        return html(self)\n"
    )
    modules = {"ttt_solve.agents.audit": tmp_path / "audit.py"}
    (tmp_path / "report.py").write_text("from ttt_solve.agents.audit import AuditReport\n")
    modules["ttt_solve.reports.audit"] = tmp_path / "report.py"
    assert upward(imports(modules)) == []  # the report imported from the value's hook

    (tmp_path / "display.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from ttt_solve.agents.audit import AuditReport\n"
    )
    modules["ttt_solve.presentation.display"] = tmp_path / "display.py"
    found = upward(imports(modules))
    assert [(edge.source, edge.target) for edge in found] == [
        ("ttt_solve.presentation.display", "ttt_solve.agents.audit")
    ]


def test_a_cycle_through_any_other_function_is_found(tmp_path):
    (tmp_path / "position.py").write_text(
        "class Position:\n    def _repr_svg_(self):\n        from ttt_solve.draw import svg\n"
        "        return svg.board(self)\n"
    )
    (tmp_path / "svg.py").write_text("from ttt_solve.draw.position import Position\n")
    (tmp_path / "report.py").write_text(
        "def text(report):\n    from ttt_solve.draw import svg\n    return svg.board(report)\n"
    )
    modules = folder_modules(tmp_path, "ttt_solve.draw")
    assert unexplained_cycle(modules, {}) is None  # through _repr_svg_ only

    (tmp_path / "svg.py").write_text(
        "from typing import TYPE_CHECKING\nfrom ttt_solve.draw.position import Position\n"
        "if TYPE_CHECKING:\n    from ttt_solve.draw.report import Report\n"
    )
    found = unexplained_cycle(modules, {})
    assert found == ["ttt_solve.draw.report", "ttt_solve.draw.svg", "ttt_solve.draw.report"]
    assert unexplained_cycle(modules, {("draw.report", "draw.svg", "text"): "why"}) is None


def test_the_picture_of_the_floors_is_drawn_from_them():
    """docs/img/layers.svg is what docs/layers.py draws from :data:`FLOORS` as they are."""
    import importlib.util

    from tests.import_graph import ROOT

    spec = importlib.util.spec_from_file_location("layers", ROOT / "docs" / "layers.py")
    assert spec is not None and spec.loader is not None
    layers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layers)
    assert (ROOT / "docs" / "img" / "layers.svg").read_text() == layers.svg()
    assert set(layers.ROOMS) == {name for floor in FLOORS for name in floor}
