"""``dralab admit`` with Kueue's preemption gates (ConcurrentAdmission or
MultiKueueOrchestratedPreemption, alpha, off by default): a Workload with a closed gate
in ``spec.preemptionGates`` (not Open in ``status.preemptionGates``) that needs to
preempt evicts nothing and waits -- QuotaReserved=False, reason AdmissionGated, and
BlockedOnPreemptionGates=True, reason PreemptionGated, both "Workload requires
preemption, but it's gated". Mirrors kubernetes-sigs/kueue ff69552e,
pkg/scheduler/scheduler.go (markPreemptionGated) and scheduler_test.go TestSchedule
"block preemptions and signal `BlockedOnPreemptionGates` when a preemption gate is
present"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kueueinputs import conditions, default_queue, run_admit

_INPUT = default_queue("2", "{withinClusterQueue: LowerPriority}") + """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: low, namespace: ns}
spec:
  queueName: q
  priority: -1
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}
status:
  admission:
    clusterQueue: cq
    podSetAssignments:
    - {name: main, flavors: {cpu: default}, resourceUsage: {cpu: "2"}, count: 1}
  conditions:
  - {type: QuotaReserved, status: "True", reason: QuotaReserved,
     message: Quota reserved in ClusterQueue cq, lastTransitionTime: "2026-01-01T00:00:00Z"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: preemptor, namespace: ns}
spec:
  queueName: q
  priority: 0
  preemptionGates: [{name: gate}]
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}
"""

_CONFIG = """
---
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
featureGates: {%s: true}
"""

_OPEN = """
status:
  preemptionGates: [{name: gate, position: Open, lastTransitionTime: "2026-01-01T00:00:00Z"}]
"""


def _admit(tmp_path: Path, text: str) -> dict[str, Any]:
    run = run_admit(tmp_path, text)
    assert run.exit_code in (0, 1), run.output
    return run.by_name(None)


@pytest.mark.parametrize("gate", ["MultiKueueOrchestratedPreemption", "ConcurrentAdmission"])
def test_closed_gate_blocks_preemption(tmp_path: Path, gate: str) -> None:
    items = _admit(tmp_path, _INPUT + _CONFIG % gate)
    gated = "Workload requires preemption, but it's gated"
    preemptor = conditions(items["preemptor"])
    assert preemptor["QuotaReserved"] == ("False", "AdmissionGated", gated)
    assert preemptor["BlockedOnPreemptionGates"] == ("True", "PreemptionGated", gated)
    assert "admission" in items["low"]["status"]  # not preempted
    assert "Evicted" not in conditions(items["low"])


def test_gate_off_or_open_preempts(tmp_path: Path) -> None:
    # the feature off (its default): the gate is ignored
    items = _admit(tmp_path, _INPUT)
    assert "admission" in items["preemptor"]["status"]
    assert conditions(items["low"])["Evicted"][1] == "Preempted"
    # the gate Open in status.preemptionGates: preemption goes ahead
    items = _admit(tmp_path, _INPUT + _OPEN + _CONFIG % "MultiKueueOrchestratedPreemption")
    assert "admission" in items["preemptor"]["status"]
    assert "BlockedOnPreemptionGates" not in conditions(items["preemptor"])
