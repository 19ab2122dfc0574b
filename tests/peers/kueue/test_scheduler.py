"""Kueue's scheduler tables, ported case by case: one scheduling cycle each.

Source: kubernetes-sigs/kueue at ff69552e79ad21652c36caa97038382e55625cf7,
``pkg/scheduler/scheduler_test.go``, ``TestSchedule``: one pytest case per upstream
case (id = the upstream case name), on upstream's shared fixtures (the ResourceFlavors,
the ClusterQueues sales, eng-alpha, eng-beta, flavor-nonexistent-cq, lend-a, lend-b,
their LocalQueues and namespace labels) plus the case's own queues, cohorts and
workloads. Each runs one cycle of dralab's ``KueuePolicy`` (``admit_cycles(..., 1)``)
and compares what upstream's test compares, as far as dralab models it:

* the workloads that got quota in the cycle, with their ClusterQueue and, per pod
  set, the flavor, usage and count of every resource (``wantAssignments`` less the
  workloads admitted before the cycle);
* the workloads preempted (``Evicted``/``Preempted`` conditions in ``wantWorkloads``)
  and the preemptor's message ("... Pending the preemption of N workload(s)"):
  Kueue admits a preemptor in a later cycle, once its targets are gone; dralab
  admits it in the same cycle, so a preemptor counts as Kueue's pending one;
* the QuotaReserved=False message of every workload upstream leaves pending;
* the workloads left in each ClusterQueue's queue and set aside as inadmissible
  (``wantLeft``, ``wantInadmissibleLeft``).

Not compared: events, Admitted conditions and admission-check states (dralab reserves
quota; admission checks are not modelled), resourceRequests in the status.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from tests.peers.kueue.schedule_builders import (
    NO_SCHEDULE,
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

from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.cli.main import cli
from dralab.queueing.kueue import KueuePolicy, admit_cycles
from dralab.queueing.kueue.flavors import AssignMode
from dralab.queueing.kueue.policy import (
    FairCandidate,
    classic_order_key,
    fair_less,
    resources_to_reserve,
)
from dralab.queueing.limitrange import (
    adjusted,
    limit_range_summaries,
    validation_errors,
    validation_message,
)
from dralab.queueing.model import (
    Admission,
    ClusterQueueSpec,
    CohortSpec,
    FlavorQuotas,
    PodSetAssignment,
    PodSetRequest,
    PreemptionPolicy,
    QueueingState,
    ResourceGroup,
    WorkloadSpec,
)
from dralab.queueing.queue_order import QueueCondition, queue_order_timestamp
from dralab.queueing.requests import pod_requests

FILE = "pkg/scheduler/scheduler_test.go"

FLAVORS = {f.name: f for f in (
    rf("default"), rf("on-demand"), rf("spot"), rf("model-a"),
    rf("spot-tainted", taints=(("key", "val", NO_SCHEDULE),)),
    rf("spot-tainted-2", taints=(("key", "val2", NO_SCHEDULE),)),
)}

# Namespaces and their "dep" labels; the ClusterQueues select on dep.
NAMESPACES = {"default": "", "eng-alpha": "eng", "eng-beta": "eng", "eng-gamma": "eng",
              "sales": "sales", "lend": "lend"}


def _selecting(dep: str) -> frozenset[str]:
    return frozenset(ns for ns, label in NAMESPACES.items() if label == dep)


def _with_namespaces(spec: ClusterQueueSpec, dep: str) -> ClusterQueueSpec:
    from dataclasses import replace
    return replace(spec, namespaces=_selecting(dep))


BASE_CLUSTER_QUEUES = (
    _with_namespaces(cq("sales", group(fq("default", cpu=("50", "0"))), strategy="StrictFIFO"),
                     "sales"),
    _with_namespaces(cq("eng-alpha", group(fq("on-demand", cpu=("50", "50")),
                                           fq("spot", cpu=("100", "0"))),
                        cohort="eng", strategy="StrictFIFO"), "eng"),
    _with_namespaces(cq("eng-beta", group(fq("on-demand", cpu=("50", "10")),
                                          fq("spot", cpu=("0", "100"))),
                        group(fq("model-a", gpu=("20", "0"))),
                        cohort="eng", strategy="StrictFIFO",
                        policy=preemption(within="LowerPriority", reclaim="Any")), "eng"),
    cq("flavor-nonexistent-cq", group(fq("nonexistent-flavor", cpu="50")), strategy="StrictFIFO"),
    _with_namespaces(cq("lend-a", group(fq("default", cpu=("3", None, "2"))), cohort="lend"),
                     "lend"),
    _with_namespaces(cq("lend-b", group(fq("default", cpu=("2", None, "2"))), cohort="lend"),
                     "lend"),
)
BASE_LOCAL_QUEUES = {
    "sales/main": "sales", "sales/blocked": "eng-alpha", "eng-alpha/main": "eng-alpha",
    "eng-beta/main": "eng-beta", "sales/flavor-nonexistent-queue": "flavor-nonexistent-cq",
    "sales/cq-nonexistent-queue": "nonexistent-cq", "lend/lend-a-queue": "lend-a",
    "lend/lend-b-queue": "lend-b",
}

PodSetFlavors = tuple[str, Mapping[str, tuple[str, str]], int]  # name, res -> (flavor, qty), count


@dataclass(frozen=True)
class Wl:
    """MakeWorkload(name, namespace).Queue(queue).Priority(p).PodSets(...), and
    ReserveQuotaAt(MakeAdmission(cq).PodSets(...)) when ``admitted``."""

    key: str
    queue: str
    pod_sets: tuple[PodSetRequest, ...]
    priority: int = 0
    admitted: tuple[str, tuple[PodSetFlavors, ...]] | None = None
    created: float | None = None   # Creation(now + seconds); None: its place in the list
    replaces: str | None = None    # Annotation(WorkloadSliceReplacementFor, ...)
    invalid: str = ""              # what ValidateAdmissibility says of its templates
    gated: bool = False            # PreemptionGates(...) closed, the gate's feature on


def wl(key: str, queue: str, *pod_sets: PodSetRequest, priority: int = 0,
       admitted: tuple[str, tuple[PodSetFlavors, ...]] | None = None,
       created: float | None = None) -> Wl:
    return Wl(key, queue, pod_sets, priority, admitted, created)


def _limit_range(name: str, namespace: str, kind: str, **values: Mapping[str, str]
                 ) -> dict[str, object]:
    """MakeLimitRange(name, namespace).WithType(kind).WithValue(field, resource, q)..."""
    return {"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"limits": [{"type": kind, **{f[0].lower() + f[1:]: dict(v)
                                                  for f, v in values.items()}}]}}


def templated(key: str, queue: str, name: str, count: int, requests: Mapping[str, str],
              limits: Mapping[str, str] | None = None,
              limit_ranges: tuple[dict[str, object], ...] = ()) -> Wl:
    """MakeWorkload with MakePodSet(name, count).Request(...).Limit(...): one container,
    read as dralab admit reads a Workload's pod template -- through the namespace's
    LimitRanges (the case's objects) and Kueue's resource validation."""
    namespace = key.split("/", 1)[0]
    pod = decode({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "p", "namespace": namespace},
                  "spec": {"containers": [{"name": "c", "resources": {
                      "requests": dict(requests), "limits": dict(limits or {})}}]}})
    assert isinstance(pod, Pod)
    summary = limit_range_summaries([decode(doc) for doc in limit_ranges]).get(namespace)
    spec = adjusted(pod.spec, summary)
    invalid = validation_message([validation_errors(spec, 0, summary)])
    return Wl(key, queue, (PodSetRequest(name, count, pod_requests(spec)),), invalid=invalid)


def main(cpu: str, count: int = 1, **more: str) -> PodSetRequest:
    """MakeWorkload(...).Request(cpu, ...): the pod set "main", one pod."""
    return ps("main", count, {"cpu": cpu, **more})


def adm(cluster_queue: str, *pod_sets: PodSetFlavors) -> tuple[str, tuple[PodSetFlavors, ...]]:
    return cluster_queue, pod_sets


def psa(name: str, count: int = 1, **flavors: tuple[str, str]) -> PodSetFlavors:
    return name, {("example.com/gpu" if r == "gpu" else r): v for r, v in flavors.items()}, count


@dataclass(frozen=True)
class Case:
    name: str
    workloads: tuple[Wl, ...] = ()
    cluster_queues: tuple[ClusterQueueSpec, ...] = ()
    local_queues: Mapping[str, str] = field(default_factory=dict)
    cohorts: tuple[CohortSpec, ...] = ()
    fair_sharing: bool = False
    want_admitted: Mapping[str, tuple[str, tuple[PodSetFlavors, ...]]] = field(
        default_factory=dict)
    want_preempted: Mapping[str, str] = field(default_factory=dict)  # key -> reason
    want_pending: Mapping[str, str] = field(default_factory=dict)
    want_left: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    want_inadmissible: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    skip: str = ""
    xfail: str = ""
    feature_gates: Mapping[str, bool] = field(default_factory=dict)


def _admission(cluster_queue: str, pod_sets: tuple[PodSetFlavors, ...]) -> Admission:
    out = []
    for name, flavors, count in pod_sets:
        out.append(PodSetAssignment(name, {r: f for r, (f, _) in flavors.items()},
                                    {r: milli(q) for r, (_, q) in flavors.items()}, count))
    return Admission(cluster_queue, tuple(out))


def build_state(case: Case) -> QueueingState:
    queues = {q.name: q for q in (*BASE_CLUSTER_QUEUES, *case.cluster_queues)}
    state = QueueingState(flavors=dict(FLAVORS), cluster_queues=queues,
                          cohorts={c.name: c for c in case.cohorts},
                          local_queues={**BASE_LOCAL_QUEUES, **case.local_queues})
    for index, w in enumerate(case.workloads):
        # Upstream's workloads share one creation time; list order breaks the tie.
        created = float(index) if w.created is None else w.created
        state.workloads[w.key] = WorkloadSpec(w.key, w.queue, None, w.priority, created,
                                              w.pod_sets, w.replaces, invalid=w.invalid,
                                              preemption_gated=w.gated)
        if w.admitted is not None:
            state.admitted[w.key] = _admission(*w.admitted)
            state.admitted_at[w.key] = -1.0
    return state


def _shape(admission: Admission) -> tuple[str, tuple[PodSetFlavors, ...]]:
    return admission.cluster_queue, tuple(
        (p.name, {r: (f, str(p.usage.get(r, 0))) for r, f in sorted(p.flavors.items())}, p.count)
        for p in admission.pod_sets)


def _want_shape(want: tuple[str, tuple[PodSetFlavors, ...]]
                ) -> tuple[str, tuple[PodSetFlavors, ...]]:
    return _shape(_admission(*want))


def run_cycle(case: Case) -> None:
    state = build_state(case)
    before = set(state.admitted)
    policy = KueuePolicy(fair_sharing=case.fair_sharing,
                         partial_admission=case.feature_gates.get("PartialAdmission", True))
    policy.recompute_on_overlap = case.feature_gates.get(
        "RecomputeAssignmentUponPreemptionTargetsOverlap", True)
    decisions = admit_cycles(policy, state, 0.0, 1)
    preempted = {d.workload: d.reason for d in decisions if d.preempted}
    # (a replaced workload slice finishes: its replacement is admitted, not waiting)
    preemptors = {d.by for d in decisions
                  if d.preempted and d.by and d.reason != "WorkloadSliceReplaced"}
    admitted = {key: _shape(a) for key, a in state.admitted.items()
                if key not in before and key not in preemptors}
    assert admitted == {k: _want_shape(v) for k, v in case.want_admitted.items()}
    assert preempted == dict(case.want_preempted)
    pending = {key: message for key, message in policy.pending_messages.items()
               if key not in state.admitted}
    pending.update({key: policy.preemption_messages[key] for key in preemptors})
    assert {k: pending.get(k) for k in case.want_pending} == dict(case.want_pending)
    reasons = {key: policy.pending_reasons.get(key) for key in pending}
    reasons.update({key: "WaitingForPreemptedWorkloads" for key in preemptors})
    want_reasons = WANT_REASONS.get(case.name, {})
    assert {k: reasons.get(k) for k in want_reasons} == want_reasons
    contents = policy.queue_contents(state)
    for key in preemptors:  # Kueue keeps a preemptor in its queue, waiting for its targets
        contents.setdefault(state.admitted[key].cluster_queue, ([], []))[0].append(key)
    # Kueue's victims keep their quota until they are gone: in no queue yet.
    left = {name: tuple(sorted(k for k in q if k not in preempted))
            for name, (q, _) in contents.items()}
    inadmissible = {name: tuple(sorted(k for k in p if k not in preempted))
                    for name, (_, p) in contents.items()}
    left = {k: v for k, v in left.items() if v}
    inadmissible = {k: v for k, v in inadmissible.items() if v}
    assert left == {k: tuple(sorted(v)) for k, v in case.want_left.items()}
    assert inadmissible == {k: tuple(sorted(v)) for k, v in case.want_inadmissible.items()}


MSS = fungibility("MayStopSearch", "MayStopSearch")
NEW_IN_CQ = "Quota reserved"


CASES = [
    Case("use second flavor when the first has no preemption candidates; WhenCanPreempt: "
         "MayStopSearch",
         workloads=(
             wl("eng-alpha/admitted", "other", main("50"),
                admitted=adm("other-alpha", psa("main", cpu=("on-demand", "50")))),
             wl("eng-alpha/new", "other", main("20"))),
         cluster_queues=(cq("other-alpha", group(fq("on-demand", cpu=("50", "50")),
                                                 fq("spot", cpu=("100", "0"))),
                            policy=preemption(within="LowerPriority"),
                            flavor_fungibility=fungibility("", "MayStopSearch")),),
         local_queues={"eng-alpha/other": "other-alpha"},
         want_admitted={"eng-alpha/new": adm("other-alpha", psa("main", cpu=("spot", "20")))}),
    Case("workload fits in single clusterQueue, with check state ready",
         workloads=(wl("sales/foo", "main", ps("one", 10, {"cpu": "1"})),),
         want_admitted={"sales/foo": adm("sales", psa("one", 10, cpu=("default", "10")))}),
    Case("skip workload with missing or deleted ClusterQueue (NoFit)",
         workloads=(wl("sales/missing-cq-workload", "non-existent-queue",
                       ps("set", 1, {"cpu": "1"})),)),
    Case("flavors with mixed misconfiguration and insufficient quota",
         workloads=(
             wl("sales/existing-on-demand-job", "custom-q", main("10"),
                admitted=adm("custom-cq", psa("main", cpu=("on-demand", "10")))),
             wl("sales/new-job", "custom-q", main("10"))),
         cluster_queues=(cq("custom-cq", group(fq("spot-tainted", cpu=("20", "20")),
                                               fq("on-demand", cpu=("15", "15"))),
                            strategy="StrictFIFO"),),
         local_queues={"sales/custom-q": "custom-cq"},
         want_pending={"sales/new-job": "couldn't assign flavors to pod set main: insufficient "
                       "unused quota for cpu in flavor on-demand, 5 more needed, untolerated "
                       "taint {key val NoSchedule <nil>} in flavor spot-tainted"},
         want_left={"custom-cq": ("sales/new-job",)}),
    Case("flavors with mixed taint mismatch and exceeding limits",
         workloads=(wl("sales/new-job2", "custom-q2", main("10")),),
         cluster_queues=(cq("custom-cq2", group(fq("spot-tainted", cpu=("20", "20")),
                                                fq("on-demand", cpu=("5", "5"))),
                            strategy="StrictFIFO"),),
         local_queues={"sales/custom-q2": "custom-cq2"},
         want_pending={"sales/new-job2": "couldn't assign flavors to pod set main: insufficient "
                       "quota for cpu in flavor on-demand, previously considered podsets requests "
                       "(0) + current podset request (10) > maximum capacity (5), untolerated "
                       "taint {key val NoSchedule <nil>} in flavor spot-tainted"},
         want_left={"custom-cq2": ("sales/new-job2",)}),
    Case("flavors are structurally incompatible",
         workloads=(wl("sales/new-job3", "custom-q3", main("1")),),
         cluster_queues=(cq("custom-cq3", group(fq("spot-tainted", cpu=("20", "20")),
                                                fq("spot-tainted-2", cpu=("5", "5"))),
                            strategy="StrictFIFO"),),
         local_queues={"sales/custom-q3": "custom-cq3"},
         want_pending={"sales/new-job3": "couldn't assign flavors to pod set main: untolerated "
                       "taint {key val NoSchedule <nil>} in flavor spot-tainted, untolerated "
                       "taint {key val2 NoSchedule <nil>} in flavor spot-tainted-2"},
         want_left={"custom-cq3": ("sales/new-job3",)}),
    Case("workload fits in single clusterQueue, with check state pending",
         workloads=(wl("sales/foo", "main", ps("one", 10, {"cpu": "1"})),),
         want_admitted={"sales/foo": adm("sales", psa("one", 10, cpu=("default", "10")))}),
    Case("error during admission",
         skip="not applicable offline: a failing API write (the fake client's admissionError, "
              "the Workload's status patch refused) is API-server behaviour; dralab writes "
              "its decisions once, after the cycles"),
    Case("single clusterQueue full",
         workloads=(
             wl("sales/new", "main", ps("one", 11, {"cpu": "1"})),
             wl("sales/assigned", "", ps("one", 40, {"cpu": "1"}),
                admitted=adm("sales", psa("one", 40, cpu=("default", "40"))))),
         want_pending={"sales/new": "couldn't assign flavors to pod set one: insufficient unused "
                       "quota for cpu in flavor default, 1 more needed"},
         want_left={"sales": ("sales/new",)}),
    Case("failed to match clusterQueue selector",
         workloads=(wl("sales/new", "blocked", ps("one", 1, {"cpu": "1"})),),
         want_pending={"sales/new": "workload namespace doesn't match ClusterQueue selector"},
         want_inadmissible={"eng-alpha": ("sales/new",)}),
    Case("admit in different cohorts",
         workloads=(wl("sales/new", "main", ps("one", 1, {"cpu": "1"})),
                    wl("eng-alpha/new", "main", ps("one", 51, {"cpu": "1"}))),
         want_admitted={
             "sales/new": adm("sales", psa("one", cpu=("default", "1"))),
             "eng-alpha/new": adm("eng-alpha", psa("one", 51, cpu=("on-demand", "51")))}),
    Case("admit in same cohort with no borrowing",
         workloads=(wl("eng-alpha/new", "main", ps("one", 40, {"cpu": "1"})),
                    wl("eng-beta/new", "main", ps("one", 40, {"cpu": "1"}))),
         want_admitted={
             "eng-alpha/new": adm("eng-alpha", psa("one", 40, cpu=("on-demand", "40"))),
             "eng-beta/new": adm("eng-beta", psa("one", 40, cpu=("on-demand", "40")))}),
]

ENG_LQ = {"eng-alpha/lq-lender": "cq-lender", "eng-alpha/lq-borrower": "cq-borrower"}
HIER_COHORTS = (CohortSpec("root"), CohortSpec("child", parent="root"))


def _hier_queues(lending: str) -> tuple[ClusterQueueSpec, ...]:
    return (_with_namespaces(cq("cq-lender", group(fq("on-demand", cpu=("10", None, lending))),
                                cohort="child"), "eng"),
            _with_namespaces(cq("cq-borrower", group(fq("on-demand", cpu=("5", "10"))),
                                cohort="child"), "eng"))


ENG_GAMMA = _with_namespaces(cq("eng-gamma", group(fq("on-demand", cpu=("50", "10")),
                                                   fq("spot", cpu=("0", "100"))),
                                cohort="eng", policy=preemption(within="LowerPriority",
                                                                reclaim="Any")), "eng")

CASES += [
    Case("assign multiple resources and flavors",
         workloads=(wl("eng-beta/new", "main", ps("one", 10, {"cpu": "6", "example.com/gpu": "1"}),
                       ps("two", 40, {"cpu": "1"})),),
         want_admitted={"eng-beta/new": adm("eng-beta",
                                            psa("one", 10, cpu=("on-demand", "60"),
                                                gpu=("model-a", "10")),
                                            psa("two", 40, cpu=("spot", "40")))}),
    Case("cannot borrow if cohort was assigned and would result in overadmission",
         workloads=(wl("eng-alpha/new", "main", ps("one", 45, {"cpu": "1"})),
                    wl("eng-beta/new", "main", ps("one", 56, {"cpu": "1"}))),
         want_admitted={"eng-alpha/new": adm("eng-alpha", psa("one", 45, cpu=("on-demand", "45")))},
         want_pending={"eng-beta/new": "Workload no longer fits after processing another workload"},
         want_left={"eng-beta": ("eng-beta/new",)}),
    Case("can borrow if cohort was assigned and will not result in overadmission",
         workloads=(wl("eng-alpha/new", "main", ps("one", 45, {"cpu": "1"})),
                    wl("eng-beta/new", "main", ps("one", 55, {"cpu": "1"}))),
         want_admitted={"eng-alpha/new": adm("eng-alpha", psa("one", 45, cpu=("on-demand", "45"))),
                        "eng-beta/new": adm("eng-beta", psa("one", 55, cpu=("on-demand", "55")))}),
    Case("can borrow if needs reclaim from cohort in different flavor",
         workloads=(
             wl("eng-alpha/can-reclaim", "main", main("100")),
             wl("eng-beta/needs-to-borrow", "main", main("1")),
             wl("eng-beta/user-on-demand", "", main("50"),
                admitted=adm("eng-beta", psa("main", cpu=("on-demand", "50")))),
             wl("eng-beta/user-spot", "", main("1"),
                admitted=adm("eng-beta", psa("main", cpu=("spot", "1"))))),
         want_admitted={"eng-beta/needs-to-borrow": adm("eng-beta",
                                                        psa("main", cpu=("on-demand", "1")))},
         want_pending={"eng-alpha/can-reclaim": "couldn't assign flavors to pod set main: "
                       "insufficient unused quota for cpu in flavor on-demand, 50 more needed, "
                       "insufficient unused quota for cpu in flavor spot, 1 more needed"},
         want_left={"eng-alpha": ("eng-alpha/can-reclaim",)}),
    Case("workload exceeds lending limit when borrow in cohort",
         workloads=(wl("lend/a", "", main("2"),
                       admitted=adm("lend-b", psa("main", cpu=("default", "2")))),
                    wl("lend/b", "lend-b-queue", main("3"))),
         want_pending={"lend/b": "couldn't assign flavors to pod set main: insufficient unused "
                       "quota for cpu in flavor default, 1 more needed"},
         want_inadmissible={"lend-b": ("lend/b",)}),
    Case("hierarchical cohort respects lending limit when borrowing",
         workloads=(wl("eng-alpha/wl-existing", "", main("5"),
                       admitted=adm("cq-borrower", psa("main", cpu=("on-demand", "5")))),
                    wl("eng-alpha/wl-pending", "lq-borrower", main("4"))),
         cluster_queues=_hier_queues("3"), local_queues=ENG_LQ, cohorts=HIER_COHORTS,
         want_pending={"eng-alpha/wl-pending": "couldn't assign flavors to pod set main: "
                       "insufficient unused quota for cpu in flavor on-demand, 1 more needed"},
         want_inadmissible={"cq-borrower": ("eng-alpha/wl-pending",)}),
    Case("hierarchical cohort allows borrowing up to lending limit",
         workloads=(wl("eng-alpha/wl-existing", "", main("5"),
                       admitted=adm("cq-borrower", psa("main", cpu=("on-demand", "5")))),
                    wl("eng-alpha/wl-borrowing", "lq-borrower", main("5"))),
         cluster_queues=_hier_queues("5"), local_queues=ENG_LQ, cohorts=HIER_COHORTS,
         want_admitted={"eng-alpha/wl-borrowing": adm("cq-borrower",
                                                      psa("main", cpu=("on-demand", "5")))}),
    Case("preempt workloads in ClusterQueue and cohort",
         workloads=(
             wl("eng-beta/preemptor", "main", main("20")),
             wl("eng-alpha/use-all-spot", "", main("100"),
                admitted=adm("eng-alpha", psa("main", cpu=("spot", "100")))),
             wl("eng-beta/low-1", "", main("30"), priority=-1,
                admitted=adm("eng-beta", psa("main", cpu=("on-demand", "30")))),
             wl("eng-beta/low-2", "", main("10"), priority=-2,
                admitted=adm("eng-beta", psa("main", cpu=("on-demand", "10")))),
             wl("eng-alpha/borrower", "", main("60"),
                admitted=adm("eng-alpha", psa("main", cpu=("on-demand", "60"))))),
         want_preempted={"eng-alpha/borrower": "InCohortReclamation",
                         "eng-beta/low-2": "InClusterQueue"},
         want_pending={"eng-beta/preemptor": "couldn't assign flavors to pod set main: "
                       "insufficient unused quota for cpu in flavor on-demand, 20 more needed, "
                       "insufficient unused quota for cpu in flavor spot, 20 more needed. Pending "
                       "the preemption of 2 workload(s)"},
         want_left={"eng-beta": ("eng-beta/preemptor",)}),
    Case("multiple CQs need preemption",
         workloads=(
             wl("eng-beta/preemptor", "other", main("1"), priority=-1),
             wl("eng-alpha/pending", "other", main("1"), priority=1),
             wl("eng-alpha/use-all", "", main("100"),
                admitted=adm("other-alpha", psa("main", cpu=("on-demand", "100"))))),
         cluster_queues=(
             cq("other-alpha", group(fq("on-demand", cpu=("50", "50"))), cohort="other"),
             cq("other-beta", group(fq("on-demand", cpu=("50", "10"))), cohort="other",
                policy=preemption(within="LowerPriority", reclaim="Any"))),
         local_queues={"eng-alpha/other": "other-alpha", "eng-beta/other": "other-beta"},
         want_preempted={"eng-alpha/use-all": "InCohortReclamation"},
         want_pending={
             "eng-alpha/pending": "couldn't assign flavors to pod set main: insufficient unused "
                                  "quota for cpu in flavor on-demand, 1 more needed",
             "eng-beta/preemptor": "couldn't assign flavors to pod set main: insufficient unused "
                                   "quota for cpu in flavor on-demand, 1 more needed. Pending the "
                                   "preemption of 1 workload(s)"},
         want_left={"other-beta": ("eng-beta/preemptor",)},
         want_inadmissible={"other-alpha": ("eng-alpha/pending",)}),
    Case("cannot borrow resource not listed in clusterQueue",
         workloads=(wl("eng-alpha/new", "main", ps("main", 1, {"example.com/gpu": "1"})),),
         want_pending={"eng-alpha/new": "couldn't assign flavors to pod set main: resource "
                       "example.com/gpu unavailable in ClusterQueue"},
         want_left={"eng-alpha": ("eng-alpha/new",)}),
    Case("not enough resources to borrow, fallback to next flavor; WhenCanPreempt: TryNextFlavor",
         workloads=(wl("eng-alpha/new", "main", ps("one", 60, {"cpu": "1"})),
                    wl("eng-beta/existing", "", ps("one", 45, {"cpu": "1"}),
                       admitted=adm("eng-beta", psa("one", 45, cpu=("on-demand", "45"))))),
         want_admitted={"eng-alpha/new": adm("eng-alpha", psa("one", 60, cpu=("spot", "60")))}),
    Case("workload should not fit in nonexistent clusterQueue",
         workloads=(wl("sales/foo", "cq-nonexistent-queue", main("1")),)),
    Case("workload should not fit in clusterQueue with nonexistent flavor",
         workloads=(wl("sales/foo", "flavor-nonexistent-queue", main("1")),),
         want_left={"flavor-nonexistent-cq": ("sales/foo",)}),
    Case("no overadmission while borrowing",
         workloads=(
             wl("eng-beta/new", "main", ps("one", 50, {"cpu": "1"})),
             wl("eng-alpha/new-alpha", "main", ps("one", 1, {"cpu": "1"})),
             wl("eng-gamma/new-gamma", "main", ps("one", 50, {"cpu": "1"})),
             wl("eng-gamma/existing", "", ps("borrow-on-demand", 51, {"cpu": "1"}),
                ps("use-all-spot", 100, {"cpu": "1"}),
                admitted=adm("eng-gamma", psa("borrow-on-demand", 51, cpu=("on-demand", "51")),
                             psa("use-all-spot", 100, cpu=("spot", "100"))))),
         cluster_queues=(ENG_GAMMA,), local_queues={"eng-gamma/main": "eng-gamma"},
         want_admitted={"eng-alpha/new-alpha": adm("eng-alpha", psa("one", cpu=("on-demand", "1"))),
                        "eng-beta/new": adm("eng-beta", psa("one", 50, cpu=("on-demand", "50")))},
         want_pending={"eng-gamma/new-gamma": "couldn't assign flavors to pod set one: "
                       "insufficient unused quota for cpu in flavor on-demand, 41 more needed, "
                       "insufficient unused quota for cpu in flavor spot, 50 more needed"},
         want_inadmissible={"eng-gamma": ("eng-gamma/new-gamma",)}),
    Case("partial admission single variable pod set",
         workloads=(wl("sales/new", "main", ps("one", 50, {"cpu": "2"}, min_count=20)),),
         want_admitted={"sales/new": adm("sales", psa("one", 25, cpu=("default", "50")))}),
    *(Case(name,
           workloads=(wl("eng-beta/new", "main", ps("one", count, {"example.com/gpu": "1"},
                                                min_count=10),
                         priority=4),
                      wl("eng-beta/old", "", ps("one", 10, {"example.com/gpu": "1"}), priority=-4,
                         admitted=adm("eng-beta", psa("one", 10, gpu=("model-a", "10"))))),
           want_preempted={"eng-beta/old": "InClusterQueue"},
           want_pending={"eng-beta/new": "couldn't assign flavors to pod set one: insufficient "
                         "unused quota for example.com/gpu in flavor model-a, 10 more needed. "
                         "Pending the preemption of 1 workload(s)"},
           want_left={"eng-beta": ("eng-beta/new",)})
      for name, count in (
          ("partial admission single variable pod set, preempt first", 20),
          ("partial admission single variable pod set, preempt with partial admission", 30))),
    *(Case(name,
           workloads=(wl("sales/new", "main", ps("one", 20, {"cpu": "1"}),
                         ps("two", 30, {"cpu": "1"}, min_count=10),
                         ps("three", 15, {"cpu": "1"}, min_count=5)),),
           feature_gates={"PartialAdmission": gate}, **want)  # type: ignore[arg-type]
      for name, gate, want in (
          ("partial admission multiple variable pod sets", True,
           {"want_admitted": {"sales/new": adm("sales", psa("one", 20, cpu=("default", "20")),
                                               psa("two", 20, cpu=("default", "20")),
                                               psa("three", 10, cpu=("default", "10")))}}),
          ("partial admission disabled, multiple variable pod sets", False,
           {"want_pending": {"sales/new": "couldn't assign flavors to pod set three: "
                             "insufficient quota for cpu in flavor default, previously "
                             "considered podsets requests (50) + current podset request (15) > "
                             "maximum capacity (50)"},
            "want_left": {"sales": ("sales/new",)}}))),
]

def _r_queues() -> tuple[ClusterQueueSpec, ...]:
    policy = preemption(within="LowerPriority", reclaim="Any")
    rg = group(fq("default", r1=("10", "10"), r2=("10", "10")))
    return tuple(cq(name, rg, cohort="co", policy=policy) for name in ("cq1", "cq2", "cq3"))


R_LQ = {"sales/lq1": "cq1", "sales/lq2": "cq2", "sales/lq3": "cq3"}
OTHER_LQ = {"eng-alpha/other": "other-alpha", "eng-beta/other": "other-beta",
            "eng-gamma/other": "other-gamma"}


def _other(*extra: str, alpha_cpu: str = "2") -> tuple[ClusterQueueSpec, ...]:
    alpha = cq("other-alpha", group(fq("on-demand", cpu=alpha_cpu)), cohort="other",
               policy=preemption(within="LowerPriority", reclaim="Any"))
    return (alpha, *(cq(name, group(fq("on-demand", cpu="2")), cohort="other") for name in extra))


def one(key: str, cq_name: str, flavor: str = "on-demand", cpu: str = "1", priority: int = 0,
        queue: str = "other") -> Wl:
    """A workload of one pod asking ``cpu``, already holding quota in ``cq_name``."""
    return wl(key, queue, main(cpu), priority=priority,
              admitted=adm(cq_name, psa("main", cpu=(flavor, cpu))))


CASES += [
    Case("two workloads can borrow different resources from the same flavor in the same cycle",
         workloads=(wl("sales/wl1", "lq1", ps("main", 1, {"r1": "16"}), priority=-1),
                    wl("sales/wl2", "lq2", ps("main", 1, {"r2": "16"}), priority=-2)),
         cluster_queues=_r_queues(), local_queues=R_LQ,
         want_admitted={"sales/wl1": adm("cq1", psa("main", r1=("default", "16"))),
                        "sales/wl2": adm("cq2", psa("main", r2=("default", "16")))}),
    Case("two workloads can borrow the same resources from the same flavor in the same cycle if "
         "fits in the cohort quota",
         workloads=(wl("sales/wl1", "lq1", ps("main", 1, {"r1": "16"}), priority=-1),
                    wl("sales/wl2", "lq2", ps("main", 1, {"r1": "14"}), priority=-2)),
         cluster_queues=_r_queues(), local_queues=R_LQ,
         want_admitted={"sales/wl1": adm("cq1", psa("main", r1=("default", "16"))),
                        "sales/wl2": adm("cq2", psa("main", r1=("default", "14")))}),
    Case("only one workload can borrow one resources from the same flavor in the same cycle if "
         "cohort quota cannot fit",
         workloads=(wl("sales/wl1", "lq1", ps("main", 1, {"r1": "16"}), priority=-1),
                    wl("sales/wl2", "lq2", ps("main", 1, {"r1": "16"}), priority=-2)),
         cluster_queues=_r_queues(), local_queues=R_LQ,
         want_admitted={"sales/wl1": adm("cq1", psa("main", r1=("default", "16")))},
         want_pending={"sales/wl2": "Workload no longer fits after processing another workload"},
         want_left={"cq2": ("sales/wl2",)}),
    Case("preemption while borrowing, workload waiting for preemption should not block a "
         "borrowing workload in another CQ",
         workloads=(wl("eng-alpha/a", "lq_a", main("3")),
                    wl("eng-beta/b", "lq_b", main("1")),
                    one("eng-alpha/admitted_a", "cq_a", "default", "2", queue="lq_a")),
         cluster_queues=(
             cq("cq_shared", group(fq("default", cpu=("4", "0"))), cohort="pwb"),
             cq("cq_a", group(fq("default", cpu=("0", "3"))), cohort="pwb",
                policy=preemption(reclaim="LowerPriority", borrow="LowerPriority")),
             cq("cq_b", group(fq("default", cpu="0")), cohort="pwb",
                policy=preemption(reclaim="LowerPriority", borrow="LowerPriority"))),
         local_queues={"eng-alpha/lq_a": "cq_a", "eng-beta/lq_b": "cq_b"},
         want_admitted={"eng-beta/b": adm("cq_b", psa("main", cpu=("default", "1")))},
         want_pending={"eng-alpha/a": "couldn't assign flavors to pod set main: insufficient "
                       "unused quota for cpu in flavor default, 2 more needed"},
         want_inadmissible={"cq_a": ("eng-alpha/a",)}),
    Case("minimal preemptions when target queue is exhausted",
         workloads=(one("eng-alpha/a1", "other-alpha", priority=-2),
                    one("eng-alpha/a2", "other-alpha", priority=-2),
                    one("eng-alpha/a3", "other-alpha", priority=-1),
                    one("eng-beta/b1", "other-beta"), one("eng-beta/b2", "other-beta"),
                    one("eng-beta/b3", "other-beta"),
                    wl("eng-alpha/incoming", "other", main("2"))),
         cluster_queues=_other("other-beta", "other-gamma"), local_queues=OTHER_LQ,
         want_preempted={"eng-alpha/a1": "InClusterQueue", "eng-alpha/a2": "InClusterQueue"},
         want_pending={"eng-alpha/incoming": "couldn't assign flavors to pod set main: "
                       "insufficient unused quota for cpu in flavor on-demand, 2 more needed. "
                       "Pending the preemption of 2 workload(s)"},
         want_left={"other-alpha": ("eng-alpha/incoming",)}),
    Case("A workload is only eligible to do preemptions if it fits fully within nominal quota",
         workloads=(one("eng-alpha/a1", "other-alpha", priority=-1),
                    one("eng-beta/b1", "other-beta", priority=-1),
                    wl("eng-alpha/incoming", "other", main("3"), priority=1)),
         cluster_queues=_other("other-beta"), local_queues=OTHER_LQ,
         want_pending={"eng-alpha/incoming": "couldn't assign flavors to pod set main: "
                       "insufficient unused quota for cpu in flavor on-demand, 1 more needed"},
         want_inadmissible={"other-alpha": ("eng-alpha/incoming",)}),
]

def _within(name: str, cpu: str, borrow: bool = False) -> ClusterQueueSpec:
    policy = preemption(within="LowerPriority", borrow="LowerPriority" if borrow else "Never")
    return cq(name, group(fq("default", cpu=cpu)), cohort="other", policy=policy)


CASES += [
    Case("multiple preemptions without borrowing",
         workloads=(one("eng-alpha/a1", "other-alpha", "default", "2"),
                    one("eng-beta/b1", "other-beta", "default", "2"),
                    wl("eng-alpha/preemptor", "other", main("2"), priority=100),
                    wl("eng-beta/preemptor", "other", main("2"), priority=100)),
         cluster_queues=(_within("other-alpha", "2"), _within("other-beta", "2")),
         local_queues=OTHER_LQ,
         want_preempted={"eng-alpha/a1": "InClusterQueue", "eng-beta/b1": "InClusterQueue"},
         want_pending={
             "eng-alpha/preemptor": "couldn't assign flavors to pod set main: insufficient "
                                    "unused quota for cpu in flavor default, 2 more needed. "
                                    "Pending the preemption of 1 workload(s)",
             "eng-beta/preemptor": "couldn't assign flavors to pod set main: insufficient "
                                   "unused quota for cpu in flavor default, 2 more needed. "
                                   "Pending the preemption of 1 workload(s)"},
         want_left={"other-alpha": ("eng-alpha/preemptor",),
                    "other-beta": ("eng-beta/preemptor",)}),
    Case("multiple preemptions preemption possible after earlier workload fits",
         workloads=(one("eng-beta/b1", "other-beta", "default", "2"),
                    wl("eng-alpha/fit", "other", main("1"), priority=100),
                    wl("eng-beta/preemptor", "other", main("2"), priority=99)),
         cluster_queues=(_within("other-alpha", "1"), _within("other-beta", "2")),
         local_queues=OTHER_LQ,
         want_admitted={"eng-alpha/fit": adm("other-alpha", psa("main", cpu=("default", "1")))},
         want_preempted={"eng-beta/b1": "InClusterQueue"},
         want_pending={"eng-beta/preemptor": "couldn't assign flavors to pod set main: "
                       "insufficient unused quota for cpu in flavor default, 1 more needed. "
                       "Pending the preemption of 1 workload(s)"},
         want_left={"other-beta": ("eng-beta/preemptor",)}),
    Case("multiple preemptions skip preemption when shared limited resource",
         workloads=(one("eng-alpha/a1", "other-alpha", "default", "2"),
                    one("eng-beta/b1", "other-beta", "default", "2"),
                    wl("eng-alpha/preemptor", "other", main("3"), priority=100),
                    wl("eng-beta/pretending-preemptor", "other", main("3"), priority=99)),
         cluster_queues=(_within("other-alpha", "2", borrow=True),
                         _within("other-beta", "2", borrow=True),
                         cq("resource-bank", group(fq("default", cpu="1")), cohort="other")),
         local_queues=OTHER_LQ,
         want_preempted={"eng-alpha/a1": "InClusterQueue"},
         want_pending={
             "eng-alpha/preemptor": "couldn't assign flavors to pod set main: insufficient "
                                    "unused quota for cpu in flavor default, 2 more needed. "
                                    "Pending the preemption of 1 workload(s)",
             "eng-beta/pretending-preemptor": "Workload no longer fits after processing another "
                                              "workload"},
         want_left={"other-alpha": ("eng-alpha/preemptor",),
                    "other-beta": ("eng-beta/pretending-preemptor",)}),
    Case("not enough resources",
         workloads=(wl("sales/new", "main", ps("one", 1, {"cpu": "100"})),),
         want_pending={"sales/new": "couldn't assign flavors to pod set one: insufficient quota "
                       "for cpu in flavor default, previously considered podsets requests (0) + "
                       "current podset request (100) > maximum capacity (50)"},
         want_left={"sales": ("sales/new",)}),
    Case("container does not satisfy limitRange constraints",
         workloads=(templated("sales/new", "main", "one", 1, {"cpu": "500m"},
                              limit_ranges=(_limit_range("alpha", "sales", "Container",
                                                         Max={"cpu": "300m"}),)),),
         want_pending={"sales/new": "resources didn't satisfy LimitRange constraints: "
                       "spec.podSets[0].template.spec.containers[0]: Invalid value: [\"cpu\"]: "
                       "requests must not be above the limitRange max"},
         want_left={"sales": ("sales/new",)}),
    Case("container resource requests exceed limits",
         workloads=(templated("sales/new", "main", "one", 1, {"cpu": "200m"},
                              limits={"cpu": "100m"}),),
         want_pending={"sales/new": "resources validation failed: "
                       "spec.podSets[0].template.spec.containers[0]: Invalid value: [\"cpu\"]: "
                       "requests must not exceed its limits"},
         want_left={"sales": ("sales/new",)}),
]

def gq(flavor: str, nominal: str) -> FlavorQuotas:
    """MakeFlavorQuotas(flavor).Resource("gpu", nominal): the resource literally "gpu"."""
    return fq_map(flavor, {"gpu": nominal})


def gpu_wl(key: str, amount: str, priority: int = 0, queue: str = "other",
           reserved: tuple[str, str] | None = None) -> Wl:
    """Request("gpu", amount), with SimpleReserveQuota(cq, flavor) when ``reserved``."""
    admitted = None
    if reserved is not None:
        admitted = (reserved[0], (("main", {"gpu": (reserved[1], amount)}, 1),))
    return wl(key, queue, ps("main", 1, {"gpu": amount}), priority=priority, admitted=admitted)


def _gpu_pair(beta_policy: bool) -> tuple[ClusterQueueSpec, ...]:
    policy = preemption(within="LowerPriority", reclaim="LowerPriority")
    return (cq("other-alpha", group(gq("on-demand", "10"), gq("spot", "10")), cohort="other",
               policy=policy),
            cq("other-beta", group(gq("on-demand", "0"), gq("spot", "0")), cohort="other",
               policy=policy if beta_policy else PreemptionPolicy()))


def _reclaim_pair(reclaim: str) -> tuple[ClusterQueueSpec, ...]:
    return (cq("ClusterQueueA", group(gq("on-demand", "2")), cohort="root",
               policy=preemption(reclaim=reclaim)),
            cq("ClusterQueueB", group(gq("on-demand", "0")), cohort="root"))


AB_LQ = {"eng-alpha/lq": "ClusterQueueA", "eng-beta/lq": "ClusterQueueB"}
GPU_PREEMPTOR_MSG = ("couldn't assign flavors to pod set main: insufficient unused quota for gpu "
                     "in flavor on-demand, 1 more needed, insufficient unused quota for gpu in "
                     "flavor spot, {spot} more needed. Pending the preemption of 1 workload(s)")

CASES += [
    Case("prefer reclamation over cq priority based preemption",
         workloads=(gpu_wl("eng-alpha/a1", "5", 50, reserved=("other-alpha", "on-demand")),
                    gpu_wl("eng-beta/b1", "5", 50, reserved=("other-beta", "spot")),
                    gpu_wl("eng-alpha/preemptor", "6", 100)),
         cluster_queues=_gpu_pair(True), local_queues=OTHER_LQ,
         want_preempted={"eng-beta/b1": "InCohortReclamation"},
         want_pending={"eng-alpha/preemptor": GPU_PREEMPTOR_MSG.format(spot="1")},
         want_left={"other-alpha": ("eng-alpha/preemptor",)}),
    Case("prefer first preemption flavor when second flavor requires both reclaim and cq "
         "priority preemption",
         workloads=(gpu_wl("eng-alpha/a1", "5", 50, reserved=("other-alpha", "on-demand")),
                    gpu_wl("eng-alpha/a2", "5", 50, reserved=("other-alpha", "spot")),
                    gpu_wl("eng-beta/b1", "5", 50, reserved=("other-beta", "spot")),
                    gpu_wl("eng-alpha/preemptor", "6", 100)),
         cluster_queues=_gpu_pair(False), local_queues=OTHER_LQ,
         want_preempted={"eng-alpha/a1": "InClusterQueue"},
         want_pending={"eng-alpha/preemptor": GPU_PREEMPTOR_MSG.format(spot="6")},
         want_left={"other-alpha": ("eng-alpha/preemptor",)}),
    Case("prefer first preemption flavor when second flavor also requires cq preemption",
         workloads=(gpu_wl("eng-alpha/a1", "6", 50, reserved=("other-alpha", "on-demand")),
                    gpu_wl("eng-alpha/a2", "5", 50, reserved=("other-alpha", "spot")),
                    gpu_wl("eng-beta/b1", "5", 9001, reserved=("other-beta", "spot")),
                    gpu_wl("eng-alpha/preemptor", "5", 100)),
         cluster_queues=_gpu_pair(False), local_queues=OTHER_LQ,
         want_preempted={"eng-alpha/a1": "InClusterQueue"},
         want_pending={"eng-alpha/preemptor": GPU_PREEMPTOR_MSG.format(spot="5")},
         want_left={"other-alpha": ("eng-alpha/preemptor",)}),
    Case("workload requiring reclaimation prioritized over wl in another full cq",
         workloads=(gpu_wl("eng-alpha/Admitted-Workload-1", "5", queue="lq",
                           reserved=("CQ1", "on-demand")),
                    gpu_wl("eng-alpha/WL1", "10", queue="lq"),
                    gpu_wl("eng-beta/WL2", "10", queue="lq"),
                    gpu_wl("eng-gamma/Admitted-Workload-2", "5", 0, queue="lq",
                           reserved=("CQ3", "on-demand")),
                    gpu_wl("eng-gamma/Admitted-Workload-3", "5", 1, queue="lq",
                           reserved=("CQ3", "on-demand"))),
         cluster_queues=(cq("CQ1", group(gq("on-demand", "10")), cohort="other"),
                         cq("CQ2", group(gq("on-demand", "10")), cohort="other",
                            policy=preemption(reclaim="Any")),
                         cq("CQ3", group(gq("on-demand", "0")), cohort="other")),
         local_queues={"eng-alpha/lq": "CQ1", "eng-beta/lq": "CQ2", "eng-gamma/lq": "CQ3"},
         want_preempted={"eng-gamma/Admitted-Workload-2": "InCohortReclamation"},
         want_pending={
             "eng-alpha/WL1": "couldn't assign flavors to pod set main: insufficient unused "
                              "quota for gpu in flavor on-demand, 5 more needed",
             "eng-beta/WL2": "couldn't assign flavors to pod set main: insufficient unused quota "
                             "for gpu in flavor on-demand, 5 more needed. Pending the preemption "
                             "of 1 workload(s)"},
         want_left={"CQ2": ("eng-beta/WL2",)},
         want_inadmissible={"CQ1": ("eng-alpha/WL1",)}),
    Case("capacity not blocked when lending clusterqueue can reclaim (ReclaimWithinCohort=Any)",
         workloads=(gpu_wl("eng-alpha/a1-admitted", "1", queue="lq",
                           reserved=("ClusterQueueA", "on-demand")),
                    gpu_wl("eng-alpha/a2-pending", "2", queue="lq"),
                    gpu_wl("eng-beta/b1-pending", "1", queue="lq")),
         cluster_queues=_reclaim_pair("Any"), local_queues=AB_LQ,
         want_admitted={"eng-beta/b1-pending": ("ClusterQueueB",
                                                (("main", {"gpu": ("on-demand", "1")}, 1),))},
         want_pending={"eng-alpha/a2-pending": "couldn't assign flavors to pod set main: "
                       "insufficient unused quota for gpu in flavor on-demand, 1 more needed"},
         want_inadmissible={"ClusterQueueA": ("eng-alpha/a2-pending",)}),
    *(Case("capacity blocked when lending clusterqueue not guaranteed to reclaim "
           f"(ReclaimWithinCohort={reclaim})",
           workloads=(gpu_wl("eng-alpha/a1-admitted", "1", queue="lq",
                             reserved=("ClusterQueueA", "on-demand")),
                      gpu_wl("eng-alpha/a2-pending", "2", queue="lq"),
                      gpu_wl("eng-beta/b1-pending", "1", queue="lq")),
           cluster_queues=_reclaim_pair(reclaim), local_queues=AB_LQ,
           want_pending={
               "eng-alpha/a2-pending": "couldn't assign flavors to pod set main: insufficient "
                                       "unused quota for gpu in flavor on-demand, 1 more needed",
               "eng-beta/b1-pending": "Workload no longer fits after processing another "
                                      "workload"},
           want_left={"ClusterQueueB": ("eng-beta/b1-pending",)},
           want_inadmissible={"ClusterQueueA": ("eng-alpha/a2-pending",)})
      for reclaim in ("LowerPriority", "Never")),
    Case("in a hierarchical cohort, workload borrowing less is scheduled first",
         workloads=(wl("eng-alpha/guaranteed", "lq-guaranteed", ps("one", 1, {"cpu": "4"})),
                    wl("eng-alpha/best-effort", "lq-best-effort", ps("one", 1, {"cpu": "4"}),
                       priority=3)),
         cluster_queues=(cq("guaranteed", group(fq("default", cpu="0")), cohort="guaranteed"),
                         cq("best-effort", group(fq("default", cpu="0")), cohort="root")),
         cohorts=(CohortSpec("root"),
                  CohortSpec("guaranteed", "root", (group(fq("default", cpu="4")),))),
         local_queues={"eng-alpha/lq-guaranteed": "guaranteed",
                       "eng-alpha/lq-best-effort": "best-effort"},
         want_admitted={"eng-alpha/guaranteed": adm("guaranteed",
                                                    psa("one", cpu=("default", "4")))},
         want_pending={"eng-alpha/best-effort": "Workload no longer fits after processing "
                       "another workload"},
         want_left={"best-effort": ("eng-alpha/best-effort",)}),
    Case("don't assign flavor if there are no candidates for preemption",
         workloads=(one("eng-alpha/admitted", "cq2", "on-demand", "1", queue="lq2"),
                    wl("eng-alpha/new", "lq1", main("1"), priority=100)),
         cluster_queues=(
             cq("cq1", group(fq("on-demand", cpu=("0", "1")), fq("spot", cpu=("0", "1"))),
                cohort="cohort", flavor_fungibility=MSS,
                policy=preemption(within="LowerPriority", reclaim="Any", borrow="LowerPriority")),
             cq("cq2", group(fq("on-demand", cpu="1"), fq("spot", cpu="1")), cohort="cohort")),
         local_queues={"eng-alpha/lq1": "cq1", "eng-alpha/lq2": "cq2"},
         want_admitted={"eng-alpha/new": adm("cq1", psa("main", cpu=("spot", "1")))}),
]

def _two_flavor_cq(name: str, cohort: str, preference: str) -> ClusterQueueSpec:
    return cq(name, group(fq("on-demand", cpu=("5", "0")), fq("spot", cpu=("0", "5"))),
              cohort=cohort, policy=preemption(within="LowerPriority"),
              flavor_fungibility=fungibility("TryNextFlavor", "TryNextFlavor", preference))


def _lender(name: str, cohort: str) -> ClusterQueueSpec:
    return cq(name, group(fq("on-demand", cpu="0"), fq("spot", cpu="5")), cohort=cohort)


CASES += [
    # Kueue finishes the old slice (Finished=True, WorkloadSliceReplaced): dralab's
    # decision for it is an eviction with that reason, and it is not requeued.
    Case("workload-slice fits in single clusterQueue",
         workloads=(wl("sales/foo-1", "main", ps("one", 10, {"cpu": "1"}),
                       admitted=adm("sales", psa("one", 10, cpu=("default", "10000m")))),
                    replace(wl("sales/foo-2", "main", ps("one", 15, {"cpu": "1"})),
                            replaces="sales/foo-1")),
         want_admitted={"sales/foo-2": adm("sales", psa("one", 15, cpu=("default", "15")))},
         want_preempted={"sales/foo-1": "WorkloadSliceReplaced"}),
    Case("pending admission check with nofit and fit flavors",
         workloads=(wl("eng-beta/pending-check", "main", main("80")),),
         want_admitted={"eng-beta/pending-check": adm("eng-beta",
                                                      psa("main", cpu=("spot", "80")))}),
    Case("admit to second flavor when first needs preemption; WhenCanPreempt: TryNextFlavor",
         workloads=(one("eng-alpha/blocker", "preempt-attempts-cq", priority=50,
                        queue="preempt-attempts-lq"),
                    wl("eng-alpha/test-wl", "preempt-attempts-lq", main("1"), priority=100)),
         cluster_queues=(cq("preempt-attempts-cq", group(fq("on-demand", cpu="1"),
                                                         fq("spot", cpu="1")),
                            policy=preemption(within="LowerPriority"),
                            flavor_fungibility=fungibility("", "TryNextFlavor")),),
         local_queues={"eng-alpha/preempt-attempts-lq": "preempt-attempts-cq"},
         want_admitted={"eng-alpha/test-wl": adm("preempt-attempts-cq",
                                                 psa("main", cpu=("spot", "1")))}),
    Case("admit workload with zero-quantity request for resource not in ClusterQueue",
         workloads=(wl("sales/zero-resource-wl", "main", main("1", **{"example.com/gpu": "0"})),),
         want_admitted={"sales/zero-resource-wl": adm("sales", psa("main", cpu=("default", "1")))}),
    Case("preempt when workload requests zero of a resource not defined in ClusterQueue",
         workloads=(wl("sales/preemptor", "preempt-zero-gpu-lq",
                       main("2", **{"example.com/gpu": "0"})),
                    one("sales/low-priority", "preempt-zero-gpu-cq", "default", "4", priority=-1,
                        queue="preempt-zero-gpu-lq")),
         cluster_queues=(cq("preempt-zero-gpu-cq", group(fq("default", cpu="4")),
                            policy=preemption(within="LowerPriority")),),
         local_queues={"sales/preempt-zero-gpu-lq": "preempt-zero-gpu-cq"},
         want_preempted={"sales/low-priority": "InClusterQueue"},
         want_pending={"sales/preemptor": "couldn't assign flavors to pod set main: insufficient "
                       "unused quota for cpu in flavor default, 2 more needed. Pending the "
                       "preemption of 1 workload(s)"},
         want_left={"preempt-zero-gpu-cq": ("sales/preemptor",)}),
    Case("PreemptionOverBorrowing preference: preempt in first flavor instead of borrowing in "
         "second",
         workloads=(one("default/low-pob", "pob-cq", cpu="5", priority=-1, queue="pob-queue"),
                    wl("default/high-pob", "pob-queue", main("5"))),
         cluster_queues=(_two_flavor_cq("pob-cq", "pob-cohort", "PreemptionOverBorrowing"),
                         _lender("pob-lender", "pob-cohort")),
         local_queues={"default/pob-queue": "pob-cq"},
         want_preempted={"default/low-pob": "InClusterQueue"},
         want_pending={"default/high-pob": "couldn't assign flavors to pod set main: "
                       "insufficient unused quota for cpu in flavor on-demand, 5 more needed. "
                       "Pending the preemption of 1 workload(s)"},
         want_left={"pob-cq": ("default/high-pob",)}),
    Case("PreemptionOverBorrowing preference: select fitting second flavor over first flavor with "
         "no preemption candidates",
         workloads=(one("default/admitted-nopc", "nopc-cq", cpu="5", queue="nopc-queue"),
                    wl("default/pending-nopc", "nopc-queue", main("5"))),
         cluster_queues=(
             cq("nopc-cq", group(fq("on-demand", cpu=("5", "0")), fq("spot", cpu="0")),
                cohort="nopc-mid", policy=preemption(within="LowerPriority"),
                flavor_fungibility=fungibility("TryNextFlavor", "TryNextFlavor",
                                               "PreemptionOverBorrowing")),
             cq("nopc-sibling", group(fq("on-demand", cpu="5"), fq("spot", cpu="0")),
                cohort="nopc-mid")),
         cohorts=(CohortSpec("nopc-root", None, (group(fq("on-demand", cpu="0"),
                                                       fq("spot", cpu="5")),)),
                  CohortSpec("nopc-mid", "nopc-root")),
         local_queues={"default/nopc-queue": "nopc-cq"},
         want_admitted={"default/pending-nopc": adm("nopc-cq", psa("main", cpu=("spot", "5")))}),
    Case("BorrowingOverPreemption preference: borrow in second flavor instead of preempting in "
         "first",
         workloads=(one("default/low-bop", "bop-cq", cpu="5", priority=-1, queue="bop-queue"),
                    wl("default/high-bop", "bop-queue", main("5"))),
         cluster_queues=(_two_flavor_cq("bop-cq", "bop-cohort", "BorrowingOverPreemption"),
                         _lender("bop-lender", "bop-cohort")),
         local_queues={"default/bop-queue": "bop-cq"},
         want_admitted={"default/high-bop": adm("bop-cq", psa("main", cpu=("spot", "5")))}),
    # MultiKueueOrchestratedPreemption on: the preemptor's gate "gate" is closed (it is in
    # spec.preemptionGates, not in status.preemptionGates)
    Case("block preemptions and signal `BlockedOnPreemptionGates` when a preemption gate is "
         "present",
         workloads=(replace(wl("eng-beta/preemptor", "main",
                               ps("main", 1, {"example.com/gpu": "20"})), gated=True),
                    wl("eng-beta/low-priority", "", ps("main", 1, {"example.com/gpu": "20"}),
                       priority=-1,
                       admitted=adm("eng-beta", psa("main", gpu=("model-a", "20"))))),
         want_pending={"eng-beta/preemptor": "Workload requires preemption, but it's gated"},
         want_left={"eng-beta": ("eng-beta/preemptor",)}),
    Case("do not signal `BlockedOnPreemptionGates` when a preemption gate is present, but the "
         "workload fits without preemption",
         workloads=(replace(wl("eng-beta/preemptor", "main",
                               ps("main", 1, {"example.com/gpu": "20"})), gated=True),),
         want_admitted={"eng-beta/preemptor": adm("eng-beta",
                                                  psa("main", gpu=("model-a", "20")))}),
    Case("do not signal `BlockedOnPreemptionGates` when a preemption gate is present, but the "
         "workload had nothing to preempt",
         workloads=(replace(wl("eng-beta/preemptor", "main",
                               ps("main", 1, {"example.com/gpu": "20"})), gated=True),
                    wl("eng-beta/high-priority", "", ps("main", 1, {"example.com/gpu": "20"}),
                       priority=1,
                       admitted=adm("eng-beta", psa("main", gpu=("model-a", "20"))))),
         want_pending={"eng-beta/preemptor": "couldn't assign flavors to pod set main: "
                       "insufficient unused quota for example.com/gpu in flavor model-a, 20 more "
                       "needed"},
         want_left={"eng-beta": ("eng-beta/preemptor",)}),
    Case("prevent integer overflow when sum of requests over podsets exceeds MaxInt64",
         workloads=(wl("default/vuln-wl", "overflow-queue",
                       ps("ps1", 1, {"cpu": "1000000m"}),
                       ps("ps2", 1, {"cpu": "9223372036854775000m"})),),
         cluster_queues=(cq("overflow-cq", group(fq("default", cpu="10000"))),),
         local_queues={"default/overflow-queue": "overflow-cq"},
         want_pending={"default/vuln-wl": "couldn't assign flavors to pod set ps2: insufficient "
                       "quota for cpu in flavor default, previously considered podsets requests "
                       "(1k) + current podset request (9223372036854775) > maximum capacity "
                       "(10k)"},
         want_inadmissible={"overflow-cq": ("default/vuln-wl",)}),
    Case("prevent integer overflow in ResourceValue conversion to MilliValue",
         workloads=(wl("default/vuln-wl", "overflow-queue",
                       ps("ps1", 1, {"cpu": "9223372036854776"})),),
         cluster_queues=(cq("overflow-cq", group(fq("default", cpu="10"))),),
         local_queues={"default/overflow-queue": "overflow-cq"},
         want_pending={"default/vuln-wl": "couldn't assign flavors to pod set ps1: insufficient "
                       "quota for cpu in flavor default, previously considered podsets requests "
                       "(0) + current podset request (9223372036854775807m) > maximum capacity "
                       "(10)"},
         want_inadmissible={"overflow-cq": ("default/vuln-wl",)},
         xfail="dralab's amounts are unbounded integers: a request past int64 milli-units is "
               "not saturated to 9223372036854775807m as Kueue's MilliValue conversion does "
               "(the outcome, exceeds maximum capacity, is the same; the message's number "
               "differs)"),
]

# The QuotaReserved=False reason upstream's wantWorkloads give each pending workload
# (UnadmittedWorkloadsObservability on, its default), by case.
WANT_REASONS: dict[str, dict[str, str]] = {
    "flavors with mixed misconfiguration and insufficient quota": {
        "sales/new-job": "WaitingForQuota",
    },
    "flavors with mixed taint mismatch and exceeding limits": {
        "sales/new-job2": "ExceedsMaxQuota",
    },
    "flavors are structurally incompatible": {
        "sales/new-job3": "NoMatchingFlavor",
    },
    "single clusterQueue full": {
        "sales/new": "WaitingForQuota",
    },
    "failed to match clusterQueue selector": {
        "sales/new": "Misconfigured",
    },
    "cannot borrow if cohort was assigned and would result in overadmission": {
        "eng-beta/new": "WaitingForQuota",
    },
    "can borrow if needs reclaim from cohort in different flavor": {
        "eng-alpha/can-reclaim": "WaitingForQuota",
    },
    "workload exceeds lending limit when borrow in cohort": {
        "lend/b": "WaitingForQuota",
    },
    "hierarchical cohort respects lending limit when borrowing": {
        "eng-alpha/wl-pending": "WaitingForQuota",
    },
    "preempt workloads in ClusterQueue and cohort": {
        "eng-beta/preemptor": "WaitingForPreemptedWorkloads",
    },
    "multiple CQs need preemption": {
        "eng-alpha/pending": "WaitingForQuota",
        "eng-beta/preemptor": "WaitingForPreemptedWorkloads",
    },
    "cannot borrow resource not listed in clusterQueue": {
        "eng-alpha/new": "NoMatchingFlavor",
    },
    "no overadmission while borrowing": {
        "eng-gamma/new-gamma": "WaitingForQuota",
    },
    "partial admission single variable pod set, preempt first": {
        "eng-beta/new": "WaitingForPreemptedWorkloads",
    },
    "partial admission single variable pod set, preempt with partial admission": {
        "eng-beta/new": "WaitingForPreemptedWorkloads",
    },
    "partial admission disabled, multiple variable pod sets": {
        "sales/new": "ExceedsMaxQuota",
    },
    ("only one workload can borrow one resources from the same flavor in the same cycle if"
     " cohort quota cannot fit"): {
        "sales/wl2": "WaitingForQuota",
    },
    ("preemption while borrowing, workload waiting for preemption should not block a "
     "borrowing workload in another CQ"): {
        "eng-alpha/a": "WaitingForQuota",
    },
    "minimal preemptions when target queue is exhausted": {
        "eng-alpha/incoming": "WaitingForPreemptedWorkloads",
    },
    "A workload is only eligible to do preemptions if it fits fully within nominal quota": {
        "eng-alpha/incoming": "WaitingForQuota",
    },
    "multiple preemptions without borrowing": {
        "eng-alpha/preemptor": "WaitingForPreemptedWorkloads",
        "eng-beta/preemptor": "WaitingForPreemptedWorkloads",
    },
    "multiple preemptions preemption possible after earlier workload fits": {
        "eng-beta/preemptor": "WaitingForPreemptedWorkloads",
    },
    "multiple preemptions skip preemption when shared limited resource": {
        "eng-alpha/preemptor": "WaitingForPreemptedWorkloads",
        "eng-beta/pretending-preemptor": "WaitingForQuota",
    },
    "not enough resources": {
        "sales/new": "ExceedsMaxQuota",
    },
    "container does not satisfy limitRange constraints": {
        "sales/new": "Misconfigured",
    },
    "container resource requests exceed limits": {
        "sales/new": "Misconfigured",
    },
    "prefer reclamation over cq priority based preemption": {
        "eng-alpha/preemptor": "WaitingForPreemptedWorkloads",
    },
    ("prefer first preemption flavor when second flavor requires both reclaim and cq "
     "priority preemption"): {
        "eng-alpha/preemptor": "WaitingForPreemptedWorkloads",
    },
    "prefer first preemption flavor when second flavor also requires cq preemption": {
        "eng-alpha/preemptor": "WaitingForPreemptedWorkloads",
    },
    "workload requiring reclaimation prioritized over wl in another full cq": {
        "eng-alpha/WL1": "WaitingForQuota",
        "eng-beta/WL2": "WaitingForPreemptedWorkloads",
    },
    "capacity not blocked when lending clusterqueue can reclaim (ReclaimWithinCohort=Any)": {
        "eng-alpha/a2-pending": "WaitingForQuota",
    },
    ("capacity blocked when lending clusterqueue not guaranteed to reclaim "
     "(ReclaimWithinCohort=LowerPriority)"): {
        "eng-alpha/a2-pending": "WaitingForQuota",
        "eng-beta/b1-pending": "WaitingForQuota",
    },
    ("capacity blocked when lending clusterqueue not guaranteed to reclaim "
     "(ReclaimWithinCohort=Never)"): {
        "eng-alpha/a2-pending": "WaitingForQuota",
        "eng-beta/b1-pending": "WaitingForQuota",
    },
    "in a hierarchical cohort, workload borrowing less is scheduled first": {
        "eng-alpha/best-effort": "WaitingForQuota",
    },
    "preempt when workload requests zero of a resource not defined in ClusterQueue": {
        "sales/preemptor": "WaitingForPreemptedWorkloads",
    },
    ("PreemptionOverBorrowing preference: preempt in first flavor instead of borrowing in "
     "second"): {
        "default/high-pob": "WaitingForPreemptedWorkloads",
    },
    "block preemptions and signal `BlockedOnPreemptionGates` when a preemption gate is present":
        {"eng-beta/preemptor": "AdmissionGated"},
    ("do not signal `BlockedOnPreemptionGates` when a preemption gate is present, but the "
     "workload had nothing to preempt"): {
        "eng-beta/preemptor": "WaitingForQuota",
    },
    "prevent integer overflow when sum of requests over podsets exceeds MaxInt64": {
        "default/vuln-wl": "ExceedsMaxQuota",
    },
    "prevent integer overflow in ResourceValue conversion to MilliValue": {
        "default/vuln-wl": "ExceedsMaxQuota",
    },
}


def _fs(name: str, *groups: ResourceGroup, cohort: str, **kwargs: object) -> ClusterQueueSpec:
    return cq(name, *groups, cohort=cohort, **kwargs)  # type: ignore[arg-type]


def cpu_wl(key: str, queue: str, cpu: str, count: int = 1, pod_set: str = "one",
           flavor: str | None = None, cq_name: str | None = None, priority: int = 0,
           created: float | None = None) -> Wl:
    """A workload of ``count`` pods of ``cpu`` each; holding quota in ``cq_name`` on
    ``flavor`` when both are given."""
    total = str(milli(cpu) * count // 1000)
    admitted = adm(cq_name, psa(pod_set, count, cpu=(flavor, total))) \
        if cq_name is not None and flavor is not None else None
    return wl(key, queue, ps(pod_set, count, {"cpu": cpu}), priority=priority,
              admitted=admitted, created=created)


FS_FILE = "pkg/scheduler/scheduler_fs_test.go"
NO_LONGER = "Workload no longer fits after processing another workload"
FS_CASES = [
    Case("with fair sharing: schedule workload with lowest share first",
         workloads=(cpu_wl("eng-alpha/all_nominal", "main", "1", 50, flavor="on-demand",
                           cq_name="eng-alpha"),
                    cpu_wl("eng-beta/borrowing", "main", "1", 55, flavor="on-demand",
                           cq_name="eng-beta"),
                    cpu_wl("eng-beta/older_new", "main", "1", 1, created=-60),
                    cpu_wl("eng-alpha/new", "main", "1", 5, created=0)),
         cluster_queues=(cq("eng-shared", group(fq("on-demand", cpu=("10", "0"))), cohort="eng"),),
         fair_sharing=True,
         want_admitted={"eng-alpha/new": adm("eng-alpha", psa("one", 5, cpu=("on-demand", "5")))},
         want_pending={"eng-beta/older_new": NO_LONGER},
         want_left={"eng-beta": ("eng-beta/older_new",)}),
    Case("with fair sharing: nominal-first ordering admits workload fitting within nominal "
         "despite higher CQ DRS",
         workloads=(cpu_wl("eng-alpha/spot-heavy", "fs-nom", "1", 80, flavor="spot",
                           cq_name="fs-nom-a"),
                    cpu_wl("eng-beta/light-usage", "fs-nom", "1", 5, flavor="on-demand",
                           cq_name="fs-nom-b"),
                    cpu_wl("eng-beta/borrow-wl", "fs-nom", "1", 15, created=-60),
                    cpu_wl("eng-alpha/nom-wl", "fs-nom", "1", 45, created=0)),
         cluster_queues=(
             cq("fs-nom-a", group(fq("on-demand", cpu=("50", "0"))),
                group(fq("spot", cpu=("50", "50"))), cohort="fs-nom"),
             cq("fs-nom-b", group(fq("on-demand", cpu=("10", "50"))),
                group(fq("spot", cpu=("50", "0"))), cohort="fs-nom")),
         local_queues={"eng-alpha/fs-nom": "fs-nom-a", "eng-beta/fs-nom": "fs-nom-b"},
         fair_sharing=True,
         want_admitted={"eng-alpha/nom-wl": adm("fs-nom-a",
                                                psa("one", 45, cpu=("on-demand", "45")))},
         want_pending={"eng-beta/borrow-wl": NO_LONGER},
         want_left={"fs-nom-b": ("eng-beta/borrow-wl",)}),
    *(Case(name,
           workloads=(cpu_wl("eng-alpha/c0", "lq-c", "10", flavor="on-demand", cq_name="cq-c"),
                      cpu_wl("eng-alpha/wl-a", "lq-a", "5"),
                      cpu_wl("eng-alpha/wl-b", "lq-b", "5")),
           cluster_queues=(cq("cq-a", group(fq("on-demand", cpu="0")), cohort=a_parent),
                           cq("cq-b", group(fq("on-demand", cpu="5")), cohort="Cohort-B"),
                           cq("cq-c", group(fq("on-demand", cpu="0")), cohort="Cohort-B")),
           cohorts=cohorts,
           local_queues={"eng-alpha/lq-a": "cq-a", "eng-alpha/lq-b": "cq-b",
                         "eng-alpha/lq-c": "cq-c"},
           fair_sharing=True,
           want_admitted={"eng-alpha/wl-a": adm("cq-a", psa("one", cpu=("on-demand", "5")))},
           want_pending={"eng-alpha/wl-b": NO_LONGER},
           want_left={"cq-b": ("eng-alpha/wl-b",)})
      for name, a_parent, cohorts in (
          ("with fair sharing: hierarchical nominal-first prefers non-borrowing subtree",
           "Cohort-A",
           (CohortSpec("root"),
            CohortSpec("Cohort-A", "root", (group(fq("on-demand", cpu="10")),)),
            CohortSpec("Cohort-B", "root"))),
          ("with fair sharing: hierarchical nominal-first with deeper nesting", "SUB-A",
           (CohortSpec("root"), CohortSpec("Cohort-A", "root"),
            CohortSpec("SUB-A", "Cohort-A", (group(fq("on-demand", cpu="10")),)),
            CohortSpec("Cohort-B", "root"))))),
    Case("with fair sharing: hierarchical nominal-first with mixed CQ and cohort quotas",
         workloads=(cpu_wl("eng-alpha/a2-admitted", "lq-a2", "6", flavor="on-demand",
                           cq_name="cq-a2"),
                    cpu_wl("eng-alpha/c-admitted", "lq-c", "20", flavor="on-demand",
                           cq_name="cq-c"),
                    cpu_wl("eng-alpha/wl-a1", "lq-a1", "7"),
                    cpu_wl("eng-alpha/wl-b", "lq-b", "4")),
         cluster_queues=(cq("cq-a1", group(fq("on-demand", cpu="5")), cohort="Cohort-A"),
                         cq("cq-a2", group(fq("on-demand", cpu="3")), cohort="Cohort-A"),
                         cq("cq-b", group(fq("on-demand", cpu="5")), cohort="Cohort-B"),
                         cq("cq-c", group(fq("on-demand", cpu="3")), cohort="Cohort-B")),
         cohorts=(CohortSpec("root"),
                  CohortSpec("Cohort-A", "root", (group(fq("on-demand", cpu="10")),)),
                  CohortSpec("Cohort-B", "root", (group(fq("on-demand", cpu="10")),))),
         local_queues={"eng-alpha/lq-a1": "cq-a1", "eng-alpha/lq-a2": "cq-a2",
                       "eng-alpha/lq-b": "cq-b", "eng-alpha/lq-c": "cq-c"},
         fair_sharing=True,
         want_admitted={"eng-alpha/wl-a1": adm("cq-a1", psa("one", cpu=("on-demand", "7")))},
         want_pending={"eng-alpha/wl-b": NO_LONGER},
         want_left={"cq-b": ("eng-alpha/wl-b",)}),
    Case("with fair sharing: hierarchical nominal-first per-flavor ignores cross-flavor borrowing",
         workloads=(cpu_wl("eng-alpha/spot-admitted", "lq-a", "5", flavor="spot",
                           cq_name="cq-a"),
                    cpu_wl("eng-alpha/od-admitted", "lq-b", "8", flavor="on-demand",
                           cq_name="cq-b"),
                    cpu_wl("eng-alpha/wl-a", "lq-a", "4"),
                    cpu_wl("eng-alpha/wl-b", "lq-b", "4")),
         cluster_queues=(cq("cq-a", group(fq("on-demand", cpu="0"), fq("spot", cpu="0")),
                            cohort="Cohort-A"),
                         cq("cq-b", group(fq("on-demand", cpu="5"), fq("spot", cpu="0")),
                            cohort="Cohort-B")),
         cohorts=(CohortSpec("root"),
                  CohortSpec("Cohort-A", "root", (group(fq("on-demand", cpu="10")),)),
                  CohortSpec("Cohort-B", "root", (group(fq("spot", cpu="10")),))),
         local_queues={"eng-alpha/lq-a": "cq-a", "eng-alpha/lq-b": "cq-b"},
         fair_sharing=True,
         want_admitted={"eng-alpha/wl-a": adm("cq-a", psa("one", cpu=("on-demand", "4")))},
         want_pending={"eng-alpha/wl-b": NO_LONGER},
         want_left={"cq-b": ("eng-alpha/wl-b",)}),
]

def _zero(*names: str, cohort: str, weight: float = 1.0,
          policy: PreemptionPolicy | None = None) -> tuple[ClusterQueueSpec, ...]:
    """ClusterQueues with no on-demand quota of their own in ``cohort``."""
    return tuple(cq(n, group(fq("on-demand", cpu="0")), cohort=cohort, weight=weight,
                    policy=policy) for n in names)


def _cohort_a(cpu: str, *more: CohortSpec) -> tuple[CohortSpec, ...]:
    return (CohortSpec("A", None, (group(fq("on-demand", cpu=cpu)),)), *more)


def _lqs(*names: str) -> dict[str, str]:
    return {f"eng-alpha/lq-{n}": n for n in names}


_ANY_NEVER = preemption(reclaim="Any", within="Never")

FS_CASES += [
    Case("hierarchical fair sharing schedule workload which wins tournament",
         workloads=(cpu_wl("eng-alpha/d0", "lq-d", "10", flavor="on-demand", cq_name="d"),
                    cpu_wl("eng-alpha/e0", "lq-e", "20", flavor="on-demand", cq_name="e"),
                    cpu_wl("eng-alpha/g0", "lq-g", "100", flavor="on-demand", cq_name="g"),
                    cpu_wl("eng-alpha/d1", "lq-d", "70"), cpu_wl("eng-alpha/e1", "lq-e", "61"),
                    cpu_wl("eng-alpha/f1", "lq-f", "1"), cpu_wl("eng-alpha/g1", "lq-g", "1")),
         cluster_queues=(*_zero("d", "e", cohort="B"), *_zero("f", "g", cohort="C")),
         cohorts=_cohort_a("200", CohortSpec("B", "A"), CohortSpec("C", "A")),
         local_queues=_lqs("d", "e", "f", "g"), fair_sharing=True,
         want_admitted={"eng-alpha/d1": adm("d", psa("one", cpu=("on-demand", "70")))},
         want_pending={k: NO_LONGER for k in ("eng-alpha/e1", "eng-alpha/f1", "eng-alpha/g1")},
         want_left={"e": ("eng-alpha/e1",), "f": ("eng-alpha/f1",), "g": ("eng-alpha/g1",)}),
    Case("fair sharing schedule workload with lowest drf after admission",
         workloads=(cpu_wl("eng-alpha/b0", "lq-b", "10", flavor="on-demand", cq_name="b"),
                    cpu_wl("eng-alpha/b1", "lq-b", "50"), cpu_wl("eng-alpha/c1", "lq-c", "75")),
         cluster_queues=_zero("b", "c", cohort="A"), cohorts=_cohort_a("100"),
         local_queues=_lqs("b", "c"), fair_sharing=True,
         want_admitted={"eng-alpha/b1": adm("b", psa("one", cpu=("on-demand", "50")))},
         want_pending={"eng-alpha/c1": NO_LONGER}, want_left={"c": ("eng-alpha/c1",)}),
    *(Case(f"fair sharing two queues with {label} schedules workload which borrows less",
           workloads=(cpu_wl("eng-alpha/b0", "lq-b", "4", flavor="on-demand", cq_name="b"),
                      cpu_wl("eng-alpha/b1", "lq-b", "4", priority=9001),
                      cpu_wl("eng-alpha/c1", "lq-c", "4", priority=0)),
           cluster_queues=_zero("b", "c", cohort="A", weight=weight, policy=_ANY_NEVER),
           cohorts=_cohort_a("8"), local_queues=_lqs("b", "c"), fair_sharing=True,
           want_admitted={"eng-alpha/c1": adm("c", psa("one", cpu=("on-demand", "4")))},
           want_pending={"eng-alpha/b1": NO_LONGER}, want_left={"b": ("eng-alpha/b1",)})
      for label, weight in (("weight 0", 0.0), ("high weight", 123456789.0))),
    Case("fair sharing schedule singleton cqs and cq without cohort",
         workloads=(cpu_wl("eng-alpha/a1", "lq-a", "10"), cpu_wl("eng-alpha/b1", "lq-b", "10"),
                    cpu_wl("eng-alpha/c1", "lq-c", "10")),
         cluster_queues=(*_zero("a", cohort="A"),
                         cq("b", group(fq("on-demand", cpu="10")), cohort="B"),
                         cq("c", group(fq("on-demand", cpu="10")))),
         cohorts=_cohort_a("10", CohortSpec("B")), local_queues=_lqs("a", "b", "c"),
         fair_sharing=True,
         want_admitted={f"eng-alpha/{n}1": adm(n, psa("one", cpu=("on-demand", "10")))
                        for n in "abc"}),
    Case("fair sharing schedule highest priority first",
         workloads=(cpu_wl("eng-alpha/b1", "lq-b", "10", priority=99),
                    cpu_wl("eng-alpha/c1", "lq-c", "10", priority=101)),
         cluster_queues=_zero("b", "c", cohort="A"), cohorts=_cohort_a("10", CohortSpec("B")),
         local_queues=_lqs("b", "c"), fair_sharing=True,
         want_admitted={"eng-alpha/c1": adm("c", psa("one", cpu=("on-demand", "10")))},
         want_pending={"eng-alpha/b1": NO_LONGER}, want_left={"b": ("eng-alpha/b1",)}),
    Case("fair sharing schedule earliest timestamp first",
         workloads=(cpu_wl("eng-alpha/b1", "lq-b", "10", priority=101, created=1),
                    cpu_wl("eng-alpha/c1", "lq-c", "10", priority=101, created=0)),
         cluster_queues=_zero("b", "c", cohort="A"), cohorts=_cohort_a("10", CohortSpec("B")),
         local_queues=_lqs("b", "c"), fair_sharing=True,
         want_admitted={"eng-alpha/c1": adm("c", psa("one", cpu=("on-demand", "10")))},
         want_pending={"eng-alpha/b1": NO_LONGER}, want_left={"b": ("eng-alpha/b1",)}),
]

def _simple(key: str, cq_name: str, flavor: str, cpu: str, queue: str = "main",
            priority: int = 0) -> Wl:
    """SimpleReserveQuota(cq, flavor): one pod of ``cpu`` holding quota there."""
    return cpu_wl(key, queue, cpu, pod_set="main", flavor=flavor, cq_name=cq_name,
                  priority=priority)


def _bank(cpu: str) -> ClusterQueueSpec:
    return cq("resource-bank", group(fq("default", cpu=cpu)), cohort="other")


_LOCAL_CAPACITY = dict(
    workloads=(gpu_wl("default/a1", "8", queue="queue1", reserved=("queue1", "on-demand")),
               gpu_wl("default/a2", "3", queue="queue1", reserved=("queue1", "spot")),
               gpu_wl("default/a3", "1", queue="queue1")),
    cluster_queues=(cq("queue1", group(gq("on-demand", "3"), gq("spot", "3")),
                       cohort="child-cohort",
                       policy=preemption(within="LowerPriority", reclaim="Any"),
                       flavor_fungibility=fungibility("TryNextFlavor", "TryNextFlavor")),),
    cohorts=(CohortSpec("root-cohort", None, (group(gq("on-demand", "2"), gq("spot", "0")),)),
             CohortSpec("child-cohort", "root-cohort",
                        (group(gq("on-demand", "5"), gq("spot", "7")),))),
    local_queues={"default/queue1": "queue1"},
    want_admitted={"default/a3": ("queue1", (("main", {"gpu": ("spot", "1")}, 1),))})

FS_CASES += [
    Case("with fair sharing: preempt workload from CQ with the highest share",
         workloads=(_simple("eng-alpha/all_spot", "eng-alpha", "spot", "100"),
                    *(_simple(f"eng-alpha/alpha{i}", "eng-alpha", "on-demand", "20")
                      for i in range(1, 5)),
                    _simple("eng-gamma/gamma1", "eng-gamma", "on-demand", "10"),
                    *(_simple(f"eng-gamma/gamma{i}", "eng-gamma", "on-demand", "20")
                      for i in range(2, 5)),
                    wl("eng-beta/preemptor", "main", main("30"))),
         cluster_queues=(cq("eng-gamma", group(fq("on-demand", cpu=("50", "0"))), cohort="eng"),),
         fair_sharing=True,
         want_preempted={"eng-alpha/alpha1": "InCohortReclamation",
                         "eng-gamma/gamma1": "InCohortReclamation"},
         want_pending={"eng-beta/preemptor": "couldn't assign flavors to pod set main: "
                       "insufficient unused quota for cpu in flavor on-demand, 30 more needed, "
                       "insufficient unused quota for cpu in flavor spot, 30 more needed. Pending "
                       "the preemption of 2 workload(s)"},
         want_left={"eng-beta": ("eng-beta/preemptor",)}),
    Case("multiple preemptions within cq when fair sharing",
         workloads=(*(_simple(f"eng-{n}/{w}", f"other-{n}", "default", "3", queue="other")
                      for n, w in (("alpha", "a1"), ("beta", "b1"), ("gamma", "c1"))),
                    *(wl(f"eng-{n}/preemptor", "other", main("3"), priority=100)
                      for n in ("alpha", "beta", "gamma"))),
         # Upstream's ClusterQueuePreemption leaves reclaimWithinCohort empty here (the unit
         # test bypasses the API server, which would default it to Never); with fair sharing
         # Kueue lets a queue preempt while borrowing unless it is Never, so "" as upstream.
         cluster_queues=(*(cq(f"other-{n}", group(fq("default", cpu="2")), cohort="other",
                              policy=preemption(within="LowerPriority", reclaim=""))
                           for n in ("alpha", "beta", "gamma")), _bank("3")),
         local_queues=OTHER_LQ, fair_sharing=True,
         want_preempted={"eng-alpha/a1": "InClusterQueue", "eng-beta/b1": "InClusterQueue",
                         "eng-gamma/c1": "InClusterQueue"},
         want_pending={f"eng-{n}/preemptor": "couldn't assign flavors to pod set main: "
                       "insufficient unused quota for cpu in flavor default, 3 more needed. "
                       "Pending the preemption of 1 workload(s)"
                       for n in ("alpha", "beta", "gamma")},
         want_left={f"other-{n}": (f"eng-{n}/preemptor",) for n in ("alpha", "beta", "gamma")}),
    Case("multiple preemptions skip overlapping preemption targets",
         workloads=(
             wl("eng-alpha/a1", "other", ps("main", 1, {"alpha-resource": "1"}),
                admitted=adm("other-alpha", psa("main", **{"alpha-resource": ("default", "1")}))),
             wl("eng-beta/b1", "other", ps("main", 1, {"beta-resource": "1"}),
                admitted=adm("other-beta", psa("main", **{"beta-resource": ("default", "1")}))),
             wl("eng-gamma/c1", "other", ps("main", 1, {"cpu": "9", "gamma-resource": "1"}),
                admitted=adm("other-gamma", psa("main", cpu=("default", "9")))),
             wl("eng-alpha/preemptor", "other", ps("main", 1, {"cpu": "3", "alpha-resource": "1"}),
                priority=100),
             wl("eng-beta/pretending-preemptor", "other",
                ps("main", 1, {"cpu": "3", "beta-resource": "1"}), priority=99)),
         cluster_queues=(*(cq(f"other-{n}", group(fq_map("default", {"cpu": "0",
                                                                     f"{n}-resource": "1"})),
                              cohort="other", policy=preemption(within="LowerPriority",
                                                                reclaim="Any"))
                           for n in ("alpha", "beta", "gamma")), _bank("9")),
         local_queues=OTHER_LQ, fair_sharing=True,
         feature_gates={"RecomputeAssignmentUponPreemptionTargetsOverlap": False},
         want_preempted={"eng-alpha/a1": "InClusterQueue",
                         "eng-gamma/c1": "InCohortFairSharing"},
         want_pending={"eng-alpha/preemptor": "couldn't assign flavors to pod set main: "
                       "insufficient unused quota for alpha-resource in flavor default, 1 more "
                       "needed, insufficient unused quota for cpu in flavor default, 3 more "
                       "needed. Pending the preemption of 2 workload(s)",
                       "eng-beta/pretending-preemptor": "Workload has overlapping preemption "
                       "targets with another workload"},
         want_left={"other-alpha": ("eng-alpha/preemptor",),
                    "other-beta": ("eng-beta/pretending-preemptor",)}),
    Case("not enough resources with fair sharing enabled",
         workloads=(wl("sales/new", "main", ps("one", 1, {"cpu": "100"})),),
         fair_sharing=True,
         want_pending={"sales/new": "couldn't assign flavors to pod set one: insufficient quota "
                       "for cpu in flavor default, previously considered podsets requests (0) + "
                       "current podset request (100) > maximum capacity (50)"},
         want_left={"sales": ("sales/new",)}),
    Case("with fair sharing: prefer reclamation over cq priority based preemption; with "
         "preemption while borrowing",
         workloads=(gpu_wl("eng-alpha/a1", "5", 50, reserved=("other-alpha", "on-demand")),
                    gpu_wl("eng-beta/b1", "5", 50, reserved=("other-beta", "spot")),
                    gpu_wl("eng-alpha/preemptor", "8", 100)),
         cluster_queues=(cq("other-alpha", group(gq("on-demand", "7"), gq("spot", "7")),
                            cohort="other",
                            policy=preemption(within="LowerPriority", reclaim="LowerPriority")),
                         cq("other-beta", group(gq("on-demand", "3"), gq("spot", "3")),
                            cohort="other")),
         local_queues=OTHER_LQ, fair_sharing=True,
         want_preempted={"eng-beta/b1": "InCohortFairSharing"},
         want_pending={"eng-alpha/preemptor": "couldn't assign flavors to pod set main: "
                       "insufficient unused quota for gpu in flavor on-demand, 3 more needed, "
                       "insufficient unused quota for gpu in flavor spot, 3 more needed. Pending "
                       "the preemption of 1 workload(s)"},
         want_left={"other-alpha": ("eng-alpha/preemptor",)}),
    Case("prefer flavor with most local capacity", fair_sharing=True,
         **_LOCAL_CAPACITY),  # type: ignore[arg-type]
    Case("prefer flavor with most local capacity (FS=false)",
         **_LOCAL_CAPACITY),  # type: ignore[arg-type]
    Case("fair sharing: in-CQ preemption for CQ without cohort; repro for nil pointer panic",
         workloads=(_simple("default/nc-low", "no-cohort-cq", "default", "4",
                            queue="no-cohort-queue", priority=-1),
                    wl("default/nc-high", "no-cohort-queue", main("4"), priority=100)),
         cluster_queues=(cq("no-cohort-cq", group(fq("default", cpu="4")),
                            policy=preemption(within="LowerPriority")),),
         local_queues={"default/no-cohort-queue": "no-cohort-cq"}, fair_sharing=True,
         want_preempted={"default/nc-low": "InClusterQueue"},
         want_pending={"default/nc-high": "couldn't assign flavors to pod set main: insufficient "
                       "unused quota for cpu in flavor default, 4 more needed. Pending the "
                       "preemption of 1 workload(s)"},
         want_left={"no-cohort-cq": ("default/nc-high",)}),
    Case("PreemptionOverBorrowing with fair sharing: preempt in first flavor instead of "
         "borrowing in second",
         workloads=(one("default/fs-low-pob", "fs-pob-cq", cpu="5", priority=-1,
                        queue="fs-pob-queue"),
                    wl("default/fs-high-pob", "fs-pob-queue", main("5"))),
         cluster_queues=(_two_flavor_cq("fs-pob-cq", "fs-pob-cohort", "PreemptionOverBorrowing"),
                         _lender("fs-pob-lender", "fs-pob-cohort")),
         local_queues={"default/fs-pob-queue": "fs-pob-cq"}, fair_sharing=True,
         want_preempted={"default/fs-low-pob": "InClusterQueue"},
         want_pending={"default/fs-high-pob": "couldn't assign flavors to pod set main: "
                       "insufficient unused quota for cpu in flavor on-demand, 5 more needed. "
                       "Pending the preemption of 1 workload(s)"},
         want_left={"fs-pob-cq": ("default/fs-high-pob",)}),
]

# The same from scheduler_fs_test.go's wantWorkloads.
WANT_REASONS.update({
    "with fair sharing: schedule workload with lowest share first": {
        "eng-beta/older_new": "WaitingForQuota",
    },
    ("with fair sharing: nominal-first ordering admits workload fitting within nominal "
     "despite higher CQ DRS"): {
        "eng-beta/borrow-wl": "WaitingForQuota",
    },
    "with fair sharing: hierarchical nominal-first prefers non-borrowing subtree": {
        "eng-alpha/wl-b": "WaitingForQuota",
    },
    "with fair sharing: hierarchical nominal-first with deeper nesting": {
        "eng-alpha/wl-b": "WaitingForQuota",
    },
    "with fair sharing: hierarchical nominal-first with mixed CQ and cohort quotas": {
        "eng-alpha/wl-b": "WaitingForQuota",
    },
    ("with fair sharing: hierarchical nominal-first per-flavor ignores cross-flavor "
     "borrowing"): {
        "eng-alpha/wl-b": "WaitingForQuota",
    },
    "hierarchical fair sharing schedule workload which wins tournament": {
        "eng-alpha/e1": "WaitingForQuota",
        "eng-alpha/f1": "WaitingForQuota",
        "eng-alpha/g1": "WaitingForQuota",
    },
    "fair sharing schedule workload with lowest drf after admission": {
        "eng-alpha/c1": "WaitingForQuota",
    },
    "fair sharing two queues with weight 0 schedules workload which borrows less": {
        "eng-alpha/b1": "WaitingForQuota",
    },
    "fair sharing two queues with high weight schedules workload which borrows less": {
        "eng-alpha/b1": "WaitingForQuota",
    },
    "fair sharing schedule highest priority first": {
        "eng-alpha/b1": "WaitingForQuota",
    },
    "fair sharing schedule earliest timestamp first": {
        "eng-alpha/b1": "WaitingForQuota",
    },
    "with fair sharing: preempt workload from CQ with the highest share": {
        "eng-beta/preemptor": "WaitingForPreemptedWorkloads",
    },
    "multiple preemptions within cq when fair sharing": {
        "eng-alpha/preemptor": "WaitingForPreemptedWorkloads",
        "eng-beta/preemptor": "WaitingForPreemptedWorkloads",
        "eng-gamma/preemptor": "WaitingForPreemptedWorkloads",
    },
    "multiple preemptions skip overlapping preemption targets": {
        "eng-alpha/preemptor": "WaitingForPreemptedWorkloads",
        "eng-beta/pretending-preemptor": "WaitingForQuota",
    },
    "not enough resources with fair sharing enabled": {
        "sales/new": "ExceedsMaxQuota",
    },
    ("with fair sharing: prefer reclamation over cq priority based preemption; with "
     "preemption while borrowing"): {
        "eng-alpha/preemptor": "WaitingForPreemptedWorkloads",
    },
    "fair sharing: in-CQ preemption for CQ without cohort; repro for nil pointer panic": {
        "default/nc-high": "WaitingForPreemptedWorkloads",
    },
    ("PreemptionOverBorrowing with fair sharing: preempt in first flavor instead of "
     "borrowing in second"): {
        "default/fs-high-pob": "WaitingForPreemptedWorkloads",
    },
})


# -- more cases above this line --------------------------------------------------------


@pytest.mark.parametrize("case", FS_CASES, ids=[c.name for c in FS_CASES])
def test_schedule_for_fair_sharing(case: Case) -> None:
    """TestScheduleForFairSharing: kubernetes-sigs/kueue ff69552e, FS_FILE, case ``case.name``."""
    if case.skip:
        pytest.skip(case.skip)
    if case.xfail:
        with pytest.raises(AssertionError):
            run_cycle(case)
        pytest.xfail(case.xfail)
    run_cycle(case)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_schedule(case: Case) -> None:
    """TestSchedule: kubernetes-sigs/kueue ff69552e, FILE, case ``case.name``."""
    if case.skip:
        pytest.skip(case.skip)
    if case.xfail:
        with pytest.raises(AssertionError):
            run_cycle(case)
        pytest.xfail(case.xfail)
    run_cycle(case)


def test_case_names_are_unique() -> None:
    assert len({c.name for c in CASES}) == len(CASES)


_CYCLES_INPUT = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: "10"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: cq}
"""


def _workload_doc(name: str, second: int) -> str:
    return f"""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: {name}, namespace: ns, creationTimestamp: "2026-01-01T00:00:0{second}Z"}}
spec:
  queueName: q
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: c
          resources: {{requests: {{cpu: "1"}}}}
"""


def _admitted_names(out: str) -> list[str]:
    items = yaml.safe_load(out)["items"]
    return sorted(i["metadata"]["name"] for i in items
                  if i["kind"] == "Workload" and i.get("status", {}).get("admission"))


def test_admit_cycles_flag(tmp_path: Path) -> None:
    """``dralab admit --cycles N``: one head per ClusterQueue per cycle, as Kueue."""
    snapshot = tmp_path / "in.yaml"
    snapshot.write_text(_CYCLES_INPUT + _workload_doc("a", 1) + _workload_doc("b", 2)
                        + _workload_doc("c", 3))
    runner = CliRunner()
    one = runner.invoke(cli, ["admit", "-f", str(snapshot), "--cycles", "1"])
    assert one.exit_code == 1, one.output
    assert _admitted_names(one.stdout) == ["a"]
    two = runner.invoke(cli, ["admit", "-f", str(snapshot), "--cycles", "2"])
    assert _admitted_names(two.stdout) == ["a", "b"]
    every = runner.invoke(cli, ["admit", "-f", str(snapshot)])
    assert every.exit_code == 0
    assert _admitted_names(every.stdout) == ["a", "b", "c"]
    bad = runner.invoke(cli, ["admit", "-f", str(snapshot), "--cycles", "0"])
    assert bad.exit_code == 2


# -- the fields these semantics read, from YAML through ``dralab admit`` ------------------

_POB_INPUT = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: on-demand}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: spot, labels: {}}
spec: {nodeLabels: {tier: spot}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: pob-cq}
spec:
  cohortName: pob
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor%s}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: on-demand
      resources: [{name: cpu, nominalQuota: "5", borrowingLimit: "0"}]
    - name: spot
      resources: [{name: cpu, nominalQuota: "0", borrowingLimit: "5"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: lender}
spec:
  cohortName: pob
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: on-demand
      resources: [{name: cpu, nominalQuota: "0"}]
    - name: spot
      resources: [{name: cpu, nominalQuota: "5"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: pob-cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: low, namespace: ns, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  queueName: q
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: c
          resources: {requests: {cpu: "5"}}
status:
  admission:
    clusterQueue: pob-cq
    podSetAssignments:
    - name: main
      count: 1
      flavors: {cpu: on-demand}
      resourceUsage: {cpu: "5"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: high
  namespace: ns
  creationTimestamp: "2026-01-01T00:00:01Z"
  labels: {kueue.x-k8s.io/priority-class: high}
spec:
  queueName: q
  priorityClassSource: kueue.x-k8s.io/workloadpriorityclass
  priorityClassName: high
  priority: 10
  podSets:
  - name: main
    count: 1
    template:
      spec:
        %s
        containers:
        - name: c
          resources: {requests: {cpu: "5"}}
"""


def _flavor_of(out: str, name: str) -> str | None:
    for item in yaml.safe_load(out)["items"]:
        if item["kind"] == "Workload" and item["metadata"]["name"] == name:
            admission = item.get("status", {}).get("admission")
            return admission["podSetAssignments"][0]["flavors"]["cpu"] if admission else None
    raise AssertionError(f"no workload {name}")


@pytest.mark.parametrize(("preference", "want"), [
    ("", "spot"),                                  # BorrowingOverPreemption, the default
    (", preference: BorrowingOverPreemption", "spot"),
    (", preference: PreemptionOverBorrowing", "on-demand"),  # preempts 'low' instead
])
def test_flavor_fungibility_preference_is_read(tmp_path: Path, preference: str, want: str) -> None:
    snapshot = tmp_path / "in.yaml"
    snapshot.write_text(_POB_INPUT % (preference, ""))
    result = CliRunner().invoke(cli, ["admit", "-f", str(snapshot)])
    assert result.exit_code in (0, 1), result.output
    assert _flavor_of(result.stdout, "high") == want


def test_preference_needs_try_next_flavor_on_both(tmp_path: Path) -> None:
    snapshot = tmp_path / "in.yaml"
    text = (_POB_INPUT % (", preference: PreemptionOverBorrowing", "")).replace(
        "whenCanBorrow: TryNextFlavor", "whenCanBorrow: MayStopSearch")
    snapshot.write_text(text)
    result = CliRunner().invoke(cli, ["admit", "-f", str(snapshot)])
    assert result.exit_code == 2
    assert "spec.flavorFungibility" in result.stderr
    assert "preference can only be set when both whenCanBorrow and whenCanPreempt are " \
           "TryNextFlavor" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_required_node_affinity_of_the_pod_template_selects_the_flavor(tmp_path: Path) -> None:
    snapshot = tmp_path / "in.yaml"
    affinity = ("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                "{nodeSelectorTerms: [{matchExpressions: [{key: tier, operator: In, "
                "values: [spot]}]}]}}}")
    snapshot.write_text(_POB_INPUT % (", preference: PreemptionOverBorrowing", affinity))
    result = CliRunner().invoke(cli, ["admit", "-f", str(snapshot)])
    # on-demand has no 'tier' label: the affinity term names no key of it, so it matches;
    # spot's label matches too. PreemptionOverBorrowing would pick on-demand...
    assert _flavor_of(result.stdout, "high") == "on-demand"
    snapshot.write_text((_POB_INPUT % (", preference: PreemptionOverBorrowing", affinity))
                        .replace("metadata: {name: on-demand}",
                                 "metadata: {name: on-demand}\nspec: {nodeLabels: {tier: od}}"))
    result = CliRunner().invoke(cli, ["admit", "-f", str(snapshot)])
    # ...but with tier=od on on-demand, the affinity rules it out: spot, by borrowing.
    assert _flavor_of(result.stdout, "high") == "spot"


_GROUP_INPUT = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: one}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: two}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: one
      resources: [{name: cpu, nominalQuota: "4"}]
    - name: two
      resources: [{name: cpu, nominalQuota: "9"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: lws, namespace: ns}
spec:
  queueName: q
  podSets:
  - name: worker
    count: 4
    %s
    template:
      spec:
        containers:
        - {name: c, resources: {requests: {cpu: "2"}}}
  - name: leader
    count: 1
    %s
    template:
      spec:
        containers:
        - {name: c, resources: {requests: {cpu: "1"}}}
"""


@pytest.mark.parametrize(("group", "want"), [
    ("topologyRequest: {podSetGroupName: g}", ["two", "two"]),  # 9 cpu together: only two
    ("", ["two", "one"]),  # apart: the workers' 8 cpu on two, the leader's 1 on one
])
def test_pod_set_group_name_is_read(tmp_path: Path, group: str, want: list[str]) -> None:
    snapshot = tmp_path / "in.yaml"
    snapshot.write_text(_GROUP_INPUT % (group, group))
    result = CliRunner().invoke(cli, ["admit", "-f", str(snapshot)])
    assert result.exit_code == 0, result.output
    (workload,) = [i for i in yaml.safe_load(result.stdout)["items"] if i["kind"] == "Workload"]
    got = [a["flavors"]["cpu"] for a in workload["status"]["admission"]["podSetAssignments"]]
    assert got == want


# -- TestEntryOrdering ----------------------------------------------------------------------
# kubernetes-sigs/kueue ff69552e, pkg/scheduler/scheduler_test.go, TestEntryOrdering: the
# order of a cycle's entries without fair sharing. Entries as upstream's: name, creation
# (seconds after now), priority, borrowing level, conditions (type, reason, seconds after
# now; all True), whether it is a preemptor waiting for its targets.

_Cond = tuple[str, str, int]
_OrderEntry = tuple[str, int, int, int, tuple[_Cond, ...], bool]
_PODS_READY_EVICTED = (("Evicted", "PodsReadyTimeout", 2),)
_ENTRIES: list[_OrderEntry] = [
    ("old_borrowing", 0, 0, 1, (), False), ("old", 1, 0, 0, (), False),
    ("new", 3, 0, 0, (), False), ("high_pri_borrowing", 3, 1, 1, (), False),
    ("new_high_pri", 4, 1, 0, (), False), ("new_borrowing", 3, 0, 1, (), False),
    ("evicted_borrowing", 1, 0, 1, _PODS_READY_EVICTED, False),
    ("recently_evicted", 0, 0, 0, _PODS_READY_EVICTED, False),
    ("high_pri_borrowing_more", 3, 1, 2, (), False)]
_PREEMPTED: list[_OrderEntry] = [
    ("old-mid-recently-preempted-in-queue", 0, 1, 0,
     (("Preempted", "InClusterQueue", 5),), False),
    ("old-mid-recently-reclaimed-while-borrowing", 0, 1, 0,
     (("Preempted", "InCohortReclaimWhileBorrowing", 6),), False),
    ("old-mid-more-recently-reclaimed-while-borrowing", 0, 1, 0,
     (("Preempted", "InCohortReclaimWhileBorrowing", 7),), False),
    ("old-mid-not-preempted-yet", 1, 1, 0, (), False),
    ("preemptor", 7, 2, 0, (), False)]
_PREEMPTORS: list[_OrderEntry] = [
    ("preemptor-borrowing", 1, 1, 1, (), True), ("preemptor-not-borrowing", 2, 1, 0, (), True),
    ("not-preemptor-not-borrowing", 0, 2, 0, (), False)]
# name, entries, PrioritySortingWithinCohort, PrioritizePreemptorWorkloads,
# waitForPodsReady.requeuingStrategy.timestamp, want.
ENTRY_ORDERING: list[tuple[str, list[_OrderEntry], bool, bool, str, list[str]]] = [
    ("Priority sorting is enabled (default) using pods-ready Eviction timestamp (default)",
     _ENTRIES, True, False, "Eviction",
     ["new_high_pri", "old", "recently_evicted", "new", "high_pri_borrowing", "old_borrowing",
      "evicted_borrowing", "new_borrowing", "high_pri_borrowing_more"]),
    ("Priority sorting is enabled (default) using pods-ready Creation timestamp", _ENTRIES,
     True, False, "Creation",
     ["new_high_pri", "recently_evicted", "old", "new", "high_pri_borrowing", "old_borrowing",
      "evicted_borrowing", "new_borrowing", "high_pri_borrowing_more"]),
    ("Priority sorting is disabled using pods-ready Eviction timestamp", _ENTRIES,
     False, False, "Eviction",
     ["old", "recently_evicted", "new", "new_high_pri", "old_borrowing", "evicted_borrowing",
      "high_pri_borrowing", "new_borrowing", "high_pri_borrowing_more"]),
    ("Priority sorting is disabled using pods-ready Creation timestamp", _ENTRIES,
     False, False, "Creation",
     ["recently_evicted", "old", "new", "new_high_pri", "old_borrowing", "evicted_borrowing",
      "high_pri_borrowing", "new_borrowing", "high_pri_borrowing_more"]),
    ("Some workloads are preempted; Priority sorting is disabled", _PREEMPTED,
     False, False, "Eviction",
     ["old-mid-recently-preempted-in-queue", "old-mid-not-preempted-yet",
      "old-mid-recently-reclaimed-while-borrowing", "preemptor",
      "old-mid-more-recently-reclaimed-while-borrowing"]),
    ("Some workloads are preempted; Priority sorting is enabled", _PREEMPTED,
     True, False, "Eviction",
     ["preemptor", "old-mid-recently-preempted-in-queue",
      "old-mid-recently-reclaimed-while-borrowing",
      "old-mid-more-recently-reclaimed-while-borrowing", "old-mid-not-preempted-yet"]),
    ("Some workloads are preemptors; PrioritizePreemptorWorkloads is disabled", _PREEMPTORS,
     True, False, "Eviction",
     ["not-preemptor-not-borrowing", "preemptor-not-borrowing", "preemptor-borrowing"]),
    ("Some workloads are preemptors; PrioritizePreemptorWorkloads is enabled", _PREEMPTORS,
     True, True, "Eviction",
     ["preemptor-not-borrowing", "preemptor-borrowing", "not-preemptor-not-borrowing"]),
]


@pytest.mark.parametrize(("name", "entries", "sorting", "preemptors_first", "requeuing", "want"),
                         ENTRY_ORDERING, ids=[c[0] for c in ENTRY_ORDERING])
def test_entry_ordering(name: str, entries: list[_OrderEntry], sorting: bool,
                        preemptors_first: bool, requeuing: str, want: list[str]) -> None:
    """TestEntryOrdering: kubernetes-sigs/kueue ff69552e, FILE, case ``name``: each
    entry's queue-order time (``queue_order_timestamp``) and place (``classic_order_key``)
    with the case's gates. Upstream sorts its short input by insertion (Go's
    slices.SortFunc below 12 elements), so full ties keep the input order; the input
    position stands in for dralab's tie-break (the workload key) here."""
    def key(item: tuple[int, _OrderEntry]) -> tuple[bool, int, int, float, str]:
        index, (_, created, priority, borrowing, conditions, preemptor) = item
        queued = queue_order_timestamp(
            float(created), [QueueCondition(kind, "True", reason, float(time))
                            for kind, reason, time in conditions], requeuing, sorting)
        return classic_order_key(borrowing, priority, queued, f"{index:03d}",
                                 priority_sorting=sorting, preemptor=preemptor,
                                 prioritize_preemptors=preemptors_first)

    ordered = sorted(enumerate(entries), key=key)
    assert [e[0] for _, e in ordered] == want


# -- TestResourcesToReserve -------------------------------------------------------------------
# kubernetes-sigs/kueue ff69552e, pkg/scheduler/scheduler_test.go, TestResourcesToReserve.

_RESERVE_CQ = cq("cq", group(fq_map("on-demand", {"memory": "100"}),
                             fq_map("spot", {"memory": ("0", "100")})),
                 group(fq_map("model-a", {"gpu": ("10", "0")}),
                       fq_map("model-b", {"gpu": ("10", "5")})),
                 cohort="eng", strategy="StrictFIFO")
_CQ_USAGE_A = {("on-demand", "memory"): "60", ("spot", "memory"): "50"}
_CQ_USAGE_B = {("on-demand", "memory"): "60", ("spot", "memory"): "60",
               ("model-a", "gpu"): "2", ("model-b", "gpu"): "10"}
RESERVE_CASES = [
    ("Reserved memory and gpu less than assignment usage, assignment preempts", "Preempt", 0,
     {("on-demand", "memory"): "50", ("model-a", "gpu"): "6"},
     {**_CQ_USAGE_A, ("model-a", "gpu"): "6", ("model-b", "gpu"): "2"},
     {("on-demand", "memory"): "40", ("model-a", "gpu"): "4"}),
    ("Reserved memory equal assignment usage, assignment preempts", "Preempt", 0,
     {("on-demand", "memory"): "30", ("model-a", "gpu"): "2"},
     {**_CQ_USAGE_A, ("model-a", "gpu"): "2", ("model-b", "gpu"): "2"},
     {("on-demand", "memory"): "30", ("model-a", "gpu"): "2"}),
    ("Reserved memory equal assignment usage, assignment fits", "Fit", 0,
     {("on-demand", "memory"): "50", ("model-a", "gpu"): "2"},
     {**_CQ_USAGE_A, ("model-a", "gpu"): "2", ("model-b", "gpu"): "2"},
     {("on-demand", "memory"): "50", ("model-a", "gpu"): "2"}),
    ("Reserved memory is 0, CQ is borrowing, assignment preempts without borrowing", "Preempt", 0,
     {("spot", "memory"): "50", ("model-b", "gpu"): "2"}, _CQ_USAGE_B,
     {("spot", "memory"): "0", ("model-b", "gpu"): "0"}),
    ("Reserved memory cut by nominal+borrowing quota, assignment preempts and borrows", "Preempt",
     1, {("spot", "memory"): "50", ("model-b", "gpu"): "2"}, _CQ_USAGE_B,
     {("spot", "memory"): "40", ("model-b", "gpu"): "2"}),
    ("Reserved memory equal assignment usage, CQ borrowing limit is nil", "Preempt", 1,
     {("on-demand", "memory"): "50", ("model-b", "gpu"): "2"}, _CQ_USAGE_B,
     {("on-demand", "memory"): "50", ("model-b", "gpu"): "2"}),
]


@pytest.mark.parametrize(("name", "mode", "borrowing", "assignment", "cq_usage", "want"),
                         RESERVE_CASES, ids=[c[0] for c in RESERVE_CASES])
def test_resources_to_reserve(name: str, mode: str, borrowing: int,
                              assignment: dict[tuple[str, str], str],
                              cq_usage: dict[tuple[str, str], str],
                              want: dict[tuple[str, str], str]) -> None:
    """TestResourcesToReserve: what a workload holds back in its cycle. Upstream's amounts
    are plain units (memory 50 is 50 bytes); here in milli-units as dralab's model."""
    got = resources_to_reserve({"Preempt": AssignMode.PREEMPT, "Fit": AssignMode.FIT}[mode],
                               borrowing, usage(assignment), _RESERVE_CQ, usage(cq_usage))
    assert got == usage(want)


# -- TestEntryComparerLess -----------------------------------------------------------------------
# kubernetes-sigs/kueue ff69552e, pkg/scheduler/scheduler_test.go, TestEntryComparerLess: two
# entries at one cohort of the fair-sharing tournament, with the DRS values upstream injects
# (zero, BorrowingDRS(default/cpu) on a requested cpu, NegativeDRS with ratio -1).

def _candidate(name: str, created: float, share: float = 0.0, borrows: bool = False,
               preemptor: bool = False) -> FairCandidate:
    return FairCandidate(f"default/{name}", 0, created, (0, share), borrows, preemptor)


COMPARER_CASES = [  # name, a, b, PrioritizePreemptorWorkloads, want
    ("non-borrowing subtree preferred over borrowing subtree", _candidate("nominal", 1),
     _candidate("borrowing", 0, borrows=True), False, True),
    ("both borrowing on requested flavors falls through to FIFO",
     _candidate("borrow-a", 1, borrows=True), _candidate("borrow-b", 0, borrows=True), False,
     False),
    ("lower DRS preferred over higher DRS", _candidate("lower-drs", 1, share=-1.0),
     _candidate("higher-drs", 0), False, True),
    ("both non-borrowing falls through to FIFO", _candidate("older", 0), _candidate("newer", 1),
     False, True),
    ("a is preemptor, b not, feature enabled",
     _candidate("preemptor-borrowing", 0, borrows=True, preemptor=True),
     _candidate("not-preemptor-nominal", 0), True, True),
    ("a is preemptor, b not, feature disabled",
     _candidate("preemptor-borrowing", 0, borrows=True, preemptor=True),
     _candidate("not-preemptor-nominal", 0), False, False),
    ("both are preemptors, feature enabled",
     _candidate("preemptor-borrowing", 0, borrows=True, preemptor=True),
     _candidate("preemptor-nominal", 0, preemptor=True), True, False),
]


@pytest.mark.parametrize(("name", "a", "b", "preemptors_first", "want"), COMPARER_CASES,
                         ids=[c[0] for c in COMPARER_CASES])
def test_entry_comparer_less(name: str, a: FairCandidate, b: FairCandidate,
                             preemptors_first: bool, want: bool) -> None:
    """TestEntryComparerLess: kubernetes-sigs/kueue ff69552e, FILE, case ``name``."""
    assert fair_less(a, b, prioritize_preemptors=preemptors_first) is want
