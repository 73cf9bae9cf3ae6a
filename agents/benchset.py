"""The benchmark's frozen position sets: drawn from a game's tablebase once, read without it.

A set sorts positions into a 3 x 3 **grid**: the stage of the game by plies played
(``opening``, ``middle``, ``end``) and the difficulty by the position's remoteness, its plies
to the end under perfect play (``near``, ``mid``, ``far``). The boundaries are the board's
(:data:`GRIDS`: each cell holds positions on it) and are written in the set. Each cell holds
two samples, its **splits**:

* ``every``: :data:`PER_CELL` of the cell's canonical positions that are not over;
* ``decisive``: :data:`PER_CELL` of those where some move loses the value (turns a win into a
  draw or a loss, or a draw into a loss): where an agent can go wrong.

**How a cell is drawn.** For each ply of its stage, the ply's canonical positions whose
remoteness lies in the cell's band come in a seeded uniform order
(:class:`~ttt_solve.solver.tablebase.sample.PlySample`, seeded by the set's seed and the ply).
The ``every`` split takes the next position of each ply in turn, ply after ply, until it holds
:data:`PER_CELL` (a ply that has no more drops out), so that each ply of the stage weighs the
same; the ``decisive`` split takes the next decisive position of each ply in turn the same way,
looking at most :data:`DECISIVE_SEARCH` positions into a ply. A position may be in both splits.
Each is posed in one of its symmetric images, drawn from the seed and its key, so that an
agent sees boards in every orientation; it carries every legal move's exact value, so that any
agent is scored without the table.

**The file.** JSON lines, one object a line with its keys sorted and no spaces: first the
header (``format``, the game, ``seed``, ``per_cell``, the grid, ``table``: the SHA-256 of the
table's ``table.json``, which names each of its files by digest), then one line a position,
sorted by stage, difficulty, ply and board:

``{"difficulty":"near","moves":{"a1":"L2","b2":"D13",...},"ply":6,"position":"x.o./...",
"remoteness":13,"splits":["every","decisive"],"stage":"opening","value":"draw"}``

``position`` is written as ``docs/conventions.md`` writes boards (rows from the top), ``value``
and ``remoteness`` are the position's for the side to move, and ``moves`` every legal move's
value for its mover, as ``W3`` (a win in 3 plies), ``D12`` (a draw) or ``L2`` (a loss in 2),
by cell name. The set's identity is the SHA-256 of the file's bytes, published beside it in
``SHA256SUMS`` (the format ``sha256sum`` writes and checks) and checked on every load: a set
with one changed value fails.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from ttt_solve.agents.match import derive_seed
from ttt_solve.errors import TttError
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.record import DECIDED, DRAW, value_of_record
from ttt_solve.solver.value import Outcome, Value

FORMAT = "ttt-benchmark-1"
"""The format of a set's lines; a change to them is a new format."""
STAGES = ("opening", "middle", "end")
DIFFICULTIES = ("near", "mid", "far")
SPLITS = ("every", "decisive")
PER_CELL = 300
"""Positions in each split of each cell: a value-kept share's 95% interval is at most about
±5.6 points wide."""
DECISIVE_SEARCH = 20_000
"""How many positions of a ply the ``decisive`` split looks at before giving the ply up."""
CHECKSUMS = "SHA256SUMS"
DATA = Path(__file__).resolve().parent.parent / "data" / "benchmarks"
"""Where the published sets lie in a checkout of the project."""

Progress = Callable[[int, int], None]


class BenchmarkSetError(TttError, ValueError):
    """A set that cannot be made or read: no set of the game, a file that is no set, a set whose
    checksum is not the published one, a grid that does not fit the board."""


def _span(text: str, top: int, what: str) -> tuple[int, int]:
    low, dash, high = text.strip().partition("-")
    try:
        span = (int(low), int(high) if high.strip() else top) if dash else (int(low), int(low))
    except ValueError:
        raise BenchmarkSetError(f"{what} {text.strip()!r} is not a range like 3-6 or 7-") from None
    return span


