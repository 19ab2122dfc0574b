"""The Karpenter model's consolidation with several NodePools (``dralab autoscale --model
karpenter``): each node is its NodePool's (karpenter.sh/nodepool), held to that
NodePool's budgets and disruption block; a static NodePool's nodes are never
consolidated; a NodePool that cannot be used for launches (deleting, not Ready) still
has its nodes consolidated, and with no usable NodePool only empty nodes go. No pod is
moved onto a node still within its NodePool's consolidateAfter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from dralab.api.codec import decode
from dralab.api.core import Pod
from dralab.api.features import FeatureGates
from dralab.api.io import Document
from dralab.autoscale import read_input
from dralab.autoscale.inputs import cluster_objects
from dralab.autoscale.karpenter import Karpenter
from dralab.autoscale.karpenter_nodepool import parse_nodepool
from dralab.cli.main import cli
from dralab.scheduler import Scheduler, build_cluster

Doc = dict[str, Any]


def _pool(name: str, count: int, cpu: str, price: float, nodepool: str) -> Doc:
    return {"name": name, "count": count, "cpu": cpu, "memory": "64Gi", "gpu": {"count": 0},
            "labels": {"karpenter.sh/nodepool": nodepool},
            "autoscaling": {"max": 5, "pricePerHour": price}}


# small-01 is NodePool a's, big-01 and big-02 NodePool b's.
FLEET: Doc = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "metadata": {"name": "f"},
              "spec": {"pools": [_pool("small", 1, "4", 1.0, "a"),
                                 _pool("big", 2, "16", 3.0, "b")]}}


def _nodepool(name: str, spec: Doc, **meta: Any) -> Doc:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": {"name": name, **meta}, "spec": spec}


def _budget(nodes: str, **disruption: Any) -> Doc:
    return {"disruption": {"budgets": [{"nodes": nodes}], **disruption}}


def _pod(name: str, node: str) -> Doc:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "containers": [
                {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]},
            "status": {"phase": "Running"}}


def _deleted(tmp_path: Path, *docs: Doc) -> list[str]:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([FLEET, *docs]))
    result = CliRunner().invoke(cli, ["autoscale", "-f", str(path), "-o", "yaml",
                                      "--model", "karpenter"])
    assert result.exit_code == 0, result.output
    return sorted(d["node"] for d in yaml.safe_load(result.stdout)["scaleDown"])


def test_each_nodepool_its_own_budgets(tmp_path: Path) -> None:
    # a allows none of its nodes, b one of its: b's first empty node goes.
    assert _deleted(tmp_path, _nodepool("a", _budget("0%")), _nodepool("b", _budget("1"))) \
        == ["big-01"]
    assert _deleted(tmp_path, _nodepool("a", _budget("100%")),
                    _nodepool("b", _budget("100%"))) == ["big-01", "big-02", "small-01"]


def test_each_nodepool_its_own_consolidate_after(tmp_path: Path) -> None:
    never = _budget("100%", consolidateAfter="Never")
    assert _deleted(tmp_path, _nodepool("a", never), _nodepool("b", _budget("100%"))) == [
        "big-01", "big-02"]


def test_a_static_nodepools_nodes_stay(tmp_path: Path) -> None:
    static = {**_budget("100%"), "replicas": 2}
    assert _deleted(tmp_path, _nodepool("a", _budget("100%")), _nodepool("b", static)) == [
        "small-01"]


def test_a_deleting_nodepools_nodes_are_consolidated(tmp_path: Path) -> None:
    # b is being deleted (no launches for it), a is usable: b's empty nodes go too.
    deleting = _nodepool("b", _budget("100%"), deletionTimestamp="2026-01-01T00:00:00Z")
    assert _deleted(tmp_path, _nodepool("a", _budget("100%")), deleting) == [
        "big-01", "big-02", "small-01"]


def test_without_a_usable_nodepool_only_empty_nodes_go(tmp_path: Path) -> None:
    # Both NodePools are being deleted: no scheduling simulation can run
    # (ErrNodePoolsNotFound), so big-01's pod is not moved onto big-02; empty nodes go.
    stamp = "2026-01-01T00:00:00Z"
    docs = [_nodepool("a", _budget("100%"), deletionTimestamp=stamp),
            _nodepool("b", _budget("100%"), deletionTimestamp=stamp), _pod("p", "big-01")]
    assert _deleted(tmp_path, *docs) == ["big-02", "small-01"]


def test_no_pod_moves_onto_a_node_under_its_consolidate_after() -> None:
    # The scheduler's destination check (IsUnderConsolidateAfter): a pod arrives on
    # small-01 at 90 s; at 100 s small-02 has been quiet past consolidateAfter (60 s)
    # but its pod may not move onto small-01, quiet for 10 s only. At 200 s it may.
    fleet = {**FLEET, "spec": {"pools": [_pool("small", 2, "4", 1.0, "gp")]}}
    docs = [fleet, _pod("p0", "small-01"), _pod("p1", "small-02")]
    data = read_input([Document("in.yaml", i + 1, d) for i, d in enumerate(docs)],
                      FeatureGates())
    cluster, pending = build_cluster(cluster_objects(data), None, 0)
    scheduler = Scheduler.build(cluster, None, 0)
    scheduler.run(pending)
    model = Karpenter(scheduler, data.fleet, nodepool=parse_nodepool(_nodepool(
        "gp", _budget("100%", consolidateAfter="60s")), "np"))
    assert model.loop([], 0.0).scale_downs == ()
    late = decode(_pod("late", "small-01"))
    assert isinstance(late, Pod)
    cluster.add_pod(late)
    assert sorted(p.key for p in cluster.nodes["small-01"].pods) == [
        "default/late", "default/p0"]
    assert model.loop([], 90.0).scale_downs == ()
    assert model.loop([], 100.0).scale_downs == ()
    assert [d.node for d in model.loop([], 200.0).scale_downs] == ["small-02"]
