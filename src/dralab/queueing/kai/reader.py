"""A snapshot of objects -> the ``KaiState`` one KAI scheduling session works on.

``load_kai_snapshot`` decodes and validates documents (KAI's kinds here, the rest as
every verb does; one line per problem naming file, document, object and field path);
``read_kai_snapshot`` builds the state:

* the scheduler's configuration from the SchedulingShard (at most one: dralab runs one
  shard's scheduler; none: the chart's ``default`` shard) and KAI's operator Config
  (``spec.admission.gpuSharing``, ``spec.global`` label keys); the shard's partition
  (``partitionLabelValue`` on the node-pool label, none: nodes, queues and pod groups
  without that label) picks the nodes, queues and pod groups it schedules;
* queues as KAI's cache snapshots them (full-hierarchy fairness, KAI's default): a
  queue whose parent is missing is dropped with its children (``cleanQueueOrphans``);
* pods are those of the input and those dralab's workload controllers make for Jobs,
  Deployments... (``controllers.build_cluster``); pods of ``kai-scheduler`` belong to
  the PodGroup their ``pod-group-name`` annotation names, or to the one KAI's
  podgrouper would make (``podgrouper``). Pods of other schedulers are not KAI's: those
  on a node take their requests off the node, the pending ones are listed;
* a pod group's priority is its PriorityClass's value (KAI's chart installs train 50,
  build-preemptible 75, build 100, inference 125: assumed present unless the input has
  its own), else the globalDefault class's, else 50; a pod group whose queue does not
  exist waits with KAI's QueueDoesNotExist message and is left out of the state.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dralab.allocator.nodes import NodeView, compile_node_selector
from dralab.api.base import KubeObject
from dralab.api.codec import DecodeError, decode
from dralab.api.core import Node, Pod, PriorityClass, Taint
from dralab.api.durations import parse_go_duration
from dralab.api.errors import InputError, LoadError
from dralab.api.io import Document, decode_document
from dralab.api.quantity import Quantity
from dralab.api.taints import tolerates
from dralab.cluster import snapshot_moment
from dralab.controllers.resourceclaims import ensure_pod_claims, pod_claim_keys
from dralab.controllers.snapshotbuild import build_cluster
from dralab.scheduler.plugins.helpers import find_untolerated_taint
from dralab.scheduler.plugins.nodeunschedulable import UNSCHEDULABLE_TAINT
from dralab.validation.check import validate_documents

from .model import (
    DEFAULT_ACTIONS,
    KaiConfig,
    KaiJob,
    KaiNode,
    KaiPlugin,
    KaiPodAffinity,
    KaiQueue,
    KaiState,
    KaiSubGroup,
    KaiTask,
    PodStatus,
    QueueResource,
    TopologyConstraint,
)
from .objects import (
    KaiOperatorConfig,
    KaiPodGroup,
    KaiQueueObject,
    KaiQueueResourceSpec,
    KaiTopology,
    KaiTopologyConstraintSpec,
    SchedulingShard,
    decode_kai,
    is_kai_document,
)
from .podgrouper import plan_group, top_owner
from .reader_affinity import read_pod_affinity
from .schedconf import (
    SchedulerConf,
    config_map_name,
    is_scheduler_config_map,
    read_scheduler_conf,
    shard_plugins,
)
from .validate import (
    GPU_FRACTION,
    GPU_FRACTION_NUM_DEVICES,
    GPU_MEMORY,
    KAI_SCHEDULER_NAME,
    NVIDIA_GPU,
    enabled_actions,
    go_bool,
    gpu_request_problems,
    object_problems,
)

__all__ = [
    "DEFAULT_PRIORITY_CLASSES",
    "KaiSnapshot",
    "load_kai_snapshot",
    "read_kai_snapshot",
]

# deployments/kai-scheduler/templates/priorityclasses
DEFAULT_PRIORITY_CLASSES: Mapping[str, int] = {
    "train": 50, "build-preemptible": 75, "build": 100, "inference": 125}
DEFAULT_POD_GROUP_PRIORITY = 50          # constants.DefaultPodGroupPriority
POD_GROUP_ANNOTATION = "pod-group-name"
STALE_ANNOTATION = "kai.scheduler/stale-podgroup-timestamp"
LAST_START_ANNOTATION = "kai.scheduler/last-start-timestamp"
SUBGROUP_LABEL = "kai.scheduler/subgroup-name"
GPU_GROUP_LABEL = "runai-gpu-group"
GPU_MEMORY_LABEL = "nvidia.com/gpu.memory"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
DEFAULT_NODE_POOL_LABEL = "kai.scheduler/node-pool"
DEFAULT_QUEUE_LABEL = "kai.scheduler/queue"
MIG_PREFIX = "nvidia.com/mig-"
# node_info.DefaultGpuMemory: a node without the label counts 100 MiB per GPU
DEFAULT_GPU_MEMORY_MIB = 100
_TIB_IN_MIB = 1024 * 1024
_MIG = re.compile(r"^nvidia\.com/mig-\d+g\.\d+gb$")
# constants.DefaultGPUWorkerNodeLabelKey / DefaultCPUWorkerNodeLabelKey
_WORKER_LABELS = ("node-role.kubernetes.io/gpu-worker", "node-role.kubernetes.io/cpu-worker")
# the scheduler's flag defaults (cmd/scheduler/app/options)
_MAX_CONSOLIDATION_PREEMPTEES = 16


@dataclass(slots=True)
class KaiSnapshot:
    """The state, and what the verbs need to say about it in KAI's terms."""

    state: KaiState
    # (job, task) -> the pod it stands for
    pods: dict[tuple[str, str], Pod] = field(default_factory=dict)
    # pod groups left out of the state, with the message KAI gives them
    waiting: dict[str, str] = field(default_factory=dict)
    # pending pods of other schedulers: KAI leaves them alone ("ns/name")
    not_kai: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    gpu_sharing: bool = False
    shard: str = "default"