@dataclass(frozen=True)
class Grid:
    """The boundaries of a board's grid: the plies of each stage and the remoteness of each
    difficulty, inclusive ranges, three of each."""

    stages: tuple[tuple[int, int], ...]
    bands: tuple[tuple[int, int], ...]

    @classmethod
    def parse(cls, stages: str, bands: str, rules: Rules) -> Grid:
        """A grid written as ``0-8,9-16,17-24`` (plies) and ``1-2,3-6,7-`` (remoteness; an open
        end runs to the board's cells), checked against the board."""
        grid = cls(
            tuple(_span(part, rules.cells - 1, "stage") for part in stages.split(",")),
            tuple(_span(part, rules.cells, "difficulty") for part in bands.split(",")),
        )
        grid.check(rules)
        return grid

    def check(self, rules: Rules) -> None:
        """Three stages covering the plies 0 .. cells - 1 in order, three difficulties covering
        the remoteness 1 .. cells in order; else :class:`BenchmarkSetError`."""
        for spans, names, low, high in (
            (self.stages, "stages", 0, rules.cells - 1),
            (self.bands, "difficulties", 1, rules.cells),
        ):
            starts = [low] + [end + 1 for _, end in spans[:-1]]
            if (
                len(spans) != 3
                or [start for start, _ in spans] != starts
                or any(end < start for start, end in spans)
                or spans[-1][1] != high
            ):
                written = ",".join(f"{a}-{b}" for a, b in spans)
                raise BenchmarkSetError(
                    f"{names} {written} of {rules.name}: give three ranges in order that cover "
                    f"{low}-{high} without a gap"
                )

    def stage_of(self, ply: int) -> str:
        return next(STAGES[i] for i, (low, high) in enumerate(self.stages) if low <= ply <= high)

    def difficulty_of(self, remoteness: int) -> str:
        return next(
            DIFFICULTIES[i] for i, (low, high) in enumerate(self.bands) if low <= remoteness <= high
        )

    def records(self, ply: int, band: tuple[int, int], cells: int) -> list[int]:
        """The table's records (:mod:`solver.tablebase.lookup`) of the positions of ``ply`` not
        over whose remoteness lies in ``band``: a draw's is its empty cells."""
        low, high = band
        kept = [DECIDED + r for r in range(max(1, low), min(high, cells - ply) + 1)]
        return ([DRAW] if low <= cells - ply <= high else []) + kept

    def to_dict(self) -> dict[str, dict[str, list[int]]]:
        return {
            "stages": {name: list(span) for name, span in zip(STAGES, self.stages)},
            "difficulties": {name: list(span) for name, span in zip(DIFFICULTIES, self.bands)},
        }

    @classmethod
    def from_dict(cls, data: dict[str, dict[str, list[int]]]) -> Grid:
        return cls(
            tuple((int(data["stages"][n][0]), int(data["stages"][n][1])) for n in STAGES),
            tuple(
                (int(data["difficulties"][n][0]), int(data["difficulties"][n][1]))
                for n in DIFFICULTIES
            ),
        )

    def describe(self) -> dict[str, str]:
        """Each stage's and difficulty's range in words: ``plies 0-8``, ``remoteness 7-25``."""
        words = {n: f"plies {a}-{b}" for n, (a, b) in zip(STAGES, self.stages)}
        words.update({n: f"remoteness {a}-{b}" for n, (a, b) in zip(DIFFICULTIES, self.bands)})
        return words


GRIDS: dict[str, Grid] = {
    "4x4k4": Grid(((0, 8), (9, 10), (11, 15)), ((1, 2), (3, 4), (5, 16))),
    "4x5k4": Grid(((0, 6), (7, 12), (13, 19)), ((1, 2), (3, 6), (7, 20))),
    "5x5k4": Grid(((0, 8), (9, 16), (17, 24)), ((1, 2), (3, 6), (7, 25))),
    "5x5k5": Grid(((0, 12), (13, 18), (19, 24)), ((1, 2), (3, 5), (6, 25))),
}
"""Each board's grid. ``near`` is 1 or 2 plies everywhere (the next move or the reply ends the
game); the rest is chosen so that every cell holds positions: wins come late on a board where
k is large (none before ply 6 on 4x4 k=4, none before ply 8 on 5x5 k=5), and a draw's
remoteness is its empty cells, so late in the game nothing is far."""


def game_name(rules: Rules) -> str:
    """``4x5k4``: how sets and grids name a game."""
    return f"{rules.rows}x{rules.cols}k{rules.k}"


