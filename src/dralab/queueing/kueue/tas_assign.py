"""The TAS part of Kueue's flavor assigner, as ``pkg/scheduler/flavorassigner/
tas_flavorassigner.go`` (ff69552e) defines it, for ``flavors.assign_flavors``.

A ClusterQueue's *TAS flavors* are its flavors whose ``spec.topologyName`` names a
``Topology`` Kueue knows, each with its ``TASFlavorSnapshot``; a queue all of whose
flavors are TAS flavors is *TAS-only*, and there a pod set asking no topology gets an
implied, unconstrained one at the lowest level.

* While flavors are tried (``checkPodSetAndFlavorMatchForTAS``): a pod set asking a
  topology rejects a flavor without one (unless the flavor's group covers none of its
  resources) and a TAS flavor lacking the level; a pod set asking none rejects a TAS
  flavor (unless the queue is TAS-only).
* After quota (``WorkloadsTopologyRequests``): every pod set asking a topology must
  have exactly one TAS flavor among its resources' flavors, else it is an error
  (``no TAS flavor assigned``, ``more than one TAS flavor assigned: a, b``); the
  pod sets' requests go to their flavor's snapshot.

This module holds those rules and the requests; ``flavors.py`` applies the result
(Fit that does not place becomes Preempt; Preempt that does not place on an emptied
cluster becomes NoFit, ``TopologyPlacementFailed``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from dralab.queueing.kueue.tas import (
    TASFlavorSnapshot,
    TASNode,
    TASPodSetRequests,
    TASTopologyRequest,
)
from dralab.queueing.kueue.tas_domains import HOSTNAME_LABEL, TASGates, domain_id
from dralab.queueing.model import (
    FlavorSpec,
    PodSetRequest,
    TopologyAssignment,
    TopologyRequest,
)

_V = TypeVar("_V", bound=tuple[Any, ...])

__all__ = [
    "ERR_ELASTIC_PREFERRED_TOPOLOGY",
    "ERR_ELASTIC_REQUIRED_TOPOLOGY",
    "ERR_NO_TAS_CACHE_INFORMATION",
    "ERR_NO_TAS_FLAVOR_ASSIGNED",
    "TOPOLOGY_PLACEMENT_FAILED",
    "DomainRequests",
    "TASContext",
    "TASProvider",
    "TASVictimPlacement",
    "compute_tas_net_usage",
    "multiple_tas_flavors_assigned",
    "tas_flavors_only",
    "tas_topology_request",
]

TOPOLOGY_PLACEMENT_FAILED = "TopologyPlacementFailed"
ERR_NO_TAS_CACHE_INFORMATION = "workload requires Topology, but there is no TAS cache information"
ERR_NO_TAS_FLAVOR_ASSIGNED = "no TAS flavor assigned"
# ElasticJobsViaWorkloadSlicesWithTAS: an elastic workload may ask only an unconstrained
# topology (its slices keep their pods where they are, which a level cannot promise).
ERR_ELASTIC_REQUIRED_TOPOLOGY = \
    "required topology is not supported with ElasticJobsViaWorkloadSlices"
ERR_ELASTIC_PREFERRED_TOPOLOGY = \
    "preferred topology is not supported with ElasticJobsViaWorkloadSlices"


def multiple_tas_flavors_assigned(flavors: list[str]) -> str:
    return f"more than one TAS flavor assigned: {', '.join(sorted(flavors))}"


def tas_flavors_only(assignment: Mapping[str, _V], tas: TASContext) -> dict[str, _V]:
    """Kueue's tasFlavorsOnly: the resources whose flavor (the first item of the
    value: flavor, mode, ...) is one of the queue's TAS flavors."""
    return {r: v for r, v in assignment.items() if v[0] in tas.snapshots}


def tas_topology_request(request: TopologyRequest | None) -> TASTopologyRequest | None:
    """dralab's pod-set annotation model as Kueue's ``PodSetTopologyRequest``."""
    if request is None:
        return None
    if request.unconstrained:
        return TASTopologyRequest(unconstrained=True, slice_constraints=request.slices)
    if request.required:
        return TASTopologyRequest(required=request.level, slice_constraints=request.slices)
    return TASTopologyRequest(preferred=request.level, slice_constraints=request.slices)


