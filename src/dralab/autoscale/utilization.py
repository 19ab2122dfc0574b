"""Node utilisation as Cluster Autoscaler computes it for scale-down.

CA (``simulator/utilization``, ``Calculate``), in this order:

* a GPU node whose GPUs are not exposed through DRA: the GPU extended resource's
  requests / allocatable (0 when the GPU is not advertised yet: an unready GPU);
* a node with node-local ResourceSlices (DRA on): its most utilised DRA pool, and
  CPU and memory are not looked at; a pool that cannot be measured (its newest
  generation incomplete, a claim not allocated) makes the node's utilisation an
  error, and CA keeps such a node;
* else max(CPU, memory) requests / allocatable; a resource the node does not
  advertise, or advertises as 0, is an error. DaemonSet (and mirror) pods are left
  out of both sides with ``--ignore-daemonsets-utilization``
  (``--ignore-mirror-pods-utilization``); pods terminating for longer than their
  grace period (plus 30 s) are not counted.

A DRA pool's utilisation (``simulator/dynamicresources/utils``), on the slices of
its newest generation:

* a pool whose slices declare no shared counters ("atomic"): allocated devices /
  all devices;
* a pool with shared counters ("partitionable", e.g. DynamicMIG): per counter set
  the highest ratio consumed / total among its counters (consumed: by the allocated
  devices), summed over the counter sets and divided by the number of distinct
  counter sets the pool's devices consume (one set = one physical GPU). Devices
  that consume no counters do not count then.

A device is allocated when a claim's allocation names it (admin access
excepted); a device shared through consumable capacity counts once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from dralab.api.core import Node, Pod
from dralab.api.resource import CounterSet, Device, ResourceClaim, ResourceSlice
from dralab.cluster import ClusterState, NodeInfo

__all__ = ["DAEMONSET_POD_ANNOTATION", "GPU_LABELS", "GPU_RESOURCES", "MIRROR_POD_ANNOTATION",
           "AllocatedDevices", "GpuConfig", "NodeUtilization", "PoolCache", "UtilizationError",
           "allocated_devices", "atomic_utilization", "claim_allocations", "current_slices",
           "dra_utilizations", "gpu_config", "highest_dra_utilization", "is_daemonset_pod",
           "is_long_terminating", "is_mirror_pod", "node_utilization", "partitionable_device_count",
           "partitionable_utilization", "pool_utilization", "resource_utilization", "unix_time"]

Allocated = Mapping[tuple[str, str], frozenset[str]]

# utils/gpu: the GPU vendors' extended resources, in CA's order.
GPU_RESOURCES = ("nvidia.com/gpu", "habana.ai/gaudi", "gpu.intel.com/xe", "amd.com/gpu",
                 "microsoft.com/directx")
# CA asks its cloud provider for the node's GPU label; dralab has no provider. These
# mark GPU nodes here: GCE's (the provider CA's DRA support is built on) and NVIDIA
# GPU feature discovery's, which `dralab fleet` puts on its GPU nodes.
GPU_LABELS = ("cloud.google.com/gke-accelerator", "nvidia.com/gpu.present")
DAEMONSET_POD_ANNOTATION = "cluster-autoscaler.kubernetes.io/daemonset-pod"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
# utils/drain: a pod is "long terminating" this long after its grace period ran out.
_LONG_TERMINATING_EXTRA = 30.0
_DEFAULT_GRACE = 30  # core/v1 DefaultTerminationGracePeriodSeconds


class UtilizationError(ValueError):
    """CA cannot compute the node's utilisation (and keeps the node)."""


@dataclass(frozen=True, slots=True)
class NodeUtilization:
    """``value`` is what CA compares with the threshold; ``resource`` names it
    (``cpu``, ``memory``, ``driver/pool`` or the GPU's extended resource). ``error``:
    why it could not be computed (then ``value`` is 0 and the node is kept)."""

    value: float
    resource: str
    cpu: float
    memory: float
    dra: float | None
    gpu: float | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class GpuConfig:
    """What CA's cloud provider says of a GPU node: the extended resource its GPUs
    are advertised as, or that they are exposed through DRA."""

    resource: str
    exposed_via_dra: bool = False


