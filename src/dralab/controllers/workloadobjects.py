"""The objects workload controllers create, named and labelled as they name them.

This module only builds; what to build (which replicas, indexes, ordinals or
nodes are missing) is decided in ``workloads``.

* Job pods: ``<job>-<5 random>`` (Indexed: ``<job>-<index>-<5 random>``), job-name /
  controller-uid labels, the job-tracking finalizer.
* The Job of a CronJob: ``<cronjob>-<scheduled time in minutes since the epoch>``.
* The ReplicaSet of a Deployment: ``<deploy>-<pod-template-hash>``, its selector and
  template labels extended with the hash.
* ReplicaSet pods: ``<rs>-<5 random>``.
* StatefulSet pods: ``<sts>-<ordinal>``, with hostname and subdomain.
* DaemonSet pods: ``<ds>-<5 random>``, pinned to their node with a ``matchFields
  metadata.name In [node]`` affinity term as the DaemonSet controller does, with the
  daemon tolerations added.

Owners are passed as "heads": plain ``apiVersion``/``kind``/``metadata`` mappings
with name, namespace and uid set. Random parts (name suffixes, UIDs) come from the
``NameGenerator``. The pod-template-hash is FNV-32a over the template's canonical
JSON, encoded like upstream's SafeEncodeString: same shape, not the same value as a
real cluster's. Pods are returned as plain documents; the caller decodes them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import msgspec

from dralab.allocator.nodes import NodeSelectorError, NodeView, compile_node_selector
from dralab.api.base import KubeObject
from dralab.api.core import Node, NodeSelector, Pod, Toleration
from dralab.api.quantity import Quantity
from dralab.api.taints import tolerates

from .generatednames import ALPHANUMS, NameGenerator

__all__ = [
    "ALPHANUMS",
    "PodFactory",
    "daemon_template",
    "pinned_node",
    "raw_template",
    "safe_encode",
    "should_run_daemon",
    "template_hash",
]

POD_TEMPLATE_HASH = "pod-template-hash"
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
CRON_SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"

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


def template_hash(template: Any, collisions: int = 0) -> str:
    """The pod-template-hash of ``template``; ``collisions`` > 0 varies it when the
    name it gives is taken (upstream's collisionCount)."""
    text = json.dumps(template, sort_keys=True, separators=(",", ":"), default=str)
    if collisions:
        text += str(collisions)
    return safe_encode(str(_fnv32a(text.encode())))


def _plain(value: Any) -> Any:
    def hook(obj: Any) -> Any:
        if isinstance(obj, Quantity):
            return str(obj)
        raise NotImplementedError(type(obj).__name__)
    return msgspec.to_builtins(value, enc_hook=hook)


def raw_template(owner: KubeObject, *path: str) -> dict[str, Any]:
    """The template at ``path`` as written (unmodelled fields kept), deep-copied; the
    typed value when the object has no raw document."""
    raw: Any = owner.raw
    for key in path:
        raw = raw.get(key) if isinstance(raw, dict) else None
    if isinstance(raw, dict):
        return copy.deepcopy(raw)
    typed: Any = owner
    for key in path:
        typed = getattr(typed, {"jobTemplate": "job_template"}.get(key, key), None)
    out = _plain(typed) if typed is not None else {}
    return out if isinstance(out, dict) else {}


def _owner_ref(owner: Mapping[str, Any]) -> dict[str, Any]:
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"],
            "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}


def _template_meta(template: dict[str, Any]) -> dict[str, Any]:
    meta = template.get("metadata")
    if not isinstance(meta, dict):
        meta = template["metadata"] = {}
    return meta


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


class PodFactory:
    """Builds the objects controllers create. Every name and UID comes from ``names``."""

    def __init__(self, names: NameGenerator) -> None:
        self.names = names

    # --- heads ------------------------------------------------------------------------
    def head(self, obj: KubeObject) -> dict[str, Any]:
        """apiVersion/kind/metadata of ``obj`` as plain data, namespace and uid set."""
        meta = _plain(obj.metadata)
        meta.setdefault("namespace", "default")
        if not meta.get("uid"):
            meta["uid"] = self.names.uid()
        return {"apiVersion": obj.api_version or type(obj).API_VERSION,
                "kind": obj.kind or type(obj).KIND, "metadata": meta}

    def replica_set_head(self, deploy: Mapping[str, Any], template: dict[str, Any],
                         selector: Mapping[str, Any] | None) -> tuple[dict[str, Any],
                                                                    dict[str, Any]]:
        """The new ReplicaSet of Deployment ``deploy``: (head, pod template with the
        pod-template-hash label). The head carries the hashed selector as
        ``spec.selector`` for matching."""
        namespace, name = deploy["metadata"]["namespace"], deploy["metadata"]["name"]
        collisions = 0
        pod_hash = template_hash(template)
        while self.names.is_taken(("apps", "ReplicaSet", namespace, f"{name}-{pod_hash}")):
            collisions += 1
            pod_hash = template_hash(template, collisions)
        rs_name = f"{name}-{pod_hash}"
        self.names.take(("apps", "ReplicaSet", namespace, rs_name))
        meta = _template_meta(template)
        meta["labels"] = {**_str_map(meta.get("labels")), POD_TEMPLATE_HASH: pod_hash}
        rs_meta = {"name": rs_name, "namespace": namespace, "uid": self.names.uid(),
                   "labels": dict(meta["labels"]), "ownerReferences": [_owner_ref(deploy)]}
        rs_selector = dict(selector) if isinstance(selector, Mapping) else {}
        rs_selector["matchLabels"] = {**_str_map(rs_selector.get("matchLabels")),
                                      POD_TEMPLATE_HASH: pod_hash}
        head = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": rs_meta,
                "spec": {"selector": rs_selector}}
        return head, template

    def cron_job_head(self, cron: Mapping[str, Any], job_template: Mapping[str, Any],
                      scheduled: datetime) -> dict[str, Any]:
        """The Job a CronJob creates for the activation at ``scheduled``."""
        namespace, name = cron["metadata"]["namespace"], cron["metadata"]["name"]
        t_meta = job_template.get("metadata")
        t_meta = t_meta if isinstance(t_meta, Mapping) else {}
        job_name = f"{name}-{int(scheduled.timestamp()) // 60}"
        self.names.take(("batch", "Job", namespace, job_name))
        job_meta: dict[str, Any] = {
            "name": job_name, "namespace": namespace, "uid": self.names.uid(),
            "labels": _str_map(t_meta.get("labels")),
            "annotations": {**_str_map(t_meta.get("annotations")),
                            CRON_SCHEDULED: scheduled.isoformat().replace("+00:00", "Z")},
            "ownerReferences": [_owner_ref(cron)]}
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta}

    # --- pods -------------------------------------------------------------------------
    def _pod(self, owner: Mapping[str, Any], template: Mapping[str, Any], name: str,
             extra_labels: Mapping[str, str] | None = None,
             annotations: Mapping[str, str] | None = None) -> dict[str, Any]:
        t_meta = template.get("metadata")
        t_meta = t_meta if isinstance(t_meta, Mapping) else {}
        namespace = owner["metadata"]["namespace"]
        labels = {**_str_map(t_meta.get("labels")), **(extra_labels or {})}
        meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": self.names.uid(),
                                "ownerReferences": [_owner_ref(owner)]}
        if labels:
            meta["labels"] = labels
        merged = {**_str_map(t_meta.get("annotations")), **(annotations or {})}
        if merged:
            meta["annotations"] = merged
        finalizers = t_meta.get("finalizers")
        if isinstance(finalizers, list) and finalizers:
            meta["finalizers"] = list(finalizers)
        self.names.take(("", "Pod", namespace, name))
        spec = template.get("spec")
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                "spec": copy.deepcopy(spec) if isinstance(spec, dict) else {}}

    def _generated(self, owner: Mapping[str, Any], prefix: str) -> str:
        return self.names.generate("", "Pod", owner["metadata"]["namespace"], prefix)

    def job_pod(self, job: Mapping[str, Any], template: Mapping[str, Any],
                index: int | None) -> dict[str, Any]:
        """One pod of Job ``job``; ``index`` is its completion index (Indexed jobs)."""
        job_name, uid = job["metadata"]["name"], job["metadata"]["uid"]
        labels = {"batch.kubernetes.io/controller-uid": uid,
                  "batch.kubernetes.io/job-name": job_name,
                  "controller-uid": uid, "job-name": job_name}
        tracked = dict(template)
        t_meta = tracked.get("metadata")
        tracked["metadata"] = {**(t_meta if isinstance(t_meta, Mapping) else {}),
                               "finalizers": [JOB_TRACKING_FINALIZER]}
        if index is None:
            return self._pod(job, tracked, self._generated(job, f"{job_name}-"), labels)
        name = self._generated(job, f"{job_name}-{index}-")
        pod = self._pod(job, tracked, name, {**labels, COMPLETION_INDEX: str(index)},
                        {COMPLETION_INDEX: str(index)})
        pod["spec"]["hostname"] = f"{job_name}-{index}"
        return pod

    def replica_pod(self, rs: Mapping[str, Any], template: Mapping[str, Any]) -> dict[str, Any]:
        return self._pod(rs, template, self._generated(rs, f"{rs['metadata']['name']}-"))

    def stateful_pod(self, sts: Mapping[str, Any], template: Mapping[str, Any], ordinal: int,
                     service_name: str | None, revision: str) -> dict[str, Any]:
        """Pod ``<sts>-<ordinal>``; ``revision`` is ``<sts>-<template_hash(template)>``."""
        name = sts["metadata"]["name"]
        pod_name = f"{name}-{ordinal}"
        pod = self._pod(sts, template, pod_name, {
            "apps.kubernetes.io/pod-index": str(ordinal),
            "controller-revision-hash": revision,
            "statefulset.kubernetes.io/pod-name": pod_name})
        pod["spec"]["hostname"] = pod_name
        if service_name:
            pod["spec"]["subdomain"] = service_name
        return pod

    def daemon_pod(self, ds: Mapping[str, Any], template: Mapping[str, Any],
                   node: str, revision: str) -> dict[str, Any]:
        """A pod of DaemonSet ``ds`` for ``node``; ``template`` comes from
        ``daemon_template``, ``revision`` is its ``template_hash``."""
        pod = self._pod(ds, template, self._generated(ds, f"{ds['metadata']['name']}-"), {
            "controller-revision-hash": revision, "pod-template-generation": "1"})
        _pin_to_node(pod["spec"], node)
        return pod


