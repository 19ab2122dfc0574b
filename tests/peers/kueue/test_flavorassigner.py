"""Kueue's flavor-assigner tables, ported case by case.

Source: kubernetes-sigs/kueue at ff69552e79ad21652c36caa97038382e55625cf7,
``pkg/scheduler/flavorassigner/flavorassigner_test.go``:

* ``TestAssignFlavors``: one pytest case per upstream case (id = the upstream case
  name). Each builds the ClusterQueue (and the secondary one of its cohort), adds the
  case's usage to the quota tree, runs dralab's ``assign_flavors`` with the case's
  preemption oracle (upstream's testOracle: ``Preempt`` with borrowing 0 unless the
  case's simulationResult says otherwise) and compares what upstream's ``cmp.Diff``
  compares: the representative mode, per pod set the flavor and mode of every
  resource and the status reasons (sorted, as statusComparer), the assignment's
  borrowing level and its usage per (flavor, resource). Not compared:
  ``TriedFlavorIdx`` and ``LastState`` (dralab keeps no per-workload flavor scan
  position; upstream's TestFlavorScanRecordsLastTriedFlavorIdx covers it) and
  ``FlavorAssignmentAttempts``/``NoFitReason`` (the UnadmittedWorkloadsObservability
  detail dralab does not report); upstream runs each case with that gate on and off,
  here once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest
from tests.peers.kueue.schedule_builders import (
    NO_SCHEDULE,
    WantPodSet,
    cq,
    fq,
    fq_map,
    fungibility,
    group,
    milli,
    preemption,
    ps,
    rf,
    usage,
)

from dralab.queueing.kueue.flavors import (
    AssignMode,
    GranularMode,
    OldPodSet,
    PreemptionMode,
    WorkloadAssignment,
    assign_flavors,
    is_preferred,
)
from dralab.queueing.kueue.quota import QuotaTree
from dralab.queueing.kueue.reducer import scaled_workload
from dralab.queueing.kueue.tas import TASFlavorSnapshot, TASNode
from dralab.queueing.kueue.tas_assign import TASContext
from dralab.queueing.model import (
    ClusterQueueSpec,
    CohortSpec,
    FlavorQuotas,
    FlavorSpec,
    PodSetRequest,
    TopologyRequest,
    WorkloadSpec,
)

FILE = "pkg/scheduler/flavorassigner/flavorassigner_test.go"

SPOT = ("instance", "spot", NO_SCHEDULE)
TOLERATE_SPOT = ("instance", "Equal", "spot", NO_SCHEDULE)

RESOURCE_FLAVORS = {f.name: f for f in (
    rf("default"),
    rf("one", {"type": "one"}),
    rf("two", {"type": "two"}),
    rf("b_one", {"b_type": "one"}),
    rf("b_two", {"b_type": "two"}),
    rf("tainted", taints=(SPOT,)),
    rf("taint_and_toleration", taints=(SPOT,), tolerations=(TOLERATE_SPOT,)),
    rf("label-x-a", {"x": "a"}),
    rf("label-xy-b", {"x": "b", "y": "k"}),
    rf("tas-a", topology="tas-topo-a"),
    rf("tas-b", topology="tas-topo-b"),
)}

_MODES = {"NoFit": AssignMode.NO_FIT, "Preempt": AssignMode.PREEMPT, "Fit": AssignMode.FIT}
_POSSIBILITY = {"NoCandidates": PreemptionMode.NO_CANDIDATES,
                "Preempt": PreemptionMode.PREEMPT, "Reclaim": PreemptionMode.RECLAIM}


@dataclass(frozen=True)
class Case:
    name: str
    pods: tuple[PodSetRequest, ...]
    cluster_queue: ClusterQueueSpec
    want_mode: str
    want_pod_sets: tuple[WantPodSet, ...]
    want_usage: dict[tuple[str, str], str] = field(default_factory=dict)
    want_borrowing: int = 0
    cluster_queue_usage: dict[tuple[str, str], str] = field(default_factory=dict)
    secondary: ClusterQueueSpec | None = None
    secondary_usage: dict[tuple[str, str], str] = field(default_factory=dict)
    simulation: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)
    fair_sharing: bool = False
    skip: str = ""
    # the old workload slice replaced (ElasticJobsViaWorkloadSlices on):
    # (pod set, totals, admitted flavors) per pod set
    replaced: tuple[OldPodSet, ...] | None = None
    want_no_fit: str = ""   # the Assignment's NoFitReason (UnadmittedWorkloadsObservability on)
    # Topology objects (name -> levels) in the cache; TopologyAwareScheduling is on (beta)
    topologies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    want_errors: dict[str, str] = field(default_factory=dict)  # pod set -> Status.err


def M(flavor: str, mode: str = "Fit") -> tuple[str, str]:
    return (flavor, mode)


def maxcap(resource: str, flavor: str, before: str, request: str, capacity: str) -> str:
    return (f"insufficient quota for {resource} in flavor {flavor}, previously considered "
            f"podsets requests ({before}) + current podset request ({request}) > maximum "
            f"capacity ({capacity})")


def unused(resource: str, flavor: str, more: str) -> str:
    return f"insufficient unused quota for {resource} in flavor {flavor}, {more} more needed"


def affinity(flavor: str) -> str:
    return f"flavor {flavor} doesn't match node affinity"


TAINT_SPOT_MSG = "untolerated taint {instance spot NoSchedule <nil>} in flavor tainted"
MAIN = "main"
CQ = "test-clusterqueue"
HOSTNAME = "kubernetes.io/hostname"
CQ2 = "test-secondary-clusterqueue"
COHORT = "test-cohort"
MSS = fungibility("MayStopSearch", "MayStopSearch")
TNF = fungibility("TryNextFlavor", "TryNextFlavor")
_LWS_NO_FIT = (
    "insufficient quota for cpu in flavor one, previously considered podsets requests (0) + "
    "current podset request (5) > maximum capacity (4)",
    "insufficient quota for example.com/gpu in flavor two, previously considered podsets "
    "requests (0) + current podset request (4) > maximum capacity (0)")
DEPRECATED_MSS = "; using deprecated WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch"
BORROW_LOWER = preemption(reclaim="LowerPriority", borrow="LowerPriority")


CASES = [
    Case("single flavor, fits",
         (ps(MAIN, 1, {"cpu": "1", "memory": "1Mi"}),),
         cq(CQ, group(fq("default", cpu="1", memory="2Mi"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("default"), "memory": M("default")}),),
         {("default", "cpu"): "1", ("default", "memory"): "1Mi"}),
    Case("single flavor, fits tainted flavor",
         (ps(MAIN, 1, {"cpu": "1"}, tolerations=(TOLERATE_SPOT,)),),
         cq(CQ, group(fq("tainted", cpu="4"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("tainted")}),),
         {("tainted", "cpu"): "1"}),
    Case("single flavor, fits tainted flavor with toleration",
         (ps(MAIN, 1, {"cpu": "1"}),),
         cq(CQ, group(fq("taint_and_toleration", cpu="4"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("taint_and_toleration")}),),
         {("taint_and_toleration", "cpu"): "1"}),
    Case("single flavor, used resources, doesn't fit",
         (ps(MAIN, 1, {"cpu": "2"}),),
         cq(CQ, group(fq("default", cpu="4"))),
         "Preempt", (WantPodSet(MAIN, {"cpu": M("default", "Preempt")},
                                (unused("cpu", "default", "1"),)),),
         {("default", "cpu"): "2"},
         cluster_queue_usage={("default", "cpu"): "3"}),
    Case("multiple resource groups, fits",
         (ps(MAIN, 1, {"cpu": "3", "memory": "10Mi"}),),
         cq(CQ, group(fq("one", cpu="2"), fq("two", cpu="4")),
            group(fq("b_one", memory="1Gi"), fq("b_two", memory="5Gi"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("two"), "memory": M("b_one")}),),
         {("two", "cpu"): "3", ("b_one", "memory"): "10Mi"}),
    Case("multiple flavors, leader worker set, leader and workers request the same resources fits",
         (ps("worker", 4, {"cpu": "2"}, group="group1"),
          ps("leader", 1, {"cpu": "1"}, group="group1")),
         cq(CQ, group(fq("one", cpu="4"), fq("two", cpu="9"))),
         "Fit", (WantPodSet("worker", {"cpu": M("two")}, count=4),
                 WantPodSet("leader", {"cpu": M("two")})),
         {("two", "cpu"): "9"}),
    Case("multiple flavors, leader worker set, workers request GPU, leader does not request GPU, "
         "fits",
         (ps("worker", 4, {"cpu": "1", "memory": "1", "example.com/gpu": "1"}, group="group1"),
          ps("leader", 1, {"cpu": "1", "memory": "1"}, group="group1")),
         cq(CQ, group(fq("one", cpu="10", memory="10")),
            group(fq("two", cpu="5", memory="5", gpu="4"))),
         "Fit", (WantPodSet("worker", {"cpu": M("two"), "memory": M("two"),
                                       "example.com/gpu": M("two")}, count=4),
                 WantPodSet("leader", {"cpu": M("two"), "memory": M("two")})),
         {("two", "cpu"): "5", ("two", "memory"): "5", ("two", "example.com/gpu"): "4"}),
    Case("multiple flavors, leader worker set, workers request GPU, leader does not request GPU, "
         "does not fit, without group it would fit",
         (ps("worker", 4, {"cpu": "1", "example.com/gpu": "1"}, group="group1"),
          ps("leader", 1, {"cpu": "1"}, group="group1")),
         cq(CQ, group(fq("one", cpu="4", gpu="4"), fq("two", cpu="5", gpu="0"))),
         "NoFit", (WantPodSet("worker", {}, _LWS_NO_FIT, count=4),
                   WantPodSet("leader", {}, _LWS_NO_FIT)),
         want_no_fit="ExceedsMaxQuota"),
    Case("multiple resource groups, one could fit with preemption, other doesn't fit",
         (ps(MAIN, 1, {"cpu": "3", "memory": "10Mi"}),),
         cq(CQ, group(fq("one", cpu="3")), group(fq("b_one", memory="1Mi"))),
         "NoFit", (WantPodSet(MAIN, {}, (maxcap("memory", "b_one", "0", "10Mi", "1Mi"),)),),
         {},
         cluster_queue_usage={("one", "cpu"): "1"},
         want_no_fit="ExceedsMaxQuota"),
    Case("multiple resource groups with multiple resources, fits",
         (ps(MAIN, 1, {"cpu": "3", "memory": "10Mi", "example.com/gpu": "3"}),),
         cq(CQ, group(fq("one", cpu="2", memory="1Gi"), fq("two", cpu="4", memory="15Mi")),
            group(fq("b_one", gpu="4"), fq("b_two", gpu="2"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("two"), "memory": M("two"),
                                   "example.com/gpu": M("b_one")}),),
         {("two", "cpu"): "3", ("two", "memory"): "10Mi", ("b_one", "example.com/gpu"): "3"}),
    Case("multiple resource groups with multiple resources, fits with different modes",
         (ps(MAIN, 1, {"cpu": "3", "memory": "10Mi", "example.com/gpu": "3"}),),
         cq(CQ, group(fq("one", cpu="2", memory="1Gi"), fq("two", cpu="4", memory="15Mi")),
            group(fq("b_one", gpu="4")), cohort=COHORT),
         "Preempt",
         (WantPodSet(MAIN, {"cpu": M("two"), "memory": M("two", "Preempt"),
                            "example.com/gpu": M("b_one", "Preempt")},
                     (maxcap("cpu", "one", "0", "3", "2"),
                      unused("memory", "two", "5Mi"),
                      unused("example.com/gpu", "b_one", "1"))),),
         {("two", "cpu"): "3", ("two", "memory"): "10Mi", ("b_one", "example.com/gpu"): "3"},
         want_borrowing=1,
         cluster_queue_usage={("two", "memory"): "10Mi"},
         secondary=cq(CQ2, group(fq("b_one", gpu="0")), cohort=COHORT),
         secondary_usage={("b_one", "example.com/gpu"): "2"},
         simulation={("two", "memory"): ("Preempt", 1)}),
    Case("multiple resources in a group, doesn't fit",
         (ps(MAIN, 1, {"cpu": "3", "memory": "10Mi"}),),
         cq(CQ, group(fq("one", cpu="2", memory="1Gi"), fq("two", cpu="4", memory="5Mi"))),
         "NoFit", (WantPodSet(MAIN, {}, (maxcap("cpu", "one", "0", "3", "2"),
                                         maxcap("memory", "two", "0", "10Mi", "5Mi"))),),
         want_no_fit="ExceedsMaxQuota"),
    Case("multiple flavors, fits while skipping tainted flavor",
         (ps(MAIN, 1, {"cpu": "3"}),),
         cq(CQ, group(fq("tainted", cpu="4"), fq("two", cpu="4"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("two")}),),
         {("two", "cpu"): "3"}),
    Case("multiple flavors, fits a node selector",
         (ps(MAIN, 1, {"cpu": "1"}, node_selector={"type": "two", "ignored1": "foo"},
             affinity=((("ignored2", "In", ("bar",)),),)),),
         cq(CQ, group(fq("one", cpu="4"), fq("two", cpu="4"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("two")}),),
         {("two", "cpu"): "1"}),
    Case("multiple flavors, fits with node affinity",
         (ps(MAIN, 1, {"cpu": "1", "memory": "1Mi"}, node_selector={"ignored1": "foo"},
             affinity=((("type", "In", ("two",)),),)),),
         cq(CQ, group(fq("one", cpu="4", memory="1Gi"), fq("two", cpu="4", memory="1Gi"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("two"), "memory": M("two")}),),
         {("two", "cpu"): "1", ("two", "memory"): "1Mi"}),
    Case("multiple flavors, node affinity fits any flavor",
         (ps(MAIN, 1, {"cpu": "1"},
             affinity=((("ignored2", "In", ("bar",)),), (("cpuType", "In", ("two",)),))),),
         cq(CQ, group(fq("one", cpu="4"), fq("two", cpu="4"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("one")}),),
         {("one", "cpu"): "1"}),
    Case("multiple flavors with different label keys, selector only uses flavor's own keys",
         (ps(MAIN, 1, {"cpu": "1"}, node_selector={"x": "a", "y": "g"}),),
         cq(CQ, group(fq("label-x-a", cpu="4"), fq("label-xy-b", cpu="4"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("label-x-a")}),),
         {("label-x-a", "cpu"): "1"}),
    Case("labelless flavor in group with labeled flavor, workload uses labeled selector",
         (ps(MAIN, 1, {"cpu": "1"}, node_selector={"type": "two"}),),
         cq(CQ, group(fq("default", cpu="4"), fq("two", cpu="4"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("default")}),),
         {("default", "cpu"): "1"}),
    Case("multiple flavors, doesn't fit node affinity",
         (ps(MAIN, 1, {"cpu": "1"}, affinity=((("type", "In", ("three",)),),)),),
         cq(CQ, group(fq("one", cpu="4"), fq("two", cpu="4"))),
         "NoFit", (WantPodSet(MAIN, {}, (affinity("one"), affinity("two"))),),
         want_no_fit="NoMatchingFlavor"),
    Case("multiple specs, fit different flavors",
         (ps("driver", 1, {"cpu": "5"}), ps("worker", 1, {"cpu": "3"})),
         cq(CQ, group(fq("one", cpu="4"), fq("two", cpu="10"))),
         "Fit", (WantPodSet("driver", {"cpu": M("two")}), WantPodSet("worker", {"cpu": M("one")})),
         {("one", "cpu"): "3", ("two", "cpu"): "5"}),
    Case("multiple specs, fits borrowing",
         (ps("driver", 1, {"cpu": "4", "memory": "1Gi"}),
          ps("worker", 1, {"cpu": "6", "memory": "4Gi"})),
         cq(CQ, group(fq("default", cpu=("2", "98"), memory="2Gi")), cohort=COHORT),
         "Fit", (WantPodSet("driver", {"cpu": M("default"), "memory": M("default")}),
                 WantPodSet("worker", {"cpu": M("default"), "memory": M("default")})),
         {("default", "cpu"): "10", ("default", "memory"): "5Gi"},
         want_borrowing=1,
         secondary=cq(CQ2, group(fq("default", cpu="198", memory="198Gi")), cohort=COHORT)),
    Case("not enough space to borrow",
         (ps(MAIN, 1, {"cpu": "2"}),),
         cq(CQ, group(fq("one", cpu="1")), cohort=COHORT),
         "NoFit", (WantPodSet(MAIN, {}, (maxcap("cpu", "one", "0", "2", "1"),)),),
         secondary=cq(CQ2, group(fq("one", cpu=("10", None, "0"))), cohort=COHORT),
         secondary_usage={("one", "cpu"): "9"},
         want_no_fit="ExceedsMaxQuota"),
    Case("past max, but can preempt in ClusterQueue",
         (ps(MAIN, 1, {"cpu": "2"}),),
         cq(CQ, group(fq("one", cpu=("2", "8"))), cohort=COHORT),
         "Preempt", (WantPodSet(MAIN, {"cpu": M("one", "Preempt")},
                                (unused("cpu", "one", "1"),)),),
         {("one", "cpu"): "2"}, want_borrowing=1,
         cluster_queue_usage={("one", "cpu"): "9"},
         secondary=cq(CQ2, group(fq("one", cpu="98")), cohort=COHORT),
         secondary_usage={("one", "cpu"): "9"},
         simulation={("one", "cpu"): ("Preempt", 1)}),
    Case("past min, but can preempt in ClusterQueue",
         (ps(MAIN, 1, {"cpu": "2"}),),
         cq(CQ, group(fq("one", cpu="2"))),
         "Preempt", (WantPodSet(MAIN, {"cpu": M("one", "Preempt")},
                                (unused("cpu", "one", "1"),)),),
         {("one", "cpu"): "2"},
         cluster_queue_usage={("one", "cpu"): "1"}),
    Case("past min, but can preempt in cohort and ClusterQueue",
         (ps(MAIN, 1, {"cpu": "2"}),),
         cq(CQ, group(fq("one", cpu="3")), cohort=COHORT),
         "Preempt", (WantPodSet(MAIN, {"cpu": M("one", "Preempt")},
                                (unused("cpu", "one", "2"),)),),
         {("one", "cpu"): "2"}, want_borrowing=1,
         cluster_queue_usage={("one", "cpu"): "2"},
         secondary=cq(CQ2, group(fq("one", cpu="7")), cohort=COHORT),
         secondary_usage={("one", "cpu"): "8"},
         simulation={("one", "cpu"): ("Preempt", 1)}),
    Case("can only preempt flavors that match affinity",
         (ps(MAIN, 1, {"cpu": "2"}, node_selector={"type": "two"}),),
         cq(CQ, group(fq("one", cpu="4"), fq("two", cpu="4"))),
         "Preempt", (WantPodSet(MAIN, {"cpu": M("two", "Preempt")},
                                (affinity("one"), unused("cpu", "two", "1"))),),
         {("two", "cpu"): "2"},
         cluster_queue_usage={("one", "cpu"): "3", ("two", "cpu"): "3"}),
    Case("each podset requires preemption on a different flavor",
         (ps("launcher", 1, {"cpu": "2"}),
          ps("workers", 10, {"cpu": "1"}, tolerations=(TOLERATE_SPOT,))),
         cq(CQ, group(fq("one", cpu="4"), fq("tainted", cpu="10"))),
         "Preempt",
         (WantPodSet("launcher", {"cpu": M("one", "Preempt")},
                     (unused("cpu", "one", "1"), TAINT_SPOT_MSG)),
          WantPodSet("workers", {"cpu": M("tainted", "Preempt")},
                     (maxcap("cpu", "one", "2", "10", "4"), unused("cpu", "tainted", "3")),
                     count=10)),
         {("one", "cpu"): "2", ("tainted", "cpu"): "10"},
         cluster_queue_usage={("one", "cpu"): "3", ("tainted", "cpu"): "3"}),
    Case("resource not listed in clusterQueue",
         (ps(MAIN, 1, {"example.com/gpu": "2"}),),
         cq(CQ, group(fq("one", cpu="4"))),
         "NoFit",
         (WantPodSet(MAIN, {}, ("resource example.com/gpu unavailable in ClusterQueue",)),),
         want_no_fit="NoMatchingFlavor"),
    Case("zero resource request not in clusterQueue should succeed",
         (ps(MAIN, 1, {"cpu": "1", "example.com/gpu": "0"}),),
         cq(CQ, group(fq("default", cpu="4"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("default")}),),
         {("default", "cpu"): "1"}),
    Case("zero resource request defined in clusterQueue should get flavor assigned",
         (ps(MAIN, 1, {"cpu": "1", "example.com/gpu": "0"}),),
         cq(CQ, group(fq("default", cpu="4", gpu="4"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("default"), "example.com/gpu": M("default")}),),
         {("default", "cpu"): "1", ("default", "example.com/gpu"): "0"}),
    Case("num pods fit",
         (ps(MAIN, 3, {"cpu": "1"}),),
         cq(CQ, group(fq("default", pods="3", cpu="10"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("default"), "pods": M("default")}, count=3),),
         {("default", "pods"): "3", ("default", "cpu"): "3"}),
    Case("num pods don't fit",
         (ps(MAIN, 3, {"cpu": "1"}),),
         cq(CQ, group(fq("default", pods="2", cpu="10"))),
         "NoFit", (WantPodSet(MAIN, {}, (maxcap("pods", "default", "0", "3", "2"),), count=3),),
         want_no_fit="ExceedsMaxQuota"),
    Case("with reclaimable pods; reclaimablePods on",
         # 2 of the 5 pods reclaimable: the reader charges 3 (reclaimed 2).
         (replace(ps(MAIN, 3, {"cpu": "1"}), reclaimed=2),),
         cq(CQ, group(fq("default", pods="3", cpu="10"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("default"), "pods": M("default")}, count=3),),
         {("default", "pods"): "3", ("default", "cpu"): "3"}),
    Case("with reclaimable pods; reclaimablePods off",
         (ps(MAIN, 5, {"cpu": "1"}),),
         cq(CQ, group(fq("default", pods="5", cpu="10"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("default"), "pods": M("default")}, count=5),),
         {("default", "pods"): "5", ("default", "cpu"): "5"}),
    Case("preempt before try next flavor",
         (ps(MAIN, 1, {"cpu": "9"}),),
         cq(CQ, group(fq("one", pods="10", cpu="10"), fq("two", pods="10", cpu="10")),
            flavor_fungibility=MSS),
         "Preempt", (WantPodSet(MAIN, {"cpu": M("one", "Preempt"), "pods": M("one")},
                                (unused("cpu", "one", "1"),)),),
         {("one", "cpu"): "9", ("one", "pods"): "1"},
         cluster_queue_usage={("one", "cpu"): "2"}),
    Case("preempt before try next flavor; using WhenCanBorrow=MayStopSearch,"
         "WhenCanPreempt=MayStopSearch",
         (ps(MAIN, 1, {"cpu": "9"}),),
         cq(CQ, group(fq("one", pods="10", cpu="10"), fq("two", pods="10", cpu="10")),
            flavor_fungibility=MSS),
         "Preempt", (WantPodSet(MAIN, {"cpu": M("one", "Preempt"), "pods": M("one")},
                                (unused("cpu", "one", "1"),)),),
         {("one", "cpu"): "9", ("one", "pods"): "1"},
         cluster_queue_usage={("one", "cpu"): "2"}),
    Case("preempt try next flavor",
         (ps(MAIN, 1, {"cpu": "9"}),),
         cq(CQ, group(fq("one", pods="10", cpu="10"), fq("two", pods="10", cpu="10"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("two"), "pods": M("two")}),),
         {("two", "cpu"): "9", ("two", "pods"): "1"},
         cluster_queue_usage={("one", "cpu"): "2"}),
    Case("borrow try next flavor, found the first flavor",
         (ps(MAIN, 1, {"cpu": "9"}),),
         cq(CQ, group(fq("one", pods="10", cpu=("10", "1")), fq("two", pods="10", cpu="1")),
            cohort=COHORT, flavor_fungibility=TNF),
         "Fit", (WantPodSet(MAIN, {"cpu": M("one"), "pods": M("one")}),),
         {("one", "cpu"): "9", ("one", "pods"): "1"}, want_borrowing=1,
         cluster_queue_usage={("one", "cpu"): "2"},
         secondary=cq(CQ2, group(fq("one", cpu="1")), cohort=COHORT)),
    Case("borrow try next flavor, found the second flavor",
         (ps(MAIN, 1, {"cpu": "9"}),),
         cq(CQ, group(fq("one", pods="10", cpu=("10", "1")), fq("two", pods="10", cpu="10")),
            cohort=COHORT, flavor_fungibility=TNF),
         "Fit", (WantPodSet(MAIN, {"cpu": M("two"), "pods": M("two")}),),
         {("two", "cpu"): "9", ("two", "pods"): "1"},
         cluster_queue_usage={("one", "cpu"): "2"},
         secondary=cq(CQ2, group(fq("one", cpu="1")), cohort=COHORT)),
    Case("borrow before try next flavor",
         (ps(MAIN, 1, {"cpu": "9"}),),
         cq(CQ, group(fq("one", pods="10", cpu=("10", "1")), fq("two", pods="10", cpu="10")),
            cohort=COHORT),
         "Fit", (WantPodSet(MAIN, {"cpu": M("one"), "pods": M("one")}),),
         {("one", "cpu"): "9", ("one", "pods"): "1"}, want_borrowing=1,
         cluster_queue_usage={("one", "cpu"): "2"},
         secondary=cq(CQ2, group(fq("one", cpu="1")), cohort=COHORT)),
]

_PREEMPT_WHILE_BORROWING_CQ = {
    "limit": lambda ff: cq(CQ, group(fq("one", cpu=("0", "12")), fq("two", cpu="12")),
                           cohort=COHORT, policy=BORROW_LOWER, flavor_fungibility=ff),
    "no-limit": lambda ff: cq(CQ, group(fq("one", cpu="0"), fq("two", cpu="12")),
                              cohort=COHORT, policy=BORROW_LOWER, flavor_fungibility=ff),
}
_ONE_PREEMPT_12 = (WantPodSet(MAIN, {"cpu": M("one", "Preempt")}, (unused("cpu", "one", "10"),)),)

CASES += [
    Case(f"when borrowing while preemption is needed for flavor one{suffix}",
         (ps(MAIN, 1, {"cpu": "12"}),),
         _PREEMPT_WHILE_BORROWING_CQ[kind](MSS),
         "Preempt", _ONE_PREEMPT_12, {("one", "cpu"): "12"}, want_borrowing=1,
         secondary=cq(CQ2, group(fq("one", cpu="12")), cohort=COHORT),
         secondary_usage={("one", "cpu"): "10"},
         simulation={("one", "cpu"): ("Preempt", 1)})
    for kind, suffix in (
        ("limit", "; WhenCanBorrow=MayStopSearch"),
        ("limit", "; WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch"),
        ("no-limit", ", no borrowingLimit; WhenCanBorrow=MayStopSearch"),
        ("no-limit", ", no borrowingLimit; WhenCanBorrow=MayStopSearch,"
                     "WhenCanPreempt=MayStopSearch"))
]
CASES += [
    Case(f"when borrowing while preemption is needed for flavor one{suffix}",
         (ps(MAIN, 1, {"cpu": "12"}),),
         _PREEMPT_WHILE_BORROWING_CQ["limit"](fungibility("TryNextFlavor", "MayStopSearch")),
         "Fit", (WantPodSet(MAIN, {"cpu": M("two")}),), {("two", "cpu"): "12"},
         secondary=cq(CQ2, group(fq("one", cpu="12")), cohort=COHORT))
    for suffix in ("; WhenCanBorrow=TryNextFlavor",
                   "; WhenCanBorrow=TryNextFlavor,WhenCanPreempt=MayStopSearch")
]
CASES += [
    Case("when borrowing while preemption is needed, but borrowingLimit exceeds the quota "
         "available in the cohort",
         (ps(MAIN, 1, {"cpu": "12"}),),
         cq(CQ, group(fq("one", cpu=("0", "12"))), cohort=COHORT, policy=BORROW_LOWER),
         "NoFit", (WantPodSet(MAIN, {}, (maxcap("cpu", "one", "0", "12", "11"),)),),
         secondary=cq(CQ2, group(fq("one", cpu="11")), cohort=COHORT),
         secondary_usage={("one", "cpu"): "10"},
         want_no_fit="ExceedsMaxQuota"),
    Case("lend try next flavor, found the second flavor",
         (ps(MAIN, 1, {"cpu": "9"}),),
         cq(CQ, group(fq("one", pods="10", cpu=("10", None, "1")),
                      fq("two", pods="10", cpu=("10", None, "0"))),
            cohort=COHORT, flavor_fungibility=TNF),
         "Fit", (WantPodSet(MAIN, {"cpu": M("two"), "pods": M("two")}),),
         {("two", "cpu"): "9", ("two", "pods"): "1"},
         cluster_queue_usage={("one", "cpu"): "2"},
         secondary=cq(CQ2, group(fq("one", cpu="1")), cohort=COHORT)),
    Case("lend try next flavor, found the first flavor",
         (ps(MAIN, 1, {"cpu": "9"}),),
         cq(CQ, group(fq("one", pods="10", cpu=("10", None, "1")),
                      fq("two", pods="10", cpu=("1", None, "0"))),
            cohort=COHORT, flavor_fungibility=TNF),
         "Fit", (WantPodSet(MAIN, {"cpu": M("one"), "pods": M("one")}),),
         {("one", "cpu"): "9", ("one", "pods"): "1"}, want_borrowing=1,
         cluster_queue_usage={("one", "cpu"): "2"},
         secondary=cq(CQ2, group(fq("one", cpu="1")), cohort=COHORT)),
]
CASES += [
    Case("cannot preempt in cohort (oracle returns None) for the first flavor, tries the second "
         f"flavor (which fits){suffix}",
         (ps(MAIN, 1, {"cpu": "2"}),),
         cq(CQ, group(fq("one", cpu=("0", "2")), fq("two", cpu=("0", "2"))),
            cohort=COHORT, policy=BORROW_LOWER, flavor_fungibility=MSS),
         "Fit", (WantPodSet(MAIN, {"cpu": M("two")}),), {("two", "cpu"): "2"}, want_borrowing=1,
         secondary=cq(CQ2, group(fq("one", cpu="2"), fq("two", cpu="2")), cohort=COHORT),
         secondary_usage={("one", "cpu"): "2"},
         simulation={("one", "cpu"): ("NoCandidates", 0)})
    for suffix in ("", DEPRECATED_MSS)
]
CASES += [
    Case("quota exhausted, but can preempt in cohort and ClusterQueue",
         (ps(MAIN, 1, {"cpu": "9"}),),
         cq(CQ, group(fq("one", pods="10", cpu=("10", None, "0"))), cohort=COHORT),
         "Preempt", (WantPodSet(MAIN, {"cpu": M("one", "Preempt"), "pods": M("one")},
                                (unused("cpu", "one", "1"),)),),
         {("one", "cpu"): "9", ("one", "pods"): "1"}, want_borrowing=1,
         cluster_queue_usage={("one", "cpu"): "2"},
         secondary=cq(CQ2, group(fq("one", pods="0", cpu="0")), cohort=COHORT),
         simulation={("one", "cpu"): ("Preempt", 1)}),
]
CASES += [
    Case("when borrowing while preemption is needed for flavor one, fair sharing enabled, "
         f"reclaimWithinCohort={reclaim}{suffix}",
         (ps(MAIN, 1, {"cpu": "12"}),),
         cq(CQ, group(fq("one", cpu="0"), fq("two", cpu="12")), cohort=COHORT,
            policy=preemption(reclaim=reclaim), flavor_fungibility=MSS),
         *(("Preempt", _ONE_PREEMPT_12, {("one", "cpu"): "12"}, 1) if reclaim == "Any" else
           ("Fit", (WantPodSet(MAIN, {"cpu": M("two")}),), {("two", "cpu"): "12"}, 0)),
         secondary=cq(CQ2, group(fq("one", cpu="12")), cohort=COHORT),
         secondary_usage={("one", "cpu"): "10"},
         simulation={("one", "cpu"): ("Preempt", 1) if reclaim == "Any" else ("NoCandidates", 0)},
         fair_sharing=True)
    for reclaim in ("Any", "Never")
    for suffix in ("", DEPRECATED_MSS)
]
CASES += [
    Case("workload slice preemption fits in the original workload resource flavor",
         (ps(MAIN, 1, {"cpu": "3", "memory": "10Mi"}),),
         cq(CQ, group(fq("one", cpu="3", memory="1Gi"), fq("two", cpu="4", memory="2Gi"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("two"), "memory": M("two")}),),
         {("two", "cpu"): "1", ("two", "memory"): "0"},
         replaced=((MAIN, usage({"cpu": "2", "memory": "10Mi"}),  # type: ignore[arg-type]
                    {"cpu": "two", "memory": "two"}),)),
    Case("workload slice preemption does not fit in the original workload resource flavor",
         (ps(MAIN, 1, {"cpu": "3", "memory": "10Mi"}),),
         cq(CQ, group(fq("one", cpu="500m", memory="1Gi"), fq("two", cpu="4", memory="2Gi"))),
         "NoFit", (WantPodSet(MAIN, {}, (
             maxcap("cpu", "one", "0", "1", "500m"),
             "could not assign two flavor since the original workload is assigned: one",
             "could not assign two flavor since the original workload is assigned: one")),),
         want_no_fit="ExceedsMaxQuota",
         replaced=((MAIN, usage({"cpu": "2", "memory": "10Mi"}),  # type: ignore[arg-type]
                    {"cpu": "one", "memory": "one"}),)),
    Case("multiple TAS flavors assigned to different resources in the same PodSet leads to NoFit",
         (replace(ps(MAIN, 1, {"cpu": "1", "memory": "1Mi"}),
                  topology=TopologyRequest(HOSTNAME, required=True)),),
         cq(CQ, group(fq("tas-a", cpu="10")), group(fq("tas-b", memory="10Mi"))),
         "NoFit", (WantPodSet(MAIN, {"cpu": M("tas-a"), "memory": M("tas-b")}),),
         {("tas-a", "cpu"): "1", ("tas-b", "memory"): "1Mi"},
         topologies={"tas-topo-a": (HOSTNAME,), "tas-topo-b": (HOSTNAME,)},
         want_errors={MAIN: "more than one TAS flavor assigned: tas-a, tas-b"}),
    Case("multi-podset, one fits and another fails, fitting podset attempts skipped in "
         "resolveNoFitReason",
         (ps("fitting-podset", 1, {"cpu": "1"}, node_selector={"type": "one"}),
          ps("blocking-podset", 1, {"cpu": "5"})),
         cq(CQ, group(fq("one", cpu="2"), fq("two", cpu="2"))),
         "NoFit",
         (WantPodSet("fitting-podset", {"cpu": M("one")}),
          WantPodSet("blocking-podset", {}, (maxcap("cpu", "one", "1", "5", "2"),
                                             maxcap("cpu", "two", "0", "5", "2")))),
         {("one", "cpu"): "1"},
         want_no_fit="ExceedsMaxQuota"),
]


def tas_context(spec: ClusterQueueSpec, flavors: dict[str, FlavorSpec],
                topologies: dict[str, tuple[str, ...]],
                nodes: tuple[TASNode, ...] = ()) -> TASContext:
    """The ClusterQueue's TAS flavors as Kueue's cache snapshot has them: a flavor whose
    topologyName names a Topology of the cache, over the nodes its labels select."""
    names = [f.flavor for g in spec.resource_groups for f in g.flavors]
    snapshots: dict[str, TASFlavorSnapshot | None] = {}
    for name in names:
        flavor = flavors.get(name)
        if flavor is None or flavor.topology not in topologies:
            continue
        selected = [n for n in nodes
                    if all(n.labels.get(k) == v for k, v in flavor.node_labels.items())]
        snapshots[name] = TASFlavorSnapshot(flavor.topology, topologies[flavor.topology],
                                            selected, tolerations=flavor.tolerations)
    return TASContext.for_queue(names, snapshots)


def run_assign(case: Case):  # type: ignore[no-untyped-def]
    queues = {case.cluster_queue.name: case.cluster_queue}
    if case.secondary is not None:
        queues[case.secondary.name] = case.secondary
    tree = QuotaTree(queues, {})
    if case.cluster_queue_usage:
        tree.add_usage(case.cluster_queue.name, usage(case.cluster_queue_usage), 1)
    if case.secondary is not None and case.secondary_usage:
        tree.add_usage(case.secondary.name, usage(case.secondary_usage), 1)
    simulation = {fr: (_POSSIBILITY[p], b) for fr, (p, b) in case.simulation.items()}

    def oracle(fr: tuple[str, str], amount: int) -> tuple[PreemptionMode, int]:
        return simulation.get(fr, (PreemptionMode.PREEMPT, 0))

    workload = WorkloadSpec("ns/wl", "main", case.cluster_queue.name, 0, 0.0, case.pods)
    node = tree.cluster_queues[case.cluster_queue.name]
    return assign_flavors(workload, case.cluster_queue, node, tree, RESOURCE_FLAVORS, oracle,
                          case.fair_sharing,
                          tas_context(case.cluster_queue, RESOURCE_FLAVORS, case.topologies),
                          replaced=case.replaced)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_assign_flavors(case: Case) -> None:
    """TestAssignFlavors: kubernetes-sigs/kueue ff69552e, FILE, case ``case.name``."""
    if case.skip:
        pytest.skip(case.skip)
    got = run_assign(case)
    assert got.mode == _MODES[case.want_mode]
    assert got.no_fit_reason == case.want_no_fit
    assert got.borrowing == case.want_borrowing
    assert got.usage == usage(case.want_usage)
    # statusComparer: an error compares alone, else the reasons sorted
    seen = [(o.name, {r: (f, m.name) for r, (f, m) in o.flavors.items()},
             o.error or sorted(o.reasons), o.count) for o in got.outcomes]
    want = [(w.name, {r: (f, _MODES[m].name) for r, (f, m) in w.flavors.items()},
             case.want_errors.get(w.name) or sorted(w.reasons), w.count)
            for w in case.want_pod_sets]
    assert seen == want


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES) == 60


# -- TestReclaimBeforePriorityPreemption ------------------------------------------------
# Three flavors uno, due, tre, each with 10 compute and 10 gpu in test-clusterqueue,
# lent to its cohort; other-clusterqueue has none of its own.

@dataclass(frozen=True)
class SmallCase:
    """The shape of upstream's smaller tables: requests, usages, oracle, fungibility,
    and the wanted representative mode and flavor per resource."""

    name: str
    requests: dict[str, str]
    test_usage: dict[tuple[str, str], str]
    want_mode: str
    want: dict[str, str]
    other_usage: dict[tuple[str, str], str] = field(default_factory=dict)
    simulation: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)
    fungibility_: tuple[str, str, str | None] | None = None
    flavors: tuple[FlavorQuotas, ...] = ()


def _run_small(case: SmallCase, queues: list[ClusterQueueSpec], cohorts: list[CohortSpec],
               flavors: dict[str, FlavorSpec]) -> tuple[AssignMode, dict[str, str]]:
    tree = QuotaTree({q.name: q for q in queues}, {c.name: c for c in cohorts})
    tree.add_usage(queues[1].name, usage(case.other_usage), 1)
    tree.add_usage(queues[0].name, usage(case.test_usage), 1)
    simulation = {fr: (_POSSIBILITY[p], b) for fr, (p, b) in case.simulation.items()}

    def oracle(fr: tuple[str, str], amount: int) -> tuple[PreemptionMode, int]:
        return simulation.get(fr, (PreemptionMode.PREEMPT, 0))

    workload = WorkloadSpec("ns/wl", "main", queues[0].name, 0, 0.0,
                            (ps(MAIN, 1, case.requests),))
    got = assign_flavors(workload, queues[0], tree.cluster_queues[queues[0].name], tree, flavors,
                         oracle)
    return got.mode, {r: f for r, (f, _) in got.outcomes[0].flavors.items()}


RECLAIM_CASES = [
    SmallCase("Select first flavor which fits", {"gpu": "10"}, {("uno", "gpu"): "1"}, "Fit",
              {"gpu": "tre"}, other_usage={("due", "gpu"): "1"}),
    SmallCase("Select first flavor where gpu reclamation is possible", {"gpu": "10"},
              {("uno", "gpu"): "1"}, "Preempt", {"gpu": "due"},
              other_usage={("due", "gpu"): "1", ("tre", "gpu"): "1"},
              simulation={("uno", "gpu"): ("Preempt", 0), ("due", "gpu"): ("Reclaim", 0)}),
    *(SmallCase(name, {"gpu": "10"}, {("uno", "gpu"): "1"}, "Preempt", {"gpu": "uno"},
                other_usage={("due", "gpu"): "1", ("tre", "gpu"): "1"},
                fungibility_=("", "MayStopSearch", None))
      for name in ("Select first flavor when flavor fungibility is disabled",
                   "Select first flavor when flavor fungibility is disabled; using deprecated "
                   "WhenCanPreempt=MayStopSearch")),
    SmallCase("Select first flavor where priority based preemption is possible", {"gpu": "10"},
              {("uno", "gpu"): "1", ("due", "gpu"): "1", ("tre", "gpu"): "1"}, "Preempt",
              {"gpu": "uno"}),
    SmallCase("Select second flavor where gpu reclamation is possible, as compute Fits",
              {"gpu": "10", "compute": "10"},
              {("uno", "gpu"): "1", ("uno", "compute"): "1", ("due", "compute"): "1"},
              "Preempt", {"gpu": "tre", "compute": "tre"},
              other_usage={("due", "gpu"): "1", ("tre", "gpu"): "1"},
              simulation={("uno", "gpu"): ("Preempt", 0), ("due", "gpu"): ("Reclaim", 0),
                          ("tre", "gpu"): ("Reclaim", 0)}),
]


@pytest.mark.parametrize("case", RECLAIM_CASES, ids=[c.name for c in RECLAIM_CASES])
def test_reclaim_before_priority_preemption(case: SmallCase) -> None:
    """TestReclaimBeforePriorityPreemption: kubernetes-sigs/kueue ff69552e, FILE."""
    ff = fungibility(*case.fungibility_) if case.fungibility_ else fungibility("", "TryNextFlavor")
    names = ("uno", "due", "tre")
    test_cq = cq("test-clusterqueue",
                 group(*(fq_map(n, {"compute": "10", "gpu": "10"}) for n in names)),
                 cohort="cohort", flavor_fungibility=ff,
                 policy=preemption(within="LowerPriority", reclaim="LowerPriority"))
    other_cq = cq("other-clusterqueue",
                  group(*(fq_map(n, {"compute": "0", "gpu": "0"}) for n in names)),
                  cohort="cohort")
    mode, flavors = _run_small(case, [test_cq, other_cq], [], {n: rf(n) for n in names})
    assert (mode, flavors) == (_MODES[case.want_mode], case.want)


# -- TestDeletedFlavors -------------------------------------------------------------------

DELETED_CASES = [
    Case("multiple flavors, skip missing ResourceFlavor",
         (ps(MAIN, 1, {"cpu": "3"}),),
         cq(CQ, group(fq("deleted-flavor", cpu="4"), fq("flavor", cpu="4"))),
         "Fit", (WantPodSet(MAIN, {"cpu": M("flavor")}),), {("flavor", "cpu"): "3"}),
    Case("flavor not found",
         (ps(MAIN, 1, {"cpu": "1"}),),
         cq(CQ, group(fq("deleted-flavor", cpu="4"))),
         "NoFit", (WantPodSet(MAIN, {}, ("flavor deleted-flavor not found",)),),
         want_no_fit="NoMatchingFlavor"),
]


@pytest.mark.parametrize("case", DELETED_CASES, ids=[c.name for c in DELETED_CASES])
def test_deleted_flavors(case: Case) -> None:
    """TestDeletedFlavors: kubernetes-sigs/kueue ff69552e, FILE (the ClusterQueue names a
    flavor that is no longer among the ResourceFlavors)."""
    tree = QuotaTree({case.cluster_queue.name: case.cluster_queue}, {})
    workload = WorkloadSpec("ns/wl", "main", CQ, 0, 0.0, case.pods)
    got = assign_flavors(workload, case.cluster_queue, tree.cluster_queues[CQ], tree,
                         {"flavor": rf("flavor")}, None)
    assert got.mode == _MODES[case.want_mode]
    assert got.no_fit_reason == case.want_no_fit
    assert got.usage == usage(case.want_usage)
    assert [(o.name, {r: (f, m.name) for r, (f, m) in o.flavors.items()}, sorted(o.reasons))
            for o in got.outcomes] == [
        (w.name, {r: (f, _MODES[m].name) for r, (f, m) in w.flavors.items()}, sorted(w.reasons))
        for w in case.want_pod_sets]


# -- TestHierarchical ----------------------------------------------------------------------
# Cohorts three (root) > two > one, each with 4 cpu in the flavor of its name;
# test-clusterqueue is in one, other-clusterqueue in two, both with no quota of their own.

_ZERO_FLAVORS = tuple(fq(n, cpu="0") for n in ("one", "two", "three"))

HIERARCHICAL_CASES = [
    SmallCase("Select the top flavor", {"cpu": "4"}, {("one", "cpu"): "4"}, "Fit",
              {"cpu": "three"}, other_usage={("two", "cpu"): "4"}, flavors=_ZERO_FLAVORS),
    SmallCase("Select the first flavor which fits", {"cpu": "4"}, {("one", "cpu"): "4"}, "Fit",
              {"cpu": "two"}, flavors=_ZERO_FLAVORS),
    SmallCase("Select deeper-borrowing flavor that fits when shallower-borrowing flavor has no "
              "preemption candidates", {"cpu": "4"}, {("one", "cpu"): "4"}, "Fit",
              {"cpu": "two"},
              fungibility_=("TryNextFlavor", "TryNextFlavor", "PreemptionOverBorrowing"),
              simulation={("one", "cpu"): ("NoCandidates", 1)},
              flavors=(fq("one", cpu=("4", "0")), fq("two", cpu="0"), fq("three", cpu="0"))),
]


@pytest.mark.parametrize("case", HIERARCHICAL_CASES, ids=[c.name for c in HIERARCHICAL_CASES])
def test_hierarchical(case: SmallCase) -> None:
    """TestHierarchical: kubernetes-sigs/kueue ff69552e, FILE."""
    ff = fungibility(*case.fungibility_) if case.fungibility_ else fungibility("", "TryNextFlavor")
    test_cq = cq("test-clusterqueue", group(*case.flavors), cohort="one", flavor_fungibility=ff,
                 policy=preemption(within="LowerPriority", reclaim="LowerPriority"))
    other_cq = cq("other-clusterqueue", group(*_ZERO_FLAVORS), cohort="two")
    cohorts = [CohortSpec("three", None, (group(fq("three", cpu="4")),)),
               CohortSpec("two", "three", (group(fq("two", cpu="4")),)),
               CohortSpec("one", "two", (group(fq("one", cpu="4")),))]
    names = ("one", "two", "three")
    mode, flavors = _run_small(case, [test_cq, other_cq], cohorts, {n: rf(n) for n in names})
    assert (mode, flavors) == (_MODES[case.want_mode], case.want)


# -- TestIsPreferred -------------------------------------------------------------------------

_G = {"noFit": PreemptionMode.NO_FIT, "noPreemptionCandidates": PreemptionMode.NO_CANDIDATES,
      "preempt": PreemptionMode.PREEMPT, "reclaim": PreemptionMode.RECLAIM,
      "fit": PreemptionMode.FIT}
POB, BOP = "PreemptionOverBorrowing", "BorrowingOverPreemption"
IS_PREFERRED_CASES = [
    ("feature gate disabled prioritises preemption", ("fit", 0), ("preempt", 0), None, True),
    ("explicit BorrowingOverPreemption prioritises borrowing distance", ("preempt", 1),
     ("fit", 2), BOP, False),
    ("explicit PreemptionOverBorrowing prioritises lower preemption", ("preempt", 1), ("fit", 2),
     POB, True),
    ("explicit PreemptionOverBorrowing breaks borrowing ties with preemption", ("preempt", 1),
     ("fit", 1), POB, False),
    ("explicit PreemptionOverBorrowing rejects no-candidate flavor before borrowing comparison",
     ("noPreemptionCandidates", 1), ("fit", 2), POB, False),
    ("explicit PreemptionOverBorrowing prefers fit over shallower-borrowing no-candidate flavor",
     ("fit", 2), ("noPreemptionCandidates", 1), POB, True),
    ("no-candidate flavor remains preferable to no-fit flavor", ("noPreemptionCandidates", 1),
     ("noFit", 0), None, True),
    ("no-fit flavor remains worse than no-candidate flavor", ("noFit", 0),
     ("noPreemptionCandidates", 1), None, False),
    ("no-candidate flavors retain borrowing preference", ("noPreemptionCandidates", 1),
     ("noPreemptionCandidates", 2), POB, True),
    ("no-candidate flavors retain borrowing preference in reverse", ("noPreemptionCandidates", 2),
     ("noPreemptionCandidates", 1), POB, False),
]


@pytest.mark.parametrize(("name", "a", "b", "preference", "want"), IS_PREFERRED_CASES,
                         ids=[c[0] for c in IS_PREFERRED_CASES])
def test_is_preferred(name: str, a: tuple[str, int], b: tuple[str, int], preference: str | None,
                      want: bool) -> None:
    """TestIsPreferred: kubernetes-sigs/kueue ff69552e, FILE."""
    assert is_preferred(GranularMode(_G[a[0]], a[1]), GranularMode(_G[b[0]], b[1]),
                        preference) is want


# -- TestIsNoFitDueToCapacityAndLimits ---------------------------------------------------------

_NOFIT_FLAVORS = {f.name: f for f in (
    rf("flavor-a", {"type": "a"}), rf("flavor-b", taints=(("key", "val", NO_SCHEDULE),)),
    rf("flavor-tas", topology="topology-tas"))}
_SHARED_FLAVORS = {f.name: f for f in (rf("flavor-shared", {"type": "shared"}),
                                       rf("flavor-a", {"type": "a"}))}
_AB = ("flavor-a", "flavor-b")


def _ab_cq(name: str, nominal: str, borrowing: str, cohort: str | None = None) -> ClusterQueueSpec:
    return cq(name, group(*(fq(f, cpu=(nominal, borrowing)) for f in _AB)), cohort=cohort)


@dataclass(frozen=True)
class NoFitCase:
    name: str
    pod_set: PodSetRequest | None
    want_reason: str
    want_attempts: dict[str, str]
    cluster_queue: ClusterQueueSpec | None = None
    siblings: tuple[ClusterQueueSpec, ...] = ()
    sibling_usage: dict[str, dict[tuple[str, str], str]] = field(default_factory=dict)
    flavors: dict[str, FlavorSpec] | None = None
    simulation: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)
    skip: str = ""
    topologies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    cq_usage: dict[tuple[str, str], str] = field(default_factory=dict)
    replaced: tuple[OldPodSet, ...] | None = None  # the old workload slice (as Case)
    allowed_flavors: frozenset[str] | None = None


TOLERATE_KEY = ("key", "Equal", "val", NO_SCHEDULE)
_TAS_CQ = cq("cq-tas", group(*(fq(f, cpu=("2", "2")) for f in (*_AB, "flavor-tas"))))
_RACK = {"topology-tas": ("rack",)}


def _tas_ps(cpu: str, level: str) -> PodSetRequest:
    return replace(ps("main", 1, {"cpu": cpu}), topology=TopologyRequest(level, required=True))


_ALL_NO_MATCH = {"flavor-a": "NoMatchingFlavor", "flavor-b": "NoMatchingFlavor"}
NOFIT_CASES = [
    NoFitCase("succeeds to schedule on flavor-a", ps("main", 1, {"cpu": "1"}), "",
              {"flavor-a": "", "flavor-b": "NoMatchingFlavor"}),
    NoFitCase("insufficient quota", ps("main", 1, {"cpu": "3"}), "ExceedsMaxQuota",
              {"flavor-a": "ExceedsMaxQuota", "flavor-b": "NoMatchingFlavor"}),
    NoFitCase("exceeds max capacity limits", ps("main", 1, {"cpu": "5"}), "ExceedsMaxQuota",
              {"flavor-a": "ExceedsMaxQuota", "flavor-b": "NoMatchingFlavor"}),
    NoFitCase("taints mismatch", ps("main", 1, {"cpu": "1"}, node_selector={"type": "wrong"}),
              "NoMatchingFlavor", {"flavor-a": "NoMatchingFlavor", "flavor-b": "NoMatchingFlavor"}),
    NoFitCase("succeeds to schedule on flavor-b with a tolerated taint",
              ps("main", 1, {"cpu": "1"}, node_selector={"type": "non-existent"},
                 tolerations=(TOLERATE_KEY,)), "", {"flavor-a": "NoMatchingFlavor"}),
    NoFitCase("node affinity mismatch when both flavors declare same key",
              ps("main", 1, {"cpu": "1"}, node_selector={"type": "non-existent"}),
              "NoMatchingFlavor", {"flavor-a": "NoMatchingFlavor", "flavor-b": "NoMatchingFlavor"},
              flavors={"flavor-a": rf("flavor-a", {"type": "a"}),
                       "flavor-b": rf("flavor-b", {"type": "b"})}),
    NoFitCase("flavor mismatch for workload slices",
              ps("main", 1, {"cpu": "2"}, node_selector={"type": "a"}), "NoMatchingFlavor",
              {"flavor-a": "NoMatchingFlavor"},
              replaced=(("main", {"cpu": 1000}, {"cpu": "flavor-b"}),)),
    NoFitCase("prioritization of structural mismatch over capacity mismatch",
              ps("main", 1, {"cpu": "3", "memory": "20Gi"}, node_selector={"type": "wrong"}),
              "NoMatchingFlavor", {"flavor-a": "NoMatchingFlavor", "flavor-b": "NoMatchingFlavor"}),
    NoFitCase("TAS not supported", _tas_ps("1", "rack"), "NoMatchingFlavor",
              {"flavor-a": "NoMatchingFlavor"}),
    NoFitCase("TAS level not supported", _tas_ps("1", "block"), "NoMatchingFlavor",
              {**_ALL_NO_MATCH, "flavor-tas": "NoMatchingFlavor"},
              cluster_queue=_TAS_CQ, topologies=_RACK),
    NoFitCase("TAS only flavor mismatch",
              ps("main", 1, {"cpu": "1"}, node_selector={"type": "wrong"}),
              "NoMatchingFlavor", {**_ALL_NO_MATCH, "flavor-tas": "NoMatchingFlavor"},
              cluster_queue=_TAS_CQ, topologies=_RACK),
    NoFitCase("tas placement fails", _tas_ps("1", "rack"), "TopologyPlacementFailed",
              {**_ALL_NO_MATCH, "flavor-tas": "TopologyPlacementFailed"},
              cluster_queue=_TAS_CQ, topologies=_RACK),
    NoFitCase("tas placement fails, cohort has no capacity", _tas_ps("3", "rack"),
              "ExceedsMaxQuota", {**_ALL_NO_MATCH, "flavor-tas": "ExceedsMaxQuota"},
              cluster_queue=_TAS_CQ, topologies=_RACK),
    # upstream turns ConcurrentAdmission on too; it changes nothing for one workload
    NoFitCase("tas placement fails, but queue has available capacity (waiting for preemption)",
              _tas_ps("1", "rack"), "TopologyPlacementFailed",
              {**_ALL_NO_MATCH, "flavor-tas": "TopologyPlacementFailed"},
              cluster_queue=_TAS_CQ, topologies=_RACK,
              cq_usage={("flavor-tas", "cpu"): "2"}),
    # ConcurrentAdmission on: the workload's allowed flavors (assign_flavors(allowed_flavors=));
    # flavor-b is skipped without an attempt, as upstream (whose check of it is then vacuous)
    NoFitCase("flavor not allowed by annotations", ps("main", 1, {"cpu": "1"}), "",
              {"flavor-b": "NoMatchingFlavor"}, cq_usage={("flavor-a", "cpu"): "4"},
              allowed_flavors=frozenset({"flavor-a"})),
    NoFitCase("insufficient capacity, cohort has available capacity (waiting for quota)",
              ps("main", 1, {"cpu": "3"}), "WaitingForQuota",
              {"flavor-a": "WaitingForQuota", "flavor-b": "NoMatchingFlavor"},
              cluster_queue=_ab_cq("cq", "2", "2", "cohort"),
              siblings=(_ab_cq("sibling", "2", "2", "cohort"),),
              sibling_usage={"sibling": {("flavor-a", "cpu"): "2", ("flavor-b", "cpu"): "2"}}),
    NoFitCase("exceeds cohort max capacity limits", ps("main", 1, {"cpu": "5"}),
              "ExceedsMaxQuota", {"flavor-a": "ExceedsMaxQuota", "flavor-b": "NoMatchingFlavor"},
              cluster_queue=_ab_cq("cq", "2", "2", "cohort"),
              siblings=(_ab_cq("sibling", "2", "2", "cohort"),)),
    NoFitCase("exceeds borrowing limit but cohort has capacity", ps("main", 1, {"cpu": "4"}),
              "ExceedsMaxQuota", {"flavor-a": "ExceedsMaxQuota", "flavor-b": "NoMatchingFlavor"},
              cluster_queue=_ab_cq("cq", "2", "1", "cohort"),
              siblings=(_ab_cq("sibling", "5", "5", "cohort"),)),
    NoFitCase("flavor spanning multiple resource groups",
              ps("main", 1, {"cpu": "3", "memory": "3Gi"}, node_selector={"type": "a"}),
              "NoMatchingFlavor",
              {"flavor-shared": "NoMatchingFlavor", "flavor-a": "WaitingForQuota"},
              cluster_queue=cq("shared-cq", group(fq("flavor-shared", cpu=("2", "4")),
                                                  fq("flavor-a", cpu=("2", "4"))),
                               group(fq("flavor-shared", memory=("2Gi", "4Gi"))), cohort="cohort"),
              siblings=(cq("sibling", group(fq("flavor-shared", cpu=("2", "2")),
                                            fq("flavor-a", cpu=("2", "2"))),
                           group(fq("flavor-shared", memory=("2Gi", "2Gi"))), cohort="cohort"),),
              sibling_usage={"sibling": {("flavor-shared", "cpu"): "2",
                                         ("flavor-shared", "memory"): "2Gi",
                                         ("flavor-a", "cpu"): "2"}},
              flavors=_SHARED_FLAVORS,
              simulation={("flavor-shared", "cpu"): ("NoCandidates", 0),
                          ("flavor-shared", "memory"): ("NoCandidates", 0),
                          ("flavor-a", "cpu"): ("NoCandidates", 0)}),
]


@pytest.mark.parametrize("case", NOFIT_CASES, ids=[c.name for c in NOFIT_CASES])
def test_is_no_fit_due_to_capacity_and_limits(case: NoFitCase) -> None:
    """TestIsNoFitDueToCapacityAndLimits: kubernetes-sigs/kueue ff69552e, FILE. As upstream,
    an attempt's reason is checked for the flavors the assigner tried."""
    if case.skip:
        pytest.skip(case.skip)
    assert case.pod_set is not None
    queue = case.cluster_queue or _ab_cq("cq", "2", "4")
    tree = QuotaTree({q.name: q for q in (queue, *case.siblings)}, {})
    for name, amounts in case.sibling_usage.items():
        tree.add_usage(name, usage(amounts), 1)
    if case.cq_usage:
        tree.add_usage(queue.name, usage(case.cq_usage), 1)
    simulation = {fr: (_POSSIBILITY[p], b) for fr, (p, b) in case.simulation.items()}

    def oracle(fr: tuple[str, str], amount: int) -> tuple[PreemptionMode, int]:
        return simulation.get(fr, (PreemptionMode.PREEMPT, 0))

    workload = WorkloadSpec("ns/wl", "main", queue.name, 0, 0.0, (case.pod_set,))
    flavors = case.flavors or _NOFIT_FLAVORS
    got = assign_flavors(workload, queue, tree.cluster_queues[queue.name], tree, flavors, oracle,
                         tas=tas_context(queue, flavors, case.topologies),
                         replaced=case.replaced, allowed_flavors=case.allowed_flavors)
    assert got.no_fit_reason == case.want_reason
    tried = {a.flavor: a.no_fit_reason for o in got.outcomes for a in o.attempts}
    assert {f: r for f, r in tried.items() if f in case.want_attempts} == \
        {f: r for f, r in case.want_attempts.items() if f in tried}
    assert tried, "the assigner tried no flavor"


