"""A game's table as data: the rows of ``ttt export`` as columns, text, DataFrames and Parquet.

One row per canonical position, or with ``expand`` one per reachable position (each distinct
symmetric image of a canonical one, in key order, with the best moves turned alike):

======================  ========================================================================
``position``            the position's text, rows from the top (``x.o/.x./...``)
``ply``                 stones on the board
``to_move``             ``x`` or ``o``
``value``               for the side to move: ``win``, ``draw`` or ``loss``
``remoteness``          plies to the end under perfect play (0: the game is over)
``best_moves``          the best moves' cell names, ascending by cell (``a1 c3``)
``images``              reachable positions the canonical one stands for
======================  ========================================================================

Rows come from :meth:`Book.columns <book.reader.Book.columns>` (the filter of
:meth:`Book.rows <book.reader.Book.rows>`) as NumPy columns, a chunk at a time, and every
output is made from a chunk's columns at once: position texts as one byte array, best moves
through a table of the masks seen so far. :func:`text_chunks` gives CSV or JSON lines (the same
bytes Python's ``csv`` and ``json`` modules would write), :func:`frame` a pandas DataFrame
(``value`` and ``to_move`` as categories, and with ``cells`` one column per cell, named
``a1``...), :func:`write_parquet` a Parquet file (pyarrow). pandas and pyarrow are optional
extras: :class:`ExtraMissingError` names the one to install.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Generator, Iterator
from contextlib import closing
from typing import Any, BinaryIO, Protocol

import numpy as np

from ttt_solve.book.ahead import made_ahead
from ttt_solve.book.rowfilter import RowFilter
from ttt_solve.errors import TttError, install_hint
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome

COLUMNS = ("position", "ply", "to_move", "value", "remoteness", "best_moves", "images")
VALUE_NAMES = tuple(Outcome.from_sign(sign).value for sign in (-1, 0, 1))
"""The values' names by stored value + 1: loss, draw, win."""
_CHARS = (ord("."), ord("x"), ord("o"), ord("?"))  # "?": both stones, which no row holds


class ColumnSource(Protocol):
    """Where a game's rows come from as columns: a :class:`~book.reader.Book` (this module
    makes outputs of columns, whatever reads them)."""

    def columns(
        self, rules: Rules, *, where: RowFilter | None = None, batch: int = ...
    ) -> Iterator[dict[str, Any]]: ...


class ExtraMissingError(TttError):
    """An optional package that this output needs is not installed; the message names the
    extra that installs it."""

    def __init__(self, what: str, package: str, extra: str) -> None:
        super().__init__(f"{what} needs {package}: {install_hint(extra)}")
        self.package = package
        self.extra = extra


def require(package: str, what: str, extra: str = "notebook") -> Any:
    """Import an optional package, or raise :class:`ExtraMissingError` naming its extra."""
    import importlib

    try:
        return importlib.import_module(package)
    except ImportError:
        raise ExtraMissingError(what, package.split(".")[0], extra) from None


