"""Kueue's TAS failed node replacement: the second pass of an admitted workload whose
topology assignment holds a node listed in its ``status.unhealthyNodes``.

Kueue's node failure controller (TASFailedNodeReplacement, beta, on) lists a workload's
nodes that went away or stopped being Ready; the scheduler then takes the workload for
a second pass ahead of the queues' heads (pkg/scheduler/scheduler.go): it keeps its
quota and flavors, and each pod set placed on the first unhealthy node gets the pods
that node held placed again (pkg/cache/scheduler/tas_flavor_snapshot.go,
findReplacementAssignment) -- within the domain its topology request still binds them
to (a required level, or the slice the node's pods leave incomplete), the rest of its
assignment kept. When no replacement fits, TASFailedNodeReplacementFailFast (beta, on)
evicts the workload (reason NodeFailures); without it the workload keeps its assignment
and waits for another pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from dralab.queueing.kueue.tas import (
    TASFlavorSnapshot,
    TASPodSetRequests,
    TASTopologyRequest,
    add_assumed_usage,
)
from dralab.queueing.kueue.tas_assign import TASContext, TASProvider, spec_requests
from dralab.queueing.kueue.tas_domains import domain_id
from dralab.queueing.model import PodSetRequest, TopologyAssignment

__all__ = ["NODE_FAILURES", "SecondPass", "eviction_message", "find_replacement_assignment",
           "needs_second_pass", "replace_failed_node", "settle"]

# Kueue's WorkloadEvictedDueToNodeFailures
NODE_FAILURES = "NodeFailures"


def eviction_message(nodes: Sequence[str]) -> str:
    return ("Workload was evicted as there was no replacement for unhealthy node(s): "
            + ",".join(nodes))


def needs_second_pass(provider: TASProvider, key: str) -> bool:
    """Kueue's HasTopologyAssignmentWithUnhealthyNode: a node of the workload's
    topology assignment is one of its unhealthy nodes."""
    unhealthy = provider.unhealthy_nodes.get(key, ())
    return any(values[-1] in unhealthy
               for assignment in provider.topology_assignments.get(key, {}).values()
               for values, _ in assignment.domains)


def _delete_domain(assignment: TopologyAssignment, node: str) -> tuple[TopologyAssignment, int]:
    """The assignment without the node's domain, and how many pods it held."""
    kept = tuple((values, n) for values, n in assignment.domains if values[-1] != node)
    held = sum(n for values, n in assignment.domains if values[-1] == node)
    return TopologyAssignment(assignment.levels, kept), held


def _slice_size(request: TASTopologyRequest | None) -> int:
    return request.slice_constraints[0][1] if request and request.slice_constraints else 1


def _ancestor(snapshot: TASFlavorSnapshot, values: tuple[str, ...], level: int) -> str | None:
    """The id of the domain at ``level`` holding the assigned node ``values``."""
    domain = snapshot.domains_per_level[-1].get(domain_id(values))
    if domain is None:
        return None
    for _ in range(len(snapshot.levels) - 1, level, -1):
        assert domain.parent is not None
        domain = domain.parent
    return domain.id


def _incomplete_slice_domain(snapshot: TASFlavorSnapshot, remaining: TopologyAssignment,
                             missing: int, size: int, level_key: str) -> str:
    """Kueue's findIncompleteSliceDomain: the domain at the slice level whose pods with
    the missing ones make whole slices again (the first such, in assignment order;
    Kueue walks a map)."""
    level = snapshot.level_index(level_key)
    if level is None:
        return ""
    pods: dict[str, int] = {}
    for values, n in remaining.domains:
        ancestor = _ancestor(snapshot, values, level)
        if ancestor is not None:
            pods[ancestor] = pods.get(ancestor, 0) + n
    return next((d for d, n in pods.items() if (n + missing) % size == 0), "")


def _required_domain(snapshot: TASFlavorSnapshot, request: TASPodSetRequests,
                     remaining: TopologyAssignment, missing: int) -> str:
    """Kueue's requiredReplacementDomain: where the replacement pods must go ("" for
    anywhere)."""
    topology = request.topology
    key = snapshot.level_key(topology) or (snapshot.lowest_level() if request.implied
                                           else None)
    if key is None or snapshot.level_index(key) is None or not remaining.domains:
        return ""
    size = _slice_size(topology)
    if topology is not None and topology.slice_constraints and missing % size:
        constraints = topology.slice_constraints
        if len(constraints) > 1:
            # the innermost broken layer: the replacement repairs the tightest grouping
            for level_key, layer in reversed(constraints):
                if missing % layer:
                    return _incomplete_slice_domain(snapshot, remaining, missing, layer,
                                                    level_key)
        return _incomplete_slice_domain(snapshot, remaining, missing, size,
                                        constraints[0][0])
    if topology is None or topology.required is None:
        return ""
    level = snapshot.level_index(key)
    assert level is not None
    return _ancestor(snapshot, remaining.domains[0][0], level) or ""


