"""The modules of the book package import one way: no cycle, lazy and type-only imports included."""

from tests.import_graph import PACKAGE, cycle, folder_modules, graph, imports, package_modules


def test_the_book_package_has_no_import_cycle():
    modules = {
        name: path
        for name, path in package_modules().items()
        if name.startswith(f"{PACKAGE}.book.")
    }
    book = graph(imports(modules), modules)
    names = {name.removeprefix(f"{PACKAGE}.book.") for name in book}
    assert {"reader", "records", "backend", "sqliterows", "enginerows"} <= names
    assert f"{PACKAGE}.book.reader" in book[f"{PACKAGE}.book.writer"]
    assert f"{PACKAGE}.book.records" in book[f"{PACKAGE}.book.reader"]
    assert cycle(book) is None


def test_the_cycle_check_can_fail(tmp_path):
    (tmp_path / "reader.py").write_text("from ttt_solve.book.records import GameInfo\n")
    (tmp_path / "records.py").write_text(
        "def f():\n    from ttt_solve.book import schema\n    return schema\n"
    )
    (tmp_path / "schema.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from ttt_solve.book.reader import Book\n"
    )
    modules = folder_modules(tmp_path, "ttt_solve.book")
    book = graph(imports(modules), modules)
    reader, records, schema = (f"ttt_solve.book.{name}" for name in ("reader", "records", "schema"))
    assert book == {reader: {records}, records: {schema}, schema: {reader}}
    assert cycle(book) == [reader, records, schema, reader]
