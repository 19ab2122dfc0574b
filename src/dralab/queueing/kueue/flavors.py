"""Flavor assignment: for every pod set and resource group, the flavor to charge.

Kueue's rule (``cluster_queue.md``, "Flavors and borrowing semantics" and
"FlavorFungibility"; ``pkg/scheduler/flavorassigner``), pod set by pod set; within
a pod set, resource group by resource group; within a group the flavors in order.

A flavor is skipped when one of its taints is not tolerated or the pod set's node
selector or required node affinity (read with the flavor's own label keys only)
rejects its labels. Otherwise every resource of the group the pod set asks for is
checked against the quota tree, counting what earlier pod sets of the workload
already took of that flavor:

* more than the flavor's maximum capacity: no fit;
* within what is free now: fit, at a *borrowing level* (0: inside the
  ClusterQueue's own quota; else the height of the lowest cohort subtree whose
  quota holds it);
* else preemption may help, but is considered only when the request is within the
  ClusterQueue's nominal quota, or a lower cohort subtree than the whole tree holds
  it (reclaim), or ``borrowWithinCohort`` (or fair sharing with
  ``reclaimWithinCohort``) allows preempting while borrowing; the preemption
  oracle then says whether targets exist, whether any is in the ClusterQueue
  itself (preempt) or only elsewhere (reclaim), and the borrowing level after them.

A flavor's mode is the worst over its resources. ``whenCanBorrow`` and
``whenCanPreempt`` decide whether a flavor that needs borrowing or preemption ends
the search (``MayStopSearch``) or the next flavor is tried (``TryNextFlavor``);
among the tried flavors the preferred one wins: ``BorrowingOverPreemption`` (the
default) ranks the preemption mode first, then the borrowing level;
``PreemptionOverBorrowing`` the other way round. A flavor whose preemption finds no
candidates ranks below every other usable one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from dralab.queueing.kueue import messages
from dralab.queueing.kueue.quota import FlavorResource, QuotaNode, QuotaTree
from dralab.queueing.kueue.scan import START_OVER, ScanBookmark
from dralab.queueing.kueue.tas import TASPodSetRequests
from dralab.queueing.kueue.tas_assign import (
    TOPOLOGY_PLACEMENT_FAILED,
    TASContext,
    tas_flavors_only,
)
from dralab.queueing.model import (
    ClusterQueueSpec,
    FlavorFungibility,
    FlavorSpec,
    PodSetAssignment,
    PodSetRequest,
    ResourceGroup,
    TopologyAssignment,
    WorkloadSpec,
)

# An old workload slice's pod set: its name, its totals and its admitted flavors per
# resource.
OldPodSet = tuple[str, Mapping[str, int], Mapping[str, str]]

__all__ = [
    "EXCEEDS_MAX_QUOTA",
    "NO_MATCHING_FLAVOR",
    "WAITING_FOR_QUOTA",
    "AssignMode",
    "FlavorAttempt",
    "GranularMode",
    "OldPodSet",
    "PodSetOutcome",
    "PreemptionMode",
    "PreemptionOracle",
    "WorkloadAssignment",
    "assign_flavors",
    "flavor_rejection",
    "is_preferred",
    "most_severe",
    "place_topology",
    "pod_set_totals",
    "topology_requests",
]


class AssignMode(IntEnum):
    """How a workload (or one flavor of a resource) fits; higher is better."""

    NO_FIT = 0
    PREEMPT = 1
    FIT = 2


class PreemptionMode(IntEnum):
    """Kueue's finer mode of one flavor: higher is better."""

    NO_FIT = 0
    NO_CANDIDATES = 1   # only preemption would help, and the oracle found no targets
    PREEMPT = 2         # targets found, some in the ClusterQueue itself
    RECLAIM = 3         # targets found, all in other ClusterQueues of the cohort
    FIT = 4

    def assign_mode(self) -> AssignMode:
        return _ASSIGN_MODES[self]


