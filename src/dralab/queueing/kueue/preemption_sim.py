"""What the preemption searches share: the candidate, Kueue's candidate order, the
fit test, and evictions simulated on the quota tree (undone before returning).

The placement check (``VictimPlacement``) is dralab's addition beyond Kueue (see
``preemption``): with one, a set of victims must also let the preemptor's pods be
placed once theirs are gone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from dralab.queueing.kueue.index import AdmittedIndex
from dralab.queueing.kueue.quota import FlavorResource, QuotaNode, QuotaTree

__all__ = [
    "Simulation",
    "VictimCandidate",
    "VictimPlacement",
    "fits",
    "minimise",
    "within_nominal",
]

# Kueue's preemption reasons (kueue.x-k8s.io/v1beta2 Workload Preempted condition).
IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_FAIR_SHARING = "InCohortFairSharing"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"


class VictimPlacement(Protocol):
    """Node-level feasibility of a preemption, asked by the target search."""

    def places_without(self, victims: Sequence[str]) -> frozenset[str] | None:
        """The nodes the preemptor's pods land on once ``victims``' pods are gone
        (what-if, nothing kept), or None when they cannot all be placed."""
        ...

    def nodes_of(self, workload: str) -> frozenset[str]:
        """The nodes an admitted workload's pods sit on (empty: none placed)."""
        ...


@dataclass(slots=True)  # not frozen: searches build many, and frozen ones are slower to make
class VictimCandidate:
    """An admitted workload the preemptor may evict, with the reason it would be
    evicted for. ``lca``: for a workload of another ClusterQueue, the name of the
    lowest cohort it shares with the preemptor (classic preemption only);
    ``without_borrowing``: it may be taken only if the preemptor then fits without
    borrowing (Kueue's ReclaimWithoutBorrowing variant); ``evicted``: its eviction is
    in progress (Evicted=True, still holding its quota reservation)."""

    key: str
    cluster_queue: str
    same_queue: bool
    priority: int
    admitted_at: float
    reason: str
    lca: str | None = None
    without_borrowing: bool = False
    evicted: bool = False
    # its LocalQueue's usage when its ClusterQueue uses Admission Fair Sharing (afs.py)
    lq_usage: float | None = None

    def order(self) -> tuple[bool, bool, int, float, str]:
        """Kueue's CandidatesOrdering: workloads already being evicted first (taking
        them costs no new eviction), then other ClusterQueues' workloads, then lower
        priority, then the most recent quota reservation, then the UID (the key here:
        workloads are keyed by namespace/name)."""
        return (not self.evicted, self.same_queue, self.priority, -self.admitted_at, self.key)


def within_nominal(node: QuotaNode, frs: Iterable[FlavorResource]) -> bool:
    """Kueue's IsWithinNominalInResources: ``node`` (a ClusterQueue or a cohort)
    uses no more than its subtree quota in any of ``frs``."""
    return all(node.usage.get(fr, 0) <= node.subtree.get(fr, 0) for fr in frs)


def fits(tree: QuotaTree, node: QuotaNode, usage: Mapping[FlavorResource, int],
         allow_borrowing: bool) -> bool:
    """Kueue's workloadFits: every (flavor, resource) of the preemptor within what
    its ClusterQueue has available (never below 0: a queue in debt has 0), and,
    when borrowing is not allowed, within the queue's nominal quota."""
    for fr, amount in usage.items():
        if not allow_borrowing and tree.borrowing(node, fr, amount):
            return False
        if amount > max(0, tree.available(node, fr)):
            return False
    return True


class Simulation:
    """Evictions tried on the quota tree, undone by ``undo``."""

    def __init__(self, index: AdmittedIndex, placement: VictimPlacement | None = None) -> None:
        self.index = index
        self.removed: list[str] = []
        self.placement = placement
        # The nodes of the last placement that succeeded, and the victims with pods
        # of the last one that failed: removing no more pods cannot free more room.
        self.landing: frozenset[str] = frozenset()
        self._failed: frozenset[str] | None = None

    def places(self) -> bool:
        """Without a placement check: True. Else: does the preemptor's pod set place
        once the removed workloads' pods are gone?"""
        if self.placement is None:
            return True
        placement = self.placement
        with_pods = frozenset(k for k in self.removed if placement.nodes_of(k))
        if self._failed is not None and with_pods <= self._failed:
            return False
        landing = placement.places_without(tuple(self.removed))
        if landing is None:
            self._failed = with_pods
            return False
        self._failed = None
        self.landing = landing
        return True

    def lands_on(self, key: str) -> bool:
        """Has ``key`` a pod on a node the preemptor last landed on?"""
        return self.placement is not None and bool(self.placement.nodes_of(key) & self.landing)

    def remove(self, key: str) -> None:
        self.index.tree.add_usage(self.index.cluster_queue[key], self.index.usage[key], -1)
        self.removed.append(key)

    def restore(self, key: str) -> None:
        self.index.tree.add_usage(self.index.cluster_queue[key], self.index.usage[key], 1)
        self.removed.remove(key)

    def undo(self) -> None:
        for key in self.removed:
            self.index.tree.add_usage(self.index.cluster_queue[key], self.index.usage[key], 1)
        self.removed.clear()


def minimise(sim: Simulation, tree: QuotaTree, node: QuotaNode,
             usage: Mapping[FlavorResource, int], targets: list[VictimCandidate],
             allow_borrowing: bool) -> list[VictimCandidate]:
    """Kueue's fillBackWorkloads: give targets back, from the one before the last
    down to the first, each for good if the preemptor still fits without evicting
    it. The last target stays (without it the prefix did not fit). With a placement
    check, targets with no pod where the preemptor lands are tried first, and a
    target is given back only if the pod set still places without it."""
    order = list(reversed(targets[:-1]))
    if sim.placement is not None:
        order.sort(key=lambda c: sim.lands_on(c.key))  # stable: reverse order kept within
    kept: set[str] = {targets[-1].key}
    for candidate in order:
        sim.restore(candidate.key)
        if fits(tree, node, usage, allow_borrowing) and sim.places():
            continue
        sim.remove(candidate.key)
        kept.add(candidate.key)
    return [c for c in targets if c.key in kept]
