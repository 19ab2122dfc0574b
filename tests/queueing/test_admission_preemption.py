"""Classic preemption (``site/content/en/docs/concepts/preemption.md``, "Classic
Preemption"; ``cluster_queue.md``, "Preemption")."""

from __future__ import annotations

from dralab.queueing.kueue import KueuePolicy, admit_until_stable
from dralab.queueing.model import Decision, PreemptionPolicy, QueueingState, WorkloadSpec

from .builders import cq, group, quota, state, wl


def then(st: QueueingState, policy: KueuePolicy, *late: WorkloadSpec) -> list[Decision]:
    for workload in late:
        st.workloads[workload.key] = workload
    return admit_until_stable(policy, st, 10.0)


def evicted(decisions: list[Decision]) -> list[tuple[str, str, str]]:
    return [(d.workload, d.by, d.reason) for d in decisions if d.preempted]


def solo(policy: PreemptionPolicy, *running: WorkloadSpec) -> tuple[KueuePolicy, QueueingState]:
    st = state(cq("q", group(("cpu",), ("default", {"cpu": quota(4)})), preemption=policy),
               workloads=running)
    engine = KueuePolicy()
    admit_until_stable(engine, st, 0.0)
    return engine, st


def test_within_cluster_queue_lower_priority() -> None:
    engine, st = solo(PreemptionPolicy(within_cluster_queue="LowerPriority"),
                      wl("ns/low", "q", 1, priority=1, cpu=2),
                      wl("ns/mid", "q", 2, priority=5, cpu=2))
    decisions = then(st, engine, wl("ns/high", "q", 3, priority=10, cpu=2))
    # The lowest priority goes first; one eviction is enough.
    assert evicted(decisions) == [("ns/low", "ns/high", "InClusterQueue")]
    assert set(st.admitted) == {"ns/mid", "ns/high"}
    assert "ns/low" in st.workloads and "ns/low" not in st.admitted


def test_within_cluster_queue_never_is_the_default() -> None:
    engine, st = solo(PreemptionPolicy(), wl("ns/low", "q", 1, priority=1, cpu=4))
    decisions = then(st, engine, wl("ns/high", "q", 3, priority=10, cpu=2))
    assert evicted(decisions) == []
    assert "2 more needed" in engine.pending_messages["ns/high"]


def test_lower_priority_does_not_preempt_equal_priority() -> None:
    engine, st = solo(PreemptionPolicy(within_cluster_queue="LowerPriority"),
                      wl("ns/old", "q", 1, priority=5, cpu=4))
    decisions = then(st, engine, wl("ns/new", "q", 3, priority=5, cpu=2))
    assert evicted(decisions) == []


def test_lower_or_newer_equal_priority() -> None:
    # An older workload of equal priority preempts a newer one, never the reverse.
    engine, st = solo(PreemptionPolicy(within_cluster_queue="LowerOrNewerEqualPriority"),
                      wl("ns/newer", "q", 5, priority=5, cpu=4))
    decisions = then(st, engine, wl("ns/older", "q", 1, priority=5, cpu=2))
    assert evicted(decisions) == [("ns/newer", "ns/older", "InClusterQueue")]
    decisions = then(st, engine)
    assert evicted(decisions) == []
    assert set(st.admitted) == {"ns/older"}


def test_most_recently_admitted_goes_first_among_equals() -> None:
    engine, st = solo(PreemptionPolicy(within_cluster_queue="LowerPriority"),
                      wl("ns/a", "q", 1, priority=1, cpu=2))
    st.workloads["ns/b"] = wl("ns/b", "q", 2, priority=1, cpu=2)
    admit_until_stable(engine, st, 5.0)   # b admitted later than a
    decisions = then(st, engine, wl("ns/high", "q", 3, priority=10, cpu=2))
    assert evicted(decisions) == [("ns/b", "ns/high", "InClusterQueue")]


def test_minimal_set_after_greedy() -> None:
    # Greedy order (lowest priority first) takes small, then big; big alone suffices,
    # so minimisation gives small back.
    engine, st = solo(PreemptionPolicy(within_cluster_queue="LowerPriority"),
                      wl("ns/small", "q", 1, priority=1, cpu=1),
                      wl("ns/big", "q", 2, priority=2, cpu=3))
    decisions = then(st, engine, wl("ns/high", "q", 3, priority=10, cpu=3))
    assert evicted(decisions) == [("ns/big", "ns/high", "InClusterQueue")]
    assert set(st.admitted) == {"ns/small", "ns/high"}


def cohort(preemption: PreemptionPolicy, b_nominal: int = 0) -> tuple[KueuePolicy, QueueingState]:
    """team-a owns 6 CPUs and is idle; team-b borrowed them all."""
    a = cq("team-a", group(("cpu",), ("default", {"cpu": quota(6)})), cohort="c",
           preemption=preemption)
    b = cq("team-b", group(("cpu",), ("default", {"cpu": quota(b_nominal)})), cohort="c")
    st = state(a, b, workloads=(wl("ns/b-low", "team-b", 1, priority=0, cpu=3),
                                wl("ns/b-high", "team-b", 2, priority=100, cpu=3)))
    engine = KueuePolicy()
    admit_until_stable(engine, st, 0.0)
    assert set(st.admitted) == {"ns/b-low", "ns/b-high"}
    return engine, st


def test_reclaim_within_cohort_never() -> None:
    engine, st = cohort(PreemptionPolicy())
    decisions = then(st, engine, wl("ns/a", "team-a", 3, priority=50, cpu=3))
    assert evicted(decisions) == []
    assert "3 more needed" in engine.pending_messages["ns/a"]


