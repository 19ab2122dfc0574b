"""Kueue's fair-sharing preemption tables, ported case by case.

Source: kubernetes-sigs/kueue at ff69552e79ad21652c36caa97038382e55625cf7,
``pkg/scheduler/preemption/preemption_fair_test.go``:

* ``TestFairPreemptions``: one pytest case per upstream case (id = the upstream
  case name; the comment above each case gives its line). Each builds the case's
  ClusterQueues, Cohorts and admitted Workloads with the wrappers of ``builders``
  (Kueue's, in snake_case), runs dralab's ``find_targets`` with fair sharing on
  (the case's preemption strategies, by default LessThanOrEqualToFinalShare then
  LessThanInitialShare) for the incoming workload in the target ClusterQueue, its
  cpu assigned to ``default`` (or the case's assignmentFlavor) in mode Preempt, and
  compares what upstream compares: the set of (workload key, reason) targets, and
  that the quota snapshot is left as it was.
* ``TestFairPreemptionSkipsUnsatisfiableTournament``: its outcome (no targets) is
  checked; the counts of strategy evaluations it reads from V(4) log lines are
  Kueue's logging, not a decision (see the case).

And ``pkg/scheduler/preemption/fairsharing/ordering_test.go``,
``TestMakeClusterQueueOrdering``: one pytest case per upstream case, the order in
which dralab's ``TargetQueueOrdering`` (Kueue's TargetClusterQueueOrdering) yields
target ClusterQueues, with the case's drop/pop actions.

Not ported: ``preemption_fair_log_test.go`` (the V(4) log entries of the strategies,
Kueue's logging, no decision).
"""

# The data below is upstream's table transcribed expression by expression.
# ruff: noqa: E501

from __future__ import annotations

import pytest
from tests.peers.kueue.builders import (
    NOW,
    S,
    build_state,
    make_cluster_queue,
    make_cohort,
    make_flavor_quotas,
    make_resource_flavor,
    make_workload,
    run_preemption,
    set_of,
    single_pod_set_assignment,
    target_key_reason,
)

from dralab.queueing.kueue.preemption_fair import TargetQueueOrdering
from dralab.queueing.kueue.preemption_sim import VictimCandidate

BASE_CQS = [
    make_cluster_queue("a")
    .cohort("all")
    .resource_group(make_flavor_quotas("default").resource("cpu", "3"))
    .preemption(
        S(
            "kueue.ClusterQueuePreemption",
            WithinClusterQueue="LowerPriority",
            ReclaimWithinCohort="Any",
            BorrowWithinCohort=(
                S("kueue.BorrowWithinCohort", Policy="LowerPriority", MaxPriorityThreshold=-3)
            ),
        )
    ),
    make_cluster_queue("b")
    .cohort("all")
    .resource_group(make_flavor_quotas("default").resource("cpu", "3"))
    .preemption(
        S(
            "kueue.ClusterQueuePreemption",
            WithinClusterQueue="LowerPriority",
            ReclaimWithinCohort="Any",
            BorrowWithinCohort=(
                S("kueue.BorrowWithinCohort", Policy="LowerPriority", MaxPriorityThreshold=-3)
            ),
        )
    ),
    make_cluster_queue("c")
    .cohort("all")
    .resource_group(make_flavor_quotas("default").resource("cpu", "3"))
    .preemption(
        S(
            "kueue.ClusterQueuePreemption",
            WithinClusterQueue="LowerPriority",
            ReclaimWithinCohort="Any",
            BorrowWithinCohort=(
                S("kueue.BorrowWithinCohort", Policy="LowerPriority", MaxPriorityThreshold=-3)
            ),
        )
    ),
    make_cluster_queue("preemptible")
    .cohort("all")
    .resource_group(make_flavor_quotas("default").resource("cpu", "0")),
]

unit_wl = make_workload("unit", "").request("cpu", "1")


