"""The shapes every pod-set reader shares: a pod set, a workload, and field paths.

A ``PodSet`` names the pod spec by its path in the document, so the same path edits a
plain dict or a round-trip YAML tree. Kept apart from the readers (``podsets`` for
the built-in kinds and the jobs, ``crdsets`` for KServe, Ray and Kubeflow trainer)
so each reader imports these without importing the others. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ManifestWorkload",
    "PathKey",
    "PodSet",
    "at_path",
    "count_of",
    "identity",
    "labels_at",
    "path_text",
]

PathKey = str | int


@dataclass(frozen=True, slots=True)
class PodSet:
    """One pod template of a workload.

    ``spec_path``: the pod spec's path in the document (``()`` when the kind has none
    dralab knows: the containers are then found by their shape). ``pods``: how many
    pods the template makes (None: one per node, a DaemonSet; or unknown for
    ``ManifestWorkload.unknown_pods``). ``extra_containers``: paths, inside the pod
    spec, of mappings that are one more container (KServe's ``model``,
    ``tensorflow``, ...; a TrainJob's ``trainer``). ``resources_key``: the key
    holding such a container's resources (``resourcesPerNode`` for a TrainJob).
    ``gpu_count_param``: (path of a mapping in the document, key) where the conversion
    writes the GPUs a pod holds, unless already set, because the controller reads that
    count from the ``nvidia.com/gpu`` limit the conversion removes (KubeRay's
    ``rayStartParams`` ``num-gpus``).
    """

    role: str
    spec_path: tuple[PathKey, ...]
    pods: int | None
    labels: Mapping[str, Any]
    extra_containers: tuple[tuple[PathKey, ...], ...] = ()
    resources_key: str = "resources"
    gpu_count_param: tuple[tuple[PathKey, ...], str] | None = None


@dataclass(frozen=True, slots=True)
class ManifestWorkload:
    """A document that makes pods, and its pod sets. ``gang``: its pods must run together
    (several pods of one JobSet, LeaderWorkerSet group, training job or indexed Job).
    ``not_convertible``: why dralab reads its GPUs but cannot rewrite it ("" when it
    can). ``template_only``: a template for other objects' pods (a Kubeflow
    TrainingRuntime): its pod counts are those of one job with the template's
    defaults, and it makes no pods itself. ``unknown_pods``: a kind whose pod counts
    dralab cannot read."""

    kind: str
    namespace: str | None
    name: str
    pod_sets: tuple[PodSet, ...]
    gang: bool
    not_convertible: str = ""
    template_only: bool = False
    unknown_pods: bool = False

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


def count_of(value: Any, default: int) -> int:
    """A replica count as written; a non-integer (an unrendered template) counts as the default."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else default


def labels_at(data: Any, meta_path: Sequence[PathKey]) -> Mapping[str, Any]:
    """The labels of the template at ``meta_path`` (its ``metadata.labels``), or {}."""
    labels = at_path(data, (*meta_path, "metadata", "labels"))
    return labels if isinstance(labels, Mapping) else {}


def identity(data: Any) -> tuple[str, str | None, str]:
    """(kind, namespace, name) of a plain document, with placeholders for what is missing.
    An object given only ``generateName`` is named ``<generateName>*``: the API server
    adds a random suffix, which no manifest can know."""
    if not isinstance(data, Mapping):
        return "<no kind>", None, "<no name>"
    kind = data.get("kind") if isinstance(data.get("kind"), str) else "<no kind>"
    meta = data.get("metadata") if isinstance(data.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    name = meta.get("name") if isinstance(meta.get("name"), str) else None
    if name is None:
        base = meta.get("generateName")
        name = f"{base}*" if isinstance(base, str) and base else "<no name>"
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
    return str(kind), namespace, str(name)
