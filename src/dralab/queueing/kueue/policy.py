"""Kueue's admission cycle on the plain queueing model.

One ``cycle`` does what one pass of Kueue's scheduler does
(``pkg/scheduler/scheduler.go``; ``cluster_queue.md``, "Queueing strategy"):

1. take the head of every ClusterQueue's queue (priority, higher first, then
   creation time, then key): one workload per ClusterQueue per cycle;
2. assign it flavors against the usage at the start of the cycle (``flavors``);
   a head that needs preemption gets its targets chosen now, against that usage;
3. order these entries: without fair sharing by borrowing level (lower first), then
   higher priority, then older (``classic_order_key``); with fair sharing one at a
   time by Kueue's tournament over each cohort tree (``fair_sharing_order``);
4. admit them in that order, checking each against the usage left by the ones
   before it ("Workload no longer fits after processing another workload"). An
   entry that needs preemption is skipped (requeued) when an entry before it evicted
   one of its targets and no other set exists, or when it would not fit once its
   targets are gone; else it evicts its targets and is admitted in the same cycle
   (Kueue waits for the evicted pods to go and admits it in a later cycle; here
   eviction is immediate). One that needs preemption and has no targets, in a
   ClusterQueue that cannot always reclaim, holds back the quota it could still
   take for the rest of the cycle (Kueue's reserveCapacityForUnreclaimablePreempt).

A head that cannot be admitted: under ``StrictFIFO`` it stays at the head and
blocks its queue; under ``BestEffortFIFO`` it is set aside (Kueue's inadmissible
list) so the next cycle tries the next one, and it comes back when a workload
leaves the cohort tree (finished, evicted; at the start of the next cycle) or the
queues change. Each pending workload has Kueue's message and QuotaReserved=False
reason (``pending_messages``, ``pending_reasons``).

``stopPolicy: Hold`` admits nothing new in that ClusterQueue; ``HoldAndDrain``
also evicts its admitted workloads (reason ``ClusterQueueStopped``).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from dralab.queueing.kueue import messages
from dralab.queueing.kueue.afs import AdmissionFairSharing, local_queue_key
from dralab.queueing.kueue.flavors import (
    AssignMode,
    OldPodSet,
    PreemptionMode,
    WorkloadAssignment,
    assign_flavors,
    topology_requests,
)
from dralab.queueing.kueue.index import AdmittedIndex, admission_usage
from dralab.queueing.kueue.preemption import (
    DEFAULT_FAIR_STRATEGIES,
    FairStrategy,
    PreemptionTarget,
    VictimPlacement,
    find_targets,
)
from dralab.queueing.kueue.quota import FlavorResource, QuotaNode, QuotaTree
from dralab.queueing.kueue.reducer import (
    can_be_partially_admitted,
    full_counts,
    minimum_counts,
    reduce_pod_sets,
    scaled_workload,
)
from dralab.queueing.kueue.scan import ScanBookmark, last_assignment_outdated
from dralab.queueing.kueue.tas_assign import TASProvider
from dralab.queueing.kueue.tas_delayed import assign_delayed, needs_delayed_pass
from dralab.queueing.kueue.tas_replace import (
    NODE_FAILURES,
    eviction_message,
    needs_second_pass,
    replace_failed_node,
    settle,
)
from dralab.queueing.model import (
    Admission,
    ClusterQueueSpec,
    Decision,
    QueueingState,
    WorkloadSpec,
)

__all__ = ["EVICTED_CLUSTER_QUEUE_STOPPED", "FairCandidate", "KueuePolicy", "classic_order_key",
           "fair_less", "fair_sharing_order", "resources_to_reserve"]

# Kueue's QuotaReserved=False reasons the cycle itself gives (the flavor assigner's
# NoFitReason gives the others).
WAITING_FOR_QUOTA = "WaitingForQuota"
MISCONFIGURED = "Misconfigured"
SUSPENDED = "Suspended"
ADMISSION_GATED = "AdmissionGated"
PREEMPTION_GATED_MESSAGE = "Workload requires preemption, but it's gated"

# Decision.reason of a workload evicted because its ClusterQueue is HoldAndDrain
# (Kueue's Evicted condition reason; its message is "The ClusterQueue is stopped").
EVICTED_CLUSTER_QUEUE_STOPPED = "ClusterQueueStopped"
# Decision.reason of a workload slice a scaled-up slice replaced (Kueue's Finished
# condition reason; Kueue does not requeue it).
WORKLOAD_SLICE_REPLACED = "WorkloadSliceReplaced"


# Bound on the preemption oracle's kept answers (each a few hundred bytes).
_ORACLE_ANSWERS_KEPT = 200_000


@dataclass(slots=True)
class _Entry:
    key: str
    workload: WorkloadSpec
    cluster_queue: str
    assignment: WorkloadAssignment
    # Kueue's preemption targets, chosen at nomination against the cycle's start
    # (quota-only admission; with the placement check they are chosen in the loop).
    targets: list[PreemptionTarget] | None = None
    # Kueue's LastAssignment the scan resumed from (scan.py), None: from the first flavor
    last: ScanBookmark | None = None
    # the admitted workload slice it replaces (ElasticJobsViaWorkloadSlices), its pod sets
    replaced: tuple[OldPodSet, ...] | None = None


def resources_to_reserve(mode: AssignMode, borrowing: int, usage: Mapping[FlavorResource, int],
                         spec: ClusterQueueSpec, cq_usage: Mapping[FlavorResource, int]
                         ) -> dict[FlavorResource, int]:
    """Kueue's quotaResourcesToReserve: a workload that fits holds its usage; one that
    needs preemption holds, per (flavor, resource), what it may still take of its
    ClusterQueue's quota: up to nominal plus the borrowing limit (all of it without a
    limit) when it borrows, else up to nominal (never below 0)."""
    if mode != AssignMode.PREEMPT:
        return dict(usage)
    quotas = {(fq.flavor, resource): quota for group in spec.resource_groups
              for fq in group.flavors for resource, quota in fq.resources.items()}
    held: dict[FlavorResource, int] = {}
    for fr, amount in usage.items():
        quota = quotas.get(fr)
        used = cq_usage.get(fr, 0)
        nominal = quota.nominal if quota is not None else 0
        limit = quota.borrowing_limit if quota is not None else None
        if borrowing > 0:
            held[fr] = amount if limit is None else min(amount, nominal + limit - used)
        else:
            held[fr] = max(0, min(amount, nominal - used))
    return held


def classic_order_key(borrowing: int, priority: int, created: float, key: str, *,
                      priority_sorting: bool = True, preemptor: bool = False,
                      prioritize_preemptors: bool = False
                      ) -> tuple[bool, int, int, float, str]:
    """Where a ClusterQueue's head goes in a cycle without fair sharing (Kueue's
    classical iterator): with PrioritizePreemptorWorkloads (alpha, off by default) a
    preemptor waiting for its targets to go first; then lower borrowing level; then,
    with PrioritySortingWithinCohort (beta, on by default), higher priority; then the
    older (``created``: Kueue's queue-order timestamp, ``queue_order``); the key breaks
    the remaining ties (Kueue's are in the order it listed its queue heads)."""
    return (not (prioritize_preemptors and preemptor), borrowing,
            -priority if priority_sorting else 0, created, key)


def fair_sharing_order(entries: Sequence[_Entry], tree: QuotaTree,
                       version: Callable[[str], int] | None = None,
                       priority_sorting: bool = True) -> Iterator[_Entry]:
    """Kueue's fair-sharing iterator: the cycle's entries one at a time, each chosen
    when the ones before it have been processed (their admissions change the shares).

    A ClusterQueue without a cohort comes as it is; otherwise a tournament runs over
    its whole cohort tree: at each cohort, among the winners of its child cohorts and
    the entries of its child ClusterQueues, the one whose child node (with the entry's
    usage added) does not borrow on a resource the entry asks for wins first
    (FairSharingPrioritizeNonBorrowing), then the lower dominant resource share of that
    child node, then the higher priority (PrioritySortingWithinCohort), then the older;
    the key breaks ties.

    Cohort trees share no quota, so they are taken one after the other (Kueue takes
    them in map order). ``version(root)`` changes whenever usage in that tree does;
    while it stays, the shares computed for the remaining entries still hold."""
    by_root: dict[str, list[_Entry]] = {}
    for entry in entries:
        by_root.setdefault(tree.root_name(entry.cluster_queue), []).append(entry)
    for root_name in sorted(by_root):
        remaining = {entry.cluster_queue: entry for entry in by_root[root_name]}
        root = tree.cluster_queues[next(iter(remaining))].root()
        if not root.is_cohort:
            yield from remaining.values()
            continue
        views: dict[str, _FairView] = {}
        seen: int | None = None
        while remaining:
            now = version(root_name) if version is not None else None
            if now is None or now != seen:
                views, seen = {}, now
            for name, entry in remaining.items():
                if name not in views:
                    views[name] = _FairView(entry, tree)
            winner = _tournament(root, {name: views[name] for name in remaining},
                                 priority_sorting)
            assert winner is not None
            del remaining[winner.cluster_queue]
            yield winner


class _FairView:
    """One entry as the tournament sees it: per ancestor cohort, the share of the
    child node on the path (with the entry's usage added) and the (flavor, resource)s
    that node then borrows."""

    __slots__ = ("at", "entry", "requested")

    def __init__(self, entry: _Entry, tree: QuotaTree) -> None:
        self.entry = entry
        usage = entry.assignment.usage
        self.requested = frozenset(fr for fr, amount in usage.items() if amount > 0)
        self.at: dict[int, tuple[tuple[int, float], frozenset[FlavorResource]]] = {}
        tree.add_usage(entry.cluster_queue, usage, 1)
        try:
            node: QuotaNode | None = tree.cluster_queues[entry.cluster_queue]
            while node is not None and node.parent is not None:
                borrowed = frozenset(fr for fr, quota in node.subtree.items()
                                     if node.usage.get(fr, 0) > quota)
                self.at[id(node.parent)] = (tree.share_order(node), borrowed)
                node = node.parent
        finally:
            tree.add_usage(entry.cluster_queue, usage, -1)

    def before(self, other: _FairView, cohort: QuotaNode, priority_sorting: bool = True
               ) -> bool:
        return fair_less(self.candidate(cohort), other.candidate(cohort),
                         priority_sorting=priority_sorting)

    def candidate(self, cohort: QuotaNode) -> FairCandidate:
        share, borrowed = self.at[id(cohort)]
        workload = self.entry.workload
        return FairCandidate(self.entry.key, workload.priority, workload.created, share,
                             bool(borrowed & self.requested))


@dataclass(frozen=True, slots=True)
class FairCandidate:
    """An entry as one cohort of the tournament compares it: its child node's share
    (``QuotaTree.share_order``) and whether that node borrows on a (flavor, resource)
    the entry asks for. ``preemptor``: it waits for its preemption targets to go
    (never so in dralab's cycle: a preemptor is admitted as it evicts)."""

    key: str
    priority: int
    created: float
    share: tuple[int, float]
    borrows_on_requested: bool
    preemptor: bool = False


def fair_less(a: FairCandidate, b: FairCandidate, *, priority_sorting: bool = True,
              prioritize_preemptors: bool = False) -> bool:
    """Kueue's entryComparer.less: with PrioritizePreemptorWorkloads (alpha, off by
    default) a waiting preemptor first; then not borrowing on a requested resource,
    then the lower share, then (PrioritySortingWithinCohort, on by default) the higher
    priority, then the older; the key breaks the remaining ties."""
    if prioritize_preemptors and a.preemptor != b.preemptor:
        return a.preemptor
    if a.borrows_on_requested != b.borrows_on_requested:
        return not a.borrows_on_requested
    if a.share != b.share:
        return a.share < b.share
    if priority_sorting and a.priority != b.priority:
        return a.priority > b.priority
    return (a.created, a.key) < (b.created, b.key)


def _tournament(root: QuotaNode, views: Mapping[str, _FairView],
                priority_sorting: bool = True) -> _Entry | None:
    """The winner of ``root``'s cohort tree (a loop over the cohorts, deepest first)."""
    order: list[QuotaNode] = []
    stack = [root]
    while stack:
        current = stack.pop()
        order.append(current)
        stack.extend(c for c in current.children if c.is_cohort)
    winners: dict[int, _FairView] = {}
    for cohort in reversed(order):
        candidates = [winners[id(c)] for c in cohort.children if c.is_cohort and id(c) in winners]
        candidates += [views[c.name] for c in cohort.children
                       if not c.is_cohort and c.name in views]
        if not candidates:
            continue
        best = candidates[0]
        for challenger in candidates[1:]:
            if challenger.before(best, cohort, priority_sorting):
                best = challenger
        winners[id(cohort)] = best
    won = winners.get(id(root))
    return won.entry if won is not None else None


class _ClusterQueueQueue:
    """The pending workloads of one ClusterQueue: a heap with lazy deletion, and
    the set-aside (inadmissible) ones."""

    __slots__ = ("heap", "parked")

    def __init__(self) -> None:
        self.heap: list[tuple[int, float, str]] = []
        self.parked: dict[str, WorkloadSpec] = {}


class PreemptorCheck(VictimPlacement, Protocol):
    def unplaceable_without(self, victims: Sequence[str]) -> frozenset[str] | str: ...


class PlacementCheck(Protocol):
    """Whether a workload's pods can be placed now with the flavors ``admission`` gives
    them: None if they can (the check may keep the room for them), else why not."""

    def check(self, key: str, workload: WorkloadSpec, admission: Admission) -> str | None: ...

    def release(self, key: str) -> None:
        """The workload was evicted: the room its pods took is free again."""
        ...

    def for_preemptor(self, key: str, workload: WorkloadSpec, admission: Admission
                      ) -> PreemptorCheck | None:
        """What-ifs for choosing a preemptor's victims (None: nothing to place)."""
        ...


class KueuePolicy:
    """Kueue's admission (classic or fair-sharing preemption) as an ``AdmissionPolicy``.

    ``fair_sharing`` and ``fair_strategies`` are the Kueue Configuration's
    ``fairSharing.enable`` and ``fairSharing.preemptionStrategies`` (defaults as
    Kueue's). After each ``cycle``, ``progressed`` says whether another cycle may
    change anything, and ``pending_messages`` holds the last message of every
    workload that was tried and not admitted.
    """

    def __init__(self, fair_sharing: bool = False,
                 fair_strategies: Sequence[FairStrategy] = DEFAULT_FAIR_STRATEGIES,
                 partial_admission: bool = True) -> None:
        self.fair_sharing = fair_sharing
        # Kueue's PartialAdmission gate (beta, on by default): a workload that does not
        # fit whole may be admitted with fewer pods, down to its pod sets' minCount.
        self.partial_admission = partial_admission
        self.fair_strategies: tuple[FairStrategy, ...] = tuple(fair_strategies)
        # Kueue's PrioritySortingWithinCohort (beta, on by default): the cycle's entries
        # by priority after borrowing; off, by queue-order time only.
        self.priority_sorting = True
        # Kueue's PrioritizePreemptorWorkloads (alpha, off by default): entries waiting
        # for their preemption targets to go first. No entry of dralab's cycle waits
        # (a preemptor is admitted as it evicts), so it orders nothing here.
        self.prioritize_preemptors = False
        # Kueue's RecomputeAssignmentUponPreemptionTargetsOverlap (beta, on by default):
        # a preemptor whose targets an entry before it evicted looks for others; off,
        # it is skipped for the cycle ("overlapping preemption targets").
        self.recompute_on_overlap = True
        # Kueue's FlavorFungibilityPreserveScanProgress (beta, on by default): a flavor
        # scan bookmark of this or the last cycle survives a generation change and an
        # entry skipped for contention keeps it (scan.py).
        self.preserve_scan_progress = True
        # Kueue's ElasticJobsViaWorkloadSlices (beta, on by default): a workload naming
        # the admitted slice it replaces asks only its increase, on the slice's flavors,
        # and the old slice finishes (WorkloadSliceReplaced) when it is admitted.
        self.workload_slices = True
        # Per pending workload, where its next flavor scan resumes (Kueue's
        # Info.LastAssignment); per ClusterQueue Kueue's AllocatableResourceGeneration
        # (advanced when an admitted workload leaves it or its cohort tree's quotas
        # change); the cycle count (Kueue's schedulingCycle).
        self._bookmarks: dict[str, ScanBookmark] = {}
        self._generation: dict[str, int] = {}
        self._cycle_count = 0
        self.progressed = False
        self.pending_messages: dict[str, str] = {}
        # Kueue's QuotaReserved=False reason with each of ``pending_messages``.
        self.pending_reasons: dict[str, str] = {}
        # The preemptors of the last cycle and the message Kueue shows on each while its
        # targets go ("<flavor assignment message>. Pending the preemption of N workload(s)").
        self.preemption_messages: dict[str, str] = {}
        # Beyond Kueue's quota check: is the whole pod set placeable on the nodes now?
        # (None: quota only, as Kueue.) Asked before a workload is admitted (after its
        # victims are evicted, chosen so that it places); a message keeps it pending.
        self.placement: PlacementCheck | None = None
        # Kueue's own TAS (TopologyAwareScheduling, tas_assign.py): TAS flavors' topology
        # snapshots; None: topology requests are left to ``placement`` as before.
        self.tas: TASProvider | None = None
        # Kueue's Admission Fair Sharing (afs.py): the LocalQueues' usage ledger when the
        # Configuration has admissionFairSharing; None: the queues' order is as without.
        self.afs: AdmissionFairSharing | None = None
        # per workload, why its last TAS second pass found no node replacement
        self.second_pass_failures: dict[str, str] = {}
        # per workload evicted for its failed nodes, its Evicted condition's message
        self.eviction_messages: dict[str, str] = {}
        # pending preemptors whose TAS pods hold nodes for the rest of the cycle (_reserve)
        self._tas_held: list[str] = []
        self._specs_seen: tuple[dict[str, int], dict[str, int], dict[str, int]] | None = None
        self._tree: QuotaTree | None = None
        self._index: AdmittedIndex | None = None
        self._queues: dict[str, _ClusterQueueQueue] = {}
        self._queued: dict[str, str] = {}        # pending key -> ClusterQueue whose heap has it
        self._blocked: dict[str, str] = {}       # key -> why it has no ClusterQueue to queue in
        self._blocked_in: dict[str, str] = {}    # blocked key -> the ClusterQueue it names
        self._known: set[str] = set()
        self._now = 0.0
        # Evictions of this cycle: per ClusterQueue, the usage of it and its cohorts
        # before the first one (see ``_release``).
        self._evicted_from: dict[str, list[tuple[QuotaNode, dict[FlavorResource, int]]]] = {}
        # Workloads evicted by a preemption, and when. A workload evicted at ``now``
        # may not evict other queues' workloads at the same ``now``. Kueue's rules
        # rule out two workloads preempting each other, but not rings among several
        # queues: under fair sharing (Kueue #3779, #7101), or in classic mode when a
        # reclaim lands in another flavor than the one its victim's queue then takes
        # back by preempting within itself. Within one queue preemption follows
        # priority (and age), which cannot ring; so this ends every ring.
        self._preempted_at: dict[str, float] = {}
        # Admitted workloads read with their eviction in progress (WorkloadSpec.evicted),
        # and those of them that have held their quota for a cycle (``_stop_evicting``).
        self._evicting: set[str] = set()
        self._stopping: set[str] = set()
        # The preemption oracle's answers for the current admitted workloads (see
        # ``_nominate``); forgotten whenever the state may have changed from outside.
        self._oracle_answers: dict[tuple[object, ...], tuple[PreemptionMode, int]] = {}

    # -- keeping in step with the state -------------------------------------------------
    def _rebuild(self, state: QueueingState) -> None:
        self._evicted_from.clear()  # every workload is queued afresh below
        self._tree = QuotaTree(state.cluster_queues, state.cohorts)
        self._index = AdmittedIndex(self._tree)
        self._queues = {name: _ClusterQueueQueue() for name in sorted(state.cluster_queues)}
        self._queued.clear()
        self._blocked.clear()
        self._blocked_in.clear()
        self._known = set(state.workloads)
        self._evicting = {k for k in state.admitted
                          if (w := state.workloads.get(k)) is not None and w.evicted}
        for key in sorted(state.admitted):
            admission = state.admitted[key]
            if admission.cluster_queue in self._tree.cluster_queues:
                self._index.add(key, admission.cluster_queue, admission_usage(admission),
                                self._priority(state, key))
        for key in sorted(state.workloads):
            if key not in state.admitted:
                self._enqueue(state, key)

    def _sync(self, state: QueueingState) -> None:
        seen = ({k: id(v) for k, v in state.cluster_queues.items()},
                {k: id(v) for k, v in state.cohorts.items()},
                {k: hash(v) for k, v in state.local_queues.items()})
        if seen != self._specs_seen or self._index is None:
            before, self._specs_seen = self._specs_seen, seen
            self._rebuild(state)
            self._quotas_changed(before, seen)
            return
        index = self._index
        admitted_now = state.admitted.keys()
        for key in sorted(admitted_now - index.cluster_queue.keys()):
            admission = state.admitted[key]
            self._queued.pop(key, None)
            if (w := state.workloads.get(key)) is not None and w.evicted:
                self._evicting.add(key)
            if admission.cluster_queue in index.by_cluster_queue:
                index.add(key, admission.cluster_queue, admission_usage(admission),
                          self._priority(state, key))
        for key in sorted(index.cluster_queue.keys() - admitted_now):
            left = index.remove(key)
            self._generation[left] = self._generation.get(left, 0) + 1
            self._left(left)
            if key in state.workloads:
                self._enqueue(state, key)
        workloads_now = state.workloads.keys()
        for key in sorted(workloads_now - self._known):
            self._known.add(key)
            if key not in state.admitted:
                self._enqueue(state, key)
        for key in self._known - workloads_now:
            self._bookmarks.pop(key, None)
            self._queued.pop(key, None)
            self._blocked.pop(key, None)
            self._blocked_in.pop(key, None)
            self.pending_messages.pop(key, None)
            self.pending_reasons.pop(key, None)
        self._known &= workloads_now

    def _quotas_changed(self, before: tuple[dict[str, int], dict[str, int], dict[str, int]] | None,
                        now: tuple[dict[str, int], dict[str, int], dict[str, int]]) -> None:
        """Kueue's AllocatableResourceGeneration after ClusterQueues or cohorts changed:
        every ClusterQueue of a cohort tree with a changed (or new) member advances."""
        if before is None:
            return
        assert self._tree is not None
        changed = {name for name, spec_id in now[0].items() if before[0].get(name) != spec_id}
        cohorts_changed = before[1] != now[1]
        for name in self._tree.cluster_queues:
            if cohorts_changed or any(m in changed for m in self._tree.members(name)):
                self._generation[name] = self._generation.get(name, 0) + 1

    def _resume_from(self, key: str, cluster_queue: str, workload: WorkloadSpec
                     ) -> ScanBookmark | None:
        """Kueue's getAssignments: the workload's bookmark, dropped when outdated."""
        last = self._bookmarks.get(key)
        if last is not None and last_assignment_outdated(
                last, self._generation.get(cluster_queue, 0), self._cycle_count,
                workload.pod_sets, preserve_progress=self.preserve_scan_progress):
            del self._bookmarks[key]
            return None
        return last

    def _replaced_slice(self, workload: WorkloadSpec, cluster_queue: str,
                        state: QueueingState) -> tuple[OldPodSet, ...] | None:
        """Kueue's ReplacedWorkloadSlice: the pod sets (name, usage, flavors) of the
        admitted slice the workload replaces, when it is admitted in the same
        ClusterQueue and namespace; None otherwise."""
        old = workload.replaces
        if not (self.workload_slices and old) or old.split("/", 1)[0] != \
                workload.key.split("/", 1)[0]:
            return None
        admission = state.admitted.get(old)
        if admission is None or admission.cluster_queue != cluster_queue:
            return None
        return tuple((p.name, p.usage, p.flavors) for p in admission.pod_sets)

    def _record_scan(self, entry: _Entry, shape: object) -> None:
        """Kueue's recordAssignment: the entry's assignment is the bookmark now."""
        self._bookmarks[entry.key] = ScanBookmark(
            entry.assignment.last_tried(), self._generation.get(entry.cluster_queue, 0),
            self._cycle_count, shape)

    @staticmethod
    def _priority(state: QueueingState, key: str) -> int:
        workload = state.workloads.get(key)
        return workload.priority if workload is not None else 0

    def _cluster_queue_of(self, state: QueueingState, workload: WorkloadSpec) -> str | None:
        if workload.cluster_queue:
            name = workload.cluster_queue
        else:
            namespace = workload.key.split("/", 1)[0]
            found = (state.local_queues.get(workload.queue)
                     or state.local_queues.get(f"{namespace}/{workload.queue}"))
            if found is None:
                self._block(workload.key, messages.local_queue_missing(workload.queue))
                return None
            name = found
        spec = state.cluster_queues.get(name)
        if spec is None:
            self._block(workload.key, messages.cluster_queue_missing(name))
            return None
        if spec.namespaces is not None and workload.key.split("/", 1)[0] not in spec.namespaces:
            self._block(workload.key, messages.namespace_mismatch())
            self._blocked_in[workload.key] = name  # Kueue lists it as inadmissible there
            return None
        return name

    def _block(self, key: str, message: str) -> None:
        self._blocked[key] = message
        self.pending_reasons[key] = MISCONFIGURED

    def _enqueue(self, state: QueueingState, key: str) -> None:
        workload = state.workloads[key]
        name = self._cluster_queue_of(state, workload)
        if name is None:
            return
        self._queued[key] = name
        heapq.heappush(self._queues[name].heap, (-workload.priority, workload.created, key))

    def _left(self, cluster_queue: str) -> None:
        """A workload gave back its quota: the set-aside heads of its cohort tree
        may fit now (Kueue requeues its inadmissible workloads)."""
        assert self._tree is not None
        for member in self._tree.members(cluster_queue):
            self._unpark(member)

    def _release(self) -> None:
        """After a cycle's evictions: bring back the set-aside heads of a cohort tree
        only if the evictions left quota free there (some usage went down) — a
        preemptor that took all it freed changes nothing for them. Saves re-trying
        every set-aside head after each preemption, with the same outcome."""
        assert self._tree is not None
        for cluster_queue, snapshots in sorted(self._evicted_from.items()):
            if any(node.usage.get(fr, 0) < amount
                   for node, before in snapshots for fr, amount in before.items()):
                self._left(cluster_queue)
        self._evicted_from.clear()

    def _unpark(self, member: str) -> None:
        queue = self._queues[member]
        if queue.parked:
            for parked_key, workload in queue.parked.items():
                self._queued[parked_key] = member
                heapq.heappush(queue.heap, (-workload.priority, workload.created, parked_key))
            queue.parked.clear()

    def _head(self, name: str, state: QueueingState) -> str | None:
        if self.afs is not None and self.afs.applies(name):
            return self._afs_head(name, state, self.afs)
        heap = self._queues[name].heap
        while heap:
            key = heap[0][2]
            if (self._queued.get(key) == name and key in state.workloads
                    and key not in state.admitted):
                return key
            heapq.heappop(heap)
        return None

    def _afs_head(self, name: str, state: QueueingState,
                  afs: AdmissionFairSharing) -> str | None:
        """Admission Fair Sharing: the pending workload of the lowest LocalQueue usage,
        then as the heap orders them. Usage changes with every admission, so the
        heap's order no longer holds: a scan (Kueue rebuilds its heap)."""
        queue = self._queues[name]
        live = [item for item in queue.heap if self._queued.get(item[2]) == name
                and item[2] in state.workloads and item[2] not in state.admitted]
        if len(live) < len(queue.heap):  # drop the stale entries the scan would reread
            heapq.heapify(live)
            queue.heap = live
        best: tuple[float, int, float, str] | None = None
        for priority, created, key in live:
            rank = (afs.usage(local_queue_key(key, state.workloads[key].queue)),
                    priority, created, key)
            if best is None or rank < best:
                best = rank
        return None if best is None else best[3]

    def queue_contents(self, state: QueueingState) -> dict[str, tuple[list[str], list[str]]]:
        """Per ClusterQueue, the pending workloads still in its queue (in queue order)
        and those set aside as inadmissible (by key): Kueue's queue manager Dump and
        DumpInadmissible. ClusterQueues with neither are left out."""
        out: dict[str, tuple[list[str], list[str]]] = {}
        for name, queue in self._queues.items():
            queued = [key for _, _, key in sorted(queue.heap)
                      if self._queued.get(key) == name and key in state.workloads
                      and key not in state.admitted]
            parked = sorted({*queue.parked, *(k for k, q in self._blocked_in.items()
                                              if q == name and k in self._blocked)})
            if queued or parked:
                out[name] = (list(dict.fromkeys(queued)), parked)
        return out

    # -- the cycle ----------------------------------------------------------------------
    def cycle(self, state: QueueingState, now: float, *,
              state_unchanged: bool = False) -> list[Decision]:
        """One admission cycle. ``state_unchanged``: the caller promises that nothing
        but this policy's own decisions changed ``state`` since its last cycle, so
        the comparison of every workload with the last view is skipped."""
        self._now = now
        self._cycle_count += 1
        if not (state_unchanged and self._index is not None):
            self._oracle_answers.clear()
            self._sync(state)
            assert self._index is not None
            self._index.derived.clear()  # read the workloads and admission times
        if self.afs is not None:
            self.afs.sample(state, now)
        decisions: list[Decision] = []
        holding = self._stop_evicting(state, decisions)
        # The last cycle's evictions: their set-aside neighbours come back now, not at
        # the end of that cycle. Kueue's victims hold their quota until they are gone,
        # so at the end of the cycle that preempted, the others are still inadmissible.
        self._release()
        tree, index = self._tree, self._index
        assert tree is not None and index is not None
        # a workload still being evicted is gone next cycle: that cycle may change things
        progressed = holding
        self.preemption_messages = {}
        # Quota held back for the rest of the cycle by preemptors that found no targets.
        reserved: list[tuple[str, dict[FlavorResource, int]]] = []
        for key in sorted(self._blocked):
            message = self._blocked[key]
            if self.pending_messages.get(key) != message:
                self.pending_messages[key] = message
                decisions.append(Decision(key, pending=message, pending_reason=MISCONFIGURED))
        failed_nodes: list[str] = []  # evicted at the end of the cycle
        if self.tas is not None:
            progressed |= self._second_pass(state, decisions, failed_nodes)
        for name, spec in sorted(state.cluster_queues.items()):
            if spec.stop_policy == "HoldAndDrain":
                for key in sorted(index.by_cluster_queue.get(name, ())):
                    self._evict(state, key, EVICTED_CLUSTER_QUEUE_STOPPED, "", decisions)
                    progressed = True
        entries: list[_Entry] = []
        for name in self._queues:
            head = self._head(name, state)
            if head is None:
                continue
            spec = state.cluster_queues[name]
            workload = state.workloads[head]
            if spec.stop_policy != "None" or name in tree.cycle_queues:
                # Stopped, or its cohort has a parent cycle (Kueue's HasCycle): the
                # queue admits nothing and its workloads say it is inactive.
                self._inactive(name, state, decisions)
                continue
            if workload.invalid:
                # Kueue's nominate: ValidateAdmissibility refuses the pod templates before
                # any flavor is tried; the workload is requeued as any inadmissible one
                refused = _Entry(head, workload, name,
                                 WorkloadAssignment(AssignMode.NO_FIT, (), {}, False,
                                                    workload.invalid))
                progressed |= self._not_admitted(refused, spec, workload.invalid, decisions,
                                                 reason=MISCONFIGURED)
                continue
            last = self._resume_from(head, name, workload)
            replaced = self._replaced_slice(workload, name, state)
            entry = _Entry(head, workload, name,
                           self._nominate(workload, name, spec, state, last, replaced),
                           last=last, replaced=replaced)
            if self.partial_admission and entry.assignment.mode != AssignMode.FIT \
                    and can_be_partially_admitted(workload):
                self._reduce(entry, spec, state)
            self._record_scan(entry, workload.pod_sets)
            entries.append(entry)
        if self.placement is None:
            for entry in entries:
                if entry.assignment.mode != AssignMode.PREEMPT or entry.targets is not None:
                    continue
                # The oracle already found no targets for one of its flavors: none exist
                # for the whole workload either.
                entry.targets = [] if entry.assignment.worst == PreemptionMode.NO_CANDIDATES \
                    else self._targets(entry, state.cluster_queues[entry.cluster_queue], state)
        if self.tas is not None:
            for entry in entries:
                self._place_preemptor(entry, state.cluster_queues[entry.cluster_queue])
        ordered: Iterable[_Entry]
        if self.fair_sharing:
            ordered = fair_sharing_order(entries, tree, lambda root: index.changes.get(root, 0),
                                         self.priority_sorting)
        else:
            entries.sort(key=lambda e: classic_order_key(
                e.assignment.borrowing, e.workload.priority, e.workload.created, e.key,
                priority_sorting=self.priority_sorting))
            ordered = entries
        for entry in ordered:
            spec = state.cluster_queues[entry.cluster_queue]
            if self.tas is not None and self._topology_taken(entry, tree):
                # Kueue's FitsCheckNoTAS: an earlier entry of the cycle took its nodes
                if not self.tas.gates.recompute_within_cycle:
                    self._not_admitted(entry, spec, messages.NO_LONGER_FITS, decisions,
                                       set_aside=False)
                    self._skipped(entry.key)
                    continue
                was_preempting = entry.assignment.mode == AssignMode.PREEMPT
                entry = self._renominate(entry, spec, state)
                if was_preempting and entry.assignment.mode == AssignMode.PREEMPT \
                        and self.placement is None:
                    entry.targets = self._quota_targets(entry, spec, state)
                    self._place_preemptor(entry, spec)
            assignment = entry.assignment
            if assignment.mode == AssignMode.NO_FIT:
                progressed |= self._not_admitted(entry, spec, assignment.message, decisions,
                                                 reason=assignment.no_fit_reason or "Pending")
                continue
            node = tree.cluster_queues[entry.cluster_queue]
            if assignment.mode == AssignMode.FIT:
                if not tree.fits(node, assignment.usage):
                    # Kueue requeues it at once: it is not inadmissible.
                    self._not_admitted(entry, spec, messages.NO_LONGER_FITS, decisions,
                                       set_aside=False)
                    self._skipped(entry.key)
                    continue
                if self.placement is not None:
                    unplaceable = self.placement.check(
                        entry.key, entry.workload,
                        Admission(entry.cluster_queue, assignment.pod_sets))
                    if unplaceable:
                        progressed |= self._not_admitted(entry, spec, unplaceable, decisions)
                        continue
            else:
                admission = Admission(entry.cluster_queue, assignment.pod_sets)
                preemptor = self.placement.for_preemptor(entry.key, entry.workload, admission) \
                    if self.placement is not None else None
                if entry.targets and entry.workload.preemption_gated:
                    progressed |= self._preemption_gated(entry, spec, decisions)
                    continue
                if entry.targets is not None:
                    skipped = self._skip_preemption(entry, spec, state, node)
                    if skipped:
                        self._not_admitted(entry, spec, skipped, decisions, set_aside=False)
                        self._skipped(entry.key)
                        continue
                    targets = entry.targets
                else:
                    targets = self._targets(entry, spec, state, preemptor)
                if entry.replaced is not None:
                    # Kueue's FindReplacedSliceTarget: the old slice is finished, not preempted
                    targets = [t for t in targets if t.workload != entry.workload.replaces]
                if not targets:
                    message = assignment.message
                    if preemptor is not None:
                        message = self._unplaceable_preemption(entry, spec, state, preemptor,
                                                               message)
                    progressed |= self._not_admitted(entry, spec, message, decisions)
                    if spec.preemption.reclaim_within_cohort != "Any":
                        reserved.append(self._reserve(entry, spec, node))
                    continue
                if entry.workload.preemption_gated:
                    progressed |= self._preemption_gated(entry, spec, decisions)
                    continue
                # Kueue leaves the preemptor pending for this cycle with this message and
                # admits it once its targets are gone; dralab admits it at once.
                self.preemption_messages[entry.key] = (
                    f"{assignment.message}. Pending the preemption of {len(targets)} workload(s)")
                for target in targets:
                    self._evict(state, target.workload, target.reason, entry.key, decisions)
                if not tree.fits(node, assignment.usage):  # targets were chosen to make room
                    raise AssertionError(f"preemption left no room for {entry.key}")
                if self.placement is not None:
                    # The victims were chosen so that it places; checked (and the room
                    # kept) as any admission.
                    unplaceable = self.placement.check(entry.key, entry.workload, admission)
                    if unplaceable:
                        progressed |= self._not_admitted(entry, spec, unplaceable, decisions)
                        continue
                if self.tas is not None and not assignment.topology:
                    # Kueue's updateAssignmentForTAS: its TAS pod sets placed with the
                    # targets gone, their nodes taken for the rest of the cycle
                    tas = self.tas.context(
                        [f.flavor for g in spec.resource_groups for f in g.flavors],
                        entry.cluster_queue)
                    found, failure = tas.find(topology_requests(
                        tas, entry.workload, list(assignment.outcomes)), False)
                    if failure is None:
                        assignment.topology = found
            self._admit(state, entry, now, decisions)
            progressed = True
        for cluster_queue, usage in reserved:
            tree.add_usage(cluster_queue, usage, -1)
            index.touched(cluster_queue, usage)
        for key in self._tas_held:
            assert self.tas is not None
            self.tas.evicted(key)
        self._tas_held.clear()
        for key in failed_nodes:  # Kueue's keep their quota until they are gone
            self._evict(state, key, NODE_FAILURES, "", decisions)
        self.progressed = progressed
        return decisions

    def _place_preemptor(self, entry: _Entry, spec: ClusterQueueSpec) -> None:
        """Kueue's updateAssignmentForTAS for an entry with preemption targets: its TAS
        pod sets placed as if its targets were gone (checked again when it comes)."""
        assert self.tas is not None
        if entry.assignment.mode != AssignMode.PREEMPT or not entry.targets:
            return
        tas = self.tas.context([f.flavor for g in spec.resource_groups for f in g.flavors],
                               entry.cluster_queue)
        requests = topology_requests(tas, entry.workload, list(entry.assignment.outcomes))
        if requests:
            found = self.tas.victims(tas, requests).placement_without(
                [t.workload for t in entry.targets])
            entry.assignment.topology = found or {}

    def _renominate(self, entry: _Entry, spec: ClusterQueueSpec,
                    state: QueueingState) -> _Entry:
        """TASRecomputeAssignmentWithinSchedulingCycle (beta, on): the entry assigned
        again from its first flavor, on the cluster as this cycle's admissions left it,
        kept to the flavors it was nominated on (Kueue's updateAssignmentIfNeeded and
        NominationMapping: it does not switch flavors)."""
        nominated = {p.name: dict(p.flavors) for p in entry.assignment.pod_sets}
        fresh = _Entry(entry.key, entry.workload, entry.cluster_queue,
                       self._nominate(entry.workload, entry.cluster_queue, spec, state, None,
                                      entry.replaced, nominated),
                       replaced=entry.replaced)
        if self.partial_admission and fresh.assignment.mode != AssignMode.FIT \
                and can_be_partially_admitted(entry.workload):
            self._reduce(fresh, spec, state)
        return fresh

    def _second_pass(self, state: QueueingState, decisions: list[Decision],
                     failed_nodes: list[str]) -> bool:
        """Kueue's second pass, ahead of the heads (its iterator takes quota-reserved
        entries first): a workload whose topology waited for its ProvisioningRequest
        check, now Ready, gets it (tas_delayed.py); an admitted workload on an
        unhealthy node gets a replacement (its admission again, the new topology in
        the provider), else it is evicted at the end of the cycle
        (TASFailedNodeReplacementFailFast; the message in
        ``eviction_messages``) or waits (``second_pass_failures``: its SecondPassFailed
        event's message)."""
        assert self.tas is not None
        settle(self.tas)
        progressed = False
        waiting = [k for k in sorted({*self.tas.unhealthy_nodes, *self.tas.delayed})
                   if k in state.admitted and (needs_second_pass(self.tas, k)
                                               or needs_delayed_pass(self.tas, k))]
        waiting.sort(key=lambda k: classic_order_key(
            0, self._priority(state, k), state.workloads[k].created, k,
            priority_sorting=self.priority_sorting))
        for key in waiting:
            admission = state.admitted[key]
            spec = state.cluster_queues[admission.cluster_queue]
            context = self.tas.context([f.flavor for g in spec.resource_groups
                                        for f in g.flavors])
            flavors = {p.name: list(p.flavors.values()) for p in admission.pod_sets}
            pod_sets = state.workloads[key].pod_sets
            # a delayed topology: the context delays nothing (no ClusterQueue given)
            result = replace_failed_node(self.tas, key, context, pod_sets, flavors) \
                if needs_second_pass(self.tas, key) else assign_delayed(
                    self.tas, key, context, pod_sets, flavors,
                    {p.name: p.count for p in admission.pod_sets})
            if result.topology is not None:
                self.second_pass_failures.pop(key, None)
                decisions.append(Decision(key, admitted=admission))
                progressed = True
            elif self.tas.gates.failed_node_replacement_fail_fast \
                    and needs_second_pass(self.tas, key):
                self.eviction_messages[key] = eviction_message(self.tas.unhealthy_nodes[key])
                failed_nodes.append(key)
                progressed = True
            else:
                self.second_pass_failures[key] = result.message
        return progressed

    def _reserve(self, entry: _Entry, spec: ClusterQueueSpec,
                 node: QuotaNode) -> tuple[str, dict[FlavorResource, int]]:
        """Kueue's reserveCapacityForUnreclaimablePreempt: a workload that needs
        preemption and found no targets, in a ClusterQueue that cannot always reclaim
        (reclaimWithinCohort is not Any), holds for the rest of the cycle what
        ``resources_to_reserve`` gives, so that entries after it cannot borrow that
        room away."""
        assert self._tree is not None
        held = {fr: amount for fr, amount in resources_to_reserve(
            entry.assignment.mode, entry.assignment.borrowing, entry.assignment.usage, spec,
            node.usage).items() if amount > 0}
        self._tree.add_usage(entry.cluster_queue, held, 1)
        assert self._index is not None
        self._index.touched(entry.cluster_queue, held)
        if self.tas is not None:
            # and the nodes its TAS pod sets would take on an emptied cluster
            # (updateAssignmentForTAS with simulateEmpty; netUsage's TAS part)
            tas = self.tas.context([f.flavor for g in spec.resource_groups for f in g.flavors],
                                   entry.cluster_queue)
            found, failure = tas.find(
                topology_requests(tas, entry.workload, list(entry.assignment.outcomes)), True)
            if failure is None and found:
                self.tas.admitted(entry.key, entry.workload.pod_sets, {
                    p.name: list(p.flavors.values()) for p in entry.assignment.pod_sets},
                    found)
                self._tas_held.append(entry.key)
        return entry.cluster_queue, held

    def _skip_preemption(self, entry: _Entry, spec: ClusterQueueSpec, state: QueueingState,
                         node: QuotaNode) -> str:
        """Why Kueue skips this cycle a preemptor whose targets were chosen at
        nomination ("" if it does not): a target already evicted by an entry before it
        (its targets are then chosen afresh, as Kueue's recomputation on overlap; none
        left: skipped), or, with its targets gone, it no longer fits after the entries
        before it. Skipped entries are requeued at once, not set aside."""
        assert self._index is not None and entry.targets is not None
        index = self._index
        if not entry.targets:
            return ""
        if any(t.workload not in index for t in entry.targets):
            if not self.recompute_on_overlap:
                return messages.OVERLAPPING_TARGETS
            entry.targets = self._targets(entry, spec, state)
            if not entry.targets:
                return messages.OVERLAPPING_TARGETS
        removed = [(index.cluster_queue[t.workload], index.usage[t.workload])
                   for t in entry.targets]
        tree = index.tree
        for cluster_queue, usage in removed:
            tree.add_usage(cluster_queue, usage, -1)
        try:
            fits = tree.fits(node, entry.assignment.usage)
        finally:
            for cluster_queue, usage in removed:
                tree.add_usage(cluster_queue, usage, 1)
        return "" if fits else messages.NO_LONGER_FITS

    def _reduce(self, entry: _Entry, spec: ClusterQueueSpec, state: QueueingState) -> None:
        """Kueue's partial admission (getInitialAssignments): a head that does not fit
        whole, and whose whole assignment finds no preemption targets, takes the largest
        pod counts (down to each pod set's minCount) that fit or find targets. The entry
        keeps the whole assignment, and its message, when no counts do."""
        targets = self._quota_targets(entry, spec, state)
        if targets:
            if self.placement is None:
                entry.targets = targets
            return
        workload = entry.workload

        def fits(counts: list[int]) -> tuple[_Entry | None, bool]:
            reduced = scaled_workload(workload, counts)
            trial = _Entry(entry.key, reduced, entry.cluster_queue,
                           self._nominate(reduced, entry.cluster_queue, spec, state,
                                          entry.last, entry.replaced))
            if trial.assignment.mode == AssignMode.FIT:
                return trial, True
            found = self._quota_targets(trial, spec, state)
            if found:
                trial.targets = found if self.placement is None else None
                return trial, True
            return None, False

        reduced, found = reduce_pod_sets(full_counts(workload), minimum_counts(workload), fits)
        if found and reduced is not None:
            entry.workload, entry.assignment = reduced.workload, reduced.assignment
            entry.targets = reduced.targets
        elif self.placement is None and entry.assignment.mode == AssignMode.PREEMPT:
            entry.targets = targets  # none: searched above

    def _quota_targets(self, entry: _Entry, spec: ClusterQueueSpec, state: QueueingState
                       ) -> list[PreemptionTarget]:
        """The targets of an entry that needs preemption (none for one that does not,
        or whose flavors the oracle found without candidates)."""
        if entry.assignment.mode != AssignMode.PREEMPT \
                or entry.assignment.worst == PreemptionMode.NO_CANDIDATES:
            return []
        return self._targets(entry, spec, state)

    def _nominate(self, workload: WorkloadSpec, name: str, spec: ClusterQueueSpec,
                  state: QueueingState, last: ScanBookmark | None = None,
                  replaced: tuple[OldPodSet, ...] | None = None,
                  nominated: Mapping[str, Mapping[str, str]] | None = None
                  ) -> WorkloadAssignment:
        assert self._tree is not None and self._index is not None
        tree, index = self._tree, self._index
        node = tree.cluster_queues[name]
        oracle = None
        policy = spec.preemption
        if (policy.within_cluster_queue != "Never" or policy.reclaim_within_cohort != "Never"
                or policy.borrow_within_cohort != "Never"):
            root = tree.root_name(name)
            # What the search reads of the preemptor: its priority, its creation time
            # (LowerOrNewerEqualPriority only) and whether it may preempt other queues.
            created = workload.created \
                if policy.within_cluster_queue == "LowerOrNewerEqualPriority" else 0.0
            others = self._may_preempt_others(workload.key)
            fair = self.fair_sharing

            def oracle(fr: FlavorResource, amount: int) -> tuple[PreemptionMode, int]:
                # Heads of a deep queue ask the same question again and again while
                # their cohort tree is unchanged: the answer (the quick "no" too) is
                # kept until it changes. A classic search reads only the holders and
                # usage of ``fr`` (fair sharing every queue's share, over all resources).
                key = (name, fr, amount, workload.priority, created, others,
                       index.changes.get(root, 0) if fair else index.fr_version(name, fr))
                known = self._oracle_answers.get(key)
                if known is None:
                    if len(self._oracle_answers) >= _ORACLE_ANSWERS_KEPT:
                        self._oracle_answers.clear()  # mostly answers of past states
                    if not self._preemption_plausible(workload, name, spec, fr, amount):
                        known = PreemptionMode.NO_CANDIDATES, \
                            tree.lowest_fitting_subtree(node, fr, amount)[0]
                    else:
                        known = self._simulate_preemption(workload, name, spec, fr, amount,
                                                          state, others)
                    self._oracle_answers[key] = known
                return known
        tas = None if self.tas is None else self.tas.context(
            [f.flavor for group in spec.resource_groups for f in group.flavors], name)
        return assign_flavors(workload, spec, node, tree, state.flavors, oracle,
                              self.fair_sharing, tas, last=last, replaced=replaced,
                              nominated=nominated)

    def _simulate_preemption(self, workload: WorkloadSpec, name: str, spec: ClusterQueueSpec,
                             fr: FlavorResource, amount: int, state: QueueingState,
                             others: bool) -> tuple[PreemptionMode, int]:
        """Kueue's preemption oracle for one (flavor, resource): no candidates, or
        targets in the ClusterQueue itself (preempt) or only in others (reclaim), with
        the borrowing level the workload would have once they are gone."""
        assert self._tree is not None and self._index is not None
        tree, index = self._tree, self._index
        node = tree.cluster_queues[name]
        targets = find_targets(workload, name, spec, {fr: amount}, index, state.workloads,
                               state.admitted_at, self.fair_sharing, self.fair_strategies,
                               others)
        if not targets:
            return PreemptionMode.NO_CANDIDATES, tree.lowest_fitting_subtree(node, fr, amount)[0]
        removed = [(index.cluster_queue[t.workload], index.usage[t.workload]) for t in targets]
        for cluster_queue, usage in removed:
            tree.add_usage(cluster_queue, usage, -1)
        try:
            borrow = tree.lowest_fitting_subtree(node, fr, amount)[0]
        finally:
            for cluster_queue, usage in removed:
                tree.add_usage(cluster_queue, usage, 1)
        mode = PreemptionMode.PREEMPT if any(q == name for q, _ in removed) \
            else PreemptionMode.RECLAIM
        return mode, borrow

    def _preemption_plausible(self, workload: WorkloadSpec, name: str, spec: ClusterQueueSpec,
                              fr: FlavorResource, amount: int) -> bool:
        """A quick necessary condition for classic preemption to help (the common
        no of a deep queue), checked before the full search: a lower-priority holder
        of ``fr`` in the queue, or (if the queue stays within its quota) a cohort."""
        if self.fair_sharing or spec.preemption.borrow_within_cohort != "Never":
            return True
        assert self._index is not None and self._tree is not None
        policy = spec.preemption
        if policy.within_cluster_queue != "Never":
            newer_equal = policy.within_cluster_queue == "LowerOrNewerEqualPriority"
            for priority in self._index.holders.get(name, {}).get(fr, {}):
                if priority < workload.priority or (newer_equal and priority == workload.priority):
                    return True
        node = self._tree.cluster_queues[name]
        return (policy.reclaim_within_cohort != "Never" and node.parent is not None
                and not self._tree.borrowing(node, fr, amount))

    def _targets(self, entry: _Entry, spec: ClusterQueueSpec, state: QueueingState,
                 placement: VictimPlacement | None = None) -> list[PreemptionTarget]:
        assert self._index is not None
        needed: list[FlavorResource] | None = None
        if placement is None and self.tas is not None:
            # Kueue's workloadFits with TAS: the targets must also let the preemptor's
            # TAS pod sets place once their pods are gone; what needs preemption is what
            # was assigned in mode Preempt (a fragmented topology too, not only quota)
            tas = self.tas.context([f.flavor for g in spec.resource_groups for f in g.flavors],
                                   entry.cluster_queue)
            requests = topology_requests(tas, entry.workload, list(entry.assignment.outcomes))
            if requests:
                placement = self.tas.victims(tas, requests)
                needed = sorted({(flavor, resource) for o in entry.assignment.outcomes
                                 for resource, (flavor, mode) in o.flavors.items()
                                 if mode == AssignMode.PREEMPT})
        return find_targets(entry.workload, entry.cluster_queue, spec, entry.assignment.usage,
                            self._index, state.workloads, state.admitted_at,
                            self.fair_sharing, self.fair_strategies,
                            self._may_preempt_others(entry.key), placement, needed,
                            self._victim_usage(state))

    def _topology_taken(self, entry: _Entry, tree: QuotaTree) -> bool:
        """Whether an earlier entry of the cycle took the nodes of ``entry``'s topology
        assignment: a fitting entry's pods no longer place (when its quota still fits),
        or a preemptor's no longer place with its targets gone."""
        assert self.tas is not None
        assignment = entry.assignment
        if not assignment.topology:
            return False
        flavors = {p.name: list(p.flavors.values()) for p in assignment.pod_sets}
        if assignment.mode == AssignMode.FIT:
            return tree.fits(tree.cluster_queues[entry.cluster_queue], assignment.usage) \
                and not self.tas.fits(entry.workload.pod_sets, flavors, assignment.topology)
        if assignment.mode == AssignMode.PREEMPT and entry.targets:
            return not self.tas.fits_without([t.workload for t in entry.targets],
                                             entry.workload.pod_sets, flavors,
                                             assignment.topology)
        return False

    def _victim_usage(self, state: QueueingState) -> Callable[[str], float | None] | None:
        """Admission Fair Sharing's candidate ordering: an admitted workload's
        LocalQueue usage when its ClusterQueue is usage based (None: not compared)."""
        afs = self.afs
        if afs is None or not afs.cluster_queues:
            return None

        def usage(key: str) -> float | None:
            admission, workload = state.admitted.get(key), state.workloads.get(key)
            if admission is None or workload is None or not afs.applies(admission.cluster_queue):
                return None
            return afs.cycle_usage(local_queue_key(key, workload.queue))
        return usage

    def _unplaceable_preemption(self, entry: _Entry, spec: ClusterQueueSpec,
                                state: QueueingState, preemptor: PreemptorCheck,
                                quota_message: str) -> str:
        """Why a preemptor stays pending when no victim set lets it place: Kueue's
        quota message if preemption cannot even free the quota, else what Kueue's
        own (quota-only) choice of victims would leave unplaceable."""
        by_quota = self._targets(entry, spec, state)
        if not by_quota:
            return quota_message
        outcome = preemptor.unplaceable_without([t.workload for t in by_quota])
        # Kueue's choice placing while the search found nothing needs the scheduler to
        # place with fewer victims but not with more: said as it is, not hidden.
        why = outcome if isinstance(outcome, str) else \
            "its pods would place, but no set the search tried did"
        return messages.preemption_unplaceable(len(by_quota), why)

    def _may_preempt_others(self, key: str) -> bool:
        return self._preempted_at.get(key) != self._now

    def _not_admitted(self, entry: _Entry, spec: ClusterQueueSpec, message: str,
                      decisions: list[Decision], set_aside: bool = True,
                      reason: str = WAITING_FOR_QUOTA) -> bool:
        """Record why the entry stays pending; set it aside under BestEffortFIFO.
        Returns whether that changed what the next cycle will try."""
        self.pending_messages[entry.key] = message
        self.pending_reasons[entry.key] = reason
        decisions.append(Decision(entry.key, pending=message, pending_reason=reason))
        last = self._bookmarks.get(entry.key)
        if set_aside and last is not None and last.pending_flavors():
            # Kueue's requeueIfNotPresent: flavors left to try, back to the queue at once
            return True
        if set_aside and spec.queueing_strategy == "BestEffortFIFO":
            self._queued.pop(entry.key, None)
            self._queues[entry.cluster_queue].parked[entry.key] = entry.workload
            return True
        return False

    def _preemption_gated(self, entry: _Entry, spec: ClusterQueueSpec,
                          decisions: list[Decision]) -> bool:
        """Kueue's markPreemptionGated (ConcurrentAdmission / MultiKueueOrchestratedPreemption):
        a workload that needs preemption, has targets and a closed preemption gate evicts
        nothing and waits (AdmissionGated; the writer adds BlockedOnPreemptionGates), its
        flavor scan starting over."""
        self._bookmarks.pop(entry.key, None)
        return self._not_admitted(entry, spec, PREEMPTION_GATED_MESSAGE, decisions,
                                  reason=ADMISSION_GATED)

    def _skipped(self, key: str) -> None:
        """Kueue's markSkipped: skipped for contention, the bookmark stays only with
        FlavorFungibilityPreserveScanProgress."""
        if not self.preserve_scan_progress:
            self._bookmarks.pop(key, None)

    def _inactive(self, name: str, state: QueueingState, decisions: list[Decision]) -> None:
        """Every queued workload of a stopped ClusterQueue says so (once)."""
        message = messages.cluster_queue_inactive(name)
        for _, _, key in sorted(self._queues[name].heap):
            if self._queued.get(key) != name or self.pending_messages.get(key) == message:
                continue
            self.pending_messages[key] = message
            self.pending_reasons[key] = SUSPENDED
            decisions.append(Decision(key, pending=message, pending_reason=SUSPENDED))

    def _evict(self, state: QueueingState, key: str, reason: str, by: str,
               decisions: list[Decision]) -> None:
        assert self._index is not None
        cluster_queue = self._index.cluster_queue[key]
        if cluster_queue not in self._evicted_from:
            chain: list[tuple[QuotaNode, dict[FlavorResource, int]]] = []
            node: QuotaNode | None = self._index.tree.cluster_queues[cluster_queue]
            while node is not None:
                chain.append((node, dict(node.usage)))
                node = node.parent
            self._evicted_from[cluster_queue] = chain
        self._index.remove(key)
        self._generation[cluster_queue] = self._generation.get(cluster_queue, 0) + 1
        if self.placement is not None:
            self.placement.release(key)  # its room is free for the checks after it
        if self.tas is not None:
            self.tas.evicted(key)
        state.admitted.pop(key, None)
        state.admitted_at.pop(key, None)
        workload = state.workloads.get(key)
        if workload is not None and workload.evicted:
            # Its eviction was already in progress: Kueue counts it among the preemptor's
            # targets ("preemption ongoing") and writes it nothing new; it is gone now.
            self._evicting.discard(key)
            self._stopping.discard(key)
            state.workloads[key] = replace(workload, evicted=False)
        else:
            decisions.append(Decision(key, preempted=True, by=by, reason=reason))
            if by:
                self._preempted_at[key] = self._now
        if key in state.workloads:
            self._enqueue(state, key)

    def _stop_evicting(self, state: QueueingState, decisions: list[Decision]) -> bool:
        """Admitted workloads whose eviction is in progress (WorkloadSpec.evicted: read
        Evicted=True while still holding quota) hold it for the first cycle -- where a
        preemptor takes them first, with no new eviction -- and are gone at the start of
        the next (their jobs have stopped), requeued as Kueue requeues an evicted
        workload. Returns whether some still hold their quota."""
        holding = False
        for key in sorted(self._evicting):
            workload = state.workloads.get(key)
            if key not in state.admitted or workload is None or not workload.evicted:
                self._evicting.discard(key)
                self._stopping.discard(key)
                continue
            if key in self._stopping:
                self._evict(state, key, "", "", decisions)
            else:
                self._stopping.add(key)
                holding = True
        return holding

    def _admit(self, state: QueueingState, entry: _Entry, now: float,
               decisions: list[Decision]) -> None:
        assert self._index is not None
        admission = Admission(entry.cluster_queue, entry.assignment.pod_sets)
        usage = dict(entry.assignment.usage)
        old = entry.workload.replaces if entry.replaced is not None else None
        if old is not None and old in self._index:
            # Kueue's replaceWorkloadSlice: the old slice finishes (WorkloadSliceReplaced,
            # not requeued) and the new one holds its whole admission's usage.
            self._index.remove(old)
            self._generation[entry.cluster_queue] = \
                self._generation.get(entry.cluster_queue, 0) + 1
            if self.tas is not None:
                self.tas.evicted(old)
            state.admitted.pop(old, None)
            state.admitted_at.pop(old, None)
            state.workloads.pop(old, None)
            decisions.append(Decision(old, preempted=True, by=entry.key,
                                      reason=WORKLOAD_SLICE_REPLACED))
            usage = admission_usage(admission)
        self._index.add(entry.key, entry.cluster_queue, usage, entry.workload.priority)
        self._queued.pop(entry.key, None)
        self._bookmarks.pop(entry.key, None)  # Kueue's Info of an admitted workload has none
        state.admitted[entry.key] = admission
        state.admitted_at[entry.key] = now
        if self.tas is not None:
            self.tas.admitted(entry.key, entry.workload.pod_sets,
                              {p.name: list(p.flavors.values()) for p in admission.pod_sets},
                              entry.assignment.topology, cluster_queue=entry.cluster_queue)
        if self.afs is not None:  # its entry penalty (a second pass costs none)
            self.afs.admitted(state, entry.key, admission, now)
        self.pending_messages.pop(entry.key, None)
        self.pending_reasons.pop(entry.key, None)
        decisions.append(Decision(entry.key, admitted=admission))
