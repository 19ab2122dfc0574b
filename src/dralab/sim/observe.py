"""Metrics of a running simulation, read off the scheduler's cluster state.

GPU accounting: in DRA mode from the claims' allocation results (a whole GPU
counts 1, a MIG ``<g>g`` device g/7 of its parent GPU, a share its consumed
memory over the GPU's memory); in device-plugin mode from the nodes' requested
``nvidia.com/gpu`` and, on static MIG pools, ``nvidia.com/mig-<g>g...`` (g/7 of
a GPU each; the device plugin's choice of GPU is not modelled, so MIG use fills
a node's MIG GPUs in order).

Fragmentation follows the FGD paper's measure (see the trace protocol notes):
the expected idle GPU share that the workload's shapes cannot use, over the
workload distribution M (job kinds weighted by pod arrival rate), as a share of
all GPUs. A shape is (cpu, k GPUs, per-GPU share d or memory for shares); on a
node where it cannot run, the node's whole idle share counts; where it can, only
the GPUs too small for it. MIG placement rules and model selectors are ignored
in this measure.
"""

from __future__ import annotations

from collections.abc import Sequence

from dralab.api.core import Node
from dralab.scheduler.cluster import ClusterState, PodInfo

from .fleets import DeviceMap
from .jobs import shape_demand
from .results import NodeOccupancy, Sample
from .scenario import DeviceShape

__all__ = ["Observer"]

_MIB = 1024 * 1024
_EPS = 1e-9
_MIG_PREFIX = "nvidia.com/mig-"
_MIG_SLICES = 7


def _mig_fraction(resource: str) -> float:
    """The share of a GPU one device of ``nvidia.com/mig-<g>g.<mem>`` takes (g/7)."""
    head = resource[len(_MIG_PREFIX):].split("g", 1)[0]
    return min(1.0, int(head) / _MIG_SLICES) if head.isdigit() and int(head) else 1.0


