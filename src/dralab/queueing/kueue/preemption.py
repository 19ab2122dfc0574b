"""Which admitted workloads to evict so that a pending one fits, as Kueue's
preemptor decides it (``pkg/scheduler/preemption/preemption.go``, ``classical/``,
``fairsharing/``; ``site/content/en/docs/concepts/preemption.md``).

The resources needing preemption are the (flavor, resource)s of the preemptor's
assignment in mode Preempt; by default those it does not fit in now. A candidate
must use one of them.

Classic preemption (``classicalPreemptions``):

* candidates: workloads of the preemptor's ClusterQueue allowed by
  ``withinClusterQueue`` (``InClusterQueue``); and, under ``reclaimWithinCohort``,
  workloads of other ClusterQueues of the cohort tree that use more than their
  quota in a needed resource, with no cohort between them and the lowest cohort
  they share with the preemptor within its quota there. Such a workload is reclaimed
  ``InCohortReclamation`` when the preemptor's request fits in the quota of its
  queue or of a cohort below that shared one (hierarchical advantage); else it may
  be taken only if the preemptor then fits without borrowing
  (``InCohortReclamation``), unless ``borrowWithinCohort`` allows it (lower
  priority, at most ``maxPriorityThreshold``: ``InCohortReclaimWhileBorrowing``);
* order: hierarchical-advantage candidates, then the other queues' ones, then the
  preemptor's queue's -- those whose eviction is in progress (``WorkloadSpec.evicted``)
  of all three first; within each, lower priority first, then the most recent
  quota reservation; a candidate of another queue is skipped once its queue (or a
  cohort below the shared one) no longer uses more than its quota;
* attempts: with borrowing allowed, then without (or the reverse when
  ``borrowWithinCohort`` is off and only reclaim-without-borrowing candidates of
  other queues exist; only with borrowing when there are no candidates of other
  queues, or ``borrowWithinCohort`` is off and the preemptor's queue is not below
  its nominal quota). Each takes candidates in order until the preemptor fits, then
  gives targets back, from the one before the last down, while it still fits.

Fair-sharing preemption: ``preemption_fair``.

Everything here is simulated on the quota tree and undone before returning.

Beyond Kueue (its users ask for it: #4329, #5243, #10548): with a
``VictimPlacement`` (the placement check of ``KueueDRADeviceFeasibility``), a set
of targets must also let the preemptor's whole pod set be placed once their pods
are gone (their DRA devices freed). The candidates, their order and the policy's
rules stay Kueue's; only the stopping test grows: the search goes on until quota
*and* placement fit, and giving targets back keeps only sets that still place,
trying first the targets that have no pod on the nodes the preemptor lands on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from dralab.queueing.kueue.afs import order_by_usage
from dralab.queueing.kueue.index import AdmittedIndex
from dralab.queueing.kueue.preemption_fair import fair_targets
from dralab.queueing.kueue.preemption_sim import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
    Simulation,
    VictimCandidate,
    VictimPlacement,
    fits,
    minimise,
    within_nominal,
)
from dralab.queueing.kueue.quota import FlavorResource, QuotaNode, QuotaTree
from dralab.queueing.model import ClusterQueueSpec, WorkloadSpec

__all__ = [
    "DEFAULT_FAIR_STRATEGIES",
    "FairStrategy",
    "PreemptionTarget",
    "VictimPlacement",
    "find_targets",
    "satisfies_preemption_policy",
]

FairStrategy = Literal["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
DEFAULT_FAIR_STRATEGIES: tuple[FairStrategy, ...] = (
    "LessThanOrEqualToFinalShare", "LessThanInitialShare")

# Bound on the candidate lists kept on an index (``_Context.queue_candidates``).
_DERIVED_KEPT = 50_000


@dataclass(frozen=True, slots=True)
class PreemptionTarget:
    workload: str
    # InClusterQueue, InCohortReclamation, InCohortReclaimWhileBorrowing, InCohortFairSharing
    reason: str


def satisfies_preemption_policy(policy: str, candidate: WorkloadSpec,
                                preemptor: WorkloadSpec) -> bool:
    """Kueue's SatisfiesPreemptionPolicy."""
    if candidate.priority < preemptor.priority:
        return policy in ("LowerPriority", "LowerOrNewerEqualPriority", "Any")
    if policy == "LowerOrNewerEqualPriority":
        return candidate.priority == preemptor.priority and preemptor.created < candidate.created
    return policy == "Any"


