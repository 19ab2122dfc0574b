"""The migration assistant: from device-plugin GPUs (``nvidia.com/gpu: 1``) to DRA claims.

* ``inventory``: every workload of some manifests, its GPU demand and class;
* ``convert``: rewrite workloads to ResourceClaimTemplates and claims, keeping
  everything else (comments and key order too: ``roundtrip``);
* ``check``: nodes advertising the same GPUs through the device plugin and DRA;
* ``verify``: schedule before and after conversion on a fleet, report changes;
* ``plan``: the pilot: which pool first, platform DeviceClasses, order, effect.
"""

from __future__ import annotations

from .demand import CLASSES, PodGpuDemand, pod_demand, workload_class
from .inventory import InventoryEntry, inventory, not_workloads, render
from .podsets import ManifestWorkload, PodSet, workload_of

__all__ = [
    "CLASSES",
    "InventoryEntry",
    "ManifestWorkload",
    "PodGpuDemand",
    "PodSet",
    "inventory",
    "not_workloads",
    "pod_demand",
    "render",
    "workload_class",
    "workload_of",
]
