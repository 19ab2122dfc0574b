"""Properties of any admission run: no ClusterQueue uses more than its nominal quota
plus its borrowing limit (or than the cohort can give), the cohort never hands out
more than its members can lend, and the engine's usage is the sum of the admissions."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralab.queueing.kueue import KueuePolicy, admit_until_stable
from dralab.queueing.kueue.index import admission_usage
from dralab.queueing.model import (
    ClusterQueueSpec,
    FlavorQuotas,
    FlavorSpec,
    PodSetRequest,
    PreemptionPolicy,
    QueueingState,
    ResourceGroup,
    ResourceQuota,
    WorkloadSpec,
)

from .builders import cq, group, quota, state, wl

FLAVORS = ("f1", "f2")


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[QueueingState, bool]:
    queues: list[ClusterQueueSpec] = []
    for i in range(draw(st.integers(1, 5))):
        flavors = []
        for flavor in FLAVORS[:draw(st.integers(1, 2))]:
            nominal = draw(st.integers(0, 8))
            borrowing = draw(st.one_of(st.none(), st.integers(0, 6)))
            lending = draw(st.one_of(st.none(), st.integers(0, nominal)))
            flavors.append((flavor, {"cpu": quota(nominal, borrowing, lending)}))
        preemption = PreemptionPolicy(
            within_cluster_queue=draw(st.sampled_from(["Never", "LowerPriority",
                                                      "LowerOrNewerEqualPriority"])),
            reclaim_within_cohort=draw(st.sampled_from(["Never", "LowerPriority", "Any"])),
            borrow_within_cohort=draw(st.sampled_from(["Never", "LowerPriority"])),
            max_priority_threshold=draw(st.one_of(st.none(), st.integers(0, 3))))
        queues.append(cq(f"q{i}", group(("cpu",), *flavors),
                         cohort=draw(st.sampled_from([None, "c1", "c2"])),
                         strategy=draw(st.sampled_from(["StrictFIFO", "BestEffortFIFO"])),
                         preemption=preemption, weight=draw(st.sampled_from([0.0, 1.0, 2.0]))))
    workloads: list[WorkloadSpec] = []
    for j in range(draw(st.integers(0, 25))):
        queue = draw(st.sampled_from(queues)).name
        workloads.append(wl(f"ns/w{j}", queue, float(draw(st.integers(0, 5))),
                            priority=draw(st.integers(0, 4)), count=draw(st.integers(1, 3)),
                            cpu=draw(st.integers(1, 4))))
    return state(*queues, workloads=tuple(workloads)), draw(st.booleans())


def _usage(st_: QueueingState) -> dict[str, dict[tuple[str, str], int]]:
    out: dict[str, dict[tuple[str, str], int]] = {name: {} for name in st_.cluster_queues}
    for admission in st_.admitted.values():
        for fr, amount in admission_usage(admission).items():
            per = out[admission.cluster_queue]
            per[fr] = per.get(fr, 0) + amount
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_usage_never_exceeds_quota(scenario: tuple[QueueingState, bool]) -> None:
    st_, fair = scenario
    engine = KueuePolicy(fair_sharing=fair)
    admit_until_stable(engine, st_, 0.0, max_cycles=10_000)
    usage = _usage(st_)
    cohorts: dict[str, list[ClusterQueueSpec]] = {}
    for spec in st_.cluster_queues.values():
        if spec.cohort:
            cohorts.setdefault(spec.cohort, []).append(spec)
    for name, spec in st_.cluster_queues.items():
        for fq in spec.resource_groups[0].flavors:
            q = fq.resources["cpu"]
            used = usage[name].get((fq.flavor, "cpu"), 0)
            limit = q.nominal if not spec.cohort else (
                q.nominal + q.borrowing_limit if q.borrowing_limit is not None else None)
            if limit is not None:
                assert used <= limit, (name, fq.flavor, used, limit)
    for members in cohorts.values():
        for flavor in FLAVORS:
            lendable = kept_total = used_total = 0
            for spec in members:
                q = next((fq.resources["cpu"] for fq in spec.resource_groups[0].flavors
                          if fq.flavor == flavor), None)
                used = usage[spec.name].get((flavor, "cpu"), 0)
                used_total += used
                if q is None:
                    continue
                kept = q.nominal - q.lending_limit if q.lending_limit is not None else 0
                kept_total += kept
                lendable += q.nominal - kept
                # What a member uses beyond what it keeps comes from the shared pool.
            drawn = sum(max(0, usage[s.name].get((flavor, "cpu"), 0) - _kept(s, flavor))
                        for s in members)
            assert drawn <= lendable, (flavor, drawn, lendable)
            assert used_total <= lendable + kept_total
    # The engine's own bookkeeping agrees with the admissions.
    index = engine._index
    assert index is not None
    for name, per in usage.items():
        node = index.tree.cluster_queues[name]
        assert {fr: v for fr, v in node.usage.items() if v} == {fr: v for fr, v in per.items() if v}
    # What the tree keeps to answer fast equals what it would compute afresh: the
    # borrowing queues of each cohort tree and every node's share.
    tree = index.tree
    for name, node in tree.cluster_queues.items():
        for fr in node.subtree:
            expected = [m for m in tree.members(name)
                        if m != name and tree.borrowing(tree.cluster_queues[m], fr)]
            assert tree.borrowers(name, [fr]) == expected, (name, fr)
        kept = tree.share(node)
        node.share_memo = node.borrowed_memo = None
        assert tree.share(node) == kept, name


def _kept(spec: ClusterQueueSpec, flavor: str) -> int:
    for fq in spec.resource_groups[0].flavors:
        if fq.flavor == flavor:
            q = fq.resources["cpu"]
            return q.nominal - q.lending_limit if q.lending_limit is not None else 0
    return 0


def _contended(seed: int) -> QueueingState:
    """Queues with two flavors per group, reclaim Any and preemption within queues:
    the setting where reclaims in one flavor and preemptions in another could ring."""
    rng = random.Random(seed)
    out = QueueingState()
    out.flavors = {name: FlavorSpec(name) for name in ("f1", "f2", "g1", "g2")}
    for i in range(12):
        groups = (ResourceGroup(("cpu",), (FlavorQuotas("f1", {"cpu": ResourceQuota(8000)}),
                                           FlavorQuotas("f2", {"cpu": ResourceQuota(4000)}))),
                  ResourceGroup(("gpu",), (FlavorQuotas("g1", {"gpu": ResourceQuota(2000)}),
                                           FlavorQuotas("g2", {"gpu": ResourceQuota(1000)}))))
        out.cluster_queues[f"q{i}"] = ClusterQueueSpec(
            f"q{i}", groups, cohort=f"c{i % 2}",
            preemption=PreemptionPolicy(within_cluster_queue="LowerPriority",
                                        reclaim_within_cohort="Any"))
    for j in range(400):
        per_pod = {"cpu": rng.choice((500, 1000, 2000))}
        if rng.random() < 0.4:
            per_pod["gpu"] = 1000
        key = f"ns/w{j:03d}"
        out.workloads[key] = WorkloadSpec(key, "lq", f"q{rng.randrange(12)}",
                                          rng.choice((0, 0, 100)), float(j),
                                          (PodSetRequest("main", rng.choice((1, 2)), per_pod),))
    return out


def test_contended_cohorts_settle_in_both_modes() -> None:
    for fair in (False, True):
        st_ = _contended(3)
        decisions = admit_until_stable(KueuePolicy(fair_sharing=fair), st_, 0.0,
                                       max_cycles=20_000)
        # It settled (no AdmissionDidNotSettle) with few evictions per workload.
        evictions = sum(1 for d in decisions if d.preempted)
        assert st_.admitted
        assert evictions <= 2 * len(st_.workloads)
