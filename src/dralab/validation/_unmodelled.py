"""Parts of gated features dralab accepts but does not model yet: refuse input that uses them.

dralab models the 1.37 workload-aware scheduling API (gate ``GenericWorkload``:
Workload, PodGroup, pods' ``spec.schedulingGroup``, gang scheduling) and
PodGroup-level claims (gate ``DRAWorkloadResourceClaims``). Two parts of that
API it does not model, and answering as if they were absent would give a
different placement without a word:

* CompositePodGroups (gate ``CompositePodGroup``, alpha): the CompositePodGroup
  kind, a Workload's ``compositePodGroupTemplates`` and a PodGroup's
  ``parentCompositePodGroupName`` (groups of groups, scheduled as a tree);
* topology constraints (gate ``TopologyAwareWorkloadScheduling``):
  ``schedulingConstraints`` of a PodGroup or a Workload's pod group template.

With ``GenericWorkload`` on, every place that uses them is reported and the
input refused. With it off the API server serves none of these kinds and drops
the pod's field (dralab's validation reports it as gated), so nothing is
refused here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from dralab.api.errors import ErrorType, FieldError
from dralab.api.features import FeatureGates, Gate

__all__ = ["check_unmodelled_gates", "not_modelled"]

_SCHEDULING_GROUP: Final = "scheduling.k8s.io/"
COMPOSITE_POD_GROUP: Final = "CompositePodGroup"
TOPOLOGY_AWARE: Final = "TopologyAwareWorkloadScheduling"


def not_modelled(gate: str) -> str:
    """The message for input that needs ``gate``, which dralab does not model."""
    return f"feature gate {gate} is not modelled by dralab yet"


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _uses(data: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(gate, field path) for every use of an unmodelled part in one object."""
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if not isinstance(api_version, str) or not api_version.startswith(_SCHEDULING_GROUP):
        return
    spec = _map(data.get("spec"))
    if kind == COMPOSITE_POD_GROUP:
        yield COMPOSITE_POD_GROUP, "kind"
    elif kind == "PodGroup":
        if spec.get("parentCompositePodGroupName") is not None:
            yield COMPOSITE_POD_GROUP, "spec.parentCompositePodGroupName"
        if spec.get("schedulingConstraints") is not None:
            yield TOPOLOGY_AWARE, "spec.schedulingConstraints"
    elif kind == "Workload":
        if spec.get("compositePodGroupTemplates") is not None:
            yield COMPOSITE_POD_GROUP, "spec.compositePodGroupTemplates"
        templates = spec.get("podGroupTemplates")
        for i, template in enumerate(templates if isinstance(templates, list) else ()):
            if _map(template).get("schedulingConstraints") is not None:
                yield TOPOLOGY_AWARE, f"spec.podGroupTemplates[{i}].schedulingConstraints"


def check_unmodelled_gates(objects: Sequence[Any], features: FeatureGates
                           ) -> list[tuple[int, FieldError]]:
    """(object index, error) for each use of an unmodelled part of the workload API
    while ``GenericWorkload`` is on. Pure."""
    if not features.is_enabled(Gate.GENERIC_WORKLOAD):
        return []
    problems: list[tuple[int, FieldError]] = []
    for n, obj in enumerate(objects):
        for gate, path in _uses(_map(obj)):
            problems.append((n, FieldError(path=path, type=ErrorType.FORBIDDEN,
                                           detail=not_modelled(gate))))
    return problems
