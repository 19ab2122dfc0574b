"""The Karpenter model reads karpenter.sh/v1 NodeClaims (``dralab autoscale --model
karpenter``): one without a node yet is capacity in flight that takes pending pods; a
node whose NodeClaim is not Initialized is in flight whatever its labels say; a bad
NodeClaim is one line, exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from dralab.cli.main import cli

Doc = dict[str, Any]

FLEET: Doc = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "metadata": {"name": "f"},
              "spec": {"pools": [{"name": "big", "count": 0, "cpu": "16", "memory": "64Gi",
                                  "gpu": {"count": 0}, "topology": {"zone": "zone-a"},
                                  "labels": {"node.kubernetes.io/instance-type": "big"},
                                  "autoscaling": {"max": 5, "pricePerHour": 1.0}}]}}


def _claim(name: str, node: str | None = None, initialized: bool = False,
           api_version: str = "karpenter.sh/v1") -> Doc:
    status: Doc = {"conditions": [{"type": "Launched", "status": "True"}]}
    if node is not None:
        status["nodeName"] = node
    if initialized:
        status["conditions"].append({"type": "Initialized", "status": "True"})
    return {"apiVersion": api_version, "kind": "NodeClaim",
            "metadata": {"name": name, "labels": {"node.kubernetes.io/instance-type": "big",
                                                  "topology.kubernetes.io/zone": "zone-a"}},
            "status": status}


def _pod(name: str, cpu: str) -> Doc:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x",
                                     "resources": {"requests": {"cpu": cpu}}}]}}


def _autoscale(tmp_path: Path, *docs: Doc) -> tuple[int, Any, str]:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([FLEET, *docs]))
    result = CliRunner().invoke(cli, ["autoscale", "-f", str(path), "-o", "yaml",
                                      "--model", "karpenter"])
    out = yaml.safe_load(result.stdout) if result.exit_code != 2 else None
    return result.exit_code, out, result.stderr


def test_node_claim_without_node_takes_pods(tmp_path: Path) -> None:
    code, out, err = _autoscale(tmp_path, _pod("a", "10"), _pod("b", "10"))
    assert (code, sum(u["add"] for u in out["scaleUp"])) == (0, 2)
    # One launched already (no node yet): it takes one of the pods, one node more.
    code, out, err = _autoscale(tmp_path, _claim("big-x"), _pod("a", "10"), _pod("b", "10"))
    assert (code, sum(u["add"] for u in out["scaleUp"])) == (0, 1)
    assert "NodeClaim" not in err  # a kind the Karpenter model reads: no 'unused' warning


def test_node_whose_claim_is_not_initialized_is_in_flight(tmp_path: Path) -> None:
    node: Doc = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "big-n1", "labels": {
        "dralab.dev/pool": "big", "kubernetes.io/hostname": "big-n1",
        "karpenter.sh/nodepool": "default", "karpenter.sh/registered": "true",
        "karpenter.sh/initialized": "true"}},
        "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]},
        "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                   "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"}}}
    # The label says initialized: the NotReady taint counts, a node is launched.
    code, out, _ = _autoscale(tmp_path, node, _pod("a", "10"))
    assert [u["pool"] for u in out["scaleUp"]] == ["big"]
    # Its NodeClaim is not Initialized: in flight, the taint ignored, nothing launched.
    code, out, _ = _autoscale(tmp_path, node, _claim("c1", "big-n1"), _pod("a", "10"))
    assert (code, out["scaleUp"]) == (0, [])


def test_bad_node_claim_is_one_line(tmp_path: Path) -> None:
    code, _, err = _autoscale(tmp_path, _claim("c1", api_version="karpenter.sh/v1beta1"))
    assert code == 2 and err.count("\n") == 1
    assert "apiVersion: only karpenter.sh/v1 NodeClaims are read" in err
    code, _, err = _autoscale(tmp_path, _claim("c1"), _claim("c1"))
    assert code == 2 and "a second NodeClaim named 'c1'" in err
