"""Evaluation sets: frozen, seeded sets of decisive positions with their labels.

A position is *decisive* when at least one of its legal moves loses its value (turns a win
into a draw or a loss, or a draw into a loss): there a policy can be wrong. A set holds up to
``count`` of them, one per symmetry class (the canonical position), drawn without replacement
from every decisive position the book holds in a seeded order (:func:`drawing_order`; a large
game is drawn by number from its index, never listed), then sorted by ply and key.

Each record (:data:`FIELDS`): the position (``x.o/.x./...``, rows from the top) and its
canonical ``key``, ``ply``, the side ``to_move``, its ``value`` for the side to move
(``win``, ``draw``, ``loss``) and ``remoteness`` (plies to the end under perfect play), the
``best_moves`` (cells, row by row from 0; fastest win, slowest loss), every legal move's cell,
value and remoteness for its mover (``move_cells``, ``move_values``, ``move_remoteness``),
and its ``split``.

The split is ``test`` for a position whose seedless hash, ``blake2b("split:" + key)``, falls in
the lowest :data:`TEST_SHARE` of its range, ``train`` otherwise: a position is in the same split
in every set of its game, whatever the seed or size, and its symmetric images with it.

A set's identity is its :attr:`EvalSet.checksum`: the SHA-256 of its JSON lines
(:meth:`EvalSet.jsonl`, one record a line, keys sorted, no spaces). The Parquet file holds the
same records; its bytes depend on the pyarrow version, so its checksum is not the set's.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from ttt_solve.agents.grading import drawn_from_index
from ttt_solve.book.oracle import Oracle
from ttt_solve.book.records import GameInfo
from ttt_solve.book.rowfilter import RowFilter
from ttt_solve.errors import TttError, install_hint
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.sampling import open_positions

FORMAT = "ttt-evalset-1"
"""The format of a set's records; a change to them is a new format."""

FIELDS = (
    "game",
    "key",
    "position",
    "ply",
    "to_move",
    "value",
    "remoteness",
    "best_moves",
    "move_cells",
    "move_values",
    "move_remoteness",
    "split",
)
TEST_SHARE = 0.2
"""The share of positions in the ``test`` split."""

DEFAULT_COUNT = 2000

PUBLISHED = {
    "3x3k3-seed0-n2000": "b1ab1c36e834ad1d41f114ca7332acf16c7265b138346ed73f07e8a22679c767",
    "4x4k3-seed0-n2000": "3a62f726401d77978c361d74d7660019a6d3dee3f277ad4a9edf3813e0f4cf29",
    "4x4k4-seed0-n2000": "2b8067c1f50dbab7d47ca729b1a1a68bcced1a229f6c060d6a189470fedf2bc2",
    "4x5k4-seed0-n2000": "797938f9f009cf1924b6d22d93feb2557fa9da1a87e3fc2f49f8fccc54b4e2d7",
}
"""The checksums of the published sets (``data/evalsets/``, docs/rl.md), by the name
``ttt evalset`` gives their files: a file of that name is held to its set's checksum."""
OUTCOMES = ("win", "draw", "loss")


class EvalSetError(TttError, ValueError):
    """A set that cannot be built or read: a game the book lacks, a file that is no set."""


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def split_of(key: int) -> str:
    """``"test"`` or ``"train"``: from the canonical key alone (see the module docstring)."""
    return "test" if _hash(f"split:{key}") < TEST_SHARE * 2**64 else "train"


def order_of(seed: int, key: int) -> int:
    """Where a position comes in the seeded order of drawing."""
    return _hash(f"{seed}:{key}")


@dataclass(frozen=True)
class EvalSet:
    """A set of labelled decisive positions of one game (records as dicts of :data:`FIELDS`)."""

    rules: Rules
    seed: int
    records: tuple[dict[str, Any], ...]

    def __len__(self) -> int:
        return len(self.records)

    def jsonl(self) -> str:
        """The records as JSON lines: what the checksum is of."""
        return "".join(
            json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n"
            for record in self.records
        )

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.jsonl().encode()).hexdigest()

    def split(self, name: str) -> EvalSet:
        """The records of one split (``"train"`` or ``"test"``)."""
        if name not in ("train", "test"):
            raise EvalSetError(f"split {name!r} is not 'train' or 'test'")
        kept = tuple(r for r in self.records if r["split"] == name)
        return EvalSet(self.rules, self.seed, kept)

    def positions(self) -> Iterator[Position]:
        for record in self.records:
            yield Position.from_key(self.rules, record["key"])

    def write_jsonl(self, path: str | Path) -> None:
        _write_atomically(Path(path), lambda temporary: temporary.write_text(self.jsonl()))

    def write_parquet(self, path: str | Path) -> None:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise EvalSetError(f"Parquet needs pyarrow: {install_hint('notebook')}") from None
        table = pa.Table.from_pylist(list(self.records))
        metadata = {"format": FORMAT, "seed": str(self.seed), "checksum": self.checksum}
        table = table.replace_schema_metadata(metadata)
        _write_atomically(Path(path), lambda temporary: pq.write_table(table, temporary))

    def __repr__(self) -> str:
        test = sum(r["split"] == "test" for r in self.records)
        return (
            f"<EvalSet {self.rules.name} seed {self.seed}: {len(self)} positions "
            f"({len(self) - test} train, {test} test), sha256 {self.checksum[:12]}>"
        )


