"""KAI Scheduler in a scenario (``spec.queueing.kai``): its objects, read when the scenario
loads, and how the ``kai`` mode's pods and nodes become KAI's session values.

``spec.queueing.kai`` names a file (or directory) of KAI objects: Queues
(``scheduling.run.ai/v2``, parents and leaves), and optionally a SchedulingShard and a
Config (``kai.scheduler/v1``: actions, placement, kValue, GPU sharing). A job kind names
its leaf queue with ``kaiQueue``; each job is one PodGroup of ``podsPerJob`` pods whose
gang is ``minMember`` (default: every pod). A kind's ``priority`` is the PodGroup's
priority (KAI's chart classes: train 50, build 100, inference 125; below 100 a job is
preemptible, KAI's default).

In the ``kai`` mode the nodes are the device plugin's (whole ``nvidia.com/gpu``, static
MIG ``nvidia.com/mig-<profile>``) and a pod asks KAI for whole GPUs, one MIG device of
its profile, or (``share``) GPU memory through KAI's ``gpu-memory`` annotation, which
KAI admits only when its Config turns GPU sharing on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from dralab.api.base import KubeObject
from dralab.api.core import Node
from dralab.api.errors import LoadError
from dralab.api.io import read_documents
from dralab.api.kindcount import api_group, warn_unused_kinds
from dralab.api.resource import ResourceSlice
from dralab.cluster import ClusterState, PodInfo
from dralab.queueing.kai.model import KaiNode, KaiState, KaiTask
from dralab.queueing.kai.objects import KAI_GROUP, RUNAI_GROUP
from dralab.queueing.kai.reader import KaiSnapshot, load_kai_snapshot, read_kai_snapshot

from .devplugin import GPU_RESOURCE
from .observe import ExtendedResourceAccounting
from .spec import JobKind, QueueingRef, ScenarioError
from .templates import TemplateError, resolve_path

if TYPE_CHECKING:
    from .parsedscenario import ParsedScenario

__all__ = ["GPU_FRACTION_ANNOTATION", "GPU_MEMORY_ANNOTATION", "KaiAccounting",
           "check_min_member", "gpu_fraction", "kai_node", "kai_snapshot", "kai_state",
           "kai_task", "read_kai"]

GPU_MEMORY_ANNOTATION = "gpu-memory"   # KAI's pod annotation: MiB of one shared GPU
GPU_FRACTION_ANNOTATION = "gpu-fraction"   # KAI's pod annotation: a share of one GPU
_FRACTION_DEVICES = "gpu-fraction-num-devices"
_MIG_PREFIX = "nvidia.com/mig-"
_GPU_MEMORY_LABEL = "nvidia.com/gpu.memory"
_DEFAULT_GPU_MEMORY_MIB = 100   # node_info.DefaultGpuMemory


def _snapshot(objects: Sequence[KubeObject]) -> KaiSnapshot:
    return read_kai_snapshot(list(objects), now=0.0)


def read_kai(ref: QueueingRef, workload: Sequence[JobKind], base_dir: str, source: str,
             allow_outside: bool) -> tuple[KubeObject, ...]:
    """The KAI objects of ``spec.queueing.kai``; ScenarioError naming the field for a file
    that cannot be read, an invalid object, or a kind's unknown or non-leaf queue."""
    field = "spec.queueing.kai"
    try:
        path = resolve_path(ref.kai, base_dir, allow_outside)
        docs = read_documents([path])
        objects, problems = load_kai_snapshot(docs)
    except (TemplateError, LoadError) as exc:
        raise ScenarioError(source, field, str(exc)) from None
    if problems:
        raise ScenarioError(source, field, problems[0])
    snapshot = _snapshot(objects)
    queues = snapshot.state.queues
    if not queues:
        raise ScenarioError(source, field, f"no KAI Queue (scheduling.run.ai/v2) in {ref.kai}")
    parents = {q.parent for q in queues.values() if q.parent}
    for i, job in enumerate(workload):
        path = f"spec.workload[{i}]"
        if job.kai_queue is None:
            continue
        if job.kai_queue not in queues:
            known = ", ".join(sorted(queues))
            raise ScenarioError(source, f"{path}.kaiQueue",
                                f"no KAI Queue {job.kai_queue!r} in {ref.kai} (Queues: {known})")
        if job.kai_queue in parents:
            # actions/utils/input_jobs.go skips jobs whose queue is not a leaf queue
            raise ScenarioError(source, f"{path}.kaiQueue", (
                f"{job.kai_queue!r} is a parent queue: KAI skips jobs of a queue that is "
                "not a leaf, so none of its jobs would ever run"))
        if job.devices is not None and _shares(job) and not snapshot.gpu_sharing:
            raise ScenarioError(source, f"{path}.devices", (
                "KAI admits GPU-sharing pods (gpu-memory) only when its Config says "
                "spec.admission.gpuSharing: true (the operator's default is false)"))
    # Pods, PodGroups and nodes in the file would be a second workload: only the
    # scheduler's own objects are read.
    used = {(RUNAI_GROUP, "Queue"), (KAI_GROUP, "SchedulingShard"), (KAI_GROUP, "Config"),
            (KAI_GROUP, "Topology")}
    warn_unused_kinds(docs, f"dralab simulate ({field})", lambda key: key in used)
    return tuple(o for o in objects if (api_group(o.api_version), o.kind) in used)


