"""A cluster dump read as plain documents: nodes, their GPUs by both paths, pods and claims.

``kubectl get nodes,pods,resourceslices,resourceclaims,deviceclasses -A -o yaml`` (or
any mix of manifests) is read without decoding into typed objects, so a dump
with fields dralab does not model still reads. Per node: what the device
plugin advertises (allocatable ``nvidia.com/gpu``, ``nvidia.com/gpu.shared``,
``nvidia.com/mig-*``), what the NVIDIA DRA driver publishes (ResourceSlices of
driver ``gpu.nvidia.com`` whose pool is the node: devices by type), and what is
allocated through each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dralab.api.io import Document
from dralab.api.quantity import QuantityError, parse_quantity

from .demand import GPU, MIG_PREFIX, SHARED
from .podsets import at_path

__all__ = ["NO_POOL_LABEL", "POOL_LABELS", "ClusterDump", "DumpNodeGpus", "PodGpus",
           "device_plugin_resources", "read_dump"]

NVIDIA_DRIVER = "gpu.nvidia.com"
_NANO = 10**9


def _is_gpu_resource(name: str) -> bool:
    return name in (GPU, SHARED) or name.startswith(MIG_PREFIX)


def _whole(value: Any) -> int:
    try:
        return max(0, parse_quantity(str(value)).nano // _NANO)
    except (QuantityError, ValueError):
        return 0


def device_plugin_resources(resources: Any) -> dict[str, int]:
    """The NVIDIA extended resources in a resource list (allocatable, limits), counts > 0."""
    if not isinstance(resources, Mapping):
        return {}
    return {str(k): n for k, v in resources.items()
            if isinstance(k, str) and _is_gpu_resource(k) and (n := _whole(v)) > 0}


@dataclass(slots=True)
class PodGpus:
    """A pod bound to a node and the GPUs it holds through each path."""

    namespace: str
    name: str
    owner: str
    device_plugin: dict[str, int]
    dra_devices: list[str] = field(default_factory=list)

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True)
class DumpNodeGpus:
    name: str
    labels: dict[str, str]
    pool: str
    device_plugin: dict[str, int]            # allocatable NVIDIA extended resources
    taints: list[Mapping[str, Any]] = field(default_factory=list)
    allocatable: dict[str, str] = field(default_factory=dict)   # every resource, as written
    dra: dict[str, int] = field(default_factory=dict)   # published devices by type
    dra_types: dict[str, str] = field(default_factory=dict)  # device name -> type
    pods: list[PodGpus] = field(default_factory=list)
    pool_key: str = ""   # the label ``pool`` is the value of ("" when none)

    @property
    def double_advertised(self) -> bool:
        return bool(self.device_plugin) and bool(self.dra)

    @property
    def gpus(self) -> int:
        """Physical GPUs: the GPU feature discovery count, else ``physical_gpus`` (a node of
        the mixed MIG strategy advertises its whole GPUs only as nvidia.com/gpu)."""
        label = self.labels.get("nvidia.com/gpu.count", "")
        return int(label) if label.isascii() and label.isdigit() and len(label) <= 6 \
            else self.physical_gpus

    @property
    def physical_gpus(self) -> int:
        """Whole GPUs on the node as best known: DRA full-GPU devices, else the plugin's."""
        return self.dra.get("gpu", 0) or self.device_plugin.get(GPU, 0)

    def allocated(self) -> tuple[int, int]:
        """(GPUs held through the device plugin, GPU devices allocated through DRA)."""
        plugin = sum(n for p in self.pods for r, n in p.device_plugin.items())
        dra = sum(len(p.dra_devices) for p in self.pods)
        return plugin, dra


@dataclass(slots=True)
class ClusterDump:
    nodes: dict[str, DumpNodeGpus]
    documents: list[Document]
    extended_classes: dict[str, str]   # extendedResourceName -> DeviceClass


def _owner(meta: Mapping[str, Any]) -> str:
    owners = meta.get("ownerReferences")
    if isinstance(owners, list) and owners and isinstance(owners[0], Mapping):
        return f"{owners[0].get('kind')}/{owners[0].get('name')}"
    return ""


# The labels a node's pool is read from, first present wins.
POOL_LABELS = ("dralab.dev/pool", "cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup",
               "karpenter.sh/nodepool", "kubernetes.azure.com/agentpool",
               "node.kubernetes.io/instance-type", "nvidia.com/gpu.product")
