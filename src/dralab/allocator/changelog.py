"""An append-only record of what changed, for caches that catch up incrementally.

Readers keep a cursor (``end`` when they last looked) and ask ``since(cursor)``
for the entries added after it. The oldest entries are dropped once the log
grows past a bound, so memory stays flat over long runs; a reader whose cursor
falls before what is kept gets None and must rebuild from scratch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar

__all__ = ["ChangeFeed", "ChangeLog"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

# Entries kept after trimming; a reader more than this far behind rebuilds.
_KEEP = 1 << 15


class ChangeFeed(Protocol[T_co]):
    """The reading side of a ``ChangeLog``: what its owner hands to readers."""

    @property
    def end(self) -> int: ...

    def since(self, cursor: int) -> Sequence[T_co] | None: ...


class ChangeLog(Generic[T]):
    __slots__ = ("_base", "_entries")

    def __init__(self) -> None:
        self._entries: list[T] = []
        self._base = 0  # absolute position of _entries[0]

    def append(self, item: T) -> None:
        entries = self._entries
        entries.append(item)
        if len(entries) > 2 * _KEEP:
            # Trim in big steps: amortised O(1) per append.
            del entries[:_KEEP]
            self._base += _KEEP

    @property
    def end(self) -> int:
        """The cursor just past the newest entry."""
        return self._base + len(self._entries)

    def since(self, cursor: int) -> list[T] | None:
        """Entries added at or after ``cursor``; None if some were already dropped."""
        if cursor < self._base:
            return None
        return self._entries[cursor - self._base:]
