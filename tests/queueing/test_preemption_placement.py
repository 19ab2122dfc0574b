"""Preemption that frees room where the preemptor lands (``KueueDRADeviceFeasibility``).

Two H100 nodes (8 GPUs each, NVIDIA DRA driver slices from ``dralab.fleet``), one
ClusterQueue with 16 GPUs of quota and ``withinClusterQueue: LowerPriority``. Low-
priority one-pod jobs (their claims made from templates) are admitted first, each
pinned to a node by its node selector; then a high-priority job arrives. Kueue's
quota order (same priority and admission time: by key) picks victims by quota only;
with the gate, dralab picks victims whose removal (pods and devices gone) lets the
whole pod set place, on the nodes where it lands. Run through ``dralab admit`` in
two steps, as a user would: admit the low jobs, feed their Workloads back with the
preemptor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from dralab.api.io import dumps, to_list
from dralab.cli.main import cli
from dralab.fleet import generate, parse_fleet

NS = "default"
GPU_CLASS = "gpu.nvidia.com"


def _fleet() -> list[Any]:
    fleet = parse_fleet({
        "apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "metadata": {"name": "two"},
        "spec": {"pools": [{"name": "h100", "count": 2, "namePrefix": "h100-", "cpu": "192",
                            "memory": "2Ti", "gpu": {"model": "h100-80gb-sxm", "count": 8}}]}},
        "fleet.yaml")
    return list(generate(fleet, 1).objects())


def _setup(gate: bool) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = [
        {"apiVersion": "config.kueue.x-k8s.io/v1beta1", "kind": "Configuration",
         "featureGates": {"KueueDRADeviceFeasibility": gate},
         "resources": {"deviceClassMappings": [
             {"name": "nvidia.com/gpu", "deviceClassNames": [GPU_CLASS]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
         "metadata": {"name": "h100"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
         "metadata": {"name": "gpus"},
         "spec": {"namespaceSelector": {},
                  "preemption": {"withinClusterQueue": "LowerPriority"},
                  "resourceGroups": [{"coveredResources": ["cpu", "nvidia.com/gpu"],
                                      "flavors": [{"name": "h100", "resources": [
                                          {"name": "cpu", "nominalQuota": "100"},
                                          {"name": "nvidia.com/gpu", "nominalQuota": "16"}]}]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
         "metadata": {"name": "training", "namespace": NS}, "spec": {"clusterQueue": "gpus"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "WorkloadPriorityClass",
         "metadata": {"name": "low"}, "value": 10},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "WorkloadPriorityClass",
         "metadata": {"name": "high"}, "value": 1000},
    ]
    for gpus in (4, 8):
        docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                     "metadata": {"name": f"gpus-{gpus}", "namespace": NS},
                     "spec": {"spec": {"devices": {"requests": [
                         {"name": "gpus", "exactly": {"deviceClassName": GPU_CLASS,
                                                      "count": gpus}}]}}}})
    return docs


def _job(name: str, priority: str, gpus: int, pods: int = 1, node: str | None = None,
         stamp: str = "2026-12-01T00:00:00Z") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "example.com/train:1",
                        "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpus"}]}}],
        "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": f"gpus-{gpus}"}]}
    if node is not None:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}",
                         "creationTimestamp": stamp,
                         "labels": {"kueue.x-k8s.io/queue-name": "training",
                                    "kueue.x-k8s.io/priority-class": priority}},
            "spec": {"parallelism": pods, "completions": pods, "suspend": True,
                     "template": {"spec": spec}}}


def _admit(tmp_path: Path, name: str, docs: list[dict[str, Any]], *extra: Path
           ) -> tuple[int, dict[str, dict[str, Any]], Path]:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(dumps(to_list(_fleet())))
    args = ["admit", "-f", str(path), "-f", str(fleet)]
    for more in extra:
        args += ["-f", str(more)]
    result = CliRunner().invoke(cli, args)
    assert result.stderr == "", result.stderr
    out = tmp_path / f"{name}-out.yaml"
    out.write_text(result.stdout)
    items = yaml.safe_load(result.stdout)["items"]
    workloads = {w["spec"]["podSets"][0]["template"] and
                 w["metadata"]["ownerReferences"][0]["name"]: w
                 for w in items if w["kind"] == "Workload"}
    return result.exit_code, workloads, out


def _victims(workloads: dict[str, dict[str, Any]]) -> list[str]:
    return sorted(name for name, w in workloads.items()
                  if any(c["type"] == "Preempted" and c["status"] == "True"
                         for c in w["status"]["conditions"]))


LOW_SPREAD = [("a", 4, "h100-01"), ("b", 4, "h100-02"), ("c", 4, "h100-01"), ("d", 4, "h100-02")]
LOW_BLOCKED = [("a", 4, "h100-01"), ("b", 4, "h100-02")]


@pytest.mark.parametrize(("low", "pinned_high", "gpus", "pods", "gate", "victims", "admitted"), [
    # Quota order takes a and b (one per node): 4 + 4 free GPUs, no node with 8.
    (LOW_SPREAD, [], 8, 1, False, ["a", "b"], True),
    # The gate: victims on one node (a and c on h100-01), the preemptor lands there.
    (LOW_SPREAD, [], 8, 1, True, ["a", "c"], True),
    # Two 4-GPU pods place on any two free halves: Kueue's own choice stands.
    (LOW_SPREAD, [], 4, 2, True, ["a", "b"], True),
    # High-priority pods hold half of each node: no allowed victim set places 8 GPUs.
    (LOW_BLOCKED, [("h1", 4, "h100-01"), ("h2", 4, "h100-02")], 8, 1, True, [], False),
])
def test_victims_are_chosen_where_the_preemptor_lands(
        tmp_path: Path, low: list[tuple[str, int, str]], pinned_high: list[tuple[str, int, str]],
        gpus: int, pods: int, gate: bool, victims: list[str], admitted: bool) -> None:
    setup = _setup(gate)
    jobs = [_job(n, "low", g, node=node) for n, g, node in low] + \
        [_job(n, "high", g, node=node) for n, g, node in pinned_high]
    code, first, step1 = _admit(tmp_path, "step1", setup + jobs)
    assert code == 0 and all("admission" in w["status"] for w in first.values())
    admitted_workloads = [w for w in yaml.safe_load(step1.read_text())["items"]
                          if w["kind"] == "Workload"]
    (tmp_path / "admitted.yaml").write_text(yaml.safe_dump(
        {"apiVersion": "v1", "kind": "List", "items": admitted_workloads}))
    preemptor = _job("urgent", "high", gpus, pods=pods, stamp="2026-12-01T01:00:00Z")
    code, second, _ = _admit(tmp_path, "step2", setup + jobs + [preemptor],
                             tmp_path / "admitted.yaml")
    assert _victims(second) == victims
    assert ("admission" in second["urgent"]["status"]) is admitted
    if not admitted:
        [pending] = [c for c in second["urgent"]["status"]["conditions"]
                     if c["type"] == "QuotaReserved"]
        assert pending["message"].startswith(
            "preemption would free the quota but no allowed set of victims leaves room on "
            "the nodes (Kueue's choice, 2 workload(s), leaves: pod set main cannot be placed")
        assert code == 1
