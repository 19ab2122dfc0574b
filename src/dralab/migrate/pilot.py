"""The pilot's pieces: platform DeviceClasses named by use, the smoke test, the pool's Fleet.

DeviceClasses are named by what the platform offers, not by the driver:
``<model>-training`` or ``<model>-inference`` for whole GPUs of one model (training
when the pool's workloads are mostly batch kinds or ask for several GPUs per
pod), ``mig-small`` (1g profiles), ``mig-medium`` (2g, 3g), ``mig-large`` (4g and
up) for MIG devices. Their CEL is what ``dralab fleet`` writes for the same
platform class, so the simulation and the manifests agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from dralab.api.resource import DeviceClass
from dralab.fleet.catalog import CATALOG
from dralab.fleet.classes import platform_class
from dralab.fleet.spec import PlatformClass

from .demand import GPU
from .poolnames import MAX_LABEL
from .pools import GpuPool
from .shapes import DeviceNeed

__all__ = ["PilotClasses", "fleet_document", "pilot_classes", "smoke_test"]

_BATCH_KINDS = frozenset({"Job", "CronJob", "JobSet", "PyTorchJob", "TFJob", "MPIJob",
                          "XGBoostJob", "PaddleJob", "JAXJob"})
_SMOKE_IMAGE = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
_MIG_G = re.compile(r"^([0-9]+)g\.")
_SINGLE_MIG = re.compile(r"-MIG-[0-9]+g\.[0-9]+gb")   # NVIDIA-A100-SXM4-40GB-MIG-1g.5gb
# Labels the Fleet generator sets itself; the others of a node are the pool's own.
_GENERATED_LABELS = ("kubernetes.io/hostname", "kubernetes.io/arch", "kubernetes.io/os",
                     "dralab.dev/pool", "nvidia.com/gpu.count", "nvidia.com/gpu.memory",
                     "nvidia.com/gpu.present", "nvidia.com/gpu.product", "nvidia.com/mig.capable",
                     "topology.kubernetes.io/zone", "dralab.dev/topology-block",
                     "dralab.dev/topology-rack")


def _mig_size(profile: str) -> str:
    match = _MIG_G.match(profile)
    g = int(match.group(1)) if match else 7
    return "mig-small" if g <= 1 else "mig-medium" if g <= 3 else "mig-large"


@dataclass(frozen=True, slots=True)
class PilotClasses:
    """The platform classes of a pool: whole GPUs (``gpu``, may be None) and MIG by size."""

    gpu: DeviceClass | None
    mig: dict[str, DeviceClass]
    specs: list[dict[str, Any]]           # the Fleet ``deviceClasses`` entries

    def all(self) -> list[DeviceClass]:
        return [*([self.gpu] if self.gpu else []), *(self.mig[k] for k in sorted(self.mig))]

    def class_for(self, need: DeviceNeed) -> str | None:
        if need.type == "mig":
            cls = self.mig.get(_mig_size(need.profile))
            return cls.name if cls else None
        return self.gpu.name if self.gpu else None


def pilot_classes(pool: GpuPool) -> PilotClasses:
    model = pool.model
    specs: list[dict[str, Any]] = []
    gpu = None
    mig: dict[str, DeviceClass] = {}
    profiles = sorted(p.replace(".me", "+me") for p in pool.mig_profiles)
    if model is not None and not (profiles and not model.hot_mig_toggle):
        batch = [w for w in pool.workloads if w.workload.kind in _BATCH_KINDS
                 or any(d.per_pod("gpus") > 1 for d in w.demands)]
        use = "training" if 2 * len(batch) > len(pool.workloads) else "inference"
        name = f"{model.key.split('-')[0]}-{use}"
        spec = {"name": name, "type": "gpu", "models": [model.key]}
        specs.append(spec)
        gpu = platform_class(PlatformClass(name=name, type="gpu", models=[model.key]))
    by_size: dict[str, list[str]] = {}
    for profile in profiles:
        by_size.setdefault(_mig_size(profile), []).append(profile)
    for size, names in sorted(by_size.items()):
        spec = {"name": size, "type": "mig", "profiles": names}
        specs.append(spec)
        mig[size] = platform_class(PlatformClass(name=size, type="mig", profiles=names))
    return PilotClasses(gpu, mig, specs)


def smoke_test(pool: GpuPool, classes: PilotClasses, namespace: str) -> list[dict[str, Any]]:
    """A Job that asks for one device of the pilot's first class on the pool and lists it
    (``nvidia-smi -L``), and its ResourceClaimTemplate."""
    cls = classes.gpu or next(iter(classes.mig.values()), None)
    class_name = cls.name if cls else "gpu.nvidia.com"
    # The label the pool was read from selects its nodes (the GPU product label too:
    # GPU feature discovery keeps labelling nodes whose GPUs DRA hands out).
    pool_label = pool.label_key if pool.nodes and pool.label_key in pool.nodes[0].labels \
        else None
    tolerations = [{"key": t.get("key"), "operator": "Exists", "effect": t.get("effect")}
                   for t in (pool.nodes[0].taints if pool.nodes else [])
                   if t.get("effect") in ("NoSchedule", "NoExecute")]
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "nvidia-smi", "image": _SMOKE_IMAGE,
                        "command": ["nvidia-smi", "-L"],
                        "resources": {"claims": [{"name": "gpu"}]}}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "dra-smoke-test"}]}
    if pool_label:
        spec["nodeSelector"] = {pool_label: pool.nodes[0].labels[pool_label]}
    if tolerations:
        spec["tolerations"] = tolerations
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "dra-smoke-test", "namespace": namespace},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": class_name, "count": 1}}]}}}}
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "dra-smoke-test", "namespace": namespace},
           "spec": {"backoffLimit": 0, "ttlSecondsAfterFinished": 3600,
                    "template": {"metadata": {"labels": {"app": "dra-smoke-test"}},
                                 "spec": spec}}}
    return [template, job]


def _static_mig(profiles: dict[str, int], count: int, whole: int,
                nodes: int) -> dict[str, Any]:
    """The Fleet ``mig`` of a node of ``count`` GPUs whose device plugin advertises
    ``profiles`` (MIG devices by profile, over ``nodes`` nodes) and ``whole`` full GPUs.

    With the mixed MIG strategy the GPUs left whole stay ``nvidia.com/gpu`` while GPU
    feature discovery's count is every GPU: the MIG devices are on the other
    ``count - whole`` GPUs, spread evenly (``perGpu``, an empty list for a whole GPU);
    the same partitions on every GPU are ``profiles``.
    """
    split = count - whole if 0 < whole < count else count
    lists: list[list[str]] = [[] for _ in range(split)]
    for profile, total in sorted(profiles.items()):
        for i in range(total // nodes):
            lists[i % split].append(profile)
    if split == count and all(items == lists[0] for items in lists):
        return {"mode": "static", "profiles": lists[0]}
    return {"mode": "static", "perGpu": lists + [[] for _ in range(count - split)]}


def _node_prefix(pool_name: str, count: int) -> str:
    """``<pool>-node-``, the pool name cut so that the last node name (``...-node-NN``)
    is still a DNS label of at most 63 characters, as a Fleet requires."""
    room = MAX_LABEL - len("-node-") - max(2, len(str(count)))
    return f"{pool_name[:room].rstrip('-')}-node-"


def fleet_document(pool: GpuPool, classes: PilotClasses, shares: bool) -> dict[str, Any]:
    """A Fleet of the pool alone, read from its nodes (GPU model and count from the GPU
    feature discovery labels, CPU and memory from allocatable, static MIG from the device
    plugin's MIG resources, the pool's own labels and taints)."""
    model = pool.model
    node = pool.nodes[0]
    if model is None:
        if not pool.product_label:
            raise ValueError(f"pool {pool.name}: its nodes have no nvidia.com/gpu.product label "
                             "(GPU feature discovery), so their GPU model is unknown and the "
                             "pilot cannot be simulated")
        if _SINGLE_MIG.search(pool.product_label):
            # GPU feature discovery's product and count then describe MIG devices, and the
            # device plugin's nvidia.com/gpu are those devices, not whole GPUs.
            raise ValueError(f"pool {pool.name}: GPU product {pool.product_label!r} is the MIG "
                             "'single' strategy (its nvidia.com/gpu are MIG devices); dralab "
                             "migrate plans pools of whole GPUs and of the 'mixed' strategy")
        known = ", ".join(sorted(m.gpu_product_label for m in CATALOG.values()))
        raise ValueError(f"pool {pool.name}: GPU product {pool.product_label!r} is not one "
                         f"dralab models (known: {known}), so the pilot cannot be simulated")
    dump_alloc = node.allocatable
    count = node.gpus
    gpu: dict[str, Any] = {"model": model.key, "count": count}
    profiles = {k.replace(".me", "+me"): v for k, v in pool.mig_profiles.items()}
    if profiles and count:
        gpu["mig"] = _static_mig(profiles, count, node.device_plugin.get(GPU, 0), len(pool.nodes))
    elif shares:
        gpu["sharing"] = {"consumableShares": "memory"}
    labels = {k: v for k, v in node.labels.items() if k not in _GENERATED_LABELS}
    spec: dict[str, Any] = {
        "name": pool.name, "count": len(pool.nodes),
        "namePrefix": _node_prefix(pool.name, len(pool.nodes)),
        "cpu": str(dump_alloc.get("cpu", "16")), "memory": str(dump_alloc.get("memory", "64Gi")),
        "gpu": gpu, "labels": labels,
        "taints": [{"key": t.get("key"), "value": t.get("value", ""), "effect": t.get("effect")}
                   for t in node.taints]}
    return {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
            "metadata": {"name": f"pilot-{pool.name}"},
            "spec": {"seed": 1, "deviceClasses": classes.specs, "pools": [spec]}}
