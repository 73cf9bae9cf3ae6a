"""A tablebase release: the compressed table, its manifest, its figures and how to check it.

:func:`publish` makes a folder anyone can check without trusting ttt-solve: the compressed
ply files (:mod:`solver.tablebase.compressed`), ``table.json`` (the game, the format, each
file's size, numbers, counts and digests), ``SHA256SUMS`` and ``B2SUMS`` for ``sha256sum -c``
and ``b2sum -c``, the figures as ``figures.json`` and ``figures.md``
(:mod:`solver.tablebase.figures`), and a ``README.md`` saying how to verify and probe it.
:func:`verify_release` checks every digest and count, one line a problem. The format is
docs/table-format.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase.compressed import (
    COMPRESSION,
    FORMAT_VERSION,
    MANIFEST,
    MANIFEST_FORMAT,
    CompressedPly,
    Compression,
    CompressProgress,
    _read_json,
    compress_table,
    file_digests,
    held_counts,
)
from ttt_solve.solver.tablebase.files import TableError, TableFileError, _sync_folder

SUMS = {"SHA256SUMS": "sha256", "B2SUMS": "blake2b"}
"""The checksum lists, each for the coreutils program of its name, and the manifest key."""
FIGURES = ("figures.json", "figures.md")


def publish(
    folder: Path | str,
    out: Path | str,
    compression: Compression = COMPRESSION,
    progress: Callable[[CompressProgress], None] | None = None,
) -> dict[str, object]:
    """Make the release of the finished raw table in ``folder`` in ``out``: compressed (and
    resumable, as :func:`compress_table` is), then its figures, sums and README. Returns the
    manifest."""
    from ttt_solve.solver.tablebase.figures import describe, table_figures, to_dict

    folder, out = Path(folder), Path(out)
    if out.resolve() == folder.resolve():
        raise TableError(f"{out}: a release is written beside its table, not into its folder")
    if (out / MANIFEST).exists() and not is_release(out):
        raise TableError(f"{out}: holds a table.json of no release; give a new folder")
    manifest = compress_table(folder, out, compression, progress)
    figures = table_figures(folder)
    _write(out / "figures.json", json.dumps(to_dict(figures), indent=1) + "\n")
    _write(out / "figures.md", describe(figures) + "\n")
    for name, key in SUMS.items():
        _write(out / name, "".join(f"{p[key]}  {p['file']}\n" for p in _plies(manifest)))
    _write(out / "README.md", readme(manifest, str(figures.root)))
    return manifest


def release_figures(out: Path | str, as_json: bool = False) -> str:
    """The figures a release holds (made from its table when it was published), as Markdown
    tables or, with ``as_json``, as one line of JSON."""
    out = Path(out)
    if as_json:
        return json.dumps(_read_json(out / FIGURES[0]))
    path = out / FIGURES[1]
    if not path.is_file():
        raise TableFileError(path, "missing, or not a regular file")
    with open(path, encoding="utf-8") as handle:
        return handle.read(1 << 20).rstrip("\n")


def _plies(manifest: dict[str, object]) -> list[dict[str, object]]:
    plies = manifest["plies"]
    assert isinstance(plies, list)
    return plies


def _write(path: Path, text: str) -> None:
    """A file written whole or not at all."""
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    _sync_folder(path.parent)


def readme(manifest: dict[str, object], root: str) -> str:
    """The release's README: what it holds, how to check it, how to read it."""
    rules = _rules(manifest)
    plies = _plies(manifest)
    size = sum(int(str(p["bytes"])) for p in plies)
    positions = sum(sum(_counts(p)[1::2]) for p in plies)
    canonical = sum(sum(_counts(p)[0::2]) for p in plies)
    name = rules.name
    return f"""# The tablebase of {name}

Every position of {name} ({rules.rows} rows, {rules.cols} columns, {rules.k} in a row wins;
X moves first) with its value and remoteness under perfect play: {positions:,} positions
({canonical:,} up to symmetry) in {len(plies)} files, one a ply, {_megabytes(size)}. The empty
board is a {root} for X. The per-ply counts are in `figures.md` (and `figures.json`).

## Check it

With the programs every Linux has (each file's digest, as `table.json` lists them too):

    sha256sum -c SHA256SUMS
    b2sum -c B2SUMS

With ttt-solve (`pip install 'ttt-solve[compressed]'`), which also checks each file's own
digests and counts against `table.json`; it prints one line a problem and exits 1 if any:

    ttt table verify .

## Probe it

    ttt table catalogue . --db book.sqlite
    ttt query --size {rules.size} --win {rules.k} --db book.sqlite ...

or from Python:

    from ttt_solve.solver.tablebase.probe import open_tablebase

## Read it without ttt-solve

The format, byte by byte, is `docs/table-format.md` of ttt-solve: the index (a number for
each position of a ply), the one-byte record, the compressed blocks (zstd), the records known
from the stones, the digests and this manifest. A reader of about 170 lines of Python is
`tests/independent_table_reader.py` there.

Format: {manifest["format"]} version {manifest["version"]}, blocks of
{manifest["block_records"]:,} numbers.
"""


