"""Compact per-node GPU views for the paper-policy Score plugins (``fgdscore``).

The policy kernels (``dralab.policies``) score a pod against a
``PolicyNode``: free CPU, and the free share (0..1000 milli) of each GPU. This
module reads those off the scheduler's cluster state:

* **DRA nodes**: every device of the ResourceSlices bound to the node (by
  ``nodeName``; restricted to ``drivers`` if given) is one GPU. Its free share is
  1000 x (capacity - consumed) / capacity over the claims' allocation results,
  using the device's first capacity (``gpuMilli`` in the trace mapping, memory
  for memory-shared GPUs). An allocation without ``consumedCapacity`` takes the
  whole device. MIG partitions are not modelled: each partition counts as a GPU.
* **Device-plugin nodes** (no slice): ``gpuResource`` (``nvidia.com/gpu``) in the
  node's allocatable; the first ``requested`` GPUs count as taken.

A pod's demand comes the same way: the ``exactly`` requests of its claims
(count, and the share as the first capacity request over the matching device
capacity), or its ``gpuResource`` request. Model constraints are left to the
Filter plugins: Score only sees nodes where the pod fits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dralab.api.resource import ResourceClaim
from dralab.cluster import CPU, ClusterState, NodeInfo, PodInfo
from dralab.controllers.resourceclaims import resolve_pod_claims
from dralab.policies import GPU_MILLI, MAX_GPUS, PodDemand, PolicyNode

__all__ = ["DEFAULT_GPU_RESOURCE", "GpuIndex", "pod_demand"]

DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
DeviceKey = tuple[str, str, str]  # (driver, pool, device)


@dataclass(frozen=True, slots=True)
class _Device:
    key: DeviceKey
    capacity_name: str | None
    capacity: int  # in the quantity's milli units; 0 when the device has none


class GpuIndex:
    """GPU devices per node and their use, rebuilt when the cluster's version changes."""

    def __init__(self, drivers: frozenset[str], gpu_resource: str) -> None:
        self.drivers = drivers
        self.gpu_resource = gpu_resource
        self._slices_seen: tuple[ClusterState | None, int] = (None, -1)
        self._devices: dict[str, list[_Device]] = {}
        self._capacity_by_name: dict[str, int] = {}
        self._version = -1
        self._used: dict[DeviceKey, int] = {}  # consumed milli-units; -1 = whole device

    def _index_slices(self, cluster: ClusterState) -> None:
        # Slices rarely change during a run: re-read them when the store says so.
        seen = (cluster, cluster.slice_version)
        if seen[0] is self._slices_seen[0] and seen[1] == self._slices_seen[1]:
            return
        self._slices_seen = seen
        slices = cluster.slices
        self._devices = {}
        self._capacity_by_name = {}
        for s in slices:
            spec = s.spec
            if not spec.node_name or (self.drivers and spec.driver not in self.drivers):
                continue
            out = self._devices.setdefault(spec.node_name, [])
            for d in spec.devices:
                name, cap = next(((k, c.value.milli_value()) for k, c in d.capacity.items()),
                                 (None, 0))
                out.append(_Device((spec.driver, spec.pool.name, d.name), name, cap))
                if name is not None:
                    self._capacity_by_name.setdefault(name, cap)

    def refresh(self, cluster: ClusterState) -> None:
        """Re-read slices and allocations if anything changed since the last call."""
        self._index_slices(cluster)
        if cluster.version == self._version:
            return
        self._version = cluster.version
        used: dict[DeviceKey, int] = {}
        for claim in cluster.claims.values():
            allocation = claim.status.allocation
            if allocation is None:
                continue
            for r in allocation.devices.results:
                key = (r.driver, r.pool, r.device)
                if not r.consumed_capacity:
                    used[key] = -1
                elif used.get(key, 0) >= 0:
                    used[key] = used.get(key, 0) + sum(
                        q.milli_value() for q in r.consumed_capacity.values())
        self._used = used

    def free_shares(self, node: NodeInfo) -> tuple[int, ...]:
        """Free milli-GPU of each GPU of ``node`` (at most ``MAX_GPUS``)."""
        devices = self._devices.get(node.name)
        if devices is None:
            count = node.allocatable.get(self.gpu_resource, 0) // 1000
            busy = node.requested.get(self.gpu_resource, 0) // 1000
            return tuple(0 if i < busy else GPU_MILLI for i in range(min(count, MAX_GPUS)))
        out: list[int] = []
        for d in devices[:MAX_GPUS]:
            used = self._used.get(d.key, 0)
            if used < 0:
                out.append(0)
            elif d.capacity > 0:
                out.append(max(0, GPU_MILLI * (d.capacity - used) // d.capacity))
            else:
                out.append(0 if used else GPU_MILLI)
        return tuple(out)

    def view(self, node: NodeInfo, classes: int = 0) -> PolicyNode:
        free_cpu = node.alloc_cpu - node.requested.get(CPU, 0)
        # Memory is not scored by any policy and Filter already checked it.
        return PolicyNode(cpu=free_cpu, memory=1 << 62, gpus=self.free_shares(node),
                        classes=classes, cpu_cap=node.alloc_cpu)

    def claim_demand(self, claims: Iterable[ResourceClaim]) -> tuple[int, int]:
        """(num_gpu, per-GPU milli) asked for by ``claims``' exact requests."""
        num, share = 0, GPU_MILLI
        for claim in claims:
            for req in claim.spec.devices.requests:
                exact = req.exactly
                if exact is None:
                    continue
                count = exact.count if exact.count is not None else 1
                num += count
                caps = exact.capacity.requests if exact.capacity is not None else {}
                for name, q in caps.items():
                    total = self._capacity_by_name.get(name, 0)
                    if total > 0:
                        share = min(share, max(1, GPU_MILLI * q.milli_value() // total))
                    break
        # Several GPUs each shared below 1000 is not a shape the kernels know: whole GPUs.
        return num, (share if num == 1 else GPU_MILLI) if num else 0


def pod_demand(index: GpuIndex, cluster: ClusterState, info: PodInfo) -> PodDemand:
    """What ``info`` asks for, in the kernels' units (see the module docstring)."""
    num, share = 0, 0
    if info.pod.spec.resource_claims:
        resolved = resolve_pod_claims(cluster, info.pod)
        if not isinstance(resolved, str):
            num, share = index.claim_demand(resolved.claims)
    if num == 0:
        whole = info.requests.get(index.gpu_resource, 0) // 1000
        num, share = (whole, GPU_MILLI) if whole else (0, 0)
    return PodDemand(cpu=info.requests.get(CPU, 0), memory=0,
                     num_gpu=min(num, MAX_GPUS), gpu_milli=share)
