"""Every backend of a book implements the interface Book talks to (book.backend)."""

import importlib
import inspect
import pkgutil
from typing import Any, Protocol

import ttt_solve.book
from tests.pg_support import solve_into
from ttt_solve.book.backend import Backend, Catalogue, Database
from ttt_solve.book.defaults import SCHEMA_VERSION
from ttt_solve.book.enginerows import EngineRows
from ttt_solve.book.reader import open_book
from ttt_solve.book.rowfilter import RowFilter
from ttt_solve.book.sqliterows import SqliteRows
from ttt_solve.solver.rules import Rules

DATABASES = (SqliteRows, EngineRows)
"""The backends that are also the book's catalogue (its meta and games tables)."""


def protocol_members(protocol: type) -> dict[str, Any]:
    """The members a protocol declares (its own and its protocol bases'), by name: a method's
    function, or ``None`` for an attribute."""
    members: dict[str, Any] = {}
    for cls in reversed(protocol.__mro__):
        if cls in (object, Protocol) or not getattr(cls, "_is_protocol", False):
            continue
        members.update({name: None for name in cls.__dict__.get("__annotations__", {})})
        members.update(
            {
                name: value
                for name, value in vars(cls).items()
                if not name.startswith("_") and inspect.isfunction(value)
            }
        )
    return members


def missing_members(cls: type, protocol: type, instance: object | None = None) -> list[str]:
    """What ``cls`` (and ``instance``, for attributes set by ``__init__``) lacks of
    ``protocol``: a member it does not have, or a method whose parameters differ."""
    problems = []
    for name, declared in protocol_members(protocol).items():
        if declared is None:
            if not hasattr(instance if instance is not None else cls, name):
                problems.append(f"no attribute {name}")
            continue
        method = getattr(cls, name, None)
        if not callable(method):
            problems.append(f"no method {name}")
            continue
        wanted = _parameters(declared)
        if _parameters(method) != wanted:
            problems.append(f"{name} takes {_parameters(method)}, not {wanted}")
    return problems


def _parameters(method: Any) -> list[str]:
    """A method's parameters as a caller sees them: names, and ``*`` before keyword-only ones."""
    names = []
    for parameter in inspect.signature(method).parameters.values():
        if parameter.kind is parameter.KEYWORD_ONLY and "*" not in names:
            names.append("*")
        names.append(parameter.name)
    return names


def book_classes() -> list[type]:
    """Every concrete class defined in the book package that streams a game's positions (has
    a method that only a backend has)."""
    found = []
    for module_info in pkgutil.iter_modules(ttt_solve.book.__path__):
        module = importlib.import_module(f"ttt_solve.book.{module_info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or inspect.isabstract(cls):
                continue
            if getattr(cls, "_is_protocol", False):
                continue
            if any(callable(getattr(cls, name, None)) for name in ("chunks", "column_chunks")):
                found.append(cls)
    return found


def test_the_members_of_the_interfaces_are_found():
    assert set(protocol_members(Backend)) == {
        "errors",
        "positions",
        "family",
        "analyse",
        "chunks",
        "column_chunks",
        "close",
    }
    assert set(protocol_members(Catalogue)) == {
        "errors",
        "tables",
        "schema_version",
        "games",
        "close",
    }
    assert set(protocol_members(Database)) == set(protocol_members(Backend)) | set(
        protocol_members(Catalogue)
    )


def test_every_backend_of_the_book_package_implements_the_interface():
    backends = book_classes()
    assert set(DATABASES) <= set(backends)
    for cls in backends:
        assert missing_members(cls, Backend) == [], cls.__name__
    for cls in DATABASES:
        assert missing_members(cls, Database) == [], cls.__name__


def test_a_backend_missing_a_method_is_caught():
    class Incomplete(SqliteRows):
        pass

    assert missing_members(Incomplete, Backend) == []
    Incomplete.family = None  # type: ignore[assignment,method-assign]
    assert missing_members(Incomplete, Backend) == ["no method family"]

    class Misnamed(SqliteRows):
        def positions(self, rules, game, ply, keys):  # type: ignore[no-untyped-def,override]
            return super().positions(rules, game, ply, keys)

    assert missing_members(Misnamed, Backend) == [
        "positions takes ['self', 'rules', 'game', 'ply', 'keys'], "
        "not ['self', 'rules', 'game_id', 'ply', 'keys']"
    ]


def test_the_backends_of_an_open_book_answer_alike(book_db):
    """The instances a book holds have the interface's attributes too, and both ways into
    the same database give the same rows."""
    rules = Rules(3, 3, 3)
    solve_into(book_db, rules)
    with open_book(book_db) as book:
        info = book.game(rules)
        database = book._rows
        assert missing_members(type(database), Database, database) == []
        engine = EngineRows(book.engine)
        assert missing_members(EngineRows, Database, engine) == []
        for backend in {type(database): database, EngineRows: engine}.values():
            assert [row[1:4] for row in backend.games(rules)] == [(3, 3, 3)]
            assert backend.schema_version() == str(SCHEMA_VERSION)
        rows = [row for chunk in database.chunks(rules, info.id, RowFilter(), 100) for row in chunk]
        streamed = [row for chunk in engine.chunks(rules, info.id, RowFilter(), 7) for row in chunk]
        assert rows == streamed and len(rows) == info.positions
        ply_2 = [row for row in rows if row[0] == 2]
        keys = [row[1] for row in ply_2]
        for backend in (database, engine):  # each key once, in key order; unstored ones left out
            assert backend.positions(rules, info.id, 2, keys[::-1] + keys) == ply_2
            assert backend.positions(rules, info.id, 2, [keys[1], 0b11]) == [ply_2[1]]