# -- TestAssignment_RequiresBorrowing, TestAssignment_TotalRequestsFor --------------------------

@pytest.mark.parametrize(("borrowing", "want"), [(0, False), (1, True), (2, True)],
                         ids=["no borrowing", "borrows at level 1", "borrows at level 2"])
def test_assignment_requires_borrowing(borrowing: int, want: bool) -> None:
    """TestAssignment_RequiresBorrowing: kubernetes-sigs/kueue ff69552e, FILE."""
    assignment = WorkloadAssignment(AssignMode.FIT, (), {}, borrowing > 0, "", borrowing)
    assert assignment.requires_borrowing() is want


_TOTAL_CQ = cq(CQ, group(fq("default", cpu="10", memory="10Mi")))
_ONE_POD = {"cpu": "1", "memory": "1Mi"}
# name, per-pod requests, the pods admitted (upstream's assignment Count), why skipped
TOTAL_REQUESTS_CASES = [
    ("RegularWorkload", _ONE_POD, 2, ""),
    ("WorkloadWithPartialAdmission", _ONE_POD, 1, ""),
    ("WorkloadWithZeroQuantityResourceNotInClusterQueueSkipsResourceWithoutFlavor",
     {"cpu": "1", "memory": "1Mi", "example.com/gpu": "0"}, 2, ""),
]