class _Context:
    """What one search reads: the preemptor, its queue and the admitted workloads."""

    def __init__(self, preemptor: WorkloadSpec, cluster_queue: str, spec: ClusterQueueSpec,
                 usage: Mapping[FlavorResource, int], needed: Sequence[FlavorResource],
                 index: AdmittedIndex, workloads: Mapping[str, WorkloadSpec],
                 admitted_at: Mapping[str, float],
                 lq_usage: Callable[[str], float | None] | None = None) -> None:
        self.preemptor = preemptor
        self.lq_usage = lq_usage
        self.name = cluster_queue
        self.spec = spec
        self.usage = usage
        self.needed = needed
        self.index = index
        self.tree: QuotaTree = index.tree
        self.node: QuotaNode = index.tree.cluster_queues[cluster_queue]
        self.workloads = workloads
        self.admitted_at = admitted_at

    def candidates_in(self, cluster_queue: str, policy: str) -> Iterable[tuple[str, WorkloadSpec]]:
        """The workloads of ``cluster_queue`` that use a needed resource and that
        ``policy`` lets the preemptor evict."""
        holders = self.index.holders.get(cluster_queue, {})
        seen: set[str] = set()
        mine = self.preemptor.priority
        for fr in self.needed:
            for priority, keys in holders.get(fr, {}).items():
                # Whole priority buckets the policy rules out are skipped unread.
                if (priority > mine and policy != "Any") or (
                        priority == mine and policy == "LowerPriority"):
                    continue
                for key in keys:
                    if key in seen:
                        continue
                    seen.add(key)
                    other = self.workloads.get(key)
                    if other is not None and satisfies_preemption_policy(
                            policy, other, self.preemptor):
                        yield key, other

    def queue_candidates(self, cluster_queue: str, policy: str) -> list[VictimCandidate]:
        """``candidates_in`` as candidates (Kueue's reason for the preemptor's own queue,
        InClusterQueue, else InCohortReclamation), in Kueue's order."""
        if len(self.needed) != 1:
            made = self._made_candidates(cluster_queue, policy)
            made.sort(key=VictimCandidate.order)
            return made
        # One needed (flavor, resource): the preemption oracle's question, asked for the
        # same lists of a cohort's borrowing queues by every head of the cohort. The
        # list depends only on the queue's holders (``AdmittedIndex.versions``) and on
        # what the policy reads of the preemptor, so it is kept on the index.
        index = self.index
        preemptor = self.preemptor
        created = preemptor.created if policy == "LowerOrNewerEqualPriority" else None
        key = ("candidates", cluster_queue, self.needed[0], policy, preemptor.priority, created,
               cluster_queue == self.name, id(self.workloads), id(self.admitted_at))
        if self.lq_usage is not None:  # LocalQueue usage changes without the holders
            return order_by_usage(sorted(self._made_candidates(cluster_queue, policy),
                                         key=VictimCandidate.order))
        version = index.versions.get(cluster_queue, 0)
        known = index.derived.get(key)
        if known is not None and known[0] == version:
            return cast(list[VictimCandidate], known[1])
        made = self._made_candidates(cluster_queue, policy)
        made.sort(key=VictimCandidate.order)
        if len(index.derived) >= _DERIVED_KEPT:
            index.derived.clear()  # mostly lists of past preemptors
        index.derived[key] = (version, made)
        return made

    def _made_candidates(self, cluster_queue: str, policy: str) -> list[VictimCandidate]:
        reason = IN_CLUSTER_QUEUE if cluster_queue == self.name else IN_COHORT_RECLAMATION
        return [self.candidate(key, other, cluster_queue, reason)
                for key, other in self.candidates_in(cluster_queue, policy)]

    def candidate(self, key: str, other: WorkloadSpec, cluster_queue: str, reason: str,
                  lca: str | None = None, without_borrowing: bool = False) -> VictimCandidate:
        return VictimCandidate(key, cluster_queue, cluster_queue == self.name, other.priority,
                               self.admitted_at.get(key, other.created), reason, lca,
                               without_borrowing, other.evicted,
                               self.lq_usage(key) if self.lq_usage is not None else None)


