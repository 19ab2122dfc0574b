"""Where the pods of a workload are described: every pod template a manifest carries.

Built-in kinds go through ``dralab.api.podtemplate`` (one template each); the
custom resources people run GPU work with carry several, one per role:
JobSet (``spec.replicatedJobs[*]``), LeaderWorkerSet (leader and workers),
Kubeflow training jobs (``spec.*ReplicaSpecs``: PyTorchJob, TFJob, MPIJob, ...)
and KServe InferenceService components (``spec.predictor`` is itself a pod
spec whose ``model`` is one more container). A ``PodSet`` names the pod spec by
its path in the document, so the same path edits a plain dict or a round-trip
YAML tree. Pure: plain documents in, values out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dralab.api.podtemplate import template_path

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

PathKey = str | int

# Kinds read here beyond the built-in pod-template carriers (their API groups vary by version).
CUSTOM_KINDS = ("JobSet", "LeaderWorkerSet", "InferenceService", "PyTorchJob", "TFJob",
                "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob")
_KSERVE_COMPONENTS = ("predictor", "transformer", "explainer")


@dataclass(frozen=True, slots=True)
class PodSet:
    """One pod template of a workload.

    ``spec_path``: the pod spec's path in the document. ``pods``: how many pods the
    template makes (None: one per node, a DaemonSet). ``extra_containers``: keys of
    the pod spec holding one more container (KServe's ``model``).
    """

    role: str
    spec_path: tuple[PathKey, ...]
    pods: int | None
    labels: Mapping[str, Any]
    extra_containers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ManifestWorkload:
    """A document that makes pods, and its pod sets. ``gang``: its pods must run together
    (several pods of one JobSet, LeaderWorkerSet group, training job or indexed Job)."""

    kind: str
    namespace: str | None
    name: str
    pod_sets: tuple[PodSet, ...]
    gang: bool

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def total_pods(self) -> int | None:
        counts = [p.pods for p in self.pod_sets]
        return None if any(c is None for c in counts) else sum(c or 0 for c in counts)


def at_path(data: Any, path: Sequence[PathKey]) -> Any:
    """The value at ``path`` or None when any step is missing or of the wrong type."""
    for key in path:
        if isinstance(key, int):
            if not isinstance(data, list) or not 0 <= key < len(data):
                return None
        elif not isinstance(data, Mapping) or key not in data:
            return None
        data = data[key]
    return data


def path_text(path: Sequence[PathKey]) -> str:
    """``spec.template.spec.containers[0]``: a field path as error lines show it."""
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else key)
    return out


def _int(value: Any, default: int) -> int:
    """A replica count as written; a non-integer (an unrendered template) counts as the default."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else default


def _labels(data: Any, meta_path: Sequence[PathKey]) -> Mapping[str, Any]:
    labels = at_path(data, (*meta_path, "metadata", "labels"))
    return labels if isinstance(labels, Mapping) else {}


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
        pods = _int(job.get("parallelism"), 1) if isinstance(job, Mapping) else 1
        gang = isinstance(job, Mapping) and job.get("completionMode") == "Indexed" \
            and (pods or 0) > 1
    else:
        pods = _int(spec.get("replicas"), 1) if isinstance(spec, Mapping) else 1
    meta = template if kind != "Pod" else ()
    return (PodSet("", spec_path, pods, _labels(data, meta)),), gang


def _jobset(data: Mapping[str, Any]) -> list[PodSet]:
    out = []
    jobs = at_path(data, ("spec", "replicatedJobs"))
    for i, job in enumerate(jobs if isinstance(jobs, list) else []):
        if not isinstance(job, Mapping):
            continue
        parallelism = _int(at_path(job, ("template", "spec", "parallelism")), 1)
        base = ("spec", "replicatedJobs", i, "template", "spec", "template")
        out.append(PodSet(str(job.get("name", i)), (*base, "spec"),
                          _int(job.get("replicas"), 1) * parallelism, _labels(data, base)))
    return out


def _leader_worker_set(data: Mapping[str, Any]) -> list[PodSet]:
    lwt = at_path(data, ("spec", "leaderWorkerTemplate"))
    if not isinstance(lwt, Mapping):
        return []
    groups = _int(at_path(data, ("spec", "replicas")), 1)
    size = max(1, _int(lwt.get("size"), 1))
    base: tuple[PathKey, ...] = ("spec", "leaderWorkerTemplate")
    out = []
    if isinstance(lwt.get("leaderTemplate"), Mapping):
        out.append(PodSet("leader", (*base, "leaderTemplate", "spec"), groups,
                          _labels(data, (*base, "leaderTemplate"))))
        workers = groups * (size - 1)
    else:  # without a leader template the leader is made from the worker template
        workers = groups * size
    if isinstance(lwt.get("workerTemplate"), Mapping):
        out.append(PodSet("worker", (*base, "workerTemplate", "spec"), workers,
                          _labels(data, (*base, "workerTemplate"))))
    return out


def _training_job(data: Mapping[str, Any]) -> list[PodSet]:
    spec = at_path(data, ("spec",))
    out = []
    for key, replica_specs in (spec.items() if isinstance(spec, Mapping) else ()):
        if not (isinstance(key, str) and key.endswith("ReplicaSpecs")
                and isinstance(replica_specs, Mapping)):
            continue
        for role, role_spec in replica_specs.items():
            if not isinstance(role_spec, Mapping):
                continue
            base = ("spec", key, role, "template")
            out.append(PodSet(str(role), (*base, "spec"), _int(role_spec.get("replicas"), 1),
                              _labels(data, base)))
    return out


def _inference_service(data: Mapping[str, Any]) -> list[PodSet]:
    out = []
    for component in _KSERVE_COMPONENTS:
        spec = at_path(data, ("spec", component))
        if not isinstance(spec, Mapping):
            continue
        extra = tuple(k for k in ("model",) if isinstance(spec.get(k), Mapping))
        labels = spec.get("labels")
        out.append(PodSet(component, ("spec", component), _int(spec.get("minReplicas"), 1),
                          labels if isinstance(labels, Mapping) else {}, extra))
    return out


def identity(data: Any) -> tuple[str, str | None, str]:
    """(kind, namespace, name) of a plain document, with placeholders for what is missing."""
    if not isinstance(data, Mapping):
        return "<no kind>", None, "<no name>"
    kind = data.get("kind") if isinstance(data.get("kind"), str) else "<no kind>"
    meta = data.get("metadata") if isinstance(data.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    name = meta.get("name") if isinstance(meta.get("name"), str) else "<no name>"
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
    return str(kind), namespace, str(name)


def workload_of(data: Any) -> ManifestWorkload | None:
    """The workload a plain document describes, or None for kinds that make no pods."""
    if not isinstance(data, Mapping) or not isinstance(data.get("kind"), str):
        return None
    kind, namespace, name = identity(data)
    builtin = _builtin(kind, data)
    if builtin is not None:
        pod_sets, gang = builtin
        return ManifestWorkload(kind, namespace, str(name), pod_sets, gang)
    if kind == "JobSet":
        sets = _jobset(data)
    elif kind == "LeaderWorkerSet":
        sets = _leader_worker_set(data)
    elif kind == "InferenceService":
        sets = _inference_service(data)
    elif kind in CUSTOM_KINDS:
        sets = _training_job(data)
    else:
        return None
    # Several pods of a JobSet, an LWS group or a training job start and fail together.
    gang = kind != "InferenceService" and sum(p.pods or 0 for p in sets) > 1
    if kind == "LeaderWorkerSet":
        size = _int(at_path(data, ("spec", "leaderWorkerTemplate", "size")), 1)
        gang = size > 1
    return ManifestWorkload(kind, namespace, str(name), tuple(sets), gang)
