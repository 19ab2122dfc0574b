"""``dralab autoscale``: the exact contract (options, JSON shape and order, exit
codes), golden table and JSON runs, one-line errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from cli.golden import check_golden
from dralab.cli.main import cli

DATA = Path(__file__).parent.parent / "data" / "autoscale"
FLEET = str(DATA / "fleet.yaml")
INPUTS = ["-f", FLEET, "-f", str(DATA / "mig-pod.yaml"), "-f", str(DATA / "pending.yaml")]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["autoscale", *args])
    return result.exit_code, result.stdout, result.stderr


def test_golden_table_and_exit_1_for_a_pod_nobody_helps() -> None:
    code, out, err = run(*INPUTS)
    assert (code, err) == (1, "")
    check_golden("autoscale-pending.table", out)


def test_golden_json() -> None:
    code, out, err = run(*INPUTS, "-o", "json")
    assert (code, err) == (1, "")
    check_golden("autoscale-pending.json", out)
    doc = json.loads(out)
    assert list(doc) == ["scaleUp", "pending", "scaleDown"]
    assert [u["pool"] for u in doc["scaleUp"]] == ["a100", "l4"]
    assert doc["pending"][0]["pod"] == "ml/giant"
    assert doc["pending"][0]["reason"].startswith("no node group fits: a100: ")


def test_yaml_and_exit_0_when_every_pod_is_helped() -> None:
    # DRA-aware provisioning is Karpenter's --ignore-dra-requests=false (opt-in).
    code, out, _ = run("-f", FLEET, "-f", str(DATA / "mig-pod.yaml"), "-o", "yaml",
                       "--model", "karpenter", "--ignore-dra-requests=false")
    assert code == 0
    doc = yaml.safe_load(out)
    # The Karpenter model writes the NodeClaim of each node it launches.
    [claim] = doc.pop("nodeClaims")
    assert (claim["kind"], claim["metadata"]["labels"]) == (
        "NodeClaim", {"karpenter.sh/nodepool": "default"})
    assert claim["spec"]["resources"]["requests"]["pods"] == "1"
    assert doc == {"scaleUp": [{"pool": "a100", "add": 1, "pods": ["default/mig-job"]}],
                   "pending": [], "scaleDown": []}


@pytest.mark.parametrize("flag", [[], ["--ignore-dra-requests"],
                                  ["--ignore-dra-requests=true"]])
def test_karpenter_ignores_dra_requests_by_default(flag: list[str]) -> None:
    # Karpenter's --ignore-dra-requests defaults to true: a pod with a resource claim gets
    # no launch, with Karpenter's message.
    code, out, _ = run("-f", FLEET, "-f", str(DATA / "mig-pod.yaml"), "-o", "yaml",
                       "--model", "karpenter", *flag)
    assert code == 1
    assert yaml.safe_load(out) == {"scaleUp": [], "pending": [{
        "pod": "default/mig-job", "reason": "pod has Dynamic Resource Allocation "
        "requirements that are not yet supported by Karpenter"}], "scaleDown": []}


def test_expander_option() -> None:
    code, out, _ = run(*INPUTS, "--expander", "price", "-o", "json")
    assert code == 1 and json.loads(out)["scaleUp"][0]["pool"] == "a100"


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


BAD_FLEET = """apiVersion: dralab.dev/v1alpha1
kind: Fleet
spec:
  pools:
  - name: h100
    count: 0
    gpu: {model: h100-80gb-sxm, count: 8}
    autoscaling: {min: 2, max: 1}
"""

ERRORS = [
    ("min above max", BAD_FLEET, "spec.pools[0].autoscaling.max: is 1, below min 2"),
    ("count 0 without autoscaling", BAD_FLEET.replace("    autoscaling: {min: 2, max: 1}\n", ""),
     "spec.pools[0].count: must be at least 1: 0"),
    ("bad delay", BAD_FLEET.replace("{min: 2, max: 1}", "{max: 2, provisioningDelay: soon}"),
     "spec.pools[0].autoscaling.provisioningDelay: not a duration"),
    ("unknown field", BAD_FLEET.replace("{min: 2, max: 1}", "{max: 2, maxSize: 3}"),
     "spec.pools[0].autoscaling.maxSize: unknown field"),
    ("count above max", BAD_FLEET.replace("count: 0", "count: 4").replace(
        "{min: 2, max: 1}", "{max: 3}"), "spec.pools[0].count: is 4, above autoscaling.max 3"),
]


@pytest.mark.parametrize(("text", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_invalid_fleet_is_one_line_exit_2(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, "fleet.yaml", text)
    code, out, err = run("-f", path)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith(f"error: {path}: ") and message in err


def test_no_fleet_and_two_fleets_are_errors(tmp_path: Path) -> None:
    code, _, err = run("-f", str(DATA / "mig-pod.yaml"))
    assert code == 2 and err == ("error: expected one Fleet (dralab.dev/v1alpha1 Fleet) among "
                                 "the inputs, found 0\n")
    code, _, err = run("-f", FLEET, "-f", FLEET)
    assert code == 2 and "found 2" in err and err.count("\n") == 1


def test_invalid_object_is_one_line_exit_2(tmp_path: Path) -> None:
    path = _write(tmp_path, "pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"
                                        "spec: {containers: [{name: c, image: i, resources: "
                                        "{requests: {cpu: lots}}}]}\n")
    code, out, err = run("-f", FLEET, "-f", path)
    assert (code, out) == (2, "") and err.count("\n") == 1 and path in err


def test_unknown_expander_and_model_are_usage_errors() -> None:
    code, _, err = run(*INPUTS, "--expander", "cheapest")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    code, _, err = run(*INPUTS, "--model", "keda")
    assert code == 2 and err.count("\n") == 1


def test_golden_scale_down_table() -> None:
    # h100-01's pod moves to h100-02 (which then stays: min 1); l4-03 holds a bare pod.
    code, out, err = run("-f", str(DATA / "scale-down.yaml"))
    assert (code, err) == (0, "")
    check_golden("autoscale-scale-down.table", out)


def test_explain_pod_names_the_pool_that_would_fix_it() -> None:
    result = CliRunner().invoke(cli, ["explain", "pod", "-n", "ml", "deployment/pair",
                                      "-f", FLEET, "-f", str(DATA / "pending.yaml")])
    assert result.exit_code == 1
    tail = result.stdout.split("autoscaling (one Cluster Autoscaler loop):\n")[1]
    lines = tail.splitlines()
    assert len(lines) == 2
    # Both pods of the pair fit on one new L4 node.
    assert all(line.startswith("ml/pair-") and
               line.endswith(": would fit on pool l4 after a scale-up of 1 node")
               for line in lines)


def test_explain_pod_says_why_no_pool_helps() -> None:
    result = CliRunner().invoke(cli, ["explain", "pod", "-n", "ml", "giant",
                                      "-f", FLEET, "-f", str(DATA / "pending.yaml")])
    assert result.exit_code == 1
    assert ": no autoscaled pool helps: no node group fits: " in result.stdout
