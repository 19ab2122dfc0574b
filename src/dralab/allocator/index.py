"""A reusable index over a set of ResourceSlices, updated in place slice by slice.

Building it touches every slice and device once; afterwards gathering the
pools of one node only looks at that node's slices plus the cluster-wide ones,
and the result is memoised per node. Devices are wrapped once in
``DeviceRecord``s that carry everything the search needs precomputed (ids,
counter demands, blocking taints, CEL input, selector results), so work done
for one claim or node is reused for every other. A slice's records are built
on first use, all at once, or one at a time (``SliceEntry.record_at``) for the
candidates of a node whose only pool is that slice (``pools.LazyRecords``).

Slices pinned to a node are indexed when that node's slices are first asked
for (``node_slices``), and all of them before anything that looks across nodes
(a pool's slices, ``update``, ``order_of``): a new index that one pod's
allocations use costs the nodes they visit, not the fleet.

``update`` takes slices out and puts new ones in: it indexes only those and
drops only the memos they can affect (the pools of the nodes that see the
changed pools), so a node joining or leaving a large fleet costs that node's
devices, not the fleet's. Every entry carries a sort key (its place among all
slices) and the lists stay in that order, so an updated index gathers exactly
what an index built afresh from the same slices would.

The index never mutates the API objects it wraps. Its memos are a pure
function of the slices it holds.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from dralab.api.core import NodeSelector
from dralab.api.gcpause import gc_paused as _gc_paused
from dralab.api.resource import (
    Counter,
    Device,
    DeviceCapacity,
    DeviceCounterConsumption,
    DeviceTaint,
    DeviceTaintRule,
    ResourceSlice,
)

from .nodes import CompiledNodeSelector, NodeView, compile_node_selector

__all__ = ["DeviceRecord", "SliceEntry", "SliceIndex", "SliceScope", "capacity_fqn",
           "distinct_and_counterless"]

BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


_NAME = operator.attrgetter("name")
_CONSUMES = operator.attrgetter("consumes_counters")
_BINDING = operator.attrgetter("binding_conditions")
_NO_POOL: tuple[str, str] = ("", "")
_NO_GROUPS: frozenset[str] = frozenset()
_NO_CAPACITY: Mapping[str, tuple[str, DeviceCapacity]] = MappingProxyType({})


def capacity_fqn(name: str, driver: str) -> str:
    """The fully-qualified form of a capacity or attribute name of ``driver``'s device."""
    return name if "/" in name else f"{driver}/{name}"


