"""``dralab admit`` with a Kueue Configuration's ``resources.transformations``: quota is
asked what the transformations make of the pods' requests (Retain keeps the input,
Replace drops it; outputs per unit of input, ``multiplyBy`` scaling them), as
kubernetes-sigs/kueue ff69552e pkg/workload/workload.go applyResourceTransformations
does; the example is Kueue's own cpu -> cpu_credits setup (a credits flavor in a second
resource group capping CPU across flavors)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dralab.queueing.transformations import ResourceTransformation, apply_transformations
from kueueinputs import run_admit

_QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: credits}
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
  - coveredResources: [cpu_credits]
    flavors:
    - name: credits
      resources: [{name: cpu_credits, nominalQuota: "%s"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: foo, namespace: ns}
spec:
  queueName: q
  podSets:
  - name: one
    count: 2
    template:
      spec:
        containers:
        - {name: c, resources: {requests: {cpu: "1500m"}}}
"""

_CONFIG = """
---
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  transformations:
  - input: cpu
    strategy: %s
    outputs: {cpu_credits: "1"}
"""


def _admit(tmp_path: Path, text: str) -> tuple[int, str, dict[str, Any]]:
    run = run_admit(tmp_path, text)
    if run.exit_code == 2:
        return 2, run.output, {}
    return run.exit_code, run.output, next(iter(run.by_name().values()))


@pytest.mark.parametrize(("strategy", "usage"), [
    ("Retain", {"cpu": "3", "cpu_credits": "4"}),   # 1.5 credits a pod, whole units: 2
    ("Replace", {"cpu_credits": "4"}),
])
def test_quota_is_asked_the_transformed_requests(tmp_path: Path, strategy: str,
                                                  usage: dict[str, str]) -> None:
    code, _, workload = _admit(tmp_path, _QUEUES % "4" + _CONFIG % strategy)
    assert code == 0
    (assigned,) = workload["status"]["admission"]["podSetAssignments"]
    assert assigned["resourceUsage"] == usage


def test_not_enough_credits(tmp_path: Path) -> None:
    code, _, workload = _admit(tmp_path, _QUEUES % "3" + _CONFIG % "Retain")
    assert code == 1
    assert "admission" not in workload["status"]
    reserved = next(c for c in workload["status"]["conditions"] if c["type"] == "QuotaReserved")
    assert "insufficient quota for cpu_credits in flavor credits" in reserved["message"]


def test_without_transformations_credits_are_not_asked(tmp_path: Path) -> None:
    code, _, workload = _admit(tmp_path, _QUEUES % "0")
    assert code == 0
    (assigned,) = workload["status"]["admission"]["podSetAssignments"]
    assert assigned["resourceUsage"] == {"cpu": "3"}


def test_duplicate_input_is_refused(tmp_path: Path) -> None:
    duplicate = (_CONFIG % "Retain") + "  - {input: cpu, outputs: {cpu_credits: \"2\"}}\n"
    code, output, _ = _admit(tmp_path, _QUEUES % "4" + duplicate)
    assert code == 2
    assert 'resources.transformations[1].input: Duplicate value: "cpu"' in output
    assert "Traceback" not in output


def test_unknown_strategy_is_refused(tmp_path: Path) -> None:
    code, output, _ = _admit(tmp_path, _QUEUES % "4" + _CONFIG % "Keep")
    assert code == 2
    assert "Traceback" not in output


def test_multiply_by_and_negative_outputs() -> None:
    """multiplyBy scales the outputs, not the retained input; a negative output cancels
    other outputs of its name but not below zero."""
    gpu_hours = ResourceTransformation("example.com/gpu", {"gpu-cost": 2000},
                                       multiply_by="example.com/hours")
    assert apply_transformations({"example.com/gpu": 2000, "example.com/hours": 3000},
                                 (gpu_hours,)) == \
        {"example.com/gpu": 2000, "example.com/hours": 3000, "gpu-cost": 12000}
    allowance = (ResourceTransformation("cpu", {"credits": 1000}, "Replace"),
                 ResourceTransformation("memory", {"credits": -1000}, "Retain"))
    assert apply_transformations({"cpu": 1000, "memory": 5000}, allowance) == \
        {"memory": 5000, "credits": 0}
