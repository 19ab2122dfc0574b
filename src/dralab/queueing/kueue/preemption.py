"""Which admitted workloads to evict so that a pending one fits.

Classic preemption (``site/content/en/docs/concepts/preemption.md``, "Classic
Preemption"; ``cluster_queue.md``, "Preemption"):

* candidates: workloads of the preemptor's ClusterQueue allowed by
  ``withinClusterQueue`` (``LowerPriority``; ``LowerOrNewerEqualPriority``), and
  workloads of other ClusterQueues of the cohort tree that borrow in a needed
  (flavor, resource), allowed by ``reclaimWithinCohort`` (``LowerPriority``,
  ``Any``) or, when the preemptor would borrow, by ``borrowWithinCohort``
  (``LowerPriority`` up to ``maxPriorityThreshold``);
* order: other ClusterQueues' workloads first, then lower priority, then the most
  recently admitted, then the key (determinism);
* targets, greedily in that order, by the documented heuristics: all candidates in
  the preemptor's queue -> allow borrowing; ``borrowWithinCohort`` -> allow
  borrowing; the preemptor's queue stays within nominal -> no borrowing; last,
  only the preemptor's own queue, borrowing allowed. A candidate of another queue
  is skipped once that queue no longer borrows. Then the set is minimised: in
  reverse, a target is given back if the preemptor still fits without evicting it.

Fair-sharing preemption (same page, "Fair Sharing"): per strategy
(``LessThanOrEqualToFinalShare`` then ``LessThanInitialShare``), take candidates
from the ClusterQueue with the highest share first, a candidate of another queue
only if the strategy holds; queues that do not borrow are never targets; then the
same minimisation.

Everything here is simulated on the quota tree and undone before returning.

Beyond Kueue (its users ask for it: #4329, #5243, #10548): with a
``VictimPlacement`` (the placement check of ``KueueDRADeviceFeasibility``), a set
of targets must also let the preemptor's whole pod set be placed once their pods
are gone (their DRA devices freed). The candidates, their order and the policy's
rules stay Kueue's; only the stopping test grows: the greedy pass goes on until
quota *and* placement fit, and the minimisation gives a target back only if both
still fit without it, trying first the targets that have no pod on the nodes the
preemptor lands on. So the victims end up on the preemptor's nodes, not spread by
quota order over nodes that leave it unplaceable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from dralab.queueing.kueue.index import AdmittedIndex
from dralab.queueing.kueue.quota import SHARE_INFINITE, FlavorResource, QuotaNode, QuotaTree
from dralab.queueing.model import ClusterQueueSpec, WorkloadSpec

__all__ = [
    "DEFAULT_FAIR_STRATEGIES",
    "FairStrategy",
    "PreemptionTarget",
    "VictimPlacement",
    "find_targets",
]

FairStrategy = Literal["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
DEFAULT_FAIR_STRATEGIES: tuple[FairStrategy, ...] = (
    "LessThanOrEqualToFinalShare", "LessThanInitialShare")


@dataclass(frozen=True, slots=True)
class PreemptionTarget:
    workload: str
    # InClusterQueue, InCohortReclamation, InCohortReclaimWhileBorrowing, InCohortFairSharing
    reason: str


class VictimPlacement(Protocol):
    """Node-level feasibility of a preemption, asked by the target search."""

    def places_without(self, victims: Sequence[str]) -> frozenset[str] | None:
        """The nodes the preemptor's pods land on once ``victims``' pods are gone
        (what-if, nothing kept), or None when they cannot all be placed."""
        ...

    def nodes_of(self, workload: str) -> frozenset[str]:
        """The nodes an admitted workload's pods sit on (empty: none placed)."""
        ...


@dataclass(frozen=True, slots=True)
class _Candidate:
    key: str
    cluster_queue: str
    same_queue: bool
    priority: int
    admitted_at: float

    def order(self) -> tuple[bool, int, float, str]:
        return (self.same_queue, self.priority, -self.admitted_at, self.key)


class _Simulation:
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


