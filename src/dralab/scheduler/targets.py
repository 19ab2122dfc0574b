"""``explain pod`` targets: one pod, or every pod of a workload, named as kubectl names them.

A target is ``NAME`` or ``NAMESPACE/NAME`` (a pod), or ``TYPE/NAME`` with a kubectl
resource name or short name as TYPE (``job/train``, ``deploy/web``, ``sts/db``,
``pod/p``, ...). The namespace comes from the separate option, as with ``kubectl
-n``; ``NAMESPACE/NAME`` keeps dralab's older form. Without a namespace option,
``job/train`` could also be pod ``train`` in a namespace called ``job``: such a
pod wins when it exists, so older command lines keep their meaning.

A workload's pods are found through controller references, one or two levels:
Deployment -> ReplicaSet -> Pod and CronJob -> Job -> Pod. ReplicaSets and Jobs that
the run created themselves are recognised by their names (``<deployment>-<pod
template hash>``, ``<cronjob>-<minutes>``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dralab.api.base import KubeObject
from dralab.api.core import Pod
from dralab.api.errors import InputError
from dralab.api.features import FeatureGates
from dralab.api.keys import object_key
from dralab.api.workloads import CronJob, DaemonSet, Deployment, Job, ReplicaSet, StatefulSet
from dralab.cluster import ClusterState
from dralab.controllers.owners import controller_ref

from .explain import Explanation, not_scheduled, run_observed

__all__ = ["PodTarget", "PodsExplanation", "explain_pods", "parse_pod_target"]

_KINDS: Mapping[str, str] = {
    **dict.fromkeys(("pod", "pods", "po"), "Pod"),
    **dict.fromkeys(("job", "jobs", "job.batch"), "Job"),
    **dict.fromkeys(("cronjob", "cronjobs", "cj", "cronjob.batch"), "CronJob"),
    **dict.fromkeys(("deployment", "deployments", "deploy", "deployment.apps"), "Deployment"),
    **dict.fromkeys(("replicaset", "replicasets", "rs", "replicaset.apps"), "ReplicaSet"),
    **dict.fromkeys(("statefulset", "statefulsets", "sts", "statefulset.apps"),
                    "StatefulSet"),
    **dict.fromkeys(("daemonset", "daemonsets", "ds", "daemonset.apps"), "DaemonSet"),
}
_TYPES: Mapping[str, type[KubeObject]] = {
    "Job": Job, "CronJob": CronJob, "Deployment": Deployment, "ReplicaSet": ReplicaSet,
    "StatefulSet": StatefulSet, "DaemonSet": DaemonSet,
}


@dataclass(frozen=True, slots=True)
class PodTarget:
    """``kind`` ("Pod" or a workload kind) ``namespace/name``; ``or_pod`` is the pod
    key the text also reads as (older NAMESPACE/NAME form), tried first."""

    kind: str
    namespace: str
    name: str
    or_pod: str | None = None


def parse_pod_target(text: str, namespace: str | None = None) -> PodTarget:
    """Read an ``explain pod`` argument. InputError for a malformed one."""
    parts = text.split("/")
    if len(parts) > 2 or any(not p for p in parts):
        raise InputError(f"{text!r}: expected NAME, NAMESPACE/NAME or TYPE/NAME "
                         "(job/NAME, deployment/NAME, statefulset/NAME, ...)")
    if len(parts) == 1:
        return PodTarget("Pod", namespace or "default", text)
    first, name = parts
    kind = _KINDS.get(first.lower())
    if kind is not None:
        ambiguous = None if namespace is not None else f"{first}/{name}"
        return PodTarget(kind, namespace or "default", name, ambiguous)
    if namespace is not None and namespace != first:
        raise InputError(f"{text}: namespace {first!r} differs from the namespace option "
                         f"{namespace!r}")
    return PodTarget("Pod", first, name)


def _owner_chain(pod: Pod, parents: Mapping[tuple[str, str, str], tuple[str, str]],
                 named: set[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """(kind, name) of the pod's controller and of that controller's controller."""
    ref = controller_ref(pod)
    if ref is None:
        return []
    namespace = pod.metadata.namespace or "default"
    chain = [(ref.kind, ref.name)]
    parent = parents.get((namespace, ref.kind, ref.name))
    if parent is None and ref.kind == "ReplicaSet":
        pod_hash = pod.metadata.labels.get("pod-template-hash", "")
        base = ref.name[:-len(pod_hash) - 1] if pod_hash and ref.name.endswith(
            f"-{pod_hash}") else ""
        if (namespace, "Deployment", base) in named:
            parent = ("Deployment", base)
    elif parent is None and ref.kind == "Job":
        base, _, minutes = ref.name.rpartition("-")
        if minutes.isascii() and minutes.isdigit() and (namespace, "CronJob", base) in named:
            parent = ("CronJob", base)
    if parent is not None:
        chain.append(parent)
    return chain


def _generated_hint(objects: list[KubeObject], pods: Iterable[Pod], target: PodTarget,
                    parents: Mapping[tuple[str, str, str], tuple[str, str]],
                    named: set[tuple[str, str, str]]) -> str:
    """When the target names a workload by its ``generateName`` (Kueue's samples have no
    name), the name the run gave it, so that the user can ask again."""
    prefixed = any(target.kind == type(o).KIND and not o.name
                   and o.metadata.generate_name == target.name
                   and (o.metadata.namespace or "default") == target.namespace for o in objects)
    if not prefixed:
        return ""
    given = sorted({name for pod in pods
                    if (pod.metadata.namespace or "default") == target.namespace
                    for kind, name in _owner_chain(pod, parents, named)
                    if kind == target.kind and name.startswith(target.name)})
    if not given:
        return f"; {target.name} is a generateName: the API server adds a random suffix"
    return (f"; {target.name} is a generateName: this run named the {target.kind} "
            f"{', '.join(given)} (names depend on --seed)")


@dataclass(frozen=True, slots=True)
class PodsExplanation:
    """The explanation of one pod (``title`` None) or of a workload's pods."""

    pods: tuple[Explanation, ...]
    title: str | None = None

    @property
    def all_placed(self) -> bool:
        """Every pod is on a node or has finished."""
        return all(p.node is not None or p.finished for p in self.pods)

    def render(self) -> str:
        if self.title is None:
            return "".join(p.render() for p in self.pods)
        finished = sum(1 for p in self.pods if p.finished)
        placed = sum(1 for p in self.pods if p.node is not None and p.found)
        before = sum(1 for p in self.pods
                     if p.node is not None and not p.found and not p.finished)
        waiting = len(self.pods) - finished - placed - before
        counts = ((len(self.pods), "pod(s)"), (placed, "scheduled"),
                  (before, "bound before the run"), (finished, "finished"),
                  (waiting, "not scheduled"))
        head = f"{self.title}: " + (", ".join(f"{n} {what}" for n, what in counts if n)
                                    if self.pods else "no pods")
        return head + "\n" + "".join("\n" + p.render() for p in self.pods)