def daemon_template(template: dict[str, Any]) -> dict[str, Any]:
    """``template`` with the tolerations the DaemonSet controller adds to its pods."""
    spec = template.get("spec")
    if not isinstance(spec, dict):
        spec = template["spec"] = {}
    current = spec.get("tolerations")
    tolerations = [t for t in current if isinstance(t, dict)] if isinstance(current, list) \
        else []
    wanted = list(DAEMON_TOLERATIONS)
    if spec.get("hostNetwork"):
        wanted.append(NETWORK_UNAVAILABLE)
    for key, effect in wanted:
        if not any(t.get("key") == key and t.get("effect") == effect for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": effect})
    spec["tolerations"] = tolerations
    return template


def should_run_daemon(node: Node, selector: Mapping[str, str], required: NodeSelector | None,
                      tolerations: list[Toleration]) -> bool:
    """Whether a daemon pod belongs on ``node``: node selector, required node
    affinity, and no untolerated NoSchedule/NoExecute taint."""
    labels = node.metadata.labels
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    if required is not None:
        try:
            if not compile_node_selector(required).matches(NodeView.of(node)):
                return False
        except NodeSelectorError:
            return False
    # The DaemonSet controller's check (v1helper.FindMatchingUntoleratedTaint over the
    # NoSchedule and NoExecute taints), on the API's toleration rule.
    return all(any(tolerates(toleration, taint) for toleration in tolerations)
               for taint in node.spec.taints if taint.effect in ("NoSchedule", "NoExecute"))


def _child_map(parent: dict[str, Any], key: str) -> dict[str, Any]:
    value = parent.get(key)
    if not isinstance(value, dict):
        value = parent[key] = {}
    return value


def _pin_to_node(spec: dict[str, Any], node: str) -> None:
    # Replaces the terms of the required node affinity (other fields of it stay), as
    # the DaemonSet controller does.
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    node_affinity = _child_map(_child_map(spec, "affinity"), "nodeAffinity")
    _child_map(node_affinity, "requiredDuringSchedulingIgnoredDuringExecution")[
        "nodeSelectorTerms"] = [term]


def pinned_node(pod: KubeObject) -> str | None:
    """The node a daemon pod is meant for: spec.nodeName, else the single node its
    required ``matchFields metadata.name In`` term names (upstream's
    GetTargetNodeName)."""
    if not isinstance(pod, Pod):
        return None
    if pod.spec.node_name:
        return pod.spec.node_name
    affinity = pod.spec.affinity.node_affinity if pod.spec.affinity else None
    required = affinity.required_during_scheduling_ignored_during_execution if affinity \
        else None
    for term in required.node_selector_terms if required else ():
        for field in term.match_fields:
            if field.key == "metadata.name" and field.operator == "In" \
                    and len(field.values) == 1:
                return field.values[0]
    return None
