"""Gathering the resource pools usable from one node (pure, memoised per node).

Follows the upstream rules: only the highest generation of a pool counts;
a pool with fewer slices than announced is kept as an *incomplete* marker
(after a rescan of every slice of the pool, which may also reveal it as
obsolete); duplicate device names, duplicate counter sets and consumption of
unknown counters make a pool *invalid*. Neither kind offers devices.

Order (1.36+): pools by driver then pool name, pools with binding-condition
devices after all others; slices of a pool by name; devices as listed.
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from dralab.api.gcpause import gc_paused

from .index import DeviceRecord, SliceEntry, SliceIndex
from .nodes import NodeSelectorError, NodeView

__all__ = ["LazyRecords", "NodePools", "Pool", "PoolGatherError", "gather_pools"]


class PoolGatherError(Exception):
    """Gathering failed (malformed node selector); an allocation error upstream."""


@dataclass(eq=False, slots=True)
class Pool:
    """One pool as seen from one node."""

    driver: str
    name: str
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    # Device slices that target the node, sorted by name.
    slices: tuple[SliceEntry, ...] = ()
    # Every device of the pool's current generation by name, including slices
    # published for other nodes: they consume the same counters.
    all_devices: Mapping[str, DeviceRecord] = field(default_factory=dict)
    counter_sets: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    has_binding_conditions: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return (self.driver, self.name)

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def usable(self) -> bool:
        return not (self.incomplete or self.invalid)


@dataclass(eq=False, slots=True)
class NodePools:
    """The pools of one node and the flat, ordered list of candidate devices."""

    node: NodeView
    pools: tuple[Pool, ...]
    by_key: Mapping[tuple[str, str], Pool]
    # Devices of usable pools in search order, without per-device-selected
    # devices that cannot reach the node.
    # (A tuple, or LazyRecords for a node whose only pool is one plain slice.)
    candidates: Sequence[DeviceRecord]
    # The same devices per usable pool.
    pool_candidates: Mapping[Pool, Sequence[DeviceRecord]]
    # Devices whose per-device node selector is malformed: an error when reached.
    broken: Mapping[DeviceRecord, str]
    # First incomplete or invalid pool, in pool order (fatal for "All" requests).
    first_bad: Pool | None
    any_invalid: bool


class LazyRecords(Sequence[DeviceRecord]):
    """The records of one slice's devices, in slice order, built as they are read.

    The candidates of a node whose only pool is one plain slice
    (``_sole_pool``): a cold search there usually stops at one of the first
    devices, so the others' records are never needed. Reading an element
    builds that record alone; iterating or anything else builds all of them.
    The search reads ``slots`` (the entry's list, None where a record was not
    built yet) and calls ``entry.record_at`` for the gaps."""

    __slots__ = ("entry", "slots")

    def __init__(self, entry: SliceEntry) -> None:
        self.entry = entry
        self.slots = entry.partial_records()

    def __len__(self) -> int:
        return len(self.slots)

    @overload
    def __getitem__(self, i: int) -> DeviceRecord: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[DeviceRecord, ...]: ...

    def __getitem__(self, i: int | slice) -> DeviceRecord | tuple[DeviceRecord, ...]:
        if isinstance(i, slice):
            return self.entry.devices[i]
        rec = self.slots[i]
        return rec if rec is not None else self.entry.record_at(i % len(self.slots))

    def __iter__(self) -> Iterator[DeviceRecord]:
        return iter(self.entry.devices)


class _LazyDevices(Mapping[str, DeviceRecord]):
    """``Pool.all_devices`` of a ``LazyRecords`` pool: name -> record, in slice order."""

    __slots__ = ("_names", "entry")

    def __init__(self, entry: SliceEntry) -> None:
        self.entry = entry
        self._names: dict[str, int] | None = None

    def __getitem__(self, name: str) -> DeviceRecord:
        names = self._names
        if names is None:
            names = self._names = {
                d.name: i for i, d in enumerate(self.entry.slice.spec.devices)}
        return self.entry.record_at(names[name])

    def __iter__(self) -> Iterator[str]:
        return (d.name for d in self.entry.slice.spec.devices)

    def __len__(self) -> int:
        return len(self.entry.slice.spec.devices)


def _add(pools: dict[tuple[str, str], list[SliceEntry]], entry: SliceEntry) -> None:
    current = pools.get(entry.pool_key)
    if current is None:
        pools[entry.pool_key] = [entry]
        return
    generation = current[0].generation
    if entry.generation < generation:
        return
    if entry.generation > generation:
        pools[entry.pool_key] = [entry]
        return
    current.append(entry)


def _rescan(index: SliceIndex, key: tuple[str, str], generation: int
            ) -> list[SliceEntry] | None:
    """All slices of the pool at ``generation``; None if a newer generation exists."""
    found = []
    for entry in index.pool_slices(key):
        if entry.generation > generation:
            return None
        if entry.generation == generation:
            found.append(entry)
    return found


def _validate_consumption(counter_sets: Mapping[str, Mapping[str, int]],
                          slices: Sequence[SliceEntry]) -> str:
    for entry in slices:
        for device in entry.slice.spec.devices:  # (the raw devices: no record needed)
            for consumed in device.consumes_counters or ():
                set_name = consumed.counter_set
                known = counter_sets.get(set_name)
                if known is None:
                    return f"counter set {set_name} not found"
                for counter in consumed.counters:
                    if counter not in known:
                        return f"counter {counter} not found in counter set {set_name}"
    return ""


def _build(key: tuple[str, str], slices: list[SliceEntry], partitionable: bool,
           all_slices: list[SliceEntry] | None) -> Pool:
    driver, name = key
    if partitionable:
        counter_slices = [e for e in slices if e.counter_sets]
        device_slices = [e for e in slices if not e.counter_sets]
    else:
        counter_slices, device_slices = [], slices
    seen: set[str] = set()
    for entry in device_slices:
        for rec in entry.devices:
            if rec.name in seen:
                return Pool(driver, name, invalid=True,
                            invalid_reason=f"duplicate device name {rec.name}")
            seen.add(rec.name)
    device_slices = sorted(device_slices, key=lambda e: e.name)
    has_bc = any(e.has_binding_conditions for e in device_slices)
    devices = {rec.name: rec for e in device_slices for rec in e.devices}
    if not partitionable:
        return Pool(driver, name, slices=tuple(device_slices), all_devices=devices,
                    has_binding_conditions=has_bc)
    counter_sets: dict[str, Mapping[str, int]] = {}
    for entry in counter_slices:
        for set_name, counters in entry.counter_sets:
            if set_name in counter_sets:
                return Pool(driver, name, invalid=True,
                            invalid_reason=f"duplicate counter set name {set_name}")
            counter_sets[set_name] = counters
    reason = _validate_consumption(counter_sets, slices)
    if not reason and all_slices is not None and len(all_slices) != len(slices):
        targeting = {e.name for e in slices}
        others = [e for e in all_slices if e.name not in targeting and not e.counter_sets]
        reason = _validate_consumption(counter_sets, others)
        for entry in others:
            for rec in entry.devices:
                devices.setdefault(rec.name, rec)
    if reason:
        return Pool(driver, name, invalid=True, invalid_reason=reason)
    return Pool(driver, name, slices=tuple(device_slices), all_devices=devices,
                counter_sets=counter_sets, has_binding_conditions=has_bc)


_MISSING: Any = object()


def _pool(index: SliceIndex, key: tuple[str, str], slices: list[SliceEntry],
          partitionable: bool) -> Pool | None:
    """The pool made of ``slices``; None if a newer generation makes it obsolete."""
    expected = slices[0].slice_count
    if len(slices) == expected:
        return _build(key, slices, partitionable, None)
    everything = _rescan(index, key, slices[0].generation)
    if everything is None:
        return None
    if len(everything) != expected:
        return Pool(key[0], key[1], incomplete=True)
    return _build(key, slices, partitionable, everything)


def gather_pools(index: SliceIndex, node: NodeView, partitionable: bool) -> NodePools:
    """The pools usable from ``node``; memoised in ``index``. Raises PoolGatherError."""
    memo_key = (node.cache_key(), partitionable)
    memo: dict[object, NodePools] | None = index.node_pools.get(node.name)
    if memo is None:
        memo = index.node_pools[node.name] = {}
    else:
        cached = memo.get(memo_key)
        if cached is not None:
            return cached
    try:
        if gc.isenabled():
            # Bulk construction of acyclic records and pools (thousands for a
            # partitionable fleet): the collector would rescan the heap again and
            # again while it grows, and would find nothing to free.
            with gc_paused():
                result = _gather(index, node, partitionable)
        else:  # paused by the caller (``Allocator.allocate``)
            result = _gather(index, node, partitionable)
    except NodeSelectorError as exc:
        raise PoolGatherError(f"gather pool information: {exc}") from None
    memo[memo_key] = result
    return result


def _included(entry: SliceEntry, node: NodeView, partitionable: bool) -> bool:
    """Whether a slice is relevant for ``node`` (upstream's per-slice rules)."""
    if not partitionable and (entry.per_device_set or entry.counter_sets):
        return False
    if entry.counter_sets:
        return True  # counters matter no matter which node the slice names
    if entry.node_name or entry.all_nodes or entry.node_selector is not None:
        return entry.selector_matches(node)
    if entry.per_device:
        return any(rec.reachable_from(node) for rec in entry.devices)
    return False  # a future scoping we do not understand


def _unconditional(entry: SliceEntry, partitionable: bool) -> bool:
    """Relevant for every node (shared counters, allNodes) under these features."""
    if not partitionable and (entry.per_device_set or entry.counter_sets):
        return False
    return bool(entry.counter_sets) or (entry.all_nodes and not entry.node_name)


def _collect(entries: Sequence[SliceEntry]) -> list[SliceEntry] | None:
    """Apply the generation rules to one pool's slices, in upstream order."""
    collected: dict[tuple[str, str], list[SliceEntry]] = {}
    for entry in entries:
        _add(collected, entry)
    return next(iter(collected.values()), None)


def _pool_of(index: SliceIndex, key: tuple[str, str], entries: Sequence[SliceEntry],
             partitionable: bool) -> Pool | None:
    slices = _collect(entries)
    if slices is None:
        return None
    # A pool depends only on the slices collected for it (and the index),
    # so nodes that see the same slices share one Pool object.
    memo = (partitionable, *map(id, slices))
    built = index.built_pools.get(key)
    if built is None:
        built = index.built_pools[key] = {}
    pool = built.get(memo, _MISSING)
    if pool is _MISSING:
        pool = built[memo] = _pool(index, key, slices, partitionable)
    return pool  # type: ignore[no-any-return]


def _sorted(pools: Iterable[Pool | None]) -> list[Pool]:
    return sorted((p for p in pools if p is not None),
                  key=lambda p: (p.has_binding_conditions, p.driver, p.name))


@dataclass(eq=False, slots=True)
class _Shared:
    """The pools made of cluster-wide slices only, for one set of matching slices."""

    by_key: dict[tuple[str, str], Pool | None]
    pools: list[Pool]
    node_pools: NodePools | None  # ready to reuse when no per-node work remains


def _shared_part(index: SliceIndex, node: NodeView, partitionable: bool,
                 matched: tuple[SliceEntry, ...],
                 overridden: frozenset[tuple[str, str]] = frozenset()) -> _Shared:
    """The pools of the cluster-wide slices ``matched`` (``_matched_shared``) and the
    unconditional ones, except the pools in ``overridden``: the node's own slices
    join those, and ``_gather`` builds them whole."""
    memo = (partitionable, overridden, *map(id, matched))
    found = index.shared_parts.get(memo)
    if found is not None:
        return found  # type: ignore[no-any-return]
    chosen = {id(e) for e in matched}
    by_key = {
        key: _pool_of(index, key, [e for e in entries if id(e) in chosen
                                   or _unconditional(e, partitionable)], partitionable)
        for key, entries in index.shared_by_pool.items() if key not in overridden
    }
    pools = _sorted(by_key.values())
    reusable = None
    if not overridden and not any(e.per_device for e in matched):
        reusable = _node_pools(node, pools)
    made = _Shared(by_key, pools, reusable)
    index.shared_parts[memo] = made
    return made


def _matched_shared(index: SliceIndex, node: NodeView, partitionable: bool
                    ) -> tuple[SliceEntry, ...]:
    """The cluster-wide slices whose relevance depends on the node that ``node`` sees;
    raises NodeSelectorError."""
    return tuple(e for e in index.conditional_shared if _included(e, node, partitionable))


def _gather(index: SliceIndex, node: NodeView, partitionable: bool) -> NodePools:
    sole = index.sole_slice(node.name)
    if sole is not None:
        return _sole_pool(index, node, sole, partitionable)
    matched = _matched_shared(index, node, partitionable)
    local = index.node_slices(node.name)
    if not local:
        shared = _shared_part(index, node, partitionable, matched)
        if shared.node_pools is not None:
            return dataclasses.replace(shared.node_pools, node=node)
        return _node_pools(node, shared.pools)
    local_by_key: dict[tuple[str, str], list[SliceEntry]] = {}
    for entry in local:
        if _included(entry, node, partitionable):
            local_by_key.setdefault(entry.pool_key, []).append(entry)
    # A pool with slices of the node's own and cluster-wide ones is built once,
    # from both (not first from its cluster-wide slices alone).
    shared_by_pool = index.shared_by_pool
    overridden = frozenset(key for key in local_by_key if key in shared_by_pool)
    by_key = dict(_shared_part(index, node, partitionable, matched, overridden).by_key)
    for key, entries in local_by_key.items():
        # Upstream order: the node's own slices first, then the cluster-wide ones.
        shared_entries = [e for e in shared_by_pool.get(key, ())
                          if _included(e, node, partitionable)]
        by_key[key] = _pool_of(index, key, entries + shared_entries, partitionable)
    return _node_pools(node, _sorted(by_key.values()))


def _sole_pool(index: SliceIndex, node: NodeView, entry: SliceEntry,
               partitionable: bool) -> NodePools:
    """``_gather`` for a node whose only pool is one plain slice of its own
    (``SliceIndex.sole_slice``): no cluster-wide part, no collecting, no
    per-device selection; the same pools, candidates and verdicts."""
    candidates: Sequence[DeviceRecord]
    if entry.plain_devices():
        # Valid as it is (distinct names, no counters to check): the same pool as
        # ``_build`` makes, with records built only as the search reaches them.
        pool = _lazy_pool_of(index, entry, partitionable)
        candidates = LazyRecords(entry)
    else:
        found = _pool_of(index, entry.pool_key, [entry], partitionable)
        assert found is not None  # one slice, announced as the only one: complete
        pool = found
        if not pool.usable:
            return NodePools(node=node, pools=(pool,), by_key={pool.key: pool}, candidates=(),
                             pool_candidates={}, broken={}, first_bad=pool,
                             any_invalid=pool.invalid)
        candidates = entry.devices
    return NodePools(node=node, pools=(pool,), by_key={pool.key: pool}, candidates=candidates,
                     pool_candidates={pool: candidates}, broken={}, first_bad=None,
                     any_invalid=False)


def _lazy_pool_of(index: SliceIndex, entry: SliceEntry, partitionable: bool) -> Pool:
    """``_pool_of`` for a plain sole slice, sharing its memo."""
    memo = (partitionable, id(entry))
    built = index.built_pools.get(entry.pool_key)
    if built is None:
        built = index.built_pools[entry.pool_key] = {}
    pool = built.get(memo)
    if pool is None:
        pool = built[memo] = Pool(entry.driver, entry.pool, slices=(entry,),
                                  all_devices=_LazyDevices(entry),
                                  has_binding_conditions=entry.raw_binding_conditions())
    return pool


def _node_pools(node: NodeView, pools: list[Pool]) -> NodePools:
    candidates: list[DeviceRecord] = []
    per_pool: dict[Pool, tuple[DeviceRecord, ...]] = {}
    broken: dict[DeviceRecord, str] = {}
    for pool in pools:
        if not pool.usable:
            continue
        mine: list[DeviceRecord] = []
        for entry in pool.slices:
            if not entry.per_device:
                mine.extend(entry.devices)
                continue
            for rec in entry.devices:
                try:
                    if rec.reachable_from(node):
                        mine.append(rec)
                except NodeSelectorError as exc:
                    broken[rec] = str(exc)
                    mine.append(rec)
        per_pool[pool] = tuple(mine)
        candidates.extend(mine)
    first_bad = next((p for p in pools if not p.usable), None)
    return NodePools(
        node=node,
        pools=tuple(pools),
        by_key={p.key: p for p in pools},
        candidates=tuple(candidates),
        pool_candidates=per_pool,
        broken=broken,
        first_bad=first_bad,
        any_invalid=any(p.invalid for p in pools),
    )
