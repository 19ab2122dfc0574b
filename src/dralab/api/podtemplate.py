"""Pod-template access for every kind that carries one: read it, or write a new one.

A Pod is its own template; Job, Deployment, ReplicaSet, StatefulSet and DaemonSet
carry ``spec.template``; a CronJob ``spec.jobTemplate.spec.template``. Code that
looks at or rewrites "the pods of a workload" (the simulator's job kinds, the
workload controllers, a migration assistant) goes through these functions
instead of knowing each kind's path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from .base import KubeObject
from .core import Pod, PodTemplateSpec
from .workloads import CronJob, DaemonSet, Deployment, Job, ReplicaSet, StatefulSet

__all__ = [
    "POD_TEMPLATE_KINDS",
    "pod_template",
    "pod_template_data",
    "template_path",
    "with_pod_template",
]

# Kinds whose documents carry a pod template (ReplicationController: read as documents
# only; dralab does not model it as an object).
POD_TEMPLATE_KINDS = ("Job", "CronJob", "Deployment", "StatefulSet", "ReplicaSet", "DaemonSet",
                      "ReplicationController")

Carrier = TypeVar("Carrier", bound=KubeObject)

_CARRIERS = (Job, Deployment, ReplicaSet, StatefulSet, DaemonSet)
_TEMPLATE_METADATA = ("labels", "annotations")


def template_path(kind: str) -> str | None:
    """Where a kind's pod template is in its document (``spec.template``; for a Pod
    the pod itself, ``""``); None for kinds without one."""
    if kind == "Pod":
        return ""
    if kind == "CronJob":
        return "spec.jobTemplate.spec.template"
    return "spec.template" if kind in POD_TEMPLATE_KINDS else None


def _as_map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def pod_template_data(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The pod template a plain document carries (``metadata`` + ``spec``), or None;
    the document's own maps, not copies."""
    kind = data.get("kind")
    if kind == "Pod":
        return {"metadata": _as_map(data.get("metadata")), "spec": data.get("spec")}
    if kind not in POD_TEMPLATE_KINDS:
        return None
    spec = _as_map(data.get("spec"))
    if kind == "CronJob":
        spec = _as_map(_as_map(spec.get("jobTemplate")).get("spec"))
    template = spec.get("template")
    return template if isinstance(template, dict) else None


def pod_template(obj: KubeObject) -> PodTemplateSpec | None:
    """The pod template of ``obj`` (for a Pod: its labels, annotations and spec);
    None for kinds without one."""
    if isinstance(obj, Pod):
        meta = {k: dict(v) for k in _TEMPLATE_METADATA if (v := getattr(obj.metadata, k))}
        return PodTemplateSpec(metadata=meta, spec=obj.spec)
    if isinstance(obj, CronJob):
        return obj.spec.job_template.spec.template
    if isinstance(obj, _CARRIERS):
        return obj.spec.template
    return None


def with_pod_template(obj: Carrier, template: PodTemplateSpec) -> Carrier:
    """A copy of ``obj`` whose pods are made from ``template`` (for a Pod: its spec,
    labels and annotations). The copy has no raw document (it would no longer match).
    TypeError for kinds without a pod template."""
    replace = msgspec.structs.replace
    out: KubeObject
    if isinstance(obj, Pod):
        meta = replace(obj.metadata, **{k: dict(_as_map(template.metadata.get(k)))
                                        for k in _TEMPLATE_METADATA})
        out = replace(obj, metadata=meta, spec=template.spec)
    elif isinstance(obj, CronJob):
        job = obj.spec.job_template
        job = replace(job, spec=replace(job.spec, template=template))
        out = replace(obj, spec=replace(obj.spec, job_template=job))
    elif isinstance(obj, _CARRIERS):
        out = replace(obj, spec=replace(obj.spec, template=template))
    else:
        raise TypeError(f"{obj.kind or type(obj).__name__} carries no pod template")
    out = replace(out, raw=None)
    assert isinstance(out, type(obj))
    return out
