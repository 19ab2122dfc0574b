"""The cohort tree: parent cycles are a configuration error that makes the
ClusterQueues in and under them inactive (Kueue's ``HasCycle``), and deep chains
are walked without recursion.

Upstream: kubernetes-sigs/kueue @ ff69552e79ad21652c36caa97038382e55625cf7,
``pkg/cache/hierarchy/manager_test.go`` ``TestCycles`` (cases "no cycles",
"self-cycle", "cycle"), ``pkg/cache/scheduler/snapshot.go`` ``skipInactiveCQReason``
and ``pkg/scheduler/scheduler.go`` ("ClusterQueue %s is inactive").
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralab.queueing.hierarchy import ancestors, cohort_cycle, cycle_cohorts, cycle_reason
from dralab.queueing.kueue import KueuePolicy, admit_until_stable
from dralab.queueing.kueue.quota import QuotaTree
from dralab.queueing.model import CohortSpec, QueueingState

from .builders import cq, group, quota, state, wl


def cohorts(*edges: tuple[str, str | None]) -> dict[str, CohortSpec]:
    return {name: CohortSpec(name, parent) for name, parent in edges}


# Ported from TestCycles: each case's cohorts and which of them HasCycle.
CYCLE_CASES = {
    "no cycles": (cohorts(("root", None), ("left", "root"), ("right", "root")), set()),
    "self-cycle": (cohorts(("root", "root")), {"root"}),
    "cycle": (cohorts(("cohort-a", "cohort-b"), ("cohort-b", "cohort-a")),
              {"cohort-a", "cohort-b"}),
    # dralab's: a cohort below a cycle has one too (its walk never ends).
    "below a cycle": (cohorts(("a", "b"), ("b", "a"), ("leaf", "a"), ("free", None)),
                      {"a", "b", "leaf"}),
    # A parent that has no Cohort object is a root (Kueue's implicit cohort).
    "missing parent": (cohorts(("a", "ghost")), set()),
}


@pytest.mark.parametrize("case", sorted(CYCLE_CASES))
def test_cycle_cohorts_table(case: str) -> None:
    specs, want = CYCLE_CASES[case]
    assert cycle_cohorts(specs) == want


def test_cohort_cycle_names_the_ring_from_where_the_walk_meets_it() -> None:
    specs = cohorts(("a", "b"), ("b", "c"), ("c", "b"), ("root", None))
    assert cohort_cycle(specs, "a") == ("b", "c")
    assert cohort_cycle(specs, "c") == ("c", "b")
    assert cohort_cycle(specs, "root") == ()
    assert ancestors(specs, "a") == ["a", "b", "c"]
    assert ancestors(specs, None) == []


def cycle_state() -> QueueingState:
    cpu = group(("cpu",), ("f", {"cpu": quota(10)}))
    return state(
        cq("in-cycle", cpu, cohort="a"), cq("under-cycle", cpu, cohort="leaf"),
        cq("healthy", cpu, cohort="root"),
        workloads=(wl("ns/in", "in-cycle", 0, cpu=1), wl("ns/under", "under-cycle", 1, cpu=1),
                   wl("ns/ok", "healthy", 2, cpu=1)),
        cohorts=tuple(cohorts(("a", "b"), ("b", "a"), ("leaf", "b"),
                              ("root", None)).values()))


def test_queues_in_and_under_a_cycle_admit_nothing_and_say_inactive() -> None:
    st = cycle_state()
    policy = KueuePolicy()
    admit_until_stable(policy, st, 0.0)
    assert set(st.admitted) == {"ns/ok"}
    assert policy.pending_messages == {"ns/in": "ClusterQueue in-cycle is inactive",
                                       "ns/under": "ClusterQueue under-cycle is inactive"}


def test_cycle_reason_text() -> None:
    specs = cohorts(*((f"c{i}", f"c{(i + 1) % 6}") for i in range(6)), ("leaf", "c2"))
    assert cycle_reason(specs, "q", "c0") == (
        "ClusterQueue q is inactive (HasCycle): its cohort c0 is in a cycle of 6 cohort(s) "
        "through spec.parentName (c0 -> c1 -> c2 -> c3 -> ... (2 more) -> c0); Kueue admits "
        "nothing under the cycle until it is removed")
    assert "its cohort leaf is under a cycle of 6 cohort(s)" in cycle_reason(specs, "q", "leaf")


def test_admitted_workloads_of_a_cycle_queue_keep_their_quota() -> None:
    # Kueue skips the queue in its snapshot but evicts nothing that holds quota there.
    st = cycle_state()
    st.workloads["ns/held"] = wl("ns/held", "in-cycle", -1, cpu=9)
    first = KueuePolicy()
    st.cohorts.pop("b")  # no cycle yet: ns/held gets admitted
    st.cohorts["a"] = CohortSpec("a", None)
    admit_until_stable(first, st, 0.0)
    assert {"ns/held", "ns/in"} <= set(st.admitted)
    st.cohorts.update(cohorts(("a", "b"), ("b", "a")))
    st.workloads["ns/late"] = wl("ns/late", "in-cycle", 5, cpu=0)
    policy = KueuePolicy()
    admit_until_stable(policy, st, 1.0)
    assert {"ns/held", "ns/in"} <= set(st.admitted)
    assert policy.pending_messages["ns/late"] == "ClusterQueue in-cycle is inactive"


# -- property: random forests with random cycles ------------------------------------

def _reference_cyclic(specs: dict[str, CohortSpec]) -> set[str]:
    """By brute force: a cohort has a cycle when n+1 parent steps do not reach a root."""
    out = set()
    for name in specs:
        current: str | None = name
        for _ in range(len(specs) + 1):
            if current is None or current not in specs:
                break
            current = specs[current].parent
        else:
            out.add(name)
    return out


@st.composite
def forests(draw: st.DrawFn) -> tuple[dict[str, CohortSpec], dict[str, str]]:
    n = draw(st.integers(1, 12))
    names = [f"c{i}" for i in range(n)]
    specs = {}
    for name in names:
        # A parent among all cohorts (so cycles appear), an absent one, or none.
        parent = draw(st.one_of(st.none(), st.sampled_from(names), st.just("ghost")))
        specs[name] = CohortSpec(name, parent)
    queues = {f"q{i}": draw(st.sampled_from([*names, "ghost"]))
              for i in range(draw(st.integers(1, 6)))}
    return specs, queues


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests())
def test_random_forests_mark_exactly_the_queues_under_cycles(
        forest: tuple[dict[str, CohortSpec], dict[str, str]]) -> None:
    specs, queue_cohorts = forest
    cyclic = _reference_cyclic(specs)
    assert cycle_cohorts(specs) == cyclic
    cpu = group(("cpu",), ("f", {"cpu": quota(4, borrowing=2)}))
    queues = [cq(name, cpu, cohort=cohort) for name, cohort in sorted(queue_cohorts.items())]
    st_ = state(*queues, workloads=tuple(wl(f"ns/{q.name}", q.name, i, cpu=1)
                                         for i, q in enumerate(queues)),
                cohorts=tuple(specs.values()))
    want_inactive = {name for name, cohort in queue_cohorts.items() if cohort in cyclic}
    tree = QuotaTree(st_.cluster_queues, st_.cohorts)
    assert tree.cycle_queues == want_inactive
    for node in tree.cluster_queues.values():
        node.root()  # a forest: every walk up ends
    policy = KueuePolicy()
    admit_until_stable(policy, st_, 0.0)
    admitted_queues = {st_.admitted[k].cluster_queue for k in st_.admitted}
    assert admitted_queues == set(queue_cohorts) - want_inactive
    assert {k for k, m in policy.pending_messages.items() if m.endswith("is inactive")} == \
        {f"ns/{q}" for q in want_inactive}


# -- a 3,000-deep chain: correct and within a CPU-time budget --------------------------

def test_deep_chain_borrows_from_the_root_within_a_cpu_budget() -> None:
    depth = 3000
    specs = [CohortSpec(f"c{i}", f"c{i + 1}" if i + 1 < depth else None)
             for i in range(depth)]
    # Only the root has quota; the queue at the bottom borrows all of it through
    # the whole chain.
    root_quota = group(("cpu",), ("f", {"cpu": quota(8)}))
    specs[-1] = CohortSpec(specs[-1].name, None, (root_quota,))
    queue = cq("q", group(("cpu",), ("f", {"cpu": quota(0)})), cohort="c0")
    st_ = state(queue, workloads=(wl("ns/a", "q", 0, cpu=6), wl("ns/b", "q", 1, cpu=3)),
                cohorts=tuple(specs))
    start = time.process_time()
    policy = KueuePolicy()
    admit_until_stable(policy, st_, 0.0)
    spent = time.process_time() - start
    assert set(st_.admitted) == {"ns/a"}
    assert policy.pending_messages["ns/b"].startswith(
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
        "flavor f, 1 more needed")
    # Linear in the depth: about 0.05 CPU-s here; recursion or a quadratic walk
    # would either fail or take far longer.
    assert spent < 3.0, f"{spent:.2f} CPU-s for a {depth}-deep chain"
