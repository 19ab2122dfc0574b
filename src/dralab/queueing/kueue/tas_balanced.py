"""Kueue's ``TASBalancedPlacement`` (alpha, off by default): spread a preferred
request evenly over as few domains as hold it.

Upstream: ``pkg/cache/scheduler/tas_balanced_placement.go`` at ff69552e. Where
BestFit fills the fullest domains first and leaves the last one short, balanced
placement first asks how few domains one level below the requested one a greedy
pass needs, takes the *threshold* -- the largest number of slices every chosen
domain can still be given (``sliceCount // domains``, bounded by the last
domains' capacity) -- drops domains that cannot take that many, then picks the set
of domains of that size with the least spare capacity (a small dynamic
programme) and gives each the threshold plus what is left over, leaders first.

A threshold of 0 means "no balanced placement"; then, and whenever a step
reports a reason, the caller falls back to BestFit as upstream does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from functools import cmp_to_key

from dralab.queueing.kueue.tas_domains import Domain, DomainSorter, compare_level_values

__all__ = [
    "apply_balanced_placement",
    "balance_threshold_value",
    "calculate_domains_entropy",
    "clone_domains",
    "compare_domain_capacity_and_entropy",
    "evaluate_greedy_assignment",
    "find_best_domains_for_balanced_placement",
    "place_slices_on_domains_balanced",
    "prune_domains_below_threshold",
    "select_optimal_domain_set_to_fit",
]

_MIN_INT32 = -(2**31)


def evaluate_greedy_assignment(s: DomainSorter, domains: Sequence[Domain], slice_count: int,
                               leader_count: int
                               ) -> tuple[bool, int, Domain | None, Domain | None]:
    """Whether a BestFit-ordered greedy pass holds the request, how many domains it
    takes, and the last domain taken with a leader and without one."""
    selected = 0
    last_with_leader: Domain | None = None
    last: Domain | None = None
    remaining_slices, remaining_leaders = slice_count, leader_count
    if leader_count > 0:
        with_leader = s.sorted_domains_with_leader(domains, False)
        idx = 0
        while (remaining_leaders > 0 and idx < len(with_leader)
               and with_leader[idx].leader_count > 0):
            d = with_leader[idx]
            selected += 1
            last_with_leader = d
            remaining_leaders -= d.leader_count
            remaining_slices -= d.slice_count_with_leader
            idx += 1
        without_leader = s.sorted_domains(with_leader[idx:], False)
    else:
        without_leader = s.sorted_domains(domains, False)
    if remaining_leaders > 0:
        return False, 0, None, None
    for d in without_leader:
        if remaining_slices <= 0 or d.slice_count <= 0:
            break
        selected += 1
        last = d
        remaining_slices -= d.slice_count
    if remaining_slices > 0:
        return False, 0, None, None
    return True, selected, last_with_leader, last


def balance_threshold_value(slice_count: int, selected: int, last_with_leader: Domain | None,
                            last: Domain | None) -> int:
    """The most slices every one of ``selected`` domains can be given."""
    threshold = slice_count // selected
    if last_with_leader is not None:
        threshold = min(threshold, last_with_leader.slice_count_with_leader)
    if last is not None:
        threshold = min(threshold, last.slice_count)
    return threshold


def calculate_domains_entropy(domains: Sequence[Domain]) -> float:
    """Shannon entropy (bits) of how the domains' pods are spread."""
    total = sum(d.pod_count for d in domains)
    if total == 0:
        return 0.0
    entropy = 0.0
    for d in domains:
        if d.pod_count > 0:
            share = d.pod_count / total
            entropy -= share * math.log2(share)
    return entropy


def compare_domain_capacity_and_entropy(a: Domain, b: Domain) -> int:
    """Leaders, then slices with a leader, descending; then the more evenly filled
    children first; then level values."""
    if a.leader_count != b.leader_count:
        return b.leader_count - a.leader_count
    if a.slice_count_with_leader != b.slice_count_with_leader:
        return b.slice_count_with_leader - a.slice_count_with_leader
    a_entropy = calculate_domains_entropy(a.children)
    b_entropy = calculate_domains_entropy(b.children)
    if b_entropy > a_entropy:
        return 1
    if b_entropy < a_entropy:
        return -1
    return compare_level_values(a, b)


