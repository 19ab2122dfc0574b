"""The pods a workload makes, as plain Pod documents, for scheduling what-ifs.

Every pod set of a workload gives ``pods`` Pods named ``<workload>[-<role>]-<i>``
(the same names before and after conversion, so runs compare pod by pod) with the
template's labels and the scheduling-relevant part of its pod spec: containers
(name, image, resources), init containers, node selector, affinity,
tolerations, resource claims, priority and topology spread. A KServe
component's ``model`` becomes the ``kserve-container``. DaemonSets (one pod per
node) are skipped; at most ``MAX_PODS_PER_SET`` pods per pod set (bounded).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from .podsets import ManifestWorkload, PodSet, at_path

__all__ = ["MAX_PODS_PER_SET", "workload_pods"]

MAX_PODS_PER_SET = 64
_SPEC_KEYS = ("initContainers", "containers", "nodeSelector", "affinity", "tolerations",
              "resourceClaims", "priority", "topologySpreadConstraints")
_CONTAINER_KEYS = ("name", "image", "resources")
_NAME = re.compile(r"[^a-z0-9-]+")


def _container(data: Any, default_name: str) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        return {"name": default_name, "image": "unknown"}
    out = {k: copy.deepcopy(data[k]) for k in _CONTAINER_KEYS if k in data}
    out.setdefault("name", default_name)
    out.setdefault("image", "unknown")
    return out


def _pod_spec(spec: Mapping[str, Any], pod_set: PodSet) -> dict[str, Any]:
    out: dict[str, Any] = {k: copy.deepcopy(spec[k]) for k in _SPEC_KEYS if k in spec}
    for key in ("initContainers", "containers"):
        if isinstance(out.get(key), list):
            out[key] = [_container(c, f"c{i}") for i, c in enumerate(out[key])]
    extra = [_container(at_path(spec, path), "kserve-container")
             for path in pod_set.extra_containers]
    out["containers"] = extra + list(out.get("containers") or [])
    return out


def workload_pods(document: Any, workload: ManifestWorkload) -> list[dict[str, Any]]:
    """The Pods of ``workload`` (see the module doc)."""
    out = []
    base = _NAME.sub("-", workload.name.lower()).strip("-") or "workload"
    for pod_set in workload.pod_sets:
        spec = at_path(document, pod_set.spec_path)
        if pod_set.pods is None or not isinstance(spec, Mapping):
            continue
        role = _NAME.sub("-", pod_set.role.lower()).strip("-")
        prefix = f"{base}-{role}" if role else base
        for i in range(min(pod_set.pods, MAX_PODS_PER_SET)):
            meta: dict[str, Any] = {"name": f"{prefix[:50]}-{i}",
                                    "namespace": workload.namespace or "default"}
            if pod_set.labels:
                meta["labels"] = {str(k): str(v) for k, v in pod_set.labels.items()}
            out.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                        "spec": _pod_spec(spec, pod_set)})
    return out