def gpu_config(node: Node, has_slices: bool, labels: Collection[str] = GPU_LABELS
               ) -> GpuConfig | None:
    """The node's GPU config, None for a node without GPUs. A GPU node carries one of
    ``labels`` or advertises a GPU extended resource (utils/gpu ``NodeHasGpu``); its
    GPUs are taken as exposed through DRA when it publishes ResourceSlices of its own
    (GKE says so with a label dralab nodes do not have)."""
    allocatable = node.status.allocatable or node.status.capacity
    advertised = next((r for r in GPU_RESOURCES
                       if r in allocatable and allocatable[r].milli_value() != 0), None)
    node_labels = node.metadata.labels or {}
    if advertised is None and not any(label in node_labels for label in labels):
        return None
    if has_slices:
        return GpuConfig("", exposed_via_dra=True)
    return GpuConfig(advertised or GPU_RESOURCES[0])


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
    """(driver, pool) -> names of its devices that some claim's allocation holds
    (claims without an allocation hold none)."""
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


def claim_allocations(claims: Iterable[ResourceClaim]) -> dict[tuple[str, str], frozenset[str]]:
    """``allocated_devices`` of the claims of the pods on one node, as CA reads them:
    a claim without an allocation is an error (UtilizationError)."""
    claims = list(claims)
    for claim in claims:
        if claim.status.allocation is None:
            meta = claim.metadata
            raise UtilizationError(f"claim {meta.namespace or ''}/{meta.name} not allocated")
    return allocated_devices(claims)


def current_slices(slices: Iterable[ResourceSlice]) -> list[ResourceSlice]:
    """The slices of the pool's newest generation; UtilizationError when fewer of them
    are present than their ``resourceSliceCount`` says (the pool is being updated)."""
    newest = 0
    current: list[ResourceSlice] = []
    for s in slices:
        generation = s.spec.pool.generation
        if generation > newest:
            newest, current = generation, [s]
        elif generation == newest:
            current.append(s)
    if not current:
        return []
    want = current[0].spec.pool.resource_slice_count
    if len(current) != want:
        raise UtilizationError(f"newest generation: {newest}, slice count: {want} - found "
                               f"only {len(current)} slices")
    return current


def atomic_utilization(allocated: int, total: int) -> float:
    """Allocated devices over all devices (0 for a pool without devices)."""
    return allocated / total if total else 0.0


def partitionable_device_count(devices: Iterable[Device]) -> int:
    """How many physical devices a pool's partitions stand for: the distinct counter
    sets its devices consume (a device consuming none is not partitionable)."""
    return len({c.counter_set for d in devices for c in d.consumes_counters})


def partitionable_utilization(allocated: Sequence[Device], devices: Sequence[Device],
                              counter_sets: Sequence[CounterSet]) -> float:
    """Per counter set the highest consumed / total among its counters (consumed by
    ``allocated``), summed over ``counter_sets`` in their order and divided by the
    physical devices of ``devices`` (``partitionable_device_count``)."""
    count = partitionable_device_count(devices)
    if count == 0:
        return 0.0
    consumed: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for device in allocated:
        for consumption in device.consumes_counters:
            for name, counter in consumption.counters.items():
                consumed[consumption.counter_set][name] += counter.value.milli_value()
    out = 0.0
    for counter_set in counter_sets:
        used = consumed.get(counter_set.name, {})
        highest = 0.0
        for name, counter in counter_set.counters.items():
            total = counter.value.milli_value()
            if total == 0 or name not in used:
                continue
            highest = max(highest, used[name] / total)
        out += highest / count
    return out


def pool_utilization(slices: Iterable[ResourceSlice], allocated: frozenset[str]) -> float:
    """One pool's utilisation (see the module docstring), from its newest generation;
    UtilizationError when that generation is incomplete."""
    current = current_slices(slices)
    devices = [d for s in current for d in s.spec.devices]
    used = [d for d in devices if d.name in allocated]
    counter_sets = [c for s in current for c in s.spec.shared_counters]
    if not counter_sets:
        return atomic_utilization(len(used), len(devices))
    return partitionable_utilization(used, devices, counter_sets)


