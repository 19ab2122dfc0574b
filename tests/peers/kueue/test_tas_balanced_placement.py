"""Kueue's TAS balanced-placement tables, ported case by case.

Source: kubernetes-sigs/kueue at ff69552e79ad21652c36caa97038382e55625cf7,
``pkg/cache/scheduler/tas_balanced_placement_test.go``, every Test function; one
pytest case per upstream case, ids = ``<TestFunction>/<upstream case name>``. They run
against ``dralab.queueing.kueue.tas_balanced`` (Kueue's ``TASBalancedPlacement``) on a
``TASFlavorSnapshot`` whose domains carry the case's counts, as upstream's
``addDomainWithState``.
"""

from __future__ import annotations

from functools import cmp_to_key

import pytest

from dralab.queueing.kueue.tas import TASFlavorSnapshot
from dralab.queueing.kueue.tas_balanced import (
    compare_domain_capacity_and_entropy,
    find_best_domains_for_balanced_placement,
    place_slices_on_domains_balanced,
    prune_domains_below_threshold,
    select_optimal_domain_set_to_fit,
)
from dralab.queueing.kueue.tas_domains import Domain

# (podCount, sliceCount, podCountWithLeader, sliceCountWithLeader, leaderCount)
State = tuple[int, int, int, int, int]


def _snapshot(levels: list[str] | None = None) -> TASFlavorSnapshot:
    return TASFlavorSnapshot("dummy", levels or [])


def _d(did: str, values: tuple[str, ...] = (), state: State = (0, 0, 0, 0, 0),
       children: list[Domain] | None = None, affinity: int = 0) -> Domain:
    d = Domain(did, values)
    (d.pod_count, d.slice_count, d.pod_count_with_leader, d.slice_count_with_leader,
     d.leader_count) = state
    d.affinity_score = affinity
    for c in children or []:
        c.parent = d
        d.children.append(c)
    return d


def _state(d: Domain) -> State:
    return (d.pod_count, d.slice_count, d.pod_count_with_leader, d.slice_count_with_leader,
            d.leader_count)


# -- TestSelectOptimalDomainSetToFit ------------------------------------------------------

def _optimal_domains() -> list[Domain]:
    return [_d("d1", ("d1",), (9, 9, 8, 8, 1)), _d("d2", ("d2",), (6, 6, 6, 6, 0)),
            _d("d3", ("d3",), (4, 4, 3, 3, 1)), _d("d4", ("d4",), (2, 2, 2, 2, 0))]


SELECT_OPTIMAL = {
    "no fit": (22, 0, []),
    "simple fit one domain": (5, 1, ["d1"]),
    "perfect fit with two domains": (9, 1, ["d2", "d3"]),
    "perfect fit with two domains 2": (10, 1, ["d1", "d4"]),
    "best fit, single domain": (5, 0, ["d2"]),
}


@pytest.mark.parametrize("name", list(SELECT_OPTIMAL),
                         ids=[f"TestSelectOptimalDomainSetToFit/{n}" for n in SELECT_OPTIMAL])
def test_select_optimal_domain_set_to_fit(name: str) -> None:
    workers, leaders, want = SELECT_OPTIMAL[name]
    got = select_optimal_domain_set_to_fit(_snapshot(), _optimal_domains(), workers, leaders,
                                           1, True)
    assert sorted(d.id for d in got or []) == want


# -- TestSelectOptimalDomainSetToFitStableTieBreak --------------------------------------------

_EQUAL: State = (3, 3, 3, 3, 0)


@pytest.mark.parametrize("by_entropy", [False, True],
                         ids=["TestSelectOptimalDomainSetToFitStableTieBreak/balanced selection",
                              "TestSelectOptimalDomainSetToFitStableTieBreak/entropy-prioritized "
                              "selection"])
def test_select_optimal_domain_set_to_fit_stable_tie_break(by_entropy: bool) -> None:
    domains = [_d("leaf-a", ("block-b", "host-a"), _EQUAL),
               _d("leaf-m", ("block-b", "host-m"), _EQUAL),
               _d("leaf-z", ("block-a", "host-z"), _EQUAL),
               _d("leaf-zz", ("block-a", "host-zz"), _EQUAL)]
    got = select_optimal_domain_set_to_fit(_snapshot(), domains, 1, 0, 1, by_entropy)
    assert [d.id for d in got or []] == ["leaf-z"]