@dataclass
class TASContext:
    """The ClusterQueue's TAS flavors (a name mapped to ``None`` is a TAS flavor whose
    snapshot is missing, as a race in Kueue's cache leaves it) and whether every
    flavor of the queue is one. ``elastic_with_tas``: Kueue's
    ElasticJobsViaWorkloadSlicesWithTAS gate (alpha, off by default)."""

    snapshots: Mapping[str, TASFlavorSnapshot | None] = field(default_factory=dict)
    tas_only: bool = False
    elastic_with_tas: bool = False
    # the queue's TAS flavors whose topology waits for a second pass (tas_delayed.py):
    # those a ProvisioningRequest admission check covers
    delayed_flavors: frozenset[str] = frozenset()

    @classmethod
    def for_queue(cls, flavor_names: list[str],
                  snapshots: Mapping[str, TASFlavorSnapshot | None]) -> TASContext:
        """Kueue's ClusterQueueSnapshot.TASFlavors and IsTASOnly: the queue's flavors
        with a snapshot; TAS-only when there are some and every flavor has one."""
        own = {name: snapshots[name] for name in flavor_names if name in snapshots}
        return cls(own, all(name in own for name in flavor_names))

    # -- which pod sets ask for TAS -----------------------------------------------------

    def is_implied(self, pod_set: PodSetRequest) -> bool:
        return pod_set.topology is None and self.tas_only

    def is_requested(self, pod_set: PodSetRequest) -> bool:
        return pod_set.topology is not None or self.is_implied(pod_set)

    # -- while flavors are tried ----------------------------------------------------------

    def flavor_mismatch(self, pod_set: PodSetRequest, flavor_name: str, flavor: FlavorSpec,
                        covered: Collection[str]) -> str:
        """Kueue's checkPodSetAndFlavorMatchForTAS: why ``flavor`` does not suit the
        pod set's topology request, or ``""``."""
        if self.is_requested(pod_set):
            if self.is_implied(pod_set):
                return ""
            if not flavor.topology:
                if not any(r in covered for r in spec_requests(pod_set)):
                    # the flavor may still give quota-only resources of other groups
                    return ""
                return f'Flavor "{flavor_name}" does not support TopologyAwareScheduling'
            snapshot = self.snapshots.get(flavor_name)
            if snapshot is None:
                return f'Flavor "{flavor_name}" information missing in TAS cache'
            if not snapshot.has_level(tas_topology_request(pod_set.topology)):
                return f'Flavor "{flavor_name}" does not contain the requested level'
            return ""
        if flavor.topology:
            return f'Flavor "{flavor_name}" supports only TopologyAwareScheduling'
        return ""

    # -- after quota ------------------------------------------------------------------------

    def elastic_error(self, pod_set: PodSetRequest, elastic: bool) -> str:
        """Kueue's WorkloadsTopologyRequests under ElasticJobsViaWorkloadSlicesWithTAS:
        an elastic workload's pod set asking a required or preferred level is an error
        (an unconstrained or implied request is fine); ``""`` otherwise."""
        request = pod_set.topology
        if not (elastic and self.elastic_with_tas) or request is None \
                or request.unconstrained or request.level is None:
            return ""
        return ERR_ELASTIC_REQUIRED_TOPOLOGY if request.required \
            else ERR_ELASTIC_PREFERRED_TOPOLOGY

    def only_tas_flavor(self, flavor_names: list[str]) -> tuple[str | None, str]:
        """The one TAS flavor among a pod set's flavors, or the error."""
        tas = sorted({f for f in flavor_names if self.snapshots.get(f) is not None})
        if not tas:
            return None, ERR_NO_TAS_FLAVOR_ASSIGNED
        if len(tas) > 1:
            return None, multiple_tas_flavors_assigned(tas)
        return tas[0], ""

    def pod_set_request(self, pod_set: PodSetRequest, count: int, flavor_names: list[str]
                        ) -> tuple[str | None, TASPodSetRequests | None, str]:
        """Kueue's podSetTopologyRequest: the flavor and the request, or the error."""
        if not self.snapshots:
            return None, None, ERR_NO_TAS_CACHE_INFORMATION
        flavor, error = self.only_tas_flavor(flavor_names)
        if flavor is None:
            return None, None, error
        if flavor in self.delayed_flavors:
            # DelayedTopologyRequest Pending: placed once the check is Ready
            return flavor, None, ""
        request = TASPodSetRequests(
            pod_set.name, dict(spec_requests(pod_set)), count,
            topology=tas_topology_request(pod_set.topology),
            node_selector=dict(pod_set.node_selector), tolerations=pod_set.tolerations,
            node_affinity=pod_set.node_affinity, implied=self.is_implied(pod_set),
            group=pod_set.group if pod_set.topology is not None else None)
        return flavor, request, ""

    def find(self, requests: Mapping[str, list[TASPodSetRequests]], simulate_empty: bool
             ) -> tuple[dict[str, TopologyAssignment], tuple[str, str, str] | None]:
        """Kueue's FindTopologyAssignmentsForWorkload: per pod set its assignment, and
        the first failure (pod set, reason, flavor), flavors in name order."""
        assignments: dict[str, TopologyAssignment] = {}
        # TASHandleOverlappingFlavors: pod sets placed on one hostname-level flavor
        # take their nodes from the others too
        shared: dict[str, dict[str, int]] = {}
        for flavor in sorted(requests):
            snapshot = self.snapshots.get(flavor)
            assert snapshot is not None  # only TAS flavors get requests
            overlapping = snapshot.gates.handle_overlapping_flavors \
                and snapshot.is_lowest_level_node
            result = snapshot.find_topology_assignments_for_flavor(
                requests[flavor], simulate_empty, shared if overlapping else None)
            for name, (assignment, reason) in result.items():
                if reason or assignment is None:
                    return assignments, (name, reason, flavor)
                assignments[name] = assignment
        return assignments, None


