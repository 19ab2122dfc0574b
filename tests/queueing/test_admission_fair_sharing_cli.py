"""``dralab admit`` with Kueue's Admission Fair Sharing (the Configuration's
``admissionFairSharing``, a ClusterQueue's ``admissionScope.admissionMode:
UsageBasedAdmissionFairSharing``, the LocalQueues' weights and
``status.fairSharing.admissionFairSharingStatus``): the workload of the LocalQueue with
the lower usage goes first, and preemption takes the higher usage's first. Mirrors
kubernetes-sigs/kueue ff69552e, pkg/cache/queue/cluster_queue.go (queueOrderingFunc),
pkg/scheduler/preemption/common/ordering.go (CandidatesOrdering) and
pkg/config/validation.go (validateAdmissionFairSharing)."""

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
  admissionScope: {admissionMode: %(mode)s}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: "2"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: a, namespace: ns}
spec: {clusterQueue: cq, fairSharing: {weight: "%(weight)s"}}
status:
  fairSharing:
    weightedShare: 0
    admissionFairSharingStatus:
      consumedResources: {cpu: "8"}
      lastUpdate: "2026-01-01T00:00:00Z"
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: b, namespace: ns}
spec: {clusterQueue: cq}
status:
  fairSharing:
    weightedShare: 0
    admissionFairSharingStatus:
      consumedResources: {cpu: "1"}
      lastUpdate: "2026-01-01T00:00:00Z"
"""

_PENDING = """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: wa, namespace: ns, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  queueName: a
  podSets:
  - {name: main, count: 1,
     template: {spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: wb, namespace: ns, creationTimestamp: "2026-01-01T00:00:01Z"}
spec:
  queueName: b
  podSets:
  - {name: main, count: 1,
     template: {spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}}
"""

_ADMITTED = """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: %(name)s, namespace: ns, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  queueName: %(queue)s
  priority: %(priority)s
  podSets:
  - {name: main, count: 1,
     template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}}
status:
  admission:
    clusterQueue: cq
    podSetAssignments:
    - {name: main, flavors: {cpu: default}, resourceUsage: {cpu: "1"}, count: 1}
  conditions:
  - {type: QuotaReserved, status: "True", reason: QuotaReserved,
     message: Quota reserved in ClusterQueue cq, lastTransitionTime: "2026-01-01T00:00:00Z"}
"""

_PREEMPTOR = """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: preemptor, namespace: ns, creationTimestamp: "2026-01-01T00:00:01Z"}
spec:
  queueName: b
  priority: 10
  podSets:
  - {name: main, count: 1,
     template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}}
"""

_CONFIG = """
---
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
admissionFairSharing:
  usageHalfLifeTime: %(half_life)s
  usageSamplingInterval: 5m
  resourceWeights: {cpu: %(cpu_weight)s}
featureGates: {AdmissionFairSharing: %(gate)s}
"""


def _text(mode: str = "UsageBasedAdmissionFairSharing", weight: str = "1",
          config: bool = True, gate: str = "true", half_life: str = "168h",
          cpu_weight: str = "1", workloads: str = _PENDING) -> str:
    text = _QUEUES % {"mode": mode, "weight": weight} + workloads
    if config:
        text += _CONFIG % {"half_life": half_life, "gate": gate, "cpu_weight": cpu_weight}
    return text


def _admitted(tmp_path: Path, text: str, *more: str) -> set[str]:
    run = run_admit(tmp_path, text, *more)
    assert run.exit_code in (0, 1), run.output
    return {name for name, w in run.by_name().items() if "admission" in w.get("status", {})}


def test_lower_usage_local_queue_first(tmp_path: Path) -> None:
    # lq a used 8 CPUs, lq b 1: wb is admitted though wa is older
    assert _admitted(tmp_path, _text()) == {"wb"}


@pytest.mark.parametrize("kwargs", [
    {"config": False}, {"gate": "false"}, {"mode": "NoAdmissionFairSharing"},
    {"weight": "10"},  # 8 / 10 < 1: lq a is the lower usage now
], ids=["no configuration", "gate off", "no admission fair sharing", "weight"])
def test_older_first_otherwise(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    assert _admitted(tmp_path, _text(**kwargs)) == {"wa"}


def test_preemption_takes_the_higher_usage_first(tmp_path: Path) -> None:
    workloads = (_ADMITTED % {"name": "high-usage", "queue": "a", "priority": 5}
                 + _ADMITTED % {"name": "low-usage", "queue": "b", "priority": 1}
                 + _PREEMPTOR)
    # Kueue's CandidatesOrdering: LocalQueue usage before priority (one cycle: in the
    # next, the evicted high-usage, priority 5, takes its place back from low-usage)
    assert _admitted(tmp_path, _text(workloads=workloads), "--cycles", "1") == \
        {"low-usage", "preemptor"}
    # without Admission Fair Sharing, the lower priority goes
    assert _admitted(tmp_path, _text(workloads=workloads, config=False), "--cycles", "1") == \
        {"high-usage", "preemptor"}


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"half_life": "-1h"}, 'admissionFairSharing.usageHalfLifeTime: Invalid value: "-1h": '
                           "must be greater than or equal to 0"),
    ({"half_life": "a week"}, "admissionFairSharing.usageHalfLifeTime: Invalid value: "
                              '"a week": time: invalid duration "a week"'),
    ({"cpu_weight": "-1"}, "admissionFairSharing.resourceWeights[cpu]: Invalid value: -1: "
                           "must be greater than or equal to 0"),
    ({"mode": "Sometimes"}, 'spec.admissionScope.admissionMode: Unsupported value: '
                            '"Sometimes": supported values: "UsageBasedAdmissionFairSharing", '
                            '"NoAdmissionFairSharing"'),
], ids=["negative half-life", "bad duration", "negative weight", "bad mode"])
def test_bad_input(tmp_path: Path, kwargs: dict[str, Any], error: str) -> None:
    result = run_admit(tmp_path, _text(**kwargs))
    assert result.exit_code == 2
    assert error in result.output
    assert "Traceback" not in result.output