NO_POOL_LABEL = "<no pool label>"


def _pool_label(labels: Mapping[str, str]) -> tuple[str, str]:
    """(label key, value) naming the node's pool; ("", NO_POOL_LABEL) when none does."""
    for key in POOL_LABELS:
        if labels.get(key):
            return key, str(labels[key])
    return "", NO_POOL_LABEL


def read_dump(docs: Iterable[Document]) -> ClusterDump:
    """The GPU view of a cluster dump (see the module doc)."""
    docs = list(docs)
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for doc in docs:
        if isinstance(doc.data, Mapping) and isinstance(doc.data.get("kind"), str):
            by_kind.setdefault(doc.data["kind"], []).append(doc.data)
    nodes: dict[str, DumpNodeGpus] = {}
    for obj in by_kind.get("Node", []):
        name = str(at_path(obj, ("metadata", "name")))
        raw = at_path(obj, ("metadata", "labels"))
        labels = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}
        taints = at_path(obj, ("spec", "taints"))
        allocatable = at_path(obj, ("status", "allocatable"))
        pool_key, pool = _pool_label(labels)
        nodes[name] = DumpNodeGpus(name, labels, pool,
                                   device_plugin_resources(allocatable),
                                   [t for t in taints or [] if isinstance(t, Mapping)],
                                   {str(k): str(v) for k, v in allocatable.items()}
                                   if isinstance(allocatable, Mapping) else {},
                                   pool_key=pool_key)
    for rs in by_kind.get("ResourceSlice", []):
        spec = rs.get("spec")
        if not isinstance(spec, Mapping) or spec.get("driver") != NVIDIA_DRIVER:
            continue
        node_name = spec.get("nodeName") or at_path(spec, ("pool", "name"))
        node = nodes.get(str(node_name))
        if node is None:
            continue
        for device in spec.get("devices") or []:
            if not isinstance(device, Mapping):
                continue
            kind = at_path(device, ("attributes", "type", "string")) or "gpu"
            node.dra[str(kind)] = node.dra.get(str(kind), 0) + 1
            node.dra_types[str(device.get("name"))] = str(kind)
    claims: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for claim in by_kind.get("ResourceClaim", []):
        ns = str(at_path(claim, ("metadata", "namespace")) or "default")
        results = at_path(claim, ("status", "allocation", "devices", "results"))
        claims[(ns, str(at_path(claim, ("metadata", "name"))))] = [
            (str(r.get("pool")), str(r.get("device"))) for r in results or []
            if isinstance(r, Mapping) and r.get("driver") == NVIDIA_DRIVER]
    for pod in by_kind.get("Pod", []):
        node = nodes.get(str(at_path(pod, ("spec", "nodeName"))))
        if node is None or at_path(pod, ("status", "phase")) in ("Succeeded", "Failed"):
            continue
        meta = pod.get("metadata") if isinstance(pod.get("metadata"), Mapping) else {}
        assert isinstance(meta, Mapping)
        ns = str(meta.get("namespace") or "default")
        held: dict[str, int] = {}
        for c in at_path(pod, ("spec", "containers")) or []:
            for r, n in device_plugin_resources(at_path(c, ("resources", "limits"))).items():
                held[r] = held.get(r, 0) + n
        devices = []
        for status in at_path(pod, ("status", "resourceClaimStatuses")) or []:
            claim_name = status.get("resourceClaimName") if isinstance(status, Mapping) else None
            devices += [d for pool, d in claims.get((ns, str(claim_name)), [])
                        if pool == node.name]
        for ref in at_path(pod, ("spec", "resourceClaims")) or []:
            claim_name = ref.get("resourceClaimName") if isinstance(ref, Mapping) else None
            if claim_name:
                devices += [d for pool, d in claims.get((ns, str(claim_name)), [])
                            if pool == node.name]
        if held or devices:
            node.pods.append(PodGpus(ns, str(meta.get("name")), _owner(meta), held,
                                     sorted(set(devices))))
    extended = {}
    for cls in by_kind.get("DeviceClass", []):
        resource = at_path(cls, ("spec", "extendedResourceName"))
        if isinstance(resource, str):
            extended[resource] = str(at_path(cls, ("metadata", "name")))
    return ClusterDump(nodes, docs, extended)
