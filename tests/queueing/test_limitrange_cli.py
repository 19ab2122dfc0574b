"""``dralab admit`` with LimitRanges and container limits, as Kueue (ff69552e) reads a
Workload's pod templates: the namespace's LimitRange defaults fill what the containers
leave out (AdjustResources), and a workload whose requests exceed its limits or fall
outside the LimitRanges stays pending, QuotaReserved=False with reason Misconfigured and
ValidateAdmissibility's message. Mirrors pkg/scheduler/scheduler_test.go TestSchedule
"container does not satisfy limitRange constraints" / "container resource requests exceed
limits" and pkg/workload/resources.go."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.queueing.limitrange import (
    adjusted,
    limit_range_summaries,
    validation_errors,
    validation_message,
)
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
  - coveredResources: [cpu, memory]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: "20"}, {name: memory, nominalQuota: 10Gi}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: cq}
"""

_LIMIT_RANGE = """
---
apiVersion: v1
kind: LimitRange
metadata: {name: lr, namespace: ns}
spec:
  limits:
  - type: Container
    max: {cpu: "%s"}
    defaultRequest: {memory: 1Gi}
"""


def _workload(name: str, count: int, resources: str) -> str:
    return f"""
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: {name}, namespace: ns}}
spec:
  queueName: q
  podSets:
  - name: main
    count: {count}
    template:
      spec:
        containers:
        - {{name: c, resources: {resources}}}
"""


def _admit(tmp_path: Path, text: str) -> tuple[int, dict[str, Any], str]:
    run = run_admit(tmp_path, text)
    return run.exit_code, run.by_name(None), run.stderr


def _quota_reserved(item: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in item["status"]["conditions"] if c["type"] == "QuotaReserved")


def test_limit_range_max_refuses_and_default_request_is_charged(tmp_path: Path) -> None:
    code, items, err = _admit(tmp_path, _QUEUES + _LIMIT_RANGE % "2"
                              + _workload("big", 1, '{requests: {cpu: "3"}}')
                              + _workload("small", 2, '{requests: {cpu: "1"}}'))
    assert code == 1, err
    assert "LimitRange" not in err  # a kind admit reads: no "not used" warning
    big = _quota_reserved(items["big"])
    assert (big["status"], big["reason"]) == ("False", "Misconfigured")
    assert big["message"] == (
        "resources didn't satisfy LimitRange constraints: spec.podSets[0].template.spec."
        'containers[0]: Invalid value: ["cpu"]: requests must not be above the limitRange max')
    # the LimitRange's defaultRequest fills the memory the container leaves out
    usage = items["small"]["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]
    assert usage == {"cpu": "2", "memory": "2Gi"}


def test_requests_above_limits_refused(tmp_path: Path) -> None:
    code, items, err = _admit(tmp_path, _QUEUES + _workload(
        "wl", 1, '{requests: {cpu: "200m", memory: 2Gi}, limits: {cpu: "100m", memory: 1Gi}}'))
    assert code == 1, err
    condition = _quota_reserved(items["wl"])
    assert condition["reason"] == "Misconfigured"
    assert condition["message"] == (
        "resources validation failed: spec.podSets[0].template.spec.containers[0]: "
        'Invalid value: ["cpu","memory"]: requests must not exceed its limits')


def test_bad_limit_range_quantity_is_one_line_exit_2(tmp_path: Path) -> None:
    code, _, err = _admit(tmp_path, _QUEUES + _LIMIT_RANGE % "2x"
                          + _workload("wl", 1, '{requests: {cpu: "1"}}'))
    assert code == 2
    assert err.startswith("error: LimitRange ns/lr: spec.limits[0].max.cpu: ")
    assert len(err.strip().splitlines()) == 1


def _pod(resources: dict[str, Any]) -> Pod:
    pod = decode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
                  "spec": {"containers": [{"name": "a", "resources": resources},
                                          {"name": "b", "resources": resources}]}})
    assert isinstance(pod, Pod)
    return pod


def _limit_range(name: str, kind: str, **values: dict[str, str]) -> Any:
    return decode({"apiVersion": "v1", "kind": "LimitRange",
                   "metadata": {"name": name, "namespace": "ns"},
                   "spec": {"limits": [{"type": kind, **values}]}})


def test_summary_keeps_lowest_max_highest_min_and_aggregates() -> None:
    """limitrange.Summarize over two LimitRanges, a Pod-type range on the total, and
    k8s' aggregate text for several errors (each once, in [..])."""
    summary = limit_range_summaries([
        _limit_range("a", "Container", max={"cpu": "4"}, min={"cpu": "100m"}),
        _limit_range("b", "Container", max={"cpu": "1"}, min={"cpu": "10m"}),
        _limit_range("c", "Pod", max={"cpu": "1500m"})])["ns"]
    spec = adjusted(_pod({"requests": {"cpu": "50m"}}).spec, summary)
    assert validation_message([validation_errors(spec, 0, summary)]) == (
        "resources didn't satisfy LimitRange constraints: ["
        'spec.podSets[0].template.spec.containers[0]: Invalid value: ["cpu"]: '
        "requests must not be below the limitRange min, "
        'spec.podSets[0].template.spec.containers[1]: Invalid value: ["cpu"]: '
        "requests must not be below the limitRange min]")
    spec = adjusted(_pod({"requests": {"cpu": "900m"}}).spec, summary)
    assert validation_message([validation_errors(spec, 0, summary)]) == (
        "resources didn't satisfy LimitRange constraints: spec.podSets[0].template.spec: "
        'Invalid value: ["cpu"]: requests must not be above the limitRange max')
