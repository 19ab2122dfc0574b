"""Pods from pod-template carriers, named and labelled as the controllers name them.

* Job: ``parallelism`` pods (default 1, at most ``completions``), ``<job>-<5 random>``
  (Indexed: ``<job>-<index>-<5 random>``), job-name / controller-uid labels.
* CronJob: one Job ``<cronjob>-<scheduled time in minutes since the epoch>`` for the
  first activation after its creationTimestamp (or after the epoch), then as a Job.
* Deployment: ReplicaSet ``<deploy>-<pod-template-hash>``, then as a ReplicaSet.
* ReplicaSet: ``replicas`` pods ``<rs>-<5 random>``.
* StatefulSet: ``<sts>-0`` .. ``<sts>-<replicas-1>``.
* DaemonSet: one pod per node it should run on (node selector, required node
  affinity, taints with the daemon tolerations), ``<ds>-<5 random>``, pinned with a
  ``matchFields metadata.name In [node]`` affinity term as the DaemonSet controller does.

Random parts (name suffixes, UIDs) come from the ``random.Random`` passed in. The
pod-template-hash is FNV-32a over the template's canonical JSON, encoded like
upstream's SafeEncodeString: same shape, not the same value as a real cluster's.
Pods are returned as plain documents; the caller decodes them.
"""

from __future__ import annotations

import copy
import json
import random
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import msgspec

from dralab.allocator.nodes import NodeSelectorError, NodeView, compile_node_selector
from dralab.api.base import KubeObject
from dralab.api.core import Node, NodeSelector, Taint, Toleration
from dralab.api.quantity import Quantity
from dralab.api.workloads import CronJob, DaemonSet, Deployment, Job, ReplicaSet, StatefulSet

from .cron import next_activation

__all__ = [
    "ALPHANUMS",
    "Expander",
    "safe_encode",
    "template_hash",
]

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
RANDOM_LENGTH = 5
MAX_GENERATED_NAME = 63 - RANDOM_LENGTH

DAEMON_TOLERATIONS: tuple[tuple[str, str], ...] = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
NETWORK_UNAVAILABLE = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def safe_encode(text: str) -> str:
    """Map every character onto ALPHANUMS (upstream's rand.SafeEncodeString)."""
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in text)


def _fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def template_hash(template: Any) -> str:
    text = json.dumps(template, sort_keys=True, separators=(",", ":"), default=str)
    return safe_encode(str(_fnv32a(text.encode())))


def _plain(value: Any) -> Any:
    def hook(obj: Any) -> Any:
        if isinstance(obj, Quantity):
            return str(obj)
        raise NotImplementedError(type(obj).__name__)
    return msgspec.to_builtins(value, enc_hook=hook)


def _raw_template(owner: KubeObject, *path: str) -> dict[str, Any]:
    """The pod template as written (unmodelled fields kept), deep-copied."""
    raw: Any = owner.raw
    for key in path:
        raw = raw.get(key) if isinstance(raw, dict) else None
    if isinstance(raw, dict):
        return copy.deepcopy(raw)
    typed: Any = owner
    for key in path:
        typed = getattr(typed, {"jobTemplate": "job_template"}.get(key, key))
    out = _plain(typed)
    return out if isinstance(out, dict) else {}


def _owner_ref(owner: Mapping[str, Any]) -> dict[str, Any]:
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"],
            "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}


