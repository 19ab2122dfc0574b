"""The Karpenter model holds room on a node in flight for the DaemonSet pods still to
come (ExistingNode's remaining daemon resources): a pending pod takes the node only if it
fits beside them; those already bound are not held twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from dralab.cli.main import cli

Doc = dict[str, Any]

FLEET: Doc = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "metadata": {"name": "f"},
              "spec": {"pools": [{"name": "big", "count": 0, "cpu": "16", "memory": "64Gi",
                                  "gpu": {"count": 0},
                                  "autoscaling": {"max": 5, "pricePerHour": 1.0}}]}}
# A node of the pool registered but not initialized yet, still NotReady: in flight (the
# scheduler cannot use it yet; Karpenter counts it without its ephemeral taint).
IN_FLIGHT: Doc = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "big-in-flight",
                  "labels": {"dralab.dev/pool": "big", "kubernetes.io/hostname": "big-in-flight",
                             "karpenter.sh/nodepool": "default",
                             "karpenter.sh/registered": "true"}},
                  "spec": {"taints": [{"key": "node.kubernetes.io/not-ready",
                                       "effect": "NoSchedule"}]},
                  "status": {"allocatable": {"cpu": "15", "memory": "64Gi", "pods": "110"},
                             "capacity": {"cpu": "15", "memory": "64Gi", "pods": "110"}}}
DAEMON_SET: Doc = {"apiVersion": "apps/v1", "kind": "DaemonSet",
                   "metadata": {"name": "agent", "namespace": "default", "uid": "uid-agent"},
                   "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": {
                       "metadata": {"labels": {"app": "agent"}},
                       "spec": {"containers": [{"name": "c", "image": "x",
                                                "resources": {"requests": {"cpu": "2"}}}]}}}}


def _pod(name: str, cpu: str, node: str | None = None, daemon: bool = False) -> Doc:
    meta: Doc = {"name": name, "namespace": "default"}
    if daemon:
        meta["labels"] = {"app": "agent"}
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                    "name": "agent", "uid": "uid-agent", "controller": True}]
    spec: Doc = {"containers": [{"name": "c", "image": "x",
                                 "resources": {"requests": {"cpu": cpu}}}]}
    if node is not None:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _launches(tmp_path: Path, *docs: Doc) -> list[str]:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([FLEET, IN_FLIGHT, DAEMON_SET, *docs]))
    result = CliRunner().invoke(cli, ["autoscale", "-f", str(path), "-o", "yaml",
                                      "--model", "karpenter"])
    assert result.exit_code in (0, 1), result.stderr
    out = yaml.safe_load(result.stdout)
    return [u["pool"] for u in out.get("scaleUp") or []]


@pytest.mark.parametrize(("cpu", "launches"), [("12.5", []), ("13.5", ["big"])])
def test_room_held_for_daemon_pods_to_come(tmp_path: Path, cpu: str, launches: list[str]
                                           ) -> None:
    # The node in flight has 15 CPUs, less the DaemonSet's 2 to come: 13 for pending pods
    # (a new node has 16, less the same 2).
    assert _launches(tmp_path, _pod("p", cpu)) == launches


def test_bound_daemon_pod_not_held_twice(tmp_path: Path) -> None:
    # The agent is bound: 13 CPUs are free, and nothing more is held.
    assert _launches(tmp_path, _pod("agent-x", "2", "big-in-flight", daemon=True),
                     _pod("p", "12.5")) == []