class Chunk:
    """One chunk of rows as arrays: ``keys`` and ``best`` (bitmasks), ``ply``, ``value``
    (-1, 0, 1), ``remoteness``, ``images``; expanded to every image when asked."""

    def __init__(self, rules: Rules, columns: dict[str, Any], expand: bool) -> None:
        self.rules = rules
        keys, best = columns["key"], columns["best_moves"]
        counts = None
        if expand:
            keys, best, counts = _images(rules, keys, best)
        self.keys = keys
        self.best = best
        self.count = len(keys)

        def repeated(name: str) -> Any:
            column = np.asarray(columns[name])
            return column if counts is None else np.repeat(column, counts)

        self.ply = repeated("ply")
        self.value = repeated("value")
        self.remoteness = repeated("remoteness")
        self.images = repeated("images")

    def _rows_of(self, table_of: Callable[[int], np.ndarray]) -> np.ndarray | None:
        """``table_of(cols)[x_bits | o_bits << cols]`` of each board row, side by side:
        ``(n, cells)`` (``None`` for a board too wide for the tables)."""
        rules = self.rules
        cols = rules.cols
        if self.keys.dtype == object or cols > _TABLE_COLS:
            return None
        table = table_of(cols)
        keys = self.keys.astype(np.uint64)
        # both halves of a narrow key fit 32 bits, where NumPy works faster
        x = (keys & np.uint64(rules.full)).astype(np.uint32)
        o = (keys >> np.uint64(rules.cells)).astype(np.uint32)
        row_mask = np.uint32((1 << cols) - 1)
        out = np.empty((self.count, rules.rows, table.shape[1]), dtype=table.dtype)
        for row in range(rules.rows):
            shift = np.uint32(row * cols)
            index = ((x >> shift) & row_mask) | (((o >> shift) & row_mask) << np.uint32(cols))
            out[:, row] = table[index]
        return out.reshape(self.count, -1)

    def cell_codes(self) -> np.ndarray:
        """Each row's cells, ``(n, cells)``: 0 empty, 1 X, 2 O."""
        codes = self._rows_of(_row_codes)
        if codes is not None:
            return codes
        cells = self.rules.cells
        keys = self.keys
        return np.array(
            [
                [(int(k) >> c & 1) + 2 * (int(k) >> (cells + c) & 1) for c in range(cells)]
                for k in keys
            ],
            dtype=np.uint8,
        ).reshape(len(keys), cells)

    def position_bytes(self) -> np.ndarray:
        """The position texts as an ``(n, width)`` array of ASCII codes (rows split by ``/``)."""
        rules = self.rules
        width = rules.cells + rules.rows - 1
        texts = self._rows_of(_row_texts)  # each board row's text and its "/"
        if texts is not None:
            return texts[:, :width]
        cols = rules.cols
        chars = np.array(_CHARS, dtype=np.uint8)[self.cell_codes()]
        out = np.full((self.count, width), ord("/"), dtype=np.uint8)
        for row in range(rules.rows):
            at = row * (cols + 1)
            out[:, at : at + cols] = chars[:, row * cols : (row + 1) * cols]
        return out

    def position_list(self) -> list[bytes]:
        """The position texts as ``bytes``, one per row."""
        width = self.rules.cells + self.rules.rows - 1
        texts = np.ascontiguousarray(self.position_bytes())
        return texts.view(f"S{width}").ravel().tolist()  # type: ignore[no-any-return]


_TABLE_COLS = 8
"""Boards of at most this many columns turn keys into cells a board row at a time."""


@functools.cache
def _row_texts(cols: int) -> np.ndarray:
    """``table[x_bits | o_bits << cols]``: a row's text in ASCII codes, then a ``/``."""
    chars = np.array(_CHARS, dtype=np.uint8)[_row_codes(cols)]
    return np.concatenate([chars, np.full((len(chars), 1), ord("/"), np.uint8)], axis=1)


@functools.cache
def _row_codes(cols: int) -> np.ndarray:
    """``table[x_bits | o_bits << cols]``: the codes (0, 1 X, 2 O) of a row's cells."""
    index = np.arange(1 << (2 * cols), dtype=np.int64)
    bits = np.arange(cols)
    x = (index[:, None] >> bits) & 1
    o = (index[:, None] >> (bits + cols)) & 1
    return (x + 2 * o).astype(np.uint8)


def _images(rules: Rules, keys: Any, best: Any) -> tuple[Any, Any, Any]:
    """Every distinct image of each key, in key order per row, with its best moves turned
    alike, and the count of images per row."""
    if keys.dtype == object:  # a wide board: one row at a time
        out_keys, out_best, counts = [], [], []
        for key, mask in zip(keys, best):
            found: dict[int, int] = {}
            for symmetry in range(len(rules.symmetries)):
                found.setdefault(rules.permute(key, symmetry), rules.permute(mask, symmetry))
            for image in sorted(found):
                out_keys.append(image)
                out_best.append(found[image])
            counts.append(len(found))
        return np.array(out_keys, dtype=object), np.array(out_best, dtype=object), counts
    from ttt_solve.solver.exhaustive.keyarrays import KeyArrays

    arrays = KeyArrays(rules)
    key_images = arrays.images(keys.astype(np.uint64))  # (symmetries, n)
    best_images = arrays.images(best.astype(np.uint64))
    if 3 * rules.cells <= 63:  # key and best moves in one word, sorted by a network
        cells = np.uint64(rules.cells)
        both = list((key_images << cells) | best_images)
        for a, b in _NETWORKS[len(both)]:
            both[a], both[b] = np.minimum(both[a], both[b]), np.maximum(both[a], both[b])
        packed = np.stack(both, axis=1)  # (n, symmetries), each row ascending
        key_images, best_images = packed >> cells, packed & np.uint64(rules.full)
    else:
        order = np.argsort(key_images, axis=0, kind="stable")
        key_images = np.take_along_axis(key_images, order, axis=0).T
        best_images = np.take_along_axis(best_images, order, axis=0).T
    distinct = np.ones(key_images.shape, dtype=bool)
    distinct[:, 1:] = key_images[:, 1:] != key_images[:, :-1]
    return key_images[distinct], best_images[distinct], distinct.sum(axis=1)