@pytest.mark.parametrize(("name", "requests", "admitted", "skip"), TOTAL_REQUESTS_CASES,
                         ids=[c[0] for c in TOTAL_REQUESTS_CASES])
def test_assignment_total_requests_for(name: str, requests: dict[str, str], admitted: int,
                                       skip: str) -> None:
    """TestAssignment_TotalRequestsFor: kubernetes-sigs/kueue ff69552e, FILE: the quota an
    admission of ``admitted`` of the workload's 2 pods charges per (flavor, resource) —
    dralab's assignment usage of the workload scaled to that count (partial admission)."""
    if skip:
        pytest.skip(skip)
    tree = QuotaTree({CQ: _TOTAL_CQ}, {})
    workload = scaled_workload(
        WorkloadSpec("default/test", "main", CQ, 0, 0.0, (ps(MAIN, 2, requests),)), [admitted])
    got = assign_flavors(workload, _TOTAL_CQ, tree.cluster_queues[CQ], tree,
                         {"default": rf("default")}, None)
    assert got.pod_sets[0].count == admitted
    assert {fr: v for fr, v in got.usage.items() if v} == usage(
        {("default", "cpu"): str(admitted), ("default", "memory"): f"{admitted}Mi"})


# -- TestAssignFlavorsWithAllowedFlavors (ConcurrentAdmission on) -------------------------------
_ALLOWED_CQ = cq("cq", group(fq("f1", cpu="10"), fq("f2", cpu="10"), fq("occupied", cpu="1")))
# name, the kueue.x-k8s.io/workload-allowed-resource-flavors list (None: no annotation),
# want flavor, want mode
ALLOWED_CASES = [
    ("allow only f2", ("f2",), "f2", "Fit"),
    ("allow only f1", ("f1",), "f1", "Fit"),
    ("allow only the occupied flavor", ("occupied",), "", "NoFit"),
    ("allow f1 and f2", ("f1", "f2"), "f1", "Fit"),
    ("no constraints", None, "f1", "Fit"),
    ("allow non-existent", ("non-existent",), "", "NoFit"),
]