# --- loading ------------------------------------------------------------------------

def _decode(doc: Document) -> KubeObject:
    if isinstance(doc.data, dict) and is_kai_document(doc.data):
        try:
            return decode_kai(doc.data)
        except DecodeError as exc:
            raise LoadError(f"{doc.describe()}: {exc}") from None
    return decode_document(doc)


def load_kai_snapshot(docs: Sequence[Document]) -> tuple[list[KubeObject], list[str]]:
    """The objects of a snapshot, and one line per problem found in them (decoding,
    the API server's validation, KAI's webhooks and KAI's pod admission)."""
    others = [d for d in docs if not (isinstance(d.data, dict) and is_kai_document(d.data))]
    problems = [str(p) for p in validate_documents(others, stored=True)]
    objects: list[KubeObject] = []
    decoded: list[tuple[Document, KubeObject]] = []
    for doc in docs:
        try:
            obj = _decode(doc)
        except LoadError as exc:
            problems.append(str(exc))
            continue
        problems += [f"{doc.describe()}: {path}: {message}"
                     for path, message in object_problems(obj)]
        objects.append(obj)
        decoded.append((doc, obj))
    sharing = _gpu_sharing(objects)
    inputs = _split(objects)
    for doc, obj in decoded:
        for prefix, pod in _pods_to_admit(obj):
            problems += [f"{doc.describe()}: {prefix}{path}: {message}"
                         for path, message in gpu_request_problems(
                             pod, sharing, inputs.scheduler_name)]
    name = config_map_name(inputs.scheduler_name, inputs.shard_name)
    for doc, obj in decoded:
        if is_scheduler_config_map(obj, name):
            problem = read_scheduler_conf(obj)[1]
            if problem is not None:
                problems.append(f"{doc.describe()}: {problem[0]}: {problem[1]}")
    for kind in (SchedulingShard, KaiOperatorConfig):
        found = [doc for doc, obj in decoded if isinstance(obj, kind)]
        if len(found) > 1:
            problems.append(f"{found[1].describe()}: a second {kind.KIND} (the first is "
                            f"{found[0].where}): dralab runs one KAI scheduler")
    return objects, problems


_TEMPLATE_PATHS = (("spec", "template"), ("spec", "jobTemplate", "spec", "template"))