# The members the assigner compares every few lines, bound once: reading an enum
# member through its class costs a lookup in the enum's metaclass each time.
_NO_FIT = PreemptionMode.NO_FIT
_NO_CANDIDATES = PreemptionMode.NO_CANDIDATES
_FIT = PreemptionMode.FIT
_PREEMPT_OR_RECLAIM = (PreemptionMode.PREEMPT, PreemptionMode.RECLAIM)
_NO_FIT_OR_NONE = (PreemptionMode.NO_FIT, PreemptionMode.NO_CANDIDATES)
_ASSIGN_MODES = {PreemptionMode.NO_FIT: AssignMode.NO_FIT,
                 PreemptionMode.NO_CANDIDATES: AssignMode.PREEMPT,
                 PreemptionMode.PREEMPT: AssignMode.PREEMPT,
                 PreemptionMode.RECLAIM: AssignMode.PREEMPT,
                 PreemptionMode.FIT: AssignMode.FIT}


@dataclass(frozen=True, slots=True)
class GranularMode:
    preemption: PreemptionMode
    borrowing: int  # 0: within the ClusterQueue; higher: from a more distant cohort


_WORST = GranularMode(PreemptionMode.NO_FIT, 1 << 62)
_BEST = GranularMode(PreemptionMode.FIT, 0)
# GranularMode values made once each: a frozen dataclass is slow to build, and the
# assigner needs one per resource of every flavor it tries (few distinct values).
_GRANULAR: dict[tuple[PreemptionMode, int], GranularMode] = {}


def _granular(preemption: PreemptionMode, borrowing: int) -> GranularMode:
    mode = _GRANULAR.get((preemption, borrowing))
    if mode is None:
        mode = _GRANULAR[(preemption, borrowing)] = GranularMode(preemption, borrowing)
    return mode


def is_preferred(a: GranularMode, b: GranularMode, preference: str | None) -> bool:
    """Whether flavor mode ``a`` is better than ``b`` under ``preference``."""
    if a.preemption == _NO_FIT:
        return False
    if b.preemption == _NO_FIT:
        return True
    a_none = a.preemption == _NO_CANDIDATES
    b_none = b.preemption == _NO_CANDIDATES
    if a_none != b_none:
        return not a_none
    if preference == "PreemptionOverBorrowing":
        if a.borrowing != b.borrowing:
            return a.borrowing < b.borrowing
        return a.preemption > b.preemption
    if a.preemption != b.preemption:
        return a.preemption > b.preemption
    return a.borrowing < b.borrowing


def _try_next_flavor(mode: GranularMode, fungibility: FlavorFungibility) -> bool:
    if mode.preemption in _NO_FIT_OR_NONE:
        return True
    if mode.preemption in _PREEMPT_OR_RECLAIM \
            and fungibility.when_can_preempt == "TryNextFlavor":
        return True
    return mode.borrowing != 0 and fungibility.when_can_borrow == "TryNextFlavor"


# (flavor, resource), the total the workload needs there -> the oracle's answer:
# NO_CANDIDATES, PREEMPT or RECLAIM, and the borrowing level once the targets are gone.
PreemptionOracle = Callable[[FlavorResource, int], tuple[PreemptionMode, int]]


# Kueue's QuotaReserved=False reasons of a workload that does not fit, least severe first.
WAITING_FOR_QUOTA = "WaitingForQuota"
EXCEEDS_MAX_QUOTA = "ExceedsMaxQuota"
NO_MATCHING_FLAVOR = "NoMatchingFlavor"
_SEVERITY = {"": 0, TOPOLOGY_PLACEMENT_FAILED: 1, WAITING_FOR_QUOTA: 2, EXCEEDS_MAX_QUOTA: 3,
             NO_MATCHING_FLAVOR: 4}
_POSSIBILITIES = (PreemptionMode.NO_CANDIDATES, PreemptionMode.PREEMPT, PreemptionMode.RECLAIM)


def most_severe(a: str, b: str) -> str:
    return a if _SEVERITY.get(a, 0) >= _SEVERITY.get(b, 0) else b


@dataclass(slots=True)
class FlavorAttempt:
    """One flavor tried for one pod set (Kueue's FlavorAssignmentAttempt): its mode,
    borrowing level, preemption possibility, reasons and no-fit reason."""

    flavor: str
    mode: AssignMode
    borrow: int
    possibility: PreemptionMode | None
    reasons: list[str]
    no_fit_reason: str