_NETWORKS = {
    4: [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)],
    8: [
        (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7), (0, 1), (2, 3),
        (4, 5), (6, 7), (2, 4), (3, 5), (1, 4), (3, 6), (1, 2), (3, 4), (5, 6),
    ],
}  # fmt: skip
"""Sorting networks for the 4 and 8 images of a position (pairs compared and swapped in
order): vectorised, they sort every row's images at once, ten times faster than an argsort."""


class MoveTexts:
    """The text of each best-moves bitmask (``"a1 c3"``, or a JSON list), made once per mask
    and looked up for a whole column at once."""

    DENSE_CELLS = 22
    """Boards of at most this many cells keep a table of every mask (up to 32 MiB)."""

    CACHED_MASKS = 1 << 18
    """Texts of the masks of larger boards kept at most (tens of MB): the cache starts again
    when full, so that memory stays bounded however many masks a stream meets."""

    def __init__(self, rules: Rules, form: Callable[[list[str]], Any]) -> None:
        names = [rules.cell_name(cell) for cell in range(rules.cells)]
        # the names of the cells of each byte value of each byte of a mask
        self.by_byte = [
            [
                [
                    names[first + bit]
                    for bit in range(8)
                    if byte >> bit & 1 and first + bit < len(names)
                ]
                for byte in range(256)
            ]
            for first in range(0, len(names), 8)
        ]
        self.form = form
        self.dense = rules.cells <= self.DENSE_CELLS
        if self.dense:
            self.table = np.empty(1 << rules.cells, dtype=object)
            self.known = np.zeros(1 << rules.cells, dtype=bool)
        self.cache: dict[int, Any] = {}

    def text(self, mask: int) -> Any:
        names: list[str] = []
        for table in self.by_byte:
            names += table[mask & 0xFF]
            mask >>= 8
        return self.form(names)

    def column(self, masks: Any) -> list[Any]:
        """The texts of a column of masks."""
        if not self.dense or masks.dtype == object:
            cache = self.cache
            if len(cache) > self.CACHED_MASKS:
                cache.clear()  # a stream of a large board meets millions of masks
            return [
                cache[m] if m in cache else cache.setdefault(m, self.text(m))
                for m in masks.tolist()
            ]
        masks = masks.astype(np.intp)
        missing = np.unique(masks[~self.known[masks]])
        for mask in missing.tolist():
            self.table[mask] = self.text(mask)
        self.known[missing] = True
        return self.table[masks].tolist()  # type: ignore[no-any-return]


def _table(texts: list[Any]) -> Any:
    """An object array of texts, for looking up a whole column of indexes at once."""
    table = np.empty(len(texts), dtype=object)
    table[:] = texts
    return table


def chunks(
    book: ColumnSource, rules: Rules, where: RowFilter | None = None, expand: bool = False
) -> Iterator[Chunk]:
    """The selected rows of a game, a :class:`Chunk` of about :data:`CHUNK_ROWS` rows at a
    time (canonical rows read fewer at a time when each becomes up to 8)."""
    batch = CHUNK_ROWS // (len(rules.symmetries) if expand else 1)
    for columns in book.columns(rules, where=where, batch=batch):
        yield Chunk(rules, columns, expand)


CHUNK_ROWS = 1 << 17
"""Rows made at once: large enough that NumPy's work per row dominates, small enough that the
texts of a chunk (and the next, made meanwhile) stay within a hundred MiB or so."""


