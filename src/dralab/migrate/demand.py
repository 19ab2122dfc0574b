"""What a pod spec asks of GPUs through the device plugin, read from a plain document.

Resources: ``nvidia.com/gpu`` (whole GPUs), ``nvidia.com/gpu.shared`` (time-sliced
replicas when the device plugin renames them), ``nvidia.com/mig-<profile>``
(mixed MIG strategy; ``1g.10gb.me`` is profile ``1g.10gb+me``); other vendors'
GPUs (``amd.com/gpu``, ``gpu.intel.com/*``) are seen but not converted. A
container's count is its limit (the device plugin needs one), else its request.
GPU-label requirements come from ``nodeSelector`` and the required node affinity.

The class of a workload, most specific first: ``multi-node`` (its pods must run
together), ``mig``, ``shared``, ``multi-gpu-one-node`` (more than one GPU per pod),
``whole-gpu``, ``cpu-only``; ``unsupported`` when it asks for GPUs dralab cannot
convert (another vendor's, a fraction of a device, a kind whose pod templates it
does not know).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dralab.api.quantity import QuantityError, parse_quantity

from .gpulabels import SHARING_LABELS, LabelRequirement, is_gpu_label
from .podsets import ManifestWorkload, PathKey, PodSet, at_path

__all__ = [
    "CLASSES",
    "ContainerDemand",
    "PodGpuDemand",
    "gpu_requirements",
    "mig_profile",
    "pod_demand",
    "workload_class",
]

GPU = "nvidia.com/gpu"
SHARED = "nvidia.com/gpu.shared"
MIG_PREFIX = "nvidia.com/mig-"
OTHER_VENDORS = ("amd.com/gpu", "gpu.intel.com/")
CLASSES = ("multi-node", "mig", "shared", "multi-gpu-one-node", "whole-gpu", "cpu-only",
           "unsupported")
_NANO = 10**9
# A DeviceRequest's count is an int64 (resource.k8s.io/v1 ExactDeviceRequest.Count).
_MAX_DEVICE_COUNT = 2**63 - 1


def mig_profile(resource: str) -> str:
    """``nvidia.com/mig-1g.10gb.me`` -> ``1g.10gb+me`` (the device plugin writes + as .)."""
    name = resource.removeprefix(MIG_PREFIX)
    return name[:-3] + "+me" if name.endswith(".me") else name


@dataclass(frozen=True, slots=True)
class ContainerDemand:
    """One container's GPU resources. ``path``: the container's path inside the pod spec."""

    name: str
    path: tuple[PathKey, ...]
    init: bool
    gpus: int = 0
    shared: int = 0
    mig: tuple[tuple[str, int], ...] = ()
    resources: tuple[str, ...] = ()      # the resource names to remove when converted
    problems: tuple[str, ...] = ()       # why it cannot be converted


@dataclass(frozen=True, slots=True)
class PodGpuDemand:
    containers: tuple[ContainerDemand, ...]
    selector: tuple[LabelRequirement, ...]       # nodeSelector entries on GPU labels
    affinity: tuple[tuple[int, int, LabelRequirement], ...]  # (term, expression, req)
    affinity_terms: int                          # required nodeSelectorTerms in all
    preferred: tuple[LabelRequirement, ...] = field(default=())  # preferred, on GPU labels

    @property
    def gpu_containers(self) -> tuple[ContainerDemand, ...]:
        return tuple(c for c in self.containers if c.gpus or c.shared or c.mig)

    def per_pod(self, what: str) -> int:
        """GPUs (``gpus``, ``shared`` or MIG devices ``mig``) a pod holds: init containers
        run one after another, app containers together (as kube counts requests)."""
        def count(c: ContainerDemand) -> int:
            return c.gpus if what == "gpus" else c.shared if what == "shared" \
                else sum(n for _, n in c.mig)
        app = sum(count(c) for c in self.containers if not c.init)
        init = max((count(c) for c in self.containers if c.init), default=0)
        return max(app, init)

    @property
    def profiles(self) -> tuple[str, ...]:
        return tuple(sorted({p for c in self.containers for p, _ in c.mig}))

    @property
    def requirements(self) -> tuple[LabelRequirement, ...]:
        return self.selector + tuple(r for _, _, r in self.affinity)

    @property
    def uses_gpus(self) -> bool:
        return bool(self.gpu_containers) or any(c.problems for c in self.containers)


def _count(value: Any) -> tuple[int | None, str]:
    try:
        nano = parse_quantity(str(value)).nano
    except (QuantityError, ValueError) as exc:
        return None, f"not a quantity: {value!r} ({exc})"
    if nano % _NANO or nano < 0:
        return None, f"not a whole number of devices: {value!r}"
    if nano // _NANO > _MAX_DEVICE_COUNT:
        # The API server takes such a Pod (its integer check reads the amount's low 64
        # bits), but the claim it would become cannot be written: count is an int64.
        return None, (f"{value!r} devices: more than a DeviceRequest's count can hold "
                      f"({_MAX_DEVICE_COUNT}, int64)")
    return nano // _NANO, ""


def _container(data: Any, path: tuple[PathKey, ...], init: bool,
               resources_key: str = "resources") -> ContainerDemand:
    name = str(data.get("name", path[-1])) if isinstance(data, Mapping) else str(path[-1])
    resources = at_path(data, (resources_key,))
    found: dict[str, Any] = {}
    if isinstance(resources, Mapping):
        for section in ("requests", "limits"):  # limits win, as the device plugin reads them
            values = resources.get(section)
            if isinstance(values, Mapping):
                found.update({k: v for k, v in values.items() if isinstance(k, str)})
    gpus = shared = 0
    mig: list[tuple[str, int]] = []
    names: list[str] = []
    problems: list[str] = []
    for resource, value in found.items():
        if resource in (GPU, SHARED) or resource.startswith(MIG_PREFIX):
            n, why = _count(value)
            if n is None:
                problems.append(f"{resource}: {why}")
                continue
            names.append(resource)
            if resource == GPU:
                gpus = n
            elif resource == SHARED:
                shared = n
            elif n:
                mig.append((mig_profile(resource), n))
        elif resource.startswith(OTHER_VENDORS):
            problems.append(f"{resource}: not an NVIDIA GPU; dralab converts NVIDIA only")
    return ContainerDemand(name, path, init, gpus, shared, tuple(mig), tuple(names),
                           tuple(problems))


def _requirement(expr: Any) -> LabelRequirement | None:
    if not isinstance(expr, Mapping) or not isinstance(expr.get("key"), str):
        return None
    values = expr.get("values")
    return LabelRequirement(expr["key"], str(expr.get("operator", "")),
                            tuple(str(v) for v in values) if isinstance(values, list) else ())


def gpu_requirements(spec: Mapping[str, Any]
                     ) -> tuple[tuple[LabelRequirement, ...],
                                tuple[tuple[int, int, LabelRequirement], ...], int,
                                tuple[LabelRequirement, ...]]:
    """GPU-label requirements of a pod spec: nodeSelector entries, required affinity
    expressions (with their term and index), the number of required terms, and the
    preferred ones."""
    selector = spec.get("nodeSelector")
    from_selector = tuple(LabelRequirement(str(k), "In", (str(v),))
                          for k, v in (selector.items() if isinstance(selector, Mapping) else ())
                          if is_gpu_label(str(k)))
    node = at_path(spec, ("affinity", "nodeAffinity"))
    terms = at_path(node, ("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"))
    required: list[tuple[int, int, LabelRequirement]] = []
    for t, term in enumerate(terms if isinstance(terms, list) else []):
        exprs = at_path(term, ("matchExpressions",))
        for e, expr in enumerate(exprs if isinstance(exprs, list) else []):
            req = _requirement(expr)
            if req is not None and is_gpu_label(req.key):
                required.append((t, e, req))
    preferred: list[LabelRequirement] = []
    prefs = at_path(node, ("preferredDuringSchedulingIgnoredDuringExecution",))
    for pref in prefs if isinstance(prefs, list) else []:
        exprs = at_path(pref, ("preference", "matchExpressions"))
        for expr in exprs if isinstance(exprs, list) else []:
            req = _requirement(expr)
            if req is not None and is_gpu_label(req.key):
                preferred.append(req)
    return (from_selector, tuple(required), len(terms) if isinstance(terms, list) else 0,
            tuple(preferred))


def pod_demand(document: Any, pod_set: PodSet) -> PodGpuDemand:
    """The GPU demand of one pod set of a plain document."""
    spec = at_path(document, pod_set.spec_path)
    if not isinstance(spec, Mapping):
        return PodGpuDemand((), (), (), 0)
    containers: list[ContainerDemand] = []
    for key, init in (("initContainers", True), ("containers", False)):
        items = spec.get(key)
        for i, item in enumerate(items if isinstance(items, list) else []):
            containers.append(_container(item, (key, i), init))
    for path in pod_set.extra_containers:
        containers.append(_container(at_path(spec, path), path, False, pod_set.resources_key))
    selector, affinity, terms, preferred = gpu_requirements(spec)
    return PodGpuDemand(tuple(containers), selector, affinity, terms, preferred)


def is_shared(demand: PodGpuDemand) -> bool:
    if demand.per_pod("shared"):
        return True
    return any(r.key in SHARING_LABELS or any(v.endswith("-SHARED") for v in r.values)
               for r in demand.requirements)


def workload_class(workload: ManifestWorkload, demands: list[PodGpuDemand]) -> str:
    """The workload's class (see the module doc)."""
    if any(c.problems for d in demands for c in d.containers):
        return "unsupported"
    if (workload.not_convertible or workload.unknown_pods) and \
            any(d.gpu_containers for d in demands):
        return "unsupported"  # its GPUs are counted, but dralab cannot rewrite it
    if not any(d.gpu_containers for d in demands):
        return "cpu-only"
    gpu_pods = sum((p.pods or 1) for p, d in zip(workload.pod_sets, demands, strict=True)
                   if d.gpu_containers)
    if workload.gang and gpu_pods > 1:
        return "multi-node"
    if any(d.per_pod("mig") for d in demands):
        return "mig"
    if any(is_shared(d) for d in demands if d.gpu_containers):
        return "shared"
    if any(d.per_pod("gpus") > 1 for d in demands):
        return "multi-gpu-one-node"
    return "whole-gpu"
