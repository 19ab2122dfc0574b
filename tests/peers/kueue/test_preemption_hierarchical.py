"""Kueue's hierarchical (cohort tree) classic preemption table, ported case by case.

Source: kubernetes-sigs/kueue at ff69552e79ad21652c36caa97038382e55625cf7,
``pkg/scheduler/preemption/preemption_hierarchical_test.go``,
``TestHierarchicalPreemptions``: one pytest case per upstream case (id = the
upstream case name; the comment above each case gives its line and upstream's
drawing of the cohort tree, nominal quotas in parentheses). The harness is
TestPreemption's (``test_preemption``): the case's Cohorts, ClusterQueues and
admitted Workloads, dralab's ``find_targets`` for the incoming workload with the
case's flavor assignment, and the preempted workloads with their Preempted
condition's reason and message; the others unchanged, the quota snapshot too.
Upstream runs each case with the WorkloadRequestUseMergePatch gate off and on (the
API patch style); here once.
"""

# The data below is upstream's table transcribed expression by expression.
# ruff: noqa: E501

from __future__ import annotations

import pytest
from tests.peers.kueue.builders import (
    NOW,
    S,
    make_admission,
    make_cluster_queue,
    make_cohort,
    make_flavor_quotas,
    make_pod_set_assignment,
    make_workload,
    single_pod_set_assignment,
)
from tests.peers.kueue.test_preemption import JOB_UID_LABEL, check_preemption_case

base_incoming_wl = make_workload("in", "").uid("wl-in").label(JOB_UID_LABEL, "job-in")