def _pods_to_admit(obj: KubeObject) -> list[tuple[str, Pod]]:
    """The pods KAI's webhook will see of ``obj``: a Pod itself, a workload's pod
    template (its pods are refused at creation, so the workload never runs), with the
    field path prefix of the template."""
    if isinstance(obj, Pod):
        return [("", obj)]
    for path in _TEMPLATE_PATHS:
        at: Any = obj.raw
        for key in path:
            at = at.get(key) if isinstance(at, dict) else None
        if isinstance(at, dict) and isinstance(at.get("spec"), dict):
            try:
                pod = decode({"apiVersion": "v1", "kind": "Pod",
                              "metadata": at.get("metadata") or {}, "spec": at["spec"]})
            except DecodeError:
                return []   # the workload's own validation names that
            return [(".".join(path) + ".", pod)] if isinstance(pod, Pod) else []
    return []


def _gpu_sharing(objects: Sequence[KubeObject]) -> bool:
    config = next((o for o in objects if isinstance(o, KaiOperatorConfig)), None)
    admission = config.spec.admission if config is not None else None
    # the operator's default: admission.gpuSharing false
    return bool(admission is not None and admission.gpu_sharing)


# --- values -------------------------------------------------------------------------

def _seconds(stamp: str | None) -> float:
    if not stamp:
        return 0.0
    try:
        parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


# time.RFC3339 as Go's time.Parse reads it (a fraction of a second is accepted)
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def _rfc3339(text: str) -> float | None:
    """Seconds of an RFC 3339 time, None when Go's time.Parse(time.RFC3339) refuses it
    (KAI logs that and reads the annotation as absent)."""
    if not _RFC3339.match(text):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _duration(text: str | None) -> float | None:
    return None if text is None else parse_go_duration(text)


def _resource(spec: KaiQueueResourceSpec) -> QueueResource:
    # written as the object says: KAI reads an absent field as 0
    return QueueResource(quota=spec.quota, over_quota_weight=spec.over_quota_weight,
                         limit=spec.limit)


def _in_partition(labels: Mapping[str, str], key: str, value: str) -> bool:
    # SchedulingNodePoolParams.GetLabelSelector: DoesNotExist for the default shard
    return key not in labels if not value else labels.get(key) == value


def _milli(q: Quantity | None) -> float:
    return float(q.milli_value()) if q is not None else 0.0


def _pod_requests(pod: Pod) -> dict[str, float]:
    """getPodResourceRequest: the containers' requests summed (a limit stands in for a
    request it leaves out, as the API server defaults it), then each init container's
    taken if larger, plus the overhead; in milli-units."""
    def container(c: Any) -> dict[str, float]:
        out = {n: _milli(q) for n, q in c.resources.limits.items()}
        out.update({n: _milli(q) for n, q in c.resources.requests.items()})
        return out

    total: dict[str, float] = {}
    for c in pod.spec.containers:
        for name, value in container(c).items():
            total[name] = total.get(name, 0.0) + value
    for c in pod.spec.init_containers:
        for name, value in container(c).items():
            total[name] = max(total.get(name, 0.0), value)
    for name, q in pod.spec.overhead.items():
        total[name] = total.get(name, 0.0) + _milli(q)
    return total


def _task_status(pod: Pod) -> PodStatus:
    # pod_info.getTaskStatus (no BindRequests in a snapshot)
    phase = pod.status.phase or "Pending"
    deleting = pod.metadata.deletion_timestamp is not None
    if phase == "Running":
        return "Releasing" if deleting else "Running"
    if phase == "Pending":
        if deleting:
            return "Releasing"
        if pod.spec.node_name:
            return "Bound"
        return "Gated" if pod.spec.scheduling_gates else "Pending"
    if phase in ("Succeeded", "Failed", "Unknown"):
        return phase  # type: ignore[return-value]
    return "Unknown"


def _gpu_groups(pod: Pod) -> tuple[str, ...]:
    labels = pod.metadata.labels
    if GPU_GROUP_LABEL not in labels:
        return ()
    extra = sorted(v for k, v in labels.items() if k.startswith(f"{GPU_GROUP_LABEL}/"))
    return (labels[GPU_GROUP_LABEL], *extra)


def _blocks(taint: Taint) -> bool:
    return taint.effect in ("NoSchedule", "NoExecute")