def _fits(tree: QuotaTree, node: QuotaNode, usage: Mapping[FlavorResource, int],
          allow_borrowing: bool) -> bool:
    for fr, amount in usage.items():
        if amount > tree.available(node, fr):
            return False
        if not allow_borrowing and tree.borrowing(node, fr, amount):
            return False
    return True


def _within_queue_allows(policy: str, candidate: WorkloadSpec, preemptor: WorkloadSpec) -> bool:
    if policy == "LowerPriority":
        return candidate.priority < preemptor.priority
    if policy == "LowerOrNewerEqualPriority":
        return candidate.priority < preemptor.priority or (
            candidate.priority == preemptor.priority and candidate.created > preemptor.created)
    return False


def _reclaim_allows(policy: str, candidate_priority: int, preemptor: WorkloadSpec) -> bool:
    if policy == "Any":
        return True
    if policy == "LowerPriority":
        return candidate_priority < preemptor.priority
    return False


def _holders(index: AdmittedIndex, cluster_queue: str, needed: Sequence[FlavorResource],
             below: int, equal: bool) -> set[str]:
    """Workloads of ``cluster_queue`` using a needed (flavor, resource) with priority
    below ``below`` (or equal to it, if ``equal``)."""
    out: set[str] = set()
    holders = index.holders.get(cluster_queue, {})
    for fr in needed:
        for priority, keys in holders.get(fr, {}).items():
            if priority < below or (equal and priority == below):
                out |= keys
    return out


def _candidates(preemptor: WorkloadSpec, cluster_queue: str, spec: ClusterQueueSpec,
                needed: Sequence[FlavorResource], index: AdmittedIndex,
                workloads: Mapping[str, WorkloadSpec], admitted_at: Mapping[str, float],
                fair_sharing: bool, borrow_within: bool, would_borrow: bool,
                other_queues: bool, usage: Mapping[FlavorResource, int]) -> list[_Candidate]:
    """The candidates in Kueue's order. Under fair sharing, another queue's workloads
    are candidates only if that queue's share is above the preemptor queue's share
    with the preemptor (``usage``): both strategies need that; and none are when the
    preemptor does not raise its queue's share (see ``_fair``). That share is
    computed only once a borrowing queue asks for it: most searches have none."""
    tree = index.tree
    out: list[_Candidate] = []
    policy = spec.preemption
    within = policy.within_cluster_queue
    if within != "Never":
        newer_equal = within == "LowerOrNewerEqualPriority"
        for key in _holders(index, cluster_queue, needed, preemptor.priority, newer_equal):
            other = workloads.get(key)
            if other is None or not _within_queue_allows(within, other, preemptor):
                continue
            out.append(_Candidate(key, cluster_queue, True, other.priority,
                                  admitted_at.get(key, other.created)))
    reclaim = policy.reclaim_within_cohort
    if fair_sharing or not would_borrow:
        # reclaimWithinCohort: any priority under "Any", else only lower ones.
        below = 2**63 if reclaim == "Any" else preemptor.priority
        cohort_allowed = reclaim != "Never"
    else:
        # Classic preemption by a workload that will borrow: only borrowWithinCohort
        # lets it take from other queues (lower priority, up to the threshold).
        below = preemptor.priority
        if policy.max_priority_threshold is not None:
            below = min(below, policy.max_priority_threshold + 1)
        cohort_allowed = borrow_within and reclaim != "Never"
    if cohort_allowed and other_queues:
        own = tree.cluster_queues[cluster_queue]
        share_above: float | None = None
        for member in tree.borrowers(cluster_queue, needed):
            node = tree.cluster_queues[member]
            borrowing_in = [fr for fr in needed if tree.borrowing(node, fr)]
            if not borrowing_in:
                continue
            if fair_sharing:
                if share_above is None:
                    share_above = tree.share(own, usage)
                    if 0 < share_above <= tree.share(own):
                        break  # no fair-sharing preemption of other queues then
                if tree.share(node) <= share_above:
                    continue
            for key in _holders(index, member, borrowing_in, below, False):
                other = workloads.get(key)
                if other is None:
                    continue
                out.append(_Candidate(key, member, False, other.priority,
                                      admitted_at.get(key, other.created)))
    out.sort(key=_Candidate.order)
    return out


