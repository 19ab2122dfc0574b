"""Metrics of a running simulation, read off the scheduler's cluster state.

GPU accounting (``Accounting``, chosen by the mode): in DRA mode from the
allocator's results, the claims' allocations in the cluster (a whole GPU counts
1, a MIG device its profile's compute slices over the GPU's, from the fleet
catalog, a share its consumed memory over the GPU's memory); in device-plugin
mode from the nodes' requested ``nvidia.com/gpu`` and, on static MIG pools,
``nvidia.com/mig-<profile>`` (the profile's share of a GPU, from the catalog; the
device plugin's choice of GPU is not modelled, so MIG use fills a node's MIG GPUs
in order).

The observer follows the node set: a node removed by a scenario event leaves
the fleet's GPU capacity (the denominators of utilisation and fragmentation)
until it comes back, and a node added from a pool joins it. The per-node
occupancy heatmap has a row for every node that ever had GPUs (zero while it
is absent).

Fragmentation follows the FGD paper's measure (see the trace protocol notes):
the expected idle GPU share that the workload's shapes cannot use, over the
workload distribution M (job kinds weighted by pod arrival rate), as a share of
all GPUs. A shape is (cpu, k GPUs, per-GPU share d or memory for shares); on a
node where it cannot run, the node's whole idle share counts; where it can, only
the GPUs too small for it. MIG placement rules and model selectors are ignored
in this measure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from dralab.api.core import Node
from dralab.api.resource import ResourceSlice
from dralab.cluster import ClusterState, PodInfo

from .fleets import DeviceMap, mig_fraction, mig_resource_fractions
from .model import KindDevices
from .results import NodeOccupancy, Sample

__all__ = ["Accounting", "ClaimAccounting", "ExtendedResourceAccounting", "Observer",
           "Weight"]

_MIB = 1024 * 1024
_EPS = 1e-9
_MIG_PREFIX = "nvidia.com/mig-"

Weight = tuple[float, int, tuple[int, float, int]]  # (probability, cpu milli, demand)


class Accounting(Protocol):
    """How one mode sees GPUs: which a node has, what a pod holds, how much is in use."""

    def node_gpus(self, node: Node) -> list[str]:
        """The node's physical GPUs (ids), in a fixed order; empty for a CPU node."""

    def joined(self, node: Node, slices: Sequence[ResourceSlice]) -> None:
        """A node (new, or back) with its slices."""

    def pod_held(self, info: PodInfo) -> tuple[int, float, bool]:
        """(devices, GPU share) a started pod holds, and whether that share is what it
        asked for (DRA allocates what was asked; the device plugin rounds up)."""

    def use(self, node_gpus: Mapping[str, list[str]]) -> dict[str, list[float]]:
        """Per node: the used share of each of its GPUs."""

    def gpu_memory(self, gpu: str) -> int | None:
        """MiB a share of ``gpu`` is measured in; None where shares are not modelled."""


