"""A `kubectl get -o yaml` dump of a small running cluster used as a snapshot:
no phantom pods, allocated devices stay taken, new work lands around them.

tests/data/kubectl/cluster-dump.yaml: Deployment inference -> ReplicaSet -> 2 pods,
Job train half done (2 of 4 succeeded, 2 running), StatefulSet db (2), DaemonSet
node-agent (2 nodes), four allocated GPU claims (gpu-0, gpu-1 of both nodes).
tests/data/kubectl/new-workload.yaml: a Job of three pods wanting two GPUs each.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from dralab.cli.main import cli

from .golden import check_golden

KUBECTL = Path(__file__).parent.parent / "data" / "kubectl"
DUMP = ["-f", str(KUBECTL / "cluster-dump.yaml")]
NEW = ["-f", str(KUBECTL / "new-workload.yaml")]


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def items(text: str, kind: str) -> list[dict[str, Any]]:
    return [i for i in yaml.safe_load(text)["items"] if i["kind"] == kind]


def key(item: dict[str, Any]) -> str:
    return f"{item['metadata']['namespace']}/{item['metadata']['name']}"


def devices(claim: dict[str, Any]) -> set[tuple[str, str]]:
    allocation = claim.get("status", {}).get("allocation")
    if not allocation:
        return set()
    return {(r["pool"], r["device"]) for r in allocation["devices"]["results"]}


def dump_items(kind: str) -> list[dict[str, Any]]:
    return items((KUBECTL / "cluster-dump.yaml").read_text(), kind)


def test_the_dump_alone_adds_nothing_and_changes_nothing() -> None:
    code, out, err = run("schedule", *DUMP)
    assert (code, err) == (0, "")
    before = {key(p): p for p in dump_items("Pod")}
    after = {key(p): p for p in items(out, "Pod")}
    assert list(after) == list(before)  # no phantom pod, same order
    assert {k: p["spec"]["nodeName"] for k, p in after.items()} == {
        k: p["spec"]["nodeName"] for k, p in before.items()}
    assert {key(c): devices(c) for c in items(out, "ResourceClaim")} == {
        key(c): devices(c) for c in dump_items("ResourceClaim")}


def test_a_new_workload_avoids_the_allocated_devices() -> None:
    code, out, err = run("schedule", *DUMP, *NEW)
    assert code == 1  # the third pod does not fit
    pods = items(out, "Pod")
    old = [key(p) for p in dump_items("Pod")]
    new = [key(p) for p in pods if key(p) not in old]
    assert [key(p) for p in pods][:len(old)] == old
    assert len(new) == 3 and all(k.startswith("demo/finetune-") for k in new)
    taken = set().union(*(devices(c) for c in dump_items("ResourceClaim")))
    claims = {key(c): c for c in items(out, "ResourceClaim")}
    fresh = [c for k, c in claims.items() if k.startswith("demo/finetune-")]
    got = [devices(c) for c in fresh if devices(c)]
    assert len(got) == 2 and all(not (d & taken) for d in got)
    assert sorted(d for ds in got for d in ds) == [
        ("gpu-node-1", "gpu-2"), ("gpu-node-1", "gpu-3"),
        ("gpu-node-2", "gpu-2"), ("gpu-node-2", "gpu-3")]
    # The running pods' claims keep their devices and reservedFor.
    for claim in dump_items("ResourceClaim"):
        assert devices(claims[key(claim)]) == devices(claim)
        assert claims[key(claim)]["status"]["reservedFor"] == claim["status"]["reservedFor"]
    (waiting,) = [line for line in err.splitlines() if line.startswith("demo/finetune-")]
    assert "Unschedulable: 0/2 nodes are available: 2 cannot allocate all claims." in waiting
    check_golden("schedule-cluster-dump.yaml", out)


def test_table_output_golden() -> None:
    code, out, err = run("schedule", "-o", "table", *DUMP, *NEW)
    assert (code, err) == (1, "")
    check_golden("schedule-cluster-dump.table", out)
    lines = out.splitlines()
    assert lines[0].split() == ["POD", "NODE", "STATUS", "DEVICES"]
    starts = {re.match(r"\S+ +", line).end() for line in lines}  # type: ignore[union-attr]
    assert len(starts) == 1  # the second column is aligned


def test_table_output_exit_0_when_everything_fits() -> None:
    code, out, _ = run("schedule", "-o", "table", *DUMP)
    assert code == 0
    assert "demo/train-wfprn                  gpu-node-1   Running     " \
           "gpu=gpu.example.com/gpu-node-1/gpu-1" in out


def test_a_deleted_pod_is_recreated_once() -> None:
    docs = yaml.safe_load((KUBECTL / "cluster-dump.yaml").read_text())
    docs["items"] = [i for i in docs["items"]
                     if not (i["kind"] == "Pod" and i["metadata"]["name"] in
                             ("train-rclvt", "db-1", "node-agent-n3q7w",
                              "inference-7c9d8f6b5d-q8w2n"))]
    code, out, _ = run("schedule", "-f", "-", stdin=yaml.safe_dump(docs))
    assert code == 0
    left = {key(i) for i in docs["items"] if i["kind"] == "Pod"}
    pods = {key(p): p for p in items(out, "Pod")}
    new = sorted(k for k in pods if k not in left)
    # One replacement per controller, named as each controller names its pods
    # (a StatefulSet reuses the ordinal's name).
    assert [n if n == "demo/db-1" else n.rsplit("-", 1)[0] for n in new] == [
        "demo/db-1", "demo/inference-7c9d8f6b5d", "demo/train", "kube-system/node-agent"]
    assert all(pods[k]["status"]["conditions"][-1]["type"] == "PodScheduled" for k in new)
    assert pods["kube-system/" + new[3].split("/")[1]]["spec"]["nodeName"] == "gpu-node-2"


def test_duplicates_warn_with_both_places(tmp_path: Path) -> None:
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: dup, namespace: demo}\n"
            "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '%s'}}}]}\n")
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(text % "1")
    second.write_text("---\n" + (text % "2") + "---\n" + (text % "3"))
    code, out, err = run("schedule", *DUMP, "-f", str(first), "-f", str(second))
    assert code == 0
    assert err.splitlines() == [
        f"warning: Pod demo/dup is given twice ({first} and {second}:1); the last one is "
        "used, as kubectl apply would leave it",
        f"warning: Pod demo/dup is given twice ({second}:1 and {second}:2); the last one is "
        "used, as kubectl apply would leave it"]
    (dup,) = [p for p in items(out, "Pod") if p["metadata"]["name"] == "dup"]
    assert dup["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "3"


def test_explain_workloads_of_the_dump() -> None:
    code, out, _ = run("explain", "pod", "job/train", "-n", "demo", *DUMP)
    assert code == 0
    assert out.startswith("Job demo/train: 4 pod(s), 2 bound before the run, 2 finished\n")
    assert "Pod demo/train-7fz8l: Succeeded on gpu-node-1\n" in out
    code, out, _ = run("explain", "pod", "deploy/inference", "-n", "demo", *DUMP, *NEW)
    assert code == 0 and out.count("\nPod demo/inference-7c9d8f6b5d-") == 2
    code, out, _ = run("explain", "pod", "statefulset/db", "-n", "demo", *DUMP)
    assert code == 0 and out.startswith("StatefulSet demo/db: 2 pod(s)")
    code, out, _ = run("explain", "pod", "ds/node-agent", "-n", "kube-system", *DUMP)
    assert code == 0 and out.startswith("DaemonSet kube-system/node-agent: 2 pod(s)")


def test_explain_a_new_jobs_pods_and_a_generated_claim_by_pod_and_claim_name() -> None:
    _, table, _ = run("schedule", "-o", "table", *DUMP, *NEW)
    job = next(line.split()[0] for line in table.splitlines()
               if line.startswith("demo/finetune-")).rsplit("-", 1)[0]
    code, out, _ = run("explain", "pod", f"job/{job.split('/')[1]}", "-n", "demo", *DUMP, *NEW)
    assert code == 1
    assert out.startswith(f"Job {job}: 3 pod(s), 2 scheduled, 1 not scheduled\n")
    waiting = next(line.split()[0] for line in table.splitlines()
                   if "Unschedulable" in line)
    pod = waiting.split("/")[1]
    code, out, _ = run("explain", "claim", f"{pod}/gpus", "-n", "demo", *DUMP, *NEW)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"ResourceClaim demo/{pod}-gpus-") and \
        lines[0].endswith(": not allocated")
    assert lines[1] == (f"  generated from template two-gpus for pod demo/{pod} "
                        '(spec.resourceClaims "gpus")')
    same = run("explain", "claim", f"demo/{pod}/gpus", *DUMP, *NEW)
    assert same[:2] == (code, out)


@pytest.mark.parametrize(("args", "message"), [
    (("explain", "pod", "ml/x", "-n", "demo"),
     "error: ml/x: namespace 'ml' differs from the namespace option 'demo'"),
    (("explain", "pod", "a/b/c"), "error: 'a/b/c': expected NAME, NAMESPACE/NAME or "
                                  "TYPE/NAME (job/NAME, deployment/NAME, statefulset/NAME, ...)"),
    (("explain", "pod", "job/nope", "-n", "demo"), "error: job demo/nope not found"),
    (("explain", "claim", "demo/nope/gpu"), "error: pod demo/nope not found"),
    (("explain", "claim", "db-0/gpu", "-n", "demo"),
     'error: pod demo/db-0 has no resource claim "gpu" (its spec.resourceClaims: none)'),
])
def test_explain_bad_targets_exit_2(args: tuple[str, ...], message: str) -> None:
    code, out, err = run(*args, *DUMP)
    assert (code, out, err.strip()) == (2, "", message)