class Expander:
    """Expands workloads into pod documents. ``taken`` holds the ``namespace/name`` of
    pods that exist, so generated names never collide."""

    def __init__(self, rng: random.Random, nodes: list[Node], taken: set[str]) -> None:
        self.rng = rng
        self.nodes = nodes
        self.taken = taken

    # --- naming -----------------------------------------------------------------------
    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def generate_name(self, namespace: str, base: str) -> str:
        base = base[:MAX_GENERATED_NAME]
        while True:
            name = base + "".join(self.rng.choice(ALPHANUMS) for _ in range(RANDOM_LENGTH))
            if f"{namespace}/{name}" not in self.taken:
                self.taken.add(f"{namespace}/{name}")
                return name

    def _head(self, obj: KubeObject) -> dict[str, Any]:
        """apiVersion/kind/metadata of ``obj`` as plain data with namespace and uid set."""
        meta = _plain(obj.metadata)
        meta.setdefault("namespace", "default")
        if not meta.get("uid"):
            meta["uid"] = self.uid()
        return {"apiVersion": obj.api_version or type(obj).API_VERSION,
                "kind": obj.kind or type(obj).KIND, "metadata": meta}

    def _pod(self, owner: Mapping[str, Any], template: Mapping[str, Any], name: str,
             extra_labels: Mapping[str, str] = {},
             annotations: Mapping[str, str] = {}) -> dict[str, Any]:
        t_meta = dict(template.get("metadata") or {})
        namespace = owner["metadata"]["namespace"]
        labels = {**(t_meta.get("labels") or {}), **extra_labels}
        meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": self.uid(),
                                "ownerReferences": [_owner_ref(owner)]}
        if labels:
            meta["labels"] = labels
        merged = {**(t_meta.get("annotations") or {}), **annotations}
        if merged:
            meta["annotations"] = merged
        if t_meta.get("finalizers"):
            meta["finalizers"] = list(t_meta["finalizers"])
        self.taken.add(f"{namespace}/{name}")
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                "spec": copy.deepcopy(template.get("spec") or {})}

    # --- kinds ------------------------------------------------------------------------
    def expand(self, obj: KubeObject) -> Iterator[dict[str, Any]]:
        expanders: dict[type, Callable[[Any], Iterator[dict[str, Any]]]] = {
            Job: self.job, CronJob: self.cron_job, Deployment: self.deployment,
            ReplicaSet: self.replica_set, StatefulSet: self.stateful_set,
            DaemonSet: self.daemon_set,
        }
        fn = expanders.get(type(obj))
        if fn is not None:
            yield from fn(obj)

    def job(self, job: Job) -> Iterator[dict[str, Any]]:
        head = self._head(job)
        yield from self._job_pods(head, job.spec.parallelism, job.spec.completions,
                                  job.spec.completion_mode, job.spec.suspend,
                                  _raw_template(job, "spec", "template"))

    def _job_pods(self, head: dict[str, Any], parallelism: int | None, completions: int | None,
                  mode: str | None, suspend: bool | None, template: dict[str, Any]
                  ) -> Iterator[dict[str, Any]]:
        if suspend:
            return
        count = 1 if parallelism is None else parallelism
        if completions is not None:
            count = min(count, completions)
        job_name, uid = head["metadata"]["name"], head["metadata"]["uid"]
        labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name":
                  job_name, "controller-uid": uid, "job-name": job_name}
        template.setdefault("metadata", {})
        template["metadata"]["finalizers"] = ["batch.kubernetes.io/job-tracking"]
        namespace = head["metadata"]["namespace"]
        for index in range(count):
            if mode == "Indexed":
                name = self.generate_name(namespace, f"{job_name}-{index}-")
                pod = self._pod(head, template, name,
                                {**labels, "batch.kubernetes.io/job-completion-index":
                                 str(index)},
                                {"batch.kubernetes.io/job-completion-index": str(index)})
                pod["spec"]["hostname"] = f"{job_name}-{index}"
            else:
                pod = self._pod(head, template, self.generate_name(namespace, f"{job_name}-"),
                                labels)
            yield pod

    def cron_job(self, cron: CronJob) -> Iterator[dict[str, Any]]:
        if cron.spec.suspend:
            return
        owner = self._head(cron)
        created = cron.metadata.creation_timestamp
        after = (datetime.fromisoformat(created.replace("Z", "+00:00")) if created
                 else datetime(1970, 1, 1, tzinfo=UTC))
        scheduled = next_activation(cron.spec.schedule, after)
        job_template = _raw_template(cron, "spec", "jobTemplate")
        t_meta = job_template.get("metadata") or {}
        name = f"{owner['metadata']['name']}-{int(scheduled.timestamp()) // 60}"
        job_meta: dict[str, Any] = {
            "name": name, "namespace": owner["metadata"]["namespace"], "uid": self.uid(),
            "labels": dict(t_meta.get("labels") or {}),
            "annotations": {**(t_meta.get("annotations") or {}),
                            "batch.kubernetes.io/cronjob-scheduled-timestamp":
                                scheduled.isoformat().replace("+00:00", "Z")},
            "ownerReferences": [_owner_ref(owner)]}
        head = {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta}
        spec = cron.spec.job_template.spec
        yield from self._job_pods(head, spec.parallelism, spec.completions,
                                  spec.completion_mode, spec.suspend,
                                  dict((job_template.get("spec") or {}).get("template") or {}))

    def deployment(self, deploy: Deployment) -> Iterator[dict[str, Any]]:
        owner = self._head(deploy)
        template = _raw_template(deploy, "spec", "template")
        pod_hash = template_hash(template)
        template.setdefault("metadata", {})
        template["metadata"]["labels"] = {**(template["metadata"].get("labels") or {}),
                                          "pod-template-hash": pod_hash}
        rs_meta = {"name": f"{owner['metadata']['name']}-{pod_hash}",
                   "namespace": owner["metadata"]["namespace"], "uid": self.uid(),
                   "labels": dict(template["metadata"]["labels"]),
                   "ownerReferences": [_owner_ref(owner)]}
        head = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": rs_meta}
        replicas = 1 if deploy.spec.replicas is None else deploy.spec.replicas
        yield from self._replicas(head, template, replicas)

    def replica_set(self, rs: ReplicaSet) -> Iterator[dict[str, Any]]:
        replicas = 1 if rs.spec.replicas is None else rs.spec.replicas
        yield from self._replicas(self._head(rs), _raw_template(rs, "spec", "template"),
                                  replicas)

    def _replicas(self, head: dict[str, Any], template: dict[str, Any], replicas: int
                  ) -> Iterator[dict[str, Any]]:
        namespace, name = head["metadata"]["namespace"], head["metadata"]["name"]
        for _ in range(replicas):
            yield self._pod(head, template, self.generate_name(namespace, f"{name}-"))

    def stateful_set(self, sts: StatefulSet) -> Iterator[dict[str, Any]]:
        head = self._head(sts)
        template = _raw_template(sts, "spec", "template")
        name = head["metadata"]["name"]
        revision = f"{name}-{template_hash(template)}"
        replicas = 1 if sts.spec.replicas is None else sts.spec.replicas
        for ordinal in range(replicas):
            pod_name = f"{name}-{ordinal}"
            pod = self._pod(head, template, pod_name, {
                "apps.kubernetes.io/pod-index": str(ordinal),
                "controller-revision-hash": revision,
                "statefulset.kubernetes.io/pod-name": pod_name})
            pod["spec"]["hostname"] = pod_name
            if sts.spec.service_name:
                pod["spec"]["subdomain"] = sts.spec.service_name
            yield pod

    def daemon_set(self, ds: DaemonSet) -> Iterator[dict[str, Any]]:
        head = self._head(ds)
        template = _raw_template(ds, "spec", "template")
        spec = template.setdefault("spec", {})
        tolerations = list(spec.get("tolerations") or [])
        wanted = list(DAEMON_TOLERATIONS)
        if spec.get("hostNetwork"):
            wanted.append(NETWORK_UNAVAILABLE)
        for key, effect in wanted:
            if not any(t.get("key") == key and t.get("effect") == effect for t in tolerations):
                tolerations.append({"key": key, "operator": "Exists", "effect": effect})
        spec["tolerations"] = tolerations
        revision = template_hash(template)
        typed_tolerations = [msgspec.convert(t, Toleration) for t in tolerations]
        pod_spec = ds.spec.template.spec
        affinity = pod_spec.affinity.node_affinity if pod_spec.affinity else None
        required = affinity.required_during_scheduling_ignored_during_execution \
            if affinity else None
        namespace, name = head["metadata"]["namespace"], head["metadata"]["name"]
        for node in self.nodes:
            if not _should_run(node, pod_spec.node_selector, required, typed_tolerations):
                continue
            pod = self._pod(head, template, self.generate_name(namespace, f"{name}-"), {
                "controller-revision-hash": revision, "pod-template-generation": "1"})
            _pin_to_node(pod["spec"], node.name)
            yield pod


def _should_run(node: Node, selector: Mapping[str, str], required: NodeSelector | None,
                tolerations: list[Toleration]) -> bool:
    labels = node.metadata.labels
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    if required is not None:
        try:
            if not compile_node_selector(required).matches(NodeView.of(node)):
                return False
        except NodeSelectorError:
            return False
    from .plugins.helpers import find_untolerated_taint

    def blocking(taint: Taint) -> bool:
        return taint.effect in ("NoSchedule", "NoExecute")

    return find_untolerated_taint(node.spec.taints, tolerations, blocking) is None


def _pin_to_node(spec: dict[str, Any], node: str) -> None:
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    affinity = spec.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [term]}
    else:
        required["nodeSelectorTerms"] = [term]
