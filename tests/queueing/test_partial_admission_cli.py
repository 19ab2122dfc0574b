"""``dralab admit`` with Kueue's partial admission (PartialAdmission, beta, on by default)
and reclaimable pods (ReclaimablePods, beta, on by default): a Workload's
``spec.podSets[].minCount`` (a batch Job's ``kueue.x-k8s.io/job-min-parallelism``) lets it
be admitted with fewer pods, shown in ``status.admission.podSetAssignments[].count``;
``status.reclaimablePods`` are not charged. Each case mirrors an upstream behaviour:
kubernetes-sigs/kueue ff69552e, pkg/scheduler/scheduler.go getInitialAssignments,
pkg/controller/jobs/job/job_controller.go minPodsCount, pkg/workload/workload.go
podSetsCountsAfterReclaim."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kueueinputs import default_queue, run_admit

_QUEUES = default_queue("%s")

_WORKLOAD = """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: wl, namespace: ns}
spec:
  queueName: q
  podSets:
  - name: main
    count: 10
    %s
    template:
      spec:
        containers:
        - {name: c, resources: {requests: {cpu: "1"}}}
%s
"""

_JOB = """
---
apiVersion: batch/v1
kind: Job
metadata:
  name: job
  namespace: ns
  labels: {kueue.x-k8s.io/queue-name: q}
  annotations: {kueue.x-k8s.io/job-min-parallelism: "3"}
spec:
  parallelism: 8
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: busybox, resources: {requests: {cpu: "1"}}}
"""

_GATE_OFF = """
---
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
featureGates: {%s: false}
"""


def _admit(tmp_path: Path, text: str) -> tuple[int, list[dict[str, Any]]]:
    run = run_admit(tmp_path, text)
    assert run.exit_code in (0, 1), run.output
    return run.exit_code, list(run.by_name().values())


def test_reduced_count_is_written(tmp_path: Path) -> None:
    code, (workload,) = _admit(tmp_path, _QUEUES % "6" + _WORKLOAD % ("minCount: 4", ""))
    assert code == 0
    (assigned,) = workload["status"]["admission"]["podSetAssignments"]
    assert assigned["count"] == 6
    assert assigned["resourceUsage"] == {"cpu": "6"}
    assert workload["spec"]["podSets"][0]["minCount"] == 4  # kept as read


def test_below_min_count_stays_pending(tmp_path: Path) -> None:
    code, (workload,) = _admit(tmp_path, _QUEUES % "3" + _WORKLOAD % ("minCount: 4", ""))
    assert code == 1
    reserved = next(c for c in workload["status"]["conditions"] if c["type"] == "QuotaReserved")
    assert reserved["status"] == "False"
    # The whole assignment's message, as Kueue keeps it when no reduced count fits.
    assert "current podset request (10) > maximum capacity (3)" in reserved["message"]


def test_gate_off_admits_whole_or_nothing(tmp_path: Path) -> None:
    code, (workload,) = _admit(tmp_path, _QUEUES % "6" + _WORKLOAD % ("minCount: 4", "")
                               + _GATE_OFF % "PartialAdmission")
    assert code == 1
    assert "admission" not in workload["status"]


def test_job_min_parallelism_annotation(tmp_path: Path) -> None:
    code, (workload,) = _admit(tmp_path, _QUEUES % "5" + _JOB)
    assert code == 0
    assert workload["spec"]["podSets"][0]["minCount"] == 3
    assert workload["status"]["admission"]["podSetAssignments"][0]["count"] == 5


@pytest.mark.parametrize(("gates", "want_admitted"), [("", True), ("ReclaimablePods", False)])
def test_reclaimable_pods_are_not_charged(tmp_path: Path, gates: str,
                                          want_admitted: bool) -> None:
    status = "status:\n  reclaimablePods: [{name: main, count: 4}]"
    text = _QUEUES % "6" + _WORKLOAD % ("", status) + (_GATE_OFF % gates if gates else "")
    code, (workload,) = _admit(tmp_path, text)
    assert (code == 0) is want_admitted
    if want_admitted:
        (assigned,) = workload["status"]["admission"]["podSetAssignments"]
        assert (assigned["count"], assigned["resourceUsage"]) == (6, {"cpu": "6"})
    assert workload["status"]["reclaimablePods"] == [{"name": "main", "count": 4}]


_ADMITTED = """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: running, namespace: ns}
spec:
  queueName: q
  podSets:
  - name: main
    count: 4
    template:
      spec:
        containers:
        - {name: c, resources: {requests: {cpu: "1"}}}
status:
  admission:
    clusterQueue: cq
    podSetAssignments:
    - {name: main, flavors: {cpu: default}, resourceUsage: {cpu: "4"}, count: 4}
  conditions:
  - {type: QuotaReserved, status: "True", reason: QuotaReserved,
     message: Quota reserved in ClusterQueue cq, lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: Admitted, status: "True", reason: Admitted, message: The workload is admitted,
     lastTransitionTime: "2026-01-01T00:00:00Z"}
  %s
"""


@pytest.mark.parametrize(("gates", "want_admitted"), [("", True), ("ReclaimablePods", False)])
def test_admitted_reclaimable_pods_free_their_quota(tmp_path: Path, gates: str,
                                                    want_admitted: bool) -> None:
    """An admitted workload with 3 of its 4 pods reclaimable charges 1 cpu (Kueue's
    totalRequestsFromAdmission), so a new 5-pod workload fits the 6-cpu queue; its own
    admission is written back as read."""
    text = (_QUEUES % "6" + _ADMITTED % "reclaimablePods: [{name: main, count: 3}]"
            + (_WORKLOAD % ("", "")).replace("count: 10", "count: 5")
            + (_GATE_OFF % gates if gates else ""))
    code, workloads = _admit(tmp_path, text)
    by_name = {w["metadata"]["name"]: w for w in workloads}
    assert (code == 0) is want_admitted
    assert ("admission" in by_name["wl"]["status"]) is want_admitted
    (kept,) = by_name["running"]["status"]["admission"]["podSetAssignments"]
    assert (kept["count"], kept["resourceUsage"]) == (4, {"cpu": "4"})
