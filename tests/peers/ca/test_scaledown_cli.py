"""``dralab autoscale`` with Cluster Autoscaler's scale-down flags and rules end to end
(not upstream cases: the ported tables' behaviour through the CLI): the thresholds,
the scale-down-disabled annotation, an incomplete pool generation, a node without
allocatable CPU, the DaemonSet flag, the flags' parsing and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from dralab.cli.main import cli

from .builders_down import Doc, node, pod, slice_doc

FLEET: Doc = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "metadata": {"name": "t"},
              "spec": {"pools": [
                  {"name": "fixed", "count": 1, "cpu": "32", "memory": "128Gi"},
                  {"name": "ng", "count": 0, "cpu": "4", "memory": "16Gi",
                   "autoscaling": {"min": 0, "max": 5}}]}}


def _ng_node(name: str, milli_cpu: int = 4000, **kw: Any) -> Doc:
    return node(name, milli_cpu, 16 << 30, group="ng", ready=True, **kw)


def _run(tmp_path: Path, docs: list[Doc], *flags: str) -> tuple[int, dict[str, Any], str]:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = CliRunner().invoke(cli, ["autoscale", "-f", str(path), "-o", "json", *flags])
    doc = json.loads(result.stdout) if result.exit_code in (0, 1) else {}
    return result.exit_code, doc, result.stderr


def _owned(name: str, milli_cpu: int, node_name: str) -> Doc:
    return pod(name, milli_cpu, 0, node_name=node_name, owner=("ReplicaSet", f"{name}-rs"))


def _kept(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(u["node"], u["reason"]) for u in doc.get("unremovable", [])]


def test_at_the_threshold_a_node_may_go_above_it_stays(tmp_path: Path) -> None:
    # 2 of 4 CPUs: exactly the default threshold 0.5 -> unneeded (CA keeps a node only
    # above the threshold); with --scale-down-utilization-threshold 0.4 it stays.
    docs = [FLEET, _ng_node("ng-01"), _owned("half", 2000, "ng-01")]
    code, doc, _ = _run(tmp_path, docs)
    assert code == 0 and [d["node"] for d in doc["scaleDown"]] == ["ng-01"]
    code, doc, _ = _run(tmp_path, docs, "--scale-down-utilization-threshold", "0.4")
    assert code == 0 and doc["scaleDown"] == []
    assert _kept(doc) == [("ng-01", "NotUnderutilized")]


def test_gpu_nodes_use_the_gpu_threshold(tmp_path: Path) -> None:
    # A node advertising nvidia.com/gpu is a GPU node whose GPUs are not exposed through
    # DRA: CA measures the GPU's requests (1 of 2: 0.5, CPU is not read) against
    # --scale-down-gpu-utilization-threshold, not the CPU/memory threshold.
    docs = [FLEET, _ng_node("ng-01", extra={"nvidia.com/gpu": "2"}),
            pod("trainer", 3000, 0, node_name="ng-01", owner=("ReplicaSet", "trainer-rs"),
                extra={"nvidia.com/gpu": "1"})]
    _, doc, _ = _run(tmp_path, docs, "--scale-down-utilization-threshold", "0.1")
    # Under the GPU threshold (0.5 <= 0.5): a candidate, but its pod fits nowhere else.
    assert doc["scaleDown"] == [] and _kept(doc) == [("ng-01", "NoPlaceToMovePods")]
    _, doc, _ = _run(tmp_path, docs, "--scale-down-utilization-threshold", "0.9",
                     "--scale-down-gpu-utilization-threshold", "0.4")
    assert _kept(doc) == [("ng-01", "NotUnderutilized")]
    assert doc["unremovable"][0]["detail"].startswith("nvidia.com/gpu requested (0.5 ")


def test_scale_down_disabled_annotation_keeps_an_empty_node(tmp_path: Path) -> None:
    docs = [FLEET, _ng_node("ng-01"),
            _ng_node("ng-02", annotations={
                "cluster-autoscaler.kubernetes.io/scale-down-disabled": "true"})]
    code, doc, _ = _run(tmp_path, docs)
    assert code == 0 and [d["node"] for d in doc["scaleDown"]] == ["ng-01"]
    assert _kept(doc) == [("ng-02", "ScaleDownDisabledAnnotation")]


def test_an_incomplete_pool_generation_keeps_the_node(tmp_path: Path) -> None:
    # The node's pool says 2 slices in its newest generation, one is published: CA
    # cannot measure it and keeps the node.
    docs = [FLEET, _ng_node("ng-01"), _ng_node("ng-02"),
            slice_doc("ng-02-gpu", "gpu.example.com", "ng-02", "ng-02", 1, 2,
                      [{"name": "gpu-0"}])]
    code, doc, _ = _run(tmp_path, docs)
    assert code == 0 and [d["node"] for d in doc["scaleDown"]] == ["ng-01"]
    [kept] = doc["unremovable"]
    assert (kept["node"], kept["reason"]) == ("ng-02", "UnexpectedError")
    assert kept["detail"] == ("utilization: pool 'ng-02' error: newest generation: 1, slice "
                              "count: 2 - found only 1 slices")


def test_a_node_without_allocatable_cpu_is_kept(tmp_path: Path) -> None:
    docs = [FLEET, _ng_node("ng-01"), _ng_node("ng-02", milli_cpu=0)]
    _, doc, _ = _run(tmp_path, docs)
    assert [d["node"] for d in doc["scaleDown"]] == ["ng-01"]
    assert doc["unremovable"] == [{"node": "ng-02", "pool": "ng", "reason": "UnexpectedError",
                                   "detail": "utilization: cpu is 0 at ng-02"}]


def test_ignore_daemonsets_utilization(tmp_path: Path) -> None:
    # 3 of 4 CPUs by a DaemonSet pod: kept by default, unneeded when DaemonSet pods are
    # left out (the DaemonSet pod goes with the node).
    docs = [FLEET, _ng_node("ng-01"),
            pod("agent", 3000, 0, node_name="ng-01", owner=("DaemonSet", "agent"))]
    _, doc, _ = _run(tmp_path, docs)
    assert doc["scaleDown"] == [] and _kept(doc) == [("ng-01", "NotUnderutilized")]
    _, doc, _ = _run(tmp_path, docs, "--ignore-daemonsets-utilization")
    assert [d["node"] for d in doc["scaleDown"]] == ["ng-01"]
    _, doc, _ = _run(tmp_path, docs, "--ignore-daemonsets-utilization=false")
    assert doc["scaleDown"] == []


def test_unready_nodes_with_scale_down_unready_disabled(tmp_path: Path) -> None:
    docs = [FLEET, node("ng-01", 4000, 16 << 30, group="ng", ready=False)]
    _, doc, _ = _run(tmp_path, docs)
    assert [d["node"] for d in doc["scaleDown"]] == ["ng-01"]
    _, doc, _ = _run(tmp_path, docs, "--scale-down-unready-enabled=false")
    assert doc["scaleDown"] == [] and _kept(doc) == [("ng-01", "ScaleDownUnreadyDisabled")]


def test_cores_total_minimum_keeps_nodes(tmp_path: Path) -> None:
    # 32 fixed cores + 2 x 4: a minimum of 36 cores lets one node go, not two.
    docs = [FLEET, _ng_node("ng-01"), _ng_node("ng-02")]
    _, doc, _ = _run(tmp_path, docs, "--cores-total", "36:320000")
    assert [d["node"] for d in doc["scaleDown"]] == ["ng-01"]
    assert _kept(doc) == [("ng-02", "MinimalResourceLimitExceeded")]


def test_flag_errors_are_one_line(tmp_path: Path) -> None:
    docs = [FLEET, _ng_node("ng-01")]
    for flags, words in ((("--scale-down-unneeded-time", "10 minutes"), "invalid duration"),
                         (("--memory-total", "5"), "<min>:<max>"),
                         (("--scale-down-utilization-threshold", "2"), "0<=x<=1"),
                         (("--max-nodes-total", "-1"), "-1")):
        code, _, err = _run(tmp_path, docs, *flags)
        assert code == 2 and err.count("\n") == 1 and words in err, (flags, err)
    code, _, err = _run(tmp_path, docs, "--scale-down-unneeded-time", "1h30m",
                        "--scale-down-delay-after-add", "0", "--max-nodes-total", "3",
                        "--cores-total", "0:100", "--memory-total", "0:1000")
    assert (code, err) == (0, "")


def test_drainability_rules_keep_nodes_as_cas_flags_say(tmp_path: Path) -> None:
    # CA's default drain rules: a pod with an emptyDir, a kube-system pod without a
    # PodDisruptionBudget and a pod of a custom controller each keep their node; each
    # --skip-nodes-with-... flag set to false lets that node go.
    local = _owned("cache", 100, "ng-01")
    local["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    system = _owned("dns", 100, "ng-02")
    system["metadata"]["namespace"] = "kube-system"
    custom = pod("worker", 100, 0, node_name="ng-03", owner=("LeaderWorkerSet", "lws"))
    docs = [FLEET, _ng_node("ng-01"), _ng_node("ng-02"), _ng_node("ng-03"), local, system,
            custom]
    _, doc, _ = _run(tmp_path, docs)
    assert doc["scaleDown"] == []
    assert [(u["node"], u["detail"].split(":")[0]) for u in doc["unremovable"]] == [
        ("ng-01", "LocalStorageRequested"), ("ng-02", "UnmovableKubeSystemPod"),
        ("ng-03", "NotReplicated")]
    _, doc, _ = _run(tmp_path, docs, "--skip-nodes-with-local-storage=false",
                     "--skip-nodes-with-system-pods=false",
                     "--skip-nodes-with-custom-controller-pods=false")
    assert [d["node"] for d in doc["scaleDown"]] == ["ng-01", "ng-02", "ng-03"]


def test_a_loop_looks_for_at_most_twice_the_scale_down_parallelism(tmp_path: Path) -> None:
    # CA's planner (unneededNodesLimit): a first loop finds at most
    # 2 x --max-scale-down-parallelism unneeded nodes; the rest wait for later loops.
    many = {**FLEET, "spec": {"pools": [FLEET["spec"]["pools"][0],
                                        {**FLEET["spec"]["pools"][1],
                                         "autoscaling": {"min": 0, "max": 30}}]}}
    docs = [many, *[_ng_node(f"ng-{i:02d}") for i in range(25)]]
    _, doc, _ = _run(tmp_path, docs)
    assert len(doc["scaleDown"]) == 20
    _, doc, _ = _run(tmp_path, docs, "--max-scale-down-parallelism", "3")
    assert [d["node"] for d in doc["scaleDown"]] == ["ng-00", "ng-01", "ng-02", "ng-03",
                                                     "ng-04", "ng-05"]
