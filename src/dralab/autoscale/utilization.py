"""Node utilisation as Cluster Autoscaler computes it for scale-down.

CA (``simulator/utilization``): a node with node-local ResourceSlices is as
utilised as its most utilised DRA pool, and CPU and memory are then not looked
at; other nodes take max(CPU, memory) requests / allocatable. A pool's
utilisation (``simulator/dynamicresources/utils``):

* devices that consume no counters ("atomic"): allocated / all;
* devices that consume shared counters ("partitionable", e.g. DynamicMIG): for
  each counter set the highest counter ratio (consumed / total), averaged over
  the counter sets the pool's devices consume (one set = one physical GPU);
* a pool with both: the two weighted by their device counts (partitionable
  devices counted as their counter sets).

A device is allocated when any claim's allocation names it (admin access
excepted); a device shared through consumable capacity counts once, as fully
allocated. Ratios use the counters' values in milli-units.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dralab.api.resource import ResourceClaim, ResourceSlice
from dralab.cluster import ClusterState, NodeInfo

__all__ = ["AllocatedDevices", "NodeUtilization", "PoolCache", "allocated_devices",
           "node_utilization", "pool_utilization"]

Allocated = Mapping[tuple[str, str], frozenset[str]]


@dataclass(frozen=True, slots=True)
class NodeUtilization:
    """``value`` is what CA compares with the threshold; ``resource`` names it
    (``cpu``, ``memory`` or ``driver/pool``)."""

    value: float
    resource: str
    cpu: float
    memory: float
    dra: float | None


class AllocatedDevices(Mapping[tuple[str, str], frozenset[str]]):
    """``allocated_devices`` of the cluster's claims, read from the store's allocated
    state (which follows the claims) one pool at a time, when asked: as the
    cluster is at that moment. Iterating lists the pools with allocated devices."""

    __slots__ = ("_state",)

    def __init__(self, cluster: ClusterState) -> None:
        self._state = cluster.allocated

    def __getitem__(self, key: tuple[str, str]) -> frozenset[str]:
        names = self._state.allocated_in_pool(key)
        if not names:
            raise KeyError(key)
        return frozenset(names)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._state.pools_in_use())

    def __len__(self) -> int:
        return len(self._state.pools_in_use())


def allocated_devices(claims: Iterable[ResourceClaim]) -> dict[tuple[str, str], frozenset[str]]:
    """(driver, pool) -> names of its devices that some claim's allocation holds."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for claim in claims:
        allocation = claim.status.allocation
        if allocation is None:
            continue
        for result in allocation.devices.results:
            if result.admin_access:
                continue  # admin access reserves nothing
            out[(result.driver, result.pool)].add(result.device)
    return {key: frozenset(names) for key, names in out.items()}


def pool_utilization(slices: Iterable[ResourceSlice], allocated: frozenset[str]) -> float:
    """One pool's utilisation (see the module docstring); its newest generation only."""
    slices = list(slices)
    newest = max((s.spec.pool.generation for s in slices), default=0)
    slices = [s for s in slices if s.spec.pool.generation == newest]
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for s in slices:
        for counter_set in s.spec.shared_counters:
            for name, counter in counter_set.counters.items():
                totals[counter_set.name][name] += counter.value.milli_value()
    atomic = atomic_used = 0
    sets: set[str] = set()
    consumed: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    partitionable_used = 0
    for s in slices:
        for device in s.spec.devices:
            used = device.name in allocated
            if not device.consumes_counters:
                atomic += 1
                atomic_used += used
                continue
            partitionable_used += used
            for consumption in device.consumes_counters:
                sets.add(consumption.counter_set)
                if used:
                    for name, counter in consumption.counters.items():
                        consumed[consumption.counter_set][name] += counter.value.milli_value()
    atomic_util = atomic_used / atomic if atomic else 0.0
    if partitionable_used == 0:
        return atomic_util  # every allocated device is atomic (or none is allocated)
    partitionable_util = 0.0
    for set_name, counters in totals.items():
        highest = 0.0
        for name, total in counters.items():
            if total:
                highest = max(highest, consumed[set_name].get(name, 0) / total)
        partitionable_util += highest / len(sets)
    if atomic_used == 0:
        return partitionable_util  # every allocated device is partitionable
    weight = len(sets) / (len(sets) + atomic)
    return partitionable_util * weight + atomic_util * (1 - weight)


def _ratio(node: NodeInfo, resource: str) -> float:
    total = node.allocatable.get(resource, 0)
    return node.requested.get(resource, 0) / total if total > 0 else 0.0


_NO_DEVICES: frozenset[str] = frozenset()
_VALUES_PER_NODE = 256  # remembered (pool, allocated devices) values per node


class PoolCache:
    """Pool utilisations kept across ``node_utilization`` calls on one cluster: per
    node, its slices grouped by pool (while the store holds the same slices for the
    node) and each pool's value per set of allocated devices."""

    __slots__ = ("_nodes",)

    def __init__(self) -> None:
        self._nodes: dict[str, tuple[tuple[ResourceSlice, ...],
                                     list[tuple[tuple[str, str], list[ResourceSlice]]],
                                     dict[tuple[tuple[str, str], frozenset[str]], float]]] = {}

    def pools(self, node: str, slices: tuple[ResourceSlice, ...]
              ) -> tuple[list[tuple[tuple[str, str], list[ResourceSlice]]],
                         dict[tuple[tuple[str, str], frozenset[str]], float]]:
        found = self._nodes.get(node)
        if found is None or found[0] is not slices:
            found = self._nodes[node] = (slices, _by_pool(slices), {})
        return found[1], found[2]


def _by_pool(slices: Iterable[ResourceSlice]
             ) -> list[tuple[tuple[str, str], list[ResourceSlice]]]:
    pools: dict[tuple[str, str], list[ResourceSlice]] = defaultdict(list)
    for s in slices:
        pools[(s.spec.driver, s.spec.pool.name)].append(s)
    return sorted(pools.items())


def node_utilization(cluster: ClusterState, node: NodeInfo,
                     allocated: Allocated | None = None,
                     cache: PoolCache | None = None) -> NodeUtilization:
    """CA's utilisation of ``node``: its highest DRA pool if it has node-local slices,
    else max(CPU, memory). ``allocated``: ``allocated_devices`` of the cluster's claims
    (computed here when not given). ``cache``: pool utilisations kept across calls on
    one cluster."""
    cpu, memory = _ratio(node, "cpu"), _ratio(node, "memory")
    slices = cluster.slices_of(node.name)
    if slices:
        if allocated is None:
            allocated = allocated_devices(cluster.claims.values())
        if cache is None:
            pools, values = _by_pool(slices), None
        else:
            pools, values = cache.pools(node.name, slices)
        best, name = 0.0, ""
        for key, group in pools:
            used = allocated.get(key, _NO_DEVICES)
            if values is None:
                value = pool_utilization(group, used)
            else:
                found = values.get((key, used))
                if found is None:
                    if len(values) >= _VALUES_PER_NODE:
                        values.clear()
                    found = values[(key, used)] = pool_utilization(group, used)
                value = found
            if value >= best:
                best, name = value, f"{key[0]}/{key[1]}"
        return NodeUtilization(best, name, cpu, memory, best)
    if cpu > memory:
        return NodeUtilization(cpu, "cpu", cpu, memory, None)
    return NodeUtilization(memory, "memory", cpu, memory, None)