class ClaimAccounting:
    """DRA: the claims' allocation results, mapped to physical GPUs (``DeviceMap``)."""

    def __init__(self, cluster: ClusterState, slices: Iterable[ResourceSlice]) -> None:
        self.cluster = cluster
        self.devices = DeviceMap(slices)

    def node_gpus(self, node: Node) -> list[str]:
        return list(self.devices.gpus_by_node.get(node.name, ()))

    def joined(self, node: Node, slices: Sequence[ResourceSlice]) -> None:
        self.devices.add(slices)

    def _results(self, info: PodInfo | None = None) -> list[tuple[str, str, str, dict[str, int]]]:
        out: list[tuple[str, str, str, dict[str, int]]] = []
        if info is None:
            claims = list(self.cluster.claims.values())
        else:
            ns = info.pod.metadata.namespace or "default"
            names = [s.resource_claim_name for s in info.pod.status.resource_claim_statuses
                     if s.resource_claim_name]
            ext = info.pod.status.extended_resource_claim_status
            if ext is not None and ext.resource_claim_name:
                names.append(ext.resource_claim_name)
            claims = [c for n in names if (c := self.cluster.claims.get(f"{ns}/{n}"))]
        for claim in claims:
            allocation = claim.status.allocation
            if allocation is None:
                continue
            for r in allocation.devices.results:
                consumed = {k: q.value() // _MIB for k, q in r.consumed_capacity.items()}
                out.append((r.driver, r.pool, r.device, consumed))
        return out

    def pod_held(self, info: PodInfo) -> tuple[int, float, bool]:
        results = self._results(info)
        return len(results), round(sum(self.devices.used(results).values()), 6), True

    def use(self, node_gpus: Mapping[str, list[str]]) -> dict[str, list[float]]:
        used = self.devices.used(self._results())
        return {node: [used.get(g, 0.0) for g in gpus] for node, gpus in node_gpus.items()}

    def gpu_memory(self, gpu: str) -> int | None:
        return self.devices.gpu_memory.get(gpu, 0)


class ExtendedResourceAccounting:
    """Device plugin: the nodes' requested ``nvidia.com/gpu`` and MIG resources."""

    def __init__(self, cluster: ClusterState, gpu_resource: str) -> None:
        self.cluster = cluster
        self.gpu_resource = gpu_resource
        self._whole: dict[str, int] = {}  # per node: GPUs that are nvidia.com/gpu
        self._mig = mig_resource_fractions()

    def _fraction(self, resource: str) -> float:
        return self._mig.get(resource, 1.0)

    def node_gpus(self, node: Node) -> list[str]:
        q = node.status.allocatable.get(self.gpu_resource) or \
            node.status.capacity.get(self.gpu_resource)
        whole = q.value() if q is not None else 0
        # Static MIG: the GPUs the node has beyond its whole ones hold MIG devices.
        has_mig = any(k.startswith(_MIG_PREFIX) for k in node.status.allocatable)
        total = int(node.metadata.labels.get("nvidia.com/gpu.count", "0") or 0) \
            if has_mig else 0
        count = max(whole, total)
        if not count:
            return []
        self._whole[node.name] = whole
        return [f"{node.name}/gpu-{i}" for i in range(count)]

    def joined(self, node: Node, slices: Sequence[ResourceSlice]) -> None:
        pass

    def pod_held(self, info: PodInfo) -> tuple[int, float, bool]:
        gpus = info.requests.get(self.gpu_resource, 0) // 1000
        migs = {k: v // 1000 for k, v in info.requests.items() if k.startswith(_MIG_PREFIX)}
        held = gpus + sum(n * self._fraction(k) for k, n in migs.items())
        return gpus + sum(migs.values()), round(float(held), 6), False

    def use(self, node_gpus: Mapping[str, list[str]]) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for node, gpus in node_gpus.items():
            info = self.cluster.nodes.get(node)
            requested = info.requested if info else {}
            busy = requested.get(self.gpu_resource, 0) // 1000
            whole = self._whole.get(node, len(gpus))
            shares = [1.0 if i < busy else 0.0 for i in range(whole)]
            mig = sum(v // 1000 * self._fraction(k) for k, v in requested.items()
                      if k.startswith(_MIG_PREFIX))
            for _ in range(len(gpus) - whole):
                take = min(1.0, mig)
                shares.append(take)
                mig = max(0.0, mig - take)
            out[node] = shares
        return out

    def gpu_memory(self, gpu: str) -> int | None:
        return None


class Observer:
    """Collects samples and per-node occupancy for one mode's run."""

    def __init__(self, cluster: ClusterState, nodes: Sequence[Node], accounting: Accounting,
                 mode: str, weights: Sequence[Weight], sample_interval: float) -> None:
        self.cluster = cluster
        self.accounting = accounting
        self.mode = mode
        self.weights = list(weights)
        self.sample_interval = sample_interval
        self.samples: list[Sample] = []
        self._demand: dict[str, float] = {}  # running pod -> GPU share it asked for
        self._node_memory: dict[str, int] = {}
        self._columns: list[dict[str, float]] = []
        self._times: list[float] = []
        self._gpus: dict[str, list[str]] = {}   # every GPU node ever present, first-seen order
        self._present: set[str] = set()
        self.node_gpus: dict[str, list[str]] = {}   # GPU nodes present now
        self.gpus_total = 0
        for n in nodes:
            self._join(n)
        self._refresh()

    # --- the node set -------------------------------------------------------------------
    def _join(self, node: Node) -> None:
        self._node_memory[node.name] = int(
            node.metadata.labels.get("nvidia.com/gpu.memory", "0") or 0)
        gpus = self.accounting.node_gpus(node)
        if gpus:
            self._gpus.setdefault(node.name, gpus)
            self._present.add(node.name)

    def _refresh(self) -> None:
        self.node_gpus = {n: g for n, g in self._gpus.items() if n in self._present}
        self.gpus_total = sum(len(g) for g in self.node_gpus.values())

    def node_joined(self, node: Node, slices: Sequence[ResourceSlice]) -> None:
        """A node added (again): its GPUs join the fleet's capacity."""
        self.accounting.joined(node, slices)
        self._join(node)
        self._refresh()

    def node_left(self, name: str) -> None:
        """A node removed: its GPUs leave the fleet's capacity until it comes back."""
        self._present.discard(name)
        self._refresh()

    # --- per pod ------------------------------------------------------------------------
    def pod_started(self, info: PodInfo, demand: KindDevices | None,
                    node: str) -> tuple[int, float]:
        """(devices held, GPU share held) by a pod that just started; remembers what it asked."""
        devices, held, as_asked = self.accounting.pod_held(info)
        self._demand[info.key] = held if as_asked else self._asked(demand, node)
        return devices, held

    def _asked(self, demand: KindDevices | None, node: str) -> float:
        """The GPU share ``demand`` stands for on ``node``, whatever the device plugin gave."""
        if demand is None:
            return 0.0
        if demand.alternatives:
            return self._asked(demand.alternatives[0], node)
        if demand.type == "share" and demand.memory_mib:
            memory = self._node_memory.get(node, 0)
            return min(1.0, demand.memory_mib / memory) if memory else 1.0
        if demand.type == "mig":
            return 1 * mig_fraction(demand.profile)
        if demand.type == "share":
            return 0.0
        return demand.count * 1.0

    def pod_left(self, info: PodInfo) -> None:
        self._demand.pop(info.key, None)

    # --- samples ------------------------------------------------------------------------
    def _fragmentation(self, use: dict[str, list[float]]) -> float:
        if not self.gpus_total or not self.weights:
            return 0.0
        total = 0.0
        for node, shares in use.items():
            info = self.cluster.nodes.get(node)
            free_cpu = info.free("cpu") if info is not None else 0
            free = [max(0.0, 1.0 - s) for s in shares]
            idle = sum(free)
            if idle <= _EPS:
                continue
            memory: list[int] | None = None  # per GPU, MiB; only where shares are modelled
            for p, cpu, (k, d, mib) in self.weights:
                if k == 0:
                    total += p * idle
                    continue
                if mib and memory is None:
                    sizes = [self.accounting.gpu_memory(g) for g in self.node_gpus[node]]
                    memory = [m for m in sizes if m is not None]
                if mib and memory:
                    fits = [f * m >= mib - _EPS for f, m in zip(free, memory, strict=True)]
                else:
                    fits = [f >= d - _EPS for f in free]
                if free_cpu < cpu or sum(fits) < k:
                    total += p * idle
                else:
                    total += p * sum(f for f, ok in zip(free, fits, strict=True) if not ok)
        return total / self.gpus_total

    def sample(self, t: float, pending: int, running: int, completed: int) -> None:
        use = self.accounting.use(self.node_gpus)
        busy = sum(1 for shares in use.values() for s in shares if s > _EPS)
        allocated = sum(s for shares in use.values() for s in shares)
        self.samples.append(Sample(
            t=t, gpus_total=self.gpus_total, gpus_busy=busy,
            gpu_capacity_allocated=allocated / self.gpus_total if self.gpus_total else 0.0,
            gpu_capacity_requested=(sum(self._demand.values()) / self.gpus_total
                                    if self.gpus_total else 0.0),
            fragmentation=self._fragmentation(use), pending_pods=pending,
            running_pods=running, completed_pods=completed))
        if not self._times or t > self._times[-1] + _EPS:
            self._times.append(t)
            self._columns.append({n: sum(s) / len(s) for n, s in use.items()})

    def occupancy(self, duration: float) -> NodeOccupancy:
        """Per GPU node (every node that had GPUs at some point) and sample bin, the share of
        its GPU capacity allocated; 0 while the node was absent."""
        times = [t for t in self._times if t < duration - _EPS] or [0.0]
        nodes = tuple(self._gpus)
        columns = self._columns[:len(times)] or [{}]
        matrix = tuple(tuple(col.get(n, 0.0) for col in columns) for n in nodes)
        return NodeOccupancy(nodes=nodes, times=tuple(times), matrix=matrix)