@dataclass(slots=True)
class PodSetOutcome:
    """One pod set as Kueue's PodSetAssignment shows it: per resource the flavor and
    its mode, the reasons (its Status), its requests (totals) and count."""

    name: str
    flavors: dict[str, tuple[str, AssignMode]]
    reasons: list[str]
    requests: dict[str, int]
    count: int
    # The flavors tried, per resource group, as the search made them (merged on demand:
    # only a workload that does not fit needs them, for its no-fit reason).
    tries: list[tuple[list[FlavorAttempt], ResourceGroup, str]] = field(default_factory=list)
    # Kueue's Status.err: the TAS request could not be built (the pod set cannot fit)
    error: str = ""
    # attempts overridden after the search (markFlavorAttempt): flavor -> (mode, reason)
    marks: dict[str, tuple[AssignMode, str]] = field(default_factory=dict)
    # Kueue's TriedFlavorIdx per resource of the chosen flavors (scan.py's bookmark)
    tried: dict[str, int] = field(default_factory=dict)

    @property
    def attempts(self) -> list[FlavorAttempt]:
        """Kueue's FlavorAssignmentAttempts of the pod set, by flavor name."""
        merged: dict[str, FlavorAttempt] = {}
        for tried, group, resource in self.tries:
            _merge_attempts(merged, tried, group, resource)
        for flavor, (mode, reason) in self.marks.items():
            if flavor in merged:
                merged[flavor].mode, merged[flavor].no_fit_reason = mode, reason
        return [merged[f] for f in sorted(merged)]

    def mode(self) -> AssignMode:
        if self.error:
            return AssignMode.NO_FIT
        if not self.reasons:
            return AssignMode.FIT
        if not self.flavors:
            return AssignMode.NO_FIT
        return min(mode for _, mode in self.flavors.values())

    def set_mode(self, mode: AssignMode) -> None:
        """Kueue's PodSetAssignment.updateMode: every flavor gets ``mode``."""
        self.flavors = {r: (f, mode) for r, (f, _) in self.flavors.items()}

    def message(self) -> str:
        if self.error:
            return messages.pod_set_message(self.name, [self.error])
        return messages.pod_set_message(self.name, sorted(self.reasons))


@dataclass(slots=True)
class WorkloadAssignment:
    """The flavors chosen for a workload, its usage per (flavor, resource), how it
    fits (the worst over its pod sets), how far it borrows (``borrowing``: Kueue's
    borrowing level, 0 without borrowing), and the pending message."""

    mode: AssignMode
    pod_sets: tuple[PodSetAssignment, ...]
    usage: dict[FlavorResource, int]
    borrows: bool
    message: str = ""
    borrowing: int = 0
    outcomes: tuple[PodSetOutcome, ...] = field(default_factory=tuple)
    # Kueue's NoFitReason (the QuotaReserved=False reason) when ``mode`` is NO_FIT.
    no_fit_reason: str = ""
    # The worst mode of the chosen flavors: NO_CANDIDATES when the oracle found no
    # preemption targets for one of them (then the whole workload has none).
    worst: PreemptionMode = PreemptionMode.FIT
    # Kueue's PodSetAssignment.TopologyAssignment of the TAS pod sets placed when the
    # workload fits (pod set name -> assignment).
    topology: dict[str, TopologyAssignment] = field(default_factory=dict)

    def requires_borrowing(self) -> bool:
        """Kueue's Assignment.RequiresBorrowing: borrowing at any level."""
        return self.borrowing > 0

    def last_tried(self) -> tuple[dict[str, int], ...]:
        """Kueue's LastState.LastTriedFlavorIdx: per pod set, in the order assigned,
        the last flavor index tried per resource (scan.START_OVER after the last)."""
        return tuple(outcome.tried for outcome in self.outcomes)


def pod_set_totals(pod_set: PodSetRequest) -> dict[str, int]:
    """What the pod set charges in total per resource (zero requests kept: a covered
    resource asked at zero still gets a flavor)."""
    count = pod_set.count
    return {resource: amount * count for resource, amount in pod_set.per_pod.items()}


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