def text_chunks(
    book: ColumnSource,
    rules: Rules,
    fmt: str,
    *,
    where: RowFilter | None = None,
    expand: bool = False,
    counts: list[int] | None = None,
) -> Generator[bytes, None, None]:
    """The rows as CSV (a header first; best moves space-separated) or JSON lines, in UTF-8
    bytes a chunk at a time; ``counts`` (if given) becomes ``[rows, terminal rows]``.

    A row is four pieces joined: the position, the fields between it and the best moves
    (ply, side, value, remoteness: few combinations, each written once), the best moves
    (one text per mask) and the images count with the line's end."""
    if fmt not in ("csv", "jsonl"):
        raise ValueError(f"format {fmt!r} is not csv or jsonl")
    cells = rules.cells
    middles = []  # by (ply * 3 + value + 1) * (cells + 1) + remoteness
    for ply in range(cells + 1):
        side = "xo"[ply & 1]
        for value in VALUE_NAMES:
            for remoteness in range(cells + 1):
                if fmt == "csv":
                    middles.append(f",{ply},{side},{value},{remoteness},".encode())
                else:
                    middles.append(
                        f'", "ply": {ply}, "to_move": "{side}", "value": "{value}", '
                        f'"remoteness": {remoteness}, "best_moves": '.encode()
                    )
    middle_table = _table(middles)
    if fmt == "csv":
        best = MoveTexts(rules, lambda names: " ".join(names).encode())
        ends = _table([f",{n}\n".encode() for n in range(9)])
        start = b""
        yield ",".join(COLUMNS).encode() + b"\n"
    else:
        best = MoveTexts(rules, lambda names: json.dumps(names).encode())
        ends = _table([f', "images": {n}}}\n'.encode() for n in range(9)])
        start = b'{"position": "'
    total = terminal = 0
    with closing(made_ahead(chunks(book, rules, where, expand))) as ahead:
        for chunk in ahead:
            index = (chunk.ply * 3 + chunk.value + 1) * (cells + 1) + chunk.remoteness
            pieces = zip(
                chunk.position_list(),
                middle_table[index].tolist(),
                best.column(chunk.best),
                ends[chunk.images].tolist(),
            )
            text = start.join(map(b"".join, pieces))
            total += chunk.count
            terminal += int(np.count_nonzero(chunk.remoteness == 0))
            yield start + text if chunk.count else b""
    if counts is not None:
        counts[:] = [total, terminal]


