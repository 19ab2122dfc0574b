"""A keyed table whose order survives undo: the store's building block.

Iteration order is part of the store's behaviour (claims are written in the
order they were created, nodes are visited in arrival order), and a dict cannot
put a key back where it was. So every key carries the position it got when it
was first inserted; replacing a value keeps it, and ``restore`` (the undo of a
delete) puts the key back with its old position. The dict is re-sorted by
position only when such a key went back behind newer ones, and only when it is
next iterated: lookups never wait for it, so undoing a change costs what the
change cost rather than the size of the table, and the first iteration after
such an undo pays O(n log n) once, about what the iteration itself costs.

Readers get a ``Listing``: the table's own dict, with every mutating method
refused. Lookups run at plain dict speed (the scheduler does many per pod);
only iteration goes through Python, to settle the order first.
"""

from __future__ import annotations

from _collections_abc import dict_items, dict_keys, dict_values
from collections.abc import Iterator
from typing import Any, Generic, NoReturn, TypeVar

__all__ = ["Listing", "Table"]

K = TypeVar("K")
V = TypeVar("V")

_READ_ONLY = "read-only lister: change the cluster through its methods"


class Listing(dict[K, V]):
    """A read-only mapping in position order; see the module docstring."""

    __slots__ = ("_table",)
    _table: Table[K, V]

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(_READ_ONLY)

    __setitem__ = __delitem__ = _refuse
    pop = popitem = clear = update = setdefault = __ior__ = _refuse

    def _settled(self) -> Listing[K, V]:
        table: Table[K, V] = self._table
        if table._dirty:
            table._reorder()
        return self

    def __iter__(self) -> Iterator[K]:
        return dict.__iter__(self._settled())

    def __reversed__(self) -> Iterator[K]:
        return dict.__reversed__(self._settled())

    def keys(self) -> dict_keys[K, V]:
        return dict.keys(self._settled())

    def values(self) -> dict_values[K, V]:
        return dict.values(self._settled())

    def items(self) -> dict_items[K, V]:
        return dict.items(self._settled())

    def copy(self) -> dict[K, V]:
        return dict(self.items())

    # ``|`` in C would read the dict's raw order.
    def __or__(self, other: Any) -> dict[Any, Any]:
        return {**self, **other}

    def __ror__(self, other: Any) -> dict[Any, Any]:
        return {**other, **self}

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled and copied as what it shows: a plain dict, in order.
        return (dict, (list(self.items()),))

    def __repr__(self) -> str:
        return f"Listing({dict(self.items())!r})"


class Table(Generic[K, V]):
    """See the module docstring. Only the store mutates a Table; readers get ``view``."""

    __slots__ = ("_data", "_dirty", "_high", "_next", "_pos")

    def __init__(self) -> None:
        self._data: Listing[K, V] = Listing()
        self._data._table = self
        self._pos: dict[K, int] = {}
        self._next = 0
        self._high = -1  # the highest position ever given out or restored
        self._dirty = False

    def view(self) -> Listing[K, V]:
        """The read-only mapping, in position order (the same object every time)."""
        return self._data

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
            dict.__setitem__(data, key, value)
            return old, self._pos[key]
        position = self._next
        self._next = position + 1
        self._high = position
        dict.__setitem__(data, key, value)
        self._pos[key] = position
        return None

    def delete(self, key: K) -> tuple[V, int] | None:
        """Remove ``key``; its (value, position), None if it was absent."""
        data = self._data
        if key not in data:
            return None
        value = data[key]
        dict.__delitem__(data, key)
        return value, self._pos.pop(key)

    def restore(self, key: K, value: V, position: int) -> None:
        """Put a deleted ``key`` back at its old ``position``."""
        dict.__setitem__(self._data, key, value)
        self._pos[key] = position
        if position < self._high:
            self._dirty = True
        else:
            self._high = position

    def _reorder(self) -> None:
        # In place, so the Listing handed out earlier stays the table's.
        data = self._data
        position = self._pos
        items = sorted(dict.items(data), key=lambda item: position[item[0]])
        dict.clear(data)
        dict.update(data, items)
        self._dirty = False