def _expression_matches(labels: Mapping[str, str], key: str, operator: str,
                        values: tuple[str, ...]) -> bool:
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and len(values) == 1:
        try:
            have, bound = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > bound if operator == "Gt" else have < bound
    return False


def _affinity_matches(pod_set: PodSetRequest, labels: Mapping[str, str]) -> bool:
    """Required node affinity against the flavor's labels, reading only the flavor's
    own keys: a term left without expressions matches any flavor (terms are ORed)."""
    terms = []
    for term in pod_set.node_affinity:
        kept = [e for e in term if e[0] in labels]
        if not kept:
            return True
        terms.append(kept)
    if not terms:
        return True
    return any(all(_expression_matches(labels, *e) for e in term) for term in terms)


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
    if pod_set.node_affinity and not _affinity_matches(pod_set, labels):
        return messages.flavor_node_affinity(flavor_name)
    return ""


class _Assigner:
    """One workload's flavor assignment in one ClusterQueue."""

    def __init__(self, spec: ClusterQueueSpec, node: QuotaNode, tree: QuotaTree,
                 flavors: Mapping[str, FlavorSpec], oracle: PreemptionOracle | None,
                 fair_sharing: bool, tas: TASContext | None = None) -> None:
        self.spec, self.node, self.tree = spec, node, tree
        self.tas = tas
        self.flavors = flavors
        self.oracle = oracle
        policy = spec.preemption
        self.preempt_while_borrowing = policy.borrow_within_cohort != "Never" or (
            fair_sharing and policy.reclaim_within_cohort != "Never")
        self.last_mode = PreemptionMode.FIT  # the mode of the last group's chosen flavor
        self.last_tried = START_OVER  # the TriedFlavorIdx of the last group's chosen flavor

    def fits_quota(self, fr: FlavorResource, before: int, amount: int,
                   reasons: list[str]) -> tuple[PreemptionMode, int, str]:
        """How ``amount`` more of ``fr`` fits: the mode, the borrowing level and, when
        it does not fit, Kueue's no-fit reason (ExceedsMaxQuota, WaitingForQuota)."""
        node = self.node
        value = before + amount
        capacity, borrow, may_reclaim, free = self.tree.assess(node, fr, value)
        if value > capacity:
            reasons.append(messages.max_capacity_exceeded(fr[1], fr[0], before, amount,
                                                          capacity))
            return _NO_FIT, 0, EXCEEDS_MAX_QUOTA
        if value <= free:
            return _FIT, borrow, ""
        reasons.append(messages.insufficient_unused_quota(fr[1], fr[0], value - free))
        if node.nominal.get(fr, 0) >= value or may_reclaim or self.preempt_while_borrowing:
            if self.oracle is None:
                return _NO_CANDIDATES, borrow, ""
            mode, borrow = self.oracle(fr, value)
            return mode, borrow, ""
        return _NO_FIT, borrow, WAITING_FOR_QUOTA

    def rejection(self, name: str, group: ResourceGroup, pod_set: PodSetRequest) -> str:
        """Why flavor ``name`` cannot serve the pod set: its topology request first (with
        TAS), then taints and node labels."""
        flavor = self.flavors.get(name)
        if self.tas is None and flavor is not None and not flavor.node_taints \
                and not pod_set.node_selector and not pod_set.node_affinity:
            return ""  # nothing to check: the common case, answered without a call
        if self.tas is not None and flavor is not None:
            mismatch = self.tas.flavor_mismatch(pod_set, name, flavor, group.covered)
            if mismatch:
                return mismatch
        return flavor_rejection(name, flavor, pod_set)

    def group_flavor(self, members: Sequence[PodSetRequest], group: ResourceGroup,
                     wanted: list[tuple[str, int]], taken: Mapping[FlavorResource, int],
                     start: int = 0, nominated: frozenset[str] | None = None,
                     resource: str = "", replaced: Sequence[OldPodSet] = (),
                     allowed: frozenset[str] | None = None
                     ) -> tuple[dict[str, tuple[str, AssignMode, int]] | None,
                                list[str], list[FlavorAttempt]]:
        """The flavor of ``group`` for the pod sets' ``wanted`` resources, per resource
        (flavor, mode, borrowing level), the reasons (None, and why, when no flavor
        serves), and the attempt made at every flavor tried. The scan starts at flavor
        ``start`` (the bookmark's next flavor) and, with ``nominated`` (Kueue's
        NominationMapping for ``resource``), skips the flavors not in it. ``replaced``
        holds, per member, the pod set of the old workload slice at its index: a flavor
        other than the one it was admitted on does not fit, and only the increase over
        its request is asked of the quota. ``allowed`` (ConcurrentAdmission's
        allowed-flavor annotation) skips the flavors not in it."""
        fungibility = self.spec.flavor_fungibility
        reasons: list[str] = []
        attempts: list[FlavorAttempt] = []
        best: dict[str, tuple[str, AssignMode, int]] | None = None
        best_mode = _WORST
        tried = START_OVER
        for index in range(start, len(group.flavors)):
            tried = index
            name = group.flavors[index].flavor
            if nominated is not None and name not in nominated:
                reasons.append(f"skipping flavor {name} as it is not found in the "
                               f"nomination mapping for resource {resource}")
                continue
            if allowed is not None and name not in allowed:
                reasons.append(f"skipping flavor {name} due to "
                               f"WorkloadAllowedResourceFlavorAnnotation annotation")
                continue
            rejection = ""
            for member in members:  # a loop, not a generator: this runs for every flavor
                rejection = self.rejection(name, group, member)
                if rejection:
                    break
            if rejection:
                reasons.append(rejection)
                attempts.append(FlavorAttempt(name, AssignMode.NO_FIT, 0, None, [rejection],
                                              NO_MATCHING_FLAVOR))
                continue
            chosen: dict[str, tuple[str, AssignMode, int]] = {}
            mode = _BEST
            own: list[str] = []
            no_fit = ""
            max_borrow = 0
            for resource, amount in wanted:
                fr = (name, resource)
                mismatch = ""
                for _, old_totals, old_flavors in replaced:
                    original = old_flavors.get(resource, "")
                    if original != name:  # a slice keeps its original flavor
                        mismatch = (f"could not assign {name} flavor since the original "
                                    f"workload is assigned: {original}")
                        own.append(mismatch)
                        no_fit = most_severe(no_fit, NO_MATCHING_FLAVOR)
                        break
                    amount -= old_totals.get(resource, 0)
                preemption, borrow, why = self.fits_quota(fr, taken.get(fr, 0), amount, own)
                if why:  # most_severe(x, "") is x
                    no_fit = most_severe(no_fit, why)
                max_borrow = max(max_borrow, borrow)
                this = _granular(preemption, borrow)
                if mismatch:
                    mode = _WORST
                elif is_preferred(mode, this, fungibility.preference):
                    mode = this  # the flavor's mode is the worst of its resources
                if mode.preemption == _NO_FIT:
                    continue
                chosen[resource] = (name, _ASSIGN_MODES[preemption], borrow)
            reasons.extend(own)
            possibility = mode.preemption if mode.preemption in _POSSIBILITIES else None
            attempts.append(FlavorAttempt(name, _ASSIGN_MODES[mode.preemption], max_borrow,
                                          possibility, sorted(own), no_fit))
            if not _try_next_flavor(mode, fungibility):
                best, best_mode = chosen, mode
                break
            if is_preferred(mode, best_mode, fungibility.preference):
                best, best_mode = chosen, mode
        self.last_mode = best_mode.preemption
        # Kueue's TriedFlavorIdx: where the scan stopped, START_OVER at the last flavor
        self.last_tried = START_OVER if tried == len(group.flavors) - 1 else tried
        if best is not None and best_mode.preemption == _FIT:
            return best, [], attempts
        return best, reasons, attempts


