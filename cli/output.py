"""Output files written whole or not at all.

Every regular file a command writes goes first to a temporary name in the same folder and is renamed
over the target at the end, so a reader never sees half a file: an error, Ctrl-C or a full
disk removes the temporary file and leaves the target as it was. An output that would
overwrite the book being read (or its ``-wal``, ``-shm`` or ``-journal`` companion) is refused
before anything is opened. A device or a pipe (``/dev/null``, a FIFO) is written in place.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO

from ttt_solve.cli.common import CliError

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
            raise _cannot_write(output, error) from None
        return
    folder = os.path.dirname(os.path.abspath(output))
    try:
        fd, temporary = tempfile.mkstemp(
            prefix=f".{os.path.basename(output)}.", suffix=".part", dir=folder
        )
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
        raise _cannot_write(output, error) from None
    except BaseException:
        _remove(temporary)
        raise


def _cannot_write(output: str, error: OSError) -> CliError:
    """One line for a failed write of ``output``; a full disk says how to go on."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return CliError(
            f"no space left on the disk while writing the output {output}; "
            f"free some space and run again"
        )
    return CliError(f"cannot write {output}: {error.strerror or error}")


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