class SelectorFailure:
    """A cached CEL failure for one (selector, device) pair; re-raised on every use."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


@dataclass(frozen=True, slots=True)
class SliceScope:
    """What a device record needs to know about its slice. Records point here,
    not at their SliceEntry: without that back reference an index that is
    dropped is freed at once instead of waiting for the cyclic collector."""

    name: str
    per_device: bool
    node_name: str | None
    node_selector: NodeSelector | None


@dataclass(eq=False, slots=True)
class DeviceRecord:
    """One device of one slice, with everything the search needs precomputed.

    Identity matters: caches are keyed by the record, and the record lives as
    long as its index.
    """

    key: str  # "driver/pool/device", unambiguous: drivers and device names have no "/"
    driver: str
    pool: str
    name: str
    device: Device
    slice: SliceScope
    own_taints: tuple[DeviceTaint, ...]
    rule_taints: tuple[DeviceTaint, ...]
    multi: bool  # allowMultipleAllocations
    binding_conditions: tuple[str, ...]
    binding_failure_conditions: tuple[str, ...]
    binds_to_node: bool
    uses_counters: bool  # consumesCounters is not empty
    # (capacity, consumes and groups: properties below, made on first use)
    # Taints with an effect that blocks allocation, without and with rule taints.
    blocking_own: tuple[DeviceTaint, ...] = ()
    blocking_all: tuple[DeviceTaint, ...] = ()
    # Selector results: compiled selector -> bool or failure.
    sel_cache: dict[object, bool | SelectorFailure] = field(default_factory=dict)
    # CEL inputs per feature set (made on the first CEL evaluation), and whether
    # the device qualifies for cel.fastpath (None: not known yet).
    cel_inputs: dict[object, Any] | None = None
    fast_ok: bool | None = None
    # What a request without capacity requests consumes when nothing else is
    # consumed yet, per fractional-range flag (None: does not fit); made on first use.
    default_amounts: dict[bool, Mapping[str, Any] | None] | None = None
    pool_key: tuple[str, str] = _NO_POOL
    _demand: tuple[tuple[str, int], ...] | None = None
    _node_selector: CompiledNodeSelector | None = None
    _capacity: Mapping[str, tuple[str, DeviceCapacity]] | None = None
    _consumes: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] | None = None
    _groups: tuple[tuple[str, frozenset[str]], ...] | None = None

    @property
    def demand(self) -> tuple[tuple[str, int], ...]:
        """``consumes`` flattened to ("set\0counter", nano) pairs for the hot path
        (made when the device's counters are first booked: a search rejects most
        devices it looks at before that)."""
        found = self._demand
        if found is None:
            counters = self.device.consumes_counters
            found = self._demand = _flat_demand(counters) if counters else ()
        return found

    @property
    def consumes(self) -> tuple[tuple[str, tuple[tuple[str, int], ...]], ...]:
        """(counter set, ((counter, nano), ...)) per consumesCounters entry."""
        found = self._consumes
        if found is None:
            found = self._consumes = tuple(
                (c.counter_set, tuple((name, counter.value.nano)
                                      for name, counter in c.counters.items()))
                for c in self.device.consumes_counters or ())
        return found

    @property
    def groups(self) -> tuple[tuple[str, frozenset[str]], ...]:
        """(counter set, compatibility groups) per consumesCounters entry."""
        found = self._groups
        if found is None:
            found = self._groups = tuple(
                (c.counter_set, frozenset(c.compatibility_groups)
                 if c.compatibility_groups else _NO_GROUPS)
                for c in self.device.consumes_counters or ())
        return found

    @property
    def capacity(self) -> Mapping[str, tuple[str, DeviceCapacity]]:
        """Fully-qualified capacity name -> (name as published, capacity); the
        driver-qualified spelling wins over the implicit one, as upstream.
        Resolved on first use: most records are never asked (full nodes)."""
        found = self._capacity
        if found is None:
            raw = self.device.capacity
            found = self._capacity = _resolve_capacity(self.driver, raw) if raw else _NO_CAPACITY
        return found

    def taints(self, with_rules: bool) -> tuple[DeviceTaint, ...]:
        return self.own_taints + self.rule_taints if with_rules else self.own_taints

    def reachable_from(self, node: NodeView) -> bool:
        """Per-device node selection (only meaningful in perDeviceNodeSelection slices).

        Raises NodeSelectorError for a malformed selector.
        """
        d = self.device
        if d.node_name:
            return d.node_name == node.name
        if d.all_nodes:
            return True
        if d.node_selector is not None:
            if self._node_selector is None:
                self._node_selector = compile_node_selector(d.node_selector)
            return self._node_selector.matches(node)
        return False

    def local_node_name(self) -> str | None:
        """The node this device is pinned to by a nodeName, if any."""
        if self.slice.per_device:
            return self.device.node_name or None
        return self.slice.node_name

    def node_selector(self) -> NodeSelector | None:
        """The nodeSelector that scopes this device, if any."""
        return self.device.node_selector if self.slice.per_device else self.slice.node_selector


@dataclass(eq=False, slots=True)
class SliceEntry:
    """One ResourceSlice with its scoping decoded."""

    slice: ResourceSlice
    name: str
    driver: str
    pool: str
    pool_key: tuple[str, str]
    generation: int
    slice_count: int
    node_name: str | None
    all_nodes: bool
    node_selector: NodeSelector | None
    per_device_set: bool  # perDeviceNodeSelection present at all (even false)
    per_device: bool
    counter_sets: tuple[tuple[str, Mapping[str, int]], ...]
    scope: SliceScope
    # Taint rules that apply to the index; the records are built on first use:
    # a cold allocation looks at the slices of the nodes it tries, not at all.
    rules: tuple[DeviceTaintRule, ...] = ()
    order: int = 0  # the slice's place among all slices of the index
    _compiled: CompiledNodeSelector | None = None
    _devices: tuple[DeviceRecord, ...] | None = None
    # Records built one at a time (``record_at``) before all of them were asked
    # for: a cold search on a node usually stops at one of the first devices.
    _partial: list[DeviceRecord | None] | None = None
    _plain: bool | None = None
    _has_binding_conditions: bool = False

    @property
    def devices(self) -> tuple[DeviceRecord, ...]:
        """One record per device of the slice, in slice order (built once; the
        records ``record_at`` built already are these same objects)."""
        found = self._devices
        if found is None:
            partial = self._partial
            found = self._devices = _records(self, self.rules, partial)
            if partial is not None:
                partial[:] = found  # the search's view of the records is complete now
            self._has_binding_conditions = any(r.binding_conditions for r in found)
        return found

    def record_at(self, i: int) -> DeviceRecord:
        """The record of the slice's ``i``-th device, built alone if need be."""
        partial = self._partial  # (complete once ``devices`` was built)
        if partial is None:
            partial = self.partial_records()
        rec = partial[i]
        if rec is None:
            rec = partial[i] = _record(self, self.slice.spec.devices[i], self.rules)
        return rec

    def partial_records(self) -> list[DeviceRecord | None]:
        """The records in slice order, None where one was not built yet; filled in
        place by ``record_at`` and ``devices`` (one list per entry)."""
        partial = self._partial
        if partial is None:
            found = self._devices
            partial = self._partial = (list(found) if found is not None
                                       else [None] * len(self.slice.spec.devices))
        return partial

    def plain_devices(self) -> bool:
        """Whether the slice's devices have distinct names and consume no counters:
        then a pool made of this slice alone is valid from the raw devices, and its
        records can be built one at a time."""
        found = self._plain
        if found is None:
            devices = self.slice.spec.devices
            found = self._plain = distinct_and_counterless(devices)
            if found and self._devices is None:
                self._has_binding_conditions = any(map(_BINDING, devices))
        return found

    def raw_binding_conditions(self) -> bool:
        """``has_binding_conditions`` of a slice with ``plain_devices``, read from the
        devices (without building records)."""
        assert self._plain
        return self._has_binding_conditions

    @property
    def has_binding_conditions(self) -> bool:
        if self._devices is None:
            self.devices  # noqa: B018 -- builds the records and the flag
        return self._has_binding_conditions

    def selector_matches(self, node: NodeView) -> bool:
        """Slice-level nodeName/allNodes/nodeSelector match; raises NodeSelectorError."""
        if self.node_name:
            return self.node_name == node.name
        if self.all_nodes:
            return True
        if self.node_selector is not None:
            if self._compiled is None:
                self._compiled = compile_node_selector(self.node_selector)
            return self._compiled.matches(node)
        return False


