"""Quota, borrowing and lending in a cohort: the examples of Kueue's docs,
``site/content/en/docs/concepts/cluster_queue.md`` ("Borrowing example",
"BorrowingLimit", "LendingLimit") and ``cohort.md`` (cohorts with their own quota)."""

from __future__ import annotations

from dralab.queueing.kueue import KueuePolicy, admit_until_stable
from dralab.queueing.model import CohortSpec

from .builders import cq, cq_usage, group, milli, quota, state, wl


def team(name: str, cpu: int, borrowing: int | None = None, lending: int | None = None,
         cohort: str = "team-ab"):
    return cq(name, group(("cpu", "memory"),
                          ("default-flavor", {"cpu": quota(cpu, borrowing, lending)})),
              cohort=cohort)


def run(st):
    decisions = admit_until_stable(KueuePolicy(), st, 0.0)
    pending = {d.workload: d.pending for d in decisions if d.pending}
    return set(st.admitted), pending


def test_nominal_quota_and_kueue_message() -> None:
    # cluster_queue.md, first sample: admits iff the sum of CPU requests <= 9.
    st = state(cq("cluster-queue", group(("cpu",), ("default-flavor", {"cpu": quota(9)}))),
               workloads=(wl("ns/a", "cluster-queue", 1, cpu=5),
                          wl("ns/b", "cluster-queue", 2, cpu=5)))
    admitted, pending = run(st)
    assert admitted == {"ns/a"}
    assert pending["ns/b"] == ("couldn't assign flavors to pod set main: insufficient unused "
                               "quota for cpu in flavor default-flavor, 1 more needed")


def test_memory_shortfall_is_printed_in_binary_units() -> None:
    st = state(cq("q", group(("cpu", "memory"),
                             ("default-flavor", {"cpu": quota(9), "memory": quota("36Gi")}))),
               workloads=(wl("ns/a", "q", 1, cpu=1, memory="30Gi"),
                          wl("ns/b", "q", 2, cpu=1, memory="8Gi")))
    _, pending = run(st)
    assert pending["ns/b"].endswith("insufficient unused quota for memory in flavor "
                                    "default-flavor, 2Gi more needed")


def test_borrowing_example_team_a_can_use_21_cpus_when_team_b_is_idle() -> None:
    # cluster_queue.md "Borrowing example": team-a-cq 9, team-b-cq 12 -> 12+9=21.
    st = state(team("team-a-cq", 9), team("team-b-cq", 12),
               workloads=(wl("ns/a1", "team-a-cq", 1, cpu=10), wl("ns/a2", "team-a-cq", 2, cpu=11),
                          wl("ns/a3", "team-a-cq", 3, cpu=1)))
    admitted, pending = run(st)
    assert admitted == {"ns/a1", "ns/a2"}
    assert cq_usage(st, "team-a-cq") == milli(21)
    assert "1 more needed" in pending["ns/a3"]


def test_borrowing_example_non_borrowing_head_goes_first() -> None:
    # Same page: team-a has all its nominal quota used and team-b has pending
    # workloads: Kueue admits team-b's before any new team-a workload, though
    # team-a's is older, so that team-b gets its nominal quota.
    st = state(team("team-a-cq", 9), team("team-b-cq", 12),
               workloads=(wl("ns/a1", "team-a-cq", 1, cpu=9),))
    policy = KueuePolicy()
    admit_until_stable(policy, st, 0.0)
    for late in (wl("ns/a2", "team-a-cq", 2, cpu=10), wl("ns/b1", "team-b-cq", 3, cpu=12)):
        st.workloads[late.key] = late
    decisions = policy.cycle(st, 1.0)
    assert [d.workload for d in decisions if d.admitted] == ["ns/b1"]
    assert set(st.admitted) == {"ns/a1", "ns/b1"}
    assert policy.pending_messages["ns/a2"] == (
        "Workload no longer fits after processing another workload")


def test_no_longer_fits_after_processing_another_workload() -> None:
    # Both heads fit against the usage at the start of the cycle; the one that does
    # not borrow goes first and the other no longer fits.
    st = state(team("team-a-cq", 9), team("team-b-cq", 12),
               workloads=(wl("ns/a", "team-a-cq", 1, cpu=15), wl("ns/b", "team-b-cq", 2, cpu=12)))
    decisions = KueuePolicy().cycle(st, 0.0)
    assert set(st.admitted) == {"ns/b"}
    assert [d.pending for d in decisions if d.workload == "ns/a"] == [
        "Workload no longer fits after processing another workload"]


def test_borrowing_limit() -> None:
    # cluster_queue.md "BorrowingLimit": team-a 9 + borrowingLimit 1 -> 10 CPUs;
    # team-b without a limit can use 12+9.
    st = state(team("team-a-cq", 9, borrowing=1), team("team-b-cq", 12),
               workloads=(wl("ns/a1", "team-a-cq", 1, cpu=9), wl("ns/a2", "team-a-cq", 2, cpu=1),
                          wl("ns/a3", "team-a-cq", 3, cpu=1)))
    admitted, pending = run(st)
    assert admitted == {"ns/a1", "ns/a2"}
    assert "ns/a3" in pending
    st = state(team("team-a-cq", 9, borrowing=1), team("team-b-cq", 12),
               workloads=(wl("ns/b1", "team-b-cq", 1, cpu=21),))
    admitted, _ = run(st)
    assert admitted == {"ns/b1"}


