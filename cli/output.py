"""Output files written whole or not at all.

Every regular file a command writes goes first to a temporary name in the same folder and is renamed
over the target at the end, so a reader never sees half a file: an error, Ctrl-C or a full
disk removes the temporary file and leaves the target as it was; one left by a process killed
outright (SIGKILL) is removed by the next write of the same output. An output that would
overwrite the book being read (or its ``-wal``, ``-shm`` or ``-journal`` companion) is refused
before anything is opened. A device or a pipe (``/dev/null``, a FIFO) is written in place.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from ttt_solve.cli.common import CliError, write_failure

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

STDOUT = "-"


def refuse_book_as_output(output: str, book_files: Iterable[str]) -> None:
    """Raise :class:`CliError` if ``output`` names one of the book's files."""
    if output == STDOUT:
        return
    target = os.path.realpath(output)
    for path in book_files:
        if target == os.path.realpath(path):
            raise CliError(
                f"-o {output} would overwrite the book {path} being read; "
                f"write the output to another file"
            )


@contextmanager
def output_file(output: str, book_files: Iterable[str] = ()) -> Iterator[IO[str]]:
    """A text stream for ``output`` (``-``: standard output), renamed into place on success.

    The temporary file gets the permissions a new file would (or the target's, when it
    exists).
    """
    refuse_book_as_output(output, book_files)
    if output == STDOUT:
        yield sys.stdout
        return
    if os.path.exists(output) and not stat.S_ISREG(os.stat(output).st_mode):
        # A device or a pipe (/dev/null, a FIFO): written in place, never replaced.
        try:
            with open(output, "w", encoding="utf-8", newline="") as stream:
                yield stream
        except OSError as error:
            _raise_unless_the_outputs(error, output)
            raise _cannot_write(output, error) from None
        return
    try:
        remove_stale_parts(output)
        fd, temporary = _locked_part(output)
    except OSError as error:
        raise _cannot_write(output, error) from None
    try:
        try:
            mode = os.stat(output).st_mode & 0o7777
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(temporary, mode)
        with open(fd, "w", encoding="utf-8", newline="") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, output)
    except OSError as error:
        _remove(temporary)
        _raise_unless_the_outputs(error, output, temporary)
        raise _cannot_write(output, error) from None
    except BaseException:
        _remove(temporary)
        raise


def write_all(binary: Any, data: bytes) -> None:
    """Write all of ``data`` to a binary stream, or raise. An unbuffered stream (standard
    output under ``python -u`` or ``PYTHONUNBUFFERED``) may take part of a write, as at a
    file-size limit; a text stream over it drops the rest without a word."""
    view = memoryview(data)
    while view:
        written = binary.write(view)
        if written is None:  # a non-blocking output that takes nothing now
            raise BlockingIOError(errno.EAGAIN, os.strerror(errno.EAGAIN))
        view = view[written:]


def _part_prefix(output: str) -> str:
    return f".{os.path.basename(output)}."


_PART_SUFFIX = ".part"


def _locked_part(output: str) -> tuple[int, str]:
    """A new temporary file beside ``output`` (``.NAME.XXXXXXXX.part``), open and locked
    (``flock``) for as long as this process holds it: a lock the system drops when the
    process dies, however it dies, which is how :func:`remove_stale_parts` tells a file
    being written from one left behind."""
    folder = os.path.dirname(os.path.abspath(output))
    while True:
        fd, temporary = tempfile.mkstemp(
            prefix=_part_prefix(output), suffix=_PART_SUFFIX, dir=folder
        )
        if fcntl is None:
            return fd, temporary
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if os.stat(temporary).st_ino == os.fstat(fd).st_ino:
                return fd, temporary
        except FileNotFoundError:
            pass
        os.close(fd)  # taken for a stale one between its making and its locking: again


def remove_stale_parts(output: str) -> list[str]:
    """Remove the temporary files of earlier writes of ``output`` whose writer died (killed
    with SIGKILL, it could not remove its own): files named as :func:`_locked_part` names
    them, that no process holds locked. Returns the paths removed."""
    if fcntl is None:  # no flock (Windows): a file in use cannot be told from a stale one
        return []
    folder = os.path.dirname(os.path.abspath(output))
    ours = re.compile(re.escape(_part_prefix(output)) + r"[a-z0-9_]{8}" + re.escape(_PART_SUFFIX))
    removed = []
    for name in os.listdir(folder):
        if not ours.fullmatch(name):
            continue
        path = os.path.join(folder, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue  # gone meanwhile, or not ours to read
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # a live writer holds it
        finally:
            os.close(fd)  # drops the lock too
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
            removed.append(path)
    return removed


def _raise_unless_the_outputs(error: OSError, *paths: str) -> None:
    """Raise ``error`` again where it names a file other than the output's ``paths``: a file
    read while the output was written (the book's table, say) failed, not the output."""
    if error.filename is not None and os.fspath(error.filename) not in paths:
        raise error


def _cannot_write(output: str, error: OSError) -> CliError:
    """One line for a failed write of ``output``; a full disk says how to go on."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return CliError(
            f"no space left on the disk while writing the output {output}; "
            f"free some space and run again"
        )
    return CliError(f"cannot write {output}: {write_failure(error)}")


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
