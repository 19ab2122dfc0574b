"""Node pools of a cluster dump and the GPU workloads that can run on each.

A pool is the nodes sharing a pool label (``dralab.dev/pool``, GKE/EKS/AKS/Karpenter
node-pool labels, else instance type or GPU product), named by a DNS label derived
from its value (``poolnames``: ``NVIDIA-H100-80GB-HBM3`` is pool
``nvidia-h100-80gb-hbm3``), the value kept for display. A workload can land on a
pool when, for one of its GPU pod sets, some node of the pool passes its node
selector, required node affinity and taints and advertises (device plugin) the
GPUs one pod needs. The risk of a workload is that of its class: a single-GPU
inference service is cheap to move back, a multi-node training job is not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dralab.fleet.catalog import CATALOG, GpuModel

from .check import may_land, tolerated
from .clusterdump import ClusterDump, DumpNodeGpus
from .demand import GPU, PodGpuDemand
from .inventory import InventoryEntry, inventory
from .podsets import at_path
from .poolnames import pool_names

__all__ = ["CLASS_RISK", "GpuPool", "pools_of"]

# Lower is safer to migrate first.
CLASS_RISK: Mapping[str, int] = {"cpu-only": 0, "whole-gpu": 1, "shared": 1, "mig": 2,
                                 "multi-gpu-one-node": 3, "multi-node": 5, "unsupported": 9}


@dataclass(slots=True)
class GpuPool:
    """``name``: a DNS label (the pilot Fleet's pool name); ``label_key`` and
    ``label_value``: the node label the pool was read from, as the cluster writes it."""

    name: str
    nodes: list[DumpNodeGpus]
    workloads: list[InventoryEntry] = field(default_factory=list)
    label_key: str = ""
    label_value: str = ""

    @property
    def label(self) -> str:
        """``key=value`` of the pool's node label, or the value alone when no label names it."""
        return f"{self.label_key}={self.label_value}" if self.label_key else self.label_value

    @property
    def product_label(self) -> str:
        return self.nodes[0].labels.get("nvidia.com/gpu.product", "") if self.nodes else ""

    @property
    def model(self) -> GpuModel | None:
        label = self.product_label.removesuffix("-SHARED")
        return next((m for m in CATALOG.values() if m.gpu_product_label == label), None)

    @property
    def gpus(self) -> int:
        return sum(n.gpus for n in self.nodes)

    @property
    def mig_profiles(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for n in self.nodes:
            for r, count in n.device_plugin.items():
                if r.startswith("nvidia.com/mig-"):
                    out[r.removeprefix("nvidia.com/mig-")] = out.get(
                        r.removeprefix("nvidia.com/mig-"), 0) + count
        return out

    @property
    def dedicated(self) -> bool:
        """Every node carries a NoSchedule taint: only workloads that tolerate it come."""
        return bool(self.nodes) and all(any(t.get("effect") == "NoSchedule" for t in n.taints)
                                        for n in self.nodes)

    @property
    def double_advertised(self) -> bool:
        return any(n.double_advertised for n in self.nodes)

    @property
    def risk(self) -> int:
        return max((CLASS_RISK.get(w.cls, 9) for w in self.workloads), default=0)

    @property
    def pods(self) -> int:
        return sum(w.workload.total_pods or 0 for w in self.workloads)


def _fits(node: DumpNodeGpus, demand: PodGpuDemand) -> bool:
    gpus = demand.per_pod("gpus") + demand.per_pod("shared")
    if gpus and node.device_plugin.get(GPU, 0) + node.device_plugin.get(
            "nvidia.com/gpu.shared", 0) < gpus and node.physical_gpus < gpus:
        return False
    for container in demand.containers:
        for profile, n in container.mig:
            resource = f"nvidia.com/mig-{profile.replace('+', '.')}"
            if node.device_plugin.get(resource, 0) < n:
                return False
    return True


def _lands(entry: InventoryEntry, node: DumpNodeGpus) -> bool:
    for pod_set, demand in entry.pod_sets():
        spec = at_path(entry.document.data, pod_set.spec_path)
        if demand.gpu_containers and isinstance(spec, Mapping) and may_land(spec, node.labels) \
                and tolerated(spec, node.taints) and _fits(node, demand):
            return True
    return False


def pools_of(dump: ClusterDump) -> list[GpuPool]:
    """GPU pools (nodes with NVIDIA GPUs by either path), sorted by (DNS label) name, with
    their workloads."""
    pools: dict[str, GpuPool] = {}
    for node in sorted(dump.nodes.values(), key=lambda n: n.name):
        if node.device_plugin or node.dra:
            pools.setdefault(node.pool, GpuPool(node.pool, [], label_key=node.pool_key,
                                                label_value=node.pool)).nodes.append(node)
    names = pool_names(pools)
    pools = {names[value]: pool for value, pool in pools.items()}
    for name, pool in pools.items():
        pool.name = name
    for entry in inventory(dump.documents):
        if entry.workload.kind == "Pod" and at_path(entry.document.data, ("spec", "nodeName")):
            continue  # a running pod of some workload: the workload itself is counted
        if entry.workload.template_only:
            continue  # a TrainingRuntime: its pods are its TrainJobs', made elsewhere
        for pool in pools.values():
            if any(_lands(entry, n) for n in pool.nodes):
                pool.workloads.append(entry)
    return [pools[k] for k in sorted(pools)]
