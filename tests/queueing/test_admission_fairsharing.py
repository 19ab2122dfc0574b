"""Fair sharing (``site/content/en/docs/concepts/preemption.md``, "Fair Sharing":
share values, preemption strategies, algorithm overview; weight 0 is an infinite
share, its workloads preempted first, per the ClusterQueue fairSharing docs)."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence

from dralab.queueing.kueue import KueuePolicy, admit_until_stable
from dralab.queueing.model import PreemptionPolicy, QueueingState

from .builders import cq, cq_usage, group, milli, quota, state, wl

RECLAIM = PreemptionPolicy(reclaim_within_cohort="Any")


def fair_cohort(weight_a: float = 1.0, weight_b: float = 1.0, lender: int = 12) -> QueueingState:
    """Two tenants without quota of their own borrow from an idle lender."""
    a = cq("a", group(("cpu",), ("default", {"cpu": quota(0)})), cohort="c", weight=weight_a,
           preemption=RECLAIM)
    b = cq("b", group(("cpu",), ("default", {"cpu": quota(0)})), cohort="c", weight=weight_b,
           preemption=RECLAIM)
    pool = cq("lender", group(("cpu",), ("default", {"cpu": quota(lender)})), cohort="c")
    return state(a, b, pool)


def flood(st: QueueingState, queue: str, count: int, start: float, cpu: int = 1) -> None:
    for i in range(count):
        key = f"ns/{queue}{i:02d}"
        st.workloads[key] = wl(key, queue, start + i, cpu=cpu)


def test_equal_weights_converge_to_equal_shares() -> None:
    # "ClusterQueues with pending Workloads can preempt other Workloads in their
    # cohort until the preempting ClusterQueue obtains an equal or weighted share."
    st = fair_cohort()
    engine = KueuePolicy(fair_sharing=True)
    flood(st, "a", 12, 0.0)
    admit_until_stable(engine, st, 0.0)
    assert cq_usage(st, "a") == milli(12)
    flood(st, "b", 12, 100.0)
    decisions = admit_until_stable(engine, st, 1.0)
    assert cq_usage(st, "a") == milli(6) and cq_usage(st, "b") == milli(6)
    assert {d.reason for d in decisions if d.preempted} == {"InCohortFairSharing"}


def test_weights_split_the_borrowable_quota() -> None:
    # weight 2 vs 1: a keeps twice b's share (8 vs 4 of 12).
    st = fair_cohort(weight_a=2.0)
    engine = KueuePolicy(fair_sharing=True)
    flood(st, "a", 12, 0.0)
    admit_until_stable(engine, st, 0.0)
    flood(st, "b", 12, 100.0)
    admit_until_stable(engine, st, 1.0)
    assert cq_usage(st, "a") == milli(8) and cq_usage(st, "b") == milli(4)


def test_less_than_initial_share_only() -> None:
    # With LessThanInitialShare alone, b preempts while its share with the workload is
    # below a's current share: 12 split 6/6 is reached too, one step later.
    st = fair_cohort()
    engine = KueuePolicy(fair_sharing=True, fair_strategies=("LessThanInitialShare",))
    flood(st, "a", 12, 0.0)
    admit_until_stable(engine, st, 0.0)
    flood(st, "b", 12, 100.0)
    admit_until_stable(engine, st, 1.0)
    assert cq_usage(st, "b") in (milli(5), milli(6))
    assert cq_usage(st, "a") + cq_usage(st, "b") == milli(12)


def test_admission_prefers_the_lowest_share() -> None:
    # "During admission, Kueue prefers to admit Workloads from ClusterQueues that have
    # the lowest share value first." a already borrows 4; both heads ask for the last 4.
    st = fair_cohort(lender=8)
    engine = KueuePolicy(fair_sharing=True)
    flood(st, "a", 1, 0.0, cpu=4)
    admit_until_stable(engine, st, 0.0)
    st.workloads["ns/a-next"] = wl("ns/a-next", "a", 1.0, cpu=4)
    st.workloads["ns/b-next"] = wl("ns/b-next", "b", 2.0, cpu=4)
    decisions = engine.cycle(st, 1.0)
    assert [d.workload for d in decisions if d.admitted] == ["ns/b-next"]


def test_no_fair_sharing_is_first_come_first_served() -> None:
    st = fair_cohort()
    engine = KueuePolicy(fair_sharing=False)
    flood(st, "a", 12, 0.0)
    admit_until_stable(engine, st, 0.0)
    flood(st, "b", 12, 100.0)
    admit_until_stable(engine, st, 1.0)
    # Classic: b would borrow, and reclaim is only for a queue within its nominal.
    assert cq_usage(st, "a") == milli(12) and cq_usage(st, "b") == 0


def test_weight_zero_is_preempted_first() -> None:
    # A weight of 0 is an infinite share: that queue's workloads go first.
    a = cq("a", group(("cpu",), ("default", {"cpu": quota(0)})), cohort="c", weight=0.0)
    b = cq("b", group(("cpu",), ("default", {"cpu": quota(0)})), cohort="c", weight=1.0)
    owner = cq("owner", group(("cpu",), ("default", {"cpu": quota(8)})), cohort="c",
               preemption=RECLAIM)
    st = state(a, b, owner, workloads=(wl("ns/b1", "b", 0, cpu=2), wl("ns/b2", "b", 1, cpu=2),
                                       wl("ns/a1", "a", 2, cpu=2), wl("ns/a2", "a", 3, cpu=2)))
    engine = KueuePolicy(fair_sharing=True)
    admit_until_stable(engine, st, 0.0)
    assert len(st.admitted) == 4
    st.workloads["ns/own"] = wl("ns/own", "owner", 10, cpu=4)
    decisions = admit_until_stable(engine, st, 1.0)
    assert sorted(d.workload for d in decisions if d.preempted) == ["ns/a1", "ns/a2"]


def test_within_nominal_reclaims_with_fair_sharing() -> None:
    owner = cq("owner", group(("cpu",), ("default", {"cpu": quota(6)})), cohort="c",
               preemption=RECLAIM)
    borrower = cq("borrower", group(("cpu",), ("default", {"cpu": quota(0)})), cohort="c")
    st = state(owner, borrower, workloads=tuple(wl(f"ns/x{i}", "borrower", i, cpu=2)
                                               for i in range(3)))
    engine = KueuePolicy(fair_sharing=True)
    admit_until_stable(engine, st, 0.0)
    st.workloads["ns/own"] = wl("ns/own", "owner", 10, cpu=4)
    decisions = admit_until_stable(engine, st, 1.0)
    assert len([d for d in decisions if d.preempted]) == 2
    assert "ns/own" in st.admitted


class _TwoSlotNodes:
    """A placement check over three nodes of two 1-CPU slots each: a's workload ``aN``
    sits on node ``N % 3``; b's 2-CPU preemptor places only on a node with both slots
    free (its victims' pods gone)."""

    def __init__(self) -> None:
        self.released: list[str] = []

    def check(self, key: str, workload: object, admission: object) -> str | None:
        return None

    def release(self, key: str) -> None:
        self.released.append(key)

    def for_preemptor(self, key: str, workload: object, admission: object) -> _TwoSlotNodes:
        return self

    def nodes_of(self, workload: str) -> frozenset[str]:
        return frozenset({f"n{int(workload[-2:]) % 3}"}) if "/a" in workload else frozenset()

    def places_without(self, victims: Sequence[str]) -> frozenset[str] | None:
        freed = Counter(node for v in victims for node in self.nodes_of(v))
        full = sorted(node for node, slots in freed.items() if slots >= 2)
        return frozenset(full[:1]) if full else None

    def unplaceable_without(self, victims: Sequence[str]) -> frozenset[str] | str:
        return self.places_without(victims) or "no node with 2 free slots"


def test_fair_sharing_victims_are_chosen_where_the_preemptor_lands() -> None:
    # a borrows all 6 CPUs (a00..a05, two per node); b's 2-CPU workload reclaims 2.
    # Kueue's order takes a00 and a01 (nodes n0 and n1); with the placement check the
    # same fair-sharing search goes on to a03 and gives a01 and a02 back: both on n0.
    st = fair_cohort(lender=6)
    engine = KueuePolicy(fair_sharing=True)
    flood(st, "a", 6, 0.0)
    admit_until_stable(engine, st, 0.0)
    st.workloads["ns/b00"] = wl("ns/b00", "b", 100.0, cpu=2)
    quota_only = copy.deepcopy(st)
    by_quota = admit_until_stable(copy.deepcopy(engine), quota_only, 1.0)
    assert sorted(d.workload for d in by_quota if d.preempted) == ["ns/a00", "ns/a01"]
    placement = _TwoSlotNodes()
    engine.placement = placement
    decisions = admit_until_stable(engine, st, 1.0)
    assert sorted(d.workload for d in decisions if d.preempted) == ["ns/a00", "ns/a03"]
    assert "ns/b00" in st.admitted and sorted(placement.released) == ["ns/a00", "ns/a03"]
