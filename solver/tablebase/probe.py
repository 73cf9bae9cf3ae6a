"""Reading a tablebase: a position's value, remoteness and every move's value, rank -> record.

A :class:`Table` is a folder built by :func:`solver.tablebase.build.build_table`. A look-up ranks
the
position in its ply's index (:class:`solver.tablebase.lookup.PlyIndex`: the class of its X set
by bisection over the representatives' ranks, then the rank of its O set) and reads one byte of
the ply's file through a memory map; a move's value is its child's, looked up the same way. No
search, and neither NumPy nor Numba is loaded.

Opening a ply's file checks its header and length (a truncated file is refused);
``verify=True``, or :meth:`Table.verify`, also checks each file's digest.
"""

from __future__ import annotations

import json
import mmap
import struct
from collections.abc import Callable
from pathlib import Path

from ttt_solve.solver.errors import InvalidPositionError
from ttt_solve.solver.position import Position, iter_cells
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.files import (
    HEADER_SIZE,
    TableError,
    TableFileError,
    TableHeader,
    ply_path,
    read_header,
    verify,
)
from ttt_solve.solver.tablebase.lookup import NONE, PlyIndex, score_of_record
from ttt_solve.solver.value import Value, move_value

MANIFEST = "table.json"


class _Ranks:
    """The representatives' ranks of a ply's file, read from its memory map as a sequence
    (for bisection)."""

    def __init__(self, data: mmap.mmap, count: int) -> None:
        self.data = data
        self.count = count
        self.unpack = struct.Struct("<Q").unpack_from

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, number: int) -> int:
        if not 0 <= number < self.count:
            raise IndexError(number)
        value: int = self.unpack(self.data, HEADER_SIZE + 8 * number)[0]
        return value


class _PlyFile:
    """One ply's file, mapped: its index and its records."""

    def __init__(self, path: Path, rules: Rules, ply: int) -> None:
        self.header: TableHeader = read_header(path, rules, ply)
        with open(path, "rb") as handle:
            self.data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self.index = PlyIndex(rules, ply, _Ranks(self.data, self.header.reps))
        self.records_at = HEADER_SIZE + 8 * self.header.reps

    def record(self, x: int, o: int) -> int:
        return self.data[self.records_at + self.index.index(x, o)]


class Table:
    """A game's tablebase in a folder: look positions up by rank."""

    def __init__(
        self, folder: Path | str, rules: Rules | None = None, verify: bool = False
    ) -> None:
        """Open the table in ``folder`` (its manifest names the game; ``rules``, if given,
        must match). ``verify``: check every file's digest now (reads the whole table)."""
        self.folder = Path(folder)
        manifest_path = self.folder / MANIFEST
        try:
            manifest = json.loads(manifest_path.read_text())
            game = manifest["rules"]
            found = Rules(game["rows"], game["cols"], game["k"])
        except FileNotFoundError:
            raise TableError(
                f"{self.folder}: no finished table here (no {MANIFEST}); build it first"
            ) from None
        except (ValueError, KeyError, TypeError):
            raise TableFileError(manifest_path, "not a table manifest") from None
        if rules is not None and rules != found:
            raise TableError(f"{self.folder}: a table of {found.name}, not of {rules.name}")
        self.rules = found
        self.digests = {entry["ply"]: entry["blake2b"] for entry in manifest["plies"]}
        self._plies: dict[int, _PlyFile] = {}
        if verify:
            self.verify()

    def verify(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Check every ply's file against its digest (and the manifest's record of it);
        returns the files checked. ``progress(done, total)`` is told the bytes read after
        each file."""
        paths = [ply_path(self.folder, ply) for ply in range(self.rules.cells + 1)]
        sizes = [path.stat().st_size if path.exists() else 0 for path in paths]
        for ply, path in enumerate(paths):
            header = verify(path, self.rules, ply)
            if header.digest.hex() != self.digests.get(ply):
                raise TableFileError(path, "its digest is not the one the manifest holds")
            if progress is not None:
                progress(sum(sizes[: ply + 1]), sum(sizes))
        return len(paths)

    def _ply(self, ply: int) -> _PlyFile:
        if ply not in self._plies:
            self._plies[ply] = _PlyFile(ply_path(self.folder, ply), self.rules, ply)
        return self._plies[ply]

    def record(self, position: Position) -> int:
        """The record of a position (:mod:`solver.tablebase.step`)."""
        if position.rules != self.rules:
            raise InvalidPositionError(
                f"a position of {position.rules.name} looked up in a table of {self.rules.name}"
            )
        return self._ply(position.ply).record(position.x, position.o)

    def value(self, position: Position) -> Value:
        """The value of a position for the side to move, with its remoteness."""
        record = self.record(position)
        if record == NONE:
            problem = position.illegality() or "the table holds no such position"
            raise InvalidPositionError(f"{position} is not a position of a game: {problem}")
        return Value.from_score(score_of_record(record), position.empty_count)

    def moves(self, position: Position) -> dict[int, Value]:
        """Every legal move's value for its mover, by cell (none once the game is over)."""
        if position.is_terminal:
            return {}
        ply = self._ply(position.ply + 1)
        empties = position.empty_count - 1
        values = {}
        x_moves = position.x_to_move
        for cell in iter_cells(position.empty):
            bit = 1 << cell
            x, o = (position.x | bit, position.o) if x_moves else (position.x, position.o | bit)
            record = ply.record(x, o)
            if record == NONE:
                raise InvalidPositionError(f"{position} is not a position of a game")
            values[cell] = move_value(Value.from_score(score_of_record(record), empties))
        return values

    def close(self) -> None:
        """Unmap the files opened so far (a later look-up opens them again)."""
        for ply_file in self._plies.values():
            try:
                ply_file.data.close()
            except BufferError:
                # NumPy arrays still view the map (a stream stopped midway): it is unmapped
                # when the last of them goes.
                pass
        self._plies.clear()

    def analyse(self, position: Position) -> tuple[Value, dict[int, Value]]:
        """The position's value and every move's: what a query shows."""
        return self.value(position), self.moves(position)