def _fits_in_quota(node: QuotaNode, requests: Mapping[FlavorResource, int]
                   ) -> tuple[bool, dict[FlavorResource, int]]:
    """Kueue's QuantitiesFitInQuota: whether ``requests`` fit in ``node``'s subtree
    quota on top of its usage, and what is left once its unused local quota is used."""
    fit = True
    remaining: dict[FlavorResource, int] = {}
    for fr, amount in requests.items():
        if node.subtree.get(fr, 0) < node.usage.get(fr, 0) + amount:
            fit = False
        remaining[fr] = max(0, amount - QuotaTree.local_available(node, fr))
    return fit, remaining


def _borrow_threshold(spec: ClusterQueueSpec) -> tuple[bool, int | None]:
    """Whether borrowWithinCohort is off, and its maxPriorityThreshold."""
    policy = spec.preemption
    if policy.borrow_within_cohort == "Never":
        return True, None
    return False, policy.max_priority_threshold


def _other_queue_candidates(ctx: _Context) -> tuple[list[VictimCandidate], list[VictimCandidate]]:
    """Kueue's collectCandidatesForHierarchicalReclaim: the candidates of other
    ClusterQueues with a hierarchical advantage, and the others."""
    advantaged: list[VictimCandidate] = []
    others: list[VictimCandidate] = []
    node, tree, spec = ctx.node, ctx.tree, ctx.spec
    reclaim = spec.preemption.reclaim_within_cohort
    if node.parent is None or reclaim == "Never":
        return advantaged, others
    # Per cohort on the preemptor's path: does the preemptor's request fit in the
    # quota below it (the queue's, or a lower cohort's)?
    advantage: dict[str, bool] = {}
    has_advantage, remaining = _fits_in_quota(node, ctx.usage)
    ancestor: QuotaNode | None = node.parent
    while ancestor is not None:
        advantage[ancestor.name] = has_advantage
        fit, remaining = _fits_in_quota(ancestor, remaining)
        has_advantage = has_advantage or fit
        ancestor = ancestor.parent
    forbidden, threshold = _borrow_threshold(spec)
    for member in tree.borrowers(ctx.name, ctx.needed):
        owner = tree.cluster_queues[member]
        lca: QuotaNode | None = owner.parent
        skip = False
        while lca is not None and lca.name not in advantage:
            if within_nominal(lca, ctx.needed):
                skip = True  # a cohort between them keeps within its quota
                break
            lca = lca.parent
        if skip or lca is None:
            continue
        for key, other in ctx.candidates_in(member, reclaim):
            if advantage[lca.name]:
                advantaged.append(ctx.candidate(key, other, member, IN_COHORT_RECLAMATION,
                                                lca.name))
                continue
            above = other.priority >= ctx.preemptor.priority or (
                threshold is not None and other.priority > threshold)
            if forbidden or above:
                others.append(ctx.candidate(key, other, member, IN_COHORT_RECLAMATION,
                                            lca.name, without_borrowing=True))
            else:
                others.append(ctx.candidate(key, other, member,
                                            IN_COHORT_RECLAIM_WHILE_BORROWING, lca.name))
    return advantaged, others


def _still_valid(ctx: _Context, candidate: VictimCandidate, borrowing: bool) -> bool:
    """Kueue's candidateIsValid, asked when the candidate's turn comes."""
    if candidate.same_queue:
        return True
    if borrowing and candidate.without_borrowing:
        return False
    node: QuotaNode | None = ctx.tree.cluster_queues[candidate.cluster_queue]
    while node is not None and node.name != candidate.lca:
        if within_nominal(node, ctx.needed):
            return False
        node = node.parent
    return True


def _can_free_enough(ctx: _Context, candidates: Sequence[VictimCandidate]) -> bool:
    """A necessary condition for any search to succeed: evicting a workload raises
    what the preemptor's queue can take by at most that workload's usage (up every
    level of the tree), so all candidates together must hold what is missing. Most
    failing searches of a deep queue end here, without simulating an eviction."""
    for fr in ctx.needed:
        missing = ctx.usage.get(fr, 0) - max(0, ctx.tree.available(ctx.node, fr))
        for candidate in candidates:
            if missing <= 0:
                break
            missing -= ctx.index.usage[candidate.key].get(fr, 0)
        if missing > 0:
            return False
    return True