def assign_flavors(workload: WorkloadSpec, spec: ClusterQueueSpec, node: QuotaNode,
                   tree: QuotaTree, flavors: Mapping[str, FlavorSpec],
                   preemption_possible: PreemptionOracle | None,
                   fair_sharing: bool = False, tas: TASContext | None = None, *,
                   last: ScanBookmark | None = None,
                   nominated: Mapping[str, Mapping[str, str]] | None = None,
                   replaced: Sequence[OldPodSet] | None = None,
                   allowed_flavors: frozenset[str] | None = None
                   ) -> WorkloadAssignment:
    """Choose flavors for every pod set of ``workload`` in ClusterQueue ``spec``.

    Pod sets of one pod-set group (``PodSetRequest.group``, Kueue's podSetGroupName:
    a LeaderWorkerSet's leader and workers) get their flavors together, for the sum of
    their requests; each keeps the flavors of the resources it asks for.

    With ``tas`` (the queue's TAS flavors, Kueue's TopologyAwareScheduling) topology
    requests choose flavors too, and a workload that fits quota is placed on its TAS
    flavors' topology (``tas_assign.py``, ``_place_topology``).

    ``last`` is the workload's bookmark (scan.py): each group's scan resumes after the
    flavor it names. ``nominated`` is Kueue's NominationMapping (pod set name ->
    resource -> flavor) of an in-cycle recomputation: only those flavors are tried.
    ``replaced`` is the admitted workload slice this one replaces (Kueue's
    ElasticJobsViaWorkloadSlices), its pod sets in order as (name, totals, flavors):
    each pod set keeps the flavors of the old one at its index and charges
    only what it asks beyond the old pod set of its name. ``allowed_flavors`` is the
    workload's kueue.x-k8s.io/workload-allowed-resource-flavors (Kueue's
    ConcurrentAdmission): only those flavors are tried."""
    assigner = _Assigner(spec, node, tree, flavors, preemption_possible, fair_sharing, tas)
    group_of: dict[str, ResourceGroup] = {}
    for resource_group in spec.resource_groups:
        for resource in resource_group.covered:
            # Kueue's RGByResource: the first group that covers the resource.
            group_of.setdefault(resource, resource_group)
    counts_pods = "pods" in group_of
    taken: dict[FlavorResource, int] = {}
    outcomes: list[PodSetOutcome] = []
    assignments: list[PodSetAssignment] = []
    borrowing = 0
    failed = False
    worst = PreemptionMode.FIT
    together: dict[tuple[str, object], list[PodSetRequest]] = {}
    member_index: dict[tuple[str, object], list[int]] = {}
    for index, pod_set in enumerate(workload.pod_sets):
        key = ("group", pod_set.group) if pod_set.group else ("index", index)
        together.setdefault(key, []).append(pod_set)
        member_index.setdefault(key, []).append(index)
    old_by_name = {name: totals for name, totals, _ in replaced or ()}
    for group_key, members in together.items():
        member_totals: list[dict[str, int]] = []
        combined: dict[str, int] = {}
        for pod_set in members:
            totals = pod_set_totals(pod_set)
            if counts_pods:
                totals["pods"] = pod_set.count * 1000  # one pod is 1000 milli-units
            member_totals.append(totals)
            for resource, amount in totals.items():
                combined[resource] = combined.get(resource, 0) + amount
        chosen: dict[str, tuple[str, AssignMode, int]] = {}
        tried_at: dict[str, int] = {}
        reasons: list[str] = []
        tries: list[tuple[list[FlavorAttempt], ResourceGroup, str]] = []
        for resource, amount in combined.items():
            group = group_of.get(resource)
            if group is None:
                if amount == 0:
                    continue  # a zero request for an undeclared resource asks nothing
                chosen, reasons = {}, [messages.resource_not_covered(resource)]
                break
            if resource in chosen:
                continue  # assigned with its resource group
            wanted = [(r, combined[r]) for r in group.covered if r in combined]
            start = 0 if last is None else \
                last.next_flavor(member_index[group_key][0], resource)
            allowed = None if nominated is None else frozenset(
                nominated.get(p.name, {}).get(resource, "") for p in members)
            old = () if replaced is None else [
                replaced[i] if i < len(replaced) else ("", {}, {})
                for i in member_index[group_key]]
            found, why, tried = assigner.group_flavor(members, group, wanted, taken, start,
                                                      allowed, resource, old, allowed_flavors)
            tries.append((tried, group, resource))
            if found is None:
                chosen, reasons = {}, why
                break
            worst = min(worst, assigner.last_mode)
            chosen.update(found)
            tried_at.update(dict.fromkeys(found, assigner.last_tried))
            reasons.extend(why)
        for pod_set, totals in zip(members, member_totals, strict=True):
            own = {r: v for r, v in chosen.items() if r in totals}
            if not totals and pod_set.group and tas is not None:
                # Kueue's resolvePodSetFlavors: a pod set of a topology group asking no
                # resource (a LeaderWorkerSet's leader) keeps the group's TAS flavors
                own = tas_flavors_only(chosen, tas)
            outcomes.append(PodSetOutcome(pod_set.name, {r: (f, m) for r, (f, m, _) in own.items()},
                                          list(reasons), totals, pod_set.count, tries,
                                          tried={r: tried_at.get(r, 0) for r in own}))
            for resource, (flavor, _, borrow) in own.items():
                borrowing = max(borrowing, borrow)
                fr = (flavor, resource)
                # a slice charges only its increase over the old slice's pod set
                taken[fr] = taken.get(fr, 0) + totals.get(resource, 0) - \
                    old_by_name.get(pod_set.name, {}).get(resource, 0)
            assignments.append(PodSetAssignment(
                pod_set.name, {r: f for r, (f, _, _) in own.items()},
                {r: a for r, a in totals.items() if r in own}, pod_set.count))
            if totals and not own:
                failed = True
        if failed:
            break
    mode = AssignMode.NO_FIT if failed or not outcomes else \
        min(outcome.mode() for outcome in outcomes)
    topology: dict[str, TopologyAssignment] = {}
    if tas is not None and mode != AssignMode.NO_FIT:
        mode, topology = place_topology(tas, workload, outcomes, mode)
    message = "; ".join(o.message() for o in outcomes if o.reasons or o.error)
    no_fit = _no_fit_reason(outcomes, spec) if mode == AssignMode.NO_FIT else ""
    return WorkloadAssignment(mode, tuple(assignments), taken, borrowing > 0, message,
                              borrowing, tuple(outcomes), no_fit, worst, topology)