def _write_atomically(path: Path, write: Callable[[Path], Any]) -> None:
    """Write through a temporary file beside ``path``, renamed over it once complete, so
    that an interruption leaves no half-written set."""
    temporary = path.with_name(f".{path.name}.partial")
    try:
        write(temporary)
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)


def candidates(book: Any, rules: Rules) -> list[int]:
    """The canonical keys of every position the book holds that is not over."""
    keys: list[int] = []
    for chunk in book.columns(rules, where=RowFilter.of(open_only=True)):
        keys.extend(int(key) for key in chunk["key"])
    return keys


def drawing_order(book: Any, info: GameInfo, seed: int) -> Iterator[int]:
    """The canonical keys of the positions the book holds that are not over, in the order of
    ``seed``: the order of :func:`order_of` over the list of them, or for a large game held
    whole (:func:`~agents.grading.drawn_from_index`: 4x5 k=4, 5x5) the order in which they
    are drawn by number from the game's index, with no list made
    (:func:`solver.sampling.open_positions`, seeded by ``seed``)."""
    if drawn_from_index(info):
        drawn = open_positions(info.rules, _hash(f"evalset:{seed}"), per_class=True)
        return (position.key for position in drawn)
    return iter(sorted(candidates(book, info.rules), key=lambda key: order_of(seed, key)))


def record_of(oracle: Oracle, position: Position) -> dict[str, Any] | None:
    """The labels of ``position``, or ``None`` if it is not decisive."""
    analysis = oracle.analyse(position)
    value = analysis.value
    if all(move.value.outcome is value.outcome for move in analysis.moves):
        return None
    rules = position.rules
    moves = sorted(analysis.moves, key=lambda move: move.cell)
    return {
        "game": f"{rules.rows}x{rules.cols}k{rules.k}",
        "key": position.key,
        "position": str(position),
        "ply": position.ply,
        "to_move": position.to_move,
        "value": value.outcome.value,
        "remoteness": value.remoteness,
        "best_moves": list(analysis.best_moves),
        "move_cells": [move.cell for move in moves],
        "move_values": [move.value.outcome.value for move in moves],
        "move_remoteness": [move.value.remoteness for move in moves],
        "split": split_of(position.key),
    }