def _can_free_enough(tree: QuotaTree, node: QuotaNode, usage: Mapping[FlavorResource, int],
                     needed: Sequence[FlavorResource], candidates: Sequence[_Candidate],
                     index: AdmittedIndex) -> bool:
    """A necessary condition for any search to succeed: evicting a workload raises
    what the preemptor's queue can take by at most that workload's usage (up every
    level of the tree), so all candidates together must hold what is missing. Most
    failing searches of a deep queue end here, without simulating an eviction."""
    for fr in needed:
        missing = usage[fr] - tree.available(node, fr)
        for candidate in candidates:
            missing -= index.usage[candidate.key].get(fr, 0)
            if missing <= 0:
                break
        if missing > 0:
            return False
    return True


def _greedy(sim: _Simulation, tree: QuotaTree, node: QuotaNode,
            usage: Mapping[FlavorResource, int], needed: Sequence[FlavorResource],
            candidates: Sequence[_Candidate], allow_borrowing: bool) -> list[_Candidate]:
    targets: list[_Candidate] = []
    for candidate in candidates:
        if not candidate.same_queue:
            owner = tree.cluster_queues[candidate.cluster_queue]
            if not any(tree.borrowing(owner, fr) for fr in needed):
                continue  # that queue no longer borrows: its workloads are safe
        sim.remove(candidate.key)
        targets.append(candidate)
        if _fits(tree, node, usage, allow_borrowing) and sim.places():
            return _minimise(sim, tree, node, usage, targets, allow_borrowing)
    sim.undo()
    return []


def _minimise(sim: _Simulation, tree: QuotaTree, node: QuotaNode,
              usage: Mapping[FlavorResource, int], targets: list[_Candidate],
              allow_borrowing: bool) -> list[_Candidate]:
    """Give targets back, last first, while the preemptor still fits without them.
    The last target stays (without it the greedy prefix did not fit). With a
    placement check, targets with no pod where the preemptor lands are tried first,
    and a target is given back only if the pod set still places without it."""
    order = list(reversed(targets[:-1]))
    if sim.placement is not None:
        order.sort(key=lambda c: sim.lands_on(c.key))  # stable: reverse order kept within
    kept: set[str] = {targets[-1].key}
    for candidate in order:
        sim.restore(candidate.key)
        if _fits(tree, node, usage, allow_borrowing) and sim.places():
            continue
        sim.remove(candidate.key)
        kept.add(candidate.key)
    return [c for c in targets if c.key in kept]


def _classic(preemptor: WorkloadSpec, spec: ClusterQueueSpec, node: QuotaNode,
             usage: Mapping[FlavorResource, int], needed: Sequence[FlavorResource],
             candidates: list[_Candidate], sim: _Simulation) -> list[_Candidate]:
    tree = sim.index.tree
    if not candidates:
        return []
    same = [c for c in candidates if c.same_queue]
    if len(same) == len(candidates):
        return _greedy(sim, tree, node, usage, needed, candidates, True)
    policy = spec.preemption
    if policy.borrow_within_cohort == "LowerPriority":
        threshold = policy.max_priority_threshold
        allowed = [c for c in candidates if c.same_queue or (
            c.priority < preemptor.priority and (threshold is None or c.priority <= threshold))]
        targets = _greedy(sim, tree, node, usage, needed, allowed, True)
        if targets:
            return targets
    if not any(tree.borrowing(node, fr, amount) for fr, amount in usage.items()):
        reclaim = [c for c in candidates if c.same_queue or _reclaim_allows(
            policy.reclaim_within_cohort, c.priority, preemptor)]
        targets = _greedy(sim, tree, node, usage, needed, reclaim, False)
        if targets:
            return targets
    return _greedy(sim, tree, node, usage, needed, same, True)