@pytest.mark.parametrize(("name", "allowed", "want_flavor", "want_mode"), ALLOWED_CASES,
                         ids=[f"TestAssignFlavorsWithAllowedFlavors/{c[0]}"
                              for c in ALLOWED_CASES])
def test_assign_flavors_with_allowed_flavors(name: str, allowed: tuple[str, ...] | None,
                                             want_flavor: str, want_mode: str) -> None:
    """TestAssignFlavorsWithAllowedFlavors: kubernetes-sigs/kueue ff69552e, FILE: a
    workload allowed only some flavors (ConcurrentAdmission) is assigned among them."""
    tree = QuotaTree({"cq": _ALLOWED_CQ}, {})
    workload = WorkloadSpec("ns/wl", "main", "cq", 0, 0.0, (ps("main", 1, {"cpu": "2"}),))
    flavors = {n: rf(n) for n in ("f1", "f2", "occupied")}
    got = assign_flavors(workload, _ALLOWED_CQ, tree.cluster_queues["cq"], tree, flavors, None,
                         allowed_flavors=None if allowed is None else frozenset(allowed))
    assert got.mode == _MODES[want_mode]
    if want_mode == "Fit":
        assert got.pod_sets[0].flavors["cpu"] == want_flavor


# name, the new slice's pod sets, the old slice's (name, count, per-pod requests), want usage
_ONE_MI = {"cpu": "1", "memory": "1Mi"}
_TWO_MI = {"cpu": "2", "memory": "2Mi"}
REPLACEMENT_CASES = [
    ("WorkloadWithReplacement", ((MAIN, 3, _ONE_MI),), ((MAIN, 1, _ONE_MI),),
     {("default", "cpu"): "2", ("default", "memory"): "2Mi"}),
    ("WorkloadWithMultiplePodSetsOneUnchangedReplacement",
     (("worker", 2, _ONE_MI), ("coordinator", 3, _TWO_MI)),
     (("worker", 2, _ONE_MI), ("coordinator", 1, _TWO_MI)),
     {("default", "cpu"): "4", ("default", "memory"): "4Mi"}),
]


