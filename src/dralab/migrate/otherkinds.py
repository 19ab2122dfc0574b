"""Documents of kinds whose pods dralab does not read: GPU workloads it cannot convert,
and everything that is no workload at all.

A cluster dump holds far more than workloads: Nodes (whose labels and allocatable
name ``nvidia.com/gpu``), Namespaces, ResourceSlices, DeviceClasses, PriorityClasses,
ResourceQuotas (``requests.nvidia.com/gpu``), the GPU operator's ClusterPolicy, and
copies of pod templates that make no pods themselves (a ControllerRevision of a
DaemonSet, Kueue's Workload for each queued job, a PodTemplate). None is a workload.

A document of any other kind is a workload dralab cannot read (``unsupported``:
a RayCluster, an Argo Workflow) when one of its containers asks for NVIDIA
device-plugin resources: a ``resources`` mapping whose ``limits`` or ``requests``
name ``nvidia.com/gpu``, ``nvidia.com/gpu.shared`` or ``nvidia.com/mig-*``, the
shape of a container's resources wherever the kind keeps its containers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dralab.api.io import Document

from .demand import GPU, MIG_PREFIX, SHARED
from .podsets import ManifestWorkload, PathKey, PodSet, identity, workload_of

__all__ = ["TEMPLATE_COPIES", "is_unsupported_workload", "not_workload_kinds",
           "unknown_workload"]

# (API group, kind) of objects that carry pod templates but create no pods: the
# controllers and Kueue create the pods (or the jobs) from the workload itself.
TEMPLATE_COPIES = frozenset({("", "PodTemplate"), ("apps", "ControllerRevision"),
                             ("kueue.x-k8s.io", "Workload")})


def _group(data: Mapping[str, Any]) -> str:
    api_version = data.get("apiVersion")
    return api_version.rpartition("/")[0] if isinstance(api_version, str) else ""


def _is_nvidia_resource(name: Any) -> bool:
    return isinstance(name, str) and (name in (GPU, SHARED) or name.startswith(MIG_PREFIX))


def _container_asks_nvidia(data: Any) -> bool:
    """Whether some ``resources: {limits|requests: {nvidia...: n}}`` is found in ``data``."""
    if isinstance(data, list):
        return any(_container_asks_nvidia(v) for v in data)
    if not isinstance(data, Mapping):
        return False
    resources = data.get("resources")
    if isinstance(resources, Mapping) and any(
            isinstance(resources.get(k), Mapping) and any(map(_is_nvidia_resource, resources[k]))
            for k in ("limits", "requests")):
        return True
    return any(_container_asks_nvidia(v) for v in data.values())


def _nvidia_containers(data: Any, path: tuple[PathKey, ...] = ()
                       ) -> list[tuple[PathKey, ...]]:
    """Paths of the mappings in ``data`` whose ``resources`` ask for NVIDIA resources."""
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in _nvidia_containers(v, (*path, i))]
    if not isinstance(data, Mapping):
        return []
    if _container_asks_nvidia({"resources": data.get("resources")}):
        return [path]
    return [p for k, v in data.items() if isinstance(k, str)
            for p in _nvidia_containers(v, (*path, k))]


def unknown_workload(data: Any) -> ManifestWorkload:
    """An unsupported workload as one pod set of unknown size whose containers are the
    mappings found asking for NVIDIA resources: their GPUs are counted per pod, as if
    one pod held them all (what dralab can say without knowing the kind)."""
    kind, namespace, name = identity(data)
    pod_set = PodSet("", (), None, {}, tuple(_nvidia_containers(data)))
    return ManifestWorkload(kind, namespace, name, (pod_set,), False,
                            f"kind {kind} asks for NVIDIA resources but dralab does not know "
                            "where its pod templates are; convert by hand", unknown_pods=True)


def is_unsupported_workload(data: Any) -> bool:
    """A document of a kind dralab does not read the pod templates of, with a container
    asking for NVIDIA device-plugin resources (see the module doc)."""
    if not isinstance(data, Mapping) or workload_of(data) is not None:
        return False
    if (_group(data), data.get("kind")) in TEMPLATE_COPIES:
        return False
    return _container_asks_nvidia(data)


def not_workload_kinds(docs: Iterable[Document]) -> dict[str, int]:
    """How many documents of each kind are no workload (neither one dralab reads nor an
    unsupported one), by kind; documents without a kind are left out."""
    counts: dict[str, int] = {}
    for doc in docs:
        data = doc.data
        if not isinstance(data, Mapping) or not isinstance(data.get("kind"), str):
            continue
        if workload_of(data) is None and not is_unsupported_workload(data):
            counts[data["kind"]] = counts.get(data["kind"], 0) + 1
    return counts