class Observer:
    """Collects samples and per-node occupancy for one mode's run."""

    def __init__(self, cluster: ClusterState, nodes: Sequence[Node], devices: DeviceMap | None,
                 mode: str, weights: Sequence[tuple[float, int, tuple[int, float, int]]],
                 sample_interval: float, gpu_resource: str) -> None:
        self.cluster = cluster
        self.devices = devices
        self.mode = mode
        self.weights = list(weights)
        self.gpu_resource = gpu_resource
        self.sample_interval = sample_interval
        self.samples: list[Sample] = []
        self._demand: dict[str, float] = {}  # running pod -> GPU share it asked for
        self._node_memory = {n.name: int(n.metadata.labels.get("nvidia.com/gpu.memory", "0")
                                         or 0) for n in nodes}
        self._columns: list[list[float]] = []
        self._times: list[float] = []
        self.node_gpus: dict[str, list[str]] = {}
        self._whole: dict[str, int] = {}  # device-plugin mode: GPUs that are nvidia.com/gpu
        if devices is not None:
            self.node_gpus = {n.name: list(devices.gpus_by_node.get(n.name, ()))
                              for n in nodes if devices.gpus_by_node.get(n.name)}
        else:
            for n in nodes:
                q = n.status.allocatable.get(gpu_resource) or n.status.capacity.get(gpu_resource)
                whole = q.value() if q is not None else 0
                # Static MIG: the GPUs the node has beyond its whole ones hold MIG devices.
                has_mig = any(k.startswith(_MIG_PREFIX) for k in n.status.allocatable)
                total = int(n.metadata.labels.get("nvidia.com/gpu.count", "0") or 0) \
                    if has_mig else 0
                count = max(whole, total)
                if count:
                    self.node_gpus[n.name] = [f"{n.name}/gpu-{i}" for i in range(count)]
                    self._whole[n.name] = whole
        self.gpus_total = sum(len(g) for g in self.node_gpus.values())

    # --- per pod ------------------------------------------------------------------------
    def _claim_results(self, info: PodInfo | None = None
                       ) -> list[tuple[str, str, str, dict[str, int]]]:
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

    def pod_started(self, info: PodInfo, shape: DeviceShape | None,
                    node: str) -> tuple[int, float]:
        """(devices held, GPU share held) by a pod that just started; remembers what it asked."""
        if self.devices is None:
            gpus = info.requests.get(self.gpu_resource, 0) // 1000
            migs = {k: v // 1000 for k, v in info.requests.items() if k.startswith(_MIG_PREFIX)}
            held = gpus + sum(n * _mig_fraction(k) for k, n in migs.items())
            self._demand[info.key] = self._asked(shape, node)
            return gpus + sum(migs.values()), round(float(held), 6)
        results = self._claim_results(info)
        held = round(sum(self.devices.used(results).values()), 6)
        self._demand[info.key] = held  # DRA allocates what was asked for
        return len(results), held

    def _asked(self, shape: DeviceShape | None, node: str) -> float:
        """The GPU share ``shape`` stands for on ``node``, whatever the device plugin gave."""
        if shape is None:
            return 0.0
        if shape.first_available:
            return self._asked(shape.first_available[0], node)
        k, share, mib = shape_demand(shape, "dra")
        if mib:
            memory = self._node_memory.get(node, 0)
            return min(1.0, mib / memory) if memory else 1.0
        return k * share

    def pod_left(self, info: PodInfo) -> None:
        self._demand.pop(info.key, None)

    # --- samples ------------------------------------------------------------------------
    def _gpu_use(self) -> dict[str, list[float]]:
        """Per GPU node: the used share of each of its GPUs."""
        if self.devices is not None:
            used = self.devices.used(self._claim_results())
            return {node: [used.get(g, 0.0) for g in gpus]
                    for node, gpus in self.node_gpus.items()}
        out: dict[str, list[float]] = {}
        for node, gpus in self.node_gpus.items():
            info = self.cluster.nodes.get(node)
            requested = info.requested if info else {}
            busy = requested.get(self.gpu_resource, 0) // 1000
            whole = self._whole.get(node, len(gpus))
            shares = [1.0 if i < busy else 0.0 for i in range(whole)]
            mig = sum(v // 1000 * _mig_fraction(k) for k, v in requested.items()
                      if k.startswith(_MIG_PREFIX))
            for _ in range(len(gpus) - whole):
                take = min(1.0, mig)
                shares.append(take)
                mig = max(0.0, mig - take)
            out[node] = shares
        return out

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
            gpus = self.node_gpus[node]
            for p, cpu, (k, d, mib) in self.weights:
                if k == 0:
                    total += p * idle
                    continue
                if self.devices is not None and mib:
                    fits = [f * self.devices.gpu_memory.get(g, 0) >= mib - _EPS
                            for f, g in zip(free, gpus, strict=True)]
                else:
                    fits = [f >= d - _EPS for f in free]
                if free_cpu < cpu or sum(fits) < k:
                    total += p * idle
                else:
                    total += p * sum(f for f, ok in zip(free, fits, strict=True) if not ok)
        return total / self.gpus_total

    def sample(self, t: float, pending: int, running: int, completed: int) -> None:
        use = self._gpu_use()
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
            self._columns.append([sum(s) / len(s) for s in use.values()])

    def occupancy(self, duration: float) -> NodeOccupancy:
        """Per GPU node and sample bin, the share of its GPU capacity allocated."""
        times = [t for t in self._times if t < duration - _EPS] or [0.0]
        columns = self._columns[:len(times)] or [[0.0] * len(self.node_gpus)]
        nodes = tuple(self.node_gpus)
        matrix = tuple(tuple(col[i] for col in columns) for i in range(len(nodes)))
        return NodeOccupancy(nodes=nodes, times=tuple(times), matrix=matrix)
