"""Where the exhaustive solver keeps its per-ply arrays: in memory, or in a directory.

A directory store makes a long solve resumable: every array is written to its own ``.npy``
file, atomically (a temporary file renamed into place), as soon as it is complete, and a rerun
finds it and skips the work. Arrays are read back memory-mapped, so a resumed or very large
solve holds in memory only the plies it is working on. The directory may hold other files:
clearing it removes only the store's own (``identity.json`` and ``*.npy``, with their
temporary ``.partial`` names), and the directory itself only once it is empty.

One run at a time uses a directory: the store holds an exclusive lock on its ``.lock`` file
until it is cleared or released, and a store of the same directory in another process is
refused (two runs clearing one folder would remove each other's files).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from typing import TYPE_CHECKING, Any

from ttt_solve.solver.errors import WorkFileError

if TYPE_CHECKING:  # NumPy only where arrays are saved or loaded: the book's read path uses
    # make_folder from here and must not pay for importing NumPy
    from numpy.typing import NDArray

_IDENTITY = "identity.json"
_PARTIAL = ".partial"
_LOCK = ".lock"


class PlyStore:
    """Named NumPy arrays; ``directory=None`` keeps them in memory."""

    def __init__(
        self, directory: str | None = None, identity: dict[str, Any] | None = None
    ) -> None:
        self.directory = directory
        self._memory: dict[str, NDArray[Any]] = {}
        self._lock: int | None = None
        """The open ``.lock`` file, locked while this store uses the directory."""
        if directory is not None:
            _make_folder(directory)
            self._lock = _lock_folder(directory)
            try:
                self._check_identity(directory, identity or {})
            except BaseException:
                self.release()
                raise

    def _check_identity(self, directory: str, identity: dict[str, Any]) -> None:
        """A directory belongs to one game and solver version; anything else starts afresh."""
        path = os.path.join(directory, _IDENTITY)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                if json.load(handle) == identity:
                    return
            self._remove_own_files(directory)
        self._write_atomic(path, json.dumps(identity).encode())

    @staticmethod
    def _write_atomic(path: str, data: bytes) -> None:
        temporary = path + _PARTIAL
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)

    def has(self, name: str) -> bool:
        if self.directory is None:
            return name in self._memory
        return os.path.exists(_array_path(self.directory, name))

    def load(self, name: str) -> NDArray[Any]:
        if self.directory is None:
            return self._memory[name]
        path = _array_path(self.directory, name)
        try:
            import numpy as np

            array: NDArray[Any] = np.load(path, mmap_mode="r")
        except (OSError, ValueError, EOFError) as error:  # truncated or overwritten outside
            raise WorkFileError(
                f"the work file {path} cannot be read ({error}); delete it (or the folder "
                f"{self.directory}) and run again: only the work it held is redone"
            ) from None
        return array

    def save(self, name: str, array: NDArray[Any]) -> NDArray[Any]:
        """Keep ``array`` under ``name``; returns it (as stored)."""
        if self.directory is None:
            self._memory[name] = array
            return array
        path = _array_path(self.directory, name)
        temporary = path + _PARTIAL
        with open(temporary, "wb") as handle:
            import numpy as np

            np.save(handle, array)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        return self.load(name)

    def clear(self) -> None:
        """Forget everything: remove the store's own files, and the directory once empty; the
        directory's lock is released."""
        self._memory.clear()
        if self.directory is None:
            return
        self._remove_own_files(self.directory)
        if self._lock is not None:  # removed while still locked: no other run can be using it
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(self.directory, _LOCK))
        self.release()
        with contextlib.suppress(OSError):  # not empty: it holds files the store did not write
            os.rmdir(self.directory)

    def release(self) -> None:
        """Let other runs use the directory (its files stay, for a rerun to resume from)."""
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    @staticmethod
    def _remove_own_files(directory: str) -> None:
        try:
            names = os.listdir(directory)
        except FileNotFoundError:
            return
        for name in names:
            if _is_own_file(name):
                with contextlib.suppress(FileNotFoundError):  # removed from outside meanwhile
                    os.remove(os.path.join(directory, name))


def make_folder(directory: str) -> str | None:
    """Make ``directory`` and its parents; ``None`` once done, else why it cannot be made."""
    try:
        os.makedirs(directory, exist_ok=True)
    except RecursionError:  # os.makedirs recurses once per missing parent
        return "it is nested too deep"
    except OSError as error:
        blocking = _first_file_among_parents(directory)
        if blocking is not None:
            return f"{blocking} is a file, not a folder"
        return f"{error.strerror or error}: {error.filename or directory}"
    return None


def _make_folder(directory: str) -> None:
    """Make the work folder, or say in one line why not and what to do."""
    problem = make_folder(directory)
    if problem is not None:
        raise WorkFileError(
            f"cannot make the work folder {directory[:200]}: {problem}; move or delete what "
            f"is in the way, or give another --db"
        )


def _first_file_among_parents(directory: str) -> str | None:
    """The path of ``directory`` or of one of its parents that exists and is not a folder."""
    path = os.path.abspath(directory)
    while True:
        if os.path.lexists(path) and not os.path.isdir(path):
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def _lock_folder(directory: str) -> int:
    """Lock ``directory`` for this run: its ``.lock`` file, opened and locked exclusively.
    Another run holding it is refused at once rather than waited for (it may take hours).
    The lock is a POSIX record lock, which belongs to the process: stores made one after
    another in one program share the folder, as a resumed build does."""
    path = os.path.join(directory, _LOCK)
    while True:
        handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno not in (errno.EACCES, errno.EAGAIN):
                raise
            os.close(handle)
            raise WorkFileError(
                f"another run is using the work folder {directory} (the same game into the "
                f"same book); wait for it to finish, then run again"
            ) from None
        try:  # the run that held it may have removed the file before we locked it
            if os.stat(path).st_ino == os.fstat(handle).st_ino:
                return handle
        except FileNotFoundError:
            pass
        os.close(handle)


def _is_own_file(name: str) -> bool:
    """Whether a file of the directory is one the store writes."""
    name = name.removesuffix(_PARTIAL)
    return name == _IDENTITY or name.endswith(".npy")


def _array_path(directory: str, name: str) -> str:
    return os.path.join(directory, name + ".npy")
