"""A keyed table whose order survives undo: the store's building block.

Iteration order is part of the store's behaviour (claims are written in the
order they were created, nodes are visited in arrival order), and a dict cannot
put a key back where it was. So every key carries the position it got when it
was first inserted; replacing a value keeps it, and ``restore`` (the undo of a
delete) puts the key back with its old position. The dict is re-sorted by
position only when such a key went back behind newer ones, and only when the
order is next read (``view``), so undoing a change costs what the change cost
rather than the size of the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Generic, TypeVar

__all__ = ["Table"]

K = TypeVar("K")
V = TypeVar("V")


class Table(Generic[K, V]):
    """See the module docstring. Only the store mutates a Table; readers get ``view``."""

    __slots__ = ("_data", "_dirty", "_high", "_next", "_pos", "_view")

    def __init__(self) -> None:
        self._data: dict[K, V] = {}
        self._pos: dict[K, int] = {}
        self._next = 0
        self._high = -1  # the highest position ever given out or restored
        self._dirty = False
        self._view: Mapping[K, V] = MappingProxyType(self._data)

    def view(self) -> Mapping[K, V]:
        """A read-only mapping in position order (the same object every time)."""
        if self._dirty:
            self._reorder()
        return self._view

    def get(self, key: K) -> V | None:
        return self._data.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def position(self, key: K) -> int:
        return self._pos[key]

    def put(self, key: K, value: V) -> tuple[V, int] | None:
        """Insert or replace; the previous (value, position) of a replaced key."""
        data = self._data
        if key in data:
            old = data[key]
            data[key] = value
            return old, self._pos[key]
        position = self._next
        self._next = position + 1
        self._high = position
        data[key] = value
        self._pos[key] = position
        return None

    def delete(self, key: K) -> tuple[V, int] | None:
        """Remove ``key``; its (value, position), None if it was absent."""
        data = self._data
        if key not in data:
            return None
        return data.pop(key), self._pos.pop(key)

    def restore(self, key: K, value: V, position: int) -> None:
        """Put a deleted ``key`` back at its old ``position``."""
        self._data[key] = value
        self._pos[key] = position
        if position < self._high:
            self._dirty = True
        else:
            self._high = position

    def _reorder(self) -> None:
        # In place, so the read-only view handed out earlier stays valid.
        position = self._pos
        items = sorted(self._data.items(), key=lambda item: position[item[0]])
        self._data.clear()
        self._data.update(items)
        self._dirty = False