def _by_pool(slices: Iterable[ResourceSlice]
             ) -> list[tuple[tuple[str, str], list[ResourceSlice]]]:
    pools: dict[tuple[str, str], list[ResourceSlice]] = defaultdict(list)
    for s in slices:
        pools[(s.spec.driver, s.spec.pool.name)].append(s)
    return sorted(pools.items())


_NO_DEVICES: frozenset[str] = frozenset()


def dra_utilizations(slices: Iterable[ResourceSlice], allocated: Allocated
                     ) -> dict[tuple[str, str], float]:
    """(driver, pool) -> utilisation of each pool of a node's ``slices``;
    UtilizationError naming the first pool that cannot be measured."""
    out: dict[tuple[str, str], float] = {}
    for key, group in _by_pool(slices):
        try:
            out[key] = pool_utilization(group, allocated.get(key, _NO_DEVICES))
        except UtilizationError as err:
            raise UtilizationError(f"pool {key[1]!r} error: {err}") from None
    return out


def highest_dra_utilization(slices: Iterable[ResourceSlice], allocated: Allocated
                            ) -> tuple[str, float]:
    """("driver/pool", utilisation) of the most utilised pool (of equals, the last by
    driver and pool name); ("", 0.0) without slices."""
    best, name = 0.0, ""
    for (driver, pool), value in dra_utilizations(slices, allocated).items():
        if value >= best:
            best, name = value, f"{driver}/{pool}"
    return name, best


def is_daemonset_pod(pod: Pod) -> bool:
    """CA's ``IsDaemonSetPod``: controlled by a DaemonSet, or annotated as one."""
    if any(ref.controller and ref.kind == "DaemonSet" for ref in pod.metadata.owner_references):
        return True
    return (pod.metadata.annotations or {}).get(DAEMONSET_POD_ANNOTATION) == "true"


def is_mirror_pod(pod: Pod) -> bool:
    return MIRROR_POD_ANNOTATION in (pod.metadata.annotations or {})


def unix_time(timestamp: str) -> float | None:
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def is_long_terminating(pod: Pod, now: float | None) -> bool:
    """utils/drain ``IsPodLongTerminating``: deleted more than its
    terminationGracePeriodSeconds (default 30) plus 30 s before ``now`` (unix
    seconds; None: no clock, never)."""
    deleted = pod.metadata.deletion_timestamp
    if now is None or not deleted:
        return False
    since = unix_time(deleted)
    if since is None:
        return False
    raw = pod.raw.get("spec") if isinstance(pod.raw, dict) else None
    grace = raw.get("terminationGracePeriodSeconds") if isinstance(raw, dict) else None
    if not isinstance(grace, int) or isinstance(grace, bool):
        grace = _DEFAULT_GRACE
    return since + grace + _LONG_TERMINATING_EXTRA < now


def resource_utilization(node: NodeInfo, resource: str, ignore_daemonsets: bool = False,
                         ignore_mirror_pods: bool = False, now: float | None = None) -> float:
    """CA's ``CalculateUtilizationOfResource``: the pods' requests of ``resource`` over
    the node's allocatable; UtilizationError when the node does not advertise it or
    advertises 0."""
    allocatable = node.allocatable.get(resource)
    if allocatable is None:
        raise UtilizationError(f"failed to get {resource} from {node.name}")
    if allocatable == 0:
        raise UtilizationError(f"{resource} is 0 at {node.name}")
    requested = left_out = 0
    for info in node.pods:
        value = info.requests.get(resource, 0)
        if (ignore_daemonsets and is_daemonset_pod(info.pod)) or \
                (ignore_mirror_pods and is_mirror_pod(info.pod)):
            left_out += value
            continue
        if is_long_terminating(info.pod, now):
            continue
        requested += value
    return requested / (allocatable - left_out)


_VALUES_PER_NODE = 256  # remembered (pool, allocated devices) values per node


