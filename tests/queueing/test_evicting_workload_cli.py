"""``dralab admit`` with a Workload whose eviction is in progress: Evicted=True while
QuotaReserved=True (Kueue unsets the reservation only once the job has stopped). As in
Kueue (ff69552e) it holds its quota in the first cycle, where preemption takes it
first (CandidatesOrdering's IsEvicted) without evicting it again ("preemption ongoing",
IssuePreemptions writes it nothing new); at the next cycle its job has stopped and it is
requeued. Mirrors pkg/scheduler/preemption TestHierarchicalPreemptions "prefer to
preempt evicted workloads"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kueueinputs import conditions, default_queue, run_admit

_QUEUES = default_queue("2", "{withinClusterQueue: LowerPriority}")

_RESERVED = """
  - {type: QuotaReserved, status: "True", reason: QuotaReserved,
     message: Quota reserved in ClusterQueue cq, lastTransitionTime: "2026-01-01T00:00:01Z"}
"""
_EVICTED = """
  - {type: Evicted, status: "True", reason: Preempted, message: Preempted earlier,
     lastTransitionTime: "2026-01-01T00:00:05Z"}
"""


def _workload(name: str, priority: int, conditions: str = "") -> str:
    admission = """
  admission:
    clusterQueue: cq
    podSetAssignments:
    - {name: main, flavors: {cpu: default}, resourceUsage: {cpu: "1"}, count: 1}
  conditions:""" + conditions if conditions else ""
    return f"""
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: {name}, namespace: ns, creationTimestamp: "2026-01-01T00:00:00Z"}}
spec:
  queueName: q
  priority: {priority}
  podSets:
  - name: main
    count: 1
    template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}}}
status:{admission or " {}"}
"""


def _admit(tmp_path: Path, text: str, *args: str) -> dict[str, Any]:
    run = run_admit(tmp_path, text, *args)
    assert run.exit_code in (0, 1), run.output
    return run.by_name(None)


def test_evicting_workload_holds_its_quota_in_the_first_cycle(tmp_path: Path) -> None:
    """The evicting workload outranks the preemptor, so it is no candidate: its quota
    still held, the preemptor evicts the low-priority one (Kueue's answer; read as
    already gone, it would have left room and no one evicted); then, its job stopped,
    it is requeued and takes its room back."""
    items = _admit(tmp_path, _QUEUES + _workload("evicting", 20, _RESERVED + _EVICTED)
                   + _workload("low", -5, _RESERVED) + _workload("high", 10))
    assert "admission" in items["high"]["status"]
    assert conditions(items["low"])["Preempted"][1] == "InClusterQueue"
    # gone once its job stopped, requeued, and admitted again in the room it left
    assert "admission" in items["evicting"]["status"]
    assert conditions(items["evicting"])["Evicted"][0] == "False"
    assert "admission" not in items["low"]["status"]


def test_evicting_target_is_not_evicted_again(tmp_path: Path) -> None:
    """The evicting workload is the preemptor's first target, before another of the
    same priority: counted, not evicted again (no Preempted condition, its Evicted as
    read); the other stays (the requeued one may not preempt its equal)."""
    items = _admit(tmp_path, _QUEUES + _workload("evicting", -1, _RESERVED + _EVICTED)
                   + _workload("low", -1, _RESERVED) + _workload("high", 10))
    assert "admission" in items["high"]["status"]
    assert "admission" in items["low"]["status"]
    assert "Preempted" not in conditions(items["evicting"])
    assert conditions(items["evicting"])["Evicted"] == ("True", "Preempted", "Preempted earlier")


def test_one_cycle_leaves_an_untaken_evicting_workload_as_read(tmp_path: Path) -> None:
    items = _admit(tmp_path, _QUEUES + _workload("evicting", 20, _RESERVED + _EVICTED),
                   "--cycles", "1")
    status = items["evicting"]["status"]
    assert status["admission"]["clusterQueue"] == "cq"
    assert conditions(items["evicting"]) == {
        "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
        "Evicted": ("True", "Preempted", "Preempted earlier")}
