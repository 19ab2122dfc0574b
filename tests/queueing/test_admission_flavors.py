"""Flavor assignment (``cluster_queue.md``, "Resource Groups", "Flavors and borrowing
semantics", "FlavorFungibility"; ``resource_flavor.md`` for node labels and taints)."""

from __future__ import annotations

from dralab.queueing.kueue import KueuePolicy, admit_until_stable
from dralab.queueing.model import FlavorFungibility, FlavorSpec, PreemptionPolicy

from .builders import NO_PREEMPTION, cq, group, quota, state, wl


def flavors_of(st, key: str) -> dict[str, str]:
    return dict(st.admitted[key].pod_sets[0].flavors)


def spot_on_demand(**kwargs):
    return cq("q", group(("cpu", "memory"),
                         ("spot", {"cpu": quota(9), "memory": quota("36Gi")}),
                         ("on-demand", {"cpu": quota(18), "memory": quota("72Gi")})), **kwargs)


def test_first_flavor_with_room_in_order() -> None:
    st = state(spot_on_demand(), workloads=(wl("ns/a", "q", 1, cpu=8), wl("ns/b", "q", 2, cpu=8)))
    admit_until_stable(KueuePolicy(), st, 0.0)
    assert flavors_of(st, "ns/a") == {"cpu": "spot"}
    assert flavors_of(st, "ns/b") == {"cpu": "on-demand"}


def test_resources_of_one_group_share_a_flavor() -> None:
    # cpu fits in spot but memory does not: both go to on-demand.
    st = state(spot_on_demand(), workloads=(wl("ns/a", "q", 1, cpu=1, memory="40Gi"),))
    admit_until_stable(KueuePolicy(), st, 0.0)
    assert flavors_of(st, "ns/a") == {"cpu": "on-demand", "memory": "on-demand"}


def test_two_resource_groups() -> None:
    queue = cq("q", group(("cpu",), ("default", {"cpu": quota(10)})),
               group(("gpu",), ("vendor1", {"gpu": quota(1)}), ("vendor2", {"gpu": quota(10)})))
    st = state(queue, workloads=(wl("ns/a", "q", 1, cpu=1, gpu=2),))
    admit_until_stable(KueuePolicy(), st, 0.0)
    assert flavors_of(st, "ns/a") == {"cpu": "default", "gpu": "vendor2"}


def test_no_flavor_fits_lists_every_flavor() -> None:
    st = state(spot_on_demand(), workloads=(wl("ns/a", "q", 1, cpu=20),))
    policy = KueuePolicy()
    admit_until_stable(policy, st, 0.0)
    assert policy.pending_messages["ns/a"] == (
        "couldn't assign flavors to pod set main: "
        # Kueue's Status.Message sorts the reasons (flavorassigner.go).
        "insufficient quota for cpu in flavor on-demand, previously considered podsets requests "
        "(0) + current podset request (20) > maximum capacity (18), "
        "insufficient quota for cpu in flavor spot, previously considered podsets requests (0) "
        "+ current podset request (20) > maximum capacity (9)")


def cohort_pair(fungibility: FlavorFungibility, preemption: PreemptionPolicy = NO_PREEMPTION):
    mine = cq("mine", group(("cpu",), ("first", {"cpu": quota(2)}), ("second", {"cpu": quota(4)})),
              cohort="c", fungibility=fungibility, preemption=preemption)
    lender = cq("lender", group(("cpu",), ("first", {"cpu": quota(10)})), cohort="c")
    return mine, lender


def test_when_can_borrow_may_stop_search_is_the_default() -> None:
    # "By default, the incoming workload stops trying the next flavor if the workload
    # can get enough borrowed resources."
    st = state(*cohort_pair(FlavorFungibility()), workloads=(wl("ns/a", "mine", 1, cpu=3),))
    admit_until_stable(KueuePolicy(), st, 0.0)
    assert flavors_of(st, "ns/a") == {"cpu": "first"}


def test_when_can_borrow_try_next_flavor() -> None:
    fungibility = FlavorFungibility(when_can_borrow="TryNextFlavor")
    st = state(*cohort_pair(fungibility), workloads=(wl("ns/a", "mine", 1, cpu=3),))
    admit_until_stable(KueuePolicy(), st, 0.0)
    assert flavors_of(st, "ns/a") == {"cpu": "second"}


def test_when_can_borrow_try_next_flavor_falls_back_to_borrowing() -> None:
    # No flavor fits without borrowing: the borrowing one is taken.
    fungibility = FlavorFungibility(when_can_borrow="TryNextFlavor")
    st = state(*cohort_pair(fungibility), workloads=(wl("ns/a", "mine", 1, cpu=5),))
    admit_until_stable(KueuePolicy(), st, 0.0)
    assert flavors_of(st, "ns/a") == {"cpu": "first"}


