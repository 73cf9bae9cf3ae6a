"""Where the exhaustive solver keeps its per-ply arrays: in memory, or in a directory.

A directory store makes a long solve resumable: every array is written to its own ``.npy``
file, atomically (a temporary file renamed into place), as soon as it is complete, and a rerun
finds it and skips the work. Arrays are read back memory-mapped, so a resumed or very large
solve holds in memory only the plies it is working on.
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np


class PlyStore:
    """Named NumPy arrays; ``directory=None`` keeps them in memory."""

    def __init__(self, directory: str | None = None, identity: dict | None = None) -> None:
        self.directory = directory
        self._memory: dict[str, np.ndarray] = {}
        if directory is not None:
            os.makedirs(directory, exist_ok=True)
            self._check_identity(identity or {})

    def _check_identity(self, identity: dict) -> None:
        """A directory belongs to one game and solver version; anything else starts afresh."""
        path = os.path.join(self.directory, "identity.json")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                if json.load(handle) == identity:
                    return
            self.clear()
            os.makedirs(self.directory, exist_ok=True)
        self._write_atomic(path, json.dumps(identity).encode())

    @staticmethod
    def _write_atomic(path: str, data: bytes) -> None:
        temporary = path + ".partial"
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)

    def _path(self, name: str) -> str:
        return os.path.join(self.directory, name + ".npy")

    def has(self, name: str) -> bool:
        if self.directory is None:
            return name in self._memory
        return os.path.exists(self._path(name))

    def load(self, name: str) -> np.ndarray:
        if self.directory is None:
            return self._memory[name]
        return np.load(self._path(name), mmap_mode="r")

    def save(self, name: str, array: np.ndarray) -> np.ndarray:
        """Keep ``array`` under ``name``; returns it (as stored)."""
        if self.directory is None:
            self._memory[name] = array
            return array
        temporary = self._path(name) + ".partial"
        with open(temporary, "wb") as handle:
            np.save(handle, array)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self._path(name))
        return self.load(name)

    def clear(self) -> None:
        """Forget everything (and remove the directory)."""
        self._memory.clear()
        if self.directory is not None and os.path.isdir(self.directory):
            shutil.rmtree(self.directory)