def select_optimal_domain_set_to_fit(s: DomainSorter, domains: Sequence[Domain], slice_count: int,
                                     leader_count: int, slice_size: int,
                                     prioritize_by_entropy: bool) -> list[Domain] | None:
    """Of the sets of as many domains as the greedy pass needs, the one that holds
    the request with the least left over (``None`` when the greedy pass fails)."""
    fit, optimal, _, _ = evaluate_greedy_assignment(s, domains, slice_count, leader_count)
    if not fit:
        return None
    key = compare_domain_capacity_and_entropy if prioritize_by_entropy else compare_level_values
    ordered = sorted(domains, key=cmp_to_key(key))
    # placements[i][leaders left][pods left] = the first set of i domains found
    placements: list[dict[int, dict[int, list[Domain]]]] = [{} for _ in range(optimal + 1)]
    placements[0][leader_count] = {slice_count * slice_size: []}
    for d in ordered:
        for i in range(optimal, 0, -1):
            before = placements[i - 1]
            for leaders_before in sorted(before):
                for pods_before in sorted(before[leaders_before]):
                    if leaders_before <= 0 and pods_before <= 0:
                        continue
                    taken = [*before[leaders_before][pods_before], d]
                    if leaders_before > 0 and d.leader_count > 0:
                        slot = placements[i].setdefault(leaders_before - d.leader_count, {})
                        slot.setdefault(pods_before - d.pod_count_with_leader, taken)
                    if d.slice_count > 0:
                        slot = placements[i].setdefault(leaders_before, {})
                        slot.setdefault(pods_before - d.pod_count, taken)
    best_left, best = _MIN_INT32, None
    for left, placement in sorted(placements[optimal].get(0, {}).items()):
        if best_left < left <= 0:
            best_left, best = left, placement
    return best


def place_slices_on_domains_balanced(s: DomainSorter, domains: Sequence[Domain], slice_count: int,
                                     leader_count: int, slice_size: int, threshold: int
                                     ) -> tuple[list[Domain] | None, str]:
    """Give every chosen domain ``threshold`` slices and the extra slices to the
    first ones, leaders first."""
    chosen = select_optimal_domain_set_to_fit(s, domains, slice_count, leader_count, slice_size,
                                              False)
    if chosen is None:
        return None, "TAS Balanced Placement: Cannot find optimal domain set to fit the request"
    if slice_count < len(chosen) * threshold:
        return None, "TAS Balanced Placement: Not enough slices to meet the threshold"
    chosen = s.sorted_domains_with_leader(chosen, False)
    extra_left = slice_count - len(chosen) * threshold
    leaders_left = leader_count
    for d in chosen:
        if leaders_left > 0:
            extra = min(d.slice_count_with_leader - threshold, extra_left)
            d.leader_count = 1
            leaders_left -= 1
        elif extra_left > 0:
            extra = min(d.slice_count - threshold, extra_left)
            d.leader_count = 0
        else:
            d.leader_count = 0
            extra = 0
        d.slice_count = threshold + extra
        d.pod_count = d.slice_count * slice_size
        d.slice_count_with_leader = d.slice_count
        d.pod_count_with_leader = d.pod_count - d.leader_count
        extra_left -= extra
    if extra_left > 0 or leaders_left > 0:
        return None, "TAS Balanced Placement: Not all slices or leaders could be placed"
    return chosen, ""


# -- copies and pruning ---------------------------------------------------------------

def _clone(d: Domain, parent: Domain | None) -> Domain:
    copy = replace(d, parent=parent, children=[])
    copy.children = [_clone(c, copy) for c in d.children]
    return copy


def clone_domains(domains: Sequence[Domain]) -> list[Domain]:
    """Deep copies of the subtrees with their own counts, so that pruning them for
    one candidate leaves the shared tree as the fallback needs it."""
    return [_clone(d, None) for d in domains]


def _clear_state(d: Domain) -> None:
    affinity = d.affinity_score
    d.clear_counts()
    d.affinity_score = affinity
    for c in d.children:
        _clear_state(c)


def _clear_leader_capacity(d: Domain) -> None:
    d.pod_count_with_leader = d.slice_count_with_leader = d.leader_count = 0
    for c in d.children:
        _clear_leader_capacity(c)