def spec_requests(pod_set: PodSetRequest) -> Mapping[str, int]:
    """What one pod of the set asks as its template says (Kueue's NewRequestsFromPodSpec):
    TAS places pods by it, not by the quota requests resources.transformations make."""
    return pod_set.spec_requests if pod_set.spec_requests is not None else pod_set.per_pod


# (domain level values, single-pod requests, pods): what TASFlavorSnapshot.fits checks
DomainRequests = tuple[tuple[str, ...], dict[str, int], int]


def compute_tas_net_usage(tas: TASContext, pod_sets: Mapping[str, PodSetRequest],
                          flavors: Mapping[str, list[str]],
                          topology: Mapping[str, TopologyAssignment],
                          previous: Mapping[str, TopologyAssignment] | None = None
                          ) -> dict[str, list[DomainRequests]]:
    """Kueue's Assignment.ComputeTASNetUsage: per TAS flavor the pods each placed pod
    set adds per domain, with the pod set's own requests (not the quota-transformed
    ones); pods its previous admission already holds in a domain are counted there
    already, so only a domain's additional pods count."""
    result: dict[str, list[DomainRequests]] = {}
    for name, assignment in topology.items():
        pod_set = pod_sets.get(name)
        if pod_set is None:
            continue  # Kueue logs "PodSet not found while computing TAS net usage"
        flavor, _ = tas.only_tas_flavor(flavors.get(name, []))
        if flavor is None:
            continue  # Kueue logs "Failed to find TAS flavor ..."
        accounted: dict[tuple[str, ...], int] = {}
        before = (previous or {}).get(name)
        for values, count in before.domains if before is not None else ():
            accounted[values] = accounted.get(values, 0) + count
        for values, count in assignment.domains:
            extra = count - accounted.get(values, 0)
            if extra > 0:
                result.setdefault(flavor, []).append(
                    (values, dict(spec_requests(pod_set)), extra))
    return result