def preemptible(fungibility: FlavorFungibility):
    queue = cq("q", group(("cpu",), ("first", {"cpu": quota(2)}), ("second", {"cpu": quota(2)})),
               fungibility=fungibility,
               preemption=PreemptionPolicy(within_cluster_queue="LowerPriority"))
    st = state(queue, workloads=(wl("ns/low", "q", 0, priority=0, cpu=2),))
    policy = KueuePolicy()
    admit_until_stable(policy, st, 0.0)
    st.workloads["ns/high"] = wl("ns/high", "q", 1, priority=10, cpu=2)
    decisions = admit_until_stable(policy, st, 1.0)
    return st, decisions


def test_when_can_preempt_try_next_flavor_prefers_a_free_flavor() -> None:
    st, decisions = preemptible(FlavorFungibility())
    assert flavors_of(st, "ns/high") == {"cpu": "second"}
    assert not any(d.preempted for d in decisions)


def test_when_can_preempt_may_stop_search_preempts_in_the_first_flavor() -> None:
    st, decisions = preemptible(FlavorFungibility(when_can_preempt="MayStopSearch"))
    assert flavors_of(st, "ns/high") == {"cpu": "first"}
    assert [(d.workload, d.reason) for d in decisions if d.preempted] == [
        ("ns/low", "InClusterQueue")]


def labelled():
    flavors = (FlavorSpec("a100", node_labels={"gpu": "a100"}),
               FlavorSpec("h100", node_labels={"gpu": "h100"},
                          node_taints=(("dedicated", "h100", "NoSchedule"),)))
    queue = cq("q", group(("gpu",), ("a100", {"gpu": quota(8)}), ("h100", {"gpu": quota(8)})))
    return queue, flavors


def test_node_selector_skips_contradicting_flavors() -> None:
    queue, flavors = labelled()
    st = state(queue, flavors=flavors,
               workloads=(wl("ns/a", "q", 1, gpu=1, node_selector={"gpu": "h100", "zone": "x"},
                             tolerations=(("dedicated", "Equal", "h100", "NoSchedule"),)),))
    admit_until_stable(KueuePolicy(), st, 0.0)
    assert flavors_of(st, "ns/a") == {"gpu": "h100"}


def test_untolerated_taint_and_node_affinity_messages() -> None:
    queue, flavors = labelled()
    st = state(queue, flavors=flavors,
               workloads=(wl("ns/a", "q", 1, gpu=1, node_selector={"gpu": "h100"}),))
    policy = KueuePolicy()
    admit_until_stable(policy, st, 0.0)
    assert policy.pending_messages["ns/a"] == (
        "couldn't assign flavors to pod set main: flavor a100 doesn't match node affinity, "
        # Kueue prints the corev1.Taint struct with %s (flavorassigner_test.go,
        # scheduler_test.go: "untolerated taint {key val NoSchedule <nil>} in flavor ...").
        "untolerated taint {dedicated h100 NoSchedule <nil>} in flavor h100")


def test_exists_toleration() -> None:
    queue, flavors = labelled()
    st = state(queue, flavors=flavors,
               workloads=(wl("ns/a", "q", 1, gpu=1, node_selector={"gpu": "h100"},
                             tolerations=(("dedicated", "Exists", "", ""),)),))
    admit_until_stable(KueuePolicy(), st, 0.0)
    assert flavors_of(st, "ns/a") == {"gpu": "h100"}


def test_pod_sets_share_the_flavor_quota() -> None:
    # Two pod sets of 3 pods x 1 cpu: the second one counts the first one's usage.
    from dralab.queueing.model import PodSetRequest, WorkloadSpec
    queue = cq("q", group(("cpu",), ("small", {"cpu": quota(4)}), ("big", {"cpu": quota(10)})))
    pod_sets = (PodSetRequest("driver", 3, {"cpu": 1000}),
                PodSetRequest("workers", 3, {"cpu": 1000}))
    st = state(queue)
    st.workloads["ns/a"] = WorkloadSpec("ns/a", "lq", "q", 0, 1.0, pod_sets)
    admit_until_stable(KueuePolicy(), st, 0.0)
    assert [dict(p.flavors) for p in st.admitted["ns/a"].pod_sets] == [{"cpu": "small"},
                                                                       {"cpu": "big"}]
    assert [dict(p.usage) for p in st.admitted["ns/a"].pod_sets] == [{"cpu": 3000}, {"cpu": 3000}]
