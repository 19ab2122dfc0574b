"""Kueue Topology-Aware Scheduling: where a TAS flavor's pods go by node capacity.

Kueue's ``TASFlavorSnapshot`` (``pkg/cache/scheduler/tas_flavor_snapshot.go`` at
ff69552e): the nodes a TAS ResourceFlavor selects, arranged by the ``Topology``'s
levels; each leaf's free capacity is its nodes' allocatable minus what pods not
admitted through TAS use, and TAS workloads' usage is charged on top. For a pod set
(and its leader pod set, if grouped), ``find_topology_assignment``:

1. counts per leaf how many pods fit (nodes whose taints are not tolerated, or that
   the node selector or required node affinity reject, count none -- checked only when
   the lowest level is ``kubernetes.io/hostname``), and rolls the counts up;
2. finds the level and domains that hold the request: a ``required`` level must hold
   it in one domain; a ``preferred`` one climbs to broader levels until one domain
   does, else spreads over several domains of the top level; ``unconstrained`` takes
   domains of the lowest level;
3. walks down level by level taking, under each chosen domain, the fewest children;
4. reports the lowest level's domains (only the hostname when that is the lowest level).

This is what Kueue decides from quota and node capacity alone. dralab's own
``queueing/placement.py`` places TAS pod sets through the real scheduler instead (DRA
claims included); the two agree on simple capacity cases.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dralab.queueing.kueue import messages
from dralab.queueing.kueue.tas_balanced import (
    apply_balanced_placement,
    find_best_domains_for_balanced_placement,
)
from dralab.queueing.kueue.tas_domains import (
    HOSTNAME_LABEL,
    Domain,
    DomainSorter,
    TASGates,
    belongs_to,
    domain_id,
)
from dralab.queueing.model import Amounts, TopologyAssignment

__all__ = [
    "PODS",
    "ExclusionStats",
    "TASFlavorSnapshot",
    "TASNode",
    "TASPodSetRequests",
    "TASTopologyRequest",
    "add_assumed_usage",
    "compute_usage_per_domain",
    "count_pods_in_assignment",
    "truncate_assignment",
]

PODS = "pods"
_ONE_POD = 1000  # milli-units: one pod of the "pods" resource
_SCHEDULING_EFFECTS = ("NoSchedule", "NoExecute")
# the taint NodeUnschedulable checks a pod tolerates on a spec.unschedulable node
_UNSCHEDULABLE = ("node.kubernetes.io/unschedulable", "", "NoSchedule")


@dataclass(frozen=True, slots=True)
class TASNode:
    """A node of a TAS flavor: its labels, allocatable (milli-units, ``pods``
    included) and taints (key, value, effect)."""

    name: str
    labels: Mapping[str, str]
    allocatable: Amounts
    taints: tuple[tuple[str, str, str], ...] = ()
    # Ready and not spec.unschedulable (Kueue's TAS node cache drops the others)
    schedulable_and_ready: bool = True
    # spec.unschedulable (kept under SchedulerLibraryIntegration, its filter drops it)
    unschedulable: bool = False


@dataclass(frozen=True, slots=True)
class TASTopologyRequest:
    """Kueue's ``PodSetTopologyRequest``: ``required`` / ``preferred`` level,
    ``unconstrained``, and slice constraints ((level, size) from the broadest)."""

    required: str | None = None
    preferred: str | None = None
    unconstrained: bool = False
    slice_constraints: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class TASPodSetRequests:
    """One pod set to place on a TAS flavor (Kueue's ``TASPodSetRequests``)."""

    name: str
    single_pod_requests: Amounts
    count: int
    topology: TASTopologyRequest | None = None
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[tuple[str, str, str, str], ...] = ()
    node_affinity: tuple[tuple[tuple[str, str, tuple[str, ...]], ...], ...] = ()
    # the request is implied (the flavor is TAS, the pod set asks no topology)
    implied: bool = False
    group: str | None = None


@dataclass
class ExclusionStats:
    """Why nodes were left out (Kueue's ``tasExclusionStats``)."""

    total_nodes: int = 0
    node_selector: int = 0
    affinity: int = 0
    topology_domain: int = 0
    taints: dict[str, int] = field(default_factory=dict)
    resources: dict[str, int] = field(default_factory=dict)
    # the nodes the scheduler library's filters refused (SchedulerLibraryIntegration)
    scheduler_library_no_fit: int = 0

    def has_exclusions(self) -> bool:
        return bool(self.node_selector or self.affinity or self.taints
                    or self.topology_domain or self.resources or self.scheduler_library_no_fit)

    def format_reasons(self) -> str:
        reasons = []
        if self.node_selector:
            reasons.append(f"nodeSelector: {self.node_selector}")
        if self.affinity:
            reasons.append(f"affinity: {self.affinity}")
        if self.topology_domain:
            reasons.append(f"topologyDomain: {self.topology_domain}")
        if self.scheduler_library_no_fit:
            reasons.append(f"schedulerLibraryNoFit: {self.scheduler_library_no_fit}")
        reasons += [f'taint "{t}": {n}' for t, n in sorted(self.taints.items())]
        reasons += [f'resource "{r}": {n}' for r, n in sorted(self.resources.items())]
        return ", ".join(sorted(reasons))


# -- assignments ------------------------------------------------------------------------

def count_pods_in_assignment(assignment: TopologyAssignment | None) -> int:
    return 0 if assignment is None else sum(count for _, count in assignment.domains)


def truncate_assignment(assignment: TopologyAssignment, count: int) -> TopologyAssignment:
    """The first ``count`` pods of the assignment, in its order."""
    kept: list[tuple[tuple[str, ...], int]] = []
    remaining = count
    for values, n in assignment.domains:
        if remaining <= 0:
            break
        kept.append((values, min(n, remaining)))
        remaining -= n
    return TopologyAssignment(assignment.levels, tuple(kept))


def compute_usage_per_domain(assignment: TopologyAssignment, single_pod: Amounts
                             ) -> dict[str, dict[str, int]]:
    """Per assigned domain, its pods' requests and the pods themselves."""
    usage: dict[str, dict[str, int]] = {}
    for values, n in assignment.domains:
        amounts = {r: v * n for r, v in single_pod.items()}
        amounts[PODS] = amounts.get(PODS, 0) + n * _ONE_POD
        usage[domain_id(values)] = amounts
    return usage


def add_assumed_usage(assumed: dict[str, dict[str, int]], assignment: TopologyAssignment,
                      single_pod: Amounts) -> None:
    for domain, amounts in compute_usage_per_domain(assignment, single_pod).items():
        into = assumed.setdefault(domain, {})
        for r, v in amounts.items():
            into[r] = into.get(r, 0) + v


def count_in(requests: Amounts, capacity: Amounts) -> tuple[int, str]:
    """How many times ``requests`` fit in ``capacity``, and the resource that limits
    it (ties by name); resources asked at zero do not limit."""
    best: int | None = None
    limiting = ""
    for resource in sorted(requests):
        amount = requests[resource]
        n = 2**31 - 1 if amount == 0 else max(0, min(capacity.get(resource, 0) // amount,
                                                         2**31 - 1))
        if best is None or n < best:
            best, limiting = n, resource
    return (0, "") if best is None else (best, limiting)


def _sub(into: dict[str, int], amounts: Amounts) -> None:
    for r, v in amounts.items():
        into[r] = into.get(r, 0) - v


def _add(into: dict[str, int], amounts: Amounts) -> None:
    for r, v in amounts.items():
        into[r] = into.get(r, 0) + v


# -- node filters -------------------------------------------------------------------------

def taint_string(taint: tuple[str, str, str]) -> str:
    """``corev1.Taint.ToString``: ``key=value:effect`` (``key:effect`` without value)."""
    key, value, effect = taint
    head = f"{key}={value}" if value else key
    return f"{head}:{effect}" if effect else head


def _tolerated(taint: tuple[str, str, str],
               tolerations: Sequence[tuple[str, str, str, str]]) -> bool:
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


def _affinity_matches(terms: Sequence[Sequence[tuple[str, str, tuple[str, ...]]]],
                      labels: Mapping[str, str]) -> bool:
    return not terms or any(all(_expression_matches(labels, *e) for e in term)
                            for term in terms)


# -- the snapshot ---------------------------------------------------------------------------

@dataclass(eq=False)
class _Leaf:
    domain: Domain
    node: TASNode | None
    capacity: dict[str, int]
    free_capacity: dict[str, int] = field(default_factory=dict)
    tas_usage: dict[str, int] | None = None


@dataclass
class _Params:
    count: int
    leader_count: int = 0
    slice_size: int = 1
    requested_level: int = 0
    slice_level: int = 0
    required: bool = False
    unconstrained: bool = False
    slice_size_at_level: dict[int, int] = field(default_factory=dict)
    multi_layer: tuple[tuple[str, int], ...] = ()
    stats: ExclusionStats = field(default_factory=ExclusionStats)


class TASFlavorSnapshot(DomainSorter):
    """The domains of one TAS flavor's topology with their free capacity and TAS usage."""

    def __init__(self, topology_name: str, levels: Sequence[str],
                 nodes: Sequence[TASNode] = (), gates: TASGates | None = None,
                 tolerations: Sequence[tuple[str, str, str, str]] = ()) -> None:
        super().__init__(topology_name, tuple(levels), gates or TASGates())
        self.tolerations = tuple(tolerations)
        # Kueue's SchedulerLibraryIntegration on a hostname-level topology: nodes go
        # through kube-scheduler's filters, which say only how many they refused
        self.scheduler_library = False
        self.leaves: dict[str, _Leaf] = {}
        self.domains_per_level: list[dict[str, Domain]] = [{} for _ in self.levels]
        self.roots: dict[str, Domain] = {}
        self.node_to_domain: dict[str, str] = {}
        for node in nodes:
            self.node_to_domain[node.name] = self._add_node(node)
        self._link()

    # -- the tree ---------------------------------------------------------------

    def _add_node(self, node: TASNode) -> str:
        values = tuple(node.labels.get(key, "") for key in self.levels)
        did = node.labels.get(HOSTNAME_LABEL, "") if self.is_lowest_level_node \
            else domain_id(values)
        leaf = self.leaves.get(did)
        if leaf is None:
            leaf = _Leaf(Domain(did, values), node if self.is_lowest_level_node else None, {})
            self.leaves[did] = leaf
        _add(leaf.capacity, node.allocatable)
        _add(leaf.free_capacity, node.allocatable)
        return did

    def _link(self) -> None:
        for leaf in self.leaves.values():
            d = leaf.domain
            self.domains_per_level[len(d.level_values) - 1][d.id] = d
            self._link_up(d)

    def _link_up(self, d: Domain) -> None:
        if len(d.level_values) == 1:
            self.roots[d.id] = d
            return
        parent_values = d.level_values[:-1]
        level = self.domains_per_level[len(parent_values) - 1]
        parent = level.get(domain_id(parent_values))
        if parent is None:
            parent = Domain(domain_id(parent_values), parent_values)
            level[parent.id] = parent
            self._link_up(parent)
        d.parent = parent
        parent.children.append(d)

    def leaf_count(self) -> int:
        return len(self.leaves)

    def leaf_domain_ids(self) -> list[str]:
        return sorted(self.leaves)

    def lowest_level(self) -> str:
        return self.levels[-1]

    def highest_level(self) -> str:
        return self.levels[0]

    # -- usage ------------------------------------------------------------------

    def add_non_tas_usage(self, node_name: str, usage: Amounts) -> None:
        """What a pod not admitted through TAS uses on the node (DaemonSets, static pods)."""
        _sub(self.leaves[self.node_to_domain[node_name]].free_capacity, usage)

    def add_tas_usage(self, domain: str, usage: Amounts) -> None:
        leaf = self.leaves.get(domain)
        if leaf is None:
            return  # the node went away or is no longer Ready: Kueue skips it too
        if leaf.tas_usage is None:
            leaf.tas_usage = {}
        _add(leaf.tas_usage, usage)

    def remove_tas_usage(self, domain: str, usage: Amounts) -> None:
        leaf = self.leaves.get(domain)
        if leaf is None:
            return
        if leaf.tas_usage is None:
            leaf.tas_usage = {}
        _sub(leaf.tas_usage, usage)

    def update_tas_usage(self, domain: str, usage: Amounts, add: bool, count: int) -> None:
        amounts = dict(usage)
        amounts[PODS] = amounts.get(PODS, 0) + count * _ONE_POD
        (self.add_tas_usage if add else self.remove_tas_usage)(domain, amounts)

    def remaining_capacity(self, leaf: _Leaf, simulate_empty: bool = False) -> dict[str, int]:
        remaining = dict(leaf.free_capacity)
        if not simulate_empty and leaf.tas_usage:
            _sub(remaining, leaf.tas_usage)
        return remaining

    def fits(self, usage: Sequence[tuple[tuple[str, ...], Amounts, int]]) -> bool:
        """Whether every (domain values, single-pod requests, count) still fits."""
        for values, single_pod, count in usage:
            leaf = self.leaves.get(domain_id(values))
            if leaf is None or count_in(single_pod, self.remaining_capacity(leaf))[0] < count:
                return False
        return True

    def serialize_free_capacity_per_domain(self) -> str:
        def details(amounts: Mapping[str, int] | None) -> dict[str, str]:
            return {r: messages.format_amount(r, v) for r, v in sorted((amounts or {}).items())}
        out = {d: {"freeCapacity": details(leaf.free_capacity),
                   "tasUsage": details(leaf.tas_usage)}
               for d, leaf in sorted(self.leaves.items())}
        return json.dumps(out, separators=(",", ":"))

    # -- requests ----------------------------------------------------------------

    def level_index(self, key: str) -> int | None:
        return self.levels.index(key) if key in self.levels else None

    def level_key(self, request: TASTopologyRequest | None) -> str | None:
        if request is None:
            return None
        if request.required is not None:
            return request.required
        if request.preferred is not None:
            return request.preferred
        if request.slice_constraints:
            return self.highest_level()
        if request.unconstrained:
            return self.lowest_level()
        return None

    def has_level(self, request: TASTopologyRequest | None) -> bool:
        key = self.level_key(request)
        if key is None:
            return False
        slice_key = request.slice_constraints[0][0] if request and request.slice_constraints \
            else self.lowest_level()
        if self.level_index(key) is None or self.level_index(slice_key) is None:
            return False
        return all(self.level_index(level) is not None
                   for level, _ in (request.slice_constraints if request else ()))

    def is_topology_assignment_stale(self, assignment: TopologyAssignment) -> tuple[bool, str]:
        for values, _ in assignment.domains:
            if domain_id(values) not in self.leaves:
                return True, values[0]
        return False, ""

    def merge_topology_assignments(self, a: TopologyAssignment, b: TopologyAssignment
                                   ) -> TopologyAssignment:
        """Both assignments' domains in the order of their full level values, a
        domain in both once with the pods summed."""
        lowest = self.domains_per_level[-1]
        ordered = sorted((*a.domains, *b.domains),
                         key=lambda d: domain_id(lowest[domain_id(d[0])].level_values))
        merged: list[tuple[tuple[str, ...], int]] = []
        for values, count in ordered:
            if merged and domain_id(merged[-1][0]) == domain_id(values):
                merged[-1] = (merged[-1][0], merged[-1][1] + count)
            else:
                merged.append((values, count))
        return TopologyAssignment(a.levels, tuple(merged))

    # -- the search --------------------------------------------------------------

    def find_topology_assignments_for_flavor(
            self, requests: Sequence[TASPodSetRequests], simulate_empty: bool = False,
            assumed_usage: dict[str, dict[str, int]] | None = None,
    ) -> dict[str, tuple[TopologyAssignment | None, str]]:
        """Per pod set, its assignment or why none (Kueue's
        ``FindTopologyAssignmentsForFlavor``): pod sets of one group are placed
        together, the larger as workers, the other as their leader; each placed group
        is assumed to use its domains while the next is placed."""
        result: dict[str, tuple[TopologyAssignment | None, str]] = {}
        assumed = {} if assumed_usage is None else assumed_usage
        groups: dict[str, list[TASPodSetRequests]] = {}
        for index, request in enumerate(requests):
            groups.setdefault(request.group if request.group is not None else str(index),
                              []).append(request)
        for members in groups.values():
            workers, leader = members[0], None
            if len(members) > 1:
                leader = members[1]
                if leader.count > workers.count:
                    workers, leader = leader, workers
            assignments, reason = self.find_topology_assignment(workers, leader, assumed,
                                                                simulate_empty)
            for member in members:
                result[member.name] = (assignments.get(member.name), reason)
            if reason:
                return result
            for member in members:
                add_assumed_usage(assumed, assignments[member.name], member.single_pod_requests)
        return result

    def find_topology_assignment(
            self, workers: TASPodSetRequests, leader: TASPodSetRequests | None = None,
            assumed_usage: Mapping[str, Mapping[str, int]] | None = None,
            simulate_empty: bool = False, required_domain: str = "",
    ) -> tuple[dict[str, TopologyAssignment], str]:
        """Kueue's ``findTopologyAssignment``: the assignment of the workers (and the
        leader), or the reason none holds them."""
        request = workers.topology
        constraints = request.slice_constraints if request else ()
        p = _Params(count=workers.count, leader_count=1 if leader is not None else 0)
        if constraints:
            p.slice_size = constraints[0][1]
            if p.slice_size <= 0:
                return {}, "slice topology requested, but slice size not provided"
        p.required = request is not None and request.required is not None
        p.unconstrained = workers.implied or (request is not None and (
            request.unconstrained or (request.required is None and request.preferred is None
                                      and bool(constraints))))
        key = self.level_key(request) or (self.lowest_level() if workers.implied else None)
        if key is None:
            return {}, "topology level not specified"
        requested = self.level_index(key)
        if requested is None:
            return {}, f"no requested topology level: {key}"
        p.requested_level = requested
        slice_key = constraints[0][0] if constraints else self.lowest_level()
        slice_level = self.level_index(slice_key)
        if slice_level is None:
            return {}, f"no requested topology level for slices: {slice_key}"
        p.slice_level = slice_level
        if p.requested_level > p.slice_level:
            return {}, f"podset slice topology {slice_key} is above the podset topology {key}"
        reason = self._slice_sizes_at_level(p, constraints)
        if reason:
            return {}, reason
        if p.slice_size_at_level:
            p.multi_layer = constraints

        self._fill_in_counts(workers, leader, assumed_usage or {}, simulate_empty,
                             required_domain, p)

        fit: list[Domain] | None = None
        fit_level = 0
        balanced = False
        if self.gates.balanced_placement and not p.required and not p.unconstrained:
            fit, threshold = find_best_domains_for_balanced_placement(
                self, self.domains_per_level, p.count, p.slice_size, p.leader_count,
                p.requested_level, p.slice_level)
            balanced = threshold > 0
            if balanced:
                fit, fit_level, why = apply_balanced_placement(
                    self, p.count, p.slice_size, p.leader_count, p.requested_level,
                    p.slice_level, threshold, fit)
                if why:
                    balanced = False  # Kueue falls back to BestFit
        if not balanced:
            fit_level, fit, reason = self._find_level_with_fit_domains(p.requested_level, p)
            if reason:
                return {}, reason
        assert fit is not None
        current = self.update_counts_to_minimum(fit, p.count, p.leader_count, p.slice_size,
                                                p.unconstrained, True) or []
        level = fit_level
        while level < min(len(self.levels) - 1, p.slice_level) and not balanced:
            # above the slice level pods are spread greedily over all chosen domains
            lower = self.sorted_domains([c for d in current for c in d.children],
                                        p.unconstrained)
            current = self.update_counts_to_minimum(lower, p.count, p.leader_count,
                                                    p.slice_size, p.unconstrained, True) or []
            level += 1
        while level < len(self.levels) - 1:
            # at or below it, each chosen domain's pods go to its own children
            size = p.slice_size
            if level >= p.slice_level:
                size = p.slice_size_at_level.get(level + 1, 1)
            below: list[Domain] = []
            for d in current:
                children = self.sorted_domains(d.children, p.unconstrained)
                if size > 1:
                    for c in children:
                        c.slice_count = c.pod_count // size
                        c.slice_count_with_leader = c.pod_count_with_leader // size
                below += self.update_counts_to_minimum(children, d.pod_count, d.leader_count,
                                                       size, p.unconstrained, size > 1) or []
            current = below
            level += 1

        assignments: dict[str, TopologyAssignment] = {}
        if leader is not None:
            leader_domains, worker_domains = [], []
            for d in current:
                if d.leader_count > 0:
                    copy = d.with_counts()
                    copy.pod_count = d.leader_count
                    leader_domains.append(copy)
                if d.pod_count > 0:
                    worker_domains.append(d)
            assignments[leader.name] = self.build_assignment(leader_domains)
            current = worker_domains
        assignments[workers.name] = self.build_assignment(current)
        return assignments, ""

    def _slice_sizes_at_level(self, p: _Params, constraints: Sequence[tuple[str, int]]) -> str:
        prev_size, prev_level = p.slice_size, p.slice_level
        for level_key, size in constraints[1:]:
            level = self.level_index(level_key)
            if level is None:
                return f"no requested topology level for additional slice layer: {level_key}"
            if level <= prev_level:
                return (f"additional slice layer topology {level_key} must be at a lower "
                        f"level than {self.levels[prev_level]}")
            if size <= 0 or prev_size % size:
                return (f"additional slice layer size {size} must evenly divide parent "
                        f"layer size {prev_size}")
            for lvl in range(prev_level + 1, level + 1):
                p.slice_size_at_level[lvl] = size
            prev_size, prev_level = size, level
        return ""

    def _node_passes(self, node: TASNode, workers: TASPodSetRequests,
                     stats: ExclusionStats) -> bool:
        if self.scheduler_library:
            # kube-scheduler's NodeUnschedulable, TaintToleration and NodeAffinity
            # filters, counted as one (Kueue's SchedulerLibraryNoFit)
            filtered = ExclusionStats()
            if (node.unschedulable and not _tolerated(
                    _UNSCHEDULABLE, (*workers.tolerations, *self.tolerations))) \
                    or not self._filters_pass(node, workers, filtered):
                stats.scheduler_library_no_fit += 1
                return False
            return True
        return self._filters_pass(node, workers, stats)

    def _filters_pass(self, node: TASNode, workers: TASPodSetRequests,
                      stats: ExclusionStats) -> bool:
        tolerations = (*workers.tolerations, *self.tolerations)
        for taint in node.taints:
            if taint[2] in _SCHEDULING_EFFECTS and not _tolerated(taint, tolerations):
                name = taint_string(taint)
                stats.taints[name] = stats.taints.get(name, 0) + 1
                return False
        if any(node.labels.get(k) != v for k, v in workers.node_selector.items()):
            stats.node_selector += 1
            return False
        if not _affinity_matches(workers.node_affinity, node.labels):
            stats.affinity += 1
            return False
        return True

    def _fill_in_counts(self, workers: TASPodSetRequests, leader: TASPodSetRequests | None,
                        assumed: Mapping[str, Mapping[str, int]], simulate_empty: bool,
                        required_domain: str, p: _Params) -> None:
        for level in self.domains_per_level:
            for d in level.values():
                d.clear_counts()
        requests = dict(workers.single_pod_requests)
        requests[PODS] = requests.get(PODS, 0) + _ONE_POD
        leader_requests = None
        if leader is not None:
            leader_requests = dict(leader.single_pod_requests)
            leader_requests[PODS] = leader_requests.get(PODS, 0) + _ONE_POD
        for leaf in self.leaves.values():
            p.stats.total_nodes += 1
            if leaf.node is not None and not self._node_passes(leaf.node, workers, p.stats):
                continue
            if not belongs_to(domain_id(leaf.domain.level_values), required_domain):
                p.stats.topology_domain += 1
                continue
            remaining = self.remaining_capacity(leaf, simulate_empty)
            if leaf.domain.id in assumed:
                _sub(remaining, assumed[leaf.domain.id])
            d = leaf.domain
            d.pod_count, limiting = count_in(requests, remaining)
            if d.pod_count == 0 and limiting:
                p.stats.resources[limiting] = p.stats.resources.get(limiting, 0) + 1
            d.leader_count = 0
            if leader_requests is not None and count_in(leader_requests, remaining)[0] > 0:
                d.leader_count = 1
                _sub(remaining, leader_requests)
            d.pod_count_with_leader = count_in(requests, remaining)[0]
        for root in self.roots.values():
            self.fill_in_counts_helper(root, p.slice_size, p.slice_level, 0,
                                       p.slice_size_at_level, p.leader_count > 0)

    def _not_fit(self, level: int, fit_count: int, total: int, p: _Params) -> str:
        if p.multi_layer:
            return self._multi_layer_not_fit(level, p)
        unit = "pod" if p.slice_size == 1 else "slice"
        if fit_count == 0:
            text = (f'topology "{self.topology_name}" doesn\'t allow to fit any of {total} '
                    f"{unit}(s)")
        else:
            text = (f'topology "{self.topology_name}" allows to fit only {fit_count} out of '
                    f"{total} {unit}(s)")
        if p.stats.has_exclusions():
            text += (f". Total nodes: {p.stats.total_nodes}; excluded: "
                     f"{p.stats.format_reasons()}")
        return text

    def _slices_in_subtree(self, d: Domain, level: int, target: int, size: int) -> int:
        if level == target:
            return d.pod_count // size
        return sum(self._slices_in_subtree(c, level + 1, target, size) for c in d.children)

    def _multi_layer_not_fit(self, level: int, p: _Params) -> str:
        text = f'topology "{self.topology_name}" doesn\'t allow to fit'
        candidates = self.domains_per_level[level].values()
        if not candidates:
            return text
        best = min(candidates, key=lambda d: (-d.slice_count, d.id))
        for key, size in p.multi_layer:
            target = self.level_index(key)
            if target is None:
                continue
            fit = self._slices_in_subtree(best, level, target, size)
            text += f"; {fit}/{p.count // size} slice(s) fit on level {key}"
        if p.stats.has_exclusions():
            text += (f". Total nodes: {p.stats.total_nodes}; excluded: "
                     f"{p.stats.format_reasons()}")
        return text

    def _find_level_with_fit_domains(self, level: int, p: _Params
                                     ) -> tuple[int, list[Domain], str]:
        domains = self.domains_per_level[level]
        if not domains:
            return 0, [], f"no topology domains at level: {self.levels[level]}"
        ordered = self.sorted_domains_with_leader(domains.values(), p.unconstrained)
        top = ordered[0]
        slice_count = p.count // p.slice_size
        best_fit = not self.least_free_capacity(p.unconstrained)
        if best_fit and top.slice_count_with_leader >= slice_count \
                and top.leader_count >= p.leader_count:
            top = self.best_fit_domain_for_slices(ordered, slice_count, p.leader_count)
        if not best_fit:
            for candidate in ordered:
                capacity = candidate.slice_count
                if p.leader_count > 0:
                    if candidate.leader_count < p.leader_count:
                        continue
                    capacity = candidate.slice_count_with_leader
                if capacity >= slice_count:
                    return level, [candidate], ""
            if p.required:
                return 0, [], self._not_fit(level, ordered[-1].pod_count, slice_count, p)
        if top.slice_count_with_leader < slice_count or top.leader_count < p.leader_count:
            if p.required:
                if self.gates.respect_node_affinity_preferred:
                    for i in range(1, len(ordered)):
                        d = ordered[i]
                        if d.slice_count_with_leader >= slice_count \
                                and d.leader_count >= p.leader_count:
                            return level, [self.best_fit_domain_for_slices(
                                ordered[i:], slice_count, p.leader_count)], ""
                return 0, [], self._not_fit(level, top.slice_count, slice_count, p)
            if level > 0 and not p.unconstrained:
                return self._find_level_with_fit_domains(level - 1, p)
            return self._spread_over_level(level, ordered, slice_count, p)
        return level, [top], ""

    def _spread_over_level(self, level: int, ordered: list[Domain], slice_count: int,
                           p: _Params) -> tuple[int, list[Domain], str]:
        """No single domain of the broadest level holds it: take several, leaders first."""
        best_fit = not self.least_free_capacity(p.unconstrained)
        results: list[Domain] = []
        remaining_slices, remaining_leaders = slice_count, p.leader_count
        ordered = self.prioritize_leader_domain(ordered, p.count, p.leader_count,
                                                p.slice_size, True)
        idx = 0
        while remaining_leaders > 0 and idx < len(ordered) and ordered[idx].leader_count > 0:
            d = ordered[idx]
            if best_fit and d.slice_count_with_leader >= remaining_slices:
                d = self.best_fit_domain_for_slices(ordered[idx:], remaining_slices,
                                                    remaining_leaders)
            results.append(d)
            remaining_leaders -= d.leader_count
            remaining_slices -= d.slice_count_with_leader
            idx += 1
        if remaining_leaders > 0:
            return 0, [], self._not_fit(level, p.leader_count - remaining_leaders,
                                        slice_count, p)
        rest = self.sorted_domains(ordered[idx:], p.unconstrained)
        i = 0
        while remaining_slices > 0 and i < len(rest):
            d = rest[i]
            if best_fit and d.slice_count >= remaining_slices:
                d = self.best_fit_domain_for_slices(rest[i:], remaining_slices, 0)
            results.append(d)
            remaining_slices -= d.slice_count
            i += 1
        if remaining_slices > 0:
            return 0, [], self._not_fit(level, slice_count - remaining_slices, slice_count, p)
        return level, results, ""

    def build_assignment(self, domains: list[Domain]) -> TopologyAssignment:
        """The lowest level's domains in the order of their level values (only the
        hostname when that is the lowest level)."""
        from functools import cmp_to_key
        ordered = sorted(domains, key=cmp_to_key(self.compare_domain_level_values))
        start = len(self.levels) - 1 if self.is_lowest_level_node else 0
        return TopologyAssignment(
            self.levels[start:],
            tuple((d.level_values[start:], d.pod_count) for d in ordered if d.pod_count))
