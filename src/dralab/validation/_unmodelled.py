"""Feature gates dralab accepts but does not model yet: refuse input that relies on them.

With ``GenericWorkload`` on, PodGroups and Workloads drive gang scheduling;
with ``DRAWorkloadResourceClaims`` on, a pod claim that matches its PodGroup's
claim uses one claim per PodGroup, shared by the group's pods, instead of one
per pod. dralab has neither, and answering as if the gates were off would
give a different, wrong allocation without a word (one device per pod
instead of one per group). So when such a gate is on and the input uses
what it governs (PodGroups, Workloads, grouped pods and their claims, claims
reserved for a PodGroup), every place that uses it is reported and the input
refused.

With the gates off the same input means what upstream makes of it then: the
API server drops the fields (dralab's validation reports them as gated), and
pods get their own claims.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from dralab.api.errors import ErrorType, FieldError
from dralab.api.features import FeatureGates, Gate

__all__ = ["check_unmodelled_gates", "not_modelled"]

_SCHEDULING_GROUP: Final = "scheduling.k8s.io/"
_RESOURCE_GROUP: Final = "resource.k8s.io/"
_WORKLOAD_KINDS: Final = frozenset({"PodGroup", "Workload"})
# Where each kind keeps its pod spec.
_POD_SPEC_PATHS: Final[Mapping[tuple[str, str], tuple[str, ...]]] = {
    ("v1", "Pod"): ("spec",),
    ("batch/v1", "Job"): ("spec", "template", "spec"),
    ("batch/v1", "CronJob"): ("spec", "jobTemplate", "spec", "template", "spec"),
    ("apps/v1", "Deployment"): ("spec", "template", "spec"),
    ("apps/v1", "StatefulSet"): ("spec", "template", "spec"),
    ("apps/v1", "ReplicaSet"): ("spec", "template", "spec"),
    ("apps/v1", "DaemonSet"): ("spec", "template", "spec"),
}


def not_modelled(gate: str) -> str:
    """The message for input that needs ``gate``, which dralab does not model."""
    return f"feature gate {gate} is not modelled by dralab yet"


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _pod_spec(data: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    fields = _POD_SPEC_PATHS.get((str(data.get("apiVersion")), str(data.get("kind"))))
    if fields is None:
        return None
    value: Any = data
    for field in fields:
        value = _map(value).get(field)
    return ".".join(fields), _map(value)


def _uses(data: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(gate, field path) for every use of an unmodelled gate's feature in one object."""
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if isinstance(api_version, str) and api_version.startswith(_SCHEDULING_GROUP) \
            and isinstance(kind, str) and kind in _WORKLOAD_KINDS:
        yield Gate.GENERIC_WORKLOAD, "kind"
        spec = _map(data.get("spec"))
        if kind == "PodGroup" and spec.get("resourceClaims"):
            yield Gate.DRA_WORKLOAD_RESOURCE_CLAIMS, "spec.resourceClaims"
        templates = spec.get("podGroupTemplates") if kind == "Workload" else None
        for i, template in enumerate(templates if isinstance(templates, list) else ()):
            if _map(template).get("resourceClaims"):
                yield (Gate.DRA_WORKLOAD_RESOURCE_CLAIMS,
                       f"spec.podGroupTemplates[{i}].resourceClaims")
        return
    if isinstance(api_version, str) and api_version.startswith(_RESOURCE_GROUP) \
            and kind == "ResourceClaim":
        # A claim in use by a whole PodGroup (written with the gate on).
        reserved = _map(data.get("status")).get("reservedFor")
        for i, ref in enumerate(reserved if isinstance(reserved, list) else ()):
            if _map(ref).get("resource") == "podgroups":
                yield Gate.DRA_WORKLOAD_RESOURCE_CLAIMS, f"status.reservedFor[{i}]"
        return
    found = _pod_spec(data)
    if found is None:
        return
    path, spec = found
    if spec.get("schedulingGroup") is None:
        return
    yield Gate.GENERIC_WORKLOAD, f"{path}.schedulingGroup"
    if spec.get("resourceClaims"):
        # Entries matching the PodGroup's claims would resolve to the group's claim.
        yield Gate.DRA_WORKLOAD_RESOURCE_CLAIMS, f"{path}.resourceClaims"


def check_unmodelled_gates(objects: Sequence[Any], features: FeatureGates
                           ) -> list[tuple[int, FieldError]]:
    """(object index, error) for each use of a gate that is on but not modelled. Pure."""
    enabled = {g for g in (Gate.GENERIC_WORKLOAD, Gate.DRA_WORKLOAD_RESOURCE_CLAIMS)
               if features.is_enabled(g)}
    if not enabled:
        return []
    problems: list[tuple[int, FieldError]] = []
    for n, obj in enumerate(objects):
        for gate, path in _uses(_map(obj)):
            if gate in enabled:
                problems.append((n, FieldError(path=path, type=ErrorType.FORBIDDEN,
                                               detail=not_modelled(gate))))
    return problems
