"""Kueue Topology-Aware Scheduling: topology domains and how pods are spread over them.

Kueue (``pkg/cache/scheduler/tas_topology_tree.go``, ``tas_flavor_snapshot.go``)
arranges a TAS flavor's nodes in a tree of domains, one level per node-label key of
the ``Topology`` (broadest first). For a pod set, every leaf gets how many pods fit in
what is left of it (``podCount``), and with a leader pod set, whether the leader fits
(``leaderCount``) and how many workers fit beside it (``podCountWithLeader``); parents
sum their children. Slices (``podset-slice-size`` pods kept in one domain of the slice
level) are counted at that level and summed above it.

Placing then sorts domains and takes them greedily:

* ``BestFit`` (the default): most slices first, then fewest pods, then by name; the
  last domain taken is the smallest one that still holds what remains;
* ``LeastFreeCapacity`` (unconstrained requests under Kueue's ``TASProfileMixed``,
  beta, on): fewest slices first.

This module holds the domains, their per-placement counts, the sorting and the
greedy step (``updateCountsToMinimumGeneric``); ``tas.py`` builds the tree from nodes
and runs the search, ``tas_balanced.py`` is the ``TASBalancedPlacement`` variant.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

__all__ = [
    "HOSTNAME_LABEL",
    "Domain",
    "DomainSorter",
    "TASGates",
    "domain_id",
]

HOSTNAME_LABEL = "kubernetes.io/hostname"
_SEPARATOR = ","
_MAX_INT32 = 2**31 - 1

LOG = logging.getLogger(__name__)


def domain_id(level_values: Sequence[str]) -> str:
    """Kueue's ``TopologyDomainID``: the level values joined with commas."""
    return _SEPARATOR.join(level_values)


def belongs_to(domain: str, target: str) -> bool:
    """Whether ``domain`` is ``target`` or lies under it (an empty target: any)."""
    return not target or domain == target or domain.startswith(target + _SEPARATOR)


@dataclass(frozen=True, slots=True)
class TASGates:
    """Kueue's TAS feature gates, each with upstream's default (ff69552e)."""

    # beta, on: unconstrained requests use LeastFreeCapacity.
    profile_mixed: bool = True
    # alpha, off: preferred requests are spread evenly (tas_balanced.py).
    balanced_placement: bool = False
    # alpha, off: preferred node affinity terms rank domains first.
    respect_node_affinity_preferred: bool = False
    # beta, on: flavors whose lowest level is the hostname share their nodes' usage.
    handle_overlapping_flavors: bool = True
    # beta, on: a workload whose unhealthy node finds no replacement is evicted
    # (tas_replace.py); off: it keeps its assignment and waits.
    failed_node_replacement_fail_fast: bool = True
    # beta, on: an entry whose nodes an earlier entry of the cycle took is assigned
    # again (KueuePolicy._renominate); off: it waits for the next cycle.
    recompute_within_cycle: bool = True

    @classmethod
    def from_feature_gates(cls, gates: Mapping[str, bool]) -> TASGates:
        defaults = cls()
        return cls(
            profile_mixed=gates.get("TASProfileMixed", defaults.profile_mixed),
            balanced_placement=gates.get("TASBalancedPlacement", defaults.balanced_placement),
            respect_node_affinity_preferred=gates.get(
                "TASRespectNodeAffinityPreferred", defaults.respect_node_affinity_preferred),
            handle_overlapping_flavors=gates.get(
                "TASHandleOverlappingFlavors", defaults.handle_overlapping_flavors),
            failed_node_replacement_fail_fast=gates.get(
                "TASFailedNodeReplacementFailFast",
                defaults.failed_node_replacement_fail_fast),
            recompute_within_cycle=gates.get(
                "TASRecomputeAssignmentWithinSchedulingCycle",
                defaults.recompute_within_cycle))


