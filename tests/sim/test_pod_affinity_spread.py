"""The simulator schedules with kube-scheduler's default profile, InterPodAffinity and
PodTopologySpread included: a job kind whose manifest keeps its pods apart gets one pod per
node, as a real cluster would give it, and the pod with no node left waits for one to free.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dralab.sim.scenario import Scenario, parse_scenario
from dralab.sim.simulate import simulate

# Three CPU nodes, each with room for all four pods: only the pods' own rules keep them apart.
POOL = {"name": "cpu", "count": 3, "namePrefix": "cpu-", "cpu": "32", "memory": "128Gi"}
BIG = {"name": "big", "count": 1, "namePrefix": "big-", "cpu": "256", "memory": "1Ti"}

WEB = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ml}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: web}}
            topologyKey: kubernetes.io/hostname
      containers:
      - name: web
        image: nginx
        resources: {requests: {cpu: "1", memory: 1Gi}}
"""


AFFINITY = """      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: web}}
            topologyKey: kubernetes.io/hostname
"""


def _scenario(tmp: Path, manifest: str, pods: int = 4,
              pools: list[dict[str, Any]] | None = None) -> Scenario:
    path = tmp / "web.yaml"
    path.write_text(manifest)
    spec: dict[str, Any] = {
        "seed": 1, "duration": "3h", "sampleInterval": "30m", "compare": ["dra"],
        "fleet": {"spec": {"pools": pools or [POOL]}},
        "workload": [{"name": "web", "arrivals": ["0s"] * pods, "template": str(path),
                      "duration": {"distribution": "fixed", "mean": "1h"}}]}
    return parse_scenario({"apiVersion": "dralab.dev/v1alpha1", "kind": "Scenario",
                           "metadata": {"name": "t"}, "spec": spec}, "s.yaml",
                          allow_outside=True)


def _starts(tmp: Path, manifest: str) -> list[tuple[float | None, str | None, str | None]]:
    (mode,) = simulate(_scenario(tmp, manifest)).modes
    return sorted(((p.start, p.node, p.unschedulable_reason) for p in mode.pods),
                  key=lambda r: (r[0] is None, r[0] or 0.0, r[1] or ""))


def test_required_anti_affinity_spreads_one_pod_per_node(tmp_path: Path) -> None:
    starts = _starts(tmp_path, WEB)
    first = [r for r in starts if r[0] == 0.0]
    assert sorted(r[1] for r in first) == ["cpu-01", "cpu-02", "cpu-03"]
    # The fourth waits for a node whose pod has finished (the 1h duration), and waited
    # because of the anti-affinity rule (kube-scheduler's reason).
    (late,) = [r for r in starts if r[0] != 0.0]
    assert late[0] == 3600.0
    assert late[2] is not None and "anti-affinity" in late[2]


def test_without_the_rule_all_four_start_at_once(tmp_path: Path) -> None:
    manifest = WEB.replace(AFFINITY, "")
    assert "affinity" not in manifest
    assert [r[0] for r in _starts(tmp_path, manifest)] == [0.0] * 4


def test_hostname_spread_do_not_schedule_max_skew_1(tmp_path: Path) -> None:
    # Six pods, maxSkew 1 over three nodes, one of them far roomier: two on each, though
    # the scores alone put every pod on the big node (the next test).
    manifest = WEB.replace(
        AFFINITY,
        "      topologySpreadConstraints:\n"
        "      - {maxSkew: 1, topologyKey: kubernetes.io/hostname,\n"
        "         whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}\n")
    assert _per_node(tmp_path, manifest) == {"big-01": 2, "cpu-01": 2, "cpu-02": 2}


def test_without_the_constraint_the_scores_pack_the_big_node(tmp_path: Path) -> None:
    assert _per_node(tmp_path, WEB.replace(AFFINITY, "")) == {"big-01": 6}


def _per_node(tmp: Path, manifest: str) -> dict[str, int]:
    pools = [{**POOL, "count": 2}, BIG]
    (mode,) = simulate(_scenario(tmp, manifest, pods=6, pools=pools)).modes
    per_node: dict[str, int] = {}
    for p in mode.pods:
        assert p.start == 0.0 and p.node is not None
        per_node[p.node] = per_node.get(p.node, 0) + 1
    return per_node
