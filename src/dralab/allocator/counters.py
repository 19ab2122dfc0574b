"""Shared counters of partitionable devices, and compatibility groups on them.

Per pool, what is left = the declared counter sets minus the demand of every
allocated device of the pool (also those published for other nodes). That is
derived from the allocated state and cached per pool until the state changes
a device of that pool, so it is shared by every search and every node that
sees the pool. A search then books its own tentative picks on top, in a
``CounterLedger`` that can give them back on backtracking.

Counters are keyed "set\0counter" internally so the hot path works on one
flat dict per pool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from .index import DeviceRecord
from .pools import NodePools, Pool
from .state import AllocatedState

__all__ = ["CounterCache", "CounterLedger", "GroupUndo"]

# Available counters per pool: (state pool version, "set\0counter" -> nano, any negative).
CounterCache: TypeAlias = dict[Pool, tuple[int, dict[str, int], bool]]


@dataclass(frozen=True, slots=True)
class _Groups:
    """Running intersection of the compatibility groups on one counter set.

    ``all_empty``: every member so far declared no groups; such members only
    admit further group-less devices (DRADeviceCompatibilityGroups, alpha).
    """

    all_empty: bool
    groups: frozenset[str]

    def admits(self, groups: frozenset[str]) -> bool:
        if not groups:
            return self.all_empty
        return not self.all_empty and bool(self.groups & groups)

    def add(self, groups: frozenset[str]) -> _Groups:
        if self.all_empty or not groups:
            return self
        return _Groups(False, self.groups & groups)


def _first(groups: frozenset[str]) -> _Groups:
    return _Groups(not groups, groups)


_GroupKey: TypeAlias = tuple[tuple[str, str], str]  # (pool key, counter set)
# What joining changed, to restore on undo: (key, previous state) pairs.
GroupUndo: TypeAlias = list[tuple[_GroupKey, "_Groups | None"]]


class CounterLedger:
    """Counter (and group) bookkeeping of one search; ``take``/``give`` pair up."""

    def __init__(self, pools: NodePools, state: AllocatedState, cache: CounterCache) -> None:
        self.pools = pools
        self.state = state
        self.cache = cache
        # Per pool key: what is left for this search (the allocated state's leftover, a
        # copy, minus this search's bookings), or None when the pool is over-committed.
        # The state does not change during a search.
        self.remaining: dict[tuple[str, str], dict[str, int] | None] = {}
        self.groups: dict[_GroupKey, _Groups | None] = {}
        self.group_baselines: set[tuple[str, str]] = set()

    def left(self, pool: Pool) -> tuple[dict[str, int], bool]:
        """Counters of ``pool`` left by allocated claims, and whether any is negative."""
        version = self.state.pool_version(pool.key)
        cached = self.cache.get(pool)
        if cached is not None and cached[0] == version:
            return cached[1], cached[2]
        avail = {f"{set_name}\0{counter}": nano
                 for set_name, counters in pool.counter_sets.items()
                 for counter, nano in counters.items()}
        for name in self.state.allocated_in_pool(pool.key):
            rec = pool.all_devices.get(name)
            if rec is None:
                continue
            for flat, nano in rec.demand:
                if flat in avail:
                    avail[flat] -= nano
        negative = any(v < 0 for v in avail.values())
        self.cache[pool] = (version, avail, negative)
        return avail, negative

    def take(self, rec: DeviceRecord) -> bool:
        """Book the device's counters if its pool still has all of them."""
        key = rec.pool_key
        try:
            remaining = self.remaining[key]
        except KeyError:
            avail, negative = self.left(self.pools.by_key[key])
            # An over-committed pool offers nothing (upstream compares every counter).
            remaining = self.remaining[key] = None if negative else dict(avail)
        if remaining is None:
            return False
        demand = rec.demand
        for flat, nano in demand:
            if remaining.get(flat, 0) < nano:
                return False
        for flat, nano in demand:
            if nano:  # (a zero demand may name a counter the pool does not have)
                remaining[flat] -= nano
        return True

    def give(self, rec: DeviceRecord) -> None:
        """Undo one successful ``take`` of the same device."""
        remaining = self.remaining[rec.pool_key]
        assert remaining is not None
        for flat, nano in rec.demand:
            if nano:
                remaining[flat] += nano

    def _baseline(self, pool_key: tuple[str, str]) -> None:
        self.group_baselines.add(pool_key)
        pool = self.pools.by_key[pool_key]
        for name in self.state.allocated_in_pool(pool_key):
            other = pool.all_devices.get(name)
            if other is None:
                continue
            for set_name, groups in other.groups:
                k = (pool_key, set_name)
                current = self.groups.get(k)
                self.groups[k] = _first(groups) if current is None else current.add(groups)

    def join_groups(self, rec: DeviceRecord) -> GroupUndo | None:
        """Admit ``rec`` into the groups of every counter set it uses; undo info or None."""
        if rec.pool_key not in self.group_baselines:
            self._baseline(rec.pool_key)
        changes: GroupUndo = []
        for set_name, groups in rec.groups:
            k = (rec.pool_key, set_name)
            current = self.groups.get(k)
            if current is not None and not current.admits(groups):
                self.leave_groups(changes)
                return None
            changes.append((k, current))
            self.groups[k] = _first(groups) if current is None else current.add(groups)
        return changes

    def leave_groups(self, changes: GroupUndo) -> None:
        for k, previous in reversed(changes):
            self.groups[k] = previous