CASES: dict[str, S] = {
    # TestHierarchicalPreemptions, case 'preempt with hierarchical advantage' (preemption_hierarchical_test.go:66)
    #
    #            R
    #      /      |
    #   C(2) q_borrowing(0)
    #  /
    # q
    "preempt with hierarchical advantage": S(
        "",
        cohorts=(
            [
                make_cohort("r"),
                make_cohort("c")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_borrowing")
                .cohort("r")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted2", "")
                .priority(0)
                .request("cpu", "2")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "2")
                    ),
                    NOW,
                )
            ]
        ),
        incoming=(base_incoming_wl.clone().priority(0).request("cpu", "2")),
        targetCQ="q",
        assignment=(
            single_pod_set_assignment(
                {"cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt"))}
            )
        ),
        wantPreempted=1,
        wantWorkloads=[
            make_workload("admitted2", "")
            .priority(0)
            .request("cpu", "2")
            .reserve_quota_at(
                make_admission("q_borrowing").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "2")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclamation",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            )
        ],
    ),
    # TestHierarchicalPreemptions, case 'avoid queues within nominal quota' (preemption_hierarchical_test.go:143)
    #
    #             R
    #      /      |         \
    #   C(2) q_borrowing(0)  q_nominal(2)
    #  /
    # q
    "avoid queues within nominal quota": S(
        "",
        cohorts=(
            [
                make_cohort("r"),
                make_cohort("c")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q_nominal")
                .cohort("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_borrowing")
                .cohort("r")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted1", "")
                .priority(-10)
                .request("cpu", "2")
                .reserve_quota_at(
                    make_admission("q_nominal").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "2")
                    ),
                    NOW,
                ),
                make_workload("admitted2", "")
                .priority(0)
                .request("cpu", "2")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "2")
                    ),
                    NOW,
                ),
            ]
        ),
        incoming=(base_incoming_wl.clone().priority(0).request("cpu", "2")),
        targetCQ="q",
        assignment=(
            single_pod_set_assignment(
                {"cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt"))}
            )
        ),
        wantPreempted=1,
        wantWorkloads=[
            make_workload("admitted2", "")
            .priority(0)
            .request("cpu", "2")
            .reserve_quota_at(
                make_admission("q_borrowing").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "2")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclamation",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            )
        ],
    ),
    # TestHierarchicalPreemptions, case 'preempt multiple with hierarchical advantage' (preemption_hierarchical_test.go:242)
    #
    #            R(0)
    #      /      |
    #   C(2) q_borrowing(0)
    #  /
    # q(0)
    "preempt multiple with hierarchical advantage": S(
        "",
        cohorts=(
            [
                make_cohort("r"),
                make_cohort("c")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_borrowing")
                .cohort("r")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted1", "")
                .priority(1)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                ),
                make_workload("admitted2", "")
                .priority(2)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                ),
            ]
        ),
        incoming=(base_incoming_wl.clone().priority(0).request("cpu", "2")),
        targetCQ="q",
        assignment=(
            single_pod_set_assignment(
                {"cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt"))}
            )
        ),
        wantPreempted=2,
        wantWorkloads=[
            make_workload("admitted1", "")
            .priority(1)
            .request("cpu", "1")
            .reserve_quota_at(
                make_admission("q_borrowing").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "1")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclamation",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            ),
            make_workload("admitted2", "")
            .priority(2)
            .request("cpu", "1")
            .reserve_quota_at(
                make_admission("q_borrowing").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "1")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclamation",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            ),
        ],
    ),
    # TestHierarchicalPreemptions, case 'preempt in cohort and own CQ' (preemption_hierarchical_test.go:348)
    #
    #        R(0)
    #      /
    #   C(3)
    #  /   \
    # q(0) q_same_cohort(0)
    "preempt in cohort and own CQ": S(
        "",
        cohorts=(
            [
                make_cohort("r"),
                make_cohort("c")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "3")),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                        BorrowWithinCohort=(
                            S(
                                "kueue.BorrowWithinCohort",
                                Policy="LowerPriority",
                                MaxPriorityThreshold=0,
                            )
                        ),
                    )
                ),
                make_cluster_queue("q_same_cohort")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted_not_preemptible", "")
                .priority(1)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q_same_cohort").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                ),
                make_workload("admitted_preemptible", "")
                .priority(0)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q_same_cohort").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "2")
                    ),
                    NOW,
                ),
                make_workload("admitted_own_queue", "")
                .priority(-1)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                ),
            ]
        ),
        incoming=(base_incoming_wl.clone().priority(1).request("cpu", "2")),
        targetCQ="q",
        assignment=(
            single_pod_set_assignment(
                {"cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt"))}
            )
        ),
        wantPreempted=2,
        wantWorkloads=[
            make_workload("admitted_own_queue", "")
            .priority(-1)
            .request("cpu", "1")
            .reserve_quota_at(
                make_admission("q").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "1")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to prioritization in the ClusterQueue; preemptor path: /r/c/q; preemptee path: /r/c/q",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InClusterQueue",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to prioritization in the ClusterQueue; preemptor path: /r/c/q; preemptee path: /r/c/q",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            ),
            make_workload("admitted_preemptible", "")
            .priority(0)
            .request("cpu", "1")
            .reserve_quota_at(
                make_admission("q_same_cohort").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "2")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort while borrowing; preemptor path: /r/c/q; preemptee path: /r/c/q_same_cohort",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclaimWhileBorrowing",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort while borrowing; preemptor path: /r/c/q; preemptee path: /r/c/q_same_cohort",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            ),
        ],
    ),
    # TestHierarchicalPreemptions, case 'prefer to preempt hierarchical candidate' (preemption_hierarchical_test.go:472)
    #
    #            R(0)
    #      /      |
    #   C(2) q_borrowing(0)
    #  /
    # q(0)
    "prefer to preempt hierarchical candidate": S(
        "",
        cohorts=(
            [
                make_cohort("r"),
                make_cohort("c")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_borrowing")
                .cohort("r")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted_borrowing", "")
                .priority(1)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                ),
                make_workload("admitted_same_queue", "")
                .priority(-2)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                ),
            ]
        ),
        incoming=(base_incoming_wl.clone().priority(0).request("cpu", "1")),
        targetCQ="q",
        assignment=(
            single_pod_set_assignment(
                {"cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt"))}
            )
        ),
        wantPreempted=1,
        wantWorkloads=[
            make_workload("admitted_borrowing", "")
            .priority(1)
            .request("cpu", "1")
            .reserve_quota_at(
                make_admission("q_borrowing").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "1")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclamation",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            )
        ],
    ),
    # TestHierarchicalPreemptions, case 'forced to preempt priority candidate' (preemption_hierarchical_test.go:563)
    #
    #           R(0)
    #      /      |
    #   C(2)   q_nominal(2)
    #  /   \
    # q(0) q_same_cohort(0)
    "forced to preempt priority candidate": S(
        "",
        cohorts=(
            [
                make_cohort("r"),
                make_cohort("c")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                        BorrowWithinCohort=(
                            S(
                                "kueue.BorrowWithinCohort",
                                Policy="LowerPriority",
                                MaxPriorityThreshold=0,
                            )
                        ),
                    )
                ),
                make_cluster_queue("q_nominal")
                .cohort("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_same_cohort")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted_nominal", "")
                .priority(-10)
                .request("cpu", "2")
                .reserve_quota_at(
                    make_admission("q_nominal").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "2")
                    ),
                    NOW,
                ),
                make_workload("admitted_same_cohort", "")
                .priority(-1)
                .request("cpu", "2")
                .reserve_quota_at(
                    make_admission("q_same_cohort").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "2")
                    ),
                    NOW,
                ),
            ]
        ),
        incoming=(base_incoming_wl.clone().priority(0).request("cpu", "2")),
        targetCQ="q",
        assignment=(
            single_pod_set_assignment(
                {"cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt"))}
            )
        ),
        wantPreempted=1,
        wantWorkloads=[
            make_workload("admitted_same_cohort", "")
            .priority(-1)
            .request("cpu", "2")
            .reserve_quota_at(
                make_admission("q_same_cohort").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "2")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort while borrowing; preemptor path: /r/c/q; preemptee path: /r/c/q_same_cohort",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclaimWhileBorrowing",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort while borrowing; preemptor path: /r/c/q; preemptee path: /r/c/q_same_cohort",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            )
        ],
    ),
    # TestHierarchicalPreemptions, case 'incoming workload fits in CQ nominal quota' (preemption_hierarchical_test.go:668)
    #
    #           R(0)
    #      /      |
    #   C(2)   q_borrowing(0)
    #  /    \
    # q(4)  q_same_cohort(0)
    #
    "incoming workload fits in CQ nominal quota": S(
        "",
        cohorts=(
            [
                make_cohort("r"),
                make_cohort("c")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q")
                .cohort("c")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_borrowing")
                .cohort("r")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_same_cohort")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted_borrowing", "")
                .priority(10)
                .request("cpu", "3")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "3")
                    ),
                    NOW,
                ),
                make_workload("admitted_same_cohort", "")
                .priority(10)
                .request("cpu", "3")
                .reserve_quota_at(
                    make_admission("q_same_cohort").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "3")
                    ),
                    NOW,
                ),
            ]
        ),
        incoming=(base_incoming_wl.clone().priority(0).request("cpu", "4")),
        targetCQ="q",
        assignment=(
            single_pod_set_assignment(
                {"cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt"))}
            )
        ),
        wantPreempted=2,
        wantWorkloads=[
            make_workload("admitted_borrowing", "")
            .priority(10)
            .request("cpu", "3")
            .reserve_quota_at(
                make_admission("q_borrowing").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "3")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclamation",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            ),
            make_workload("admitted_same_cohort", "")
            .priority(10)
            .request("cpu", "3")
            .reserve_quota_at(
                make_admission("q_same_cohort").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "3")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/c/q_same_cohort",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclamation",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/c/q_same_cohort",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            ),
        ],
    ),
    # TestHierarchicalPreemptions, case 'preempt hierarchical and priority candidates' (preemption_hierarchical_test.go:782)
    #
    #           R(1)
    #      /      |
    #   C(4)   q_borrowing(0)
    #  /    \
    # q(0)  q_same_cohort(0)
    #
    "preempt hierarchical and priority candidates": S(
        "",
        cohorts=(
            [
                make_cohort("r").resource_group(make_flavor_quotas("default").resource("cpu", "1")),
                make_cohort("c")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4")),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="LowerPriority",
                        BorrowWithinCohort=(
                            S(
                                "kueue.BorrowWithinCohort",
                                Policy="LowerPriority",
                                MaxPriorityThreshold=0,
                            )
                        ),
                    )
                ),
                make_cluster_queue("q_borrowing")
                .cohort("r")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_same_cohort")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted_borrowing", "")
                .priority(-1)
                .request("cpu", "2")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "2")
                    ),
                    NOW,
                ),
                make_workload("admitted_same_cohort_preemptible", "")
                .priority(-1)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q_same_cohort").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                ),
                make_workload("admitted_borrowing_not_preemptible", "")
                .priority(1)
                .request("cpu", "2")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "2")
                    ),
                    NOW,
                ),
            ]
        ),
        incoming=(base_incoming_wl.clone().priority(0).request("cpu", "3")),
        targetCQ="q",
        assignment=(
            single_pod_set_assignment(
                {"cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt"))}
            )
        ),
        wantPreempted=2,
        wantWorkloads=[
            make_workload("admitted_borrowing", "")
            .priority(-1)
            .request("cpu", "2")
            .reserve_quota_at(
                make_admission("q_borrowing").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "2")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclamation",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            ),
            make_workload("admitted_same_cohort_preemptible", "")
            .priority(-1)
            .request("cpu", "1")
            .reserve_quota_at(
                make_admission("q_same_cohort").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "1")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort while borrowing; preemptor path: /r/c/q; preemptee path: /r/c/q_same_cohort",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclaimWhileBorrowing",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort while borrowing; preemptor path: /r/c/q; preemptee path: /r/c/q_same_cohort",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            ),
        ],
    ),
    # TestHierarchicalPreemptions, case 'preempt hierarchical candidates and inside CQ' (preemption_hierarchical_test.go:916)
    #
    #           R(1)
    #      /      |
    #   C(4)   q_borrowing(0)
    #  /    \
    # q(0)  q_same_cohort(0)
    #
    "preempt hierarchical candidates and inside CQ": S(
        "",
        cohorts=(
            [
                make_cohort("r").resource_group(make_flavor_quotas("default").resource("cpu", "1")),
                make_cohort("c")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4")),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="LowerPriority",
                        BorrowWithinCohort=(
                            S(
                                "kueue.BorrowWithinCohort",
                                Policy="LowerPriority",
                                MaxPriorityThreshold=0,
                            )
                        ),
                    )
                ),
                make_cluster_queue("q_borrowing")
                .cohort("r")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_same_cohort")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted_borrowing", "")
                .priority(-1)
                .request("cpu", "2")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "2")
                    ),
                    NOW,
                ),
                make_workload("admitted_same_queue_preemptible", "")
                .priority(-1)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                ),
                make_workload("admitted_borrowing_not_preemptible", "")
                .priority(1)
                .request("cpu", "2")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "2")
                    ),
                    NOW,
                ),
            ]
        ),
        incoming=(base_incoming_wl.clone().priority(0).request("cpu", "3")),
        targetCQ="q",
        assignment=(
            single_pod_set_assignment(
                {"cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt"))}
            )
        ),
        wantPreempted=2,
        wantWorkloads=[
            make_workload("admitted_borrowing", "")
            .priority(-1)
            .request("cpu", "2")
            .reserve_quota_at(
                make_admission("q_borrowing").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "2")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclamation",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            ),
            make_workload("admitted_same_queue_preemptible", "")
            .priority(-1)
            .request("cpu", "1")
            .reserve_quota_at(
                make_admission("q").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "1")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to prioritization in the ClusterQueue; preemptor path: /r/c/q; preemptee path: /r/c/q",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InClusterQueue",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to prioritization in the ClusterQueue; preemptor path: /r/c/q; preemptee path: /r/c/q",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            ),
        ],
    ),
    # TestHierarchicalPreemptions, case 'reclaim nominal quota from lowest priority workload, excluding non-borrowing' (preemption_hierarchical_test.go:1049)
    #
    #            R(0)
    #      /      |          \
    #   C(3) q_borrowing(0)  q_nominal(2)
    #  /
    # q(0)
    "reclaim nominal quota from lowest priority workload, excluding non-borrowing": S(
        "",
        cohorts=(
            [
                make_cohort("r"),
                make_cohort("c")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "3")),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_borrowing")
                .cohort("r")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_nominal")
                .cohort("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted_borrowing_prio_8", "")
                .priority(8)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                ),
                make_workload("admitted_borrowing_prio_9", "")
                .priority(9)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                ),
                make_workload("admitted_borrowing_prio_10", "")
                .priority(9)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                ),
                make_workload("admitted_nominal", "")
                .priority(-2)
                .request("cpu", "2")
                .reserve_quota_at(
                    make_admission("q_nominal").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "2")
                    ),
                    NOW,
                ),
            ]
        ),
        incoming=(base_incoming_wl.clone().priority(0).request("cpu", "1")),
        targetCQ="q",
        assignment=(
            single_pod_set_assignment(
                {"cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt"))}
            )
        ),
        wantPreempted=1,
        wantWorkloads=[
            make_workload("admitted_borrowing_prio_8", "")
            .priority(8)
            .request("cpu", "1")
            .reserve_quota_at(
                make_admission("q_borrowing").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "1")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclamation",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            )
        ],
    ),
    # TestHierarchicalPreemptions, case 'infeasible preemption all available workloads in pruned subtrees' (preemption_hierarchical_test.go:1176)
    #
    #                  R
    #            /            \
    #      C(2)                   C_other(2)
    #     /    \                     |
    #    q(0)  q_same_cohort(0)   q_other(0)
    "infeasible preemption all available workloads in pruned subtrees": S(
        "",
        cohorts=(
            [
                make_cohort("r"),
                make_cohort("c")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
                make_cohort("c_other")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q_other")
                .cohort("c_other")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_same_cohort")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted_other_1", "")
                .priority(-10)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q_other").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                ),
                make_workload("admitted_other_2", "")
                .priority(-10)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q_other").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                ),
                make_workload("admitted_same_cohort", "")
                .priority(0)
                .request("cpu", "2")
                .reserve_quota_at(
                    make_admission("q_same_cohort").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "2")
                    ),
                    NOW,
                ),
            ]
        ),
        incoming=(base_incoming_wl.clone().priority(0).request("cpu", "2")),
        targetCQ="q",
        assignment=(
            single_pod_set_assignment(
                {"cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt"))}
            )
        ),
        wantWorkloads=[],
    ),
    # TestHierarchicalPreemptions, case 'hiearchical preemption with multiple resources' (preemption_hierarchical_test.go:1277)
    #
    #          R(3CPU, 0Gi)
    #      /      |
    #   C(4CPU,4Gi) q_borrowing(0)
    #  /    \
    # q(0)   q_same_cohort(0)
    "hiearchical preemption with multiple resources": S(
        "",
        cohorts=(
            [
                make_cohort("r").resource_group(make_flavor_quotas("default").resource("cpu", "3")),
                make_cohort("c")
                .parent("r")
                .resource_group(
                    make_flavor_quotas("default").resource("cpu", "4").resource("memory", "4Gi")
                ),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_borrowing")
                .cohort("r")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_same_cohort")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted_borrowing", "")
                .priority(0)
                .request("cpu", "3")
                .request("memory", "1Gi")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main")
                        .assignment("cpu", "default", "3")
                        .assignment("memory", "default", "1Gi")
                    ),
                    NOW,
                ),
                make_workload("admitted_same_cohort", "")
                .priority(-2)
                .request("cpu", "1")
                .request("memory", "3Gi")
                .reserve_quota_at(
                    make_admission("q_same_cohort").pod_sets(
                        make_pod_set_assignment("main")
                        .assignment("cpu", "default", "1")
                        .assignment("memory", "default", "3Gi")
                    ),
                    NOW,
                ),
            ]
        ),
        incoming=(
            base_incoming_wl.clone().priority(-2).request("cpu", "2").request("memory", "1Gi")
        ),
        targetCQ="q",
        assignment=(
            single_pod_set_assignment(
                {
                    "cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt")),
                    "memory": (
                        S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt")
                    ),
                }
            )
        ),
        wantPreempted=1,
        wantWorkloads=[
            make_workload("admitted_borrowing", "")
            .priority(0)
            .request("cpu", "3")
            .request("memory", "1Gi")
            .reserve_quota_at(
                make_admission("q_borrowing").pod_sets(
                    make_pod_set_assignment("main")
                    .assignment("cpu", "default", "3")
                    .assignment("memory", "default", "1Gi")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclamation",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            )
        ],
    ),
    # TestHierarchicalPreemptions, case 'prefer to preempt evicted workloads' (preemption_hierarchical_test.go:1393)
    #
    #           R(0)
    #      /      |
    #   C(2)   q_borrowing(0)
    #  /    \
    # q(0)  q_same_cohort(0)
    #
    "prefer to preempt evicted workloads": S(
        "",
        cohorts=(
            [
                make_cohort("r"),
                make_cohort("c")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                        BorrowWithinCohort=(
                            S(
                                "kueue.BorrowWithinCohort",
                                Policy="LowerPriority",
                                MaxPriorityThreshold=0,
                            )
                        ),
                    )
                ),
                make_cluster_queue("q_borrowing")
                .cohort("r")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_same_cohort")
                .cohort("c")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted_borrowing", "")
                .priority(-10)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                ),
                make_workload("evicted_same_cohort", "")
                .priority(-1)
                .request("cpu", "1")
                .reserve_quota_at(
                    make_admission("q_same_cohort").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "1")
                    ),
                    NOW,
                )
                .condition(
                    S("metav1.Condition", Type="Evicted", Status="True", LastTransitionTime=NOW)
                ),
            ]
        ),
        incoming=(base_incoming_wl.clone().priority(0).request("cpu", "1")),
        targetCQ="q",
        assignment=(
            single_pod_set_assignment(
                {"cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt"))}
            )
        ),
        wantPreempted=1,
        wantWorkloads=[
            make_workload("evicted_same_cohort", "")
            .priority(-1)
            .request("cpu", "1")
            .reserve_quota_at(
                make_admission("q_same_cohort").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "1")
                ),
                NOW,
            )
            .condition(S("metav1.Condition", Type="Evicted", Status="True", LastTransitionTime=NOW))
        ],
    ),
    # TestHierarchicalPreemptions, case 'respect lending limits' (preemption_hierarchical_test.go:1491)
    #
    #           R(0)
    #      /      |
    #   C(2)   q_borrowing(0)
    #  /
    # q(3, lending limit 2)
    #
    "respect lending limits": S(
        "",
        cohorts=(
            [
                make_cohort("r"),
                make_cohort("c")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q")
                .cohort("c")
                .resource_group(make_flavor_quotas("default").resource("cpu", "3", "", "2"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q_borrowing")
                .cohort("r")
                .resource_group(make_flavor_quotas("default"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted_borrowing", "")
                .priority(0)
                .request("cpu", "4")
                .reserve_quota_at(
                    make_admission("q_borrowing").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "4")
                    ),
                    NOW,
                )
            ]
        ),
        incoming=(base_incoming_wl.clone().priority(-2).request("cpu", "5")),
        targetCQ="q",
        assignment=(
            single_pod_set_assignment(
                {"cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt"))}
            )
        ),
        wantPreempted=1,
        wantWorkloads=[
            make_workload("admitted_borrowing", "")
            .priority(0)
            .request("cpu", "4")
            .reserve_quota_at(
                make_admission("q_borrowing").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "4")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclamation",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            )
        ],
    ),
    # TestHierarchicalPreemptions, case 'reclaim in complex hierarchy' (preemption_hierarchical_test.go:1575)
    #                                r
    #                             /      \
    #                          c11        c12
    #                       /   |   \       \
    #                    c21   c22    c23    q1
    #                  /  |     |     |
    #                c31  c32   q3    q2
    #              /      |
    #            q5       q4
    # 	quotas:
    # 	4: c11, c12, c21, c22, c23, c32, c31
    # 	0: q1, q3, q4, q5
    "reclaim in complex hierarchy": S(
        "",
        cohorts=(
            [
                make_cohort("r"),
                make_cohort("c11")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4")),
                make_cohort("c12")
                .parent("r")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4")),
                make_cohort("c21")
                .parent("c11")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4")),
                make_cohort("c22")
                .parent("c11")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4")),
                make_cohort("c23")
                .parent("c11")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4")),
                make_cohort("c31")
                .parent("c21")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4")),
                make_cohort("c32")
                .parent("c21")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4")),
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("q1")
                .cohort("c12")
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q2")
                .cohort("c23")
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q3")
                .cohort("c22")
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q4")
                .cohort("c32")
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("q5")
                .cohort("c31")
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
            ]
        ),
        admitted=(
            [
                make_workload("admitted_borrowing_1", "")
                .priority(-6)
                .request("cpu", "4")
                .reserve_quota_at(
                    make_admission("q1").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "4")
                    ),
                    NOW,
                ),
                make_workload("admitted_borrowing_2", "")
                .priority(-5)
                .request("cpu", "4")
                .reserve_quota_at(
                    make_admission("q1").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "4")
                    ),
                    NOW,
                ),
                make_workload("admitted_borrowing_3", "")
                .priority(-9)
                .request("cpu", "4")
                .reserve_quota_at(
                    make_admission("q2").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "4")
                    ),
                    NOW,
                ),
                make_workload("admitted_borrowing_4", "")
                .priority(-10)
                .request("cpu", "4")
                .reserve_quota_at(
                    make_admission("q2").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "4")
                    ),
                    NOW,
                ),
                make_workload("admitted_borrowing_5", "")
                .priority(-4)
                .request("cpu", "4")
                .reserve_quota_at(
                    make_admission("q3").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "4")
                    ),
                    NOW,
                ),
                make_workload("admitted_borrowing_6", "")
                .priority(-3)
                .request("cpu", "3")
                .reserve_quota_at(
                    make_admission("q3").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "3")
                    ),
                    NOW,
                ),
                make_workload("admitted_borrowing_7", "")
                .priority(4)
                .request("cpu", "2")
                .reserve_quota_at(
                    make_admission("q4").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "2")
                    ),
                    NOW,
                ),
                make_workload("admitted_borrowing_8", "")
                .priority(2)
                .request("cpu", "3")
                .reserve_quota_at(
                    make_admission("q4").pod_sets(
                        make_pod_set_assignment("main").assignment("cpu", "default", "3")
                    ),
                    NOW,
                ),
            ]
        ),
        incoming=(base_incoming_wl.clone().priority(-2).request("cpu", "7")),
        targetCQ="q5",
        assignment=(
            single_pod_set_assignment(
                {"cpu": (S("flavorassigner.FlavorAssignment", Name="default", Mode="Preempt"))}
            )
        ),
        wantPreempted=2,  # only one of workloads from q2 will be preempted because  # after preempting the first one, the usage of cohort  # c23 will be back within nominal quota
        wantWorkloads=[
            make_workload("admitted_borrowing_1", "")
            .priority(-6)
            .request("cpu", "4")
            .reserve_quota_at(
                make_admission("q1").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "4")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c11/c21/c31/q5; preemptee path: /r/c12/q1",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclamation",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c11/c21/c31/q5; preemptee path: /r/c12/q1",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            ),
            make_workload("admitted_borrowing_4", "")
            .priority(-10)
            .request("cpu", "4")
            .reserve_quota_at(
                make_admission("q2").pod_sets(
                    make_pod_set_assignment("main").assignment("cpu", "default", "4")
                ),
                NOW,
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Evicted",
                    Status="True",
                    Reason="Preempted",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c11/c21/c31/q5; preemptee path: /r/c11/c23/q2",
                    LastTransitionTime=NOW,
                )
            )
            .condition(
                S(
                    "metav1.Condition",
                    Type="Preempted",
                    Status="True",
                    Reason="InCohortReclamation",
                    Message="Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c11/c21/c31/q5; preemptee path: /r/c11/c23/q2",
                    LastTransitionTime=NOW,
                )
            )
            .scheduling_stats_eviction(
                S("kueue.WorkloadSchedulingStatsEviction", Reason="Preempted", Count=1)
            ),
        ],
    ),
}


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
def test_hierarchical_preemptions(name: str) -> None:
    """TestHierarchicalPreemptions: the preempted workloads, their reasons and messages."""
    check_preemption_case(CASES[name])
