"""The PodGroup KAI's pod grouper makes for a pod that names none.

KAI's podgrouper controller gives every pod of ``kai-scheduler`` a PodGroup and writes
its name into the pod's ``pod-group-name`` annotation; a pod that already has the
annotation keeps it (its PodGroup is the user's). For the rest, dralab does what the
podgrouper's default plugins do (``pkg/podgrouper/podgrouper/plugins``), kept simple:

* the top owner is found by walking controller ownerReferences through the input (a
  ReplicaSet that dralab's Deployment controller made, and is thus not in the input,
  leads to the Deployment of the same namespace whose name it extends); a pod without
  an owner is its own top owner (the podjob grouper);
* a batch Job's pods get one PodGroup each, ``pg-<pod>-<job uid>`` (the Job grouper
  without its legacy-name search), a Deployment's too, ``pg-<pod>-<pod uid>``, with
  priority class ``inference`` by default; any other owner, and a bare pod, one PodGroup
  per top owner, ``pg-<owner>-<owner uid>``, priority class ``train`` by default. The
  per-kind groupers for Kubeflow, Ray, JobSet, LeaderWorkerSet... are not modelled:
  their pods group as "any other owner" does;
* minMember 1; queue from the top owner's ``kai.scheduler/queue`` label, else the
  pod's, else ``project`` label (with ``-<node-pool>``), else ``default-queue``;
  priority class from the owner's or pod's ``priorityClassName`` label, else the pod's
  spec.priorityClassName, when that PriorityClass exists, else the kind's default;
  preemptibility from ``kai.scheduler/preemptibility`` labels; the top owner's
  ``kai.scheduler/topology*`` annotations as the topology constraint. The per-type
  defaults ConfigMap is not read.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from dralab.api.base import KubeObject, OwnerReference
from dralab.api.core import Pod

__all__ = ["DEFAULT_QUEUE", "GroupPlan", "TopOwner", "plan_group", "top_owner"]

DEFAULT_QUEUE = "default-queue"
_PRIORITY_LABEL = "priorityClassName"
_PREEMPTIBILITY_LABEL = "kai.scheduler/preemptibility"
_PROJECT_LABEL = "project"
_TOPOLOGY = "kai.scheduler/topology"
_REQUIRED = "kai.scheduler/topology-required-placement"
_PREFERRED = "kai.scheduler/topology-preferred-placement"


@dataclass(frozen=True, slots=True)
class TopOwner:
    kind: str
    name: str
    uid: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class GroupPlan:
    """The PodGroup the podgrouper would create for a pod."""

    name: str
    queue: str
    priority_class: str
    preemptibility: str | None
    required_level: str
    preferred_level: str
    topology: str


def _controller(refs: list[OwnerReference]) -> OwnerReference | None:
    return next((r for r in refs if r.controller), None)


def top_owner(pod: Pod, objects: Mapping[tuple[str, str, str], KubeObject]) -> TopOwner:
    """The pod's top owner among ``objects`` (kind, namespace, name -> object)."""
    namespace = pod.metadata.namespace or "default"
    meta = pod.metadata
    owner = TopOwner("Pod", meta.name or "", meta.uid or "", meta.labels, meta.annotations)
    refs = list(meta.owner_references)
    for _ in range(16):   # owner chains are short; a loop in the input must not hang
        ref = _controller(refs)
        if ref is None:
            break
        obj = objects.get((ref.kind, namespace, ref.name))
        if obj is None and ref.kind == "ReplicaSet":
            obj = next((o for (kind, ns, name), o in objects.items()
                        if kind == "Deployment" and ns == namespace
                        and ref.name.startswith(f"{name}-")), None)
        if obj is None:
            owner = TopOwner(ref.kind, ref.name, ref.uid, {}, {})
            break
        owner = TopOwner(obj.KIND or obj.kind, obj.metadata.name or "",
                         obj.metadata.uid or ref.uid, obj.metadata.labels,
                         obj.metadata.annotations)
        refs = list(obj.metadata.owner_references)
    return owner


def _priority_class(owner: TopOwner, pod: Pod, known: Collection[str], default: str) -> str:
    for labels in (owner.labels, pod.metadata.labels):
        if _PRIORITY_LABEL in labels:
            name = labels[_PRIORITY_LABEL]
            break
    else:
        name = pod.spec.priority_class_name or ""
    return name if name in known else default


def _preemptibility(owner: TopOwner, pod: Pod) -> str | None:
    for labels in (owner.labels, pod.metadata.labels):
        value = labels.get(_PREEMPTIBILITY_LABEL)
        if value in ("preemptible", "non-preemptible"):
            return value
    return None


def _queue(owner: TopOwner, pod: Pod, queue_label: str, node_pool_label: str) -> str:
    for labels in (owner.labels, pod.metadata.labels):
        if queue_label in labels:
            return labels[queue_label]
    project = owner.labels.get(_PROJECT_LABEL) or pod.metadata.labels.get(_PROJECT_LABEL)
    if project:
        pool = pod.metadata.labels.get(node_pool_label)
        return f"{project}-{pool}" if pool is not None else project
    return DEFAULT_QUEUE


def plan_group(pod: Pod, owner: TopOwner, priority_classes: Collection[str],
               queue_label: str, node_pool_label: str) -> GroupPlan:
    """The PodGroup KAI's podgrouper makes for ``pod`` (see the module's text)."""
    pod_name = pod.metadata.name or ""
    if owner.kind == "Job":
        name, default = f"pg-{pod_name}-{owner.uid}", "train"
    elif owner.kind == "Deployment":
        name, default = f"pg-{pod_name}-{pod.metadata.uid or ''}", "inference"
    else:
        name, default = f"pg-{owner.name}-{owner.uid}", "train"
    return GroupPlan(
        name=name,
        queue=_queue(owner, pod, queue_label, node_pool_label),
        priority_class=_priority_class(owner, pod, priority_classes, default),
        preemptibility=_preemptibility(owner, pod),
        required_level=owner.annotations.get(_REQUIRED, ""),
        preferred_level=owner.annotations.get(_PREFERRED, ""),
        topology=owner.annotations.get(_TOPOLOGY, ""))
