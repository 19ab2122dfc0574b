"""Queue order and strategies (``cluster_queue.md``, "Queueing strategy"), one head per
ClusterQueue per cycle, stop policies ("StopPolicy") and determinism."""

from __future__ import annotations

import random

from dralab.queueing.kueue import EVICTED_CLUSTER_QUEUE_STOPPED, KueuePolicy, admit_until_stable
from dralab.queueing.model import QueueingState, QueueingStrategy

from .builders import cq, group, quota, state, wl


def single(strategy: QueueingStrategy, stop: str = "None") -> QueueingState:
    queue = cq("q", group(("cpu",), ("default-flavor", {"cpu": quota(10)})), strategy=strategy,
               stop=stop)  # type: ignore[arg-type]
    return state(queue, workloads=(wl("ns/running", "q", 0, cpu=5),))


def with_backlog(strategy: QueueingStrategy) -> tuple[KueuePolicy, QueueingState]:
    st = single(strategy)
    policy = KueuePolicy()
    admit_until_stable(policy, st, 0.0)
    # The older workload does not fit (6 > 5 left); the newer one would (2).
    for late in (wl("ns/big", "q", 1, cpu=6), wl("ns/small", "q", 2, cpu=2)):
        st.workloads[late.key] = late
    return policy, st


def test_strict_fifo_head_of_line_blocking() -> None:
    # StrictFIFO: "Older workloads that can't be admitted will block newer workloads,
    # even if the newer workloads fit in the available quota."
    policy, st = with_backlog("StrictFIFO")
    decisions = admit_until_stable(policy, st, 1.0)
    assert set(st.admitted) == {"ns/running"}
    assert {d.workload for d in decisions} == {"ns/big"}
    assert "ns/small" not in policy.pending_messages


def test_best_effort_fifo_skips_a_head_that_does_not_fit() -> None:
    # BestEffortFIFO: "older Workloads that can't be admitted will not block newer
    # Workloads that fit in the available quota."
    policy, st = with_backlog("BestEffortFIFO")
    admit_until_stable(policy, st, 1.0)
    assert set(st.admitted) == {"ns/running", "ns/small"}
    assert "1 more needed" in policy.pending_messages["ns/big"]


def test_set_aside_head_comes_back_when_quota_is_released() -> None:
    policy, st = with_backlog("BestEffortFIFO")
    admit_until_stable(policy, st, 1.0)
    del st.admitted["ns/running"]        # it finished
    del st.workloads["ns/running"]
    admit_until_stable(policy, st, 2.0)
    assert set(st.admitted) == {"ns/small", "ns/big"}


def test_priority_before_creation_time() -> None:
    queue = cq("q", group(("cpu",), ("default-flavor", {"cpu": quota(4)})), strategy="StrictFIFO")
    st = state(queue, workloads=(wl("ns/old-low", "q", 1, priority=0, cpu=4),
                                 wl("ns/new-high", "q", 2, priority=100, cpu=4)))
    admit_until_stable(KueuePolicy(), st, 0.0)
    assert set(st.admitted) == {"ns/new-high"}


def test_one_head_per_cluster_queue_per_cycle() -> None:
    queues = [cq(f"q{i}", group(("cpu",), ("default-flavor", {"cpu": quota(10)})))
              for i in range(3)]
    jobs = tuple(wl(f"ns/w{i}-{j}", f"q{i}", j, cpu=1) for i in range(3) for j in range(4))
    st = state(*queues, workloads=jobs)
    policy = KueuePolicy()
    first = policy.cycle(st, 0.0)
    assert sorted(d.workload for d in first if d.admitted) == ["ns/w0-0", "ns/w1-0", "ns/w2-0"]
    admit_until_stable(policy, st, 0.0)
    assert len(st.admitted) == 12


def test_hold_stops_new_admissions_and_keeps_admitted() -> None:
    st = single("BestEffortFIFO")
    policy = KueuePolicy()
    admit_until_stable(policy, st, 0.0)
    st.cluster_queues["q"] = cq("q", group(("cpu",), ("default-flavor", {"cpu": quota(10)})),
                                stop="Hold")
    st.workloads["ns/next"] = wl("ns/next", "q", 1, cpu=1)
    admit_until_stable(policy, st, 1.0)
    assert set(st.admitted) == {"ns/running"}
    assert policy.pending_messages["ns/next"] == "ClusterQueue q is inactive"


def test_hold_and_drain_evicts_admitted_workloads() -> None:
    st = single("BestEffortFIFO")
    policy = KueuePolicy()
    admit_until_stable(policy, st, 0.0)
    st.cluster_queues["q"] = cq("q", group(("cpu",), ("default-flavor", {"cpu": quota(10)})),
                                stop="HoldAndDrain")
    decisions = admit_until_stable(policy, st, 1.0)
    assert st.admitted == {}
    evicted = [d for d in decisions if d.preempted]
    assert [(d.workload, d.reason) for d in evicted] == [("ns/running",
                                                          EVICTED_CLUSTER_QUEUE_STOPPED)]
    assert policy.pending_messages["ns/running"] == "ClusterQueue q is inactive"
    st.cluster_queues["q"] = cq("q", group(("cpu",), ("default-flavor", {"cpu": quota(10)})))
    admit_until_stable(policy, st, 2.0)
    assert set(st.admitted) == {"ns/running"}


def test_missing_cluster_queue_and_local_queue() -> None:
    st = state(cq("q", group(("cpu",), ("default-flavor", {"cpu": quota(10)}))),
               workloads=(wl("ns/lost", "nope", 1, cpu=1),))
    st.workloads["ns/orphan"] = st.workloads["ns/lost"].__class__(
        "ns/orphan", "missing-lq", None, 0, 2.0, st.workloads["ns/lost"].pod_sets)
    policy = KueuePolicy()
    admit_until_stable(policy, st, 0.0)
    assert policy.pending_messages == {"ns/lost": "ClusterQueue nope doesn't exist",
                                       "ns/orphan": "LocalQueue missing-lq doesn't exist"}


def test_local_queue_resolves_the_cluster_queue() -> None:
    st = state(cq("q", group(("cpu",), ("default-flavor", {"cpu": quota(10)}))))
    base = wl("ns/a", "q", 1, cpu=1)
    st.workloads["ns/a"] = base.__class__("ns/a", "lq", None, 0, 1.0, base.pod_sets)
    st.local_queues["ns/lq"] = "q"
    admit_until_stable(KueuePolicy(), st, 0.0)
    assert st.admitted["ns/a"].cluster_queue == "q"


def _scenario(seed: int) -> QueueingState:
    rng = random.Random(7)
    queues = [cq(f"q{i}", group(("cpu",), ("default-flavor", {"cpu": quota(4)})),
                 cohort="all") for i in range(4)]
    jobs = [wl(f"ns/w{j}", f"q{rng.randrange(4)}", float(rng.randrange(5)),
               priority=rng.randrange(3), cpu=rng.randrange(1, 4)) for j in range(40)]
    random.Random(seed).shuffle(jobs)   # insertion order must not matter
    random.Random(seed).shuffle(queues)
    return state(*queues, workloads=tuple(jobs))


def test_determinism_independent_of_insertion_order() -> None:
    results = []
    for seed in range(3):
        st = _scenario(seed)
        decisions = admit_until_stable(KueuePolicy(), st, 0.0)
        results.append(([(d.workload, d.pending, d.admitted) for d in decisions],
                        sorted(st.admitted)))
    assert results[0] == results[1] == results[2]
