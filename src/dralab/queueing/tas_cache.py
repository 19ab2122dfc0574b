"""Kueue's TAS cache built from a snapshot: what ``dralab admit`` gives ``KueuePolicy.tas``.

Kueue keeps, per TAS ResourceFlavor (one whose ``topologyName`` names a ``Topology``),
a snapshot of the nodes the flavor selects with their free capacity
(``pkg/cache/scheduler/tas_cache.go``, ``tas_non_tas_pod_cache.go`` at ff69552e). It is
filled from three things the snapshot holds:

* Nodes: labels, ``status.allocatable`` (``pods`` included), taints; a node with
  ``spec.unschedulable`` is dropped (dralab does not model node conditions: every node
  counts as Ready);
* bound pods that are not TAS pods (no ``kueue.x-k8s.io/podset-*-topology``
  annotation, Kueue's ``IsTAS``) and not terminated: their spec requests use the
  node's capacity;
* admitted Workloads' ``status.admission.podSetAssignments[].topologyAssignment``
  (v1beta1 ``domains`` or v1beta2 ``slices``): their pods' requests are charged to
  those domains.

``TopologyAwareScheduling`` is beta and on by default (Kueue 0.14), so this is built
unless the Configuration's ``featureGates`` turns it off. Pure: reads the objects,
returns a new provider.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dralab.api.base import KubeObject
from dralab.api.core import Node, Pod

from .kueue.tas import TASNode
from .kueue.tas_assign import TASProvider
from .kueue.tas_domains import TASGates
from .model import TopologyAssignment
from .objects import KueueConfiguration, KueueTopology, ResourceFlavor
from .reader import KueueSnapshot
from .requests import pod_requests
from .topology_doc import parse_topology_assignment

__all__ = ["TAS_GATE", "build_tas_provider", "tas_flavors", "tas_on", "topology_by_index"]

TAS_GATE = "TopologyAwareScheduling"
_SCHEDULER_LIBRARY_GATE = "SchedulerLibraryIntegration"  # alpha, off
# Kueue's IsTAS: a pod carrying one of these annotations is placed by TAS, so the
# TAS cache counts it through its Workload, not as a non-TAS pod.
_TAS_POD_ANNOTATIONS = (
    "kueue.x-k8s.io/podset-required-topology",
    "kueue.x-k8s.io/podset-preferred-topology",
    "kueue.x-k8s.io/podset-unconstrained-topology",
    "kueue.x-k8s.io/podset-slice-required-topology",
    "kueue.x-k8s.io/podset-slice-required-topology-constraints",
)
_TERMINATED = ("Succeeded", "Failed")


def tas_on(config: KueueConfiguration | None) -> bool:
    """Kueue's TopologyAwareScheduling gate: beta, on unless the Configuration says no."""
    gates = config.feature_gates if config is not None else {}
    return gates.get(TAS_GATE, True)


def tas_flavors(objects: Sequence[KubeObject]) -> list[tuple[str, str]]:
    """(ResourceFlavor, Topology) of every flavor whose ``topologyName`` names a Topology
    of ``objects``: Kueue's TAS flavors. Pure."""
    topologies = {o.name for o in objects if isinstance(o, KueueTopology)}
    return sorted((o.name, o.spec.topology_name) for o in objects
                  if isinstance(o, ResourceFlavor) and o.spec.topology_name is not None
                  and o.spec.topology_name in topologies)


def build_tas_provider(snapshot: KueueSnapshot, objects: Sequence[KubeObject]) -> TASProvider:
    """Kueue's TAS cache for ``snapshot``: nodes, non-TAS pods' usage, and the
    admitted workloads' topology assignments charged."""
    gates = snapshot.config.feature_gates if snapshot.config is not None else {}
    nodes = [_tas_node(o) for o in objects if isinstance(o, Node)]
    provider = TASProvider(snapshot.state.flavors, snapshot.topologies, nodes,
                           TASGates.from_feature_gates(gates),
                           gates.get(_SCHEDULER_LIBRARY_GATE, False))
    for pod in objects:
        if isinstance(pod, Pod) and pod.spec.node_name and not _is_tas(pod) \
                and pod.status.phase not in _TERMINATED:
            raw_spec = (pod.raw or {}).get("spec")
            provider.add_non_tas_pod(pod.spec.node_name, pod_requests(
                pod.spec, raw_spec if isinstance(raw_spec, Mapping) else None))
    state = snapshot.state
    for key in sorted(state.admitted, key=lambda k: (state.admitted_at.get(k, 0.0), k)):
        workload, admission = state.workloads.get(key), state.admitted[key]
        source = snapshot.sources.get(key)
        if workload is None or source is None or source.existing is None:
            continue
        found = _admitted_topology(source.existing.raw, [p.name for p in admission.pod_sets])
        if found:
            provider.admitted(key, workload.pod_sets,
                              {p.name: list(p.flavors.values()) for p in admission.pod_sets},
                              found)
    return provider


def topology_by_index(snapshot: KueueSnapshot, provider: TASProvider
                      ) -> dict[str, tuple[TopologyAssignment | None, ...]]:
    """The provider's assignments (workload -> pod set name -> assignment) as the
    writer takes them: per workload, one entry per pod set in the source's order."""
    out: dict[str, tuple[TopologyAssignment | None, ...]] = {}
    for key, by_name in provider.topology_assignments.items():
        source = snapshot.sources.get(key)
        if source is not None and by_name:
            out[key] = tuple(by_name.get(p.name) for p in source.pod_sets)
    return out


def _admitted_topology(raw: Mapping[str, Any] | None, names: Sequence[str]
                       ) -> dict[str, TopologyAssignment]:
    """Per pod set name, the topologyAssignment an admitted Workload's status holds."""
    admission = ((raw or {}).get("status") or {}).get("admission") or {}
    assignments = admission.get("podSetAssignments") if isinstance(admission, Mapping) else None
    out: dict[str, TopologyAssignment] = {}
    for index, item in enumerate(assignments if isinstance(assignments, list) else []):
        doc = item.get("topologyAssignment") if isinstance(item, Mapping) else None
        name = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(name, str):
            name = names[index] if index < len(names) else ""
        parsed = parse_topology_assignment(doc) if isinstance(doc, Mapping) else None
        if parsed is not None and name:
            out[name] = parsed
    return out


def _is_tas(pod: Pod) -> bool:
    annotations = pod.metadata.annotations or {}
    return any(key in annotations for key in _TAS_POD_ANNOTATIONS)


def _tas_node(node: Node) -> TASNode:
    taints = tuple((t.key, t.value or "", t.effect) for t in node.spec.taints)
    allocatable = {name: q.milli_value() for name, q in node.status.allocatable.items()}
    unschedulable = bool(node.spec.unschedulable)
    return TASNode(node.name, dict(node.metadata.labels or {}), allocatable, taints,
                   not unschedulable, unschedulable)