class Item(NamedTuple):
    """One position of a set, as posed, with its cell, its splits and every move's value."""

    position: Position
    value: Value
    moves: dict[int, Value]
    stage: str
    difficulty: str
    splits: tuple[str, ...]

    @property
    def decisive(self) -> bool:
        """Whether some move loses the value."""
        return any(move.outcome is not self.value.outcome for move in self.moves.values())

    def to_json(self) -> dict[str, Any]:
        rules = self.position.rules
        return {
            "position": str(self.position),
            "ply": self.position.ply,
            "value": self.value.outcome.value,
            "remoteness": self.value.remoteness,
            "stage": self.stage,
            "difficulty": self.difficulty,
            "splits": list(self.splits),
            "moves": {rules.cell_name(cell): value.label for cell, value in self.moves.items()},
        }

    @classmethod
    def from_json(
        cls, record: dict[str, Any], rules: Rules, cells: dict[str, int], labels: dict[str, Value]
    ) -> Item:
        """The item a line holds (``cells``: the board's cell names and their indexes;
        ``labels``: the values read so far, by label, which it adds to)."""
        position = Position.parse(record["position"], rules)
        if position.ply != record["ply"]:
            raise ValueError(f"{record['position']} is at ply {position.ply}, not {record['ply']}")
        moves = {}
        for name, label in record["moves"].items():
            if label not in labels:
                labels[label] = Value.from_label(label)
            moves[cells[name]] = labels[label]
        if sorted(moves) != position.legal_moves():
            raise ValueError(f"the moves of {record['position']} are not its legal moves")
        return cls(
            position,
            Value(Outcome(record["value"]), int(record["remoteness"])),
            moves,
            record["stage"],
            record["difficulty"],
            tuple(record["splits"]),
        )

    @property
    def order(self) -> tuple[int, int, int, str]:
        """Where the item stands in the file."""
        return (
            STAGES.index(self.stage),
            DIFFICULTIES.index(self.difficulty),
            self.position.ply,
            str(self.position),
        )


