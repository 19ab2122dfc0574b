"""``dralab admit`` with Kueue's workload slices (ElasticJobsViaWorkloadSlices, beta, on by
default): a Workload annotated ``kueue.x-k8s.io/workload-slice-replacement-for: ns/old``
replaces the admitted slice ``old`` of its ClusterQueue -- it asks the quota only for its
increase, on the old slice's flavors, and when admitted the old slice finishes
(Finished=True, WorkloadSliceReplaced) keeping its admission. Mirrors kubernetes-sigs/kueue
ff69552e, pkg/scheduler/scheduler_test.go TestSchedule "workload-slice fits in single
clusterQueue" (10 pods scaled to 15 in a ClusterQueue of 20 CPU) and
pkg/scheduler/scheduler.go replaceWorkloadSlice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kueueinputs import run_admit

_QUEUES = """
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
      resources: [{name: cpu, nominalQuota: "20"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: cq}
"""

_OLD = """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: foo-1, namespace: ns}
spec:
  queueName: q
  podSets:
  - name: one
    count: 10
    template:
      spec:
        containers:
        - {name: c, resources: {requests: {cpu: "1"}}}
status:
  admission:
    clusterQueue: cq
    podSetAssignments:
    - {name: one, flavors: {cpu: default}, resourceUsage: {cpu: "10"}, count: 10}
  conditions:
  - {type: QuotaReserved, status: "True", reason: QuotaReserved,
     message: Quota reserved in ClusterQueue cq, lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: Admitted, status: "True", reason: Admitted, message: The workload is admitted,
     lastTransitionTime: "2026-01-01T00:00:00Z"}
"""

_NEW = """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: foo-2
  namespace: ns
  annotations: {kueue.x-k8s.io/workload-slice-replacement-for: ns/foo-1}
spec:
  queueName: q
  podSets:
  - name: one
    count: 15
    template:
      spec:
        containers:
        - {name: c, resources: {requests: {cpu: "1"}}}
"""

_GATE_OFF = """
---
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
featureGates: {ElasticJobsViaWorkloadSlices: false}
"""


def _admit(tmp_path: Path, text: str) -> tuple[int, dict[str, dict[str, Any]]]:
    run = run_admit(tmp_path, text)
    assert run.exit_code in (0, 1), run.output
    return run.exit_code, run.by_name()


def _condition(workload: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in workload["status"]["conditions"] if c["type"] == kind), None)


def test_scaled_up_slice_replaces_the_old_one(tmp_path: Path) -> None:
    code, workloads = _admit(tmp_path, _QUEUES + _OLD + _NEW)
    assert code == 0
    new, old = workloads["foo-2"], workloads["foo-1"]
    (assigned,) = new["status"]["admission"]["podSetAssignments"]
    assert (assigned["count"], assigned["flavors"], assigned["resourceUsage"]) == \
        (15, {"cpu": "default"}, {"cpu": "15"})
    finished = _condition(old, "Finished")
    assert finished is not None
    assert (finished["status"], finished["reason"]) == ("True", "WorkloadSliceReplaced")
    assert finished["message"] == ("Replaced to accommodate a workload (UID: , JobUID: ) due "
                                   "to workload slice aggregation")
    # the old slice keeps its admission, and is neither evicted nor requeued
    assert old["status"]["admission"]["podSetAssignments"][0]["count"] == 10
    assert _condition(old, "Evicted") is None


@pytest.mark.parametrize("gate_off", [False, True], ids=["gate on", "gate off"])
def test_a_slice_is_asked_only_its_increase(tmp_path: Path, gate_off: bool) -> None:
    """15 pods next to the old 10 in 20 CPU: only the increase (5) fits; with the gate off
    the annotation is ignored and the whole 15 does not."""
    code, workloads = _admit(tmp_path, _QUEUES + _OLD + _NEW + (_GATE_OFF if gate_off else ""))
    assert ("admission" in workloads["foo-2"]["status"]) is not gate_off
    assert code == (1 if gate_off else 0)