CASES: dict[str, S] = {
    # TestFairPreemptions, case 'reclaim nominal from user using the most' (preemption_fair_test.go:108)
    "reclaim nominal from user using the most": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                unit_wl.clone().name("a1").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a2").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a3").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b2").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b3").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b4").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b5").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("c1").simple_reserve_quota("c", "default", NOW),
            ]
        ),
        incoming=(unit_wl.clone().name("c_incoming")),
        targetCQ="c",
        wantPreempted=(set_of(target_key_reason("/b1", "InCohortReclamation"))),
    ),
    # TestFairPreemptions, case "can reclaim from queue using less, if taking the latest workload from user using the most isn't enough" (preemption_fair_test.go:125)
    "can reclaim from queue using less, if taking the latest workload from user using the most isn't enough": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                make_workload("a1", "")
                .request("cpu", "3")
                .simple_reserve_quota("a", "default", NOW),
                make_workload("a2", "")
                .request("cpu", "1")
                .simple_reserve_quota("a", "default", NOW),
                make_workload("b1", "")
                .request("cpu", "2")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("b2", "")
                .request("cpu", "3")
                .simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(
            make_workload("c_incoming", "")
            .request("cpu", "3")
            .simple_reserve_quota("a", "default", NOW)
        ),
        targetCQ="c",
        wantPreempted=(set_of(target_key_reason("/a1", "InCohortReclamation"))),
    ),
    # TestFairPreemptions, case 'reclaim borrowable quota from user using the most' (preemption_fair_test.go:137)
    "reclaim borrowable quota from user using the most": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                unit_wl.clone().name("a1").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a2").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a3").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b2").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b3").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b4").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b5").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("c1").simple_reserve_quota("c", "default", NOW),
            ]
        ),
        incoming=(unit_wl.clone().name("a_incoming")),
        targetCQ="a",
        wantPreempted=(set_of(target_key_reason("/b1", "InCohortFairSharing"))),
    ),
    # TestFairPreemptions, case 'preempt one from each CQ borrowing' (preemption_fair_test.go:154)
    "preempt one from each CQ borrowing": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                make_workload("a1", "")
                .request("cpu", "0.5")
                .simple_reserve_quota("a", "default", NOW),
                make_workload("a2", "")
                .request("cpu", "0.5")
                .simple_reserve_quota("a", "default", NOW),
                make_workload("a3", "")
                .request("cpu", "3")
                .simple_reserve_quota("a", "default", NOW),
                make_workload("b1", "")
                .request("cpu", "0.5")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("b2", "")
                .request("cpu", "0.5")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("b3", "")
                .request("cpu", "3")
                .simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("c_incoming", "").request("cpu", "2")),
        targetCQ="c",
        wantPreempted=(
            set_of(
                target_key_reason("/a1", "InCohortReclamation"),
                target_key_reason("/b1", "InCohortReclamation"),
            )
        ),
    ),
    # TestFairPreemptions, case "can't preempt when everyone under nominal" (preemption_fair_test.go:171)
    "can't preempt when everyone under nominal": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                unit_wl.clone().name("a1").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a2").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a3").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b2").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b3").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("c1").simple_reserve_quota("c", "default", NOW),
                unit_wl.clone().name("c2").simple_reserve_quota("c", "default", NOW),
                unit_wl.clone().name("c3").simple_reserve_quota("c", "default", NOW),
            ]
        ),
        incoming=(unit_wl.clone().name("c_incoming")),
        targetCQ="c",
    ),
    # TestFairPreemptions, case "can't preempt when it would switch the imbalance" (preemption_fair_test.go:187)
    "can't preempt when it would switch the imbalance": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                unit_wl.clone().name("a1").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a2").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a3").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b2").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b3").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b4").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b5").simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "2")),
        targetCQ="a",
    ),
    # TestFairPreemptions, case 'can preempt lower priority workloads from same CQ' (preemption_fair_test.go:202)
    "can preempt lower priority workloads from same CQ": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                unit_wl.clone()
                .name("a1_low")
                .priority(-1)
                .simple_reserve_quota("a", "default", NOW),
                unit_wl.clone()
                .name("a2_low")
                .priority(-1)
                .simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a3").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a4").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b2").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b3").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b4").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b5").simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "2")),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/a1_low", "InClusterQueue"),
                target_key_reason("/a2_low", "InClusterQueue"),
            )
        ),
    ),
    # TestFairPreemptions, case 'can preempt a combination of same CQ and highest user' (preemption_fair_test.go:222)
    "can preempt a combination of same CQ and highest user": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                unit_wl.clone()
                .name("a_low")
                .priority(-1)
                .simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a2").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a3").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b2").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b3").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b4").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b5").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b6").simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "2")),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/a_low", "InClusterQueue"),
                target_key_reason("/b1", "InCohortFairSharing"),
            )
        ),
    ),
    # TestFairPreemptions, case 'preempt huge workload if there is no other option, as long as the target CQ gets a lower share' (preemption_fair_test.go:242)
    "preempt huge workload if there is no other option, as long as the target CQ gets a lower share": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [make_workload("b1", "").request("cpu", "9").simple_reserve_quota("b", "default", NOW)]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "2")),
        targetCQ="a",
        wantPreempted=(set_of(target_key_reason("/b1", "InCohortReclamation"))),
    ),
    # TestFairPreemptions, case "can't preempt huge workload if the incoming is also huge" (preemption_fair_test.go:251)
    "can't preempt huge workload if the incoming is also huge": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                make_workload("a1", "")
                .request("cpu", "2")
                .simple_reserve_quota("a", "default", NOW),
                make_workload("b1", "")
                .request("cpu", "7")
                .simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "5")),
        targetCQ="a",
    ),
    # TestFairPreemptions, case "can't preempt 2 smaller workloads if the incoming is huge" (preemption_fair_test.go:260)
    "can't preempt 2 smaller workloads if the incoming is huge": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                make_workload("b1", "")
                .request("cpu", "2")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("b2", "")
                .request("cpu", "2")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("b3", "")
                .request("cpu", "3")
                .simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "6")),
        targetCQ="a",
    ),
    # TestFairPreemptions, case 'preempt from target and others even if over nominal' (preemption_fair_test.go:270)
    "preempt from target and others even if over nominal": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                make_workload("a1_low", "")
                .priority(-1)
                .request("cpu", "2")
                .simple_reserve_quota("a", "default", NOW),
                make_workload("a2_low", "")
                .priority(-1)
                .request("cpu", "1")
                .simple_reserve_quota("a", "default", NOW),
                make_workload("b1", "")
                .request("cpu", "3")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("b2", "")
                .request("cpu", "3")
                .simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "4")),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/a1_low", "InClusterQueue"),
                target_key_reason("/b1", "InCohortFairSharing"),
            )
        ),
    ),
    # TestFairPreemptions, case "prefer to preempt workloads that don't make the target CQ have the biggest share" (preemption_fair_test.go:285)
    "prefer to preempt workloads that don't make the target CQ have the biggest share": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                make_workload("b1", "")
                .request("cpu", "2")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("b2", "")
                .request("cpu", "1")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("b3", "")
                .request("cpu", "2")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("c1", "")
                .request("cpu", "1")
                .simple_reserve_quota("c", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "3.5")),
        targetCQ="a",
        wantPreempted=(
            set_of(target_key_reason("/b2", "InCohortFairSharing"))
        ),  # It would have been possible to preempt "/b1" under rule S2-b, but S2-a was possible first.
    ),
    # TestFairPreemptions, case 'preempt from different cluster queues if the end result has a smaller max share' (preemption_fair_test.go:298)
    "preempt from different cluster queues if the end result has a smaller max share": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                make_workload("b1", "")
                .request("cpu", "2")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("b2", "")
                .request("cpu", "2.5")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("c1", "")
                .request("cpu", "2")
                .simple_reserve_quota("c", "default", NOW),
                make_workload("c2", "")
                .request("cpu", "2.5")
                .simple_reserve_quota("c", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "3.5")),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/b1", "InCohortFairSharing"),
                target_key_reason("/c1", "InCohortFairSharing"),
            )
        ),
    ),
    # TestFairPreemptions, case 'scenario above does not flap' (preemption_fair_test.go:313)
    "scenario above does not flap": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                make_workload("a1", "")
                .request("cpu", "3.5")
                .simple_reserve_quota("a", "default", NOW),
                make_workload("b2", "")
                .request("cpu", "2.5")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("c2", "")
                .request("cpu", "2.5")
                .simple_reserve_quota("c", "default", NOW),
            ]
        ),
        incoming=(make_workload("b_incoming", "").request("cpu", "2")),
        targetCQ="b",
    ),
    # TestFairPreemptions, case 'cannot preempt if it would make the candidate CQ go under nominal after preempting one element' (preemption_fair_test.go:323)
    "cannot preempt if it would make the candidate CQ go under nominal after preempting one element": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                make_workload("b1", "")
                .request("cpu", "3")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("b2", "")
                .request("cpu", "3")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("c1", "")
                .request("cpu", "3")
                .simple_reserve_quota("c", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "4")),
        targetCQ="a",
    ),
    # TestFairPreemptions, case 'workloads under priority threshold not capriciously preempted' (preemption_fair_test.go:338)
    "workloads under priority threshold not capriciously preempted": S(
        "",
        clusterQueues=BASE_CQS,
        admitted=(
            [
                unit_wl.clone().name("a1").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a2").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a3").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b2").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b3").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone()
                .name("preemptible1")
                .priority(-3)
                .simple_reserve_quota("preemptible", "default", NOW),
                unit_wl.clone()
                .name("preemptible2")
                .priority(-3)
                .simple_reserve_quota("preemptible", "default", NOW),
                unit_wl.clone()
                .name("preemptible3")
                .priority(-3)
                .simple_reserve_quota("preemptible", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "2")),
        targetCQ="a",
        wantPreempted=None,
    ),
    # TestFairPreemptions, case 'preempt lower priority first, even if big' (preemption_fair_test.go:355)
    "preempt lower priority first, even if big": S(
        "",
        clusterQueues=BASE_CQS,
        strategies=(["LessThanInitialShare"]),
        admitted=(
            [
                make_workload("a1", "")
                .request("cpu", "3")
                .simple_reserve_quota("a", "default", NOW),
                make_workload("b_low", "")
                .priority(0)
                .request("cpu", "5")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("b_high", "")
                .priority(1)
                .request("cpu", "1")
                .simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "1")),
        targetCQ="a",
        wantPreempted=(set_of(target_key_reason("/b_low", "InCohortFairSharing"))),
    ),
    # TestFairPreemptions, case "preempt workload that doesn't transfer the imbalance, even if high priority" (preemption_fair_test.go:367)
    "preempt workload that doesn't transfer the imbalance, even if high priority": S(
        "",
        clusterQueues=BASE_CQS,
        strategies=(["LessThanOrEqualToFinalShare"]),
        admitted=(
            [
                make_workload("a1", "")
                .request("cpu", "3")
                .simple_reserve_quota("a", "default", NOW),
                make_workload("b_low", "")
                .priority(0)
                .request("cpu", "5")
                .simple_reserve_quota("b", "default", NOW),
                make_workload("b_high", "")
                .priority(1)
                .request("cpu", "1")
                .simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "1")),
        targetCQ="a",
        wantPreempted=(set_of(target_key_reason("/b_high", "InCohortFairSharing"))),
    ),
    # TestFairPreemptions, case 'CQ with higher weight can preempt more' (preemption_fair_test.go:379)
    "CQ with higher weight can preempt more": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("a")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "3"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                )
                .fair_weight("2"),
                make_cluster_queue("b")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "3"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("c")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "3"))
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
                unit_wl.clone().name("a1").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a2").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a3").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b2").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b3").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b4").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b5").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b6").simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "2")),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/b1", "InCohortFairSharing"),
                target_key_reason("/b2", "InCohortFairSharing"),
            )
        ),
    ),
    # TestFairPreemptions, case 'can preempt anything borrowing from CQ with 0 weight' (preemption_fair_test.go:428)
    "can preempt anything borrowing from CQ with 0 weight": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("a")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "3"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("b")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "3"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                )
                .fair_weight("0"),
                make_cluster_queue("c")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "3"))
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
                unit_wl.clone().name("a1").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a2").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a3").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b2").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b3").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b4").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b5").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b6").simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "3")),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/b1", "InCohortFairSharing"),
                target_key_reason("/b2", "InCohortFairSharing"),
                target_key_reason("/b3", "InCohortFairSharing"),
            )
        ),
    ),
    # TestFairPreemptions, case "can't preempt nominal from CQ with 0 weight" (preemption_fair_test.go:478)
    "can't preempt nominal from CQ with 0 weight": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("a")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "3"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                ),
                make_cluster_queue("b")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "3"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        WithinClusterQueue="LowerPriority",
                        ReclaimWithinCohort="Any",
                    )
                )
                .fair_weight("0"),
            ]
        ),
        admitted=(
            [
                unit_wl.clone().name("a1").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a2").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a3").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b2").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b3").simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(unit_wl.clone().name("a_incoming")),
        targetCQ="a",
    ),
    # TestFairPreemptions, case "can't preempt nominal from Cohort with 0 weight" (preemption_fair_test.go:511)
    "can't preempt nominal from Cohort with 0 weight": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("left-cq")
                .cohort("root")
                .resource_group(make_flavor_quotas("default").resource("cpu", "0"))
                .preemption(S("kueue.ClusterQueuePreemption", ReclaimWithinCohort="Any")),
                make_cluster_queue("right-cq")
                .cohort("right-cohort")
                .resource_group(make_flavor_quotas("default").resource("cpu", "0"))
                .preemption(S("kueue.ClusterQueuePreemption", ReclaimWithinCohort="Any"))
                .fair_weight("0"),
            ]
        ),
        cohorts=(
            [
                make_cohort("right-cohort")
                .fair_weight("0")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1"))
                .parent("root")
            ]
        ),
        admitted=(
            [unit_wl.clone().name("right-1").simple_reserve_quota("right-cq", "default", NOW)]
        ),
        incoming=(unit_wl.clone().name("left-1")),
        wantPreempted=(set_of()),
        targetCQ="left-cq",
    ),
    # TestFairPreemptions, case 'can preempt within cluster queue when no cohort' (preemption_fair_test.go:545)
    "can preempt within cluster queue when no cohort": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("a")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1"))
                .preemption(S("kueue.ClusterQueuePreemption", WithinClusterQueue="LowerPriority"))
            ]
        ),
        admitted=([unit_wl.clone().name("a1").simple_reserve_quota("a", "default", NOW)]),
        incoming=(unit_wl.clone().name("a_incoming").priority(1000)),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/a1", "InClusterQueue"),
            )
        ),
    ),
    # TestFairPreemptions, case 'hierarchical preemption' (preemption_fair_test.go:581)
    "hierarchical preemption": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("a")
                .cohort("LEFT")
                .fair_weight("2")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1"))
                .preemption(S("kueue.ClusterQueuePreemption", ReclaimWithinCohort="Any")),
                make_cluster_queue("b")
                .cohort("LEFT")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1")),
                make_cluster_queue("c")
                .cohort("ROOT")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1")),
                make_cluster_queue("d")
                .cohort("RIGHT")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1")),
                make_cluster_queue("e")
                .cohort("RIGHT")
                .
                # for determinism, we slightly prefer preemptions from e
                # compared to d.
                fair_weight("0.99")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1")),
            ]
        ),
        cohorts=(
            [
                make_cohort("ROOT").resource_group(
                    make_flavor_quotas("default").resource("cpu", "5")
                ),
                make_cohort("LEFT")
                .fair_weight("2")
                .parent("ROOT")
                .resource_group(make_flavor_quotas("default").resource("cpu", "5")),
                make_cohort("RIGHT")
                .parent("ROOT")
                .resource_group(make_flavor_quotas("default").resource("cpu", "5")),
            ]
        ),
        admitted=(
            [
                unit_wl.clone().name("b1").priority(1).simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b2").priority(2).simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b3").priority(3).simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b4").priority(4).simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b5").priority(5).simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("c1").priority(1).simple_reserve_quota("c", "default", NOW),
                unit_wl.clone().name("c2").priority(2).simple_reserve_quota("c", "default", NOW),
                unit_wl.clone().name("c3").priority(3).simple_reserve_quota("c", "default", NOW),
                unit_wl.clone().name("c4").priority(4).simple_reserve_quota("c", "default", NOW),
                unit_wl.clone().name("c5").priority(5).simple_reserve_quota("c", "default", NOW),
                unit_wl.clone().name("d1").priority(1).simple_reserve_quota("d", "default", NOW),
                unit_wl.clone().name("d2").priority(2).simple_reserve_quota("d", "default", NOW),
                unit_wl.clone().name("d3").priority(3).simple_reserve_quota("d", "default", NOW),
                unit_wl.clone().name("d4").priority(4).simple_reserve_quota("d", "default", NOW),
                unit_wl.clone().name("d5").priority(5).simple_reserve_quota("d", "default", NOW),
                unit_wl.clone().name("e1").priority(1).simple_reserve_quota("e", "default", NOW),
                unit_wl.clone().name("e2").priority(2).simple_reserve_quota("e", "default", NOW),
                unit_wl.clone().name("e3").priority(3).simple_reserve_quota("e", "default", NOW),
                unit_wl.clone().name("e4").priority(4).simple_reserve_quota("e", "default", NOW),
                unit_wl.clone().name("e5").priority(5).simple_reserve_quota("e", "default", NOW),
            ]
        ),
        incoming=(make_workload("unit", "").request("cpu", "5")),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/b1", "InCohortFairSharing"),
                target_key_reason("/b2", "InCohortFairSharing"),
                target_key_reason("/c1", "InCohortFairSharing"),
                target_key_reason("/c2", "InCohortFairSharing"),
                target_key_reason("/e1", "InCohortFairSharing"),
            )
        ),
    ),
    # TestFairPreemptions, case 'borrowing cq in non-borrowing cohort is protected' (preemption_fair_test.go:675)
    "borrowing cq in non-borrowing cohort is protected": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("a")
                .cohort("ROOT")
                .fair_weight("10")
                .resource_group(make_flavor_quotas("default").resource("cpu", "5"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        ReclaimWithinCohort="Any",
                        WithinClusterQueue="LowerPriority",
                    )
                ),
                make_cluster_queue("b").cohort("RIGHT").fair_weight("0.1"),
            ]
        ),
        cohorts=(
            [
                make_cohort("ROOT"),
                make_cohort("RIGHT")
                .parent("ROOT")
                .fair_weight("0.1")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1")),
            ]
        ),
        admitted=(
            [
                unit_wl.clone().name("a1").priority(-1).simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a2").priority(-1).simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a3").priority(-1).simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("b1").priority(-1).simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("unit", "").request("cpu", "5")),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/a1", "InClusterQueue"),
                target_key_reason("/a2", "InClusterQueue"),
                target_key_reason("/a3", "InClusterQueue"),
            )
        ),
    ),
    # TestFairPreemptions, case 'forced to preempt within clusterqueue because borrowing workload too important' (preemption_fair_test.go:723)
    "forced to preempt within clusterqueue because borrowing workload too important": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("a")
                .cohort("ROOT")
                .fair_weight("10")
                .resource_group(make_flavor_quotas("default").resource("cpu", "5"))
                .preemption(
                    S(
                        "kueue.ClusterQueuePreemption",
                        ReclaimWithinCohort="LowerPriority",
                        WithinClusterQueue="LowerPriority",
                    )
                ),
                make_cluster_queue("b").cohort("RIGHT").fair_weight("0.1"),
            ]
        ),
        cohorts=(
            [
                make_cohort("ROOT"),
                make_cohort("RIGHT")
                .parent("ROOT")
                .fair_weight("0.1")
                .resource_group(make_flavor_quotas("default").resource("cpu", "3")),
            ]
        ),
        admitted=(
            [
                unit_wl.clone().name("a1").priority(-1).simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a2").priority(-1).simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("a3").priority(-1).simple_reserve_quota("a", "default", NOW),
                make_workload("b1", "")
                .priority(100)
                .request("cpu", "4")
                .simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("unit", "").request("cpu", "4")),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/a1", "InClusterQueue"),
                target_key_reason("/a2", "InClusterQueue"),
                target_key_reason("/a3", "InClusterQueue"),
            )
        ),
    ),
    # TestFairPreemptions, case 'deep preemption' (preemption_fair_test.go:776)
    "deep preemption": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("a")
                .cohort("AAA")
                .resource_group(make_flavor_quotas("default").resource("cpu", "0"))
                .preemption(S("kueue.ClusterQueuePreemption", ReclaimWithinCohort="Any")),
                make_cluster_queue("b")
                .cohort("BBB")
                .resource_group(make_flavor_quotas("default").resource("cpu", "0")),
            ]
        ),
        cohorts=(
            [
                make_cohort("ROOT"),
                make_cohort("A")
                .parent("ROOT")
                .
                # we are comparing
                # almostLCAs=(A,B). In order
                # for the preemption to
                # occur, we indicate that A
                # is more important than B.
                fair_weight("1.01"),
                make_cohort("AA").parent("A"),
                make_cohort("AAA").parent("AA"),
                make_cohort("B").parent("ROOT").fair_weight("0.99"),
                make_cohort("BB").parent("B"),
                make_cohort("BBB").parent("BB"),
                make_cohort("C").parent("ROOT"),
                make_cohort("CC").parent("C"),
                make_cohort("CCC").parent("CC"),
                make_cohort("CCCC")
                .parent("CCC")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1")),
            ]
        ),
        admitted=([unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW)]),
        incoming=(unit_wl.clone().name("a1")),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/b1", "InCohortFairSharing"),
            )
        ),
    ),
    # TestFairPreemptions, case 'cq with zero weight can reclaim nominal quota' (preemption_fair_test.go:832)
    "cq with zero weight can reclaim nominal quota": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("a")
                .cohort("ROOT")
                .fair_weight("0.0")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1"))
                .preemption(S("kueue.ClusterQueuePreemption", ReclaimWithinCohort="Any")),
                make_cluster_queue("b")
                .cohort("ROOT")
                .resource_group(make_flavor_quotas("default").resource("cpu", "0"))
                .fair_weight("1.0"),
            ]
        ),
        admitted=([unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW)]),
        incoming=(unit_wl.clone().name("a1")),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/b1", "InCohortReclamation"),
            )
        ),
    ),
    # TestFairPreemptions, case 'cohort with zero weight can reclaim nominal quota' (preemption_fair_test.go:859)
    "cohort with zero weight can reclaim nominal quota": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("a")
                .cohort("A")
                .fair_weight("0.0")
                .resource_group(make_flavor_quotas("default").resource("cpu", "0"))
                .preemption(S("kueue.ClusterQueuePreemption", ReclaimWithinCohort="Any")),
                make_cluster_queue("b")
                .cohort("ROOT")
                .resource_group(make_flavor_quotas("default").resource("cpu", "0"))
                .fair_weight("1.0"),
            ]
        ),
        cohorts=(
            [
                make_cohort("A")
                .parent("ROOT")
                .fair_weight("0.0")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1"))
            ]
        ),
        admitted=([unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW)]),
        incoming=(unit_wl.clone().name("a1")),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/b1", "InCohortFairSharing"),
            )
        ),
    ),
    # TestFairPreemptions, case 'nominal first: workload fitting within nominal can preempt despite high aggregate DRS' (preemption_fair_test.go:903)
    "nominal first: workload fitting within nominal can preempt despite high aggregate DRS": S(
        "",
        flavors=([make_resource_flavor("premium"), make_resource_flavor("cheap")]),
        assignmentFlavor="premium",
        clusterQueues=(
            [
                make_cluster_queue("a")
                .cohort("all")
                .resource_group(
                    make_flavor_quotas("premium").resource("cpu", "3"),
                    make_flavor_quotas("cheap").resource("cpu", "0"),
                )
                .preemption(S("kueue.ClusterQueuePreemption", ReclaimWithinCohort="Any"))
                .flavor_fungibility(
                    S(
                        "kueue.FlavorFungibility",
                        WhenCanBorrow="MayStopSearch",
                        WhenCanPreempt="MayStopSearch",
                    )
                ),
                make_cluster_queue("b")
                .cohort("all")
                .resource_group(
                    make_flavor_quotas("premium").resource("cpu", "0"),
                    make_flavor_quotas("cheap").resource("cpu", "6"),
                ),
            ]
        ),
        admitted=(
            [
                unit_wl.clone().name("a_prem1").simple_reserve_quota("a", "premium", NOW),
                unit_wl.clone().name("a_prem2").simple_reserve_quota("a", "premium", NOW),
                unit_wl.clone().name("a_cheap1").simple_reserve_quota("a", "cheap", NOW),
                unit_wl.clone().name("a_cheap2").simple_reserve_quota("a", "cheap", NOW),
                unit_wl.clone().name("a_cheap3").simple_reserve_quota("a", "cheap", NOW),
                unit_wl.clone().name("a_cheap4").simple_reserve_quota("a", "cheap", NOW),
                unit_wl.clone().name("a_cheap5").simple_reserve_quota("a", "cheap", NOW),
                unit_wl.clone().name("b_prem1").simple_reserve_quota("b", "premium", NOW),
            ]
        ),
        incoming=(unit_wl.clone().name("a_incoming")),
        targetCQ="a",
        wantPreempted=(set_of(target_key_reason("/b_prem1", "InCohortReclamation"))),
    ),
    # TestFairPreemptions, case 'zero weight borrowing preemptor cannot preempt from a borrowing CQ with a non-zero weight' (preemption_fair_test.go:951)
    "zero weight borrowing preemptor cannot preempt from a borrowing CQ with a non-zero weight": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("a")
                .cohort("all")
                .fair_weight("0")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1"))
                .preemption(S("kueue.ClusterQueuePreemption", ReclaimWithinCohort="Any")),
                make_cluster_queue("b")
                .cohort("all")
                .fair_weight("1")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1")),
            ]
        ),
        admitted=(
            [
                unit_wl.clone().name("a1").simple_reserve_quota("a", "default", NOW),
                unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b2").simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(unit_wl.clone().name("a_incoming")),
        targetCQ="a",
        wantPreempted=(set_of()),
    ),
    # TestFairPreemptions, case 'zero weight borrowing preemptor can preempt from a borrowing CQ which also has zero weight' (preemption_fair_test.go:982)
    "zero weight borrowing preemptor can preempt from a borrowing CQ which also has zero weight": S(
        "",
        cohorts=(
            [make_cohort("all").resource_group(make_flavor_quotas("default").resource("cpu", "3"))]
        ),
        clusterQueues=(
            [
                make_cluster_queue("a")
                .cohort("all")
                .fair_weight("0")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1"))
                .preemption(S("kueue.ClusterQueuePreemption", ReclaimWithinCohort="Any")),
                make_cluster_queue("b")
                .cohort("all")
                .fair_weight("0")
                .resource_group(make_flavor_quotas("default").resource("cpu", "0")),
            ]
        ),
        admitted=(
            [
                unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b2").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b3").simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "2")),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/b1", "InCohortFairSharing"),
            )
        ),
    ),
    # TestFairPreemptions, case 'non-zero weight borrowing preemptor preempts from a borrowing CQ' (preemption_fair_test.go:1019)
    "non-zero weight borrowing preemptor preempts from a borrowing CQ": S(
        "",
        cohorts=(
            [make_cohort("all").resource_group(make_flavor_quotas("default").resource("cpu", "3"))]
        ),
        clusterQueues=(
            [
                make_cluster_queue("a")
                .cohort("all")
                .fair_weight("1")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1"))
                .preemption(S("kueue.ClusterQueuePreemption", ReclaimWithinCohort="Any")),
                make_cluster_queue("b")
                .cohort("all")
                .fair_weight("1")
                .resource_group(make_flavor_quotas("default").resource("cpu", "0")),
            ]
        ),
        admitted=(
            [
                unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b2").simple_reserve_quota("b", "default", NOW),
                unit_wl.clone().name("b3").simple_reserve_quota("b", "default", NOW),
            ]
        ),
        incoming=(make_workload("a_incoming", "").request("cpu", "2")),
        targetCQ="a",
        wantPreempted=(
            set_of(
                target_key_reason("/b1", "InCohortFairSharing"),
            )
        ),
    ),
    # TestFairPreemptions, case 'candidates skipped by the first strategy are still available to the second strategy' (preemption_fair_test.go:1065)
    "candidates skipped by the first strategy are still available to the second strategy": S(
        "",
        cohorts=(
            [
                make_cohort("A")
                .parent("ROOT")
                .fair_weight("0")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1"))
            ]
        ),
        clusterQueues=(
            [
                make_cluster_queue("p")
                .cohort("A")
                .fair_weight("1")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2"))
                .preemption(S("kueue.ClusterQueuePreemption", ReclaimWithinCohort="Any")),
                make_cluster_queue("y")
                .cohort("A")
                .fair_weight("1")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
                make_cluster_queue("x")
                .cohort("ROOT")
                .fair_weight("1")
                .resource_group(make_flavor_quotas("default").resource("cpu", "1")),
            ]
        ),
        admitted=(
            [
                make_workload("p1", "")
                .request("cpu", "2")
                .simple_reserve_quota("p", "default", NOW),
                make_workload("y1", "")
                .request("cpu", "2")
                .simple_reserve_quota("y", "default", NOW),
                make_workload("y2", "")
                .request("cpu", "2")
                .simple_reserve_quota("y", "default", NOW),
                unit_wl.clone().name("x1").simple_reserve_quota("x", "default", NOW),
                unit_wl.clone().name("x2").simple_reserve_quota("x", "default", NOW),
            ]
        ),
        incoming=(unit_wl.clone().name("p_incoming")),
        targetCQ="p",
        wantPreempted=(
            set_of(
                target_key_reason("/y1", "InCohortFairSharing"),
                target_key_reason("/x1", "InCohortFairSharing"),
            )
        ),
    ),
}


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
def test_fair_preemptions(name: str) -> None:
    """TestFairPreemptions: the set of (workload key, reason) targets."""
    case = CASES[name]
    flavor = case.get("assignmentFlavor") or "default"
    run = run_preemption(
        case.get("clusterQueues"),
        case.get("cohorts"),
        case.get("admitted"),
        case.get("incoming"),
        case.get("targetCQ"),
        single_pod_set_assignment({"cpu": S("", Name=flavor, Mode="Preempt")}),
        fair_sharing=True,
        strategies=tuple(case.get("strategies") or ()),
    )
    assert set(run.targets.items()) == (case.get("wantPreempted") or set())
    assert run.usage_unchanged, "the quota snapshot was modified"


