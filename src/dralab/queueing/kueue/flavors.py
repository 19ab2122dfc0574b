"""Flavor assignment: for every pod set and resource group, the flavor to charge.

Kueue's rule (``cluster_queue.md``, "Flavors and borrowing semantics" and
"FlavorFungibility"; ``pkg/scheduler/flavorassigner``): pod sets in order, and for
each the resource groups of the ClusterQueue in order; within a group the flavors
in order. A flavor is skipped when one of its taints is not tolerated or its node
labels contradict the pod set's node selector. Otherwise every covered resource
the pod set asks for is checked against the quota tree, counting what earlier pod
sets of the same workload already took of that flavor:

* more than the flavor's maximum capacity: no fit at all;
* more than what is available now: preemption may help (if the oracle finds
  targets), else no fit;
* otherwise it fits, borrowing if it goes beyond the ClusterQueue's own quota.

A fit without borrowing is taken at once. A fit by borrowing stops the search
under ``whenCanBorrow: MayStopSearch``; a fit by preemption stops it under
``whenCanPreempt: MayStopSearch``; else the next flavor is tried and the best seen
wins: fit > fit by borrowing > preemption without borrowing > preemption with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import IntEnum

from dralab.queueing.kueue import messages
from dralab.queueing.kueue.quota import FlavorResource, QuotaNode, QuotaTree
from dralab.queueing.model import (
    ClusterQueueSpec,
    FlavorSpec,
    PodSetAssignment,
    PodSetRequest,
    WorkloadSpec,
)

__all__ = [
    "AssignMode",
    "WorkloadAssignment",
    "assign_flavors",
    "flavor_rejection",
    "pod_set_totals",
]


class AssignMode(IntEnum):
    """How a workload (or one flavor) fits; higher is better."""

    NO_FIT = 0
    PREEMPT = 1
    FIT = 2


@dataclass(slots=True)
class WorkloadAssignment:
    """The flavors chosen for a workload, its usage per (flavor, resource), how it
    fits (the worst over its pod sets), whether it borrows, and the pending message."""

    mode: AssignMode
    pod_sets: tuple[PodSetAssignment, ...]
    usage: dict[FlavorResource, int]
    borrows: bool
    message: str = ""


# (needed (flavor, resource), total amount the workload needs there) -> can
# preemption make room for it?
PreemptionOracle = Callable[[FlavorResource, int], bool]


def pod_set_totals(pod_set: PodSetRequest) -> dict[str, int]:
    count = pod_set.count
    return {resource: amount * count for resource, amount in pod_set.per_pod.items() if amount}


def _tolerated(taint: tuple[str, str, str],
               tolerations: tuple[tuple[str, str, str, str], ...]) -> bool:
    key, value, effect = taint
    for t_key, operator, t_value, t_effect in tolerations:
        if t_effect and t_effect != effect:
            continue
        if operator == "Exists":
            if not t_key or t_key == key:
                return True
        elif t_key == key and t_value == value:
            return True
    return False


def flavor_rejection(flavor_name: str, flavor: FlavorSpec | None,
                     pod_set: PodSetRequest) -> str:
    """Why ``flavor`` cannot serve ``pod_set`` (taints, node labels), or ``""``."""
    if flavor is None:
        return f"flavor {flavor_name} not found"
    if flavor.node_taints:
        tolerations = pod_set.tolerations + flavor.tolerations
        for taint in flavor.node_taints:
            if taint[2] in ("NoSchedule", "NoExecute") and not _tolerated(taint, tolerations):
                return messages.untolerated_taint(taint, flavor_name)
    labels = flavor.node_labels
    for key, value in pod_set.node_selector.items():
        # Only the flavor's own label keys count: other keys are for other flavors.
        if key in labels and labels[key] != value:
            return messages.flavor_node_affinity(flavor_name)
    return ""


def _better(a: tuple[AssignMode, bool], b: tuple[AssignMode, bool]) -> bool:
    """Whether (mode, borrows) ``a`` is preferred to ``b``."""
    if a[0] != b[0]:
        return a[0] > b[0]
    return not a[1] and b[1]


def assign_flavors(workload: WorkloadSpec, spec: ClusterQueueSpec, node: QuotaNode,
                   tree: QuotaTree, flavors: Mapping[str, FlavorSpec],
                   preemption_possible: PreemptionOracle | None) -> WorkloadAssignment:
    """Choose flavors for every pod set of ``workload`` in ClusterQueue ``spec``."""
    taken: dict[FlavorResource, int] = {}
    assignments: list[PodSetAssignment] = []
    overall = AssignMode.FIT
    borrows = False
    groups = spec.resource_groups
    fungibility = spec.flavor_fungibility
    stop_on_borrow = fungibility.when_can_borrow == "MayStopSearch"
    stop_on_preempt = fungibility.when_can_preempt == "MayStopSearch"
    for pod_set in workload.pod_sets:
        totals = pod_set_totals(pod_set)
        chosen: dict[str, str] = {}
        for resource in totals:
            if not any(resource in group.covered for group in groups):
                message = messages.pod_set_message(
                    pod_set.name, [messages.resource_not_covered(resource)])
                return WorkloadAssignment(AssignMode.NO_FIT, (), {}, False, message)
        for group in groups:
            wanted = [(r, totals[r]) for r in group.covered if r in totals]
            if not wanted:
                continue
            reasons: list[str] = []
            best: tuple[AssignMode, bool] | None = None
            best_flavor = ""
            for flavor_quotas in group.flavors:
                name = flavor_quotas.flavor
                rejection = flavor_rejection(name, flavors.get(name), pod_set)
                if rejection:
                    reasons.append(rejection)
                    continue
                mode = AssignMode.FIT
                flavor_borrows = False
                for resource, amount in wanted:
                    fr = (name, resource)
                    before = taken.get(fr, 0)
                    value = before + amount
                    covered = resource in flavor_quotas.resources
                    capacity = tree.potential(node, fr) if covered else 0
                    if value > capacity:
                        reasons.append(messages.max_capacity_exceeded(
                            resource, name, before, amount, capacity))
                        mode = AssignMode.NO_FIT
                        break
                    flavor_borrows = flavor_borrows or tree.borrowing(node, fr, value)
                    free = tree.available(node, fr)
                    if value <= free:
                        continue
                    reasons.append(messages.insufficient_unused_quota(resource, name, value - free))
                    if preemption_possible is not None and preemption_possible(fr, value):
                        mode = min(mode, AssignMode.PREEMPT)
                    else:
                        mode = AssignMode.NO_FIT
                        break
                if mode == AssignMode.NO_FIT:
                    continue
                candidate = (mode, flavor_borrows)
                if best is None or _better(candidate, best):
                    best, best_flavor = candidate, name
                if mode == AssignMode.FIT and not flavor_borrows:
                    break
                if (mode == AssignMode.FIT and stop_on_borrow) or (
                        mode == AssignMode.PREEMPT and stop_on_preempt):
                    best, best_flavor = candidate, name
                    break
            if best is None:
                message = messages.pod_set_message(pod_set.name, reasons)
                return WorkloadAssignment(AssignMode.NO_FIT, (), {}, False, message)
            overall = min(overall, best[0])
            borrows = borrows or best[1]
            for resource, amount in wanted:
                fr = (best_flavor, resource)
                taken[fr] = taken.get(fr, 0) + amount
                chosen[resource] = best_flavor
        assignments.append(PodSetAssignment(pod_set.name, chosen, totals, pod_set.count))
    message = ""
    if overall == AssignMode.PREEMPT:
        message = _preempt_message(workload, assignments, taken, node, tree)
    return WorkloadAssignment(overall, tuple(assignments), taken, borrows, message)


def _preempt_message(workload: WorkloadSpec, assignments: list[PodSetAssignment],
                     taken: dict[FlavorResource, int], node: QuotaNode, tree: QuotaTree) -> str:
    """The message a workload waiting for preemption would show if none is found:
    the first pod set's quota shortfalls in its chosen flavors."""
    for assignment in assignments:
        reasons = []
        for resource, flavor in assignment.flavors.items():
            fr = (flavor, resource)
            free = tree.available(node, fr)
            if taken[fr] > free:
                reasons.append(
                    messages.insufficient_unused_quota(resource, flavor, taken[fr] - free))
        if reasons:
            return messages.pod_set_message(assignment.name, reasons)
    return messages.pod_set_message(workload.pod_sets[0].name if workload.pod_sets else "main", [])
