"""An ``info`` dict whose costly entry is worked out when it is first read.

:class:`LazyInfo` is a ``dict`` (``isinstance(info, dict)``, the keys in their order, ``in``
and ``len`` as they will be) holding the key of a deferred entry from the start, its value
worked out by a function the first time anything reads it: ``info[key]``, ``info.get(key)``,
``values()``, ``items()``, a copy (``dict(info)``, ``{**info}``, ``copy``, ``|``), ``==``,
``repr``, pickling, any change. Overriding ``__iter__`` sends CPython's own copies (``dict()``,
``update``, ``**``) through ``keys()`` and ``__getitem__``, so they read the entry too. What
is never read is never worked out: an environment's truth hands out a position's best moves
this way, their records read only where a learner looks at them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


class LazyInfo(dict[str, Any]):
    """``entries`` (which hold ``key``, its value a placeholder kept in its place in their
    order), the value of ``key`` deferred to ``work()``, called on first read. Made by
    :meth:`deferring`."""

    __slots__ = ("_key", "_work")
    _key: str
    _work: Callable[[], Any] | None

    @classmethod
    def deferring(cls, entries: dict[str, Any], key: str, work: Callable[[], Any]) -> LazyInfo:
        """``entries`` with the value of ``key`` deferred to ``work()``."""
        # dict's own constructor, set after: a Python __init__ is most of what one costs,
        # and an environment makes two every step
        info = cls(entries)
        info._key = key
        info._work = work
        return info

    def _settle(self) -> None:
        work = self._work
        if work is not None:
            self._work = None
            dict.__setitem__(self, self._key, work())

    def __getitem__(self, key: str) -> Any:
        if key == self._key:
            self._settle()
        return dict.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        if key == self._key:
            self._settle()
        return dict.get(self, key, default)

    def __iter__(self) -> Iterator[str]:
        return dict.__iter__(self)  # overridden: copies go through keys() and __getitem__

    def values(self) -> Any:
        self._settle()
        return dict.values(self)

    def items(self) -> Any:
        self._settle()
        return dict.items(self)

    def copy(self) -> dict[str, Any]:
        self._settle()
        return dict(dict.items(self))

    def __eq__(self, other: object) -> bool:
        self._settle()
        if isinstance(other, LazyInfo):
            other._settle()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __repr__(self) -> str:
        self._settle()
        return dict.__repr__(self)

    def __or__(self, other: Any) -> Any:
        return self.copy() | other

    def __ror__(self, other: Any) -> Any:
        return other | self.copy()

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        return dict, (self.copy(),)  # pickled and copied as the plain dict it stands for

    def __reduce_ex__(self, protocol: Any) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        return self.__reduce__()

    # every change settles first: what is written is never overwritten by the deferred value

    def __setitem__(self, key: str, value: Any) -> None:
        self._settle()
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: str) -> None:
        self._settle()
        dict.__delitem__(self, key)

    def __ior__(self, other: Any) -> LazyInfo:  # type: ignore[override]
        self._settle()
        dict.update(self, other)
        return self

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._settle()
        dict.update(self, *args, **kwargs)

    def setdefault(self, key: str, default: Any = None) -> Any:
        self._settle()
        return dict.setdefault(self, key, default)

    def pop(self, key: str, *default: Any) -> Any:
        self._settle()
        return dict.pop(self, key, *default)

    def popitem(self) -> tuple[str, Any]:
        self._settle()
        return dict.popitem(self)

    def clear(self) -> None:
        self._work = None
        dict.clear(self)

    @classmethod
    def fromkeys(cls, keys: Any, value: Any = None) -> dict[str, Any]:  # type: ignore[override]
        return dict.fromkeys(keys, value)  # a plain dict: nothing deferred
