"""`dralab schedule` and `dralab explain`: the CLI contract (List output, exit codes
0/1/2, one-line errors) with golden files, in-process."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from dralab.cli.main import cli

from .golden import check_golden

ROOT = Path(__file__).parent.parent.parent
EXAMPLES = ROOT / "examples" / "scheduling"
CLUSTER = ["-f", str(EXAMPLES / "cluster.yaml"), "-f", str(EXAMPLES / "workloads.yaml")]
DRA = ["-f", str(ROOT / "examples" / "fleet"), "-f", str(ROOT / "examples" / "claims" /
                                                           "two-h100.yaml"),
       "-f", str(EXAMPLES / "dra-workloads.yaml")]


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def nodes_of(list_yaml: str) -> dict[str, str | None]:
    items = yaml.safe_load(list_yaml)["items"]
    return {i["metadata"]["name"]: i["spec"].get("nodeName") for i in items
            if i["kind"] == "Pod"}


def test_schedule_golden_device_plugin_cluster() -> None:
    code, out, err = run("schedule", *CLUSTER)
    assert code == 1  # two pods stay pending, one was preempted
    check_golden("schedule-device-plugin.yaml", out)
    check_golden("schedule-device-plugin.stderr", err)
    doc = yaml.safe_load(out)
    assert (doc["apiVersion"], doc["kind"]) == ("v1", "List")
    placed = nodes_of(out)
    assert placed["too-big"] is None and placed["untolerated"] is None
    pending = {i["metadata"]["name"]: i["status"]["conditions"][-1] for i in doc["items"]
               if not i["spec"].get("nodeName")}
    assert pending["too-big"]["reason"] == "Unschedulable"
    assert pending["too-big"]["message"].startswith(
        "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.")


GPU_PODS = "".join(f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: g{i}}}
spec:
  containers:
  - name: c
    image: x
    resources: {{requests: {{cpu: "1", nvidia.com/gpu: "2"}}, limits: {{nvidia.com/gpu: "2"}}}}
""" for i in range(4)) + "".join(f"""
---
apiVersion: v1
kind: Node
metadata: {{name: n{i}}}
status: {{allocatable: {{cpu: "32", memory: 64Gi, pods: "110", nvidia.com/gpu: "8"}}}}
""" for i in range(2))


def test_schedule_with_config_packs_gpus() -> None:
    code, out, _ = run("schedule", "-f", "-", "--config", str(EXAMPLES / "pack.yaml"),
                       stdin=GPU_PODS)
    assert code == 0
    assert len(set(nodes_of(out).values())) == 1
    code, out, _ = run("schedule", "-f", "-", stdin=GPU_PODS)
    assert code == 0
    assert len(set(nodes_of(out).values())) == 2


def test_schedule_all_placed_exit_0_json() -> None:
    manifest = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
"""
    code, out, err = run("schedule", "-f", "-", "-o", "json", stdin=manifest)
    assert code == 0, err
    assert err == ""
    items = json.loads(out)["items"]
    assert [(i["metadata"]["namespace"], i["spec"]["nodeName"]) for i in items] == [
        ("default", "n1")]
    # As the API server leaves a bound pod without a kubelet: created Pending with
    # its QoS class, then the binding's PodScheduled=True, stamped with the input's
    # newest creationTimestamp (none here: the epoch), no observedGeneration.
    assert items[0]["metadata"]["generation"] == 1
    assert items[0]["status"] == {
        "phase": "Pending", "qosClass": "Burstable",
        "conditions": [{"status": "True", "type": "PodScheduled",
                        "lastTransitionTime": "1970-01-01T00:00:00Z"}]}


def test_schedule_seed_changes_generated_names() -> None:
    _, first, _ = run("schedule", *CLUSTER, "--seed", "1")
    _, again, _ = run("schedule", *CLUSTER, "--seed", "1")
    _, other, _ = run("schedule", *CLUSTER, "--seed", "2")
    assert first == again != other


def test_schedule_invalid_input_exit_2() -> None:
    bad = "apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec: {containers: []}\n"
    code, out, err = run("schedule", "-f", "-", stdin=bad)
    assert code == 2
    assert out == ""
    assert err.startswith("error: - Pod Bad_Name: metadata.name: Invalid value")


def test_schedule_bad_config_exit_2_one_line(tmp_path: Path) -> None:
    config = tmp_path / "sched.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                      "kind: KubeSchedulerConfiguration\n"
                      "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
                      "    score:\n      enabled:\n      - name: Magic\n")
    code, out, err = run("schedule", *CLUSTER, "--config", str(config))
    assert code == 2
    assert out == ""
    # The error names the configuration file, then the field.
    assert err == (f'error: {config}: profiles[0].plugins.score.enabled[0].name: '
                   'Invalid value: "Magic": plugin does not exist\n')


def test_explain_unplaced_pod_golden() -> None:
    code, out, _ = run("explain", "pod", "research/untolerated", *CLUSTER)
    assert code == 1
    check_golden("explain-untolerated.txt", out)
    assert "Nearest node: a100-mig-0" in out


def test_explain_placed_pod_golden() -> None:
    code, out, _ = run("explain", "pod", "research/notebook-1", *CLUSTER)
    assert code == 0
    check_golden("explain-notebook.txt", out)


def test_explain_unknown_pod_exit_2() -> None:
    code, _, err = run("explain", "pod", "research/nope", *CLUSTER)
    assert code == 2
    assert err == "error: pod research/nope not found\n"


def test_schedule_dra_golden() -> None:
    code, out, err = run("schedule", *DRA)
    assert code == 0, err
    check_golden("schedule-dra.yaml", out)
    claims = {i["metadata"]["name"]: i for i in yaml.safe_load(out)["items"]
              if i["kind"] == "ResourceClaim"}
    shared = claims["two-h100"]["status"]
    assert [r["name"] for r in shared["reservedFor"]] == ["pair"]
    assert len(shared["allocation"]["devices"]["results"]) == 2
    generated = [c for n, c in claims.items() if n.startswith("finetune-")]
    assert len(generated) == 2
    assert all(c["status"]["allocation"] for c in generated)


def test_explain_claim_golden() -> None:
    code, out, _ = run("explain", "claim", "ml/two-h100", *DRA)
    assert code == 0
    check_golden("explain-claim-two-h100.txt", out)