class TASProvider:
    """What Kueue's cache gives the scheduler for TAS: per TAS flavor (a flavor whose
    ``topology`` names a known Topology) a snapshot over the nodes its labels select,
    charged with the TAS usage of admitted workloads; per ClusterQueue its
    ``TASContext``. A cycle that has one places TAS pod sets as Kueue does and keeps
    their topology assignments in ``topology_assignments`` (workload key -> pod set ->
    assignment)."""

    def __init__(self, flavors: Mapping[str, FlavorSpec],
                 topologies: Mapping[str, tuple[str, ...]], nodes: Sequence[TASNode],
                 gates: TASGates | None = None,
                 scheduler_library_integration: bool = False) -> None:
        self.snapshots: dict[str, TASFlavorSnapshot] = {}
        for name, flavor in flavors.items():
            if flavor.topology is None or flavor.topology not in topologies:
                continue
            levels = topologies[flavor.topology]
            # Kueue's nodesCache: a node not schedulable and Ready is dropped, unless
            # SchedulerLibraryIntegration (alpha, off) keeps it for a hostname-level
            # topology (the scheduler's plugins filter it there); NodeMatchesFlavor: the
            # flavor's labels and every level's label
            keep_unready = scheduler_library_integration and levels[-1] == HOSTNAME_LABEL
            selected = [n for n in nodes
                        if (n.schedulable_and_ready or keep_unready)
                        and all(n.labels.get(k) == v for k, v in flavor.node_labels.items())
                        and all(level in n.labels for level in levels)]
            self.snapshots[name] = TASFlavorSnapshot(
                flavor.topology, levels, selected, gates, tolerations=flavor.tolerations)
            self.snapshots[name].scheduler_library = keep_unready
        self.topology_assignments: dict[str, dict[str, TopologyAssignment]] = {}
        # an admitted workload's status.unhealthyNodes (Kueue's node failure
        # controller, TASFailedNodeReplacement): its second pass (tas_replace.py)
        self.unhealthy_nodes: dict[str, tuple[str, ...]] = {}
        # workloads whose replaced nodes' usage is released at the next cycle (Kueue's
        # snapshot keeps counting it until it is rebuilt): their pod sets and flavors
        self.resettle: dict[str, tuple[tuple[PodSetRequest, ...], dict[str, list[str]]]] = {}
        self.gates = gates or TASGates()
        # per ClusterQueue, its TAS flavors a ProvisioningRequest check covers
        # (tas_delayed.delayed_flavors); per workload, its admission checks' states and
        # its pod sets' DelayedTopologyRequest ("Pending" until the second pass, "Ready")
        self.provisioning: dict[str, frozenset[str]] = {}
        self.check_states: dict[str, dict[str, str]] = {}
        self.delayed: dict[str, dict[str, str]] = {}
        # per admitted workload what it was charged: (snapshot, domain, usage, pods)
        self._charged: dict[str, list[tuple[TASFlavorSnapshot, str, dict[str, int], int]]] = {}

    def context(self, flavor_names: list[str], cluster_queue: str | None = None) -> TASContext:
        context = TASContext.for_queue(flavor_names, dict(self.snapshots))
        context.delayed_flavors = self.provisioning.get(cluster_queue or "", frozenset())
        return context

    def admitted(self, key: str, pod_sets: Sequence[PodSetRequest],
                 flavors: Mapping[str, list[str]],
                 topology: Mapping[str, TopologyAssignment],
                 previous: Mapping[str, TopologyAssignment] | None = None,
                 cluster_queue: str | None = None) -> None:
        """Charge an admitted workload's placed pods to its TAS flavors' domains;
        with its ``previous`` assignment (still charged), only the pods a domain gains.
        With its ``cluster_queue``, a pod set left unplaced on a flavor waiting for a
        ProvisioningRequest check is recorded Pending."""
        waiting = self.provisioning.get(cluster_queue or "", frozenset())
        for pod_set in pod_sets:
            if pod_set.name not in topology and pod_set.count > 0 and any(
                    f in waiting for f in flavors.get(pod_set.name, [])):
                self.delayed.setdefault(key, {})[pod_set.name] = "Pending"
        if not topology:
            return
        self.topology_assignments[key] = dict(topology)
        usage = compute_tas_net_usage(TASContext(dict(self.snapshots)),
                                      {p.name: p for p in pod_sets}, flavors, topology,
                                      previous)
        charged: list[tuple[TASFlavorSnapshot, str, dict[str, int], int]] = []
        for flavor, domains in usage.items():
            snapshot = self.snapshots[flavor]
            for values, single_pod, count in domains:
                total = {r: v * count for r, v in single_pod.items()}
                if not snapshot.is_lowest_level_node:
                    charged.append((snapshot, domain_id(values), total, count))
                    continue
                # a node's usage is the node's, whichever flavor placed it
                # (TASHandleOverlappingFlavors: every hostname-level flavor sees it)
                for other in self.snapshots.values():
                    if other is snapshot or (
                            other.is_lowest_level_node
                            and snapshot.gates.handle_overlapping_flavors):
                        charged.append((other, values[-1], total, count))
        for snapshot, domain, total, count in charged:
            snapshot.update_tas_usage(domain, total, True, count)
        self._charged.setdefault(key, []).extend(charged)

    def fits(self, pod_sets: Sequence[PodSetRequest], flavors: Mapping[str, list[str]],
             topology: Mapping[str, TopologyAssignment]) -> bool:
        """The TAS part of Kueue's ClusterQueueSnapshot.Fits: the pods still fit where
        the assignment places them (an earlier entry of the cycle may have taken them)."""
        usage = compute_tas_net_usage(TASContext(dict(self.snapshots)),
                                      {p.name: p for p in pod_sets}, flavors, topology)
        return all(self.snapshots[flavor].fits(domains) for flavor, domains in usage.items())

    def fits_without(self, victims: Sequence[str], pod_sets: Sequence[PodSetRequest],
                     flavors: Mapping[str, list[str]],
                     topology: Mapping[str, TopologyAssignment]) -> bool:
        """``fits`` with the ``victims``' pods gone (Kueue's fits with the preemption
        targets' usage removed)."""
        charged = [c for key in victims for c in self._charged.get(key, [])]
        for snapshot, domain, total, count in charged:
            snapshot.update_tas_usage(domain, total, False, count)
        try:
            return self.fits(pod_sets, flavors, topology)
        finally:
            for snapshot, domain, total, count in charged:
                snapshot.update_tas_usage(domain, total, True, count)

    def add_non_tas_pod(self, node_name: str, requests: Mapping[str, int]) -> None:
        """A pod Kueue did not place (bound to the node, not finished) uses the node's
        capacity in every TAS flavor that selects the node; it counts one pod too."""
        usage = dict(requests)
        usage["pods"] = usage.get("pods", 0) + 1000
        for snapshot in self.snapshots.values():
            if node_name in snapshot.node_to_domain:
                snapshot.add_non_tas_usage(node_name, usage)

    def evicted(self, key: str) -> None:
        """An admitted workload is gone: the room its pods took is free again."""
        for snapshot, domain, total, count in self._charged.pop(key, []):
            snapshot.update_tas_usage(domain, total, False, count)
        self.topology_assignments.pop(key, None)
        self.unhealthy_nodes.pop(key, None)  # Kueue's eviction resets them
        self.delayed.pop(key, None)  # and its admission

    def victims(self, tas: TASContext, requests: Mapping[str, list[TASPodSetRequests]]
                ) -> TASVictimPlacement:
        """The preemption search's placement check for a preemptor with these TAS
        requests (Kueue's workloadFits: quota, then FindTopologyAssignmentsForWorkload
        with the candidates' usage removed)."""
        return TASVictimPlacement(self, tas, requests)