def find_replacement_assignment(
        snapshot: TASFlavorSnapshot, request: TASPodSetRequests,
        existing: TopologyAssignment, node: str,
        assumed: dict[str, dict[str, int]],
) -> tuple[TopologyAssignment | None, TopologyAssignment | None, str]:
    """Kueue's findReplacementAssignment: the new assignment, the part placed anew, or
    why none."""
    remaining, missing = _delete_domain(existing, node)
    stale, domain = snapshot.is_topology_assignment_stale(remaining)
    if stale:
        return None, None, ("Cannot replace the node, because the existing "
                            "topologyAssignment is invalid, as it contains the stale domain "
                            f"{domain}")
    required = _required_domain(snapshot, request, remaining, missing)
    search = replace(request, count=missing)
    topology = request.topology
    if topology is not None and topology.slice_constraints and required \
            and missing % _slice_size(topology):
        # the replacement pods do not make whole slices: they keep the innermost
        # grouping whose size divides them, one pod per slice if none does
        layer = next(((k, size) for k, size in reversed(topology.slice_constraints)
                      if missing % size == 0), None)
        search = replace(search, topology=replace(
            topology, slice_constraints=(layer,) if layer is not None else ()))
    found, reason = snapshot.find_topology_assignment(search, None, assumed, False, required)
    if reason:
        return None, None, reason
    placed = found.get(request.name)
    if placed is None or not placed.domains:
        return None, None, f"cannot find replacement assignment for unhealthy node: {node}"
    return snapshot.merge_topology_assignments(placed, remaining), placed, ""


@dataclass(frozen=True)
class SecondPass:
    """A second pass's outcome: the new topology of every pod set, or the failure
    (pod set, reason) -- Kueue's message is "couldn't assign flavors to pod set X: ..."."""

    topology: Mapping[str, TopologyAssignment] | None
    failed_pod_set: str = ""
    reason: str = ""

    @property
    def message(self) -> str:
        return f"couldn't assign flavors to pod set {self.failed_pod_set}: {self.reason}"


def replace_failed_node(provider: TASProvider, key: str, context: TASContext,
                        pod_sets: Sequence[PodSetRequest],
                        flavors: Mapping[str, list[str]]) -> SecondPass:
    """The workload's pod sets on its first unhealthy node placed again, flavor by
    flavor in name order, as FindTopologyAssignmentsForWorkload does; on success the
    provider charges the domains the new assignment adds and the workload's
    unhealthy nodes are cleared (Kueue's admit); the old domains stay charged until
    ``settle``."""
    unhealthy = provider.unhealthy_nodes[key]
    current = provider.topology_assignments[key]
    by_flavor: dict[str, list[tuple[PodSetRequest, TASPodSetRequests]]] = {}
    for pod_set in pod_sets:
        assignment = current.get(pod_set.name)
        if assignment is None or not any(v[-1] in unhealthy for v, _ in assignment.domains):
            continue
        flavor, request, error = context.pod_set_request(
            pod_set, sum(n for _, n in assignment.domains), flavors.get(pod_set.name, []))
        if flavor is None or request is None:
            return SecondPass(None, pod_set.name, error)
        by_flavor.setdefault(flavor, []).append((pod_set, request))
    topology = dict(current)
    for flavor in sorted(by_flavor):
        snapshot = context.snapshots.get(flavor)
        assert snapshot is not None  # only TAS flavors get requests
        assumed: dict[str, dict[str, int]] = {}
        for pod_set, request in by_flavor[flavor]:
            merged, placed, reason = find_replacement_assignment(
                snapshot, request, current[pod_set.name], unhealthy[0], assumed)
            if reason or merged is None or placed is None:
                return SecondPass(None, pod_set.name, reason)
            topology[pod_set.name] = merged
            add_assumed_usage(assumed, placed, spec_requests(pod_set))
    # Kueue's ComputeTASNetUsage: this cycle the new domains' pods count on top of the
    # old assignment; the next snapshot has the new assignment only
    provider.admitted(key, pod_sets, flavors, topology, previous=current)
    provider.resettle[key] = (tuple(pod_sets), dict(flavors))
    provider.unhealthy_nodes.pop(key, None)
    return SecondPass(topology)


def settle(provider: TASProvider) -> None:
    """A new cycle's snapshot: replaced workloads charge their new assignment only."""
    for key, (pod_sets, flavors) in sorted(provider.resettle.items()):
        topology = provider.topology_assignments.get(key)
        if topology is None:
            continue  # evicted since
        provider.evicted(key)
        provider.admitted(key, pod_sets, flavors, topology)
    provider.resettle.clear()