# TestFairPreemptionSkipsUnsatisfiableTournament (preemption_fair_test.go:1194): the
# preemptor's queue "a" borrows with the case's fair weight; "b" borrows with two
# workloads. Upstream checks that nothing is preempted and, from Kueue's V(4) log
# lines, how many strategy evaluations ran; the outcome is the decision and is
# checked here, the log counts are Kueue's logging and are not.
TOURNAMENT_CASES = {
    "zero weight preemptor: share is +Inf and the tournament is skipped": "0",
    "non-zero weight preemptor: share is finite so the tournament runs": "1",
}


@pytest.mark.parametrize("name", list(TOURNAMENT_CASES), ids=list(TOURNAMENT_CASES))
def test_fair_preemption_skips_unsatisfiable_tournament(name: str) -> None:
    cluster_queues = [
        make_cluster_queue("a")
        .cohort("all")
        .fair_weight(TOURNAMENT_CASES[name])
        .resource_group(make_flavor_quotas("default").resource("cpu", "1"))
        .preemption(S("kueue.ClusterQueuePreemption", ReclaimWithinCohort="Any")),
        make_cluster_queue("b")
        .cohort("all")
        .fair_weight("1")
        .resource_group(make_flavor_quotas("default").resource("cpu", "1")),
    ]
    admitted = [
        unit_wl.clone().name("a1").simple_reserve_quota("a", "default", NOW),
        unit_wl.clone().name("b1").simple_reserve_quota("b", "default", NOW),
        unit_wl.clone().name("b2").simple_reserve_quota("b", "default", NOW),
    ]
    run = run_preemption(
        cluster_queues,
        None,
        admitted,
        unit_wl.clone().name("a_incoming"),
        "a",
        single_pod_set_assignment({"cpu": S("", Name="default", Mode="Preempt")}),
        fair_sharing=True,
    )
    assert run.targets == {}
    assert run.usage_unchanged, "the quota snapshot was modified"