# -- TestCompareDomainCapacityAndEntropy ------------------------------------------------------

def _pods(*counts: int) -> list[Domain]:
    return [_d("", (), (n, 0, 0, 0, 0)) for n in counts]


def _tie_domains() -> list[Domain]:
    leader: State = (0, 0, 0, 5, 1)
    return [_d("leaf-a", ("block-b", "host-a"), leader, _pods(2, 2)),
            _d("leaf-m", ("block-b", "host-m"), leader, _pods(2, 2)),
            _d("leaf-z", ("block-a", "host-z"), leader, _pods(2, 2))]


def _capacity_domains() -> list[Domain]:
    return [_d("lower-leader", ("a",), (0, 0, 0, 100, 0), _pods(50, 50)),
            _d("lower-capacity", ("b",), (0, 0, 0, 4, 1), _pods(2, 2)),
            _d("low-entropy", ("c",), (0, 0, 0, 5, 1), _pods(4, 0)),
            _d("high-entropy", ("d",), (0, 0, 0, 5, 1), _pods(2, 2))]


COMPARE_ENTROPY = {
    "tie-breaking on level values when capacity and entropy are equal": (
        _tie_domains, ["leaf-z", "leaf-a", "leaf-m"]),
    "capacity overrides entropy, and higher entropy overrides level values": (
        _capacity_domains, ["high-entropy", "low-entropy", "lower-capacity", "lower-leader"]),
}


@pytest.mark.parametrize("name", list(COMPARE_ENTROPY),
                         ids=[f"TestCompareDomainCapacityAndEntropy/{n}" for n in COMPARE_ENTROPY])
def test_compare_domain_capacity_and_entropy(name: str) -> None:
    build, want = COMPARE_ENTROPY[name]
    got = sorted(build(), key=cmp_to_key(compare_domain_capacity_and_entropy))
    assert [d.id for d in got] == want


# -- TestPlaceSlicesOnDomainsBalanced ----------------------------------------------------------

def _balanced_domains(n: int) -> list[Domain]:
    sizes = {"d1": 18, "d2": 18, "d3": 18, "d4": 10, "d5": 2}
    return [_d(did, (did,), (size, size, size, size, 0))
            for did, size in list(sizes.items())[:n]]


def _even(n: int) -> State:
    return (n, n, n, n, 0)


PLACE_BALANCED = {
    "simple balanced placement on two domains": (3, 20, 0, 1, 10,
                                                 {"d1": _even(10), "d2": _even(10)}),
    "simple placement on three domains": (3, 40, 0, 1, 13,
                                          {"d1": _even(14), "d2": _even(13), "d3": _even(13)}),
    "find smallest domain that fits": (5, 2, 0, 1, 2, {"d5": _even(2)}),
    "correctly select domains": (5, 25, 0, 1, 10, {"d1": _even(15), "d4": _even(10)}),
}


@pytest.mark.parametrize("name", list(PLACE_BALANCED),
                         ids=[f"TestPlaceSlicesOnDomainsBalanced/{n}" for n in PLACE_BALANCED])
def test_place_slices_on_domains_balanced(name: str) -> None:
    n, slices, leaders, size, threshold, want = PLACE_BALANCED[name]
    got, _ = place_slices_on_domains_balanced(_snapshot(), _balanced_domains(n), slices, leaders,
                                              size, threshold)
    assert {d.id: _state(d) for d in got or []} == want


def test_place_slices_on_domains_balanced_stable_tie_break() -> None:
    """TestPlaceSlicesOnDomainsBalancedStableTieBreak"""
    domains = [_d("leaf-a", ("block-b", "host-a"), _EQUAL),
               _d("leaf-z", ("block-a", "host-z"), _EQUAL)]
    got, reason = place_slices_on_domains_balanced(_snapshot(), domains, 1, 0, 1, 1)
    assert reason == ""
    assert [d.id for d in got or []] == ["leaf-z"]


# -- TestPruneDomainsBelowThreshold ----------------------------------------------------------------

