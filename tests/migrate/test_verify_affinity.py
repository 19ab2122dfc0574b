"""``convert --verify`` schedules with kube-scheduler's default profile in both models: a
Deployment whose replicas keep apart (required pod anti-affinity on the hostname) gets one
replica per node before the conversion (device plugin) and after it (DRA), and the replica
with no node left is pending for the same reason in both.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from dralab.migrate.convert import convert_files
from dralab.migrate.verify import verify

FLEET = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "metadata": {"name": "l4"},
         "spec": {"pools": [{"name": "l4", "count": 3, "platform": "pcie", "cpu": "48",
                             "memory": "192Gi", "gpu": {"model": "l4", "count": 8}}]}}


def _deployment(anti_affinity: bool) -> dict[str, object]:
    spec: dict[str, object] = {"containers": [{
        "name": "server", "image": "vllm/vllm-openai",
        "resources": {"limits": {"nvidia.com/gpu": 1}}}]}
    if anti_affinity:
        spec["affinity"] = {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": "web"}},
                "topologyKey": "kubernetes.io/hostname"}]}}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "inference"},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": spec}}}


def _outcomes(tmp: Path, anti_affinity: bool) -> list[tuple[str, str, str]]:
    (tmp / "web.yaml").write_text(yaml.safe_dump(_deployment(anti_affinity)))
    (tmp / "fleet.yaml").write_text(yaml.safe_dump(FLEET))
    report = verify(convert_files([str(tmp / "web.yaml")]), str(tmp / "fleet.yaml"))
    return [(p.pod, p.before, p.after) for p in report.pods]


def test_anti_affinity_deployment_one_replica_per_node_in_both_models(tmp_path: Path) -> None:
    outcomes = _outcomes(tmp_path, anti_affinity=True)
    assert len(outcomes) == 4
    for side in (1, 2):
        nodes = [o[side] for o in outcomes if not o[side].startswith("pending")]
        assert sorted(nodes) == ["l4-01", "l4-02", "l4-03"], side
        (pending,) = [o[side] for o in outcomes if o[side].startswith("pending")]
        assert "didn't match pod anti-affinity rules" in pending


def test_without_the_rule_all_four_replicas_fit(tmp_path: Path) -> None:
    outcomes = _outcomes(tmp_path, anti_affinity=False)
    assert len(outcomes) == 4
    assert not any(o[1].startswith("pending") or o[2].startswith("pending")
                   for o in outcomes)
