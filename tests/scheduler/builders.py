"""Small builders for scheduler scenarios: nodes, pods, priority classes, workloads.

Objects are built as documents and decoded, exactly as loaded manifests are, so
fields dralab keeps only in the raw document (e.g. preemptionPolicy) work too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dralab.api.base import KubeObject
from dralab.api.codec import decode
from dralab.api.core import Node, Pod


def _taint(text: str) -> dict[str, str]:
    """``key=value:Effect`` or ``key:Effect``."""
    body, _, effect = text.rpartition(":")
    key, sep, value = body.partition("=")
    out = {"key": key, "effect": effect}
    if sep:
        out["value"] = value
    return out


def node(name: str, cpu: str = "8", memory: str = "32Gi", *,
         labels: Mapping[str, str] | None = None, taints: Sequence[str] = (),
         gpus: int = 0, mig: Mapping[str, int] | None = None, pods: int = 110,
         unschedulable: bool = False, extra: Mapping[str, str] | None = None) -> Node:
    allocatable: dict[str, Any] = {"cpu": cpu, "memory": memory, "pods": str(pods)}
    if gpus:
        allocatable["nvidia.com/gpu"] = str(gpus)
    for profile, count in (mig or {}).items():
        allocatable[f"nvidia.com/mig-{profile}"] = str(count)
    allocatable.update(extra or {})
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = [_taint(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    doc = {"apiVersion": "v1", "kind": "Node",
           "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                 **(labels or {})}},
           "spec": spec, "status": {"allocatable": allocatable, "capacity": allocatable}}
    obj = decode(doc)
    assert isinstance(obj, Node)
    return obj


def toleration(key: str | None = None, effect: str | None = None, value: str | None = None,
               operator: str | None = None) -> dict[str, str]:
    out = {}
    for k, v in (("key", key), ("effect", effect), ("value", value), ("operator", operator)):
        if v is not None:
            out[k] = v
    return out


def pod_spec(cpu: str | None = None, memory: str | None = None, *, gpus: int = 0,
             mig: Mapping[str, int] | None = None, priority: int | None = None,
             priority_class: str | None = None, node_selector: Mapping[str, str] | None = None,
             tolerations: Sequence[Mapping[str, str]] = (),
             required: Sequence[Mapping[str, Any]] | None = None,
             preferred: Sequence[tuple[int, Mapping[str, Any]]] = (),
             gates: Sequence[str] = (), scheduler_name: str | None = None,
             preemption_policy: str | None = None, node_name: str | None = None,
             extra: Mapping[str, str] | None = None,
             claims: Sequence[Mapping[str, str]] = ()) -> dict[str, Any]:
    requests: dict[str, str] = {}
    if cpu:
        requests["cpu"] = cpu
    if memory:
        requests["memory"] = memory
    if gpus:
        requests["nvidia.com/gpu"] = str(gpus)
    for profile, count in (mig or {}).items():
        requests[f"nvidia.com/mig-{profile}"] = str(count)
    requests.update(extra or {})
    container: dict[str, Any] = {"name": "main", "image": "registry.k8s.io/pause:3.10"}
    if requests:
        limits = {k: v for k, v in requests.items() if "/" in k}
        container["resources"] = {"requests": requests, **({"limits": limits} if limits else {})}
    spec: dict[str, Any] = {"containers": [container]}
    if priority is not None:
        spec["priority"] = priority
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    node_affinity: dict[str, Any] = {}
    if required is not None:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [dict(t) for t in required]}
    if preferred:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "preference": dict(t)} for w, t in preferred]
    if node_affinity:
        spec["affinity"] = {"nodeAffinity": node_affinity}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if scheduler_name:
        spec["schedulerName"] = scheduler_name
    if preemption_policy:
        spec["preemptionPolicy"] = preemption_policy
    if node_name:
        spec["nodeName"] = node_name
    if claims:
        spec["resourceClaims"] = [dict(c) for c in claims]
    return spec


def pod(name: str, cpu: str | None = None, memory: str | None = None, *,
        namespace: str | None = "default", labels: Mapping[str, str] | None = None,
        **kwargs: Any) -> Pod:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    obj = decode({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                  "spec": pod_spec(cpu, memory, **kwargs)})
    assert isinstance(obj, Pod)
    return obj


def priority_class(name: str, value: int, *, preemption_policy: str | None = None,
                   global_default: bool = False) -> KubeObject:
    doc: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                           "metadata": {"name": name}, "value": value}
    if preemption_policy:
        doc["preemptionPolicy"] = preemption_policy
    if global_default:
        doc["globalDefault"] = True
    return decode(doc)


def workload(kind: str, name: str, spec: Mapping[str, Any], *, namespace: str = "default",
             template_labels: Mapping[str, str] | None = None,
             metadata: Mapping[str, Any] | None = None, **pod_kwargs: Any) -> KubeObject:
    """A Job / Deployment / ReplicaSet / StatefulSet / DaemonSet / CronJob document."""
    labels = dict(template_labels or {"app": name})
    template = {"metadata": {"labels": labels}, "spec": pod_spec(**pod_kwargs)}
    api = "batch/v1" if kind in ("Job", "CronJob") else "apps/v1"
    body = dict(spec)
    if kind == "CronJob":
        body.setdefault("jobTemplate", {"spec": {"template": template}})
    else:
        body.setdefault("template", template)
        if kind != "Job":
            body.setdefault("selector", {"matchLabels": labels})
    if kind == "Job":
        body["template"]["spec"].setdefault("restartPolicy", "Never")
    if kind == "CronJob":
        body["jobTemplate"]["spec"]["template"]["spec"].setdefault("restartPolicy", "Never")
    return decode({"apiVersion": api, "kind": kind,
                   "metadata": {"name": name, "namespace": namespace, **(metadata or {})},
                   "spec": body})


def match(key: str, operator: str, *values: str) -> dict[str, Any]:
    """A node selector term with one matchExpressions requirement."""
    req: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        req["values"] = list(values)
    return {"matchExpressions": [req]}


# --- running -----------------------------------------------------------------------

# With DRA on (the default), DynamicResources' PostFilter runs before preemption
# and says so in the message, exactly as in real clusters.
DRA_POST_FILTER = "no new claims to deallocate, "


def config(*profiles: Mapping[str, Any], **top: Any) -> dict[str, Any]:
    """A KubeSchedulerConfiguration document."""
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            **({"profiles": list(profiles)} if profiles else {}), **top}


def fit_args(strategy: str, resources: Sequence[tuple[str, int]] = (),
             shape: Sequence[tuple[int, int]] = ()) -> dict[str, Any]:
    scoring: dict[str, Any] = {"type": strategy}
    if resources:
        scoring["resources"] = [{"name": n, "weight": w} for n, w in resources]
    if shape:
        scoring["requestedToCapacityRatio"] = {
            "shape": [{"utilization": u, "score": s} for u, s in shape]}
    return {"name": "NodeResourcesFit", "args": {"scoringStrategy": scoring}}


def placements(result: Any) -> dict[str, str | None]:
    """Pod name -> node (None when not placed), for every pod the run scheduled."""
    out: dict[str, str | None] = {u.pod.metadata.name: None for u in result.unplaced}
    out.update({p.pod.metadata.name: p.node for p in result.placed})
    return out