def topology_requests(tas: TASContext, workload: WorkloadSpec, outcomes: list[PodSetOutcome]
                      ) -> dict[str, list[TASPodSetRequests]]:
    """Kueue's WorkloadsTopologyRequests: per TAS flavor the requests of the pod sets
    asking a topology (explicitly, or implied by a TAS-only queue); a pod set without
    quota, or with no pods left (count 0), asks nothing; one whose request cannot be
    built gets the error (its mode is then NoFit), as does an elastic workload's pod
    set asking a level under ElasticJobsViaWorkloadSlicesWithTAS."""
    by_name = {o.name: o for o in outcomes}
    requests: dict[str, list[TASPodSetRequests]] = {}
    for pod_set in workload.pod_sets:
        outcome = by_name.get(pod_set.name)
        if outcome is None or outcome.error or not tas.is_requested(pod_set) \
                or outcome.count == 0:
            continue
        elastic_error = tas.elastic_error(pod_set, workload.elastic)
        if elastic_error:
            outcome.error = elastic_error
            continue
        flavor, request, error = tas.pod_set_request(
            pod_set, outcome.count, [f for f, _ in outcome.flavors.values()])
        if flavor is None or request is None:
            outcome.error = error
            continue
        requests.setdefault(flavor, []).append(request)
    return requests