class TASVictimPlacement:
    """``VictimPlacement`` of the preemption search over Kueue's TAS: whether the
    preemptor's TAS pod sets place once the victims' pods are gone. It lands on no
    node in particular (an empty landing keeps the search's give-back order Kueue's:
    the last target first)."""

    def __init__(self, provider: TASProvider, tas: TASContext,
                 requests: Mapping[str, list[TASPodSetRequests]]) -> None:
        self.provider, self.tas, self.requests = provider, tas, requests

    def places_without(self, victims: Sequence[str]) -> frozenset[str] | None:
        return frozenset() if self.placement_without(victims) is not None else None

    def placement_without(self, victims: Sequence[str]
                          ) -> dict[str, TopologyAssignment] | None:
        """Where the preemptor's TAS pod sets go once the victims' pods are gone, or
        None (Kueue's updateAssignmentForTAS with the targets' usage removed)."""
        charged = [c for key in victims for c in self.provider._charged.get(key, [])]
        for snapshot, domain, total, count in charged:
            snapshot.update_tas_usage(domain, total, False, count)
        try:
            found, failure = self.tas.find(self.requests, False)
        finally:
            for snapshot, domain, total, count in charged:
                snapshot.update_tas_usage(domain, total, True, count)
        return found if failure is None else None

    def nodes_of(self, workload: str) -> frozenset[str]:
        return frozenset(domain for _, domain, _, _ in self.provider._charged.get(workload, []))