def _fair(preemptor_usage: Mapping[FlavorResource, int], node: QuotaNode,
          candidates: list[_Candidate], sim: _Simulation,
          strategies: Sequence[FairStrategy]) -> list[_Candidate]:
    tree = sim.index.tree
    usage = dict(preemptor_usage)
    targets: list[_Candidate] = []
    taken: set[str] = set()
    by_queue: dict[str, list[_Candidate]] = {}
    for candidate in candidates:
        by_queue.setdefault(candidate.cluster_queue, []).append(candidate)
    # Shares change only for the queue a target leaves: kept, not recomputed.
    shares = {name: tree.share(tree.cluster_queues[name]) for name in by_queue}
    mine_before, mine = tree.share(node), tree.share(node, usage)
    for strategy in strategies:
        cursor = dict.fromkeys(by_queue, 0)
        active = set(by_queue)
        while active:
            name = max(active, key=lambda n: (shares[n], n == node.name, n))
            queue, at = by_queue[name], cursor[name]
            while at < len(queue) and queue[at].key in taken:
                at += 1
            if at >= len(queue):
                active.discard(name)
                continue
            candidate = queue[at]
            cursor[name] = at + 1
            if name != node.name:
                if shares[name] == 0:
                    active.discard(name)  # a queue within its quota is never a target
                    continue
                if mine > 0 and mine <= mine_before:
                    # The preemptor does not raise its queue's share (it does not use
                    # the dominant resource): Kueue's no-ping-pong argument
                    # (fair_sharing.md) needs it to, so no fair-sharing preemption.
                    break
                theirs = tree.share(tree.cluster_queues[name], sim.index.usage[candidate.key], -1)
                if theirs >= shares[name] != SHARE_INFINITE:
                    continue  # evicting it would not lower that queue's share
                if strategy == "LessThanOrEqualToFinalShare":
                    allowed = mine <= theirs
                else:
                    allowed = mine < shares[name]
                if not allowed:
                    active.discard(name)
                    continue
            sim.remove(candidate.key)
            taken.add(candidate.key)
            targets.append(candidate)
            shares[name] = tree.share(tree.cluster_queues[name])
            if name == node.name:
                mine_before, mine = tree.share(node), tree.share(node, usage)
            if _fits(tree, node, usage, True) and sim.places():
                return _minimise(sim, tree, node, usage, targets, True)
    sim.undo()
    return []


def find_targets(preemptor: WorkloadSpec, cluster_queue: str, spec: ClusterQueueSpec,
                 usage: Mapping[FlavorResource, int], index: AdmittedIndex,
                 workloads: Mapping[str, WorkloadSpec], admitted_at: Mapping[str, float],
                 fair_sharing: bool,
                 strategies: Sequence[FairStrategy] = DEFAULT_FAIR_STRATEGIES,
                 other_queues: bool = True,
                 placement: VictimPlacement | None = None) -> list[PreemptionTarget]:
    """The workloads to evict so that ``preemptor`` (with ``usage``) fits in
    ``cluster_queue``; empty when no allowed set makes it fit. The quota tree is
    left as it was. ``other_queues=False`` keeps to the preemptor's own queue.
    ``placement``: the set must also let the preemptor's pods be placed."""
    tree = index.tree
    node = tree.cluster_queues[cluster_queue]
    needed = [fr for fr, amount in usage.items() if amount > tree.available(node, fr)]
    if not needed:
        return []
    borrow_within = spec.preemption.borrow_within_cohort != "Never"
    would_borrow = any(tree.borrowing(node, fr, amount) for fr, amount in usage.items())
    candidates = _candidates(preemptor, cluster_queue, spec, needed, index, workloads,
                             admitted_at, fair_sharing, borrow_within, would_borrow,
                             other_queues, usage)
    if not candidates:
        return []
    if not _can_free_enough(tree, node, usage, needed, candidates, index):
        return []
    sim = _Simulation(index, placement)
    if fair_sharing:
        chosen = _fair(usage, node, candidates, sim, strategies)
    else:
        chosen = _classic(preemptor, spec, node, usage, needed, candidates, sim)
    borrows_after = any(tree.borrowing(node, fr, amount) for fr, amount in usage.items())
    sim.undo()
    out: list[PreemptionTarget] = []
    for candidate in chosen:
        if candidate.same_queue:
            reason = "InClusterQueue"
        elif fair_sharing:
            reason = "InCohortFairSharing"
        elif borrows_after:
            reason = "InCohortReclaimWhileBorrowing"
        else:
            reason = "InCohortReclamation"
        out.append(PreemptionTarget(candidate.key, reason))
    return out