def _node_names(pod: Pod, nodes: Sequence[Node]) -> tuple[str, ...]:
    """The snapshot's nodes the pod may go to, as KaiTask.node_names: KAI's predicates
    run Kubernetes' NodeAffinity (required terms; nodeSelector stays node_selector),
    TaintToleration (NoSchedule/NoExecute) and NodeUnschedulable filters, which look at
    the node object only, so they are decided here once. () when every node passes;
    ("",) when none does (no node has an empty name)."""
    affinity = pod.spec.affinity
    node_affinity = affinity.node_affinity if affinity is not None else None
    required = node_affinity.required_during_scheduling_ignored_during_execution \
        if node_affinity is not None else None
    compiled = compile_node_selector(required) \
        if required is not None and required.node_selector_terms else None
    tolerations = pod.spec.tolerations
    cordon_ok = any(tolerates(t, UNSCHEDULABLE_TAINT) for t in tolerations)
    allowed = [node.metadata.name or "" for node in nodes
               if (compiled is None or compiled.matches(NodeView.of(node)))
               and (not node.spec.unschedulable or cordon_ok)
               and find_untolerated_taint(node.spec.taints, tolerations, _blocks) is None]
    if len(allowed) == len(nodes):
        return ()
    return tuple(allowed) or ("",)


def _named_by_metadata(pod: Pod) -> bool:
    """NodeAffinity's PreFilter gives a node list only when every required term has a
    metadata.name In matchField (KaiTask.node_names_by_name)."""
    affinity = pod.spec.affinity
    node_affinity = affinity.node_affinity if affinity is not None else None
    required = node_affinity.required_during_scheduling_ignored_during_execution \
        if node_affinity is not None else None
    terms = required.node_selector_terms if required is not None else []
    return bool(terms) and all(
        any(f.key == "metadata.name" and f.operator == "In" for f in term.match_fields)
        for term in terms)


def _started(pod: Pod, last_start: float | None) -> float | None:
    """When a placed pod started: its PodGroup's last-start-timestamp (what KAI's
    minruntime plugin reads), else the pod's status.startTime, else its creation."""
    if not pod.spec.node_name:
        return None
    if last_start is not None:
        return last_start
    status = (pod.raw or {}).get("status")
    start = status.get("startTime") if isinstance(status, dict) else None
    return _seconds(start if isinstance(start, str) else pod.metadata.creation_timestamp)