class PoolCache:
    """Pool utilisations kept across ``node_utilization`` calls on one cluster: per
    node, its slices grouped by pool (while the store holds the same slices for the
    node) and each pool's value (or error) per set of allocated devices."""

    __slots__ = ("_nodes",)

    def __init__(self) -> None:
        self._nodes: dict[str, tuple[tuple[ResourceSlice, ...],
                                     list[tuple[tuple[str, str], list[ResourceSlice]]],
                                     dict[tuple[tuple[str, str], frozenset[str]], float | str]]
                          ] = {}

    def pools(self, node: str, slices: tuple[ResourceSlice, ...]
              ) -> tuple[list[tuple[tuple[str, str], list[ResourceSlice]]],
                         dict[tuple[tuple[str, str], frozenset[str]], float | str]]:
        found = self._nodes.get(node)
        if found is None or found[0] is not slices:
            found = self._nodes[node] = (slices, _by_pool(slices), {})
        return found[1], found[2]


def _cached_highest(node: str, slices: tuple[ResourceSlice, ...], allocated: Allocated,
                    cache: PoolCache) -> tuple[str, float]:
    pools, values = cache.pools(node, slices)
    best, name = 0.0, ""
    for key, group in pools:
        used = allocated.get(key, _NO_DEVICES)
        found = values.get((key, used))
        if found is None:
            if len(values) >= _VALUES_PER_NODE:
                values.clear()
            try:
                found = pool_utilization(group, used)
            except UtilizationError as err:
                found = f"pool {key[1]!r} error: {err}"
            values[(key, used)] = found
        if isinstance(found, str):
            raise UtilizationError(found)
        if found >= best:
            best, name = found, f"{key[0]}/{key[1]}"
    return name, best


_DETECT: Literal["detect"] = "detect"


def node_utilization(cluster: ClusterState, node: NodeInfo,
                     allocated: Allocated | None = None,
                     cache: PoolCache | None = None, *,
                     ignore_daemonsets: bool = False, ignore_mirror_pods: bool = False,
                     dra_enabled: bool = True,
                     gpu: GpuConfig | Literal["detect"] | None = _DETECT,
                     gpu_labels: Collection[str] = GPU_LABELS,
                     now: float | None = None) -> NodeUtilization:
    """CA's utilisation of ``node`` (see the module docstring); an error is returned in
    ``error``, not raised. ``allocated``: ``allocated_devices`` of the cluster's claims
    (computed here when not given). ``cache``: pool utilisations kept across calls on
    one cluster. ``gpu``: the node's GPU config (default: ``gpu_config`` with
    ``gpu_labels``). ``now``: unix seconds, for long-terminating pods."""
    slices = cluster.slices_of(node.name) if dra_enabled else ()
    if gpu == _DETECT:
        gpu = gpu_config(node.node, bool(slices), gpu_labels)
    if gpu is not None and not gpu.exposed_via_dra:
        try:
            value = resource_utilization(node, gpu.resource, ignore_daemonsets,
                                         ignore_mirror_pods, now)
        except UtilizationError:
            value = 0.0  # an unready GPU: CA lets such a node go
        return NodeUtilization(value, gpu.resource, 0.0, 0.0, None, gpu=value)
    if slices:
        if allocated is None:
            allocated = allocated_devices(cluster.claims.values())
        try:
            if cache is None:
                name, best = highest_dra_utilization(slices, allocated)
            else:
                name, best = _cached_highest(node.name, slices, allocated, cache)
        except UtilizationError as err:
            return NodeUtilization(0.0, "", 0.0, 0.0, None, error=str(err))
        return NodeUtilization(best, name, 0.0, 0.0, best)
    try:
        cpu = resource_utilization(node, "cpu", ignore_daemonsets, ignore_mirror_pods, now)
        memory = resource_utilization(node, "memory", ignore_daemonsets, ignore_mirror_pods,
                                      now)
    except UtilizationError as err:
        return NodeUtilization(0.0, "", 0.0, 0.0, None, error=str(err))
    if cpu > memory:
        return NodeUtilization(cpu, "cpu", cpu, memory, None)
    return NodeUtilization(memory, "memory", cpu, memory, None)