def build(
    book: Any,
    rules: Rules,
    *,
    count: int = DEFAULT_COUNT,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> EvalSet:
    """Up to ``count`` decisive positions of ``rules`` from ``book``, drawn in the order of
    ``seed``; ``progress(found, count)`` after each position found."""
    if count < 1:
        raise EvalSetError(f"count must be at least 1, not {count}")
    info = book.game(rules)  # a missing game says how to solve it
    oracle = Oracle(rules, book)
    records = []
    for key in drawing_order(book, info, seed):
        record = record_of(oracle, Position.from_key(rules, key))
        if record is None:
            continue
        records.append(record)
        if progress is not None:
            progress(len(records), count)
        if len(records) == count:
            break
    records.sort(key=lambda r: (r["ply"], r["key"]))
    return EvalSet(rules, seed, tuple(records))


def load(path: str | Path, checksum: str | None = None) -> EvalSet:
    """A set from its JSON lines or Parquet file (by the name's ending), every record checked
    (:func:`checked_records`). The set's checksum must be ``checksum`` where it is given, the
    published one (:data:`PUBLISHED`) where the file is named as a published set, and a Parquet
    file's own (in its metadata)."""
    path = Path(path)
    records, seed, stored = _read(path)
    rules = checked_records(records, path)
    made = EvalSet(rules, seed, tuple({name: r[name] for name in FIELDS} for r in records))
    found = made.checksum
    name = path.name.partition(".")[0]
    for expected, what in (
        (stored, "the checksum in its metadata"),
        (PUBLISHED.get(name), f"that of the published set {name}"),
        (checksum, "the checksum asked for"),
    ):
        if expected is not None and expected != found:
            raise EvalSetError(
                f"{path}: its records' sha256 is {found}, not {expected}, {what}: the file was "
                f"changed (or drawn from another book); rebuild it with ttt evalset"
            )
    return made


def _read(path: Path) -> tuple[list[Any], int, str | None]:
    """A file's records, the seed it says it was drawn with (-1: unsaid) and the checksum it
    says it has (``None``: unsaid)."""
    try:
        if path.suffix == ".parquet":
            return _read_parquet(path)
        records = [json.loads(line) for line in path.read_text().splitlines() if line]
        return records, -1, None  # a JSON lines file does not say; its checksum names the set
    except FileNotFoundError:
        raise EvalSetError(f"no evaluation set at {path}") from None
    except IsADirectoryError:
        raise EvalSetError(f"{path} is a folder, not an evaluation set") from None
    except RecursionError:
        raise EvalSetError(f"{path} is not an evaluation set: it nests too deep") from None
    except (ValueError, OSError) as error:
        raise EvalSetError(f"{path} is not an evaluation set: {_short(error)}") from None


def _read_parquet(path: Path) -> tuple[list[Any], int, str | None]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise EvalSetError(f"Parquet needs pyarrow: {install_hint('notebook')}") from None
    table = pq.read_table(path)
    metadata = table.schema.metadata or {}
    try:
        seed = int(metadata.get(b"seed", b"0"))
        stored = metadata[b"checksum"].decode() if b"checksum" in metadata else None
    except (ValueError, UnicodeDecodeError):
        raise EvalSetError(f"{path} is not an evaluation set: its metadata is none") from None
    return table.to_pylist(), seed, stored


_GAME = re.compile(r"(\d{1,2})x(\d{1,2})k(\d{1,2})")


def checked_records(records: list[Any], path: Path | str) -> Rules:
    """The game of a set's ``records``, each checked against it: fields of the right kinds,
    a canonical key of a legal position the other fields describe, its legal moves exactly,
    its best moves among them. Anything else is an :class:`EvalSetError` naming the file, the
    line and the field."""
    if not records:
        raise EvalSetError(f"{path} is not an evaluation set: it holds no record")
    rules = None
    for line, record in enumerate(records, 1):
        where = f"{path} is not an evaluation set: record {line}"
        if not isinstance(record, dict) or set(record) != set(FIELDS):
            raise EvalSetError(f"{where}: a record holds exactly the fields {', '.join(FIELDS)}")
        game = record["game"]
        if rules is None:
            rules = _rules_of(game, where)
        elif game != records[0]["game"]:
            raise EvalSetError(
                f"{where}: game {_short(game)}, where the set is of {records[0]['game']}: "
                f"a set holds one game"
            )
        _check_record(record, rules, where)
    assert rules is not None
    return rules


def _rules_of(game: Any, where: str) -> Rules:
    found = _GAME.fullmatch(game) if isinstance(game, str) else None
    if found is None:
        raise EvalSetError(f"{where}: game {_short(game)} is no game (e.g. 3x3k3)")
    try:
        return Rules(*(int(n) for n in found.groups()))
    except ValueError as error:
        raise EvalSetError(f"{where}: game {game}: {error}") from None


def _check_record(record: dict[str, Any], rules: Rules, where: str) -> None:
    def refuse(name: str, what: str) -> NoReturn:
        raise EvalSetError(f"{where}: {name} {_short(record[name])} {what}")

    key = record["key"]
    if not _whole(key) or not 0 <= key < 1 << 2 * rules.cells:
        refuse("key", f"is no key of {rules.name}")
    position = Position.from_key(rules, key)
    if position.x & position.o or position.canonical_key != key or not _legal(position):
        refuse("key", f"is no canonical key of a position of {rules.name}")
    if record["position"] != str(position):
        refuse("position", f"is not the position of its key ({position})")
    if record["ply"] != position.ply or not _whole(record["ply"]):
        refuse("ply", f"is not its position's ({position.ply})")
    if record["to_move"] != position.to_move:
        refuse("to_move", f"is not its position's ({position.to_move})")
    if record["split"] not in ("train", "test"):
        refuse("split", "is not train or test")
    _check_value(record, "value", "remoteness", rules, refuse)
    cells = record["move_cells"]
    if not isinstance(cells, list) or cells != sorted(position.legal_moves()):
        refuse("move_cells", "are not its position's legal moves, in order")
    for name in ("move_values", "move_remoteness"):
        if not isinstance(record[name], list) or len(record[name]) != len(cells):
            refuse(name, "is no list of one entry per move")
    for value, remoteness in zip(record["move_values"], record["move_remoteness"]):
        _check_value({"v": value, "r": remoteness}, "v", "r", rules, _refuse_move(refuse))
    best = record["best_moves"]
    if not isinstance(best, list) or not best or any(cell not in cells for cell in best):
        refuse("best_moves", "are not among its legal moves")


def _refuse_move(refuse: Callable[[str, str], NoReturn]) -> Callable[[str, str], NoReturn]:
    """The refusal of a move's value or remoteness, named by the list it stands in."""
    names = {"v": "move_values", "r": "move_remoteness"}
    return lambda name, what: refuse(names[name], f"hold an entry that {what}")


def _check_value(
    record: dict[str, Any],
    value: str,
    remoteness: str,
    rules: Rules,
    refuse: Callable[[str, str], NoReturn],
) -> None:
    if record[value] not in OUTCOMES:
        refuse(value, "is not win, draw or loss")
    if not _whole(record[remoteness]) or not 0 <= record[remoteness] <= rules.cells:
        refuse(remoteness, f"is no number of plies from 0 to {rules.cells}")


def _whole(value: Any) -> bool:
    return type(value) is int


def _legal(position: Position) -> bool:
    try:
        Position.parse(str(position), position.rules)
    except ValueError:
        return False
    return True


def _short(value: Any) -> str:
    """``repr`` of what a file held, cut to a line's worth."""
    text = repr(value) if not isinstance(value, BaseException) else str(value)
    return text if len(text) <= 60 else f"{text[:57]}... ({len(text):,} characters)"