def _classic(ctx: _Context, sim: Simulation, other_queues: bool) -> list[VictimCandidate]:
    same: list[VictimCandidate] = []
    within = ctx.spec.preemption.within_cluster_queue
    if within != "Never":
        same = [ctx.candidate(key, other, ctx.name, IN_CLUSTER_QUEUE)
                for key, other in ctx.candidates_in(ctx.name, within)]
    advantaged, others = _other_queue_candidates(ctx) if other_queues else ([], [])
    for group in (same, advantaged, others):
        group.sort(key=VictimCandidate.order)
        group[:] = order_by_usage(group)
    # Kueue's NewCandidateIterator: the workloads already being evicted of every group
    # (in the groups' order) before all the others
    ordered = [*advantaged, *others, *same]
    candidates = [c for c in ordered if c.evicted] + [c for c in ordered if not c.evicted]
    if not candidates or not _can_free_enough(ctx, candidates):
        return []
    forbidden, _ = _borrow_threshold(ctx.spec)
    below_nominal = all(ctx.node.nominal.get(fr, 0) > ctx.node.usage.get(fr, 0)
                        for fr in ctx.needed)
    if (not advantaged and not others) or (forbidden and not below_nominal):
        attempts: tuple[bool, ...] = (True,)
    elif forbidden and not advantaged:
        attempts = (False, True)
    else:
        attempts = (True, False)
    tree, node, usage = ctx.tree, ctx.node, ctx.usage
    for borrowing in attempts:
        targets: list[VictimCandidate] = []
        for candidate in candidates:
            if not _still_valid(ctx, candidate, borrowing):
                continue
            sim.remove(candidate.key)
            targets.append(candidate)
            if fits(tree, node, usage, borrowing) and sim.places():
                return minimise(sim, tree, node, usage, targets, borrowing)
        sim.undo()
    return []


def _fair_candidates(ctx: _Context, other_queues: bool) -> list[VictimCandidate]:
    """Kueue's findCandidates: the preemptor's queue's workloads its
    withinClusterQueue allows, and those reclaimWithinCohort allows of the queues of
    the cohort tree that borrow a needed resource; in Kueue's order."""
    out: list[VictimCandidate] = []
    policy = ctx.spec.preemption
    if policy.within_cluster_queue != "Never":
        out.extend(ctx.queue_candidates(ctx.name, policy.within_cluster_queue))
    if other_queues and ctx.node.parent is not None and policy.reclaim_within_cohort != "Never":
        for member in ctx.tree.borrowers(ctx.name, ctx.needed):
            out.extend(ctx.queue_candidates(member, policy.reclaim_within_cohort))
    out.sort(key=VictimCandidate.order)
    return order_by_usage(out)


def find_targets(preemptor: WorkloadSpec, cluster_queue: str, spec: ClusterQueueSpec,
                 usage: Mapping[FlavorResource, int], index: AdmittedIndex,
                 workloads: Mapping[str, WorkloadSpec], admitted_at: Mapping[str, float],
                 fair_sharing: bool,
                 strategies: Sequence[FairStrategy] = DEFAULT_FAIR_STRATEGIES,
                 other_queues: bool = True,
                 placement: VictimPlacement | None = None,
                 needed: Iterable[FlavorResource] | None = None,
                 lq_usage: Callable[[str], float | None] | None = None
                 ) -> list[PreemptionTarget]:
    """The workloads to evict so that ``preemptor`` (with ``usage``) fits in
    ``cluster_queue``; empty when no allowed set makes it fit. The quota tree is
    left as it was. ``needed``: the (flavor, resource)s needing preemption (Kueue:
    those assigned in mode Preempt); by default those ``usage`` does not fit in now.
    ``other_queues=False`` keeps to the preemptor's own queue. ``placement``: the
    set must also let the preemptor's pods be placed. ``lq_usage``: a candidate's
    LocalQueue usage under Admission Fair Sharing (None: not compared)."""
    tree = index.tree
    node = tree.cluster_queues[cluster_queue]
    if needed is None:
        needed = [fr for fr, amount in usage.items() if amount > tree.available(node, fr)]
    needed = sorted(set(needed))
    if not needed:
        return []
    ctx = _Context(preemptor, cluster_queue, spec, usage, needed, index, workloads,
                   admitted_at, lq_usage)
    sim = Simulation(index, placement)
    if fair_sharing:
        candidates = _fair_candidates(ctx, other_queues)
        if not candidates or not _can_free_enough(ctx, candidates):
            return []
        chosen = fair_targets(sim, node, usage, needed, candidates, strategies)
    else:
        chosen = _classic(ctx, sim, other_queues)
    sim.undo()
    return [PreemptionTarget(c.key, c.reason) for c in chosen]