def _task(pod: Pod, job: str, nodes: Sequence[Node], last_start: float | None = None,
          affinity: KaiPodAffinity | None = None) -> KaiTask:
    requests = _pod_requests(pod)
    annotations = pod.metadata.annotations
    gpus = requests.get(NVIDIA_GPU, 0.0) / 1000
    gpu_memory = 0
    devices: int | None = None
    # pod_info.updatePodAdditionalFields: gpu-memory, then gpu-fraction, then the count
    memory_text = annotations.get(GPU_MEMORY, "")
    if memory_text.isdigit() and int(memory_text) > 0:
        gpus, gpu_memory = 0.0, int(memory_text)
    fraction_text = annotations.get(GPU_FRACTION)
    if fraction_text is not None:
        try:
            fraction = float(fraction_text)
        except ValueError:
            fraction = 0.0
        if 0 < fraction <= 1:
            gpus, gpu_memory = fraction, 0
    if (GPU_MEMORY in annotations or GPU_FRACTION in annotations) and \
            annotations.get(GPU_FRACTION_NUM_DEVICES, "").isdigit():
        devices = int(annotations[GPU_FRACTION_NUM_DEVICES])
    made = {entry.name: status.resource_claim_name
            for entry in pod.spec.resource_claims if entry.resource_claim_template_name
            for status in pod.status.resource_claim_statuses
            if status.name == entry.name and status.resource_claim_name}
    mig = {name: int(value // 1000) for name, value in requests.items()
           if _MIG.match(name) and value > 0}
    namespace = pod.metadata.namespace or "default"
    return KaiTask(
        name=pod.metadata.name or "", job=job, status=_task_status(pod),
        node=pod.spec.node_name or None, gpus=gpus, gpu_memory_mib=gpu_memory,
        fraction_devices=devices, cpu_milli=requests.get("cpu", 0.0),
        memory_bytes=requests.get("memory", 0.0) / 1000, gpu_groups=_gpu_groups(pod),
        mig=mig, node_names=_node_names(pod, nodes), node_selector=dict(pod.spec.node_selector),
        node_names_by_name=_named_by_metadata(pod),
        priority=pod.spec.priority, subgroup=pod.metadata.labels.get(SUBGROUP_LABEL),
        claims=tuple(k.removeprefix(f"{namespace}/") for k in pod_claim_keys(pod)),
        template_claims=made, nominated_node=pod.status.nominated_node_name or None,
        started=_started(pod, last_start), labels=dict(pod.metadata.labels),
        pod_affinity=affinity)


def _gpu_memory_mib(labels: Mapping[str, str]) -> int:
    # node_info.getNodeGpuMemory: MiB (bytes when it is a TiB or more), floored to 100s
    text = labels.get(GPU_MEMORY_LABEL, "")
    try:
        value = int(text)
    except ValueError:
        return DEFAULT_GPU_MEMORY_MIB
    if value >= _TIB_IN_MIB:
        value //= 1024 * 1024
    return value - value % 100


def _node(node: Node, used: Mapping[str, float]) -> KaiNode:
    allocatable = {name: _milli(q) for name, q in node.status.allocatable.items()}

    def free(name: str) -> float:
        return max(allocatable.get(name, 0.0) - used.get(name, 0.0), 0.0)

    pods = node.status.allocatable.get("pods")
    labels = node.metadata.labels
    return KaiNode(
        name=node.metadata.name or "", gpus=int(free(NVIDIA_GPU) // 1000),
        gpu_memory_mib=_gpu_memory_mib(labels), cpu_milli=free("cpu"),
        memory_bytes=free("memory") / 1000, labels=dict(labels),
        mig_instances={n: int(free(n) // 1000) for n in sorted(allocatable) if _MIG.match(n)},
        max_pods=int(pods.value()) - int(used.get("pods", 0) // 1000)
        if pods is not None else None,
        gpu_name=labels.get(GPU_PRODUCT_LABEL, ""))


# --- the state ----------------------------------------------------------------------

@dataclass(slots=True)
class _Inputs:
    queues: list[KaiQueueObject] = field(default_factory=list)
    groups: list[KaiPodGroup] = field(default_factory=list)
    topologies: list[KaiTopology] = field(default_factory=list)
    shard: SchedulingShard | None = None
    config: KaiOperatorConfig | None = None
    others: list[KubeObject] = field(default_factory=list)
    # the scheduler ConfigMap of the shard, when the snapshot has it
    scheduler_conf: SchedulerConf | None = None

    @property
    def shard_name(self) -> str:
        return (self.shard.metadata.name or "default") if self.shard is not None \
            else "default"

    @property
    def scheduler_name(self) -> str:
        global_ = self.config.spec.global_ if self.config is not None else None
        return (global_.scheduler_name if global_ is not None else None) \
            or KAI_SCHEDULER_NAME


def _split(objects: Sequence[KubeObject]) -> _Inputs:
    out = _Inputs()
    for obj in objects:
        if isinstance(obj, KaiQueueObject):
            out.queues.append(obj)
        elif isinstance(obj, KaiPodGroup):
            out.groups.append(obj)
        elif isinstance(obj, KaiTopology):
            out.topologies.append(obj)
        elif isinstance(obj, SchedulingShard):
            out.shard = out.shard or obj
        elif isinstance(obj, KaiOperatorConfig):
            out.config = out.config or obj
        else:
            out.others.append(obj)
    name = config_map_name(out.scheduler_name, out.shard_name)
    found = next((o for o in out.others if is_scheduler_config_map(o, name)), None)
    if found is not None:
        out.scheduler_conf = read_scheduler_conf(found)[0]
    return out


def _config(inputs: _Inputs) -> KaiConfig:
    shard = inputs.shard
    spec = shard.spec if shard is not None else None
    placement = spec.placement_strategy if spec is not None else None
    gpu = (placement.gpu if placement is not None else None) or "binpack"
    cpu = (placement.cpu if placement is not None else None) or "binpack"
    k_value = spec.k_value if spec is not None and spec.k_value is not None else 1.0
    proportion = spec.plugins.get("proportion") if spec is not None else None
    if proportion is not None and proportion.arguments is not None:
        # a plugin's arguments replace its defaults (kValue included) when given
        k_value = float(proportion.arguments.get("kValue", "1"))
    args = spec.args if spec is not None else {}
    actions = enabled_actions(shard)
    conf = inputs.scheduler_conf
    if conf is not None:
        # the ConfigMap is what the scheduler reads; empty parts fall back to its defaults
        actions = conf.actions or DEFAULT_ACTIONS
        plugins = dict(conf.plugins) if conf.plugins is not None else None
        placement_args = plugins.get("nodeplacement", {}) if plugins is not None else {}
        gpu, cpu = placement_args.get("gpu", "binpack"), placement_args.get("cpu", "binpack")
        k_value = float((plugins or {}).get("proportion", {}).get("kValue", "1"))
    tiers = shard_plugins(shard) if conf is None else \
        tuple(KaiPlugin(n, dict(a)) for n, a in conf.plugins) if conf.plugins is not None \
        else None
    global_ = inputs.config.spec.global_ if inputs.config is not None else None
    return KaiConfig(
        actions=actions,
        gpu_placement="spread" if gpu == "spread" else "binpack",
        cpu_placement="spread" if cpu == "spread" else "binpack",
        k_value=k_value,
        queue_label=(global_.queue_label_key if global_ is not None else None)
        or DEFAULT_QUEUE_LABEL,
        max_consolidation_preemptees=int(args.get("max-consolidation-preemptees",
                                                  _MAX_CONSOLIDATION_PREEMPTEES)),
        allow_consolidating_reclaim=go_bool(args.get("allow-consolidating-reclaim", "true"))
        is not False,
        staleness_grace_period=parse_go_duration(args["default-staleness-grace-period"])
        if "default-staleness-grace-period" in args else 60.0,
        plugins=tiers)


def _queues(queues: Sequence[KaiQueueObject], warnings: list[str]) -> dict[str, KaiQueue]:
    out: dict[str, KaiQueue] = {}
    for queue in queues:
        spec = queue.spec
        resources = spec.resources
        name = queue.metadata.name or ""
        out[name] = KaiQueue(
            name=name, parent=spec.parent_queue or None,
            priority=spec.priority if spec.priority is not None else 100,
            gpu=_resource(resources.gpu) if resources else QueueResource(0.0, 0.0, 0.0),
            cpu=_resource(resources.cpu) if resources else QueueResource(0.0, 0.0, 0.0),
            memory=_resource(resources.memory) if resources else QueueResource(0.0, 0.0, 0.0),
            created=_seconds(queue.metadata.creation_timestamp),
            preempt_min_runtime=_duration(spec.preempt_min_runtime),
            reclaim_min_runtime=_duration(spec.reclaim_min_runtime),
            display_name=spec.display_name or "")
    for name in sorted(out):
        seen, at = [name], out[name].parent
        while at is not None and at in out:
            if at in seen:
                raise InputError(f"Queue {name}: spec.parentQueue: the queues "
                                 f"{' -> '.join([*seen, at])} form a cycle")
            seen.append(at)
            at = out[at].parent
    # cleanQueueOrphans: a missing parent drops the queue and everything below it
    while orphans := sorted(n for n, q in out.items()
                            if q.parent is not None and q.parent not in out):
        for name in orphans:
            warnings.append(f"Queue {name}: its parent queue {out[name].parent} does not "
                            f"exist: KAI drops it and its child queues")
            del out[name]
    return out


def _constraint(spec: KaiTopologyConstraintSpec | None) -> TopologyConstraint | None:
    if spec is None or not (spec.topology or spec.required_topology_level
                            or spec.preferred_topology_level):
        return None
    return TopologyConstraint(topology=spec.topology or "",
                              required_level=spec.required_topology_level or "",
                              preferred_level=spec.preferred_topology_level or "")


@dataclass(slots=True)
class _Group:
    name: str
    namespace: str
    queue: str
    priority_class: str
    preemptibility: str | None
    min_member: int
    created: float
    subgroups: tuple[KaiSubGroup, ...] = ()
    topology: TopologyConstraint | None = None
    stale_at: float | None = None        # the stale-podgroup-timestamp annotation
    last_start: float | None = None      # the last-start-timestamp annotation
    pods: list[Pod] = field(default_factory=list)


def _annotation_time(group: KaiPodGroup, key: str, warnings: list[str]) -> float | None:
    # podgroup_info.SetPodGroup: an empty annotation is absent, an unparsable one too
    text = group.metadata.annotations.get(key)
    if not text:
        return None
    seconds = _rfc3339(text)
    if seconds is None:
        warnings.append(f"PodGroup {group.metadata.namespace or 'default'}/"
                        f"{group.metadata.name}: metadata.annotations.{key}: {text!r} is "
                        f"not an RFC 3339 time: KAI reads it as absent")
    return seconds


def _from_object(group: KaiPodGroup, warnings: list[str]) -> _Group:
    spec = group.spec
    return _Group(
        name=group.metadata.name or "", namespace=group.metadata.namespace or "default",
        queue=spec.queue or "", priority_class=spec.priority_class_name or "",
        preemptibility=spec.preemptibility, min_member=spec.min_member or 1,
        created=_seconds(group.metadata.creation_timestamp),
        subgroups=tuple(KaiSubGroup(name=s.name, min_member=s.min_member or 0,
                                    parent=s.parent, topology=_constraint(s.topology_constraint))
                        for s in spec.sub_groups),
        topology=_constraint(spec.topology_constraint),
        stale_at=_annotation_time(group, STALE_ANNOTATION, warnings),
        last_start=_annotation_time(group, LAST_START_ANNOTATION, warnings))


def read_kai_snapshot(objects: Sequence[KubeObject], now: float | None = None) -> KaiSnapshot:
    """The KaiState of a loaded, valid snapshot (``load_kai_snapshot``). ``now``: the
    session's moment in seconds (default: the newest creationTimestamp or PodGroup
    last-start / stale timestamp)."""
    inputs = _split(objects)
    config = _config(inputs)
    warnings: list[str] = []
    global_ = inputs.config.spec.global_ if inputs.config is not None else None
    pool_key = (global_.node_pool_label_key if global_ is not None else None) \
        or DEFAULT_NODE_POOL_LABEL
    pool = (inputs.shard.spec.partition_label_value if inputs.shard is not None else None) or ""

    cluster, _ = build_cluster(inputs.others)
    classes = dict(DEFAULT_PRIORITY_CLASSES)
    default_priority = DEFAULT_POD_GROUP_PRIORITY
    for pc in (o for o in inputs.others if isinstance(o, PriorityClass)):
        classes[pc.metadata.name or ""] = pc.value
        if pc.global_default:
            default_priority = pc.value

    queues = _queues([q for q in inputs.queues
                      if _in_partition(q.metadata.labels, pool_key, pool)], warnings)
    groups: dict[tuple[str, str], _Group] = {
        (g.metadata.namespace or "default", g.metadata.name or ""): _from_object(g, warnings)
        for g in inputs.groups if _in_partition(g.metadata.labels, pool_key, pool)}
    # the snapshot was taken after every time it records: its newest creationTimestamp,
    # and the pod groups' last-start and stale times (KAI compares them with time.Now(),
    # so a moment before a recorded start would protect every started job)
    moment = now if now is not None else max(
        [snapshot_moment(objects), *(t for g in groups.values()
                                     for t in (g.last_start, g.stale_at) if t is not None)])
    owners = {(o.KIND or o.kind, o.metadata.namespace or "default", o.metadata.name or ""): o
              for o in inputs.others if o.metadata.name}
    args = inputs.shard.spec.args if inputs.shard is not None else {}
    # --restrict-node-scheduling (filterUnmarkedNodes): only nodes marked as GPU or CPU
    # workers are the scheduler's
    restrict = go_bool(args.get("restrict-node-scheduling", "false")) is True
    node_names = {name for name, info in cluster.nodes.items()
                  if _in_partition(info.node.metadata.labels, pool_key, pool)
                  and (not restrict or any(k in info.node.metadata.labels
                                           for k in _WORKER_LABELS))}
    used: dict[str, dict[str, float]] = {}
    snapshot = KaiSnapshot(KaiState(config=config), gpu_sharing=_gpu_sharing(objects),
                           shard=inputs.shard.metadata.name or "default"
                           if inputs.shard is not None else "default")
    # the resource-claim controller makes a pod's template claims when the pod is
    # created, before any scheduler sees it
    claim_names = random.Random("kai:claims")
    for info in list(cluster.pods.values()):
        if info.pod.spec.scheduler_name == inputs.scheduler_name \
                and not info.pod.spec.node_name:
            ensure_pod_claims(cluster, info, claim_names)
    for info in cluster.pods.values():
        pod = info.pod
        namespace = pod.metadata.namespace or "default"
        key = f"{namespace}/{pod.metadata.name}"
        terminal = pod.status.phase in ("Succeeded", "Failed")
        if pod.spec.scheduler_name != inputs.scheduler_name:
            if pod.spec.node_name and not terminal:
                into = used.setdefault(pod.spec.node_name, {})
                for name, value in {**_pod_requests(pod), "pods": 1000.0}.items():
                    into[name] = into.get(name, 0.0) + value
            elif not pod.spec.node_name and not terminal:
                snapshot.not_kai.append(key)
            continue
        named = pod.metadata.annotations.get(POD_GROUP_ANNOTATION)
        if named:
            group = groups.get((namespace, named))
            if group is None:
                snapshot.waiting[key] = (f"pod {key}: its PodGroup {namespace}/{named} "
                                         f"({POD_GROUP_ANNOTATION}) does not exist: KAI "
                                         f"does not schedule it")
                continue
        else:
            plan = plan_group(pod, top_owner(pod, owners), classes, config.queue_label,
                              pool_key)
            group = groups.setdefault((namespace, plan.name), _Group(
                name=plan.name, namespace=namespace, queue=plan.queue,
                priority_class=plan.priority_class, preemptibility=plan.preemptibility,
                min_member=1, created=_seconds(pod.metadata.creation_timestamp),
                topology=_constraint(KaiTopologyConstraintSpec(
                    topology=plan.topology or None,
                    required_topology_level=plan.required_level or None,
                    preferred_topology_level=plan.preferred_level or None))))
        group.pods.append(pod)

    state = snapshot.state
    state.queues = queues
    state.nodes = {name: _node(cluster.nodes[name].node, used.get(name, {}))
                   for name in cluster.nodes if name in node_names}
    kai_nodes = [cluster.nodes[name].node for name in cluster.nodes if name in node_names]
    # every namespace the session's pods are in (a namespaceSelector {} selects them all)
    all_namespaces = sorted({ns for ns, _ in groups} | set(cluster.namespace_labels))
    by_name: dict[str, str] = {}
    for (namespace, name), group in groups.items():
        if name in by_name:
            raise InputError(f"PodGroup {namespace}/{name}: KAI keys pod groups by name "
                             f"alone, and {by_name[name]}/{name} has it too")
        by_name[name] = namespace
        if group.queue not in queues:
            # cluster_info.validatePodgroupQueue; keyed by pod, as every other waiting
            # entry is, so reports list the pods (the message names the queue)
            for pod in group.pods:
                snapshot.waiting[f"{namespace}/{pod.metadata.name}"] = \
                    f"QueueDoesNotExist: Queue '{group.queue}' does not exist"
            continue
        tasks = []
        for pod in group.pods:
            affinity = read_pod_affinity(pod, cluster.namespace_labels, all_namespaces,
                                         warnings)
            task = _task(pod, name, kai_nodes, group.last_start, affinity)
            tasks.append(task)
            snapshot.pods[(name, task.name)] = pod
        priority = classes.get(group.priority_class, default_priority) \
            if group.priority_class else default_priority
        state.jobs[name] = KaiJob(
            name=name, queue=group.queue, namespace=namespace, priority=priority,
            priority_class=group.priority_class,
            preemptible=None if group.preemptibility is None
            else group.preemptibility == "preemptible",
            min_member=group.min_member, created=group.created, tasks=tuple(tasks),
            subgroups=group.subgroups, topology=group.topology,
            # how long the gang has been stale at the session's moment
            stale_since=max(moment - group.stale_at, 0.0) if group.stale_at is not None
            else None,
            last_start=group.last_start)
    state.resource_claims = dict(cluster.claims)
    state.resource_slices = tuple(cluster.slices)
    state.device_classes = dict(cluster.classes)
    state.topologies = {t.metadata.name or "": tuple(level.node_label for level in t.spec.levels)
                        for t in inputs.topologies}
    state.now = moment
    snapshot.warnings = warnings
    return snapshot