def check_min_member(workload: Sequence[JobKind], source: str) -> None:
    """ScenarioError for a ``minMember`` outside 1..podsPerJob (KAI's webhook refuses 0;
    more pods than the job has would never start)."""
    for i, job in enumerate(workload):
        if job.min_member is None:
            continue
        if job.min_member < 1:
            raise ScenarioError(source, f"spec.workload[{i}].minMember",
                                f"must be at least 1 (KAI's PodGroup webhook): {job.min_member}")
        if job.min_member > job.pods_per_job:
            raise ScenarioError(source, f"spec.workload[{i}].minMember", (
                f"{job.min_member} is more than podsPerJob ({job.pods_per_job}): the gang "
                "could never start"))


def _shares(job: JobKind) -> bool:
    shape = job.devices
    if shape is None:
        return False
    first = shape.first_available[0] if shape.first_available else shape
    return first.type == "share"


def kai_snapshot(scenario: ParsedScenario) -> KaiSnapshot:
    """The scenario's KAI objects as a session's queues and configuration (no jobs)."""
    return _snapshot(scenario.kai_objects or ())


# --- the session's values --------------------------------------------------------------

def _gpu_memory_mib(node: Node) -> int:
    # node_info.getNodeGpuMemory: the label's MiB, floored to 100s
    text = node.metadata.labels.get(_GPU_MEMORY_LABEL, "")
    if not text.isdigit():
        return _DEFAULT_GPU_MEMORY_MIB
    value = int(text)
    return value - value % 100


def kai_node(node: Node) -> KaiNode:
    """A node's allocatable as KAI's NodeInfo sees it (every pod on it is KAI's)."""
    alloc = node.status.allocatable
    gpus = alloc.get(GPU_RESOURCE)
    pods = alloc.get("pods")
    cpu = alloc.get("cpu")
    memory = alloc.get("memory")
    labels = node.metadata.labels
    return KaiNode(
        name=node.name, gpus=gpus.value() if gpus is not None else 0,
        gpu_memory_mib=_gpu_memory_mib(node),
        cpu_milli=float(cpu.milli_value()) if cpu is not None else 0.0,
        memory_bytes=float(memory.value()) if memory is not None else 0.0,
        labels=dict(labels),
        mig_instances={k: q.value() for k, q in sorted(alloc.items())
                       if k.startswith(_MIG_PREFIX)},
        max_pods=pods.value() if pods is not None else None,
        gpu_name=labels.get("nvidia.com/gpu.product", ""))


def gpu_fraction(annotations: Mapping[str, str]) -> float:
    """The ``gpu-fraction`` annotation when it is a share of one GPU (0 < f <= 1), else 0
    (KAI's admission refuses other values before a pod reaches the scheduler)."""
    try:
        fraction = float(annotations.get(GPU_FRACTION_ANNOTATION, "0"))
    except ValueError:
        return 0.0
    return fraction if 0 < fraction <= 1 else 0.0