def place_topology(tas: TASContext, workload: WorkloadSpec, outcomes: list[PodSetOutcome],
                   mode: AssignMode) -> tuple[AssignMode, dict[str, TopologyAssignment]]:
    """Kueue's TAS step of Assign: build the pod sets' topology requests (a pod set
    whose request cannot be built is an error: NoFit); a Fit workload that does not
    place becomes Preempt, with the reason; a Preempt one that would not place even
    on an emptied cluster becomes NoFit (TopologyPlacementFailed on its TAS flavor),
    else every TAS pod set is Preempt (quota fits, the topology is fragmented)."""
    by_name = {o.name: o for o in outcomes}
    requests = topology_requests(tas, workload, outcomes)
    requested = [by_name[r.name] for reqs in requests.values() for r in reqs]
    if any(o.error for o in outcomes):
        return min(o.mode() for o in outcomes), {}
    topology: dict[str, TopologyAssignment] = {}
    if mode == AssignMode.FIT:
        found, failure = tas.find(requests, False)
        if failure is None:
            return mode, found
        outcome = by_name[failure[0]]
        outcome.reasons.append(failure[1])
        outcome.set_mode(AssignMode.PREEMPT)
        mode = AssignMode.PREEMPT
    if mode == AssignMode.PREEMPT:
        _, failure = tas.find(requests, True)
        if failure is not None:
            outcome = by_name[failure[0]]
            outcome.marks[failure[2]] = (AssignMode.NO_FIT, TOPOLOGY_PLACEMENT_FAILED)
            outcome.set_mode(AssignMode.NO_FIT)
            return AssignMode.NO_FIT, topology
        for outcome in requested:
            outcome.set_mode(AssignMode.PREEMPT)
    return mode, topology