def test_borrowing_limit_bounds_the_workload_size() -> None:
    st = state(team("team-a-cq", 9, borrowing=1), team("team-b-cq", 12),
               workloads=(wl("ns/a1", "team-a-cq", 1, cpu=11),))
    _, pending = run(st)
    assert pending["ns/a1"] == (
        "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor "
        "default-flavor, previously considered podsets requests (0) + current podset request "
        "(11) > maximum capacity (10)")


def test_lending_limit() -> None:
    # cluster_queue.md "LendingLimit": team-b 12 with lendingLimit 1 -> team-a can
    # use 9+1=10; team-a lends everything, so team-b can use 9+12.
    st = state(team("team-a-cq", 9), team("team-b-cq", 12, lending=1),
               workloads=(wl("ns/a1", "team-a-cq", 1, cpu=10), wl("ns/a2", "team-a-cq", 2, cpu=1)))
    admitted, pending = run(st)
    assert admitted == {"ns/a1"}
    assert "1 more needed" in pending["ns/a2"]
    st = state(team("team-a-cq", 9), team("team-b-cq", 12, lending=1),
               workloads=(wl("ns/b1", "team-b-cq", 1, cpu=21),))
    admitted, _ = run(st)
    assert admitted == {"ns/b1"}


def test_lent_quota_is_not_available_to_its_owner_beyond_what_it_kept() -> None:
    # team-b keeps 11 of its 12; once team-a borrows the lent 1, team-b has 11.
    st = state(team("team-a-cq", 9), team("team-b-cq", 12, lending=1),
               workloads=(wl("ns/a1", "team-a-cq", 1, cpu=10),))
    policy = KueuePolicy()
    admit_until_stable(policy, st, 0.0)
    later = wl("ns/b1", "team-b-cq", 2, cpu=12)
    st.workloads[later.key] = later
    admit_until_stable(policy, st, 1.0)
    assert set(st.admitted) == {"ns/a1"}
    assert "1 more needed" in policy.pending_messages["ns/b1"]


def test_resource_not_covered_by_the_cluster_queue() -> None:
    st = state(team("team-a-cq", 9),
               workloads=(wl("ns/a", "team-a-cq", 1, cpu=1, nvidia_com_gpu=1),))
    _, pending = run(st)
    assert pending["ns/a"] == ("couldn't assign flavors to pod set main: resource "
                               "nvidia.com/gpu unavailable in ClusterQueue")


def test_cluster_queue_without_cohort_cannot_borrow() -> None:
    st = state(cq("solo", group(("cpu",), ("default-flavor", {"cpu": quota(4)}))),
               team("team-b-cq", 12),
               workloads=(wl("ns/a", "solo", 1, cpu=5),))
    _, pending = run(st)
    assert "maximum capacity (4)" in pending["ns/a"]


def test_hierarchical_cohort_with_its_own_quota() -> None:
    # cohort.md: a Cohort may hold quota and have a parent. "org" holds 10 CPUs,
    # "team" (child of org) holds 2; a ClusterQueue of "team" with nominal 1 can
    # reach 1 + 2 + 10 = 13.
    org = CohortSpec("org", resource_groups=(
        group(("cpu",), ("default-flavor", {"cpu": quota(10)})),))
    child = CohortSpec("team", parent="org",
                       resource_groups=(group(("cpu",), ("default-flavor", {"cpu": quota(2)})),))
    queue = team("a", 1, cohort="team")
    st = state(queue, cohorts=(org, child),
               workloads=(wl("ns/a1", "a", 1, cpu=13), wl("ns/a2", "a", 2, cpu=1)))
    admitted, pending = run(st)
    assert admitted == {"ns/a1"}
    assert "ns/a2" in pending


def test_hierarchical_cohort_lending_limit_keeps_quota_in_the_subtree() -> None:
    # "team" lends at most 1 of its 4 to "org"; a queue under a sibling cohort can
    # only reach its own 1 + 1 lent.
    org = CohortSpec("org")
    team_x = CohortSpec("x", parent="org", resource_groups=(
        group(("cpu",), ("default-flavor", {"cpu": quota(4, lending=1)})),))
    team_y = CohortSpec("y", parent="org")
    st = state(team("qx", 0, cohort="x"), team("qy", 1, cohort="y"), cohorts=(org, team_x, team_y),
               workloads=(wl("ns/y1", "qy", 1, cpu=2), wl("ns/y2", "qy", 2, cpu=1),
                          wl("ns/x1", "qx", 3, cpu=3)))
    admitted, pending = run(st)
    assert admitted == {"ns/y1", "ns/x1"}
    assert "ns/y2" in pending