def test_prune_domains_below_threshold_keeps_worker_only_domain() -> None:
    """TestPruneDomainsBelowThreshold/keeps worker only domain"""
    leader_leaf = _d("leader-leaf", (), (6, 6, 5, 5, 1))
    leader_domain = _d("leader-domain", (), (6, 6, 5, 5, 1), [leader_leaf])
    worker_leaf = _d("worker-only-leaf", (), (5, 5, 4, 4, 1))
    worker_domain = _d("worker-only-domain", (), (5, 5, 4, 4, 1), [worker_leaf])
    parent = _d("parent-domain", (), (0, 0, 0, 0, 0), [leader_domain, worker_domain])
    prune_domains_below_threshold(_snapshot(), [parent], 5, 1, 2, 0, True)
    assert {"leaderDomain": _state(leader_domain), "parentDomain": _state(parent),
            "workerOnlyDomain": _state(worker_domain), "workerOnlyLeaf": _state(worker_leaf)} == {
        "leaderDomain": (6, 6, 5, 5, 1),
        "parentDomain": (11, 11, 10, 10, 1),
        "workerOnlyDomain": (5, 5, 0, 0, 0),
        "workerOnlyLeaf": (5, 5, 0, 0, 0),
    }


def test_prune_domains_below_threshold_preserves_affinity_score() -> None:
    """TestPruneDomainsBelowThresholdPreservesAffinityScore"""
    pruned = _d("pruned-leaf", (), (0, 1, 0, 0, 0), affinity=100)
    kept = _d("kept-leaf", (), (4, 4, 4, 0, 0), affinity=10)
    parent = _d("parent", (), (0, 0, 0, 0, 0), [pruned, kept])
    prune_domains_below_threshold(_snapshot(), [parent], 2, 1, 1, 0, False)
    assert pruned.affinity_score == 100
    assert parent.affinity_score == 110


# -- TestFindBestDomainsForBalancedPlacement ---------------------------------------------

# (id, parent id, level values, state)
Spec = tuple[str, str, tuple[str, ...], State]
FIND_BEST: dict[str, tuple[list[Spec], tuple[int, int, int, int, int], int, int]] = {
    "falls back after pruning": (
        [("b1", "", ("b1",), (0, 0, 0, 0, 0)), ("b2", "", ("b2",), (0, 0, 0, 0, 0)),
         ("b1/r1", "b1", ("b1", "r1"), (3, 3, 2, 2, 1)),
         ("b2/r1", "b2", ("b2", "r1"), (2, 2, 1, 1, 1)),
         ("b2/r2", "b2", ("b2", "r2"), (4, 4, 2, 2, 1))],
        # count, sliceSize, leaderCount, requestedLevelIdx, sliceLevelIdx
        (8, 1, 1, 0, 1), 1, 2),
    "rejects after fallback": (
        [("b1", "", ("b1",), (0, 0, 0, 0, 0)), ("b2", "", ("b2",), (0, 0, 0, 0, 0)),
         ("b3", "", ("b3",), (0, 0, 0, 0, 0)),
         ("b1/r1", "b1", ("b1", "r1"), (2, 2, 1, 1, 1)),
         ("b2/r1", "b2", ("b2", "r1"), (3, 3, 1, 1, 1)),
         ("b2/r2", "b2", ("b2", "r2"), (4, 4, 2, 2, 1)),
         ("b3/r1", "b3", ("b3", "r1"), (4, 4, 3, 3, 1))],
        (12, 1, 1, 0, 1), 0, 0),
}


@pytest.mark.parametrize("name", list(FIND_BEST),
                         ids=[f"TestFindBestDomainsForBalancedPlacement/{n}" for n in FIND_BEST])
def test_find_best_domains_for_balanced_placement(name: str) -> None:
    specs, params, want_threshold, want_count = FIND_BEST[name]
    s = _snapshot(["block", "rack"])
    by_id: dict[str, Domain] = {}
    for did, parent_id, values, state in specs:
        d = _d(did, values, state)
        if parent_id:
            parent = by_id[parent_id]
            d.parent = parent
            parent.children.append(d)
            s.domains_per_level[1][did] = d
        else:
            s.domains_per_level[0][did] = d
        by_id[did] = d
    count, slice_size, leaders, requested, slice_level = params
    domains, threshold = find_best_domains_for_balanced_placement(
        s, s.domains_per_level, count, slice_size, leaders, requested, slice_level)
    assert threshold == want_threshold
    assert len(domains) == want_count