def _merge_attempts(into: dict[str, FlavorAttempt], tried: list[FlavorAttempt],
                    group: ResourceGroup, resource: str) -> None:
    """Kueue's mergeFlavorAttemptsForResource: per flavor the worst mode, the largest
    borrowing, the least preemption possibility, every reason, the most severe no-fit
    reason; a flavor of this group seen before but not tried now does not provide
    ``resource``."""
    for attempt in tried:
        seen = into.get(attempt.flavor)
        if seen is None:
            into[attempt.flavor] = FlavorAttempt(attempt.flavor, attempt.mode, attempt.borrow,
                                                 attempt.possibility, sorted(set(attempt.reasons)),
                                                 attempt.no_fit_reason)
            continue
        possibility = seen.possibility
        if attempt.possibility is not None and (possibility is None
                                                or attempt.possibility < possibility):
            possibility = attempt.possibility
        into[attempt.flavor] = FlavorAttempt(
            attempt.flavor, min(seen.mode, attempt.mode), max(seen.borrow, attempt.borrow),
            possibility, sorted({*seen.reasons, *attempt.reasons}),
            most_severe(seen.no_fit_reason, attempt.no_fit_reason))
    if not tried:
        return
    present = {a.flavor for a in tried}
    in_group = {f.flavor for f in group.flavors}
    for name, seen in list(into.items()):
        if name in in_group and name not in present:
            why = f"flavor {name} does not provide resource {resource}"
            into[name] = FlavorAttempt(name, AssignMode.NO_FIT, seen.borrow, seen.possibility,
                                       sorted({*seen.reasons, why}), NO_MATCHING_FLAVOR)


def _no_fit_reason(outcomes: list[PodSetOutcome], spec: ClusterQueueSpec) -> str:
    """Kueue's resolveNoFitReason: per pod set that does not fit, the least severe
    reason among the alternative flavors of each resource group, the most severe
    across its groups; the most severe over the pod sets."""
    overall = ""
    for outcome in outcomes:
        if outcome.mode() != AssignMode.NO_FIT:
            continue
        if not outcome.attempts:
            overall = most_severe(overall, NO_MATCHING_FLAVOR)
            continue
        per_group: dict[int, str] = {}
        for position, attempt in enumerate(outcome.attempts):
            if attempt.mode != AssignMode.NO_FIT:
                continue
            groups = [i for i, g in enumerate(spec.resource_groups)
                      if any(f.flavor == attempt.flavor for f in g.flavors)] or [-1 - position]
            for index in groups:
                known = per_group.get(index)
                if known is None or _SEVERITY[attempt.no_fit_reason] < _SEVERITY[known]:
                    per_group[index] = attempt.no_fit_reason
        reason = ""
        for value in per_group.values():
            reason = most_severe(reason, value)
        overall = most_severe(overall, reason)
    return overall