@pytest.mark.parametrize(("name", "new", "old", "want"), REPLACEMENT_CASES,
                         ids=[c[0] for c in REPLACEMENT_CASES])
def test_assignment_total_requests_for_replacement(
        name: str, new: tuple[tuple[str, int, dict[str, str]], ...],
        old: tuple[tuple[str, int, dict[str, str]], ...], want: dict[tuple[str, str], str]
        ) -> None:
    """TestAssignment_TotalRequestsFor, the cases with a replaced workload slice:
    kubernetes-sigs/kueue ff69552e, FILE. The quota a scaled-up slice charges is what
    it asks beyond the old slice (each pod set's count less the old one's)."""
    tree = QuotaTree({CQ: _TOTAL_CQ}, {})
    workload = WorkloadSpec("default/test", "main", CQ, 0, 0.0,
                            tuple(ps(n, c, r) for n, c, r in new))
    replaced = tuple((n, {res: milli(v) * c for res, v in r.items()},
                      dict.fromkeys(r, "default")) for n, c, r in old)
    got = assign_flavors(workload, _TOTAL_CQ, tree.cluster_queues[CQ], tree,
                         {"default": rf("default")}, None, replaced=replaced)
    assert {fr: v for fr, v in got.usage.items() if v} == usage(want)


# (the bookmark tables -- FlavorScanRecordsLastTriedFlavorIdx and
# RecomputeRecordsLastTriedFlavorIdx -- are ported in test_flavor_scan_progress.py; the TAS
# tables -- WorkloadsTopologyRequests (ErrorBranches, ElasticJobsValidation,
# RequiredTopologyRejectedForElasticWorkloadSlices, ZeroCountPodSetSkipped),
# ComputeTASNetUsage, LeaderWorkerSetTASFlavor, TasFlavorsOnly -- in
# test_tas_flavorassigner.py)