def distinct_and_counterless(devices: Sequence[Device]) -> bool:
    """Whether ``devices`` have distinct names and consume no counters."""
    # (map over attribute getters: this runs on every node a cold search visits)
    return len(set(map(_NAME, devices))) == len(devices) and not any(map(_CONSUMES, devices))


def _flat_demand(counters: Sequence[DeviceCounterConsumption]) -> tuple[tuple[str, int], ...]:
    """``DeviceRecord.demand``: ("set\0counter", nano) per counter consumed, in order."""
    # (plain loops, no generators: this runs for every device that consumes counters)
    demand: list[tuple[str, int]] = []
    for c in counters:
        key_prefix = c.counter_set + "\0"
        for name, counter in c.counters.items():
            demand.append((key_prefix + name, counter.value.nano))
    return tuple(demand)


def _record(entry: SliceEntry, d: Device, rules: tuple[DeviceTaintRule, ...]) -> DeviceRecord:
    driver, pool = entry.driver, entry.pool
    rule_taints = tuple(r.spec.taint for r in rules
                        if _rule_applies(r, driver, pool, d.name)) if rules else ()
    own_taints = tuple(d.taints) if d.taints else ()
    # Most devices have no taints: no generators then (this runs for every record).
    blocking_own = tuple(t for t in own_taints if t.effect in BLOCKING_EFFECTS) \
        if own_taints else ()
    blocking_all = blocking_own + tuple(t for t in rule_taints if t.effect in BLOCKING_EFFECTS) \
        if rule_taints else blocking_own
    return DeviceRecord(
        f"{driver}/{pool}/{d.name}", driver, pool, d.name, d, entry.scope,
        own_taints,
        rule_taints,
        bool(d.allow_multiple_allocations),
        tuple(d.binding_conditions) if d.binding_conditions else (),
        tuple(d.binding_failure_conditions) if d.binding_failure_conditions else (),
        bool(d.binds_to_node),
        bool(d.consumes_counters),
        blocking_own,
        blocking_all,
        pool_key=entry.pool_key,
    )