# TestMakeClusterQueueOrdering (pkg/scheduler/preemption/fairsharing/ordering_test.go):
# the tournament of target ClusterQueues, by upstream case name.
ORDERING_CASES: dict[str, S] = {
    # TestMakeClusterQueueOrdering, case 'no cohort: preemptor CQ yielded for in-CQ preemption; repro for nil pointer panic issue' (fairsharing/ordering_test.go:53)
    "no cohort: preemptor CQ yielded for in-CQ preemption; repro for nil pointer panic issue": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("preemptor").resource_group(
                    make_flavor_quotas("default").resource("cpu", "4")
                )
            ]
        ),
        admitted=(
            [
                make_workload("wl1", "ns")
                .request("cpu", "1")
                .simple_reserve_quota("preemptor", "default", NOW)
            ]
        ),
        preemptorCQ="preemptor",
        candidateCQs=(["preemptor"]),
        wantOrder=(["preemptor"]),
    ),
    # TestMakeClusterQueueOrdering, case 'no cohort: DropQueue ends the iteration with candidates remaining' (fairsharing/ordering_test.go:68)
    "no cohort: DropQueue ends the iteration with candidates remaining": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("preemptor").resource_group(
                    make_flavor_quotas("default").resource("cpu", "4")
                )
            ]
        ),
        admitted=(
            [
                make_workload("wl1", "ns")
                .request("cpu", "1")
                .simple_reserve_quota("preemptor", "default", NOW),
                make_workload("wl2", "ns")
                .request("cpu", "1")
                .simple_reserve_quota("preemptor", "default", NOW),
            ]
        ),
        preemptorCQ="preemptor",
        candidateCQs=(["preemptor"]),
        actions=(["drop"]),
        wantOrder=(["preemptor"]),
    ),
    # TestMakeClusterQueueOrdering, case 'non-borrowing CQ is pruned even with candidates' (fairsharing/ordering_test.go:86)
    "non-borrowing CQ is pruned even with candidates": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("preemptor")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4")),
                # "target" is within its nominal quota (2 < 5), so DRS = 0 (not borrowing).
                make_cluster_queue("target")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "5")),
            ]
        ),
        admitted=(
            [
                make_workload("t1", "ns")
                .request("cpu", "2")
                .simple_reserve_quota("target", "default", NOW)
            ]
        ),
        preemptorCQ="preemptor",
        candidateCQs=(["target"]),
        wantOrder=None,
    ),
    # TestMakeClusterQueueOrdering, case 'higher DRS CQ returned before lower DRS CQ' (fairsharing/ordering_test.go:104)
    "higher DRS CQ returned before lower DRS CQ": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("preemptor")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4")),
                make_cluster_queue("high")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
                make_cluster_queue("low")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
            ]
        ),  # Cohort "all": preemptor(nominal=4), high(nominal=2, usage=5), low(nominal=2, usage=3).  # DRS(high) > DRS(low), so "high" is yielded first.
        admitted=(
            [
                make_workload("h1", "ns")
                .request("cpu", "5")
                .simple_reserve_quota("high", "default", NOW),
                make_workload("l1", "ns")
                .request("cpu", "3")
                .simple_reserve_quota("low", "default", NOW),
            ]
        ),
        preemptorCQ="preemptor",
        candidateCQs=(["high", "low"]),
        wantOrder=(["high", "low"]),
    ),
    # TestMakeClusterQueueOrdering, case 'CQ with highest DRS returned again while it still has candidates' (fairsharing/ordering_test.go:128)
    "CQ with highest DRS returned again while it still has candidates": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("preemptor")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4")),
                make_cluster_queue("high")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
                make_cluster_queue("low")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
            ]
        ),  # "high" has 2 candidates; it keeps its high DRS across iterations (DRS  # is based on actual resource usage, not candidate count), so it is  # returned twice before "low" is returned.
        admitted=(
            [
                make_workload("h1", "ns")
                .request("cpu", "3")
                .simple_reserve_quota("high", "default", NOW),
                make_workload("h2", "ns")
                .request("cpu", "2")
                .simple_reserve_quota("high", "default", NOW),
                make_workload("l1", "ns")
                .request("cpu", "3")
                .simple_reserve_quota("low", "default", NOW),
            ]
        ),
        preemptorCQ="preemptor",
        candidateCQs=(["high", "low"]),
        wantOrder=(["high", "high", "low"]),
    ),
    # TestMakeClusterQueueOrdering, case 'drop queue prevents CQ from being returned again' (fairsharing/ordering_test.go:155)
    "drop queue prevents CQ from being returned again": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("preemptor")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4")),
                make_cluster_queue("high")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
                make_cluster_queue("low")
                .cohort("all")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
            ]
        ),  # Same setup as above; calling DropQueue on the first "high" occurrence  # skips its second candidate and moves immediately to "low".
        admitted=(
            [
                make_workload("h1", "ns")
                .request("cpu", "3")
                .simple_reserve_quota("high", "default", NOW),
                make_workload("h2", "ns")
                .request("cpu", "2")
                .simple_reserve_quota("high", "default", NOW),
                make_workload("l1", "ns")
                .request("cpu", "3")
                .simple_reserve_quota("low", "default", NOW),
            ]
        ),
        preemptorCQ="preemptor",
        candidateCQs=(["high", "low"]),
        actions=(["drop", "pop"]),  # Drop "high" on first occurrence; PopWorkload for "low".
        wantOrder=(["high", "low"]),
    ),
    # TestMakeClusterQueueOrdering, case 'hierarchical cohorts: higher-DRS subtree visited first' (fairsharing/ordering_test.go:183)
    "hierarchical cohorts: higher-DRS subtree visited first": S(
        "",
        clusterQueues=(
            [
                make_cluster_queue("preemptor-cq")
                .cohort("root")
                .resource_group(make_flavor_quotas("default").resource("cpu", "4")),
                make_cluster_queue("left-cq")
                .cohort("left-cohort")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
                make_cluster_queue("right-cq")
                .cohort("right-cohort")
                .resource_group(make_flavor_quotas("default").resource("cpu", "2")),
            ]
        ),  # Tree:  #           root  #          /    \  #    left-cohort  right-cohort  #        |              |  #     left-cq        right-cq       preemptor-cq  #   (usage=5>2)     (usage=3>2)     (usage=0, nominal=4)  #  # left-cohort has higher aggregate DRS, so left-cq is returned first.
        cohorts=(
            [
                make_cohort("root"),
                make_cohort("left-cohort").parent("root"),
                make_cohort("right-cohort").parent("root"),
            ]
        ),
        admitted=(
            [
                make_workload("lc1", "ns")
                .request("cpu", "5")
                .simple_reserve_quota("left-cq", "default", NOW),
                make_workload("rc1", "ns")
                .request("cpu", "3")
                .simple_reserve_quota("right-cq", "default", NOW),
            ]
        ),
        preemptorCQ="preemptor-cq",
        candidateCQs=(["left-cq", "right-cq"]),
        wantOrder=(["left-cq", "right-cq"]),
    ),
}