def _counts(entry: dict[str, object]) -> list[int]:
    counts = entry["counts"]
    assert isinstance(counts, list)
    return [int(count) for count in counts]


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"


def _rules(manifest: dict[str, object]) -> Rules:
    game = manifest["rules"]
    assert isinstance(game, dict)
    return Rules(game["rows"], game["cols"], game["k"])


def is_release(folder: Path | str) -> bool:
    """Whether ``folder``'s ``table.json`` is a release's (a compressed table's manifest)."""
    try:
        return _read_json(Path(folder) / MANIFEST).get("format") == MANIFEST_FORMAT
    except TableFileError:
        return False


def release_files(out: Path | str) -> tuple[Rules, int]:
    """The game of the release in ``out`` and its files, from its manifest."""
    manifest = _read_json(Path(out) / MANIFEST)
    return _rules(manifest), len(_plies(manifest))


def verify_release(
    out: Path | str, progress: Callable[[int, int], None] | None = None
) -> Iterator[str]:
    """Every problem of the release in ``out``, one line each (none: it is whole): the
    manifest, each file's size and whole-file digests, its own head and block digests and
    counts, the sums files and the figures' counts. ``progress(done, total)`` in bytes."""
    out = Path(out)
    try:
        manifest = _read_json(out / MANIFEST)
        if manifest.get("format") != MANIFEST_FORMAT or manifest.get("version") != FORMAT_VERSION:
            yield f"{out / MANIFEST}: not a manifest of format {MANIFEST_FORMAT!r} {FORMAT_VERSION}"
            return
        rules = _rules(manifest)
        plies = _plies(manifest)
    except TableFileError as error:
        yield str(error)
        return
    except (AssertionError, KeyError, TypeError, ValueError):
        yield f"{out / MANIFEST}: not a table manifest"
        return
    if [p.get("ply") for p in plies] != list(range(rules.cells + 1)):
        yield f"{out / MANIFEST}: lists plies {[p.get('ply') for p in plies]}, not 0..{rules.cells}"
        return
    total = sum(int(str(p.get("bytes", 0))) for p in plies)
    done = 0
    for entry in plies:
        yield from _ply_problems(out, rules, entry)
        done += int(str(entry.get("bytes", 0)))
        if progress is not None:
            progress(done, total)
    yield from _sums_problems(out, plies)
    yield from _figures_problems(out, plies)


def _ply_problems(out: Path, rules: Rules, entry: dict[str, object]) -> Iterator[str]:
    path = out / str(entry.get("file"))
    if not path.is_file():
        yield f"{path}: missing, or not a regular file"
        return
    if path.stat().st_size != entry.get("bytes"):
        yield f"{path}: {path.stat().st_size:,} bytes where the manifest says {entry.get('bytes')}"
        return
    sha256, blake2b = file_digests(path)
    if sha256 != entry.get("sha256"):
        yield f"{path}: its SHA-256 is not the manifest's: the file was altered or damaged"
    if blake2b != entry.get("blake2b"):
        yield f"{path}: its BLAKE2b is not the manifest's: the file was altered or damaged"
    try:
        ply_file = CompressedPly(path, rules, int(str(entry.get("ply"))))
    except TableError as error:
        yield str(error)
        return
    try:
        ply_file.verify()
        header = ply_file.header
        if list(header.counts) != entry.get("counts"):
            yield f"{path}: its counts are not the manifest's"
        if header.count != entry.get("records"):
            yield f"{path}: {header.count:,} numbers where the manifest says {entry.get('records')}"
        if header.digest.hex() != entry.get("digest"):
            yield f"{path}: its header's digest is not the manifest's"
        held_counts(entry, rules, header.ply)
    except ValueError as error:
        yield f"{out / MANIFEST}: {error}"
    except TableError as error:
        yield str(error)
    finally:
        ply_file.close()


def _sums_problems(out: Path, plies: list[dict[str, object]]) -> Iterator[str]:
    for name, key in SUMS.items():
        path = out / name
        wanted = {str(p["file"]): p[key] for p in plies}
        found: dict[str, object] = {}
        try:
            for line in path.read_text().splitlines():
                digest, file = line.split("  ", 1)
                found[file] = digest
        except (OSError, ValueError):
            yield f"{path}: missing or not a list of digests"
            continue
        if found != wanted:
            yield f"{path}: its digests are not the manifest's"


def _figures_problems(out: Path, plies: list[dict[str, object]]) -> Iterator[str]:
    path = out / "figures.json"
    try:
        figures = _read_json(path)
        counts = [ply["counts"] for ply in figures["plies"]]  # type: ignore[attr-defined]
    except TableFileError as error:
        yield str(error)
        return
    except (KeyError, TypeError):
        yield f"{path}: not the figures of a table"
        return
    flat = [[c for outcome in ply for terminal in outcome for c in terminal] for ply in counts]
    if flat != [p["counts"] for p in plies]:
        yield f"{path}: its counts are not the manifest's"