def _line(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"


@dataclass(frozen=True)
class BenchmarkSet:
    """A frozen set of one game: its grid, how it was drawn, and its positions."""

    rules: Rules
    grid: Grid
    seed: int
    per_cell: int
    table: str
    """The SHA-256 of the ``table.json`` of the table it was drawn from."""
    items: tuple[Item, ...]
    source: str | None = field(default=None, compare=False, repr=False)
    """The text the set was read from (``None``: made here)."""

    @property
    def name(self) -> str:
        return game_name(self.rules)

    def header(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "game": self.name,
            "rows": self.rules.rows,
            "cols": self.rules.cols,
            "k": self.rules.k,
            "seed": self.seed,
            "per_cell": self.per_cell,
            **self.grid.to_dict(),
            "table": self.table,
            "positions": len(self.items),
        }

    def text(self) -> str:
        """The set's file: what its checksum is of."""
        if self.source is not None:
            return self.source
        return _line(self.header()) + "".join(_line(item.to_json()) for item in self.items)

    @cached_property
    def checksum(self) -> str:
        return hashlib.sha256(self.text().encode()).hexdigest()

    def split(self, name: str) -> list[Item]:
        """The items of one split (``every`` or ``decisive``), in the file's order."""
        if name not in SPLITS:
            raise BenchmarkSetError(f"split {name!r} is not one of {', '.join(SPLITS)}")
        return [item for item in self.items if name in item.splits]

    def cell(self, split: str, stage: str, difficulty: str) -> list[Item]:
        """The items of one cell of one split, in the file's order."""
        return [i for i in self.split(split) if (i.stage, i.difficulty) == (stage, difficulty)]

    def write(self, folder: Path | str) -> Path:
        """Write the set as ``GAME.jsonl`` into ``folder`` and its checksum into the folder's
        ``SHA256SUMS`` (other sets' lines kept), each file whole or not at all."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.name}.jsonl"
        _write_atomically(path, self.text())
        sums = published(folder)
        sums[path.name] = self.checksum
        _write_atomically(
            folder / CHECKSUMS, "".join(f"{sums[name]}  {name}\n" for name in sorted(sums))
        )
        return path

    def __repr__(self) -> str:
        return (
            f"<BenchmarkSet {self.rules.name}: {len(self.items):,} positions, seed {self.seed}, "
            f"sha256 {self.checksum[:12]}>"
        )


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.partial")
    try:
        with open(temporary, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)


def published(folder: Path) -> dict[str, str]:
    """The checksums ``SHA256SUMS`` in ``folder`` publishes, by file name (none if absent)."""
    sums = {}
    path = folder / CHECKSUMS
    if path.exists():
        for line in path.read_text().splitlines():
            digest, _, name = line.partition("  ")
            if name:
                sums[name.strip()] = digest.strip()
    return sums


# -- making a set from a table ----------------------------------------------------------------


class _PlyStream:
    """One ply's positions of one cell, in the sampler's seeded order, each made into an item
    when first looked at; the next one for each split."""

    def __init__(self, table: Any, folder: Path, ply: int, records: list[int], seed: int) -> None:
        from ttt_solve.solver.tablebase.sample import PlySample

        self.table = table
        self.seed = seed
        self.drawn = PlySample(folder, table.rules, ply).stream(seed, records)
        self.seen: list[Item] = []
        self.batch: Iterator[tuple[int, int, int]] = iter(())
        self.next = {"every": 0, "decisive": 0}

    def _look(self) -> Item | None:
        """The next position of the stream, made into an item (``None``: no more)."""
        while True:
            for x, o, record in self.batch:
                return self._item(x, o, record)
            part = next(self.drawn, None)
            if part is None:
                return None
            self.batch = zip(part.x.tolist(), part.o.tolist(), part.records.tolist())

    def _item(self, x: int, o: int, record: int) -> Item:
        rules = self.table.rules
        canonical = Position.from_key(rules, rules.canonical(x, o)[0])
        symmetry = derive_seed(self.seed, "orientation", canonical.key) % len(rules.symmetries)
        posed = canonical.transform(symmetry)
        item = Item(
            posed,
            value_of_record(record, posed.empty_count),
            self.table.probe_moves(posed).moves,
            "",
            "",
            (),
        )
        self.seen.append(item)
        return item

    def take(self, split: str) -> Item | None:
        """The next position for ``split`` (``None``: the ply has no more)."""
        index = self.next[split]
        while True:
            if index == len(self.seen):
                if split == "decisive" and index >= DECISIVE_SEARCH:
                    return None
                if self._look() is None:
                    return None
            item = self.seen[index]
            index += 1
            if split == "every" or item.decisive:
                self.next[split] = index
                return item


def _round_robin(streams: Sequence[_PlyStream], split: str, count: int) -> list[Item]:
    """The next position for ``split`` of each ply in turn until ``count`` (or none left)."""
    chosen: list[Item] = []
    active = list(streams)
    while active and len(chosen) < count:
        for stream in list(active):
            if len(chosen) == count:
                break
            item = stream.take(split)
            if item is None:
                active.remove(stream)
            else:
                chosen.append(item)
    return chosen


def make_set(
    folder: Path | str,
    grid: Grid | None = None,
    *,
    per_cell: int = PER_CELL,
    seed: int = 0,
    progress: Progress | None = None,
) -> BenchmarkSet:
    """Draw a set from the table in ``folder`` (the module's docstring says how), with the
    board's grid (:data:`GRIDS`) unless ``grid`` is given; ``progress(done, total)`` is told the
    cells' splits filled."""
    from ttt_solve.solver.tablebase.probe import open_tablebase

    folder = Path(folder)
    table = open_tablebase(folder)
    rules = table.rules
    if grid is None:
        if game_name(rules) not in GRIDS:
            raise BenchmarkSetError(
                f"no grid for {rules.name}: give its stages and difficulties "
                f"(boards with one: {', '.join(GRIDS)})"
            )
        grid = GRIDS[game_name(rules)]
    grid.check(rules)
    if per_cell < 1:
        raise BenchmarkSetError(f"per_cell must be at least 1, not {per_cell}")
    items: dict[str, Item] = {}
    total, done = len(STAGES) * len(DIFFICULTIES) * len(SPLITS), 0
    for stage, (first, last) in zip(STAGES, grid.stages):
        for difficulty, band in zip(DIFFICULTIES, grid.bands):
            streams = []
            for ply in range(first, last + 1):
                records = grid.records(ply, band, rules.cells)
                if records:
                    streams.append(_PlyStream(table, folder, ply, records, seed))
            for split in SPLITS:
                for item in _round_robin(streams, split, per_cell):
                    board = str(item.position)
                    held = items.get(board, item._replace(stage=stage, difficulty=difficulty))
                    items[board] = held._replace(splits=(*held.splits, split))
                done += 1
                if progress is not None:
                    progress(done, total)
    table.close()
    manifest = hashlib.sha256((folder / "table.json").read_bytes()).hexdigest()
    ordered = tuple(sorted(items.values(), key=lambda item: item.order))
    return BenchmarkSet(rules, grid, seed, per_cell, manifest, ordered)


# -- reading a set ----------------------------------------------------------------------------


def set_path(rules: Rules, folder: Path | str = DATA) -> Path:
    """The published set of a game in ``folder`` (``data/benchmarks`` of the checkout)."""
    name = game_name(rules)
    path = Path(folder) / f"{name}.jsonl"
    if not path.exists():
        held = ", ".join(sorted(p.stem for p in Path(folder).glob("*.jsonl"))) or "none"
        if name not in GRIDS:
            raise BenchmarkSetError(
                f"no benchmark set of {rules.name} in {folder} (sets there: {held}); the "
                f"benchmark's boards: {', '.join(GRIDS)}"
            )
        raise BenchmarkSetError(
            f"the benchmark set of {rules.name} is not published yet (sets in {folder}: "
            f"{held}); it is drawn from the game's table by: ttt benchmark make-set {name} "
            "--table FOLDER"
        )
    return path


def read_header(path: Path | str) -> dict[str, Any]:
    """The header of a set's file (its first line), without reading the rest or checking it."""
    try:
        with open(path, encoding="utf-8") as lines:
            header: dict[str, Any] = json.loads(lines.readline())
    except (OSError, ValueError) as error:
        raise BenchmarkSetError(f"{path} is not a benchmark set: {error}") from None
    if header.get("format") != FORMAT:
        raise BenchmarkSetError(f"{path} is not a benchmark set of format {FORMAT}")
    return header


def load_set(path: Path | str) -> BenchmarkSet:
    """A set from its file, checked against the checksum ``SHA256SUMS`` beside it publishes."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BenchmarkSetError(f"no benchmark set at {path}") from None
    except OSError as error:
        raise BenchmarkSetError(f"cannot read the benchmark set {path}: {error}") from None
    found = hashlib.sha256(data).hexdigest()
    expected = published(path.parent).get(path.name)
    if expected is None:
        raise BenchmarkSetError(
            f"{path}: no checksum of it in {path.parent / CHECKSUMS}, so it cannot be checked "
            f"(ttt benchmark make-set writes one)"
        )
    if found != expected:
        raise BenchmarkSetError(
            f"{path}: its SHA-256 is {found}, but {CHECKSUMS} publishes {expected}: the set "
            f"was changed"
        )
    return parse_set(data.decode("utf-8"), str(path))


def parse_set(text: str, where: str = "the set") -> BenchmarkSet:
    """A set from its lines, which stay its text (not checked against a checksum:
    :func:`load_set` does that)."""
    try:
        lines = [json.loads(line) for line in text.splitlines() if line]
        header = lines[0]
        if header.get("format") != FORMAT:
            raise ValueError(f"its format is {header.get('format')!r}, not {FORMAT!r}")
        rules = Rules(int(header["rows"]), int(header["cols"]), int(header["k"]))
        grid = Grid.from_dict(header)
        cells = {rules.cell_name(cell): cell for cell in range(rules.cells)}
        labels: dict[str, Value] = {}
        items = tuple(Item.from_json(record, rules, cells, labels) for record in lines[1:])
        if len(items) != header["positions"]:
            raise ValueError(
                f"it holds {len(items)} positions, its header says {header['positions']}"
            )
        seed, per_cell = int(header["seed"]), int(header["per_cell"])
    except (ValueError, KeyError, TypeError, IndexError, TttError) as error:
        raise BenchmarkSetError(f"{where} is not a benchmark set: {error}") from None
    return BenchmarkSet(rules, grid, seed, per_cell, header["table"], items, text)