def _records(entry: SliceEntry, rules: tuple[DeviceTaintRule, ...],
             built: Sequence[DeviceRecord | None] | None = None) -> tuple[DeviceRecord, ...]:
    """Every device's record in slice order, keeping those in ``built``."""
    devices = entry.slice.spec.devices
    if built is None:
        return tuple([_record(entry, d, rules) for d in devices])
    return tuple([rec if rec is not None else _record(entry, d, rules)
                  for rec, d in zip(built, devices, strict=True)])


def _rule_applies(rule: DeviceTaintRule, driver: str, pool: str, device: str) -> bool:
    sel = rule.spec.device_selector
    if sel is None:
        return True
    return ((sel.driver is None or sel.driver == driver)
            and (sel.pool is None or sel.pool == pool)
            and (sel.device is None or sel.device == device))


def _resolve_capacity(driver: str, capacity: Mapping[str, DeviceCapacity]
                      ) -> dict[str, tuple[str, DeviceCapacity]]:
    if len(capacity) == 1:  # the usual device: one name, no precedence to settle
        ((name, cap),) = capacity.items()
        return {name if "/" in name else f"{driver}/{name}": (name, cap)}
    resolved: dict[str, tuple[str, DeviceCapacity]] = {}
    prefix = driver + "/"
    for name, cap in capacity.items():
        if name.startswith(prefix):
            resolved[name] = (name, cap)
    for name, cap in capacity.items():
        fqn = capacity_fqn(name, driver)
        if fqn not in resolved:
            resolved[fqn] = (name, cap)
    return resolved



def _counter_nanos(counters: Mapping[str, Counter]) -> dict[str, int]:
    return {name: counter.value.nano for name, counter in counters.items()}