def frame(
    book: ColumnSource,
    rules: Rules,
    *,
    where: RowFilter | None = None,
    expand: bool = False,
    cells: bool = True,
) -> Any:
    """The rows as a pandas DataFrame: the columns of ``ttt export`` (``value`` and
    ``to_move`` as categories, numbers as ``uint8``), and with ``cells`` one column per cell
    named ``a1``, ``b1``, ... holding ``.``, ``x`` or ``o`` (a category)."""
    pd = require("pandas", "a DataFrame")
    names = MoveTexts(rules, " ".join)
    cell_names = [rules.cell_name(cell) for cell in range(rules.cells)]
    width = rules.cells + rules.rows - 1
    parts = []
    for chunk in chunks(book, rules, where, expand):
        codes = chunk.cell_codes()
        data: dict[str, Any] = {
            "position": chunk.position_bytes().view(f"S{width}").ravel().astype(f"U{width}"),
            "ply": chunk.ply.astype(np.uint8),
            "to_move": pd.Categorical.from_codes(chunk.ply & 1, categories=["x", "o"]),
            "value": pd.Categorical.from_codes(
                chunk.value + 1, categories=list(VALUE_NAMES), ordered=True
            ),
            "remoteness": chunk.remoteness.astype(np.uint8),
            "best_moves": names.column(chunk.best),
            "images": chunk.images.astype(np.uint8),
        }
        if cells:
            for index, name in enumerate(cell_names):
                data[name] = pd.Categorical.from_codes(codes[:, index], categories=[".", "x", "o"])
        parts.append(pd.DataFrame(data))
    if not parts:
        return pd.DataFrame({name: [] for name in COLUMNS + tuple(cell_names if cells else ())})
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def write_parquet(
    book: ColumnSource,
    rules: Rules,
    target: str | BinaryIO,
    *,
    where: RowFilter | None = None,
    expand: bool = False,
    progress: Callable[[int], None] | None = None,
) -> tuple[int, int]:
    """Write the rows as Parquet to ``target``, a binary file or a path (written to a
    temporary file renamed at the end, so an interrupted write leaves nothing): ``position``
    and ``best_moves`` as strings (Parquet's own dictionary encoding takes the best moves'
    few texts), ``to_move`` and ``value`` dictionary-encoded, numbers as
    ``uint8``. Returns ``(rows, terminal rows)``; ``progress(rows)`` is told after each
    chunk."""
    pa = require("pyarrow", "Parquet")
    pq = require("pyarrow.parquet", "Parquet")

    schema = pa.schema(
        [
            ("position", pa.string()),
            ("ply", pa.uint8()),
            ("to_move", pa.dictionary(pa.int8(), pa.string())),
            ("value", pa.dictionary(pa.int8(), pa.string())),
            ("remoteness", pa.uint8()),
            ("best_moves", pa.string()),
            ("images", pa.uint8()),
        ],
        metadata={"game": rules.name, "expanded": str(expand).lower()},
    )
    # Statistics of the small columns only (a reader skips row groups by ply or value with
    # them): min and max of millions of position texts cost a third of the write.
    # No dictionary for the positions, which are all different: trying one costs time. zstd
    # makes the file a third of snappy's for the same time (measured on 4x4 k=4).
    options = {
        "write_statistics": ["ply", "to_move", "value", "remoteness", "images"],
        "use_dictionary": ["to_move", "value", "best_moves"],
        "compression": "zstd",
    }
    if not isinstance(target, str):
        writer = pq.ParquetWriter(target, schema, **options)
        return _parquet_batches(writer, book, rules, where, expand, progress)
    temporary = f"{target}.{os.getpid()}.tmp"
    try:
        writer = pq.ParquetWriter(temporary, schema, **options)
        counts = _parquet_batches(writer, book, rules, where, expand, progress)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    return counts


def _parquet_batches(
    writer: Any,
    book: ColumnSource,
    rules: Rules,
    where: RowFilter | None,
    expand: bool,
    progress: Callable[[int], None] | None,
) -> tuple[int, int]:
    """Write the chunks of rows as record batches of ``writer``'s schema, then close it. The
    next batch is made in a thread while this one is written (both release the GIL for most
    of their work)."""
    total = terminal = 0
    with (
        writer,
        closing(made_ahead(_record_batches(writer.schema, book, rules, where, expand))) as ahead,
    ):
        for batch, ends in ahead:
            writer.write_batch(batch)
            total += batch.num_rows
            terminal += ends
            if progress is not None:
                progress(total)
    return total, terminal


def _record_batches(
    schema: Any, book: ColumnSource, rules: Rules, where: RowFilter | None, expand: bool
) -> Iterator[tuple[Any, int]]:
    """Each chunk of rows as a record batch of ``schema``, with its count of terminal rows."""
    import pyarrow as pa

    width = rules.cells + rules.rows - 1
    names = MoveTexts(rules, " ".join)
    sides = pa.array(["x", "o"])
    values = pa.array(list(VALUE_NAMES))
    for chunk in chunks(book, rules, where, expand):
        text = chunk.position_bytes()
        offsets = np.arange(0, (chunk.count + 1) * width, width, dtype=np.int32)
        positions = pa.StringArray.from_buffers(
            chunk.count, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(text))
        )
        best = pa.array(names.column(chunk.best), type=pa.string())
        side = pa.DictionaryArray.from_arrays(pa.array((chunk.ply & 1).astype(np.int8)), sides)
        value = pa.DictionaryArray.from_arrays(pa.array((chunk.value + 1).astype(np.int8)), values)
        columns = [
            positions,
            pa.array(chunk.ply.astype(np.uint8)),
            side,
            value,
            pa.array(chunk.remoteness.astype(np.uint8)),
            best,
            pa.array(chunk.images.astype(np.uint8)),
        ]
        ends = int(np.count_nonzero(chunk.remoteness == 0))
        yield pa.record_batch(columns, schema=schema), ends