@dataclass(eq=False, slots=True)
class Domain:
    """One topology domain: where it sits in the tree and its counts for the pod
    set being placed (Kueue keeps the counts apart per snapshot; a dralab snapshot
    owns its tree, so they live here)."""

    id: str
    level_values: tuple[str, ...]
    parent: Domain | None = None
    children: list[Domain] = field(default_factory=list)
    pod_count: int = 0
    slice_count: int = 0
    pod_count_with_leader: int = 0
    slice_count_with_leader: int = 0
    leader_count: int = 0
    affinity_score: int = 0

    def clear_counts(self) -> None:
        self.pod_count = self.slice_count = 0
        self.pod_count_with_leader = self.slice_count_with_leader = 0
        self.leader_count = 0
        self.affinity_score = 0

    def with_counts(self) -> Domain:
        """A copy with its own counts, the same place in the tree (Kueue's
        ``shallowCloneWithState``)."""
        return replace(self)


def _cmp(a: int | float | str, b: int | float | str) -> int:
    return (a > b) - (a < b)  # type: ignore[operator]


def compare_level_values(a: Domain, b: Domain) -> int:
    return _cmp(a.level_values, b.level_values)  # type: ignore[arg-type]


@dataclass
class DomainSorter:
    """What ordering and greedy placement need of a TAS flavor snapshot: its levels
    and gates."""

    topology_name: str
    levels: tuple[str, ...]
    gates: TASGates = field(default_factory=TASGates)

    @property
    def is_lowest_level_node(self) -> bool:
        return bool(self.levels) and self.levels[-1] == HOSTNAME_LABEL

    def leaf_count(self) -> int:
        return 0

    def leaf_domain_ids(self) -> list[str]:
        return []

    # -- ordering ------------------------------------------------------------------

    def compare_domain_level_values(self, a: Domain, b: Domain) -> int:
        if self.is_lowest_level_node and a.parent is b.parent:
            return _cmp(a.level_values[-1], b.level_values[-1])
        return compare_level_values(a, b)

    def least_free_capacity(self, unconstrained: bool) -> bool:
        # the matrix of KEP-2724: LeastFreeCapacity only for unconstrained under
        # TASProfileMixed, BestFit otherwise
        return unconstrained and self.gates.profile_mixed

    def _sort(self, domains: Iterable[Domain], key: Callable[[Domain, Domain], int]
              ) -> list[Domain]:
        from functools import cmp_to_key
        return sorted(domains, key=cmp_to_key(key))

    def sorted_domains_with_leader(self, domains: Iterable[Domain],
                                   unconstrained: bool) -> list[Domain]:
        least_free = self.least_free_capacity(unconstrained)
        affinity = self.gates.respect_node_affinity_preferred

        def compare(a: Domain, b: Domain) -> int:
            if a.leader_count != b.leader_count:
                return _cmp(b.leader_count, a.leader_count)
            if affinity and a.affinity_score != b.affinity_score:
                return _cmp(b.affinity_score, a.affinity_score)
            if a.slice_count_with_leader != b.slice_count_with_leader:
                if least_free:
                    return _cmp(a.slice_count_with_leader, b.slice_count_with_leader)
                return _cmp(b.slice_count_with_leader, a.slice_count_with_leader)
            if a.pod_count_with_leader != b.pod_count_with_leader:
                return _cmp(a.pod_count_with_leader, b.pod_count_with_leader)
            return self.compare_domain_level_values(a, b)
        return self._sort(domains, compare)

    def sorted_domains(self, domains: Iterable[Domain], unconstrained: bool) -> list[Domain]:
        least_free = self.least_free_capacity(unconstrained)
        affinity = self.gates.respect_node_affinity_preferred

        def compare(a: Domain, b: Domain) -> int:
            if affinity and a.affinity_score != b.affinity_score:
                return _cmp(b.affinity_score, a.affinity_score)
            if a.slice_count != b.slice_count:
                if least_free:
                    return _cmp(a.slice_count, b.slice_count)
                return _cmp(b.slice_count, a.slice_count)
            if a.pod_count != b.pod_count:
                return _cmp(a.pod_count, b.pod_count)
            return self.compare_domain_level_values(a, b)
        return self._sort(domains, compare)

    # -- best fit --------------------------------------------------------------------

    def top_affinity_tier(self, candidates: list[Domain]) -> list[Domain]:
        """Only the domains sharing the best preferred-affinity score, so BestFit
        never trades affinity for a tighter fit."""
        if not self.gates.respect_node_affinity_preferred or not candidates:
            return candidates
        score = candidates[0].affinity_score
        for i, candidate in enumerate(candidates):
            if candidate.affinity_score != score:
                return candidates[:i]
        return candidates

    def _best_fit_by(self, domains: list[Domain], needed: int,
                     count: Callable[[Domain], int], leader_count: int) -> Domain:
        candidates = self.top_affinity_tier(domains)
        best, best_count = candidates[0], _MAX_INT32
        for d in candidates:
            if d.leader_count < leader_count:
                continue
            have = count(d)
            if needed <= have < best_count:
                best, best_count = d, have
        return best

    def best_fit_domain(self, domains: list[Domain], count: int, leader_count: int) -> Domain:
        if leader_count > 0:
            return self._best_fit_by(domains, count, lambda d: d.pod_count_with_leader,
                                     leader_count)
        return self._best_fit_by(domains, count, lambda d: d.pod_count, leader_count)

    def best_fit_domain_for_slices(self, domains: list[Domain], slice_count: int,
                                   leader_count: int) -> Domain:
        if leader_count > 0:
            return self._best_fit_by(domains, slice_count, lambda d: d.slice_count_with_leader,
                                     leader_count)
        return self._best_fit_by(domains, slice_count, lambda d: d.slice_count, leader_count)

    # -- counts ------------------------------------------------------------------------

    def fill_in_counts_helper(self, domain: Domain, slice_size: int, slice_level: int,
                              level: int, slice_size_at_level: Mapping[int, int] | None,
                              leader_required: bool) -> None:
        """Roll the leaves' counts up to ``domain``; slices are counted at the slice
        level and summed above it."""
        if not domain.children:
            if level == slice_level:
                domain.slice_count = domain.pod_count // slice_size
                domain.slice_count_with_leader = domain.pod_count_with_leader // slice_size
            return
        children_pods = slice_capacity = leader_count = affinity = 0
        contributor = False
        min_pod_diff = min_slice_diff = _MAX_INT32
        inner = (slice_size_at_level or {}).get(level + 1)
        for child in domain.children:
            self.fill_in_counts_helper(child, slice_size, slice_level, level + 1,
                                       slice_size_at_level, leader_required)
            pods, pods_with_leader = child.pod_count, child.pod_count_with_leader
            if inner:
                # a child of an inner slice layer gives whole inner slices only
                pods, pods_with_leader = pods // inner * inner, pods_with_leader // inner * inner
            children_pods += pods
            slice_capacity += child.slice_count
            if not leader_required or child.leader_count > 0:
                contributor = True
                min_pod_diff = min(pods - pods_with_leader, min_pod_diff)
                min_slice_diff = min(child.slice_count - child.slice_count_with_leader,
                                     min_slice_diff)
            leader_count = max(child.leader_count, leader_count)
            affinity += child.affinity_score
        domain.pod_count = children_pods
        slice_with_leader = 0
        if contributor:
            domain.pod_count_with_leader = children_pods - min_pod_diff
            slice_with_leader = slice_capacity - min_slice_diff
        else:
            domain.pod_count_with_leader = 0
        domain.leader_count = leader_count
        domain.affinity_score = affinity
        if level == slice_level:
            slice_capacity = domain.pod_count // slice_size
            slice_with_leader = domain.pod_count_with_leader // slice_size
        domain.slice_count = slice_capacity
        domain.slice_count_with_leader = slice_with_leader

    # -- greedy placement --------------------------------------------------------------

    def prioritize_leader_domain(self, domains: list[Domain], count: int, leader_count: int,
                                 slice_size: int, slices: bool) -> list[Domain]:
        """Move first the first leader-capable domain whose leader penalty still
        leaves room for every pod (or slice)."""
        if leader_count == 0 or len(domains) < 2:
            return domains
        required = count // slice_size if slices else count
        available = sum(d.slice_count if slices else d.pod_count for d in domains)
        for i, d in enumerate(domains):
            if d.leader_count < leader_count:
                continue
            penalty = (d.slice_count - d.slice_count_with_leader if slices
                       else d.pod_count - d.pod_count_with_leader)
            if available - penalty < required:
                continue
            if i == 0:
                return domains
            return [d, *domains[:i], *domains[i + 1:]]
        return domains

    def _consume_with_leaders(self, domain: Domain, remaining_domains: list[Domain],
                              remaining: list[int], unconstrained: bool, slice_size: int,
                              slices: bool) -> tuple[Domain, bool]:
        # remaining = [primary (pods or slices), leaders]
        def with_leader(d: Domain) -> int:
            return d.slice_count_with_leader if slices else d.pod_count_with_leader

        if (not self.least_free_capacity(unconstrained) and with_leader(domain) >= remaining[0]
                and domain.leader_count >= remaining[1]):
            # the last domain: the tightest that holds the rest
            domain = (self.best_fit_domain_for_slices(remaining_domains, remaining[0], remaining[1])
                      if slices else
                      self.best_fit_domain(remaining_domains, remaining[0], remaining[1]))
        have = with_leader(domain)
        if have >= remaining[0] and domain.leader_count >= remaining[1]:
            if slices:
                domain.slice_count = remaining[0]
            domain.leader_count = remaining[1]
            domain.pod_count = remaining[0] * slice_size
            return domain, True
        have = min(have, remaining[0])
        if slices:
            domain.slice_count_with_leader = have
        else:
            domain.pod_count_with_leader = have
        domain.leader_count = min(domain.leader_count, remaining[1])
        if slices:
            domain.slice_count = have
        domain.pod_count = have * slice_size
        remaining[1] -= domain.leader_count
        remaining[0] -= have
        return domain, False

    def update_counts_to_minimum(self, domains: list[Domain], count: int, leader_count: int,
                                 slice_size: int, unconstrained: bool, slices: bool
                                 ) -> list[Domain] | None:
        """Take domains in order until ``count`` pods (``count // slice_size`` slices
        with ``slices``) and ``leader_count`` leaders are placed, setting each taken
        domain's counts to what it holds (Kueue's ``updateCountsToMinimumGeneric``).
        ``None`` when they do not hold it all (Kueue logs "code assumptions violated")."""
        domains = self.prioritize_leader_domain(domains, count, leader_count, slice_size, slices)
        result: list[Domain] = []
        remaining = [count // slice_size if slices else count, leader_count]
        best_fit = not self.least_free_capacity(unconstrained)
        for i, dom in enumerate(domains):
            if remaining[1] > 0:
                taken, done = self._consume_with_leaders(dom, domains[i:], remaining,
                                                         unconstrained, slice_size, slices)
                result.append(taken)
                if done:
                    return result
                continue
            if slices:
                if best_fit and dom.slice_count >= remaining[0]:
                    dom = self.best_fit_domain_for_slices(domains[i:], remaining[0], 0)
                dom.leader_count = 0
                if dom.slice_count >= remaining[0]:
                    dom.pod_count = remaining[0] * slice_size
                    dom.slice_count = remaining[0]
                    result.append(dom)
                    return result
                dom.pod_count = dom.slice_count * slice_size
                remaining[0] -= dom.slice_count
                result.append(dom)
                continue
            if best_fit and dom.pod_count >= remaining[0]:
                dom = self.best_fit_domain(domains[i:], remaining[0], 0)
            dom.leader_count = 0
            if dom.pod_count >= remaining[0]:
                dom.pod_count = remaining[0]
                result.append(dom)
                return result
            remaining[0] -= dom.pod_count
            result.append(dom)
        LOG.error("code assumptions violated: unexpected remainingCount remainingCount=%d "
                  "remainingLeaderCount=%d count=%d leaderCount=%d sliceSize=%d "
                  "unconstrained=%s topologyName=%s domainCount=%d leafCount=%d",
                  remaining[0], remaining[1], count, leader_count, slice_size, unconstrained,
                  self.topology_name, len(domains), self.leaf_count())
        # the leaves scale with the cluster: only at high verbosity, as Kueue's V(6)
        if LOG.isEnabledFor(logging.DEBUG):
            LOG.debug("TAS flavor snapshot leaf domains topologyName=%s leafDomains=%s",
                      self.topology_name, self.leaf_domain_ids())
        return None
