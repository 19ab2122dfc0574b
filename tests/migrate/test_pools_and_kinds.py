"""Cluster dumps as the NVIDIA GPU operator leaves them: pools named from GPU product labels,
and the objects of a dump that are no workloads.

`gpu-operator-dump.yaml` has no `dralab.dev/pool` label: its pools come from
`nvidia.com/gpu.product` (`NVIDIA-H100-80GB-HBM3`, `NVIDIA-L4`), which are not DNS
labels. Before, `migrate plan` failed naming a temporary file
(`/tmp/dralab-pilot-.../fleet.yaml: spec.pools[0].name: not a DNS label`), and
`inventory` / `convert` took its Nodes for unsupported workloads.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from dralab.api.io import read_documents
from dralab.fleet import parse_fleet
from dralab.migrate.clusterdump import read_dump
from dralab.migrate.otherkinds import is_unsupported_workload
from dralab.migrate.plan import _without_dir
from dralab.migrate.poolnames import dns_label, is_dns_label, pool_names
from dralab.migrate.pools import pools_of

from .conftest import DATA, run

DUMP = DATA / "gpu-operator-dump.yaml"


def _items() -> list[dict[str, Any]]:
    return list(yaml.safe_load(DUMP.read_text())["items"])


def _write(tmp_path: Path, items: list[dict[str, Any]], name: str = "dump.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def _no_temporary_path(*texts: str) -> None:
    """No mention of the directory ``make_plan`` simulates in (tempfile, prefix dralab-pilot-)."""
    for text in texts:
        assert "dralab-pilot-" not in text


# --- pool names -------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "label"), [
    ("h100", "h100"),                                     # a DNS label stays itself
    ("NVIDIA-H100-80GB-HBM3", "nvidia-h100-80gb-hbm3"),  # GPU feature discovery's product
    ("p5.48xlarge", "p5-48xlarge"),                       # an instance type
    ("Standard_ND96isr_H100_v5", "standard-nd96isr-h100-v5"),
    ("--NVIDIA  A100--", "nvidia-a100"),                  # trimmed, runs of others one '-'
    ("a--b", "a--b"),                                     # valid as written: kept
    ("\u212a80", "80"),                                   # Kelvin sign: not lowered to 'k'
    ("___", "pool"),
    ("x" * 70, "x" * 63),
    ("A" * 62 + ".b", "a" * 62),                          # cut at 63, no trailing '-'
])
def test_dns_label(value: str, label: str) -> None:
    assert dns_label(value) == label
    assert is_dns_label(label)


def test_pool_names_are_distinct_and_independent_of_order() -> None:
    values = ["NVIDIA-L4", "nvidia-l4", "NVIDIA_L4", "<no pool label>", "x" * 63 + "Y",
              "x" * 63]
    names = pool_names(values)
    assert names == pool_names(reversed(values))
    assert len(set(names.values())) == len(values)
    assert all(is_dns_label(n) for n in names.values())
    assert names["nvidia-l4"] == "nvidia-l4"          # a valid value keeps its name
    assert names["<no pool label>"] == "no-pool-label"
    assert names["x" * 63] == "x" * 63
    for value in ("NVIDIA-L4", "NVIDIA_L4", "x" * 63 + "Y"):   # suffixed from the value
        assert names[value].startswith(dns_label(value)[:50]) and names[value] != dns_label(value)


def test_pools_of_an_operator_dump_keep_the_product_for_display() -> None:
    pools = pools_of(read_dump(read_documents([str(DUMP)])))
    assert [(p.name, p.label, len(p.nodes), p.gpus) for p in pools] == [
        ("nvidia-h100-80gb-hbm3", "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3", 2, 16),
        ("nvidia-l4", "nvidia.com/gpu.product=NVIDIA-L4", 1, 4)]
    assert [p.product_label for p in pools] == ["NVIDIA-H100-80GB-HBM3", "NVIDIA-L4"]


# --- migrate plan -----------------------------------------------------------------------------

def test_plan_on_an_operator_dump_names_the_pool_by_its_product(tmp_path: Path) -> None:
    out = tmp_path / "pilot"
    code, stdout, err = run("migrate", "plan", "-f", str(DUMP), "--out", str(out))
    assert code == 0, err
    assert err == ""
    lines = stdout.splitlines()
    assert lines[1].split()[:3] == ["nvidia-h100-80gb-hbm3", "2", "NVIDIA-H100-80GB-HBM3"]
    assert lines[2].split()[:3] == ["nvidia-l4", "1", "NVIDIA-L4"]
    assert "pilot pool: nvidia-l4 (nodes nvidia.com/gpu.product=NVIDIA-L4)" in lines
    assert "device classes: l4-inference" in lines
    assert "  2. Deployment ml/llm-serve: class whole-gpu (risk 1), 2 pod(s)" in lines
    # the Fleet of the simulation is one dralab reads, its pool named by the DNS label
    fleet_doc = yaml.safe_load((out / "simulation" / "fleet.yaml").read_text())
    fleet = parse_fleet(fleet_doc, "fleet.yaml")
    assert [(p.name, p.count) for p in fleet.spec.pools] == [("nvidia-l4", 1)]
    assert fleet_doc["spec"]["pools"][0]["namePrefix"] == "nvidia-l4-node-"
    # the smoke test goes to the pool's nodes by the label the pool was read from
    smoke = [d for d in yaml.safe_load((out / "01-smoke-test.yaml").read_text())["items"]
             if d["kind"] == "Job"]
    assert smoke[0]["spec"]["template"]["spec"]["nodeSelector"] == {
        "nvidia.com/gpu.product": "NVIDIA-L4"}
    report = (out / "pilot-report.md").read_text()
    assert "## Pilot pool: `nvidia-l4`\n\nThe nodes labelled `nvidia.com/gpu.product=NVIDIA-L4`." \
        in report
    _no_temporary_path(stdout, err, report)


def test_plan_node_names_of_a_long_pool_name_stay_dns_labels(tmp_path: Path) -> None:
    # An EKS node group may be named with 63 characters (and capitals): the Fleet's node
    # names (<pool>-node-NN) must still be DNS labels of at most 63 characters.
    items = _items()
    group = "GPU-" + "inference-" * 5 + "L4-Group"
    for item in items:
        if item["kind"] == "Node" and "l4" in item["metadata"]["name"]:
            item["metadata"]["labels"]["eks.amazonaws.com/nodegroup"] = group
    out = tmp_path / "pilot"
    code, stdout, err = run("migrate", "plan", "-f", str(_write(tmp_path, items)), "--out",
                            str(out))
    assert code == 0, err
    name = dns_label(group)
    assert f"pilot pool: {name} (nodes eks.amazonaws.com/nodegroup={group})" in stdout
    pool = yaml.safe_load((out / "simulation" / "fleet.yaml").read_text())["spec"]["pools"][0]
    assert pool["name"] == name
    assert len(pool["namePrefix"] + "01") <= 63 and is_dns_label(pool["namePrefix"] + "01")


def test_plan_errors_never_name_a_temporary_file(tmp_path: Path) -> None:
    # A GPU model dralab does not model: one line naming the dump, the pool and the product.
    # (The L4 nodes and the Deployment selecting them by product, relabelled.)
    text = json.dumps(_items()).replace('"NVIDIA-L4"', '"NVIDIA-RTX-6000-Ada-Generation"')
    dump = _write(tmp_path, json.loads(text))
    code, stdout, err = run("migrate", "plan", "-f", str(dump))
    assert code == 2 and stdout == "" and err.count("\n") == 1
    assert err.startswith(f"error: {dump}: pool nvidia-rtx-6000-ada-generation: GPU product "
                          "'NVIDIA-RTX-6000-Ada-Generation' is not one dralab models")
    _no_temporary_path(err)


def test_plan_of_a_mixed_mig_node(tmp_path: Path) -> None:
    # The mixed MIG strategy: one GPU of the H100 node split in seven 1g.10gb, the other
    # seven whole (allocatable nvidia.com/gpu: 7, GPU feature discovery's count still 8).
    # The pilot's Fleet keeps that layout, so the MIG Deployment lands in both models.
    items = [i for i in _items()   # one H100 node; nothing of the L4 pool
             if "h100-02" not in i["metadata"]["name"] and "l4" not in str(i).lower()]
    node = next(i for i in items if i["kind"] == "Node" and "h100" in i["metadata"]["name"])
    node["metadata"]["labels"]["nvidia.com/mig.strategy"] = "mixed"
    for resources in (node["status"]["allocatable"], node["status"]["capacity"]):
        resources.update({"nvidia.com/gpu": "7", "nvidia.com/mig-1g.10gb": "7"})
    deployment = copy.deepcopy(next(i for i in _items() if i["kind"] == "Deployment"))
    deployment["metadata"]["name"] = "embeddings"
    spec = deployment["spec"]["template"]["spec"]
    del spec["nodeSelector"]
    spec["containers"][0]["resources"] = {"limits": {"nvidia.com/mig-1g.10gb": 1}}
    out = tmp_path / "pilot"
    code, stdout, err = run("migrate", "plan", "-f", str(_write(tmp_path, [*items, deployment])),
                            "--out", str(out))
    assert code == 0, err
    assert "  2. Deployment ml/embeddings: class mig (risk 2), 2 pod(s)" in stdout
    # the 8-GPU finetune Job does not fit 7 whole GPUs: not a workload of the pool
    assert stdout.splitlines()[1].split()[:5] == ["nvidia-h100-80gb-hbm3", "1",
                                                  "NVIDIA-H100-80GB-HBM3", "8", "1"]
    for line in stdout.splitlines():
        if line.startswith(("device-plugin ", "dra ")):
            assert line.split()[1:3] == ["3", "3"]      # smoke test and 2 pods, all started
    pool = yaml.safe_load((out / "simulation" / "fleet.yaml").read_text())["spec"]["pools"][0]
    assert pool["gpu"] == {"model": "h100-80gb-sxm", "count": 8, "mig": {
        "mode": "static", "perGpu": [["1g.10gb"] * 7] + [[]] * 7}}


def test_simulation_errors_name_the_plans_files() -> None:
    tmp = tempfile.mkdtemp(prefix="dralab-pilot-")
    try:
        message = (f"{tmp}/scenario.yaml: spec.fleet.file: {os.path.realpath(tmp)}/fleet.yaml: "
                   f"spec.pools[0].name: not read from {tmp}")
        assert _without_dir(message, tmp) == \
            "scenario.yaml: spec.fleet.file: fleet.yaml: spec.pools[0].name: not read from ."
    finally:
        os.rmdir(tmp)


# --- what is a workload -----------------------------------------------------------------------

def test_inventory_lists_workloads_only_and_counts_the_rest() -> None:
    code, stdout, err = run("migrate", "inventory", "-f", str(DUMP), "-o", "json")
    assert code == 0, err
    assert [(r["kind"], r["namespace"], r["name"], r["class"]) for r in json.loads(stdout)] == [
        ("DaemonSet", "gpu-operator", "nvidia-device-plugin-daemonset", "cpu-only"),
        ("Pod", "gpu-operator", "nvidia-device-plugin-daemonset-7kq2x", "cpu-only"),
        ("Pod", "gpu-operator", "nvidia-device-plugin-daemonset-m9vbc", "cpu-only"),
        ("Pod", "gpu-operator", "nvidia-device-plugin-daemonset-tz4wd", "cpu-only"),
        ("Deployment", "ml", "llm-serve", "whole-gpu"),
        ("Job", "ml", "finetune", "multi-gpu-one-node")]
    code, table, _ = run("migrate", "inventory", "-f", str(DUMP))
    assert code == 0
    assert table.splitlines()[-1] == (
        "not workloads, not listed: 1 ControllerRevision, 3 Namespace, 4 Node (3 with NVIDIA "
        "GPUs: 20 GPUs), 1 PriorityClass, 1 ResourceQuota, 1 Workload")
    assert not any(line.startswith(("Node ", "Namespace ", "Workload "))
                   for line in table.splitlines())
    code, csv_text, _ = run("migrate", "inventory", "-f", str(DUMP), "-o", "csv")
    assert code == 0 and len(csv_text.splitlines()) == 1 + 6   # header and the workloads


@pytest.mark.usefixtures("in_root")
def test_inventory_of_the_example_dump_has_no_node_rows() -> None:
    code, stdout, _ = run("migrate", "inventory", "-f", "examples/migrate/cluster-dump.yaml",
                          "-o", "json")
    assert code == 0
    kinds = {r["kind"] for r in json.loads(stdout)}
    assert "unsupported" not in {r["class"] for r in json.loads(stdout)}
    assert not kinds & {"Node", "ResourceSlice", "DeviceClass", "ResourceClaim"}


def test_convert_of_a_dump_converts_its_workloads_and_nothing_else(tmp_path: Path) -> None:
    code, stdout, err = run("migrate", "convert", "-f", str(DUMP), "-o", str(tmp_path / "out"))
    assert code == 0, stdout + err
    rows = [line.split()[1:4] for line in stdout.splitlines()[1:] if line.startswith(str(DUMP))]
    assert [r[:2] for r in rows] == [
        ["DaemonSet", "gpu-operator/nvidia-device-plugin-daemonset"],
        ["Pod", "gpu-operator/nvidia-device-plugin-daemonset-7kq2x"],
        ["Pod", "gpu-operator/nvidia-device-plugin-daemonset-m9vbc"],
        ["Pod", "gpu-operator/nvidia-device-plugin-daemonset-tz4wd"],
        ["Deployment", "ml/llm-serve"], ["Job", "ml/finetune"]]
    assert "not converted" not in stdout


@pytest.mark.parametrize(("data", "unsupported"), [
    # an operator's workload kind with a container asking for GPUs
    ({"apiVersion": "example.com/v1", "kind": "GpuTask", "metadata": {"name": "r"},
      "spec": {"workers": [{"template": {"spec": {"containers": [
          {"name": "w", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}]}}, True),
    # a kind dralab reads (KubeRay's): a workload, not an unsupported one
    ({"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "r"},
      "spec": {"workerGroupSpecs": [{"template": {"spec": {"containers": [
          {"name": "w", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}]}}, False),
    # Argo keeps one container per template, under `container`
    ({"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": {"name": "w"},
      "spec": {"templates": [{"name": "t", "container": {
          "image": "x", "resources": {"requests": {"nvidia.com/mig-1g.10gb": 1}}}}]}}, True),
    # CPU only: nothing to migrate
    ({"apiVersion": "example.com/v1", "kind": "GpuTask", "metadata": {"name": "r"},
      "spec": {"head": {"template": {"spec": {"containers": [
          {"name": "h", "resources": {"limits": {"cpu": 1}}}]}}}}}, False),
    # Nodes: GPU labels and allocatable, no container
    ({"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": "n", "labels": {"nvidia.com/gpu.product": "NVIDIA-L4"}},
      "status": {"allocatable": {"nvidia.com/gpu": "4"}}}, False),
    ({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l"},
      "spec": {"limits": [{"type": "Container", "max": {"nvidia.com/gpu": "1"}}]}}, False),
    # copies of pod templates that make no pods
    ({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"}, "template": {
        "spec": {"containers": [{"name": "c", "resources": {"limits": {
            "nvidia.com/gpu": 1}}}]}}}, False),
    ({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload", "metadata": {"name": "w"},
      "spec": {"podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [
          {"name": "c", "resources": {"requests": {"nvidia.com/gpu": 8}}}]}}}]}}, False),
])
def test_unsupported_workloads(data: dict[str, Any], unsupported: bool) -> None:
    assert is_unsupported_workload(data) is unsupported


def test_plan_refuses_the_single_mig_strategy_in_one_line(tmp_path: Path) -> None:
    # MIG 'single': GPU feature discovery writes the MIG profile into the product and
    # counts MIG devices, and the device plugin advertises them as nvidia.com/gpu.
    single = "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"
    items = json.loads(json.dumps(_items()).replace('"NVIDIA-H100-80GB-HBM3"', f'"{single}"'))
    items = [i for i in items if "l4" not in str(i).lower()]
    for item in items:
        if item["kind"] == "Node" and single in str(item):
            item["metadata"]["labels"]["nvidia.com/gpu.count"] = "56"
            item["status"]["allocatable"]["nvidia.com/gpu"] = "56"
        if item["kind"] == "Job":
            item["spec"]["template"]["spec"]["containers"][0]["resources"] = {
                "limits": {"nvidia.com/gpu": 1}}
    dump = _write(tmp_path, items)
    code, stdout, err = run("migrate", "plan", "-f", str(dump))
    assert code == 2 and stdout == ""
    assert err == (f"error: {dump}: pool nvidia-h100-80gb-hbm3-mig-1g-10gb: GPU product "
                   f"'{single}' is the MIG 'single' strategy (its nvidia.com/gpu are MIG "
                   "devices); dralab migrate plans pools of whole GPUs and of the 'mixed' "
                   "strategy\n")


def test_check_names_pools_as_plan_does(tmp_path: Path) -> None:
    # The NVIDIA DRA driver installed on the L4 node while its device plugin still runs.
    node = "gpu-l4-01.cluster.local"
    devices = [{"name": f"gpu-{i}", "attributes": {
        "type": {"string": "gpu"}, "productName": {"string": "NVIDIA L4"},
        "architecture": {"string": "Ada Lovelace"}, "index": {"int": i},
        "uuid": {"string": f"GPU-6a1f7c2e-0b3d-4e5f-9a8b-7c6d5e4f3a{i:02d}"}},
        "capacity": {"memory": {"value": "23034Mi"}}} for i in range(4)]
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
              "metadata": {"name": f"{node}-gpu.nvidia.com-x7k2p"},
              "spec": {"driver": "gpu.nvidia.com", "nodeName": node,
                       "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                       "devices": devices}}
    code, stdout, err = run("migrate", "check", "-f", str(_write(tmp_path, [*_items(), slice_])),
                            "-o", "json")
    assert code == 1, err
    [finding] = json.loads(stdout)["doubleAdvertisedNodes"]
    assert (finding["node"], finding["pool"]) == (node, "nvidia-l4")


def test_plan_of_nodes_without_gpu_feature_discovery_says_what_is_missing(
        tmp_path: Path) -> None:
    # The device plugin alone (no GPU feature discovery): allocatable nvidia.com/gpu, no
    # nvidia.com/ labels, so no pool label and no product either.
    items = [i for i in _items() if not (i["kind"] == "Node" and "h100" in str(i))]
    for item in items:
        if item["kind"] == "Node":
            labels = item["metadata"]["labels"]
            item["metadata"]["labels"] = {k: v for k, v in labels.items()
                                          if not k.startswith("nvidia.com/")}
        if item["kind"] == "Deployment":
            del item["spec"]["template"]["spec"]["nodeSelector"]
    dump = _write(tmp_path, items)
    code, stdout, err = run("migrate", "plan", "-f", str(dump))
    assert (code, stdout) == (2, "")
    assert err == (f"error: {dump}: pool no-pool-label: its nodes have no nvidia.com/gpu.product "
                   "label (GPU feature discovery), so their GPU model is unknown and the pilot "
                   "cannot be simulated\n")