def kai_task(info: PodInfo, job: str) -> KaiTask:
    """A pending pod as a KAI task: its requests, and a shared GPU when it carries KAI's
    ``gpu-memory`` (MiB) or ``gpu-fraction`` annotation (on as many devices as
    ``gpu-fraction-num-devices`` says), as pod_info reads them."""
    requests = info.requests   # resource -> milli-units
    annotations = info.pod.metadata.annotations
    memory_text = annotations.get(GPU_MEMORY_ANNOTATION, "")
    gpu_memory = int(memory_text) if memory_text.isdigit() else 0
    gpus = 0.0 if gpu_memory else requests.get(GPU_RESOURCE, 0) / 1000
    fraction = gpu_fraction(annotations)
    if fraction:
        gpus, gpu_memory = fraction, 0
    devices_text = annotations.get(_FRACTION_DEVICES, "")
    devices = int(devices_text) if (fraction or gpu_memory) and devices_text.isdigit() \
        else None
    return KaiTask(
        name=info.key, job=job, gpus=gpus, fraction_devices=devices,
        gpu_memory_mib=gpu_memory, cpu_milli=float(requests.get("cpu", 0)),
        memory_bytes=requests.get("memory", 0) / 1000,
        mig={k: v // 1000 for k, v in sorted(requests.items())
             if k.startswith(_MIG_PREFIX) and v > 0},
        node_selector=dict(info.pod.spec.node_selector), priority=info.priority)


class KaiAccounting(ExtendedResourceAccounting):
    """The device plugin's accounting plus KAI's shared GPUs: a shared GPU group on a
    node takes one of the GPUs its whole-GPU pods leave, used by the memory its pods
    hold over the GPU's memory (the stage keeps ``groups`` current)."""

    def __init__(self, cluster: ClusterState, gpu_resource: str) -> None:
        super().__init__(cluster, gpu_resource)
        # node -> shared GPU group -> the fraction of a GPU its pods use
        self.groups: dict[str, dict[str, float]] = {}
        self.memory: dict[str, int] = {}

    def node_gpus(self, node: Node) -> list[str]:
        self.memory[node.name] = _gpu_memory_mib(node)
        return super().node_gpus(node)

    def joined(self, node: Node, slices: Sequence[ResourceSlice]) -> None:
        self.memory[node.name] = _gpu_memory_mib(node)

    def pod_held(self, info: PodInfo) -> tuple[int, float, bool]:
        share = self.share_of(info)
        if share:
            return 1, round(share, 6), True
        # KAI places what a pod asks for (a whole GPU, a MIG instance): held as asked
        devices, held, _ = super().pod_held(info)
        return devices, held, True

    def share_of(self, info: PodInfo) -> float:
        """The share of one GPU a pod with KAI's sharing annotations holds on its node (0
        for other pods)."""
        annotations = info.pod.metadata.annotations
        fraction = gpu_fraction(annotations)
        if fraction:
            return fraction
        text = annotations.get(GPU_MEMORY_ANNOTATION, "")
        memory = self.memory.get(info.assumed_node or info.pod.spec.node_name or "", 0)
        return min(1.0, int(text) / memory) if text.isdigit() and memory else 0.0

    def use(self, node_gpus: Mapping[str, list[str]]) -> dict[str, list[float]]:
        out = super().use(node_gpus)
        for node, shares in out.items():
            groups = self.groups.get(node, {})
            free = [i for i, used in enumerate(shares) if used == 0.0]
            for (_, used), i in zip(sorted(groups.items()), free, strict=False):
                shares[i] = round(min(1.0, used), 6)
        return out


def kai_state(snapshot: KaiSnapshot) -> KaiState:
    """A fresh session state holding the snapshot's queues and configuration."""
    base = snapshot.state
    return KaiState(queues=dict(base.queues), config=base.config,
                    topologies=dict(base.topologies))