def _prune_node(d: Domain, threshold: int, leader_required: bool) -> None:
    if d.slice_count < threshold:
        _clear_state(d)
        return
    # still usable for workers, but not as the leader's host at this threshold
    if leader_required and d.leader_count > 0 and d.slice_count_with_leader < threshold:
        _clear_leader_capacity(d)


def prune_domains_below_threshold(s: DomainSorter, domains: Sequence[Domain], threshold: int,
                                  slice_size: int, slice_level: int, level: int,
                                  leader_required: bool) -> None:
    """Empty the children (and then the domains) that cannot take ``threshold``
    slices, recounting each domain from what is left of its children."""
    for d in domains:
        for c in d.children:
            _prune_node(c, threshold, leader_required)
    for d in domains:
        s.fill_in_counts_helper(d, slice_size, slice_level, level, None, leader_required)
        _prune_node(d, threshold, leader_required)


def _lower_level_domains(domains: Sequence[Domain]) -> list[Domain]:
    return [c for d in domains for c in d.children]


# -- the entry points of findTopologyAssignment -------------------------------------------

def find_best_domains_for_balanced_placement(
        s: DomainSorter, domains_per_level: Sequence[dict[str, Domain]], count: int,
        slice_size: int, leader_count: int, requested_level: int, slice_level: int,
) -> tuple[list[Domain], int]:
    """Per domain one level above the requested one (or the whole top level), the
    threshold its children allow; the best (highest threshold, then fewest
    domains) wins. A threshold of 0: balanced placement does not apply."""
    slice_count = count // slice_size
    if requested_level == 0:
        groups = [list(domains_per_level[0].values())]
    else:
        above = sorted(domains_per_level[requested_level - 1].values(),
                       key=cmp_to_key(compare_level_values))
        groups = [d.children for d in above]
    best_threshold = best_count = 0
    best_fit: list[Domain] = []
    for siblings in groups:
        candidates = clone_domains(siblings)
        lower = (_lower_level_domains(candidates) if requested_level < slice_level
                 else candidates)
        fits, selected, last_with_leader, last = evaluate_greedy_assignment(
            s, lower, slice_count, leader_count)
        if not fits:
            continue
        threshold = balance_threshold_value(slice_count, selected, last_with_leader, last)
        with_leader_reserved = threshold
        if leader_count > 0 and last is not None:
            with_leader_reserved = min(threshold, last.slice_count_with_leader)
        if threshold < best_threshold:
            continue
        prune_domains_below_threshold(s, candidates, threshold, slice_size, slice_level,
                                      requested_level, leader_count > 0)
        fits, on_level, _, _ = evaluate_greedy_assignment(s, candidates, slice_count,
                                                          leader_count)
        if not fits and with_leader_reserved < threshold:
            # retry with a lower threshold that keeps room for the leader
            if with_leader_reserved <= 0 or with_leader_reserved < best_threshold:
                continue
            threshold = with_leader_reserved
            candidates = clone_domains(siblings)
            prune_domains_below_threshold(s, candidates, threshold, slice_size, slice_level,
                                          requested_level, leader_count > 0)
            fits, on_level, _, _ = evaluate_greedy_assignment(s, candidates, slice_count,
                                                              leader_count)
        if not fits:
            continue
        if threshold > best_threshold or (threshold == best_threshold and on_level < best_count):
            best_threshold, best_count, best_fit = threshold, on_level, candidates
    return best_fit, best_threshold


def apply_balanced_placement(s: DomainSorter, count: int, slice_size: int, leader_count: int,
                             requested_level: int, slice_level: int, threshold: int,
                             fit: Sequence[Domain]) -> tuple[list[Domain], int, str]:
    """The domains the balanced placement gives slices to, the level they are on,
    or the reason it failed (then the caller uses BestFit)."""
    slice_count = count // slice_size
    current = list(fit)
    if requested_level < slice_level:
        chosen = select_optimal_domain_set_to_fit(s, current, slice_count, leader_count,
                                                  slice_size, True)
        if chosen is None:
            return [], 0, ("TAS Balanced Placement: Cannot find optimal domain set to fit "
                           "the request")
        current = _lower_level_domains(chosen)
        fit_level = requested_level + 1
    else:
        fit_level = requested_level
    placed, reason = place_slices_on_domains_balanced(s, current, slice_count, leader_count,
                                                      slice_size, threshold)
    if reason or placed is None:
        return [], 0, reason
    return placed, fit_level, ""
