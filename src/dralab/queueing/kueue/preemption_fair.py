"""Fair-sharing preemption as Kueue decides it (``pkg/scheduler/preemption``:
``fairPreemptions``, ``fairsharing/ordering.go``, ``strategy.go``).

* Dominant resource share (DRS) of a ClusterQueue or cohort: per resource, what it
  uses beyond its subtree quota, per mille of what its parent could lend at most;
  the largest over resources, divided by the fair-sharing weight. A node with weight
  0 that borrows always compares above one with a weight (two such compare by the
  unweighted ratio).
* The preemptor's usage is added to its queue for the whole search.
* Target queues come from a tournament down the cohort tree: at each cohort the
  child with the highest DRS (a child cohort wins ties against ClusterQueues);
  queues and cohorts that do not borrow are pruned (except the preemptor's own and
  its ancestors); ClusterQueues with equal DRS are ordered by their first candidate.
* First strategy (``LessThanOrEqualToFinalShare`` unless configured otherwise): the
  preemptor's own queue gives its next candidate (``InClusterQueue``); while the
  preemptor's queue stays within its nominal quota in the resources needing
  preemption, any borrowing queue's next candidate is taken (``InCohortReclamation``,
  Kueue's FairSharingPreemptWithinNominal, on by default); else the target queue's
  candidates are tried in order: the first one the strategy allows is taken
  (``InCohortFairSharing``) and the tournament runs again; those it refuses are kept
  for the second strategy. When the preemptor's share is infinite and the target's
  is not, no candidate can pass: all of that queue's are kept for the second.
* Second strategy (always ``LessThanInitialShare``): over the kept candidates, one
  tournament winner at a time; its next candidate is taken if the preemptor's share
  stays below the target's; either way that queue is dropped.
* Shares are those of the almost-least-common-ancestors: the children of the lowest
  cohort the preemptor's and the target's queue share, on each one's path.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

from dralab.queueing.kueue.preemption_sim import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_FAIR_SHARING,
    IN_COHORT_RECLAMATION,
    Simulation,
    VictimCandidate,
    fits,
    minimise,
)
from dralab.queueing.kueue.quota import DominantShare, FlavorResource, QuotaNode, QuotaTree

__all__ = ["DominantShare", "TargetQueueOrdering", "dominant_share", "fair_targets"]


_NEGATIVE = DominantShare(False, -1.0, 1.0)


def dominant_share(tree: QuotaTree, node: QuotaNode,
                   extra: Mapping[FlavorResource, int] | None = None) -> DominantShare:
    """The DRS of ``node`` (with ``extra`` usage added)."""
    if not extra:
        memo = node.drs_memo
        if memo is None:
            memo = node.drs_memo = _dominant_share(tree, node, None)
        return memo
    return _dominant_share(tree, node, extra)


def _dominant_share(tree: QuotaTree, node: QuotaNode,
                    extra: Mapping[FlavorResource, int] | None) -> DominantShare:
    weight = node.weight_milli / 1000
    if node.parent is None:
        return DominantShare(False, 0.0, weight)
    borrowed: dict[str, int] = {}
    for fr, quota in node.subtree.items():
        over = node.usage.get(fr, 0) + (extra.get(fr, 0) if extra else 0) - quota
        if over > 0:
            borrowed[fr[1]] = borrowed.get(fr[1], 0) + over
    if not borrowed:
        return DominantShare(False, 0.0, weight)
    lendable = tree.lendable(node.parent)
    ratio = 0.0
    for resource, amount in borrowed.items():
        total = lendable.get(resource, 0)
        if total > 0:
            ratio = max(ratio, amount * 1000 / total)
    return DominantShare(True, ratio, weight)


def _change_at(node: QuotaNode, top: QuotaNode, usage: Mapping[FlavorResource, int]
               ) -> dict[FlavorResource, int]:
    """How the usage of ``top`` (``node`` or one of its ancestors) would change if
    ``usage`` left ClusterQueue ``node``: each level passes up only what goes beyond
    the part it never lends (as ``QuotaTree.add_usage``, without changing anything)."""
    change = {fr: -amount for fr, amount in usage.items() if amount}
    current = node
    while current is not top and change:
        above: dict[FlavorResource, int] = {}
        for fr, delta in change.items():
            before = current.usage.get(fr, 0)
            kept = current.guaranteed.get(fr, 0)
            passed = max(0, before + delta - kept) - max(0, before - kept)
            if passed:
                above[fr] = passed
        change = above
        assert current.parent is not None
        current = current.parent
    return change


class TargetQueueOrdering:
    """Kueue's TargetClusterQueueOrdering over one list of candidates: ``targets``
    yields the next target ClusterQueue; the caller then ``pop``s its next
    candidate or ``drop``s the queue."""

    def __init__(self, tree: QuotaTree, preemptor: QuotaNode,
                 candidates: Sequence[VictimCandidate]) -> None:
        self.tree = tree
        self.preemptor = preemptor
        self.ancestors: set[str] = set()
        parent = preemptor.parent
        while parent is not None:
            self.ancestors.add(parent.name)
            parent = parent.parent
        self.queues: dict[str, deque[VictimCandidate]] = {}
        for candidate in candidates:
            self.queues.setdefault(candidate.cluster_queue, deque()).append(candidate)
        self.pruned_queues: set[str] = set()
        self.pruned_cohorts: set[str] = set()

    def targets(self) -> Iterator[str]:
        """The next target ClusterQueue, again and again, until all are pruned."""
        own = self.preemptor
        if own.parent is None:
            while own.name not in self.pruned_queues and self.queues.get(own.name):
                yield own.name
            return
        root = own.root()
        while root.name not in self.pruned_cohorts:
            name = self._next(root)
            if name is not None:
                yield name

    def _share_of(self, node: QuotaNode) -> DominantShare:
        # Kept on the node until its usage changes (``QuotaNode.drs_memo``).
        return dominant_share(self.tree, node)

    def drop(self, name: str) -> None:
        self.pruned_queues.add(name)

    def pop(self, name: str) -> VictimCandidate:
        return self.queues[name].popleft()

    def has_workload(self, name: str) -> bool:
        return bool(self.queues.get(name))

    def _next(self, cohort: QuotaNode) -> str | None:
        current = cohort
        while True:
            best_queue: QuotaNode | None = None
            best_queue_share = _NEGATIVE
            best_cohort: QuotaNode | None = None
            best_cohort_share = _NEGATIVE
            for child in current.children:
                if child.is_cohort:
                    if child.name in self.pruned_cohorts:
                        continue
                    share = self._share_of(child)
                    if not share.borrowing and child.name not in self.ancestors:
                        self.pruned_cohorts.add(child.name)
                    elif share.key() >= best_cohort_share.key():
                        best_cohort, best_cohort_share = child, share
                    continue
                if child.name in self.pruned_queues:
                    continue
                share = self._share_of(child)
                if (not share.borrowing and child is not self.preemptor) \
                        or not self.has_workload(child.name):
                    self.pruned_queues.add(child.name)
                elif best_queue is not None and share.key() == best_queue_share.key():
                    if self.queues[child.name][0].order() < \
                            self.queues[best_queue.name][0].order():
                        best_queue = child
                elif share.key() > best_queue_share.key():
                    best_queue, best_queue_share = child, share
            if best_queue is None and best_cohort is None:
                self.pruned_cohorts.add(current.name)
                return None
            if best_cohort is not None and best_cohort_share.key() >= best_queue_share.key():
                current = best_cohort
                continue
            assert best_queue is not None
            return best_queue.name

    def shares(self, target: str) -> tuple[DominantShare, DominantShare]:
        """The preemptor's and the target's almost-LCA shares."""
        lca = self._lca(self.tree.cluster_queues[target])
        return (self._share_of(_almost_lca(self.preemptor, lca)),
                self._share_of(_almost_lca(self.tree.cluster_queues[target], lca)))

    def target_share_without(self, target: str, usage: Mapping[FlavorResource, int]
                             ) -> DominantShare:
        node = self.tree.cluster_queues[target]
        top = _almost_lca(node, self._lca(node))
        return dominant_share(self.tree, top, _change_at(node, top, usage))

    def _lca(self, node: QuotaNode) -> QuotaNode:
        parent = node.parent
        while parent is not None:
            if parent.name in self.ancestors:
                return parent
            parent = parent.parent
        raise AssertionError(f"{node.name} shares no cohort with {self.preemptor.name}")


def _almost_lca(node: QuotaNode, lca: QuotaNode) -> QuotaNode:
    current = node
    while current.parent is not None and current.parent is not lca:
        current = current.parent
    return current


def _less_equal_final(preemptor_new: DominantShare, _target_old: DominantShare,
                      target_new: DominantShare) -> bool:
    return preemptor_new.key() <= target_new.key()


def _less_than_initial(preemptor_new: DominantShare, target_old: DominantShare,
                       _target_new: DominantShare) -> bool:
    return preemptor_new.key() < target_old.key()


_STRATEGIES = {
    "LessThanOrEqualToFinalShare": _less_equal_final,
    "LessThanInitialShare": _less_than_initial,
}


class _Search:
    def __init__(self, sim: Simulation, node: QuotaNode,
                 usage: Mapping[FlavorResource, int]) -> None:
        self.sim = sim
        self.tree = sim.index.tree
        self.node = node
        self.usage = dict(usage)
        self.targets: list[VictimCandidate] = []

    def take(self, candidate: VictimCandidate, reason: str) -> bool:
        """Evict ``candidate`` (for ``reason``); does the preemptor fit now?"""
        self.sim.remove(candidate.key)
        self.targets.append(replace(candidate, reason=reason))
        tree = self.tree
        tree.add_usage(self.node.name, self.usage, -1)
        try:
            return fits(tree, self.node, self.usage, True) and self.sim.places()
        finally:
            tree.add_usage(self.node.name, self.usage, 1)

    def first(self, candidates: Sequence[VictimCandidate], strategy: str, within_nominal: bool
              ) -> tuple[bool, list[VictimCandidate]]:
        passes = _STRATEGIES[strategy]
        ordering = TargetQueueOrdering(self.tree, self.node, candidates)
        retry: list[VictimCandidate] = []
        for name in ordering.targets():
            if name == self.node.name:
                if self.take(ordering.pop(name), IN_CLUSTER_QUEUE):
                    return True, []
                continue
            if within_nominal:
                if self.take(ordering.pop(name), IN_COHORT_RECLAMATION):
                    return True, []
                continue
            preemptor_new, target_old = ordering.shares(name)
            hopeless = math.isinf(preemptor_new.weighted()) \
                and not math.isinf(target_old.weighted())
            # Evicting a workload never raises its queue's share: when the preemptor's
            # share is above the target's already, no candidate passes the final-share
            # test, and none is simulated (the same outcome, without the cost).
            hopeless = hopeless or (strategy == "LessThanOrEqualToFinalShare"
                                    and preemptor_new.key() > target_old.key())
            if hopeless:
                while ordering.has_workload(name):
                    retry.append(ordering.pop(name))
                continue
            while ordering.has_workload(name):
                candidate = ordering.pop(name)
                target_new = ordering.target_share_without(
                    name, self.sim.index.usage[candidate.key])
                if passes(preemptor_new, target_old, target_new):
                    if self.take(candidate, IN_COHORT_FAIR_SHARING):
                        return True, []
                    break
                retry.append(candidate)
        return False, retry

    def second(self, retry: Sequence[VictimCandidate]) -> bool:
        ordering = TargetQueueOrdering(self.tree, self.node, retry)
        for name in ordering.targets():
            preemptor_new, target_old = ordering.shares(name)
            candidate = ordering.pop(name)
            if _less_than_initial(preemptor_new, target_old, _NEGATIVE) \
                    and self.take(candidate, IN_COHORT_FAIR_SHARING):
                return True
            ordering.drop(name)
        return False


def _every_target_refused(tree: QuotaTree, node: QuotaNode,
                          candidates: Sequence[VictimCandidate]) -> bool:
    """Whether both strategies refuse every candidate before evicting any: no
    candidate is in the preemptor's queue, and the preemptor's share is above every
    target queue's (almost-LCA shares, as the search compares them). Then nothing is
    evicted, so the shares never change: the first strategy finds every queue
    hopeless (or, as LessThanInitialShare, passes none) and the second passes none
    (it needs the preemptor's share below the target's). The search's answer, none,
    without walking the tournament for every queue."""
    ordering = TargetQueueOrdering(tree, node, ())
    seen: set[str] = set()
    for candidate in candidates:
        name = candidate.cluster_queue
        if name in seen:
            continue
        if name == node.name:
            return False
        seen.add(name)
        preemptor_new, target_old = ordering.shares(name)
        if not preemptor_new.key() > target_old.key():
            return False
    return True


def fair_targets(sim: Simulation, node: QuotaNode, usage: Mapping[FlavorResource, int],
                 needed: Sequence[FlavorResource], candidates: Sequence[VictimCandidate],
                 strategies: Sequence[str]) -> list[VictimCandidate]:
    """The targets of fair-sharing preemption (``candidates`` in Kueue's order), or
    empty when no allowed set makes the preemptor fit; the tree is left as it was
    except for the targets' evictions (undone by the caller's ``sim.undo``)."""
    if not candidates:
        return []
    tree = sim.index.tree
    search = _Search(sim, node, usage)
    tree.add_usage(node.name, search.usage, 1)
    try:
        within_nominal = not any(tree.borrowing(node, fr) for fr in needed)
        if not within_nominal and _every_target_refused(tree, node, candidates):
            found = False
        else:
            found, retry = search.first(candidates, strategies[0], within_nominal)
            if not found and len(strategies) > 1:
                found = search.second(retry)
    finally:
        tree.add_usage(node.name, search.usage, -1)
    if not found:
        sim.undo()
        return []
    return minimise(sim, tree, node, usage, search.targets, True)
