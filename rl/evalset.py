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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ttt_solve.agents.grading import drawn_from_index
from ttt_solve.book.oracle import Oracle
from ttt_solve.book.records import GameInfo
from ttt_solve.book.rowfilter import RowFilter
from ttt_solve.errors import TttError
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
            raise EvalSetError("Parquet needs pyarrow: pip install 'ttt-solve[notebook]'") from None
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


def load(path: str | Path) -> EvalSet:
    """A set from its JSON lines or Parquet file (by the name's ending)."""
    path = Path(path)
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(path)
            records = table.to_pylist()
            seed = int((table.schema.metadata or {}).get(b"seed", b"0"))
        else:
            records = [json.loads(line) for line in path.read_text().splitlines() if line]
            seed = -1  # a JSON lines file does not say; its checksum names the set
    except FileNotFoundError:
        raise EvalSetError(f"no evaluation set at {path}") from None
    except (ValueError, OSError) as error:
        raise EvalSetError(f"{path} is not an evaluation set: {error}") from None
    if not records or any(set(r) != set(FIELDS) for r in records):
        raise EvalSetError(f"{path} is not an evaluation set: its records lack {FIELDS}")
    rows, cols, k = (int(n) for n in records[0]["game"].replace("k", "x").split("x"))
    records = [{name: record[name] for name in FIELDS} for record in records]
    return EvalSet(Rules(rows, cols, k), seed, tuple(records))
