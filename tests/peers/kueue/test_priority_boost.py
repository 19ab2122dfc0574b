"""Kueue's PriorityBoost gate (alpha, off by default) through ``dralab admit``: the
``kueue.x-k8s.io/priority-boost`` annotation of a Workload adds to its priority in the
queue order when the Configuration's ``featureGates`` turns the gate on, and is ignored
otherwise (kubernetes-sigs/kueue ff69552e, pkg/util/priority/priority.go,
EffectivePriority; the unit tables using it are ported in test_preemption.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from dralab.cli.main import cli

_INPUT = """
%s
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  queueingStrategy: StrictFIFO
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: "2"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: plain, namespace: ns, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  queueName: q
  priority: 100
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: boosted
  namespace: ns
  creationTimestamp: "2026-01-01T00:01:00Z"
  annotations: {kueue.x-k8s.io/priority-boost: "%s"}
spec:
  queueName: q
  priority: 50
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}
"""

_CONFIG = """apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
featureGates: {PriorityBoost: %s}
---"""


@pytest.mark.parametrize(("config", "boost", "admitted"), [
    ("", "100", "plain"),                     # gate off by default: 50 < 100
    (_CONFIG % "false", "100", "plain"),      # gate off: annotation ignored
    (_CONFIG % "true", "100", "boosted"),     # 50 + 100 > 100
    (_CONFIG % "true", "50", "plain"),        # 100 = 100: the older first
    (_CONFIG % "true", "x", "plain"),         # invalid: the base priority
])
def test_queue_order_uses_effective_priority(tmp_path: Path, config: str, boost: str,
                                             admitted: str) -> None:
    snapshot = tmp_path / "in.yaml"
    snapshot.write_text(_INPUT % (config, boost))
    result = CliRunner().invoke(cli, ["admit", "-f", str(snapshot), "--cycles", "1"])
    assert result.exit_code == 1, result.output  # one workload stays pending
    got = [i["metadata"]["name"] for i in yaml.safe_load(result.stdout)["items"]
           if i["kind"] == "Workload" and (i.get("status") or {}).get("admission")]
    assert got == [admitted]