class SliceIndex:
    """An index over ResourceSlices (and DeviceTaintRules) for fast per-node gathering.

    Thread-unsafe caches; build one per scheduling view and share it between
    ``Allocator`` instances over the same slices. ``order`` gives each slice its
    sort key (default: its place in ``slices``); keys must be distinct.
    """

    def __init__(self, slices: Iterable[ResourceSlice],
                 taint_rules: Iterable[DeviceTaintRule] = (),
                 order: Sequence[int] | None = None) -> None:
        self.rules = tuple(taint_rules)
        # Slice object id -> its entry (the entry keeps the slice, so the id stays valid).
        self._entries: dict[int, SliceEntry] = {}
        self.by_node: dict[str, list[SliceEntry]] = {}
        self.shared: list[SliceEntry] = []
        self.by_pool: dict[tuple[str, str], list[SliceEntry]] = {}
        # Cluster-wide slices per pool, and those whose relevance depends on the node.
        self.shared_by_pool: dict[tuple[str, str], list[SliceEntry]] = {}
        self.conditional_shared: list[SliceEntry] = []
        # Memo of gathered pools: node name -> (node key, gather-relevant features) ->
        # pools.NodePools. These memos are pools.py's (typed where it reads them); the
        # index only holds them and forgets what a slice change makes stale.
        self.node_pools: dict[str, dict[object, Any]] = {}
        # Memo of built pools: pool key -> (partitionable, ids of the collected slices)
        # -> Pool. Pools visible from many nodes (allNodes, shared counters) are built once.
        self.built_pools: dict[tuple[str, str], dict[object, Any]] = {}
        # Memo of the part of gathering that only involves cluster-wide slices.
        self.shared_parts: dict[object, Any] = {}
        # Slices pinned to a node, not indexed yet: node name -> (sort key, slice).
        # A node's are indexed when its slices are first asked for, all of them
        # before anything that looks across nodes (a pool's slices, an update):
        # a cold allocation visits a share of the nodes, not all of them.
        self._unindexed: dict[str, list[tuple[int, ResourceSlice]]] = {}
        rules = self.rules
        unindexed = self._unindexed
        with _gc_paused():
            for i, s in enumerate(slices):
                key = i if order is None else order[i]
                node = s.spec.node_name
                if node:
                    waiting = unindexed.get(node)
                    if waiting is None:
                        unindexed[node] = [(key, s)]
                    else:
                        waiting.append((key, s))
                else:
                    self._add(self._entry(s, rules), key)

    def __len__(self) -> int:
        return len(self._entries) + sum(map(len, self._unindexed.values()))

    def node_slices(self, node_name: str) -> list[SliceEntry] | None:
        """The entries of the slices pinned to ``node_name``, in sort-key order (None: none)."""
        if node_name in self._unindexed:
            self._index_node(node_name)
        return self.by_node.get(node_name)

    def pool_slices(self, key: tuple[str, str]) -> list[SliceEntry]:
        """Every slice of pool ``key``, in sort-key order."""
        self.index_all()
        return self.by_pool.get(key, [])

    def _index_node(self, node_name: str) -> None:
        rules = self.rules
        for key, s in self._unindexed.pop(node_name):
            self._add(self._entry(s, rules), key)

    def index_all(self) -> None:
        """Index every slice still waiting (see ``node_slices``)."""
        if not self._unindexed:
            return
        with _gc_paused():
            while self._unindexed:
                self._index_node(next(iter(self._unindexed)))

    def order_of(self, s: ResourceSlice) -> int | None:
        """The sort key of slice ``s`` (this very object), None if it is not indexed."""
        self.index_all()
        entry = self._entries.get(id(s))
        return entry.order if entry is not None and entry.slice is s else None

    def _add(self, entry: SliceEntry, order: int) -> None:
        entry.order = order
        self._entries[id(entry.slice)] = entry
        if entry.node_name:
            _insert(self.by_node.setdefault(entry.node_name, []), entry)
        else:
            _insert(self.shared, entry)
            _insert(self.shared_by_pool.setdefault(entry.pool_key, []), entry)
            if not entry.counter_sets and not entry.all_nodes:
                _insert(self.conditional_shared, entry)
        _insert(self.by_pool.setdefault(entry.pool_key, []), entry)

    def _remove(self, entry: SliceEntry) -> None:
        del self._entries[id(entry.slice)]
        if entry.node_name:
            _discard(self.by_node, entry.node_name, entry)
        else:
            self.shared.remove(entry)
            _discard(self.shared_by_pool, entry.pool_key, entry)
            if entry in self.conditional_shared:
                self.conditional_shared.remove(entry)
        _discard(self.by_pool, entry.pool_key, entry)

    def update(self, removed: Iterable[ResourceSlice],
               added: Iterable[tuple[int, ResourceSlice]]) -> frozenset[str] | None:
        """Take out the slices ``removed`` (matched by identity; unknown ones are
        ignored) and index ``added`` (sort key, slice) pairs. Drops the memos the
        change can affect and returns the names of the nodes whose pools may now
        differ, or None when that may be any node (a slice not pinned to a node,
        or a pool that has such slices, changed)."""
        self.index_all()
        gone = [e for s in removed if (e := self._entries.get(id(s))) is not None]
        rules = self.rules
        with _gc_paused():
            new = [(order, self._entry(s, rules)) for order, s in added]
        if not gone and not new:
            return frozenset()
        touched = [*gone, *(e for _, e in new)]
        keys = {e.pool_key for e in touched}
        nodes = self._nodes_seeing(keys)
        for entry in gone:
            self._remove(entry)
        for order, entry in new:
            self._add(entry, order)
        if nodes is None or any(not e.node_name for e in touched) \
                or any(k in self.shared_by_pool for k in keys):
            self.node_pools.clear()
            self.built_pools.clear()
            self.shared_parts.clear()
            return None
        nodes |= self._nodes_seeing(keys) or set()
        for name in nodes:
            self.node_pools.pop(name, None)
        for key in keys:
            self.built_pools.pop(key, None)
        return frozenset(nodes)

    def _nodes_seeing(self, keys: Iterable[tuple[str, str]]) -> set[str] | None:
        """Nodes with slices of one of the pools ``keys``; None if one of them has
        slices not pinned to a node (any node may see it)."""
        nodes: set[str] = set()
        for key in keys:
            if key in self.shared_by_pool:
                return None
            nodes.update(e.node_name for e in self.by_pool.get(key, ()) if e.node_name)
        return nodes

    @staticmethod
    def _entry(s: ResourceSlice, rules: tuple[DeviceTaintRule, ...]) -> SliceEntry:
        # Built for every slice of every new index: plain positional arguments.
        spec = s.spec
        driver, pool_ref = spec.driver, spec.pool
        pool = pool_ref.name
        name = s.metadata.name or ""
        node_name = spec.node_name or None
        per_device = bool(spec.per_device_node_selection)
        shared = spec.shared_counters
        return SliceEntry(
            s, name, driver, pool, (driver, pool), pool_ref.generation,
            pool_ref.resource_slice_count, node_name, bool(spec.all_nodes),
            spec.node_selector, spec.per_device_node_selection is not None, per_device,
            tuple([(cs.name, _counter_nanos(cs.counters)) for cs in shared]) if shared else (),
            SliceScope(name, per_device, node_name, spec.node_selector),
            rules,
        )

    def sole_slice(self, node_name: str) -> SliceEntry | None:
        """The slice of ``node_name`` when its pools are exactly that one plain
        slice: no cluster-wide slices in the index, one slice pinned to the
        node, announced as its pool's only slice, without counter sets or
        per-device node selection. Such a node sees one complete pool made of
        that slice (valid unless its devices repeat a name or consume
        counters, which callers check), so its candidates can be judged from
        the slice's devices before any record is built."""
        if self.shared:
            return None
        own = self.node_slices(node_name)
        if own is None or len(own) != 1:
            return None
        entry = own[0]
        if entry.slice_count != 1 or entry.per_device_set or entry.counter_sets:
            return None
        return entry

    def sole_raw(self, node_name: str) -> ResourceSlice | None:
        """The slice of ``sole_slice``, decided from the raw slice while the node is
        not indexed yet (and left so): a cold search meets many nodes whose
        every device is taken, and those need no entry at all."""
        if self.shared:
            return None
        waiting = self._unindexed.get(node_name)
        if waiting is None:
            entry = self.sole_slice(node_name)
            return entry.slice if entry is not None else None
        if len(waiting) != 1:
            return None
        s = waiting[0][1]
        spec = s.spec
        if spec.pool.resource_slice_count != 1 or spec.per_device_node_selection is not None \
                or spec.shared_counters:
            return None
        return s

    def candidate_slices(self, node_name: str) -> list[SliceEntry]:
        """Slices that may be relevant for ``node_name``: its own plus every unscoped one."""
        own = self.node_slices(node_name)
        return own + self.shared if own else self.shared


def _insert(entries: list[SliceEntry], entry: SliceEntry) -> None:
    """Add ``entry`` keeping ``entries`` in sort-key order (appending is the usual case)."""
    if not entries or entries[-1].order < entry.order:
        entries.append(entry)
    else:
        bisect.insort(entries, entry, key=_order_of)


def _order_of(entry: SliceEntry) -> int:
    return entry.order


def _discard(lists: dict[Any, list[SliceEntry]], key: Any, entry: SliceEntry) -> None:
    found = lists.get(key)
    if found is None:
        return
    found.remove(entry)
    if not found:
        del lists[key]
