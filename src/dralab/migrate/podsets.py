"""Where the pods of a workload are described: every pod template a manifest carries.

Built-in kinds go through ``dralab.api.podtemplate`` (one template each); the
custom resources people run GPU work with (JobSet, LeaderWorkerSet, Kubeflow
jobs and runtimes, KServe, KubeRay) carry several, one per role: ``crdsets``. A
``PodSet`` names the pod spec by its path in the document (``podsetcore``), so the
same path edits a plain dict or a round-trip YAML tree. Pure: plain documents in,
values out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dralab.api.podtemplate import template_path

from .crdsets import CRD_KINDS, crd_workload
from .podsetcore import (
    ManifestWorkload,
    PathKey,
    PodSet,
    at_path,
    count_of,
    identity,
    labels_at,
    path_text,
)

__all__ = [
    "CUSTOM_KINDS",
    "ManifestWorkload",
    "PathKey",
    "PodSet",
    "at_path",
    "identity",
    "path_text",
    "workload_of",
]

# Kinds read here beyond the built-in pod-template carriers (their API groups vary by version).
CUSTOM_KINDS = CRD_KINDS


def _split(path: str) -> tuple[PathKey, ...]:
    return tuple(path.split(".")) if path else ()


def _builtin(kind: str, data: Mapping[str, Any]) -> tuple[tuple[PodSet, ...], bool] | None:
    where = template_path(kind)
    if where is None:
        return None
    template = _split(where)
    spec_path = (*template, "spec")
    if at_path(data, spec_path) is None and kind != "Pod":
        return (), False
    spec = at_path(data, ("spec",)) or {}
    gang = False
    if kind == "Pod":
        pods: int | None = 1
    elif kind == "DaemonSet":
        pods = None
    elif kind in ("Job", "CronJob"):
        job = spec if kind == "Job" else at_path(spec, ("jobTemplate", "spec")) or {}
        pods = count_of(job.get("parallelism"), 1) if isinstance(job, Mapping) else 1
        gang = isinstance(job, Mapping) and job.get("completionMode") == "Indexed" \
            and (pods or 0) > 1
    else:
        pods = count_of(spec.get("replicas"), 1) if isinstance(spec, Mapping) else 1
    meta = template if kind != "Pod" else ()
    return (PodSet("", spec_path, pods, labels_at(data, meta)),), gang


def workload_of(data: Any) -> ManifestWorkload | None:
    """The workload a plain document describes, or None for kinds that make no pods."""
    if not isinstance(data, Mapping) or not isinstance(data.get("kind"), str):
        return None
    kind, namespace, name = identity(data)
    builtin = _builtin(kind, data)
    if builtin is not None:
        pod_sets, gang = builtin
        return ManifestWorkload(kind, namespace, str(name), pod_sets, gang)
    return crd_workload(data, kind, namespace, name)