@pytest.mark.parametrize("name", list(ORDERING_CASES), ids=list(ORDERING_CASES))
def test_make_cluster_queue_ordering(name: str) -> None:
    """The target ClusterQueues the ordering yields; after each, the case's action:
    drop the queue, or take (pop) its next candidate."""
    case = ORDERING_CASES[name]
    admitted = case.get("admitted")
    state = build_state(case.get("clusterQueues"), case.get("cohorts"), admitted)
    candidate_queues = set(case.get("candidateCQs") or ())
    candidates = []
    for workload in admitted:
        cluster_queue = state.index.cluster_queue[workload.key]
        if cluster_queue in candidate_queues:
            candidates.append(
                VictimCandidate(
                    workload.key,
                    cluster_queue,
                    cluster_queue == case.get("preemptorCQ"),
                    workload.workload_priority,
                    state.admitted_at[workload.key],
                    "",
                )
            )
    tree = state.tree
    ordering = TargetQueueOrdering(tree, tree.cluster_queues[case.get("preemptorCQ")], candidates)
    actions = list(case.get("actions") or ())
    order: list[str] = []
    for target in ordering.targets():
        order.append(target)
        if len(order) <= len(actions) and actions[len(order) - 1] == "drop":
            ordering.drop(target)
        else:
            ordering.pop(target)
        assert len(order) <= 50, "exceeded 50 iterations, likely an infinite loop"
    assert order == (case.get("wantOrder") or [])