def explain_pods(objects: Iterable[KubeObject], target: PodTarget,
                 config: object | None = None, features: FeatureGates | None = None,
                 seed: int = 0) -> PodsExplanation:
    """Explain the pod, or every pod of the workload, that ``target`` names (see the
    module docstring). InputError if neither the pod nor the workload exists."""
    objects = list(objects)
    named = {(o.metadata.namespace or "default", type(o).KIND, o.name)
             for o in objects if isinstance(o, tuple(_TYPES.values())) and o.name}
    parents: dict[tuple[str, str, str], tuple[str, str]] = {}
    for obj in objects:
        ref = controller_ref(obj) if isinstance(obj, ReplicaSet | Job) else None
        if ref is not None and obj.name:
            parents[(obj.metadata.namespace or "default", type(obj).KIND, obj.name)] = (
                ref.kind, ref.name)
    chosen: list[str] = []
    as_pod: list[bool] = []

    def select(cluster: ClusterState) -> set[str]:
        pod_key = object_key(target.namespace, target.name) if target.kind == "Pod" else \
            target.or_pod
        if pod_key is not None and (target.kind == "Pod" or pod_key in cluster.pods):
            chosen.append(pod_key)
            as_pod.append(True)
            return {pod_key}
        want = (target.kind, target.name)
        chosen.extend(key for key, info in cluster.pods.items()
                      if (info.pod.metadata.namespace or "default") == target.namespace
                      and want in _owner_chain(info.pod, parents, named))
        return set(chosen)

    result, seen = run_observed(objects, select, config, features, seed)
    if as_pod:
        (key,) = chosen
        return PodsExplanation((seen.get(key) or not_scheduled(result, key),))
    where = f"{target.namespace}/{target.name}"
    if not chosen and (target.namespace, target.kind, target.name) not in named:
        raise InputError(f"{target.kind.lower()} {where} not found"
                         + _generated_hint(objects, result.pods, target, parents, named))
    return PodsExplanation(tuple(seen.get(k) or not_scheduled(result, k) for k in chosen),
                           f"{target.kind} {where}")