def test_reclaim_within_cohort_lower_priority() -> None:
    engine, st = cohort(PreemptionPolicy(reclaim_within_cohort="LowerPriority"))
    decisions = then(st, engine, wl("ns/a", "team-a", 3, priority=50, cpu=6))
    # Only b-low is below 50: not enough to fit 6, so nothing is evicted.
    assert evicted(decisions) == []
    decisions = then(st, engine, wl("ns/a2", "team-a", 4, priority=50, cpu=3))
    assert ("ns/b-low", "ns/a2", "InCohortReclamation") in evicted(decisions)


def test_reclaim_within_cohort_any() -> None:
    engine, st = cohort(PreemptionPolicy(reclaim_within_cohort="Any"))
    decisions = then(st, engine, wl("ns/a", "team-a", 3, priority=0, cpu=6))
    assert sorted(evicted(decisions)) == [("ns/b-high", "ns/a", "InCohortReclamation"),
                                          ("ns/b-low", "ns/a", "InCohortReclamation")]
    assert set(st.admitted) == {"ns/a"}


def test_reclaim_only_from_queues_that_borrow() -> None:
    # team-b now owns 6 too: it borrows nothing, so team-a cannot reclaim from it.
    engine, st = cohort(PreemptionPolicy(reclaim_within_cohort="Any"), b_nominal=6)
    st.workloads["ns/a-fill"] = wl("ns/a-fill", "team-a", 2, cpu=6)
    admit_until_stable(engine, st, 1.0)
    decisions = then(st, engine, wl("ns/a", "team-a", 3, priority=100, cpu=1))
    assert evicted(decisions) == []


def test_reclaim_does_not_apply_when_the_preemptor_would_borrow() -> None:
    engine, st = cohort(PreemptionPolicy(reclaim_within_cohort="Any"))
    decisions = then(st, engine, wl("ns/a", "team-a", 3, priority=100, cpu=7))
    assert evicted(decisions) == []


def borrow_cohort(threshold: int | None) -> tuple[KueuePolicy, QueueingState]:
    """team-a (4) wants to borrow; team-b (4) lends, team-c (0) borrowed team-b's 4."""
    policy = PreemptionPolicy(reclaim_within_cohort="Any", borrow_within_cohort="LowerPriority",
                              max_priority_threshold=threshold)
    a = cq("team-a", group(("cpu",), ("default", {"cpu": quota(4)})), cohort="c", preemption=policy)
    b = cq("team-b", group(("cpu",), ("default", {"cpu": quota(4)})), cohort="c")
    c = cq("team-c", group(("cpu",), ("default", {"cpu": quota(0)})), cohort="c")
    st = state(a, b, c, workloads=(wl("ns/c-low", "team-c", 1, priority=10, cpu=2),
                                   wl("ns/c-mid", "team-c", 2, priority=50, cpu=2)))
    engine = KueuePolicy()
    admit_until_stable(engine, st, 0.0)
    return engine, st


def test_borrow_within_cohort_with_threshold() -> None:
    # cluster_queue.md: with borrowWithinCohort LowerPriority, a workload that needs
    # to borrow preempts lower-priority workloads of other queues, but only those at
    # or below maxPriorityThreshold.
    engine, st = borrow_cohort(threshold=20)
    decisions = then(st, engine, wl("ns/a", "team-a", 3, priority=100, cpu=6))
    assert evicted(decisions) == [("ns/c-low", "ns/a", "InCohortReclaimWhileBorrowing")]
    assert "ns/a" in st.admitted
    decisions = then(st, engine, wl("ns/a2", "team-a", 4, priority=100, cpu=2))
    assert evicted(decisions) == []          # c-mid (50) is above the threshold


def test_borrow_within_cohort_without_threshold() -> None:
    engine, st = borrow_cohort(threshold=None)
    decisions = then(st, engine, wl("ns/a", "team-a", 3, priority=100, cpu=8))
    assert sorted(evicted(decisions)) == [("ns/c-low", "ns/a", "InCohortReclaimWhileBorrowing"),
                                          ("ns/c-mid", "ns/a", "InCohortReclaimWhileBorrowing")]


def test_other_queues_candidates_go_first() -> None:
    # Both an own lower-priority workload and a borrower's one could make room;
    # Kueue prefers the workload of the queue that borrows.
    policy = PreemptionPolicy(within_cluster_queue="LowerPriority", reclaim_within_cohort="Any")
    a = cq("team-a", group(("cpu",), ("default", {"cpu": quota(4)})), cohort="c", preemption=policy)
    b = cq("team-b", group(("cpu",), ("default", {"cpu": quota(0)})), cohort="c")
    st = state(a, b, workloads=(wl("ns/a-low", "team-a", 1, priority=0, cpu=2),
                                wl("ns/b-any", "team-b", 2, priority=90, cpu=2)))
    engine = KueuePolicy()
    admit_until_stable(engine, st, 0.0)
    decisions = then(st, engine, wl("ns/a-high", "team-a", 3, priority=100, cpu=2))
    assert evicted(decisions) == [("ns/b-any", "ns/a-high", "InCohortReclamation")]


def test_preempted_workload_is_pending_again_and_readmitted_when_room() -> None:
    engine, st = solo(PreemptionPolicy(within_cluster_queue="LowerPriority"),
                      wl("ns/low", "q", 1, priority=1, cpu=4))
    then(st, engine, wl("ns/high", "q", 3, priority=10, cpu=4))
    assert set(st.admitted) == {"ns/high"}
    assert "ns/low" in engine.pending_messages
    del st.admitted["ns/high"]
    del st.workloads["ns/high"]
    admit_until_stable(engine, st, 20.0)
    assert set(st.admitted) == {"ns/low"}
