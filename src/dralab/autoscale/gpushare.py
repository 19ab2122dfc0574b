"""GPUs as the FGD fragmentation measure sees them: free share per GPU of a node, and
the GPU shape of a placed pod, read from ResourceSlices and claim allocations.

GPU devices are those of the GPU drivers (``gpu.nvidia.com``, ``gpu.example.com``:
drivers named ``gpu.*``). A device that consumes no counters is one GPU (share
1000 milli-GPU, free or not); a counter set (DynamicMIG: one physical GPU) is one
GPU whose free share is 1000 x (1 - its highest consumed counter ratio). A pod's
shape: its CPU request, the number of GPU devices it holds and the largest share
one of them takes (1000 for a whole device or more than one device).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from dralab.cluster import ClusterState, PodInfo
from dralab.controllers.resourceclaims import resolve_pod_claims
from dralab.policies.frag import Shape

from .utilization import Allocated

__all__ = ["NodeGpus", "node_gpus", "pod_shape"]

WHOLE = 1000


def _is_gpu_driver(driver: str) -> bool:
    return driver.startswith("gpu.")


@dataclass(slots=True)
class NodeGpus:
    """The GPU view of one node: per device its counter set (None: atomic) and per
    counter set its counters' totals and consumption."""

    atomic: dict[tuple[str, str, str], bool] = field(default_factory=dict)  # -> allocated
    device_sets: dict[tuple[str, str, str], tuple[tuple[str, str, str], dict[str, int]]] = \
        field(default_factory=dict)
    totals: dict[tuple[str, str, str], dict[str, int]] = field(default_factory=dict)
    used: dict[tuple[str, str, str], dict[str, int]] = field(default_factory=dict)

    def free_shares(self) -> list[int]:
        """Free milli-GPU per GPU, sorted descending (order does not change F)."""
        shares = [0 if used else WHOLE for used in self.atomic.values()]
        for key, totals in self.totals.items():
            consumed = self.used.get(key, {})
            highest = max((consumed.get(n, 0) / t for n, t in totals.items() if t), default=0.0)
            shares.append(round(WHOLE * (1.0 - min(1.0, highest))))
        return sorted(shares, reverse=True)

    def share_of(self, device: tuple[str, str, str]) -> int:
        if device in self.atomic:
            return WHOLE
        entry = self.device_sets.get(device)
        if entry is None:
            return 0
        set_key, counters = entry
        totals = self.totals.get(set_key, {})
        ratio = max((v / totals[n] for n, v in counters.items() if totals.get(n)), default=0.0)
        return round(WHOLE * min(1.0, ratio))


def node_gpus(cluster: ClusterState, node: str, allocated: Allocated) -> NodeGpus:
    view = NodeGpus()
    for s in cluster.slices_of(node):
        driver, pool = s.spec.driver, s.spec.pool.name
        if not _is_gpu_driver(driver):
            continue
        taken = allocated.get((driver, pool), frozenset())
        for counter_set in s.spec.shared_counters:
            totals = view.totals.setdefault((driver, pool, counter_set.name), defaultdict(int))
            for name, counter in counter_set.counters.items():
                totals[name] += counter.value.milli_value()
        for device in s.spec.devices:
            key = (driver, pool, device.name)
            if not device.consumes_counters:
                view.atomic[key] = device.name in taken
                continue
            for consumption in device.consumes_counters:
                set_key = (driver, pool, consumption.counter_set)
                counters = {n: c.value.milli_value() for n, c in consumption.counters.items()}
                view.device_sets[key] = (set_key, counters)
                if device.name in taken:
                    used = view.used.setdefault(set_key, defaultdict(int))
                    for n, v in counters.items():
                        used[n] += v
    return view


def pod_shape(cluster: ClusterState, info: PodInfo, gpus: Mapping[str, NodeGpus]) -> Shape:
    """The pod's shape on its node (``gpus``: the node views by node name)."""
    cpu = info.requests.get("cpu", 0)
    view = gpus.get(info.assumed_node or "")
    claims = resolve_pod_claims(cluster, info.pod)
    if view is None or isinstance(claims, str):
        return Shape(cpu, 0, 0)
    shares: list[int] = []
    for claim in claims.claims:
        allocation = claim.status.allocation
        if allocation is None:
            continue
        for result in allocation.devices.results:
            if _is_gpu_driver(result.driver):
                shares.append(view.share_of((result.driver, result.pool, result.device)))
    if not shares:
        return Shape(cpu, 0, 0)
    share = WHOLE if len(shares) > 1 else max(1, shares[0])
    return Shape(cpu, len(shares), share)
